//! Compiling server-supplied JSON Schemas (`inputSchema`, `outputSchema`) safely: offline
//! (a network `$ref` is never fetched: MCP 2026-07-28 `basic/index` §`$ref` Resolution says
//! clients MUST NOT auto-dereference them), with a backtracking limit on `pattern`s, and in the
//! dialect the protocol version gives a schema without `$schema` (draft-07 up to 2025-06-18,
//! 2020-12 from 2025-11-25, SEP-1613).

use jsonschema::{Draft, PatternOptions, Validator};
use serde_json::Value;

use crate::protocol::SchemaDialect;

/// Backtracking limit for `pattern` regexes from a server (fancy-regex steps).
pub const PATTERN_BACKTRACK_LIMIT: usize = 100_000;

/// Compiles `schema` for validation. A `$schema` member picks the dialect; otherwise
/// `default_dialect` does. Errors with the compiler's message for a schema that is not valid
/// in its dialect or refers to anything outside itself.
pub fn compile(schema: &Value, default_dialect: SchemaDialect) -> Result<Validator, String> {
    let mut options = jsonschema::options().offline().with_pattern_options(
        PatternOptions::fancy_regex().backtrack_limit(PATTERN_BACKTRACK_LIMIT),
    );
    if schema.get("$schema").is_none() {
        options = options.with_draft(match default_dialect {
            SchemaDialect::Draft07 => Draft::Draft7,
            SchemaDialect::Draft202012 => Draft::Draft202012,
        });
    }
    options.build(schema).map_err(|e| e.to_string())
}

/// The first `max` validation errors of `instance`, as `"/pointer: message"` lines.
pub fn errors(validator: &Validator, instance: &Value, max: usize) -> Vec<String> {
    validator
        .iter_errors(instance)
        .take(max)
        .map(|e| {
            let path = e.instance_path().to_string();
            let at = if path.is_empty() {
                "/".to_owned()
            } else {
                path
            };
            format!("{at}: {e}")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn dialect_follows_the_protocol_default_unless_declared() {
        // `prefixItems` exists only in 2020-12.
        let schema = json!({"type": "array", "prefixItems": [{"type": "integer"}]});
        let bad = json!(["x"]);
        let v = compile(&schema, SchemaDialect::Draft202012).unwrap();
        assert!(!v.is_valid(&bad));
        let v = compile(&schema, SchemaDialect::Draft07).unwrap();
        assert!(v.is_valid(&bad));
        let mut declared = schema.clone();
        declared["$schema"] = json!("https://json-schema.org/draft/2020-12/schema");
        let v = compile(&declared, SchemaDialect::Draft07).unwrap();
        assert!(!v.is_valid(&bad));
    }

    #[test]
    fn network_refs_are_not_fetched() {
        let schema = json!({"$ref": "https://example.com/schema.json"});
        assert!(compile(&schema, SchemaDialect::Draft202012).is_err());
    }

    #[test]
    fn errors_name_the_pointer() {
        let v = compile(
            &json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}),
            SchemaDialect::Draft202012,
        )
        .unwrap();
        let errs = errors(&v, &json!({"n": "x"}), 5);
        assert_eq!(errs.len(), 1);
        assert!(errs[0].starts_with("/n: "), "{errs:?}");
    }
}
