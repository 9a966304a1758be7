//! `reply-to-notification` (MC106): a notification, known or unknown, gets no reply
//! (`basic/index` §Notifications: the receiver MUST NOT send a response).

use super::{Context, finding};
use crate::finding::{Finding, REPLY_TO_NOTIFICATION, Severity};
use crate::session::{Exchange, Outcome, Probe};
use crate::wire::{Message, ResponseId};

fn sent_method(ex: &Exchange) -> String {
    super::response_shape::sent_method(&ex.sent).unwrap_or_else(|| ex.probe.label())
}

/// Judges notification probes: a response received after the notification (other than the
/// fence's own) is a reply to it. While the fence is unanswered, a response carrying an id is
/// taken for the fence's answer with a wrong id (judged by `response-id-mismatch` where it
/// matters), not for a reply to the notification, which has no id to echo; a response with a
/// null or absent id is a reply either way.
pub fn check(ctx: &Context<'_>, ex: &Exchange) -> Vec<Finding> {
    if !matches!(ex.probe, Probe::Notification { .. } | Probe::Initialized) {
        return Vec::new();
    }
    let fenced = matches!(ex.outcome, Outcome::Fenced);
    let reply = ex.frames().find(|(_, f)| match &f.message {
        Ok(Message::Response(r)) => fenced || !matches!(r.id(), ResponseId::Id(_)),
        Ok(Message::Batch(_)) => true,
        _ => false,
    });
    match reply {
        Some((_, frame)) => {
            let mut f = finding(
                &REPLY_TO_NOTIFICATION,
                Severity::Violation,
                ctx,
                ex,
                format!(
                    "the server replied to the notification {}; notifications MUST NOT get a response",
                    sent_method(ex)
                ),
            );
            f.response = Some(super::safe_excerpt(&frame.raw));
            vec![f]
        }
        None => Vec::new(),
    }
}

/// This invariant as the oracle's [`judge`](super::judge) runs it on every exchange
/// ([`check`]), with the catalog entries it reports.
pub struct Rule;

impl super::Check for Rule {
    fn name(&self) -> &'static str {
        "notification_reply"
    }

    fn invariants(&self) -> &'static [crate::finding::Invariant] {
        &[crate::finding::REPLY_TO_NOTIFICATION]
    }

    fn check(&self, ctx: &super::Context<'_>, ex: &crate::session::Exchange) -> Vec<Finding> {
        check(ctx, ex)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::observed::Frame;
    use crate::oracle::ToolTable;
    use crate::protocol::ProtocolVersion;
    use crate::session::{Expect, Received, ReceivedItem};

    /// `notifications/mcp-chaos-unknown` (fenced by a ping, id 9), with `frame` received and
    /// the wait ended as `outcome`.
    fn notified(frame: &[u8], outcome: Outcome) -> Exchange {
        Exchange {
            probe: Probe::Notification {
                method: "notifications/mcp-chaos-unknown".into(),
                known: false,
            },
            sent: br#"{"jsonrpc":"2.0","method":"notifications/mcp-chaos-unknown"}"#.to_vec(),
            expect: Expect::Fenced,
            received: vec![Received {
                at_ms: 1,
                item: ReceivedItem::Frame(Frame::new(frame.to_vec())),
            }],
            preceding: 0,
            outcome,
            elapsed: Duration::from_millis(10),
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

    const WRONG_ID: &[u8] = br#"{"jsonrpc":"2.0","id":1000009,"result":{}}"#;
    const NULL_ID: &[u8] =
        br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"Method not found"}}"#;

    #[test]
    fn the_fences_answer_with_a_wrong_id_is_no_reply_to_the_notification() {
        assert_eq!(judge(&notified(WRONG_ID, Outcome::NoAnswer)), Vec::new());
    }

    #[test]
    fn a_null_id_error_is_a_reply_even_with_the_fence_unanswered() {
        let findings = judge(&notified(NULL_ID, Outcome::NoAnswer));
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert_eq!(findings[0].invariant, "reply-to-notification");
    }

    #[test]
    fn an_extra_response_beside_the_answered_fence_is_a_reply() {
        for frame in [WRONG_ID, NULL_ID] {
            let findings = judge(&notified(frame, Outcome::Fenced));
            assert_eq!(findings.len(), 1, "{findings:?}");
        }
    }
}
