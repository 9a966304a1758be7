//! `malformed-response` (MC105): responses are valid JSON-RPC 2.0 (`jsonrpc: "2.0"`, exactly
//! one of `result`/`error`, an integer `code` and a string `message`) and results have the
//! shape the negotiated version's schema requires for the method asked: `InitializeResult`,
//! the empty `ping` result, `ListToolsResult` and `CallToolResult` (`content` array of typed
//! blocks, boolean `isError`, `structuredContent` an object up to 2025-11-25).

use serde_json::Value;

use super::content::{content_block, kind, need_string};
use super::{Context, finding, stdout};
use crate::finding::{Finding, MALFORMED_RESPONSE, Severity};
use crate::protocol::ProtocolVersion;
use crate::session::{Exchange, Probe};
use crate::wire::{self, BatchItem, Message};

/// Judges envelope errors in every frame and the result shape of the answer.
pub fn check(ctx: &Context<'_>, ex: &Exchange) -> Vec<Finding> {
    let mut findings = Vec::new();
    let http = ex.http().is_some();
    for (frame, error) in ex.invalid_frames() {
        if !http && stdout::is_noise(frame, error) {
            continue;
        }
        if let wire::WireError::TooDeep { .. } = error {
            // Valid JSON (as far as anyone can tell) that mcp-chaos cannot read: its limit,
            // not the server's flaw, so a warning that says so.
            let mut f = finding(
                &MALFORMED_RESPONSE,
                Severity::Warning,
                ctx,
                ex,
                format!("mcp-chaos could not judge a frame the server sent: {error}"),
            );
            f.response = Some(super::safe_excerpt(&frame.raw));
            findings.push(f);
            continue;
        }
        let mut f = finding(
            &MALFORMED_RESPONSE,
            Severity::Violation,
            ctx,
            ex,
            format!("the server sent a frame that is not valid JSON-RPC 2.0: {error}"),
        );
        f.response = Some(super::safe_excerpt(&frame.raw));
        findings.push(f);
    }
    for (_, frame) in ex.all_frames() {
        if let Ok(Message::Batch(batch)) = &frame.message {
            for item in batch.items() {
                if let BatchItem::Invalid { error, .. } = item {
                    let mut f = finding(
                        &MALFORMED_RESPONSE,
                        Severity::Violation,
                        ctx,
                        ex,
                        format!(
                            "an element of a batch the server sent is not valid JSON-RPC 2.0: {error}"
                        ),
                    );
                    f.response = Some(super::safe_excerpt(&frame.raw));
                    findings.push(f);
                }
            }
        }
    }
    let Some(response) = ex.response() else {
        return findings;
    };
    // A wire-phase frame spoiled by a near-miss is no well-formed request of its method: only
    // the envelope of what came back is judged.
    if let Probe::Wire { what, .. } = &ex.probe
        && !what.starts_with("a valid ")
    {
        return findings;
    }
    let method = sent_method(&ex.sent);
    if let Some(error) = response.error() {
        // (HTTP probes send a ping that the transport layer is meant to refuse.)
        if method.as_deref() == Some("ping")
            && ctx.version.rules().ping
            && !matches!(ex.probe, Probe::Http { .. })
        {
            findings.push(finding(
                &MALFORMED_RESPONSE,
                Severity::Violation,
                ctx,
                ex,
                format!(
                    "ping was answered with error {} ({:?}); the receiver MUST answer ping with an empty result",
                    error.code, error.message
                ),
            ).with_spec_page("basic/utilities/ping"));
        }
        return findings;
    }
    let Some(result) = response.result() else {
        return findings;
    };
    let mut problems = match method.as_deref() {
        Some("initialize") => initialize_result(result),
        Some("server/discover") => discover_result(result),
        Some("ping") => match result {
            Value::Object(_) => Vec::new(),
            other => vec![format!(
                "the ping result is {}, not an (empty) object",
                kind(other)
            )],
        },
        Some("tools/list") => list_tools_result(result, ctx.version),
        Some(m) if super::feature_shape::METHODS.contains(&m) => {
            super::feature_shape::problems(m, result, ctx.version)
        }
        Some("tools/call")
            if result.get("resultType").and_then(Value::as_str) != Some("input_required") =>
        {
            call_tool_result(result, ctx.version)
        }
        _ => Vec::new(),
    };
    if ctx.version.rules().result_type && result.is_object() {
        match result.get("resultType") {
            Some(Value::String(_)) => {}
            Some(other) => problems.push(format!("resultType is {}, not a string", kind(other))),
            None => problems.push(format!(
                "resultType is missing ({} servers MUST include it in every result)",
                ctx.version
            )),
        }
    }
    if !problems.is_empty() {
        findings.push(finding(
            &MALFORMED_RESPONSE,
            Severity::Violation,
            ctx,
            ex,
            format!(
                "the {} result does not match the {} schema: {}",
                method.unwrap_or_default(),
                ctx.version,
                problems.join("; ")
            ),
        ));
    }
    findings
}

/// The `method` of the frame that was sent, if it is a JSON object with one (see
/// [`wire::request_method`]).
pub fn sent_method(sent: &[u8]) -> Option<String> {
    wire::request_method(sent)
}

fn need_object(obj: &Value, key: &str, path: &str, out: &mut Vec<String>) {
    match obj.get(key) {
        Some(Value::Object(_)) => {}
        Some(other) => out.push(format!("{path}{key} is {}, not an object", kind(other))),
        None => out.push(format!("{path}{key} is missing")),
    }
}

/// Problems with an `InitializeResult`: `protocolVersion` (string), `capabilities` (object),
/// `serverInfo` (object with string `name` and `version`).
pub fn initialize_result(result: &Value) -> Vec<String> {
    let mut out = Vec::new();
    if !result.is_object() {
        return vec![format!("the result is {}, not an object", kind(result))];
    }
    need_string(result, "protocolVersion", "", &mut out);
    need_object(result, "capabilities", "", &mut out);
    need_object(result, "serverInfo", "", &mut out);
    if let Some(info) = result.get("serverInfo").filter(|v| v.is_object()) {
        need_string(info, "name", "serverInfo.", &mut out);
        need_string(info, "version", "serverInfo.", &mut out);
    }
    out
}

/// Problems with a `DiscoverResult` (2026-07-28): a `supportedVersions` array of strings and a
/// `capabilities` object.
pub fn discover_result(result: &Value) -> Vec<String> {
    let mut out = Vec::new();
    if !result.is_object() {
        return vec![format!("the result is {}, not an object", kind(result))];
    }
    match result.get("supportedVersions") {
        Some(Value::Array(v)) if v.iter().all(Value::is_string) => {}
        Some(other) => out.push(format!(
            "supportedVersions is {}, not an array of strings",
            kind(other)
        )),
        None => out.push("supportedVersions is missing".into()),
    }
    need_object(result, "capabilities", "", &mut out);
    out
}

/// Problems with a `ListToolsResult`: a `tools` array of objects with a string `name` and an
/// `inputSchema` object whose `type` is `"object"`; `outputSchema`, where the version has it,
/// an object; `nextCursor` a string.
pub fn list_tools_result(result: &Value, version: ProtocolVersion) -> Vec<String> {
    let mut out = Vec::new();
    let Some(tools) = result.get("tools") else {
        return vec!["tools is missing".into()];
    };
    let Some(tools) = tools.as_array() else {
        return vec![format!("tools is {}, not an array", kind(tools))];
    };
    for (i, tool) in tools.iter().enumerate() {
        let path = format!("tools[{i}].");
        if !tool.is_object() {
            out.push(format!("tools[{i}] is {}, not an object", kind(tool)));
            continue;
        }
        need_string(tool, "name", &path, &mut out);
        match tool.get("inputSchema") {
            Some(schema @ Value::Object(_)) => {
                if schema.get("type").and_then(Value::as_str) != Some("object") {
                    out.push(format!("{path}inputSchema.type is not \"object\""));
                }
            }
            Some(other) => out.push(format!(
                "{path}inputSchema is {}, not an object",
                kind(other)
            )),
            None => out.push(format!("{path}inputSchema is missing")),
        }
        if version.rules().structured_content
            && let Some(schema) = tool.get("outputSchema")
            && !schema.is_object()
        {
            out.push(format!(
                "{path}outputSchema is {}, not an object",
                kind(schema)
            ));
        }
    }
    if let Some(cursor) = result.get("nextCursor")
        && !cursor.is_string()
        && !cursor.is_null()
    {
        out.push(format!("nextCursor is {}, not a string", kind(cursor)));
    }
    out
}

/// Problems with a `CallToolResult` under `version`.
pub fn call_tool_result(result: &Value, version: ProtocolVersion) -> Vec<String> {
    let mut out = Vec::new();
    if !result.is_object() {
        return vec![format!("the result is {}, not an object", kind(result))];
    }
    match result.get("content") {
        None => out.push("content is missing (it is required, even when empty)".into()),
        Some(Value::Array(blocks)) => {
            for (i, block) in blocks.iter().enumerate() {
                content_block(block, &format!("content[{i}]"), version, &mut out);
            }
        }
        Some(other) => out.push(format!("content is {}, not an array", kind(other))),
    }
    if let Some(is_error) = result.get("isError")
        && !is_error.is_boolean()
    {
        out.push(format!("isError is {}, not a boolean", kind(is_error)));
    }
    if version.rules().structured_content
        && !version.rules().structured_content_any_json
        && let Some(sc) = result.get("structuredContent")
        && !sc.is_object()
    {
        out.push(format!("structuredContent is {}, not an object", kind(sc)));
    }
    out
}

/// This invariant as the oracle's [`judge`](super::judge) runs it on every exchange
/// ([`check`]), with the catalog entries it reports.
pub struct Rule;

impl super::Check for Rule {
    fn name(&self) -> &'static str {
        "response_shape"
    }

    fn invariants(&self) -> &'static [crate::finding::Invariant] {
        &[crate::finding::MALFORMED_RESPONSE]
    }

    fn check(&self, ctx: &super::Context<'_>, ex: &crate::session::Exchange) -> Vec<Finding> {
        check(ctx, ex)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn call_tool_result_shapes() {
        let v = ProtocolVersion::V2025_11_25;
        assert!(call_tool_result(&json!({"content": []}), v).is_empty());
        assert!(
            call_tool_result(
                &json!({"content": [{"type": "text", "text": "hi"}], "isError": true}),
                v
            )
            .is_empty()
        );
        assert_eq!(
            call_tool_result(&json!({"structuredContent": {}}), v).len(),
            1
        );
        assert_eq!(
            call_tool_result(&json!({"content": [], "isError": "yes"}), v).len(),
            1
        );
        assert_eq!(
            call_tool_result(&json!({"content": [{"type": "text"}]}), v).len(),
            1
        );
        assert_eq!(
            call_tool_result(&json!({"content": [], "structuredContent": [1]}), v).len(),
            1
        );
        assert!(
            call_tool_result(
                &json!({"content": [], "structuredContent": [1]}),
                ProtocolVersion::V2026_07_28
            )
            .is_empty()
        );
        // resource_link does not exist before 2025-06-18.
        let link = json!({"content": [{"type": "resource_link", "uri": "file:///a", "name": "a"}]});
        assert!(call_tool_result(&link, v).is_empty());
        assert_eq!(
            call_tool_result(&link, ProtocolVersion::V2025_03_26).len(),
            1
        );
    }

    #[test]
    fn list_tools_and_initialize_shapes() {
        let v = ProtocolVersion::V2025_11_25;
        assert!(
            list_tools_result(
                &json!({"tools": [{"name": "a", "inputSchema": {"type": "object"}}]}),
                v
            )
            .is_empty()
        );
        assert_eq!(
            list_tools_result(&json!({"tools": [{"name": "a"}]}), v).len(),
            1
        );
        assert_eq!(list_tools_result(&json!({}), v).len(), 1);
        assert!(initialize_result(&json!({"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}})).is_empty());
        assert_eq!(
            initialize_result(&json!({"protocolVersion": 1, "capabilities": {}, "serverInfo": {}}))
                .len(),
            3
        );
    }
}
