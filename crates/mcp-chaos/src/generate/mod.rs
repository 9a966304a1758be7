//! Schema-driven generation of tool arguments (valid and invalid) as proptest strategies.
//!
//! Every MCP tool declares an `inputSchema` (JSON Schema; 2020-12 when `$schema` is absent,
//! any draft it names otherwise). From it this module generates:
//! - [`valid`]: a proptest strategy of values the schema accepts. Values are built from
//!   proptest combinators, so failing cases shrink toward simple ones, and every value is
//!   checked against a validator compiled once (`jsonschema`, formats asserted).
//! - [`invalid`]: values that break exactly one named constraint, with a [`Violation`]
//!   (`keyword` + instance `pointer`) confirmed by the validator.
//! - [`boundary`]: deterministic edge cases (exact `minLength`, `maximum + 1`, each `enum`
//!   value, missing required properties, ...), each labelled valid or invalid ([`Case`]).
//! - [`example`]: one small deterministic valid value for smoke calls.
//! - [`hostile_strings`]/[`hostile_raw_json`]: strings that break naive servers.
//!
//! ```
//! use mcp_chaos::generate::{Case, GenOptions, Generator};
//! use proptest::strategy::{Strategy, ValueTree};
//! use proptest::test_runner::TestRunner;
//! use serde_json::json;
//!
//! let schema = json!({
//!     "type": "object",
//!     "properties": {"city": {"type": "string", "minLength": 1}, "days": {"type": "integer", "maximum": 7}},
//!     "required": ["city"],
//! });
//! let g = Generator::new(&schema, &GenOptions::default())?;
//! let mut runner = TestRunner::deterministic();
//! let value = g.valid()?.new_tree(&mut runner).expect("a value").current();
//! assert!(g.is_valid(&value));
//! let (bad, violation) = g.invalid()?.new_tree(&mut runner).expect("a case").current();
//! assert!(!g.is_valid(&bad) && g.confirms(&bad, &violation));
//! assert_eq!(g.example()?, json!({"city": "a"}));
//! assert!(g.boundary()?.iter().any(|c| matches!(c, Case::Invalid { violation, .. } if violation.keyword == "maximum")));
//! # Ok::<(), mcp_chaos::generate::GenError>(())
//! ```
//!
//! **Loopback only.** No generated value names a host off this machine: URIs point under
//! [`GenOptions::url_base`] (default `http://127.0.0.1:9/`), host names are `localhost` or
//! `127.0.0.1`, e-mail domains are `localhost`/`[127.0.0.1]`, IP addresses are loopback. This
//! also holds for values taken from `default`, `examples`, `enum` and `const`, and for
//! strings produced from `pattern`s (see [`is_loopback_safe`]); a schema that *forces* a
//! public address is reported with [`GenError::UnsafeForced`].
//!
//! **Keywords constructed** (JSON Schema 2020-12 core §10 and validation §6, plus the
//! draft-07/2019-09 spellings): `type` (single and arrays), `enum`, `const`; `minimum`,
//! `maximum`, `exclusiveMinimum`, `exclusiveMaximum` (numeric, and draft-04 booleans),
//! `multipleOf` (integers and decimals); `minLength`, `maxLength` (code points), `pattern`
//! (ECMA-262, translated: `\d`/`\w`/`\s` ASCII/ECMA classes, `.` without line
//! terminators, `\uXXXX` with surrogate pairs), `format` (`date`, `date-time`, `time`,
//! `duration`, `email`, `idn-email`, `hostname`, `idn-hostname`, `ipv4`, `ipv6`, `uri`,
//! `uri-reference`, `iri`, `iri-reference`, `url`, `uri-template`, `uuid`, `json-pointer`,
//! `relative-json-pointer`, `regex`); `items`, `prefixItems`, draft-07 tuple `items` +
//! `additionalItems`, `minItems`, `maxItems`, `uniqueItems`, `contains`, `minContains`;
//! `properties`, `required`, `additionalProperties`, `patternProperties`, `propertyNames`,
//! `minProperties`, `maxProperties`, `dependentRequired`, `dependentSchemas`, draft-07
//! `dependencies`; `$ref` (local, with `$defs`/`definitions`, `#`, JSON pointers, anchors),
//! `allOf` (merged), `anyOf`, `oneOf`, `if`/`then`/`else`, `not` (`type`, `required`,
//! `enum`/`const` forms), boolean schemas, `default`/`examples` as seeds.
//!
//! **Filtered** (generate, then keep what the validator accepts, within
//! [`GenOptions::filter_budget`]): `oneOf` exclusivity, the `else` branch's "not if", other
//! `not` forms, `maxContains`, a second `pattern`, pattern lookarounds/backreferences,
//! `unevaluatedProperties`/`unevaluatedItems` (approximated), `$dynamicRef`/`$recursiveRef`
//! (resolved statically). Each is reported in [`Generator::notes`].
//!
//! **How.** A schema is compiled once into a validator and lowered into a disjunction of
//! conjunctive shapes (`allOf` merged, `anyOf`/`oneOf`/`if`/`dependentSchemas` distributed,
//! `$ref` expanded up to [`GenOptions::max_ref_depth`] per recursive path). Contradictions
//! found while lowering (`minimum > maximum`, a forbidden required property, an empty type
//! intersection, ...) are [`GenError::Unsatisfiable`]. Strategies are built per shape; shapes
//! with filtered keywords retry locally, and the top-level strategy checks every value
//! against the whole schema and the loopback rule, failing with an error instead of
//! spinning when its budget is exhausted.
//!
//! **Shrinking.** Strings shrink by dropping characters and then toward `a`/`A`/`0`/space
//! within their class; integers and floats by binary search toward zero clamped into range;
//! arrays and optional properties by removal; unions toward their first branch; filtered
//! strategies never report a rejected value while shrinking.

mod any;
mod cases;
mod chars;
mod checked;
mod error;
mod example;
mod format;
mod hostile;
mod ir;
mod lower;
mod num;
mod options;
mod regex;
mod safety;
mod strategy;
mod validate;

use std::sync::Arc;

use proptest::strategy::{BoxedStrategy, Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use serde_json::Value;

pub use cases::{Case, Violation};
pub use error::{GenError, Note, NoteKind};
pub use format::KNOWN as KNOWN_FORMATS;
pub use hostile::{LONG_LEN, hostile_raw_json, hostile_string_strategy, hostile_strings};
pub use options::GenOptions;
pub use safety::{is_loopback_host, is_loopback_safe, is_safe_str};

use checked::{Checked, OnExhaust};
use ir::{Never, NeverKind, Node};
use strategy::Ctx;

/// The URL base used when [`GenOptions::url_base`] is `None`: the discard port on IPv4
/// loopback.
pub const DEFAULT_URL_BASE: &str = "http://127.0.0.1:9";

/// Candidates drawn when a generator is built, to detect schemas whose values cannot be found.
const PROBE: usize = 24;

/// The strategy type of invalid cases: the value and the constraint it breaks.
pub type InvalidStrategy = BoxedStrategy<(Value, Violation)>;

/// A compiled generator for one schema: lower once, then build strategies on demand.
///
/// `Send + Sync`; the strategies it returns are not (proptest's `BoxedStrategy`).
pub struct Generator {
    ctx: Arc<Ctx>,
    root: Node,
    notes: Vec<Note>,
}

impl std::fmt::Debug for Generator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Generator")
            .field("dialect", &self.dialect())
            .field("alternatives", &self.root.alts.len())
            .field("notes", &self.notes)
            .finish_non_exhaustive()
    }
}

fn never_to_error(n: Never) -> GenError {
    match n.kind {
        NeverKind::Unsatisfiable => GenError::Unsatisfiable { reason: n.reason },
        NeverKind::TooLarge {
            pointer,
            keyword,
            requested,
            cap,
        } => GenError::TooLarge {
            pointer,
            keyword,
            requested,
            cap,
        },
        NeverKind::Unsafe { pointer, value } => GenError::UnsafeForced { pointer, value },
        NeverKind::TooComplex => GenError::TooComplex { reason: n.reason },
    }
}

/// A deterministic runner (fixed seed), for probing, examples and the boundary phase.
fn fixed_runner(seed: u64) -> TestRunner {
    TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &cases::seed_bytes(seed)),
    )
}

impl Generator {
    /// Compiles the validator, lowers the schema and probes that valid values can be found.
    ///
    /// # Errors
    /// - [`GenError::UnsafeUrlBase`]: `opts.url_base` is not a loopback `http(s)` URL.
    /// - [`GenError::InvalidSchema`]: the validator refuses the schema.
    /// - [`GenError::Unsatisfiable`], [`GenError::TooLarge`], [`GenError::UnsafeForced`],
    ///   [`GenError::TooComplex`]: the schema has no (generatable, safe) instance.
    /// - [`GenError::Exhausted`]: filtering found no valid value while probing.
    pub fn new(schema: &Value, opts: &GenOptions) -> Result<Self, GenError> {
        let base = match &opts.url_base {
            Some(b) => safety::check_url_base(b).ok_or_else(|| GenError::UnsafeUrlBase {
                url_base: b.clone(),
            })?,
            None => DEFAULT_URL_BASE.to_string(),
        };
        let vals = Arc::new(validate::Validators::build(schema, opts)?);
        let (root, notes, sampled) = {
            let mut lower = lower::Lower::new(schema, opts, &vals);
            let root = lower.lower(schema, "");
            (root, lower.notes, lower.sampled_enum)
        };
        if root.is_never() {
            let never = root.never_reason();
            if sampled && never.kind == NeverKind::Unsatisfiable {
                // The contradiction may be the sample's, not the schema's.
                return Err(GenError::TooComplex {
                    reason: format!(
                        "{} (after sampling an enum to max_enum_values {}; the full enum was \
                         not intersected)",
                        never.reason, opts.max_enum_values
                    ),
                });
            }
            return Err(never_to_error(never));
        }
        let g = Self {
            ctx: Arc::new(Ctx::new(vals, opts.clone(), base)),
            root,
            notes,
        };
        g.probe()?;
        Ok(g)
    }

    fn probe(&self) -> Result<(), GenError> {
        let s = self.valid()?;
        let mut runner = fixed_runner(0);
        let mut last_err = String::new();
        for _ in 0..PROBE {
            match s.new_tree(&mut runner) {
                Ok(_) => return Ok(()),
                Err(e) => last_err = e.to_string(),
            }
        }
        Err(GenError::Exhausted {
            reason: format!(
                "no valid value in {PROBE} probes of {} candidates ({last_err}); see notes: {}",
                self.ctx.opts.filter_budget,
                self.notes
                    .iter()
                    .map(|n| format!("{} {}", n.pointer, n.keyword))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        })
    }

    /// Valid values (JSON Schema validation of the whole schema holds for each).
    ///
    /// Shrinks toward fewer optional properties and items, shorter and plainer strings,
    /// numbers nearer zero within range, earlier `anyOf` branches. A value tree never reports
    /// a value the validator rejects; if the filter budget runs out for one value, `new_tree`
    /// returns an error (the test run aborts) instead of spinning.
    ///
    /// # Errors
    /// [`GenError::Exhausted`] if no strategy can be built (every alternative failed).
    pub fn valid(&self) -> Result<BoxedStrategy<Value>, GenError> {
        let inner = self
            .ctx
            .node(&self.root)
            .ok_or_else(|| GenError::Exhausted {
                reason: "no alternative of the schema could be built".into(),
            })?;
        let vals = Arc::clone(&self.ctx.vals);
        Ok(Checked::new(
            inner,
            Arc::new(move |v: &Value| vals.is_valid(v) && is_loopback_safe(v)),
            self.ctx.opts.filter_budget,
            OnExhaust::Hard,
            "valid arguments",
        )
        .boxed())
    }

    /// Invalid values, each breaking one named constraint (see [`Violation`]), confirmed by
    /// the validator: it rejects the value and reports the keyword at the pointer.
    ///
    /// Sites the validator never confirms while probing are dropped (with a
    /// [`NoteKind::SiteDropped`] note in the returned list).
    ///
    /// # Errors
    /// [`GenError::NoInvalidCases`] when nothing can be broken (e.g. the schema `true`).
    pub fn invalid(&self) -> Result<BoxedStrategy<(Value, Violation)>, GenError> {
        self.invalid_with_notes().map(|(s, _)| s)
    }

    /// [`Generator::invalid`], plus the notes about dropped sites.
    ///
    /// # Errors
    /// As [`Generator::invalid`].
    pub fn invalid_with_notes(&self) -> Result<(InvalidStrategy, Vec<Note>), GenError> {
        let mut notes = Vec::new();
        let s = self.ctx.invalid_strategy(&self.root, &mut notes)?;
        Ok((s, notes))
    }

    /// The boundary phase: deterministic edge cases, valid ones accepted and invalid ones
    /// rejected (with the named keyword) by the validator; mislabelled candidates are dropped.
    ///
    /// # Errors
    /// None today; the `Result` leaves room for budgets.
    pub fn boundary(&self) -> Result<Vec<Case>, GenError> {
        let ex = self.example().ok();
        Ok(self.ctx.boundary_cases(&self.root, ex))
    }

    /// One small deterministic valid value: required properties only, first `enum` value,
    /// shortest strings, numbers nearest zero. Falls back to the smallest of a fixed-seed
    /// sample when the direct construction fails the validator.
    ///
    /// # Errors
    /// [`GenError::Exhausted`] if no valid value is found.
    pub fn example(&self) -> Result<Value, GenError> {
        if let Some(v) = self.ctx.ex_node(&self.root, 0)
            && self.is_valid(&v)
        {
            return Ok(v);
        }
        let s = self.valid()?;
        let mut runner = fixed_runner(1);
        let mut best: Option<(usize, Value)> = None;
        for _ in 0..32 {
            if let Ok(t) = s.new_tree(&mut runner) {
                let v = t.current();
                let n = v.to_string().len();
                if best.as_ref().is_none_or(|(m, _)| n < *m) {
                    best = Some((n, v));
                }
            }
        }
        best.map(|(_, v)| v).ok_or_else(|| GenError::Exhausted {
            reason: "no example found".into(),
        })
    }

    /// `true` if `v` is valid against the schema and loopback-safe.
    #[must_use]
    pub fn is_valid(&self, v: &Value) -> bool {
        self.ctx.vals.is_valid(v) && is_loopback_safe(v)
    }

    /// `true` if the validator rejects `v` and reports `violation.keyword` (or the keyword
    /// the validator uses for it, e.g. `required` for `dependentRequired`) at
    /// `violation.pointer`.
    #[must_use]
    pub fn confirms(&self, v: &Value, violation: &Violation) -> bool {
        self.ctx.confirms(v, violation)
    }

    /// The validator's errors for `v` as `(keyword, instance pointer)` pairs, `anyOf`/`oneOf`
    /// contexts flattened.
    #[must_use]
    pub fn errors(&self, v: &Value) -> Vec<(String, String)> {
        self.ctx
            .vals
            .errors(v)
            .into_iter()
            .map(|e| (e.keyword, e.pointer))
            .collect()
    }

    /// Remarks about how the schema is handled (filtered keywords, caps, dropped unsafe
    /// values, recursion cuts).
    #[must_use]
    pub fn notes(&self) -> &[Note] {
        &self.notes
    }

    /// The generation budgets that limited this schema's cases, as [`NoteKind::Budget`]
    /// notes: those of lowering (an `enum` sampled) and those of the cases built so far by
    /// [`Generator::boundary`] and [`Generator::invalid`] (case sites sampled, the deadline
    /// reached). Empty for a schema within every budget.
    #[must_use]
    pub fn budget_notes(&self) -> Vec<Note> {
        let mut v: Vec<Note> = self
            .notes
            .iter()
            .filter(|n| n.kind == NoteKind::Budget)
            .cloned()
            .collect();
        v.extend(self.ctx.budget_notes());
        v
    }

    /// The keywords the generator does not construct values for (filtered instead).
    #[must_use]
    pub fn unsupported_keywords(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .notes
            .iter()
            .filter(|n| n.kind == NoteKind::Unsupported)
            .map(|n| n.keyword.clone())
            .collect();
        v.sort();
        v.dedup();
        v
    }

    /// The dialect in force: `"2020-12"`, `"2019-09"`, `"draft-07"`, `"draft-06"`,
    /// `"draft-04"`.
    #[must_use]
    pub fn dialect(&self) -> &'static str {
        match self.ctx.vals.draft() {
            jsonschema::Draft::Draft4 => "draft-04",
            jsonschema::Draft::Draft6 => "draft-06",
            jsonschema::Draft::Draft7 => "draft-07",
            jsonschema::Draft::Draft201909 => "2019-09",
            _ => "2020-12",
        }
    }
}

/// Valid values for `schema` (see [`Generator::valid`]).
///
/// # Errors
/// See [`Generator::new`].
pub fn valid(schema: &Value, opts: &GenOptions) -> Result<BoxedStrategy<Value>, GenError> {
    Generator::new(schema, opts)?.valid()
}

/// Values breaking one named constraint of `schema` (see [`Generator::invalid`]).
///
/// # Errors
/// See [`Generator::new`] and [`Generator::invalid`].
pub fn invalid(
    schema: &Value,
    opts: &GenOptions,
) -> Result<BoxedStrategy<(Value, Violation)>, GenError> {
    Generator::new(schema, opts)?.invalid()
}

/// Deterministic boundary cases of `schema` (see [`Generator::boundary`]).
///
/// # Errors
/// See [`Generator::new`].
pub fn boundary(schema: &Value, opts: &GenOptions) -> Result<Vec<Case>, GenError> {
    Generator::new(schema, opts)?.boundary()
}

/// One small deterministic valid value of `schema` (see [`Generator::example`]).
///
/// # Errors
/// See [`Generator::new`] and [`Generator::example`].
pub fn example(schema: &Value, opts: &GenOptions) -> Result<Value, GenError> {
    Generator::new(schema, opts)?.example()
}

#[cfg(test)]
mod tests;
