//! Simple arguments for a smoke call of a tool, built from its `inputSchema`: required
//! properties with a value of the right type, the first `enum` value, and every URL-typed
//! property pointed at loopback. This is the small interface the property-based generator
//! ([`crate::generate`]) replaces for full campaigns.

use serde_json::{Map, Value, json};

/// The URL used for URL-typed properties when no fake upstream is running: a closed loopback
/// port (the discard port), so a server that fetches it fails fast and never leaves the host.
pub const CLOSED_LOOPBACK_URL: &str = "http://127.0.0.1:9/mcp-chaos";

/// Whether a property is URL-typed: `format: uri`/`url`/`uri-reference`/`iri`, or a name such
/// as `url`, `uri`, `endpoint`, `href`, `link`, `*_url`, `*Url`.
pub fn is_url_property(name: &str, schema: &Value) -> bool {
    let format = schema.get("format").and_then(Value::as_str).unwrap_or("");
    if matches!(
        format,
        "uri" | "url" | "uri-reference" | "iri" | "iri-reference"
    ) {
        return true;
    }
    let lower = name.to_ascii_lowercase();
    matches!(
        lower.as_str(),
        "url" | "uri" | "endpoint" | "href" | "link" | "webhook"
    ) || lower.ends_with("_url")
        || lower.ends_with("-url")
        || lower.ends_with("_uri")
        || name.ends_with("Url")
        || name.ends_with("Uri")
        || name.ends_with("URL")
}

/// Simple arguments for `schema` (a tool's `inputSchema`). `url` replaces every URL-typed
/// string (default [`CLOSED_LOOPBACK_URL`]).
pub fn simple_arguments(schema: &Value, url: &str) -> Value {
    match value_for("", schema, url, 0) {
        Value::Object(map) => Value::Object(map),
        _ => Value::Object(Map::new()),
    }
}

fn value_for(name: &str, schema: &Value, url: &str, depth: usize) -> Value {
    if depth > 8 {
        return Value::Null;
    }
    if let Some(c) = schema.get("const") {
        return c.clone();
    }
    if let Some(first) = schema
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return first.clone();
    }
    let ty = schema_type(schema);
    if ty == "string" && is_url_property(name, schema) {
        return Value::from(url);
    }
    // A default or example is what the author expects to work; never for URL-typed values.
    for key in ["default", "examples"] {
        let candidate = match schema.get(key) {
            Some(Value::Array(a)) if key == "examples" => a.first(),
            other => other,
        };
        if let Some(v) = candidate
            && !v.is_null()
            && !v.as_str().is_some_and(|s| s.contains("://"))
        {
            return v.clone();
        }
    }
    if let Some(branch) = ["anyOf", "oneOf"].iter().find_map(|k| {
        schema
            .get(*k)
            .and_then(Value::as_array)
            .and_then(|a| a.first())
    }) {
        return value_for(name, branch, url, depth + 1);
    }
    match ty {
        "object" => {
            let mut map = Map::new();
            let props = schema.get("properties").and_then(Value::as_object);
            let required: Vec<&str> = schema
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            if let Some(props) = props {
                for (key, prop) in props {
                    let url_typed = schema_type(prop) == "string" && is_url_property(key, prop);
                    if required.contains(&key.as_str()) || url_typed {
                        map.insert(key.clone(), value_for(key, prop, url, depth + 1));
                    }
                }
            }
            for key in required {
                if !map.contains_key(key) {
                    map.insert(key.to_owned(), Value::from("mcp-chaos"));
                }
            }
            Value::Object(map)
        }
        "array" => {
            let min = schema.get("minItems").and_then(Value::as_u64).unwrap_or(0);
            let items = schema.get("items").cloned().unwrap_or(json!({}));
            Value::Array(
                (0..min.min(16))
                    .map(|_| value_for(name, &items, url, depth + 1))
                    .collect(),
            )
        }
        "integer" => Value::from(number_in(schema, 1.0).round() as i64),
        "number" => Value::from(number_in(schema, 1.0)),
        "boolean" => Value::Bool(true),
        "null" => Value::Null,
        _ => Value::from(string_for(schema)),
    }
}

fn schema_type(schema: &Value) -> &str {
    match schema.get("type") {
        Some(Value::String(s)) => s,
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("null"),
        _ if schema.get("properties").is_some() => "object",
        _ => "string",
    }
}

fn number_in(schema: &Value, preferred: f64) -> f64 {
    let min = schema
        .get("minimum")
        .or(schema.get("exclusiveMinimum"))
        .and_then(Value::as_f64);
    let max = schema
        .get("maximum")
        .or(schema.get("exclusiveMaximum"))
        .and_then(Value::as_f64);
    let mut v = preferred;
    if let Some(min) = min {
        v = v.max(
            min + if schema.get("exclusiveMinimum").is_some() {
                1.0
            } else {
                0.0
            },
        );
    }
    if let Some(max) = max {
        v = v.min(
            max - if schema.get("exclusiveMaximum").is_some() {
                1.0
            } else {
                0.0
            },
        );
    }
    v
}

fn string_for(schema: &Value) -> String {
    let base = match schema.get("format").and_then(Value::as_str) {
        Some("date") => "2025-01-15",
        Some("date-time") => "2025-01-15T10:30:00Z",
        Some("time") => "10:30:00Z",
        Some("email") => "user@localhost",
        Some("uuid") => "123e4567-e89b-12d3-a456-426614174000",
        Some("ipv4") => "127.0.0.1",
        Some("ipv6") => "::1",
        Some("hostname") => "localhost",
        _ => "mcp-chaos",
    };
    let mut s = base.to_owned();
    let min = schema.get("minLength").and_then(Value::as_u64).unwrap_or(0) as usize;
    let max = schema
        .get("maxLength")
        .and_then(Value::as_u64)
        .map(|m| m as usize);
    while s.chars().count() < min.min(4096) {
        s.push('x');
    }
    if let Some(max) = max {
        s = s.chars().take(max).collect();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fixture's `configure` tool (under its `panic-in-handler` flaw) panics on arguments
    /// nesting objects three deep; the campaign's simple arguments for its schema are those.
    #[test]
    fn simple_arguments_reach_the_fixture_s_planted_panic() {
        use mcp_chaos_fixture::{Action, Fixture, Flaw};
        let mut f = Fixture::new(&[Flaw::PanicInHandler]).initialized();
        let listed = f.handle(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
        let Some(Action::Write(frame)) = listed.into_iter().next() else {
            panic!("no tools/list answer");
        };
        let tools: Value = serde_json::from_slice(&frame).expect("JSON");
        let configure = tools["result"]["tools"]
            .as_array()
            .and_then(|t| t.iter().find(|t| t["name"] == "configure"))
            .expect("configure is listed");
        let args = simple_arguments(&configure["inputSchema"], "");
        assert_eq!(
            args,
            serde_json::json!({"preferences": {"display": {"theme": "light"}}})
        );
    }

    #[test]
    fn required_properties_enums_and_urls() {
        let schema = json!({
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "units": {"type": "string", "enum": ["metric", "imperial"]},
                "days": {"type": "integer", "minimum": 3, "maximum": 7},
                "data": {"type": "string", "format": "uri", "default": "https://example.com/x"},
                "homepageUrl": {"type": "string"},
                "verbose": {"type": "boolean"}
            },
            "required": ["city", "units", "days"]
        });
        let args = simple_arguments(&schema, CLOSED_LOOPBACK_URL);
        assert_eq!(
            args,
            json!({"city": "mcp-chaos", "units": "metric", "days": 3,
                   "data": CLOSED_LOOPBACK_URL, "homepageUrl": CLOSED_LOOPBACK_URL})
        );
    }

    #[test]
    fn no_schema_properties_gives_empty_object() {
        assert_eq!(simple_arguments(&json!({"type": "object"}), "x"), json!({}));
    }
}
