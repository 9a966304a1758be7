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
            | Probe::LargeRequest { .. }
            // Judged by wire-answer, which reports a missing answer as no-response itself.
            | Probe::Wire { .. }
            // Out of the lifecycle order, no answer is owed (`basic/lifecycle`; served-before-
            // initialize judges what came back).
            | Probe::Lifecycle { .. },
            _,
            _,
        ) => Vec::new(),
        (_, _, Outcome::Gone(_) | Outcome::SendFailed(_)) => Vec::new(),
        // The server answered with a frame too large to accept: judged by oversize-frame; or
        // with one too deep for mcp-chaos to read: a warning of malformed-response.
        _ if ex.received[ex.preceding..].iter().any(|r| {
            matches!(&r.item, ReceivedItem::Oversize { .. })
                || matches!(&r.item, ReceivedItem::Frame(f)
                    if matches!(f.message, Err(crate::wire::WireError::TooDeep { .. })))
        }) =>
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
            // A call that kept reporting progress is working, not stuck: the deadline was
            // extended on each notification up to the client's maximum, which MCP asks
            // clients to enforce regardless of progress (basic/utilities/progress, lifecycle
            // "Timeouts"). Slow, but not a dead request.
            if let Expect::Response { id, .. } = &ex.expect {
                let token = format!("mcp-chaos-{id}");
                let progress = ex
                    .frames()
                    .filter(|(_, f)| crate::session::is_progress_for(f, &token))
                    .count();
                if progress > 0 {
                    return vec![finding(
                        &NO_RESPONSE,
                        Severity::Warning,
                        ctx,
                        ex,
                        format!(
                            "{} kept reporting progress ({progress} notifications) but sent no response within {} ms (progress extends the {} ms deadline, up to three deadlines in all); a call this long should be a task, or bounded by the tool",
                            ex.probe.label(),
                            ex.elapsed.as_millis(),
                            ex.timeout_ms
                        ),
                    )];
                }
            }
            // Unreadable frames are not silence: say what came instead.
            let unreadable = ex.frames().find_map(|(_, f)| f.message.as_ref().err());
            let message = match unreadable {
                Some(why) => format!(
                    "no readable response to {} within {} ms: the server answered with an \
                     unreadable frame ({why})",
                    ex.probe.label(),
                    ex.timeout_ms
                ),
                None => format!(
                    "no response to {} within {} ms",
                    ex.probe.label(),
                    ex.timeout_ms
                ),
            };
            vec![finding(&NO_RESPONSE, Severity::Violation, ctx, ex, message)]
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

/// This invariant as the oracle's [`judge`](super::judge) runs it on every exchange
/// ([`check`]), with the catalog entries it reports.
pub struct Rule;

impl super::Check for Rule {
    fn name(&self) -> &'static str {
        "no_response"
    }

    fn invariants(&self) -> &'static [crate::finding::Invariant] {
        &[crate::finding::NO_RESPONSE]
    }

    fn check(&self, ctx: &super::Context<'_>, ex: &crate::session::Exchange) -> Vec<Finding> {
        check(ctx, ex)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::json;

    use super::*;
    use crate::observed::Frame;
    use crate::oracle::ToolTable;
    use crate::protocol::ProtocolVersion;
    use crate::session::{Received, ReceivedItem};
    use crate::wire::RequestId;

    /// A `tools/call` (id 7) that got no response in 60 s, with `frames` received meanwhile.
    fn unanswered(frames: &[serde_json::Value]) -> Exchange {
        Exchange {
            probe: Probe::ToolCall {
                tool: "slow".into(),
                arguments: json!({}),
            },
            sent: b"{}\n".to_vec(),
            expect: Expect::Response {
                id: RequestId::from(7_i64),
                or_null: false,
                fence: false,
            },
            received: frames
                .iter()
                .map(|f| Received {
                    at_ms: 1,
                    item: ReceivedItem::Frame(Frame::new(f.to_string().into_bytes())),
                })
                .collect(),
            preceding: 0,
            outcome: Outcome::NoAnswer,
            elapsed: Duration::from_secs(60),
            timeout_ms: 10_000,
            fault: None,
        }
    }

    fn judge(ex: &Exchange) -> Vec<Finding> {
        let tools = ToolTable::default();
        let ctx = Context {
            version: ProtocolVersion::V2025_11_25,
            tools: &tools,
            exact: &[],
            capabilities: None,
        };
        check(&ctx, ex)
    }

    fn progress(token: &str) -> serde_json::Value {
        json!({"jsonrpc": "2.0", "method": "notifications/progress",
               "params": {"progressToken": token, "progress": 1}})
    }

    #[test]
    fn a_silent_unanswered_call_is_a_violation() {
        let findings = judge(&unanswered(&[]));
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0].severity, Severity::Violation);
        assert!(findings[0].message.contains("no response"), "{findings:?}");
    }

    #[test]
    fn an_unreadable_answer_is_named_as_such() {
        let mut ex = unanswered(&[]);
        ex.received.push(Received {
            at_ms: 1,
            item: ReceivedItem::Frame(Frame::new(b"{\"id\":7,\"result\":\"\xff\"}".to_vec())),
        });
        let findings = judge(&ex);
        assert_eq!(findings.len(), 1);
        assert!(
            findings[0]
                .message
                .starts_with("no readable response to tools/call slow within 10000 ms: the server answered with an unreadable frame (not UTF-8"),
            "{findings:?}"
        );
    }

    #[test]
    fn progress_for_another_request_does_not_excuse_silence() {
        let findings = judge(&unanswered(&[progress("mcp-chaos-8")]));
        assert_eq!(findings[0].severity, Severity::Violation);
    }

    #[test]
    fn an_unanswered_call_that_kept_reporting_progress_is_a_warning() {
        let findings = judge(&unanswered(&[
            progress("mcp-chaos-7"),
            progress("mcp-chaos-7"),
        ]));
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0].severity, Severity::Warning);
        assert!(
            findings[0]
                .message
                .contains("kept reporting progress (2 notifications)"),
            "{findings:?}"
        );
    }
}
