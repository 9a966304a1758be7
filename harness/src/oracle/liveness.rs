//! `server-died` (MC108) and `not-alive` (MC109): after every probe the server is still running
//! and answers `ping` (or `server/discover` in 2026-07-28) within the deadline
//! (`basic/utilities/ping`: the receiver MUST respond promptly). Both name the probe that
//! preceded the failure.
//!
//! Two cases are warnings rather than violations: a server that ends the session cleanly
//! (exit code 0) after an oversized request, which enforces a size limit the hard way; and a
//! server that loses track of answers after a request reusing an in-flight id, which the client
//! was not allowed to send (MCP: request ids MUST NOT be reused within a session).

use super::{Context, finding};
use crate::finding::{CRASH_ON_INPUT, Finding, Invariant, NOT_ALIVE, SERVER_DIED, Severity};
use crate::session::{Exchange, Outcome, Probe};
use crate::transport::ExitKind;

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
                "the server is still running but did not answer {} within {} ms after {}{}",
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
