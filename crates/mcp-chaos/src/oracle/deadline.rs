//! `deadline-exceeded` (MC206): when the upstream hangs or crawls, the server still answers the
//! tool call within the deadline (`basic/lifecycle` §Timeouts: implementations SHOULD set
//! timeouts on requests; a server that waits forever on its upstream never answers its
//! client). `not-alive` after the fault is judged as after every probe.

use super::business_failure::describe;
use super::{Context, finding};
use crate::finding::{DEADLINE_EXCEEDED, Finding, Severity};
use crate::session::{Exchange, Outcome, Probe};

/// Judges a tool call that ran under an upstream fault and got no answer.
pub fn check(ctx: &Context<'_>, ex: &Exchange) -> Vec<Finding> {
    let (Probe::ToolCall { tool, .. }, Some(fault)) = (&ex.probe, &ex.fault) else {
        return Vec::new();
    };
    if ex.outcome != Outcome::NoAnswer || fault.upstream_requests.is_empty() {
        return Vec::new();
    }
    vec![finding(
        &DEADLINE_EXCEEDED,
        Severity::Violation,
        ctx,
        ex,
        format!(
            "{tool} called its upstream under the fault {} and did not answer within {} ms; \
             the server needs its own upstream timeout",
            describe(fault),
            ex.timeout_ms
        ),
    )]
}

/// This invariant as the oracle's [`judge`](super::judge) runs it on every exchange
/// ([`check`]), with the catalog entries it reports.
pub struct Rule;

impl super::Check for Rule {
    fn name(&self) -> &'static str {
        "deadline"
    }

    fn invariants(&self) -> &'static [crate::finding::Invariant] {
        &[crate::finding::DEADLINE_EXCEEDED]
    }

    fn check(&self, ctx: &super::Context<'_>, ex: &crate::session::Exchange) -> Vec<Finding> {
        check(ctx, ex)
    }
}
