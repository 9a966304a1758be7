//! `server-died` (MC108) and `not-alive` (MC109): after every probe the server is still running
//! and answers `ping` (or `server/discover` in 2026-07-28) within the deadline
//! (`basic/utilities/ping`: the receiver MUST respond promptly). Both name the probe that
//! preceded the failure.
//!
//! Two cases are warnings rather than violations: a server that ends the session cleanly
//! (exit code 0) after an oversized request, which enforces a size limit the hard way; and a
//! server that loses track of answers after a request reusing an in-flight id, which the client
//! was not allowed to send (MCP: request ids MUST NOT be reused within a session).

use super::wedged::Stall;
use super::{Context, finding};
use crate::finding::{CRASH_ON_INPUT, Finding, Invariant, NOT_ALIVE, SERVER_DIED, Severity};
use crate::observed::ExitKind;
use crate::session::{Exchange, Outcome, Probe};

/// Judges the liveness probe `ping` that followed `previous`. `stderr` is the server's recent
/// output, quoted in a `server-died` finding.
pub fn check(
    ctx: &Context<'_>,
    previous: &Exchange,
    ping: &Exchange,
    stderr: &str,
) -> Vec<Finding> {
    let died = previous
        .exited()
        .or(ping.exited())
        .cloned()
        .or(match &ping.outcome {
            Outcome::Gone(status) => status.clone(),
            _ => None,
        });
    let gone = died.is_some() || matches!(ping.outcome, Outcome::Gone(_) | Outcome::SendFailed(_));
    if gone {
        let how = match (&died, ping.http().is_some()) {
            (Some(s), _) => format!("exited ({s})"),
            (None, true) => "stopped accepting connections".to_owned(),
            (None, false) => "closed its stdio".to_owned(),
        };
        let tail = last_lines(stderr, 6);
        let stderr_note = if tail.is_empty() {
            String::new()
        } else {
            format!("; its output ends with: {tail}")
        };
        let clean_limit = matches!(previous.probe, Probe::LargeRequest { .. })
            && matches!(died, Some(ExitKind::Code(0)));
        return vec![finding(
            on_input(previous, &SERVER_DIED),
            if clean_limit {
                Severity::Warning
            } else {
                Severity::Violation
            },
            ctx,
            previous,
            format!(
                "the server {how} after {}{}{stderr_note}",
                previous.probe.label(),
                if clean_limit {
                    " (a clean exit: a size limit enforced by ending the session)"
                } else {
                    ""
                }
            ),
        )];
    }
    if ping.outcome == Outcome::NoAnswer {
        let provoked = matches!(previous.probe, Probe::DuplicateId);
        return vec![finding(
            on_input(previous, &NOT_ALIVE),
            if provoked {
                Severity::Warning
            } else {
                Severity::Violation
            },
            ctx,
            previous,
            format!(
                "the server is still running but {} {} within {} ms after {}{}",
                // What came back instead, when something did: an unreadable frame or an
                // answer with a wrong id is not silence.
                match super::wedged::stall(ping) {
                    Some(how @ (Stall::Unreadable(_) | Stall::WrongIds(_))) =>
                        format!("{} instead of answering", how.describe(ping.timeout_ms)),
                    _ => "did not answer".to_owned(),
                },
                if ctx.version.rules().ping {
                    "ping"
                } else {
                    "server/discover"
                },
                ping.timeout_ms,
                previous.probe.label(),
                if provoked {
                    " (which MCP forbids clients to send, so only a crash would be a violation)"
                } else {
                    ""
                }
            ),
        )];
    }
    Vec::new()
}

/// A crash or hang right after a call with generated arguments is `crash-on-input`, which
/// carries the (shrunk) input; otherwise `default`.
fn on_input<'a>(previous: &Exchange, default: &'a Invariant) -> &'a Invariant {
    if matches!(previous.probe, Probe::Generated { .. }) {
        &CRASH_ON_INPUT
    } else {
        default
    }
}

fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].join(" | ")
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::observed::Frame;
    use crate::oracle::ToolTable;
    use crate::protocol::ProtocolVersion;
    use crate::session::{Expect, Received, ReceivedItem};
    use crate::wire::RequestId;

    fn exchange(probe: Probe, frames: &[&[u8]], outcome: Outcome) -> Exchange {
        Exchange {
            probe,
            sent: br#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#.to_vec(),
            expect: Expect::Response {
                id: RequestId::from(5_i64),
                or_null: false,
                fence: false,
            },
            received: frames
                .iter()
                .map(|f| Received {
                    at_ms: 1,
                    item: ReceivedItem::Frame(Frame::new(f.to_vec())),
                })
                .collect(),
            preceding: 0,
            outcome,
            elapsed: Duration::from_secs(10),
            timeout_ms: 10_000,
            fault: None,
        }
    }

    fn judge(ping: &Exchange) -> Vec<Finding> {
        let tools = ToolTable::default();
        let ctx = Context {
            version: ProtocolVersion::V2025_11_25,
            tools: &tools,
            exact: &[],
            capabilities: None,
        };
        let previous = exchange(Probe::ToolsList, &[], Outcome::NoAnswer);
        check(&ctx, &previous, ping, "")
    }

    #[test]
    fn a_silent_ping_did_not_answer() {
        let findings = judge(&exchange(Probe::Liveness, &[], Outcome::NoAnswer));
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0].invariant, "not-alive");
        assert_eq!(
            findings[0].message,
            "the server is still running but did not answer ping within 10000 ms after tools/list"
        );
    }

    #[test]
    fn a_wrong_id_answer_is_not_called_silence() {
        let ping = exchange(
            Probe::Liveness,
            &[br#"{"jsonrpc":"2.0","id":1000005,"result":{}}"#],
            Outcome::NoAnswer,
        );
        let findings = judge(&ping);
        assert!(
            findings[0]
                .message
                .contains("answered only with ids it was never sent (such as 1000005) instead of answering ping"),
            "{findings:?}"
        );
    }

    #[test]
    fn an_unreadable_answer_is_named() {
        let ping = exchange(
            Probe::Liveness,
            &[b"{\"id\":5,\"result\":\"\xff\"}"],
            Outcome::NoAnswer,
        );
        let findings = judge(&ping);
        assert!(
            findings[0]
                .message
                .contains("answered with an unreadable frame (not UTF-8"),
            "{findings:?}"
        );
    }

    #[test]
    fn an_answered_ping_is_alive() {
        let ping = exchange(
            Probe::Liveness,
            &[br#"{"jsonrpc":"2.0","id":5,"result":{}}"#],
            Outcome::Answered { index: 0 },
        );
        assert_eq!(judge(&ping), Vec::new());
    }
}
