//! `concurrent-requests-mixed` (MC119): a server with several requests in flight answers each
//! with its own id.
//!
//! Spec: `basic/index` §Responses (every version): "Responses MUST include the same ID as the
//! request they correspond to." JSON-RPC 2.0 §5 lets a client have several requests
//! outstanding and match the answers by id, in whatever order they come. The case scheduler
//! (`--in-flight`, see `run::scheduler`) keeps several `tools/call` requests outstanding; a
//! response carrying the id of a request that was already answered can only be the answer to
//! another request in flight, written with the wrong id. A violation of a MUST; reported once
//! per run, after which the phase runs one request at a time (so that no other invariant
//! judges answers the server mixed up).

use super::{Context, safe_excerpt, safe_excerpt_of};
use crate::finding::{CONCURRENT_REQUESTS_MIXED, Finding, Severity};

/// What the scheduler saw: a response (`stray`, its raw frame) carrying the id of a request
/// already answered (`answered`: that request's probe label, tool and raw frame) while
/// `in_flight` requests were outstanding.
pub struct MixedUp<'a> {
    /// The probe label of the request the id belongs to.
    pub label: &'a str,
    /// Its tool, if it was a `tools/call`.
    pub tool: Option<&'a str>,
    /// Its request frame, or the start of it ([`super::KEPT_BYTES`] at least).
    pub request: &'a [u8],
    /// The size of the whole request frame, in bytes.
    pub request_len: usize,
    /// The second response with that id.
    pub stray: &'a [u8],
    /// Requests outstanding when the stray response came.
    pub in_flight: usize,
}

/// The finding for a mixed-up answer.
pub fn check(ctx: &Context<'_>, seen: &MixedUp<'_>) -> Finding {
    let mut f = Finding::new(
        &CONCURRENT_REQUESTS_MIXED,
        Severity::Violation,
        ctx.version,
        format!(
            "with {} requests in flight, the server sent a second response with the id of {}, \
             which it had already answered: the answer to another request in flight went out \
             with the wrong id (responses MUST include the same ID as the request they \
             correspond to). The server cannot take concurrent requests; the rest of the phase \
             ran one request at a time",
            seen.in_flight, seen.label
        ),
    );
    f.tool = seen.tool.map(str::to_owned);
    f.probe = format!("{} requests in flight", seen.in_flight.max(2));
    f.request = Some(safe_excerpt_of(seen.request, seen.request_len));
    f.response = Some(safe_excerpt(seen.stray));
    f
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::ProtocolVersion;

    #[test]
    fn names_the_request_and_quotes_the_stray_answer() {
        let ctx = Context::bare(ProtocolVersion::LATEST_WITH_INITIALIZE);
        let f = check(
            &ctx,
            &MixedUp {
                label: "tools/call echo with random valid arguments",
                tool: Some("echo"),
                request: br#"{"jsonrpc":"2.0","id":7,"method":"tools/call"}"#,
                request_len: 46,
                stray: br#"{"jsonrpc":"2.0","id":7,"result":{}}"#,
                in_flight: 8,
            },
        );
        assert_eq!(f.code, "MC119");
        assert_eq!(f.severity, Severity::Violation);
        assert_eq!(f.tool.as_deref(), Some("echo"));
        assert!(f.message.contains("8 requests in flight"), "{}", f.message);
    }
}
