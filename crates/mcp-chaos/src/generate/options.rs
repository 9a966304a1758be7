//! Knobs for the generators: caps, budgets, the loopback URL base and the hostile-string switch.

/// Options for every generator in [`crate::generate`].
///
/// All sizes are counts (code points for strings, elements for arrays, members for objects),
/// never bytes. `Default` gives the values documented on each field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GenOptions {
    /// Where generated URIs and URLs point. When `Some`, it must be an absolute `http` or
    /// `https` URL on loopback (`127.0.0.0/8`, `[::1]` or `localhost`), for example
    /// `http://127.0.0.1:8080`; every string generated for `format: uri`/`uri-reference`/`iri`/
    /// `url` and for properties *named* like a URL (`url`, `uri`, `endpoint`, `href`, `link`,
    /// `*_url`, `*Url`, ...) starts with it. When `None` (the default), URLs point at
    /// `http://127.0.0.1:9/`, the discard port, which is closed on almost every machine. A
    /// non-loopback base is refused with [`crate::generate::GenError::UnsafeUrlBase`].
    pub url_base: Option<String>,
    /// Mix hostile strings (see [`crate::generate::hostile_strings`]) into free-form string
    /// positions, only where they satisfy the schema's length limits. Default `true`.
    pub hostile: bool,
    /// How many times one recursive `$ref` may be expanded along a single path before the
    /// recursion is cut (a cut branch generates nothing; a required cut branch is reported).
    /// Default 3.
    pub max_ref_depth: usize,
    /// Soft cap on the length of open-ended strings (no `maxLength`, or a large one); a
    /// `minLength` above it still wins. Default 24.
    pub max_string_len: u64,
    /// Soft cap on the length of open-ended arrays beyond `minItems`/`prefixItems`. Default 4.
    pub max_items: u64,
    /// How many undeclared properties at most are added where `additionalProperties` allows
    /// them. Default 2.
    pub max_extra_properties: u64,
    /// Hard cap on any length the schema *forces* (`minLength`, `minItems`, `minProperties`,
    /// and the `maxLength + 1` of an invalid case). A schema that forces more is reported with
    /// [`crate::generate::GenError::TooLarge`] when the constrained value is required, and the
    /// optional value is left out otherwise. Default 1 048 576 (1 Mi).
    pub size_cap: u64,
    /// Candidates tried for one value before a filtered strategy gives up: locally, a nested
    /// filter then returns its last candidate and lets the enclosing one retry; at the top a
    /// generation error is returned instead of spinning. Default 64.
    pub filter_budget: u32,
    /// Backtracking limit of the `fancy-regex` engine that the validator uses for `pattern` and
    /// `patternProperties`, so a hostile server pattern cannot hang the harness. Default 100 000.
    pub regex_backtrack_limit: usize,
    /// Cap on the work of lowering one schema (schema nodes visited, with `$ref` expansion and
    /// `anyOf` products counted); above it the schema is reported as too complex. Default 20 000.
    pub max_schema_nodes: usize,
    /// Cap on the alternatives one schema location may expand to (`anyOf` × `oneOf` ×
    /// `if/then/else` × ...); extra alternatives are dropped with a note. Default 64.
    pub max_alternatives: usize,
    /// Cap on JSON nesting depth of the schema document itself (objects and arrays). Deeper
    /// schemas are refused before the validator sees them. Default 128.
    pub max_schema_depth: usize,
    /// Most `enum` values generation works with: a longer `enum` is sampled (that many values,
    /// spread evenly over it, first and last included) when the schema is lowered, with a
    /// [`crate::generate::NoteKind::Budget`] note. Values are still checked against the full
    /// `enum` by the validator, and a contradiction found after sampling is reported as
    /// [`crate::generate::GenError::TooComplex`], never as unsatisfiable. Default 1 024.
    pub max_enum_values: usize,
    /// Budget on the work of the boundary and invalid cases, in JSON members and items: each
    /// case site costs the size of the value built around it (1 + the members of every object
    /// on its path), and the sites of one schema are sampled evenly when their total is above
    /// this (at most 400 sites in any case), with a `Budget` note. A 1 000-property object
    /// thus gets about 20 sites instead of 400 copies of itself. Default 20 000.
    pub max_site_work: usize,
    /// When the work of building a generator must stop (lowering, probing, boundary cases,
    /// invalid-case sites): past it, lowering fails with
    /// [`crate::generate::GenError::TooComplex`], while the boundary cases and invalid-case
    /// sites found so far are kept (with a `Budget` note). Checked at every schema node and
    /// case site. Default `None` (no deadline).
    pub deadline: Option<std::time::Instant>,
}

impl Default for GenOptions {
    fn default() -> Self {
        Self {
            url_base: None,
            hostile: true,
            max_ref_depth: 3,
            max_string_len: 24,
            max_items: 4,
            max_extra_properties: 2,
            size_cap: 1 << 20,
            filter_budget: 64,
            regex_backtrack_limit: 100_000,
            max_schema_nodes: 20_000,
            max_alternatives: 64,
            max_schema_depth: 128,
            max_enum_values: 1024,
            max_site_work: 20_000,
            deadline: None,
        }
    }
}

impl GenOptions {
    /// `true` once [`GenOptions::deadline`] has passed.
    #[must_use]
    pub fn past_deadline(&self) -> bool {
        self.deadline
            .is_some_and(|d| std::time::Instant::now() >= d)
    }

    /// Shorthand for `GenOptions { url_base: Some(base.into()), ..Default::default() }`.
    #[must_use]
    pub fn with_url_base(base: impl Into<String>) -> Self {
        Self {
            url_base: Some(base.into()),
            ..Self::default()
        }
    }

    /// Shorthand for `GenOptions { hostile, ..self }`.
    #[must_use]
    pub fn hostile(self, hostile: bool) -> Self {
        Self { hostile, ..self }
    }
}
