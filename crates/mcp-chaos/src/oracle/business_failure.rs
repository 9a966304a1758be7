//! `business-failure-as-protocol-error` (MC201): a tool call that met an upstream failure is
//! answered with a `CallToolResult` (`isError: true`), not a JSON-RPC error
//! (`server/tools` §Error Handling: "API failures" and "Business logic errors" are tool
//! execution errors; the `CallToolResult` schema comment: errors that originate from the tool
//! SHOULD be reported inside the result).

use super::{Context, finding};
use crate::finding::{BUSINESS_FAILURE_AS_PROTOCOL_ERROR, Finding, Severity};
use crate::session::{Exchange, Probe};

/// Judges a tool call that ran under an upstream fault.
pub fn check(ctx: &Context<'_>, ex: &Exchange) -> Vec<Finding> {
    let (Probe::ToolCall { tool, .. }, Some(fault)) = (&ex.probe, &ex.fault) else {
        return Vec::new();
    };
    if !fault.met() {
        return Vec::new();
    }
    let Some(error) = ex.response().and_then(|r| r.error()) else {
        return Vec::new();
    };
    vec![finding(
        &BUSINESS_FAILURE_AS_PROTOCOL_ERROR,
        Severity::Violation,
        ctx,
        ex,
        format!(
            "{tool} met the upstream fault {} and answered with JSON-RPC error {} ({:?}); an \
             upstream failure belongs in a CallToolResult with isError: true",
            describe(fault),
            error.code,
            super::leaks::redact(error.message, &[]),
        ),
    )]
}

/// `rate-limited (429, GET /weather?city=x)`; under a scoped fault, `unavailable (503) on
/// the first request only [the first request (GET /stations?city=x) got 503 unavailable, the
/// second (GET /forecast/1) 200 ok]`.
pub fn describe(fault: &crate::session::FaultContext) -> String {
    if let (Some(scope), Some(attribution)) = (&fault.scope, &fault.attribution) {
        let status = fault.status.map(|s| format!(" ({s})")).unwrap_or_default();
        return format!("{}{status} on {scope} [{attribution}]", fault.name);
    }
    let status = fault.status.map(|s| format!("{s}, ")).unwrap_or_default();
    let hit = fault
        .upstream_requests
        .iter()
        .find(|h| h.failure)
        .or(fault.upstream_requests.first())
        .map(|h| format!("{} {}", h.method, h.target))
        .unwrap_or_else(|| "no request".into());
    format!("{} ({status}{hit})", fault.name)
}

/// This invariant as the oracle's [`judge`](super::judge) runs it on every exchange
/// ([`check`]), with the catalog entries it reports.
pub struct Rule;

impl super::Check for Rule {
    fn name(&self) -> &'static str {
        "business_failure"
    }

    fn invariants(&self) -> &'static [crate::finding::Invariant] {
        &[crate::finding::BUSINESS_FAILURE_AS_PROTOCOL_ERROR]
    }

    fn check(&self, ctx: &super::Context<'_>, ex: &crate::session::Exchange) -> Vec<Finding> {
        check(ctx, ex)
    }
}
