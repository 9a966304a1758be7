//! The result shapes of the features beyond tools, judged as `malformed-response` (MC105) by
//! [`super::response_shape`]: `ListResourcesResult`, `ListResourceTemplatesResult`,
//! `ReadResourceResult` (each content a text or a base64 blob: "Binary data MUST be properly
//! encoded", `server/resources` §Security), `ListPromptsResult`, `GetPromptResult`,
//! `CompleteResult` (at most 100 values) and the empty result of `logging/setLevel`. Also the
//! texts of those results a model or user reads, for the leak oracle, and the helpers the
//! feature invariants share.

use base64::Engine as _;
use serde_json::Value;

use super::content::{content_block, kind};
use crate::protocol::ProtocolVersion;
use crate::session::{Exchange, FeatureProbe, Probe};
use crate::wire;

/// The methods whose results are judged here.
pub const METHODS: &[&str] = &[
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
];

fn string(obj: &Value, key: &str, path: &str, required: bool, out: &mut Vec<String>) {
    match obj.get(key) {
        Some(Value::String(_)) => {}
        None if !required => {}
        Some(other) => out.push(format!("{path}{key} is {}, not a string", kind(other))),
        None => out.push(format!("{path}{key} is missing")),
    }
}

/// The items of `key` in `result`, or the problem with them.
fn items<'v>(result: &'v Value, key: &str, out: &mut Vec<String>) -> &'v [Value] {
    match result.get(key) {
        Some(Value::Array(items)) => items,
        Some(other) => {
            out.push(format!("{key} is {}, not an array", kind(other)));
            &[]
        }
        None => {
            out.push(format!("{key} is missing"));
            &[]
        }
    }
}

/// Whether `text` is base64 (RFC 4648 §4, with or without padding).
pub fn is_base64(text: &str) -> bool {
    use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD};
    STANDARD.decode(text).is_ok() || STANDARD_NO_PAD.decode(text).is_ok()
}

/// Problems with a resource content (`TextResourceContents` or `BlobResourceContents`) at
/// `path`.
pub fn resource_contents(c: &Value, path: &str, out: &mut Vec<String>) {
    if !c.is_object() {
        out.push(format!("{path} is {}, not an object", kind(c)));
        return;
    }
    let p = format!("{path}.");
    string(c, "uri", &p, true, out);
    string(c, "mimeType", &p, false, out);
    match (c.get("text"), c.get("blob")) {
        (Some(Value::String(_)), None) => {}
        (None, Some(Value::String(blob))) => {
            if !is_base64(blob) {
                out.push(format!(
                    "{p}blob is not base64 (binary data MUST be properly encoded)"
                ));
            }
        }
        (Some(_), Some(_)) => out.push(format!("{p}has both text and blob")),
        (Some(other), None) | (None, Some(other)) => {
            out.push(format!("{p}text or blob is {}, not a string", kind(other)));
        }
        (None, None) => out.push(format!("{p}has neither a text nor a blob")),
    }
}

/// Problems with the result of the feature method `method` under `version` (nothing for
/// other methods, and for a 2026-07-28 `input_required` result).
pub fn problems(method: &str, result: &Value, version: ProtocolVersion) -> Vec<String> {
    let mut out = Vec::new();
    if !result.is_object() {
        return vec![format!("the result is {}, not an object", kind(result))];
    }
    if result.get("resultType").and_then(Value::as_str) == Some("input_required") {
        return out;
    }
    match method {
        "resources/list" => {
            for (i, r) in items(result, "resources", &mut out).iter().enumerate() {
                let p = format!("resources[{i}].");
                string(r, "uri", &p, true, &mut out);
                string(r, "name", &p, true, &mut out);
                string(r, "mimeType", &p, false, &mut out);
            }
        }
        "resources/templates/list" => {
            for (i, t) in items(result, "resourceTemplates", &mut out)
                .iter()
                .enumerate()
            {
                let p = format!("resourceTemplates[{i}].");
                string(t, "uriTemplate", &p, true, &mut out);
                string(t, "name", &p, true, &mut out);
            }
        }
        "resources/read" => {
            for (i, c) in items(result, "contents", &mut out).iter().enumerate() {
                resource_contents(c, &format!("contents[{i}]"), &mut out);
            }
        }
        "prompts/list" => {
            for (i, prompt) in items(result, "prompts", &mut out).iter().enumerate() {
                let p = format!("prompts[{i}].");
                string(prompt, "name", &p, true, &mut out);
                match prompt.get("arguments") {
                    None => {}
                    Some(Value::Array(args)) => {
                        for (j, a) in args.iter().enumerate() {
                            let ap = format!("{p}arguments[{j}].");
                            string(a, "name", &ap, true, &mut out);
                            if let Some(r) = a.get("required")
                                && !r.is_boolean()
                            {
                                out.push(format!("{ap}required is {}, not a boolean", kind(r)));
                            }
                        }
                    }
                    Some(other) => {
                        out.push(format!("{p}arguments is {}, not an array", kind(other)));
                    }
                }
            }
        }
        "prompts/get" => {
            for (i, m) in items(result, "messages", &mut out).iter().enumerate() {
                match m.get("role").and_then(Value::as_str) {
                    Some("user" | "assistant") => {}
                    _ => out.push(format!(
                        "messages[{i}].role is not \"user\" or \"assistant\""
                    )),
                }
                match m.get("content") {
                    Some(block) => {
                        content_block(block, &format!("messages[{i}].content"), version, &mut out);
                    }
                    None => out.push(format!("messages[{i}].content is missing")),
                }
            }
        }
        "completion/complete" => match result.get("completion") {
            Some(c @ Value::Object(_)) => {
                let values = items(c, "values", &mut out);
                if values.iter().any(|v| !v.is_string()) {
                    out.push("completion.values holds a value that is not a string".into());
                }
                if values.len() > 100 {
                    out.push(format!(
                        "completion.values has {} items (at most 100)",
                        values.len()
                    ));
                }
                if let Some(total) = c.get("total")
                    && !total.is_i64()
                    && !total.is_u64()
                {
                    out.push(format!(
                        "completion.total is {}, not an integer",
                        kind(total)
                    ));
                }
                if let Some(more) = c.get("hasMore")
                    && !more.is_boolean()
                {
                    out.push(format!(
                        "completion.hasMore is {}, not a boolean",
                        kind(more)
                    ));
                }
            }
            Some(other) => out.push(format!("completion is {}, not an object", kind(other))),
            None => out.push("completion is missing".into()),
        },
        _ => {}
    }
    if matches!(
        method,
        "resources/list" | "resources/templates/list" | "prompts/list"
    ) && let Some(cursor) = result.get("nextCursor")
        && !cursor.is_string()
        && !cursor.is_null()
    {
        out.push(format!("nextCursor is {}, not a string", kind(cursor)));
    }
    out
}

/// The text a model or user reads in a feature result, and where it is: resource contents
/// (their `text`), prompt messages (text blocks and embedded text resources), completion
/// values. `None` for any other result.
pub fn texts(result: &Value) -> Option<(&'static str, String)> {
    let strings = |items: &[Value], f: &dyn Fn(&Value) -> Vec<String>| {
        items.iter().flat_map(f).collect::<Vec<_>>().join("\n")
    };
    if let Some(contents) = result.get("contents").and_then(Value::as_array) {
        let text = strings(contents, &|c| {
            c.get("text")
                .and_then(Value::as_str)
                .map(str::to_owned)
                .into_iter()
                .collect()
        });
        return Some(("the resource contents", text));
    }
    if let Some(messages) = result.get("messages").and_then(Value::as_array) {
        let text = strings(messages, &|m| {
            let Some(block) = m.get("content") else {
                return Vec::new();
            };
            [
                block.get("text"),
                block.get("resource").and_then(|r| r.get("text")),
            ]
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect()
        });
        return Some(("the prompt messages", text));
    }
    if let Some(values) = result
        .pointer("/completion/values")
        .and_then(Value::as_array)
    {
        let text = strings(values, &|v| {
            v.as_str().map(str::to_owned).into_iter().collect()
        });
        return Some(("the completion values", text));
    }
    None
}

/// The feature probe of `ex`, if it is one.
pub fn probe(ex: &Exchange) -> Option<&FeatureProbe> {
    match &ex.probe {
        Probe::Feature(f) => Some(f),
        _ => None,
    }
}

/// How a feature request was answered.
#[derive(Debug, Clone, Copy)]
pub enum Answer<'a> {
    /// A JSON-RPC error: its code and message.
    Error(i64, &'a str),
    /// A JSON-RPC result: the response's `result` value, not yet checked for shape.
    Result(&'a Value),
}

/// The answer to `ex`, if it got one.
pub fn answer(ex: &Exchange) -> Option<Answer<'_>> {
    let response = ex.response()?;
    match response.error() {
        Some(e) => Some(Answer::Error(e.code, e.message)),
        None => response.result().map(Answer::Result),
    }
}

/// An error code with its JSON-RPC 2.0 or MCP name, e.g. `-32603 (internal error)`.
pub fn describe_code(code: i64) -> String {
    let name = match code {
        -32002 => "resource not found, up to 2025-11-25",
        other => super::error_codes::code_name(other),
    };
    format!("{code} ({name})")
}

/// An excerpt of an error message for a finding.
pub fn short(message: &str) -> String {
    wire::excerpt(message.as_bytes(), 160)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn feature_result_shapes() {
        let v = ProtocolVersion::V2025_11_25;
        assert!(
            problems(
                "resources/read",
                &json!({"contents": [{"uri": "a:b", "text": "x"}]}),
                v
            )
            .is_empty()
        );
        assert!(
            problems(
                "resources/read",
                &json!({"contents": [{"uri": "a:b", "blob": "aGk="}]}),
                v
            )
            .is_empty()
        );
        assert_eq!(
            problems(
                "resources/read",
                &json!({"contents": [{"uri": "a:b", "blob": "not base64!"}]}),
                v
            )
            .len(),
            1
        );
        assert_eq!(
            problems("resources/read", &json!({"contents": [{"uri": "a:b"}]}), v).len(),
            1
        );
        assert_eq!(problems("resources/read", &json!({}), v).len(), 1);
        assert!(
            problems(
                "prompts/get",
                &json!({"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}]}),
                v
            )
            .is_empty()
        );
        assert_eq!(problems("prompts/get", &json!({"messages": [{"role": "system", "content": {"type": "text", "text": "hi"}}]}), v).len(), 1);
        let many: Vec<String> = (0..101).map(|i| i.to_string()).collect();
        assert_eq!(
            problems(
                "completion/complete",
                &json!({"completion": {"values": many}}),
                v
            )
            .len(),
            1
        );
        assert!(problems("prompts/list", &json!({"prompts": [{"name": "p", "arguments": [{"name": "a", "required": true}]}], "nextCursor": "c"}), v).is_empty());
        assert_eq!(
            problems(
                "resources/list",
                &json!({"resources": [{"uri": "a:b"}], "nextCursor": 2}),
                v
            )
            .len(),
            2
        );
        assert!(problems("logging/setLevel", &json!({}), v).is_empty());
    }

    #[test]
    fn texts_a_model_reads() {
        assert_eq!(
            texts(
                &json!({"contents": [{"uri": "a:b", "text": "one"}, {"uri": "a:c", "blob": "aGk="}]})
            ),
            Some(("the resource contents", "one".to_owned()))
        );
        assert_eq!(
            texts(
                &json!({"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}]})
            ),
            Some(("the prompt messages", "hi".to_owned()))
        );
        assert_eq!(
            texts(&json!({"completion": {"values": ["a", "b"]}})),
            Some(("the completion values", "a\nb".to_owned()))
        );
        assert_eq!(texts(&json!({"tools": []})), None);
    }
}
