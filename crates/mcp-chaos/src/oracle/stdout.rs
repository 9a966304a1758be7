//! `stdout-not-protocol` (MC107) and `oversize-frame` (MC111): a stdio server writes nothing
//! but MCP messages to stdout (`basic/transports` §stdio: the server MUST NOT write anything
//! that is not a valid MCP message), and no frame exceeds the size limit.

use serde_json::Value;

use super::{Context, finding};
use crate::finding::{Finding, OVERSIZE_FRAME, STDOUT_NOT_PROTOCOL, Severity};
use crate::observed::{Frame, Oversized};
use crate::session::{Exchange, ReceivedItem};
use crate::wire::WireError;

/// The JSON-RPC members; an object with none of them is not an attempt at a message.
const ENVELOPE_MEMBERS: [&str; 5] = ["jsonrpc", "id", "method", "result", "error"];

/// Whether a frame that failed the wire layer is noise on the protocol channel (not JSON, a
/// JSON scalar, or an object with no JSON-RPC member, such as a JSON log record) rather than a
/// malformed attempt at a message (judged by `malformed-response`).
pub fn is_noise(frame: &Frame, error: &WireError) -> bool {
    match error {
        WireError::Empty
        | WireError::NotUtf8 { .. }
        | WireError::NotJson { .. }
        | WireError::NotAnObject { .. } => true,
        WireError::TooDeep { .. } => false,
        _ => match serde_json::from_slice::<Value>(&frame.raw) {
            Ok(Value::Object(map)) => !ENVELOPE_MEMBERS.iter().any(|m| map.contains_key(*m)),
            _ => false,
        },
    }
}

/// Judges every frame of `ex`, including leftovers that arrived before the send. Only stdio has
/// a stdout; over HTTP a body that is not a message is judged by `malformed-response`.
pub fn check(ctx: &Context<'_>, ex: &Exchange) -> Vec<Finding> {
    // Oversize is judged on every transport (stdout lines, HTTP bodies, SSE events).
    let mut findings = oversize(ctx, ex);
    if ex.http().is_some() {
        return findings;
    }
    let noise: Vec<(&Frame, &WireError)> = ex
        .invalid_frames()
        .filter(|(f, e)| is_noise(f, e))
        .collect();
    let blank = noise
        .iter()
        .filter(|(_, e)| matches!(e, WireError::Empty))
        .count();
    // Noise beyond the transport's sample was counted, not kept.
    let (counted, counted_bytes) = ex.received.iter().fold((0, 0), |(l, b), r| match r.item {
        ReceivedItem::Noise { lines, bytes } => (l + lines, b + bytes),
        _ => (l, b),
    });
    let counted_note = if counted > 0 {
        format!(" ({counted} of them, {counted_bytes} bytes, counted and discarded unread)")
    } else {
        String::new()
    };
    if let Some((first, error)) = noise.iter().find(|(_, e)| !matches!(e, WireError::Empty)) {
        let count = noise.len() - blank + counted;
        let mut f = finding(
            &STDOUT_NOT_PROTOCOL,
            Severity::Violation,
            ctx,
            ex,
            format!(
                "{count} line(s) on stdout are not MCP messages{counted_note}; the first is {} ({error})",
                quote(first)
            ),
        );
        f.response = Some(super::safe_excerpt(&first.raw));
        findings.push(f);
    } else if counted > 0 {
        findings.push(finding(
            &STDOUT_NOT_PROTOCOL,
            Severity::Violation,
            ctx,
            ex,
            format!(
                "{counted} more line(s) on stdout ({counted_bytes} bytes) are not MCP messages (a run of noise, counted and discarded unread)"
            ),
        ));
    } else if blank > 0 {
        findings.push(finding(
            &STDOUT_NOT_PROTOCOL,
            Severity::Warning,
            ctx,
            ex,
            format!("{blank} blank line(s) on stdout, which are not MCP messages"),
        ));
    }
    findings
}

/// One `oversize-frame` finding per frame that passed the size limit.
fn oversize(ctx: &Context<'_>, ex: &Exchange) -> Vec<Finding> {
    let mut findings = Vec::new();
    for item in &ex.received {
        if let ReceivedItem::Oversize { len, head, what } = &item.item {
            let cut = match what {
                Oversized::Line => "the rest of the line was discarded unread",
                Oversized::Body | Oversized::SseEvent | Oversized::SseStream => {
                    "the response was cut there"
                }
            };
            let mut f = finding(
                &OVERSIZE_FRAME,
                Severity::Violation,
                ctx,
                ex,
                format!(
                    "{what} passed the frame size limit (--max-frame-bytes) at {len} bytes; {cut}"
                ),
            );
            f.response = Some(super::safe_excerpt(head));
            findings.push(f);
        }
    }
    findings
}

fn quote(frame: &Frame) -> String {
    format!("{:?}", super::leaks::scrub(&frame.excerpt(80)))
}

/// This invariant as the oracle's [`judge`](super::judge) runs it on every exchange
/// ([`check`]), with the catalog entries it reports.
pub struct Rule;

impl super::Check for Rule {
    fn name(&self) -> &'static str {
        "stdout"
    }

    fn invariants(&self) -> &'static [crate::finding::Invariant] {
        &[
            crate::finding::OVERSIZE_FRAME,
            crate::finding::STDOUT_NOT_PROTOCOL,
        ]
    }

    fn check(&self, ctx: &super::Context<'_>, ex: &crate::session::Exchange) -> Vec<Finding> {
        check(ctx, ex)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::observed::Oversized;
    use crate::oracle::judge;
    use crate::protocol::ProtocolVersion;
    use crate::session::{Expect, Outcome, Probe, Received};
    use crate::wire::RequestId;

    fn ping_with(items: Vec<ReceivedItem>) -> Exchange {
        Exchange {
            probe: Probe::Liveness,
            sent: br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#.to_vec(),
            expect: Expect::Response {
                id: RequestId::from(1),
                or_null: false,
                fence: false,
            },
            received: items
                .into_iter()
                .map(|item| Received { at_ms: 1, item })
                .collect(),
            preceding: 0,
            outcome: Outcome::NoAnswer,
            elapsed: Duration::from_millis(1),
            timeout_ms: 1000,
            fault: None,
        }
    }

    fn judged(ex: &Exchange) -> Vec<(String, Severity, String)> {
        judge(&Context::bare(ProtocolVersion::V2025_11_25), ex)
            .into_iter()
            .map(|f| (f.invariant, f.severity, f.message))
            .collect()
    }

    #[test]
    fn counted_noise_is_stdout_not_protocol_with_its_count() {
        let ex = ping_with(vec![
            ReceivedItem::Frame(Frame::new(b"\x01garbage".to_vec())),
            ReceivedItem::Noise {
                lines: 500,
                bytes: 40_000,
            },
        ]);
        let found = judged(&ex);
        let f = found
            .iter()
            .find(|f| f.0 == "stdout-not-protocol")
            .expect("a stdout-not-protocol finding");
        assert!(
            f.2.starts_with("501 line(s)") && f.2.contains("40000 bytes"),
            "{}",
            f.2
        );
        // Only counted noise (the sample went to an earlier exchange) is still reported.
        let ex = ping_with(vec![ReceivedItem::Noise {
            lines: 7,
            bytes: 70,
        }]);
        assert!(
            judged(&ex)
                .iter()
                .any(|f| f.0 == "stdout-not-protocol" && f.2.contains("7 more"))
        );
        // A clean exchange has none.
        let ok = Frame::new(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#.to_vec());
        let mut ex = ping_with(vec![ReceivedItem::Frame(ok)]);
        ex.outcome = Outcome::Answered { index: 0 };
        assert!(judged(&ex).is_empty(), "{:?}", judged(&ex));
    }

    #[test]
    fn oversize_says_what_grew_and_that_it_was_cut() {
        let ex = ping_with(vec![ReceivedItem::Oversize {
            len: 17_000_000,
            head: b"{\"jsonrpc\"".to_vec(),
            what: Oversized::SseStream,
        }]);
        let found = judged(&ex);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, "oversize-frame");
        assert!(found[0].2.contains("SSE response stream") && found[0].2.contains("cut"));
    }

    #[test]
    fn too_deep_json_is_a_warning_not_noise_nor_no_response() {
        let deep = format!("{}{}", "[".repeat(2000), "]".repeat(2000));
        let mut ex = ping_with(vec![ReceivedItem::Frame(Frame::new(deep.into_bytes()))]);
        ex.probe = Probe::ToolsList;
        let found = judged(&ex);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(
            (found[0].0.as_str(), found[0].1),
            ("malformed-response", Severity::Warning)
        );
        assert!(
            found[0].2.contains("too deep for mcp-chaos"),
            "{}",
            found[0].2
        );
    }
}
