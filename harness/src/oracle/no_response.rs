//! `no-response` (MC103): every request gets a response before its deadline (JSON-RPC 2.0 §4:
//! the server MUST reply to a request). A frame the server cannot read (malformed JSON, an
//! invalid request) should still get an error response with id null (§5); silently dropping
//! it is a warning. A server that exits is reported by `server-died`, not here.

use super::{Context, finding};
use crate::finding::{Finding, NO_RESPONSE, Severity};
use crate::session::{Exchange, Expect, Outcome, Probe, ReceivedItem};
use crate::wire::{Message, ResponseId};

/// Judges whether the probe got the response it was owed.
pub fn check(ctx: &Context<'_>, ex: &Exchange) -> Vec<Finding> {
    let dropped_frame = |what: &str| {
        vec![finding(
            &NO_RESPONSE,
            Severity::Warning,
            ctx,
            ex,
            format!(
                "the server silently dropped {what}; JSON-RPC 2.0 asks for an error response \
                 (with id null when the id cannot be read)"
            ),
        )]
    };
    match (&ex.probe, &ex.expect, &ex.outcome) {
        (
            Probe::Liveness
            | Probe::Http { .. }
            | Probe::PingDuringCall { .. }
            | Probe::CancelledCall { .. }
            | Probe::Disconnected { .. }
            | Probe::DuplicateId
            | Probe::LargeRequest { .. },
            _,
            _,
        ) => Vec::new(),
        (_, _, Outcome::Gone(_) | Outcome::SendFailed(_)) => Vec::new(),
        // The server answered with a frame too large to accept: judged by oversize-frame.
        _ if ex.received[ex.preceding..]
            .iter()
            .any(|r| matches!(r.item, ReceivedItem::Oversize { .. })) =>
        {
            Vec::new()
        }
        // A call that met an upstream fault and never answered is judged by deadline-exceeded.
        _ if ex
            .fault
            .as_ref()
            .is_some_and(|f| !f.upstream_requests.is_empty()) =>
        {
            Vec::new()
        }
        (_, Expect::Response { .. }, Outcome::NoAnswer) => {
            // A response with another id is judged by response-id-mismatch.
            if ex.other_responses().next().is_some() {
                return Vec::new();
            }
            if let Probe::InvalidRequest { what, .. } = &ex.probe {
                return dropped_frame(&format!("an invalid request ({what})"));
            }
            vec![finding(
                &NO_RESPONSE,
                Severity::Violation,
                ctx,
                ex,
                format!(
                    "no response to {} within {} ms",
                    ex.probe.label(),
                    ex.timeout_ms
                ),
            )]
        }
        (probe, Expect::Fenced, Outcome::Fenced) => {
            let batch_ids: &[crate::wire::RequestId] = match probe {
                Probe::Batch { ids, .. } => ids,
                _ => &[],
            };
            // A batch may also be answered message by message (Streamable HTTP sends the
            // responses to a batch as separate SSE events).
            let answered = ex.frames().any(|(_, f)| match &f.message {
                Ok(Message::Response(r)) => {
                    matches!(r.id(), ResponseId::Null | ResponseId::Absent)
                        || r.is_error()
                        || r.id().id().is_some_and(|id| batch_ids.contains(id))
                }
                Ok(Message::Batch(_)) => true,
                _ => false,
            });
            if answered {
                return Vec::new();
            }
            match probe {
                Probe::ParseError => dropped_frame("a frame that is not JSON"),
                Probe::InvalidRequest { what, .. } => {
                    dropped_frame(&format!("an invalid request ({what})"))
                }
                Probe::Batch { defined: true, .. } => {
                    vec![finding(
                    &NO_RESPONSE,
                    Severity::Violation,
                    ctx,
                    ex,
                    format!(
                        "no response to a batch of requests; {} defines batches and servers \
                         MUST accept them",
                        ctx.version
                    ),
                )
                .with_spec_page("basic#batching")]
                }
                Probe::Batch { defined: false, .. } => vec![finding(
                    &NO_RESPONSE,
                    Severity::Warning,
                    ctx,
                    ex,
                    format!(
                        "the server silently dropped a JSON-RPC batch of two pings; JSON-RPC 2.0 \
                         asks for an array of responses, and since {} does not define batches \
                         an error response (-32600) would also do",
                        ctx.version
                    ),
                )],
                _ => Vec::new(),
            }
        }
        _ => Vec::new(),
    }
}
