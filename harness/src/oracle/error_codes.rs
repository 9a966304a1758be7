//! `wrong-error-code` (MC102): protocol errors carry the code JSON-RPC 2.0 assigns (every MCP
//! version: all messages MUST follow JSON-RPC 2.0, `basic/index` §Messages):
//! - a frame that is not JSON → -32700 (violation otherwise);
//! - JSON that is not a valid request (no `jsonrpc`, null id, no `method`, ...) → -32600
//!   (violation for another code; a warning when the server accepts it and answers a result);
//! - an unknown method → -32601 (violation otherwise);
//! - `tools/call` whose params fail the `CallToolRequest` schema, and an unknown tool → -32602
//!   (a warning otherwise: MCP gives -32602 only by example).

use super::{Context, finding};
use crate::finding::{Finding, Severity, WRONG_ERROR_CODE};
use crate::session::{Exchange, Probe};
use crate::wire::{
    self, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, Message, PARSE_ERROR, ResponseId,
};

/// Judges the error code of the answer to each protocol probe.
pub fn check(ctx: &Context<'_>, ex: &Exchange) -> Vec<Finding> {
    let (want, wrong_code_severity, result_severity) = match &ex.probe {
        Probe::ParseError => (PARSE_ERROR, Severity::Violation, None),
        Probe::InvalidRequest { .. } => (
            INVALID_REQUEST,
            Severity::Violation,
            Some(Severity::Warning),
        ),
        Probe::UnknownMethod { .. } => (
            METHOD_NOT_FOUND,
            Severity::Violation,
            Some(Severity::Violation),
        ),
        // 2026-07-28: missing `_meta` fields MUST get -32602.
        Probe::MissingMeta => (
            INVALID_PARAMS,
            Severity::Violation,
            Some(Severity::Violation),
        ),
        Probe::InvalidCallParams { .. } => {
            (INVALID_PARAMS, Severity::Warning, Some(Severity::Warning))
        }
        // A result for an unknown tool is judged by unknown-tool-not-protocol-error.
        Probe::UnknownTool { .. } => (INVALID_PARAMS, Severity::Warning, None),
        _ => return Vec::new(),
    };
    // The answer: the matched response, or, for fenced probes, the first response with a null
    // or absent id.
    let answer = ex.response().or_else(|| {
        ex.frames().find_map(|(_, f)| match &f.message {
            Ok(Message::Response(r)) if matches!(r.id(), ResponseId::Null | ResponseId::Absent) => {
                Some(r)
            }
            _ => None,
        })
    });
    let Some(answer) = answer else {
        return Vec::new();
    };
    let name = code_name(want);
    let message = match answer.error() {
        Some(error) if error.code == want => return Vec::new(),
        Some(error) => (
            wrong_code_severity,
            format!(
                "{} was answered with error code {} ({}); JSON-RPC 2.0 assigns {want} ({name})",
                ex.probe.label(),
                error.code,
                code_name(error.code),
            ),
        ),
        None => match result_severity {
            Some(severity) => (
                severity,
                format!(
                    "{} was answered with a result; it should be a JSON-RPC error {want} ({name})",
                    ex.probe.label()
                ),
            ),
            None => return Vec::new(),
        },
    };
    let mut f = finding(&WRONG_ERROR_CODE, message.0, ctx, ex, message.1);
    f.response = Some(super::safe_excerpt(
        &serde_json::to_vec(answer.raw()).unwrap_or_default(),
    ));
    vec![f]
}

/// The JSON-RPC 2.0 name of a standard code.
pub fn code_name(code: i64) -> &'static str {
    match code {
        PARSE_ERROR => "parse error",
        INVALID_REQUEST => "invalid request",
        METHOD_NOT_FOUND => "method not found",
        INVALID_PARAMS => "invalid params",
        wire::INTERNAL_ERROR => "internal error",
        -32099..=-32000 => "implementation-defined server error",
        _ => "application error",
    }
}
