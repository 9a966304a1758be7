//! `server-died` (MC108) and `not-alive` (MC109): after every probe the server is still running
//! and answers `ping` within the deadline (`basic/utilities/ping`: the receiver MUST respond
//! promptly). Both name the probe that preceded the failure.

use super::{Context, finding};
use crate::finding::{Finding, NOT_ALIVE, SERVER_DIED, Severity};
use crate::session::{Exchange, Outcome};

/// Judges the liveness probe `ping` that followed `previous`. `stderr` is the server's recent
/// stderr, quoted in a `server-died` finding.
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
        let how = died.map_or_else(
            || "closed its stdio".to_owned(),
            |s| format!("exited ({s})"),
        );
        let tail = last_lines(stderr, 6);
        let stderr_note = if tail.is_empty() {
            String::new()
        } else {
            format!("; its stderr ends with: {tail}")
        };
        return vec![finding(
            &SERVER_DIED,
            Severity::Violation,
            ctx,
            previous,
            format!(
                "the server {how} after {}{stderr_note}",
                previous.probe.label()
            ),
        )];
    }
    if ping.outcome == Outcome::NoAnswer {
        return vec![finding(
            &NOT_ALIVE,
            Severity::Violation,
            ctx,
            previous,
            format!(
                "the server is still running but did not answer ping within {} ms after {}",
                ping.timeout_ms,
                previous.probe.label()
            ),
        )];
    }
    Vec::new()
}

fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].join(" | ")
}
