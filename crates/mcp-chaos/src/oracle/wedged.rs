//! `server-wedged` (MC114): a server that stops answering, and that wedges the same way again
//! right after a fresh restart, is reported once and the rest of the campaign is skipped
//! (`basic/lifecycle#timeouts`: the client SHOULD time requests out, and a server that answers
//! nothing makes every later request cost a whole deadline).
//!
//! The judgement takes three exchanges: the request that went unanswered (`unanswered`), the
//! liveness ping after it (`ping`), and the liveness ping sent to a freshly restarted server
//! right after its handshake (`fresh`). Both pings must have failed in the same [`Stall`]
//! way. A server that is merely slow once, or that recovers after the restart (it crashed
//! once, or one probe hung it), answers the fresh ping and is not wedged. A server that exits
//! is not wedged either: `server-died` reports it, and restarting it costs no deadline.

use super::{Context, finding};
use crate::finding::{Finding, SERVER_WEDGED, Severity};
use crate::session::{Exchange, Outcome};
use crate::wire::{Message, ResponseId};

/// How a liveness ping failed without the server exiting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stall {
    /// Nothing came back within the deadline.
    Silent,
    /// Only responses with ids mcp-chaos never sent (the first one, as JSON) came back.
    WrongIds(String),
    /// Frames that are not JSON-RPC (invalid UTF-8, not JSON) came back, and no answer; the
    /// parser's description of the first one.
    Unreadable(String),
    /// The server closed its stdout while the process kept running.
    ClosedStdout,
}

impl Stall {
    /// What the server did, for a message: "sent nothing within 10000 ms".
    pub fn describe(&self, timeout_ms: u64) -> String {
        match self {
            Stall::Silent => format!("sent nothing within {timeout_ms} ms"),
            Stall::WrongIds(id) => {
                format!("answered only with ids it was never sent (such as {id})")
            }
            Stall::Unreadable(why) => format!("answered with an unreadable frame ({why})"),
            Stall::ClosedStdout => {
                "had closed its stdout, though the process kept running".to_owned()
            }
        }
    }

    /// Whether `self` and `other` are the same way of wedging (the ids or parse errors
    /// themselves may differ). [`Stall::Silent`] and [`Stall::Unreadable`] are one way: a
    /// server flooding stdout with garbage sends no answer either way, and whether a garbage
    /// line is recorded as an unreadable frame or counted as stdout noise and discarded
    /// unread depends on its first bytes, so the same flood is one or the other by chance.
    fn same_as(&self, other: &Stall) -> bool {
        let class = |s: &Stall| match s {
            Stall::Silent | Stall::Unreadable(_) => 0,
            Stall::WrongIds(_) => 1,
            Stall::ClosedStdout => 2,
        };
        class(self) == class(other)
    }
}

/// How the liveness ping `ping` failed, if it failed without the server exiting; `None` when
/// it was answered, or the server exited or refused the connection.
pub fn stall(ping: &Exchange) -> Option<Stall> {
    match &ping.outcome {
        Outcome::NoAnswer => {}
        Outcome::Gone(None) if ping.http().is_none() && ping.exited().is_none() => {
            return Some(Stall::ClosedStdout);
        }
        _ => return None,
    }
    if let Some((_, frame)) = ping.frames().find(|(_, f)| f.message.is_err()) {
        let why = match &frame.message {
            Err(e) => e.to_string(),
            Ok(_) => String::new(),
        };
        return Some(Stall::Unreadable(why));
    }
    let wrong = ping.frames().find_map(|(_, f)| match &f.message {
        Ok(Message::Response(r)) => match r.id() {
            ResponseId::Id(id) => Some(id.to_string()),
            ResponseId::Null | ResponseId::Absent => Some("null".to_owned()),
        },
        _ => None,
    });
    Some(match wrong {
        Some(id) => Stall::WrongIds(id),
        None => Stall::Silent,
    })
}

/// Judges whether the server is wedged: `ping` (after `unanswered`) and `fresh` (the first
/// ping to a freshly restarted server) failed the same way. The finding's message ends
/// before the count of skipped probes, which [`with_skipped`] appends once it is known.
pub fn check(
    ctx: &Context<'_>,
    unanswered: &Exchange,
    ping: &Exchange,
    fresh: &Exchange,
) -> Option<Finding> {
    let before = stall(ping)?;
    let after = stall(fresh)?;
    if !before.same_as(&after) {
        return None;
    }
    let what = unanswered.probe.label();
    let first = match stall(unanswered) {
        Some(how) => format!("{what}: the server {}", how.describe(unanswered.timeout_ms)),
        None => format!("after {what} the server stopped answering"),
    };
    let mut f = finding(
        &SERVER_WEDGED,
        Severity::Violation,
        ctx,
        unanswered,
        format!(
            "the server is wedged. {first}. The liveness ping after it: the server {}. A fresh \
             restart answered the handshake, then wedged the same way (its first ping: the \
             server {})",
            before.describe(ping.timeout_ms),
            after.describe(fresh.timeout_ms)
        ),
    );
    if f.response.is_none() {
        f.response = fresh
            .frames()
            .next()
            .map(|(_, frame)| super::safe_excerpt(&frame.raw));
    }
    Some(f)
}

/// Ends the message of a `server-wedged` finding with what was skipped: `skipped` of the
/// `planned` probes of the campaign's plan (and every later phase: generated arguments,
/// faults, transport chaos). A scenario plans no probes up front (`planned` 0): its later
/// steps are said to be skipped, without counts.
pub fn with_skipped(mut f: Finding, skipped: usize, planned: usize) -> Finding {
    f.message = if planned == 0 {
        format!(
            "{}. mcp-chaos skipped the rest of the run instead of waiting a deadline for each \
             probe.",
            f.message
        )
    } else {
        format!(
            "{}. mcp-chaos skipped the rest of the campaign ({skipped} of the {planned} planned \
             probes, and the later phases) instead of waiting a deadline for each.",
            f.message
        )
    };
    f
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::observed::{ExitKind, Frame};
    use crate::oracle::ToolTable;
    use crate::protocol::ProtocolVersion;
    use crate::session::{Expect, Probe, Received, ReceivedItem};
    use crate::wire::RequestId;

    fn exchange(probe: Probe, received: Vec<ReceivedItem>, outcome: Outcome) -> Exchange {
        Exchange {
            probe,
            sent: br#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#.to_vec(),
            expect: Expect::Response {
                id: RequestId::from(3_i64),
                or_null: false,
                fence: false,
            },
            received: received
                .into_iter()
                .map(|item| Received { at_ms: 1, item })
                .collect(),
            preceding: 0,
            outcome,
            elapsed: Duration::from_secs(10),
            timeout_ms: 10_000,
            fault: None,
        }
    }

    fn frame(raw: &[u8]) -> ReceivedItem {
        ReceivedItem::Frame(Frame::new(raw.to_vec()))
    }

    fn ping(received: Vec<ReceivedItem>, outcome: Outcome) -> Exchange {
        exchange(Probe::Liveness, received, outcome)
    }

    fn judge(unanswered: &Exchange, a: &Exchange, b: &Exchange) -> Option<Finding> {
        let tools = ToolTable::default();
        let ctx = Context {
            version: ProtocolVersion::V2025_11_25,
            tools: &tools,
            exact: &[],
            capabilities: None,
        };
        check(&ctx, unanswered, a, b)
    }

    fn tools_list() -> Exchange {
        exchange(Probe::ToolsList, Vec::new(), Outcome::NoAnswer)
    }

    #[test]
    fn stalls_are_classified() {
        assert_eq!(stall(&ping(vec![], Outcome::NoAnswer)), Some(Stall::Silent));
        let wrong = ping(
            vec![frame(br#"{"jsonrpc":"2.0","id":1000003,"result":{}}"#)],
            Outcome::NoAnswer,
        );
        assert_eq!(stall(&wrong), Some(Stall::WrongIds("1000003".into())));
        let unreadable = ping(vec![frame(b"\xff\xfe")], Outcome::NoAnswer);
        assert!(matches!(stall(&unreadable), Some(Stall::Unreadable(_))));
        let closed = ping(vec![ReceivedItem::Closed], Outcome::Gone(None));
        assert_eq!(stall(&closed), Some(Stall::ClosedStdout));
    }

    #[test]
    fn answered_or_exited_pings_are_no_stall() {
        let answered = ping(
            vec![frame(br#"{"jsonrpc":"2.0","id":3,"result":{}}"#)],
            Outcome::Answered { index: 0 },
        );
        assert_eq!(stall(&answered), None);
        let exited = ping(
            vec![ReceivedItem::Exited(ExitKind::Code(3))],
            Outcome::Gone(Some(ExitKind::Code(3))),
        );
        assert_eq!(stall(&exited), None);
        assert_eq!(
            stall(&ping(vec![], Outcome::SendFailed("EPIPE".into()))),
            None
        );
    }

    #[test]
    fn a_fresh_restart_that_wedges_the_same_way_is_a_wedge() {
        let silent = ping(vec![], Outcome::NoAnswer);
        let f = judge(&tools_list(), &silent, &silent).expect("a wedge");
        assert_eq!(f.invariant, "server-wedged");
        assert_eq!(f.severity, Severity::Violation);
        assert_eq!(f.probe, "tools/list");
        assert!(
            f.message.contains("tools/list: the server sent nothing"),
            "{}",
            f.message
        );
        assert!(f.message.contains("A fresh restart"), "{}", f.message);
        let f = with_skipped(f, 27, 30);
        assert!(
            f.message.contains("27 of the 30 planned probes"),
            "{}",
            f.message
        );
    }

    #[test]
    fn unreadable_answers_are_named_as_such() {
        let bad = ping(
            vec![frame(b"{\"id\":3,\"result\":\"\xff\"}")],
            Outcome::NoAnswer,
        );
        let f = judge(&tools_list(), &bad, &bad).expect("a wedge");
        assert!(f.message.contains("unreadable frame"), "{}", f.message);
        assert!(f.response.is_some());
    }

    #[test]
    fn a_server_that_recovers_after_the_restart_is_not_wedged() {
        let silent = ping(vec![], Outcome::NoAnswer);
        let answered = ping(
            vec![frame(br#"{"jsonrpc":"2.0","id":3,"result":{}}"#)],
            Outcome::Answered { index: 0 },
        );
        assert_eq!(judge(&tools_list(), &silent, &answered), None);
        // A ping that was answered in the first place is no wedge either.
        assert_eq!(judge(&tools_list(), &answered, &silent), None);
    }

    #[test]
    fn different_stalls_are_not_the_same_wedge() {
        let silent = ping(vec![], Outcome::NoAnswer);
        let closed = ping(vec![ReceivedItem::Closed], Outcome::Gone(None));
        assert_eq!(judge(&tools_list(), &silent, &closed), None);
        let wrong = ping(
            vec![frame(br#"{"jsonrpc":"2.0","id":1000003,"result":{}}"#)],
            Outcome::NoAnswer,
        );
        assert_eq!(judge(&tools_list(), &silent, &wrong), None);
    }

    /// random_bytes.py --after-init: the same flood of garbage makes one ping's window hold
    /// only lines discarded as stdout noise (silent) and the next one an unreadable frame.
    #[test]
    fn a_garbage_flood_is_one_wedge_whether_a_window_held_noise_or_an_unreadable_frame() {
        let silent = ping(vec![], Outcome::NoAnswer);
        let garbage = ping(vec![frame(b"[\xff\x00garbage")], Outcome::NoAnswer);
        assert!(judge(&tools_list(), &silent, &garbage).is_some());
        assert!(judge(&tools_list(), &garbage, &silent).is_some());
    }
}
