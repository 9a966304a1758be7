//! `response-id-mismatch` (MC104): a response carries the id of the request it answers,
//! unchanged (JSON-RPC 2.0 §5; MCP `basic/index` §Responses: "MUST include the same ID").
//! `null` is right only when the request's id could not be read (§5: parse error or invalid
//! request); from 2025-11-25 the member may then be omitted, earlier JSON-RPC 2.0 requires it.

use super::{Context, finding};
use crate::finding::{Finding, RESPONSE_ID_MISMATCH, Severity};
use crate::session::{Exchange, Expect, Outcome};
use crate::wire::{Message, RequestId, ResponseId};

/// Judges the responses of an exchange that awaited a response by id.
pub fn check(ctx: &Context<'_>, ex: &Exchange) -> Vec<Finding> {
    let mut findings = Vec::new();
    // A wire-phase frame's answer is judged by wire-answer, which reports a wrong id itself.
    if let Expect::Response { id, or_null, .. } = &ex.expect
        && !matches!(ex.outcome, Outcome::Answered { .. })
        && !matches!(ex.probe, crate::session::Probe::Wire { .. })
    {
        for (frame, rid) in ex.other_responses() {
            let message = match rid {
                ResponseId::Id(other) if same_value_other_type(id, other) => format!(
                    "request id {id} was answered with id {other}: the same value with another \
                     JSON type is a different id"
                ),
                ResponseId::Id(other) => {
                    format!(
                        "request id {id} was answered with id {other}, which matches no request"
                    )
                }
                // A body too large to parse has no readable id.
                ResponseId::Null | ResponseId::Absent
                    if !or_null
                        && !matches!(ex.probe, crate::session::Probe::LargeRequest { .. }) =>
                {
                    format!(
                        "request id {id} was answered with id {rid}, although the id was readable; \
                     null is only for requests whose id cannot be read"
                    )
                }
                _ => continue,
            };
            let kind = match rid {
                ResponseId::Id(other) if same_value_other_type(id, other) => "retyped",
                ResponseId::Id(_) => "unknown",
                _ => "null",
            };
            let mut f = finding(&RESPONSE_ID_MISMATCH, Severity::Violation, ctx, ex, message);
            f.group = Some(format!("{}|{kind}", ex.probe.label()));
            f.response = Some(super::safe_excerpt(&frame.raw));
            findings.push(f);
            break;
        }
    }
    if !ctx.version.rules().error_id_may_be_absent
        && let Some((frame, _)) = ex
            .frames()
            .filter_map(|(_, f)| match &f.message {
                Ok(Message::Response(r)) if r.id() == &ResponseId::Absent => Some((f, r)),
                _ => None,
            })
            .next()
    {
        let mut f = finding(
            &RESPONSE_ID_MISMATCH,
            Severity::Warning,
            ctx,
            ex,
            format!(
                "an error response has no id member; JSON-RPC 2.0 requires it (null when the \
                 request id cannot be read), and {} does not allow omitting it",
                ctx.version
            ),
        );
        f.response = Some(super::safe_excerpt(&frame.raw));
        findings.push(f);
    }
    findings
}

fn same_value_other_type(a: &RequestId, b: &RequestId) -> bool {
    match (a, b) {
        (RequestId::Number(_), RequestId::String(s)) => s == &a.to_string(),
        (RequestId::String(s), RequestId::Number(_)) => s == &b.to_string(),
        _ => false,
    }
}

/// This invariant as the oracle's [`judge`](super::judge) runs it on every exchange
/// ([`check`]), with the catalog entries it reports.
pub struct Rule;

impl super::Check for Rule {
    fn name(&self) -> &'static str {
        "response_id"
    }

    fn invariants(&self) -> &'static [crate::finding::Invariant] {
        &[crate::finding::RESPONSE_ID_MISMATCH]
    }

    fn check(&self, ctx: &super::Context<'_>, ex: &crate::session::Exchange) -> Vec<Finding> {
        check(ctx, ex)
    }
}
