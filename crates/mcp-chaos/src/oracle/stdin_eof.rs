//! `stdin-eof-ignored` (MC117): a stdio server that is still running when the grace after its
//! stdin was closed ends.
//!
//! Spec: `basic/lifecycle` §Shutdown (every version): "For the stdio transport, the client
//! SHOULD initiate shutdown by: 1. First, closing the input stream to the child process (the
//! server) 2. Waiting for the server to exit, or sending SIGTERM if the server does not exit
//! within a reasonable time 3. Sending SIGKILL ..."; and from 2026-07-28,
//! `basic/transports/stdio` §Shutdown: "Servers SHOULD exit promptly when their standard input
//! is closed or reads return end-of-file." A SHOULD, so a warning.
//!
//! The judgement takes how a graceful shutdown went ([`ShutdownOutcome`]): a server that had
//! exited already, or exited within the grace, passes; one that needed SIGTERM (or SIGKILL)
//! is reported.

use std::time::Duration;

use super::Context;
use crate::finding::{Finding, STDIN_EOF_IGNORED, Severity};
use crate::observed::ShutdownOutcome;

/// The finding for a stdio server that did not exit within `grace` of its stdin closing,
/// given how its shutdown went; `None` when it exited (before or within the grace).
/// `stderr` is the end of its stderr, quoted when not empty.
pub fn check(
    ctx: &Context<'_>,
    outcome: &ShutdownOutcome,
    grace: Duration,
    stderr: &str,
) -> Option<Finding> {
    let after = match outcome {
        ShutdownOutcome::AlreadyExited(_) | ShutdownOutcome::ExitedOnEof(_) => return None,
        ShutdownOutcome::Terminated(status) => format!("it ended on SIGTERM ({status})"),
        ShutdownOutcome::Killed => "it ignored SIGTERM too and was killed (SIGKILL)".to_owned(),
    };
    let spec = if ctx.version.rules().handshake {
        "the client closes stdin and waits for the server to exit before it escalates to SIGTERM (basic/lifecycle §Shutdown)"
    } else {
        "servers SHOULD exit promptly when their standard input is closed (basic/transports/stdio §Shutdown)"
    };
    let tail: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    let tail = tail[tail.len().saturating_sub(2)..].join(" | ");
    let mut f = Finding::new(
        &STDIN_EOF_IGNORED,
        Severity::Warning,
        ctx.version,
        format!(
            "the server was still running {} ms after its stdin was closed (the grace the TypeScript and Python SDK clients give before SIGTERM too); {after}: {spec}{}",
            grace.as_millis(),
            if tail.is_empty() {
                String::new()
            } else {
                format!(
                    "; its stderr ends with: {}",
                    crate::wire::excerpt(tail.as_bytes(), 300)
                )
            }
        ),
    );
    if !ctx.version.rules().handshake {
        f = f.with_spec_page("basic/transports/stdio#shutdown");
    }
    f.probe = "shutdown (stdin closed)".to_owned();
    Some(f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observed::ExitKind;
    use crate::protocol::ProtocolVersion;

    const GRACE: Duration = Duration::from_millis(2_000);

    #[test]
    fn a_server_that_exits_on_eof_or_before_passes() {
        let ctx = Context::bare(ProtocolVersion::V2025_11_25);
        for outcome in [
            ShutdownOutcome::ExitedOnEof(ExitKind::Code(0)),
            ShutdownOutcome::AlreadyExited(ExitKind::Code(1)),
        ] {
            assert!(check(&ctx, &outcome, GRACE, "").is_none(), "{outcome:?}");
        }
    }

    #[test]
    fn a_server_that_needs_sigterm_or_sigkill_is_a_warning() {
        let ctx = Context::bare(ProtocolVersion::V2025_11_25);
        let f = check(
            &ctx,
            &ShutdownOutcome::Terminated(ExitKind::Signal(15)),
            GRACE,
            "listening\n\n",
        )
        .expect("a finding");
        assert_eq!(f.code, "MC117");
        assert_eq!(f.severity, Severity::Warning);
        assert!(
            f.message.contains("2000 ms after its stdin was closed"),
            "{}",
            f.message
        );
        assert!(f.message.contains("SIGTERM"), "{}", f.message);
        assert!(
            f.message.ends_with("its stderr ends with: listening"),
            "{}",
            f.message
        );
        assert!(
            f.spec.ends_with("2025-11-25/basic/lifecycle#shutdown"),
            "{}",
            f.spec
        );
        let killed = check(&ctx, &ShutdownOutcome::Killed, GRACE, "").expect("a finding");
        assert!(killed.message.contains("SIGKILL"), "{}", killed.message);
    }

    #[test]
    fn under_2026_07_28_the_stdio_page_is_cited() {
        let ctx = Context::bare(ProtocolVersion::V2026_07_28);
        let f = check(&ctx, &ShutdownOutcome::Killed, GRACE, "").expect("a finding");
        assert!(f.message.contains("SHOULD exit promptly"), "{}", f.message);
        assert!(
            f.spec
                .ends_with("2026-07-28/basic/transports/stdio#shutdown"),
            "{}",
            f.spec
        );
    }
}
