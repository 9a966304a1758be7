//! `concurrent-requests-dropped` (MC120): a request sent while others are in flight is answered
//! as it would be alone.
//!
//! Spec: `basic/index` §Responses (every version): a response is sent in reply to each request,
//! and JSON-RPC 2.0 §5 lets a client have several requests outstanding, matched by id. Nothing
//! in the spec bounds how long a server may take, nor requires it to work on two requests at
//! once; but MCP clients send requests concurrently (parallel tool calls, pings, progress and
//! cancellation during a call), and a server that stops reading while one call runs, or loses a
//! request that arrives while another is pending, stalls them. The case scheduler
//! (`--in-flight`, see `run::scheduler`) keeps several `tools/call` requests outstanding; a
//! call that got no response within its deadline while others were in flight, and reported no
//! progress, is sent again alone on a fresh server, and this finding is made when it is then
//! answered. A warning,
//! reported once per run; the rest of the phase runs one request at a time.

use super::{Context, safe_excerpt_of};
use crate::finding::{CONCURRENT_REQUESTS_DROPPED, Finding, Severity};

/// What the scheduler saw: a call (`label`, its tool and request frame) unanswered within
/// `timeout_ms` while other calls were in flight, then answered in `alone_ms` when sent alone.
pub struct Dropped<'a> {
    /// The probe label of the call.
    pub label: &'a str,
    /// The name of the tool it called.
    pub tool: &'a str,
    /// Its request frame (as sent concurrently), or the start of it.
    pub request: &'a [u8],
    /// The size of the whole request frame, in bytes.
    pub request_len: usize,
    /// Calls outstanding when it was given up on, itself included.
    pub in_flight: usize,
    /// Its deadline, in ms.
    pub timeout_ms: u64,
    /// How long it took when sent alone, in ms.
    pub alone_ms: u64,
}

/// The finding for a call dropped or stalled among concurrent ones.
pub fn check(ctx: &Context<'_>, seen: &Dropped<'_>) -> Finding {
    let mut f = Finding::new(
        &CONCURRENT_REQUESTS_DROPPED,
        Severity::Warning,
        ctx.version,
        format!(
            "{} got no response within {} ms while {} calls were in flight, and was answered in \
             {} ms when sent alone on a fresh server: the server dropped or stalled a request \
             because others were pending (it reads one request at a time, or loses one that \
             arrives while another is pending). The rest of the phase ran one request at a time",
            seen.label,
            seen.timeout_ms,
            seen.in_flight.max(2),
            seen.alone_ms
        ),
    );
    f.tool = Some(seen.tool.to_owned());
    f.probe = "tools/call among calls in flight".to_owned();
    f.request = Some(safe_excerpt_of(seen.request, seen.request_len));
    f
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::ProtocolVersion;

    #[test]
    fn names_the_call_both_timings_and_the_load() {
        let ctx = Context::bare(ProtocolVersion::LATEST_WITH_INITIALIZE);
        let f = check(
            &ctx,
            &Dropped {
                label: "tools/call echo with random valid arguments",
                tool: "echo",
                request: br#"{"jsonrpc":"2.0","id":7,"method":"tools/call"}"#,
                request_len: 46,
                in_flight: 8,
                timeout_ms: 10_000,
                alone_ms: 3,
            },
        );
        assert_eq!(f.code, "MC120");
        assert_eq!(f.severity, Severity::Warning);
        assert_eq!(f.tool.as_deref(), Some("echo"));
        assert_eq!(f.probe, "tools/call among calls in flight");
        assert!(
            f.message.contains("within 10000 ms while 8 calls")
                && f.message.contains("answered in 3 ms"),
            "{}",
            f.message
        );
        assert!(f.request.is_some_and(|r| r.contains("tools/call")));
    }
}
