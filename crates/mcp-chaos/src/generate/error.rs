//! Errors and notes of the generators.

use serde::Serialize;

/// Why a generator could not be built.
///
/// Messages are lowercase fragments that read well after "cannot generate arguments: ".
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GenError {
    /// The validator refused to compile the schema (invalid for its dialect, unknown
    /// `$schema`, unresolvable external `$ref`, invalid regex, ...).
    #[error("invalid schema: {message}")]
    InvalidSchema {
        /// The validator's message.
        message: String,
    },
    /// The schema provably has no instance (for example `minimum > maximum`, a `false`
    /// schema, contradictory `allOf`, a required property that is forbidden). The harness
    /// reports this as the warning finding `unsatisfiable-input-schema`.
    #[error("unsatisfiable schema: {reason}")]
    Unsatisfiable {
        /// Which keywords contradict each other, with their schema location.
        reason: String,
    },
    /// The schema forces a value larger than [`crate::generate::GenOptions::size_cap`].
    #[error("{keyword} = {requested} at {pointer} exceeds the size cap {cap}")]
    TooLarge {
        /// Schema location (JSON pointer, `#`-prefixed) of the keyword.
        pointer: String,
        /// The keyword (`minLength`, `minItems`, `minProperties`, ...).
        keyword: String,
        /// What the schema asks for.
        requested: u64,
        /// The cap in force.
        cap: u64,
    },
    /// The schema forces a URL, host name or e-mail address off loopback (for example a
    /// `const` public URL on a required property). Such a value is never emitted.
    #[error("schema at {pointer} forces a non-loopback address {value:?}")]
    UnsafeForced {
        /// Schema location of the forcing keyword.
        pointer: String,
        /// The forced value, as JSON text.
        value: String,
    },
    /// [`crate::generate::GenOptions::url_base`] is not a loopback `http(s)` URL.
    #[error("url_base {url_base:?} is not a loopback http(s) URL")]
    UnsafeUrlBase {
        /// The refused base.
        url_base: String,
    },
    /// The schema is too deep or too large to lower within the configured budgets, or a
    /// required branch only recurses (`$ref` cycle cut by `max_ref_depth`).
    #[error("schema too complex: {reason}")]
    TooComplex {
        /// Which budget was exceeded, and where.
        reason: String,
    },
    /// No candidate passed the validator within the filter budget: the schema combines
    /// keywords the generator can only satisfy by filtering, and filtering did not find a
    /// value. This is not a proof of unsatisfiability.
    #[error("could not generate a value: {reason}")]
    Exhausted {
        /// What was tried.
        reason: String,
    },
    /// `invalid()` found no constraint that can be broken (for example the schema `true`).
    #[error("no invalid instance can be generated: {reason}")]
    NoInvalidCases {
        /// What made every constraint unbreakable (for example "schema is `true`"), for the
        /// report's generated-phase note.
        reason: String,
    },
}

impl GenError {
    /// `true` when the error is one of mcp-chaos's generation budgets (a schema too complex
    /// or too large to generate for within [`crate::generate::GenOptions`]), not a flaw of
    /// the schema: the tool is then skipped, with no finding.
    #[must_use]
    pub fn is_budget(&self) -> bool {
        matches!(self, Self::TooComplex { .. } | Self::TooLarge { .. })
    }

    /// The stable kebab-case name of the variant, for reports (`unsatisfiable`, `too-large`,
    /// ...).
    #[must_use]
    pub fn kind(&self) -> &'static str {
        match self {
            Self::InvalidSchema { .. } => "invalid-schema",
            Self::Unsatisfiable { .. } => "unsatisfiable",
            Self::TooLarge { .. } => "too-large",
            Self::UnsafeForced { .. } => "unsafe-forced",
            Self::UnsafeUrlBase { .. } => "unsafe-url-base",
            Self::TooComplex { .. } => "too-complex",
            Self::Exhausted { .. } => "exhausted",
            Self::NoInvalidCases { .. } => "no-invalid-cases",
        }
    }
}

/// What a [`Note`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum NoteKind {
    /// A keyword the generator does not construct values for; values are generated without
    /// it and filtered through the validator.
    Unsupported,
    /// A keyword handled by generate-and-filter on purpose (`not`, `oneOf` exclusivity, a
    /// second `pattern`, lookaround in a pattern, ...).
    Filtered,
    /// A length or count was capped, or a branch dropped, to stay within budgets.
    Capped,
    /// A value or branch was dropped because it would leave loopback.
    UnsafeDropped,
    /// A recursive `$ref` was cut at [`crate::generate::GenOptions::max_ref_depth`].
    RecursionCut,
    /// An optional branch was dropped because it is unsatisfiable on its own.
    Unsatisfiable,
    /// An invalid-case site was dropped because the validator never confirmed it.
    SiteDropped,
    /// A generation budget limited the cases (an `enum` sampled, case sites sampled, the
    /// deadline reached); the schema itself is fine. See [`crate::generate::GenOptions`].
    Budget,
}

/// A remark about how a schema was handled, for reports ("pattern lookahead at
/// `#/properties/id` is filtered").
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Note {
    /// Schema location, as a `#`-prefixed JSON pointer.
    pub pointer: String,
    /// The keyword concerned.
    pub keyword: String,
    /// Category.
    pub kind: NoteKind,
    /// Human-readable detail.
    pub message: String,
}
