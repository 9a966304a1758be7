//! `unknown-tool-not-protocol-error` (MC101): `tools/call` of a tool the server does not have
//! is a protocol error (`server/tools` §Error Handling lists "Unknown tools" among protocol
//! errors; its example uses -32602), not a `CallToolResult`.
//!
//! Severity: the spec's categorisation carries no RFC 2119 keyword, so a `CallToolResult` with
//! `isError: true` is a warning; a result that does not set `isError` reports an unknown tool
//! as a successful call, which is a violation.
//!
//! To a server that did not advertise the `tools` capability, the error owed is -32601 (method
//! not found; see [`super::error_codes`]), and the message says so.

use serde_json::Value;

use super::{Context, finding};
use crate::finding::{Finding, Severity, UNKNOWN_TOOL_NOT_PROTOCOL_ERROR};
use crate::session::{Exchange, Probe};

/// Judges the unknown-tool probe.
pub fn check(ctx: &Context<'_>, ex: &Exchange) -> Vec<Finding> {
    let Probe::UnknownTool { name } = &ex.probe else {
        return Vec::new();
    };
    let Some(result) = ex.response().and_then(|r| r.result()) else {
        return Vec::new();
    };
    let is_error = result.get("isError").and_then(Value::as_bool) == Some(true);
    let code = if super::error_codes::unadvertised(ctx, &ex.probe).is_some() {
        "-32601"
    } else {
        "-32602"
    };
    let (severity, message) = if is_error {
        (
            Severity::Warning,
            format!(
                "tools/call of the unknown tool {name:?} was answered with a CallToolResult \
                 (isError: true) instead of a JSON-RPC error ({code})"
            ),
        )
    } else {
        (
            Severity::Violation,
            format!(
                "tools/call of the unknown tool {name:?} was answered as a successful call \
                 (isError is not true); it must be a JSON-RPC error ({code})"
            ),
        )
    };
    vec![finding(
        &UNKNOWN_TOOL_NOT_PROTOCOL_ERROR,
        severity,
        ctx,
        ex,
        message,
    )]
}

/// This invariant as the oracle's [`judge`](super::judge) runs it on every exchange
/// ([`check`]), with the catalog entries it reports.
pub struct Rule;

impl super::Check for Rule {
    fn name(&self) -> &'static str {
        "unknown_tool"
    }

    fn invariants(&self) -> &'static [crate::finding::Invariant] {
        &[crate::finding::UNKNOWN_TOOL_NOT_PROTOCOL_ERROR]
    }

    fn check(&self, ctx: &super::Context<'_>, ex: &crate::session::Exchange) -> Vec<Finding> {
        check(ctx, ex)
    }
}
