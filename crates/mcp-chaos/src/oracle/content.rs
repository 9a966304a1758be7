//! Content blocks (`TextContent`, `ImageContent`, `AudioContent`, `EmbeddedResource`,
//! `ResourceLink`), the shape shared by a `CallToolResult`'s `content` and a prompt message's
//! (`server/tools` §Tool Result, `server/prompts` §Prompt Messages): which block types a
//! protocol version defines, and the problems of one block. Used by
//! [`super::response_shape`] and [`super::feature_shape`], which judge the results that hold
//! them (`malformed-response`, MC105).

use serde_json::Value;

use crate::protocol::ProtocolVersion;
use crate::wire;

/// The JSON kind of `v` as the findings name it (`a string`, `an array`, ...).
pub(super) fn kind(v: &Value) -> String {
    wire::JsonKind::of(v).to_string()
}

/// Appends a problem to `out` unless `obj[key]` is a string (`path` prefixes the key).
pub(super) fn need_string(obj: &Value, key: &str, path: &str, out: &mut Vec<String>) {
    match obj.get(key) {
        Some(Value::String(_)) => {}
        Some(other) => out.push(format!("{path}{key} is {}, not a string", kind(other))),
        None => out.push(format!("{path}{key} is missing")),
    }
}

/// The content block types each version defines.
fn block_types(version: ProtocolVersion) -> &'static [&'static str] {
    match version {
        ProtocolVersion::V2024_11_05 => &["text", "image", "resource"],
        ProtocolVersion::V2025_03_26 => &["text", "image", "audio", "resource"],
        _ => &["text", "image", "audio", "resource", "resource_link"],
    }
}

/// Problems with a content block at `path` (a `CallToolResult`'s, a prompt message's) under
/// `version`, appended to `out`.
pub(super) fn content_block(
    block: &Value,
    path: &str,
    version: ProtocolVersion,
    out: &mut Vec<String>,
) {
    if !block.is_object() {
        out.push(format!("{path} is {}, not an object", kind(block)));
        return;
    }
    let Some(ty) = block.get("type").and_then(Value::as_str) else {
        out.push(format!("{path}.type is missing or not a string"));
        return;
    };
    let p = format!("{path}.");
    match ty {
        _ if !block_types(version).contains(&ty) => out.push(format!(
            "{path}.type is {ty:?}, which {version} does not define (it has {})",
            block_types(version).join(", ")
        )),
        "text" => need_string(block, "text", &p, out),
        "image" | "audio" => {
            need_string(block, "data", &p, out);
            need_string(block, "mimeType", &p, out);
        }
        "resource" => match block.get("resource") {
            Some(resource @ Value::Object(_)) => {
                need_string(resource, "uri", &format!("{p}resource."), out);
                if !(resource.get("text").is_some_and(Value::is_string)
                    || resource.get("blob").is_some_and(Value::is_string))
                {
                    out.push(format!("{p}resource has neither a text nor a blob string"));
                }
            }
            _ => out.push(format!("{p}resource is missing or not an object")),
        },
        "resource_link" => {
            need_string(block, "uri", &p, out);
            need_string(block, "name", &p, out);
        }
        _ => {}
    }
}
