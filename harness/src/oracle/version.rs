//! `initialize-version` (MC110): the `protocolVersion` answered to `initialize` is one the
//! server speaks (`basic/lifecycle` §Version Negotiation: echo the requested version if
//! supported, otherwise answer with another supported version).
//!
//! What can be proven from outside: a server that echoes a version string no MCP release has
//! claims to speak a protocol that does not exist. An error answer to an unsupported version
//! is not reported: the spec's own Error Handling example answers one with -32602.

use serde_json::Value;

use super::{Context, finding};
use crate::finding::{Finding, INITIALIZE_VERSION, Severity};
use crate::session::{Exchange, Probe};

/// Judges the version-negotiation probe (an `initialize` with a bogus version).
pub fn check(ctx: &Context<'_>, ex: &Exchange) -> Vec<Finding> {
    let Probe::VersionNegotiation { requested } = &ex.probe else {
        return Vec::new();
    };
    let Some(result) = ex.response().and_then(|r| r.result()) else {
        return Vec::new();
    };
    match result.get("protocolVersion").and_then(Value::as_str) {
        Some(answered) if answered == requested => vec![finding(
            &INITIALIZE_VERSION,
            Severity::Violation,
            ctx,
            ex,
            format!(
                "initialize asked for {requested:?}, a version no MCP release has, and the \
                 server echoed it back; it MUST answer with a version it supports"
            ),
        )],
        _ => Vec::new(),
    }
}
