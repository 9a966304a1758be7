//! The compiled validators behind every generator: the whole schema, each subschema (for
//! local filters, keyed by JSON pointer), and small `pattern`/`format`-only validators.
//!
//! Built once per schema with `jsonschema` (formats asserted, `fancy-regex` with a backtrack
//! limit for server-supplied patterns, no remote `$ref` resolution).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use jsonschema::error::ValidationErrorKind;
use jsonschema::{Draft, PatternOptions, ValidationError, Validator, ValidatorMap};
use serde_json::{Value, json};

use super::error::GenError;
use super::options::GenOptions;

/// One validation error, flattened out of `anyOf`/`oneOf` contexts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ErrInfo {
    /// The keyword as `jsonschema` names it (`required` for `dependentRequired` too).
    pub keyword: String,
    /// Instance location.
    pub pointer: String,
    /// For `required`: the missing property.
    pub property: Option<String>,
    /// Nesting: 0 for a top-level error, more inside `anyOf`/`oneOf` contexts.
    pub depth: u32,
}

/// Compiled validators for one schema.
pub(crate) struct Validators {
    root: Validator,
    map: Option<ValidatorMap>,
    draft: Draft,
    backtrack_limit: usize,
    patterns: Mutex<HashMap<String, Option<Arc<Validator>>>>,
    formats: Mutex<HashMap<String, Option<Arc<Validator>>>>,
}

impl std::fmt::Debug for Validators {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Validators")
            .field("draft", &self.draft)
            .field("subschemas", &self.map.as_ref().map(ValidatorMap::len))
            .finish_non_exhaustive()
    }
}

/// Schemas with more nodes than this get no per-subschema validators (only the root one):
/// compiling every subschema separately is quadratic in depth.
const MAP_NODE_LIMIT: usize = 4_000;

fn options(backtrack_limit: usize) -> jsonschema::ValidationOptions<'static> {
    jsonschema::options()
        .should_validate_formats(true)
        .with_pattern_options(
            PatternOptions::fancy_regex()
                .backtrack_limit(backtrack_limit)
                .size_limit(10 << 20),
        )
}

fn count_nodes(v: &Value) -> usize {
    let mut n = 0;
    let mut stack = vec![v];
    while let Some(x) = stack.pop() {
        n += 1;
        match x {
            Value::Array(a) => stack.extend(a),
            Value::Object(m) => stack.extend(m.values()),
            _ => {}
        }
    }
    n
}

/// JSON nesting depth (iterative: safe on hostile documents).
pub(crate) fn depth(v: &Value) -> usize {
    let mut max = 0;
    let mut stack = vec![(v, 1usize)];
    while let Some((x, d)) = stack.pop() {
        max = max.max(d);
        match x {
            Value::Array(a) => stack.extend(a.iter().map(|y| (y, d + 1))),
            Value::Object(m) => stack.extend(m.values().map(|y| (y, d + 1))),
            _ => {}
        }
    }
    max
}

impl Validators {
    /// Compiles the validators for `schema`.
    ///
    /// # Errors
    /// [`GenError::TooComplex`] when the document is nested deeper than
    /// `opts.max_schema_depth`; [`GenError::InvalidSchema`] when `jsonschema` refuses it.
    pub fn build(schema: &Value, opts: &GenOptions) -> Result<Self, GenError> {
        let d = depth(schema);
        if d > opts.max_schema_depth {
            return Err(GenError::TooComplex {
                reason: format!(
                    "schema document nests {d} levels deep (max_schema_depth {})",
                    opts.max_schema_depth
                ),
            });
        }
        let o = options(opts.regex_backtrack_limit);
        // A server-supplied schema is untrusted: a panic inside the validator's compiler
        // becomes an error, not a crash of the harness.
        let root = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| o.build(schema)))
            .map_err(|_| GenError::InvalidSchema {
                message: "the validator panicked while compiling the schema".into(),
            })?
            .map_err(|e| GenError::InvalidSchema {
                message: e.to_string(),
            })?;
        let map = if count_nodes(schema) <= MAP_NODE_LIMIT {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| o.build_map(schema)))
                .ok()
                .and_then(Result::ok)
        } else {
            None
        };
        Ok(Self {
            draft: root.draft(),
            root,
            map,
            backtrack_limit: opts.regex_backtrack_limit,
            patterns: Mutex::new(HashMap::new()),
            formats: Mutex::new(HashMap::new()),
        })
    }

    /// The dialect in force (from `$schema`, 2020-12 when absent).
    pub fn draft(&self) -> Draft {
        self.draft
    }

    /// `true` if `v` is valid against the whole schema.
    pub fn is_valid(&self, v: &Value) -> bool {
        self.root.is_valid(v)
    }

    /// The validator of the subschema at `ptr` (an escaped JSON pointer, `""` for the root).
    pub fn at(&self, ptr: &str) -> Option<&Validator> {
        if ptr.is_empty() {
            return Some(&self.root);
        }
        self.map.as_ref()?.get(&format!("#{ptr}"))
    }

    /// `true` if `v` is valid against every subschema in `srcs` that has a validator.
    pub fn check_all(&self, srcs: &[Arc<str>], v: &Value) -> bool {
        srcs.iter()
            .all(|p| self.at(p).is_none_or(|val| val.is_valid(v)))
    }

    fn cached(
        &self,
        cache: &Mutex<HashMap<String, Option<Arc<Validator>>>>,
        key: &str,
        schema: Value,
    ) -> Option<Arc<Validator>> {
        let mut c = cache.lock().unwrap_or_else(PoisonError::into_inner);
        c.entry(key.to_string())
            .or_insert_with(|| {
                options(self.backtrack_limit)
                    .with_draft(self.draft)
                    .build(&schema)
                    .ok()
                    .map(Arc::new)
            })
            .clone()
    }

    /// A validator for `{"pattern": p}` (ECMA-262 semantics as the root validator has them).
    pub fn pattern(&self, p: &str) -> Option<Arc<Validator>> {
        self.cached(&self.patterns, p, json!({ "pattern": p }))
    }

    /// `Some(true/false)` if `s` matches pattern `p`; `None` if `p` does not compile.
    pub fn matches(&self, p: &str, s: &str) -> Option<bool> {
        self.pattern(p)
            .map(|v| v.is_valid(&Value::String(s.to_string())))
    }

    /// A validator for `{"format": f}` with format assertion on.
    pub fn format(&self, f: &str) -> Option<Arc<Validator>> {
        self.cached(&self.formats, f, json!({ "format": f }))
    }

    /// Every error of `v` against the whole schema, `anyOf`/`oneOf` contexts flattened.
    pub fn errors(&self, v: &Value) -> Vec<ErrInfo> {
        let mut out = Vec::new();
        for e in self.root.iter_errors(v) {
            flatten(&e, 0, &mut out);
        }
        out
    }
}

fn flatten(e: &ValidationError<'_>, depth: u32, out: &mut Vec<ErrInfo>) {
    let kind = e.kind();
    let property = match kind {
        ValidationErrorKind::Required { property } => property.as_str().map(str::to_string),
        _ => None,
    };
    out.push(ErrInfo {
        keyword: kind.keyword().to_string(),
        pointer: e.instance_path().as_str().to_string(),
        property,
        depth,
    });
    match kind {
        ValidationErrorKind::AnyOf { context }
        | ValidationErrorKind::OneOfNotValid { context }
        | ValidationErrorKind::OneOfMultipleValid { context } => {
            for branch in context {
                for inner in branch {
                    flatten(inner, depth + 1, out);
                }
            }
        }
        ValidationErrorKind::PropertyNames { error } => flatten(error, depth + 1, out),
        _ => {}
    }
}

/// The keywords `jsonschema` may report for a violation of `keyword` (it reports
/// `dependentRequired`/`dependencies` as `required`, `maxContains` as `contains`, ...).
pub(crate) fn reported_as(keyword: &str) -> &'static [&'static str] {
    match keyword {
        "dependentRequired" | "dependencies" | "required" => &["required"],
        "minContains" | "maxContains" | "contains" => &["contains"],
        "additionalProperties" => &["additionalProperties", "falseSchema"],
        "unevaluatedProperties" => &["unevaluatedProperties", "falseSchema"],
        "additionalItems" | "items" => &[
            "additionalItems",
            "items",
            "falseSchema",
            "unevaluatedItems",
        ],
        "type" => &["type"],
        "enum" => &["enum"],
        "const" => &["const"],
        "minimum" => &["minimum"],
        "maximum" => &["maximum"],
        "exclusiveMinimum" => &["exclusiveMinimum", "minimum"],
        "exclusiveMaximum" => &["exclusiveMaximum", "maximum"],
        "multipleOf" => &["multipleOf"],
        "minLength" => &["minLength"],
        "maxLength" => &["maxLength"],
        "pattern" => &["pattern"],
        "format" => &["format"],
        "minItems" => &["minItems"],
        "maxItems" => &["maxItems"],
        "uniqueItems" => &["uniqueItems"],
        "minProperties" => &["minProperties"],
        "maxProperties" => &["maxProperties"],
        "propertyNames" => &["propertyNames"],
        "not" => &["not"],
        "falseSchema" => &["falseSchema"],
        _ => &[],
    }
}
