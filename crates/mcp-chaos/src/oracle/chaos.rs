//! Transport-chaos invariants:
//! - `unresponsive-during-call` (MC501, violation): a liveness request sent while a tool call
//!   is in flight is answered within its budget (default 1 000 ms), not after the call ends
//!   (`basic/utilities/ping`: the receiver MUST respond promptly).
//! - `response-after-cancel` (MC502): a call cancelled with `notifications/cancelled` gets no
//!   response (`basic/utilities/cancellation`: receivers SHOULD not respond; 2026-07-28 MUST
//!   NOT send further messages): a warning; an error whose code is 0 is also reported (a
//!   warning: 0 is an integer, but no JSON-RPC error code a client can act on).

use super::{Context, finding};
use crate::finding::{Finding, RESPONSE_AFTER_CANCEL, Severity, UNRESPONSIVE_DURING_CALL};
use crate::session::{Exchange, Outcome, Probe};

/// Judges the transport-chaos probes.
pub fn check(ctx: &Context<'_>, ex: &Exchange) -> Vec<Finding> {
    match &ex.probe {
        Probe::PingDuringCall {
            tool,
            budget_ms,
            call_answered_ms,
        } => {
            let answered_ms = match ex.outcome {
                Outcome::Answered { index } => ex.received.get(index).map(|r| r.at_ms),
                _ => None,
            };
            if answered_ms.is_some_and(|ms| ms <= *budget_ms) {
                return Vec::new();
            }
            // Only blame the server if the call was still running when the budget ran out.
            if call_answered_ms.is_some_and(|c| c < *budget_ms) {
                return Vec::new();
            }
            let when = match (answered_ms, call_answered_ms) {
                (Some(p), Some(c)) if p >= *c => {
                    format!("only after {p} ms, once the call had finished ({c} ms)")
                }
                (Some(p), _) => format!("only after {p} ms"),
                (None, _) => "not at all".to_owned(),
            };
            vec![finding(
                &UNRESPONSIVE_DURING_CALL,
                Severity::Violation,
                ctx,
                ex,
                format!(
                    "a liveness request sent while tools/call {tool} was running was answered {when}; it must be answered within {budget_ms} ms even while a call is in flight"
                ),
            )]
        }
        Probe::CancelledCall { tool } => {
            let Some(response) = ex.response() else {
                return Vec::new();
            };
            let message = match response.error() {
                Some(e) if e.code == 0 => format!(
                    "tools/call {tool} was cancelled, and the server still answered, with an error whose code is 0 ({:?})",
                    e.message
                ),
                Some(e) => format!(
                    "tools/call {tool} was cancelled, and the server still answered it (error {})",
                    e.code
                ),
                None => format!(
                    "tools/call {tool} was cancelled, and the server still answered it with a result"
                ),
            };
            vec![finding(
                &RESPONSE_AFTER_CANCEL,
                Severity::Warning,
                ctx,
                ex,
                message,
            )]
        }
        _ => Vec::new(),
    }
}

/// This invariant as the oracle's [`judge`](super::judge) runs it on every exchange
/// ([`check`]), with the catalog entries it reports.
pub struct Rule;

impl super::Check for Rule {
    fn name(&self) -> &'static str {
        "chaos"
    }

    fn invariants(&self) -> &'static [crate::finding::Invariant] {
        &[
            crate::finding::RESPONSE_AFTER_CANCEL,
            crate::finding::UNRESPONSIVE_DURING_CALL,
        ]
    }

    fn check(&self, ctx: &super::Context<'_>, ex: &crate::session::Exchange) -> Vec<Finding> {
        check(ctx, ex)
    }
}
