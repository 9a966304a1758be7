//! `wire-answer` and the other rules of what a server owes one frame, judged on live servers.
//! The rules themselves (JSON-RPC 2.0 §4–§6, MCP `basic/index` §Messages: one response per
//! request, none per notification, one error for an unreadable frame, one array per batch)
//! are [`Expected`], in [`crate::wire::answer`] (no I/O, shared with the cargo-fuzz targets,
//! which judge in-process servers with [`Expected::check`]). The campaign's wire phase judges
//! live servers with [`check`], which reports a broken rule under the invariant that already
//! covers it:
//! - a request (or an unreadable frame, which is owed an error) left without any response:
//!   `no-response` (MC103; a warning for an unreadable frame, as for the malformed-JSON
//!   probes, and for a request nested deeper than [`DEEP_NESTING`] levels, which a parser
//!   may refuse on depth);
//! - a response whose id is not the request's: `response-id-mismatch` (MC104);
//! - a response to a frame owed nothing (a notification, a response): `reply-to-notification`
//!   (MC106);
//! - anything else (two responses to one request, a batch answered element by element, a
//!   success for an invalid request, which is a warning): `wire-answer` (MC118).
//!
//! Frames that are not JSON-RPC are `stdout-not-protocol`'s (MC107), and a server that exits
//! or stops answering after the frame is judged by the liveness check (`server-died`,
//! `not-alive`, `server-wedged`), not here.

use std::fmt::Write as _;

use super::{Context, finding};
use crate::finding::{
    Finding, NO_RESPONSE, REPLY_TO_NOTIFICATION, RESPONSE_ID_MISMATCH, Severity, WIRE_ANSWER,
};
use crate::session::{Exchange, Outcome, Probe};
pub use crate::wire::answer::{Expected, Violation};
use crate::wire::{self, ResponseId, WireError};

/// Nesting (arrays and objects) past which a request left unanswered is a warning, not a
/// violation: RFC 8259 §9 lets a JSON parser limit the depth it reads, and neither JSON-RPC
/// nor MCP says what a server owes a frame its parser refused on depth (common limits: 100 in
/// Ruby's `json`, 128 in serde_json, 200 in pydantic's jiter, which the Python SDK reads
/// frames with and silently drops a frame 200 levels deep). A server that dies or wedges on
/// such a frame is still judged by the liveness check.
pub const DEEP_NESTING: usize = 64;

/// What a frame that is owed `expected` (sent in a [`Probe::Wire`] exchange) got wrong in the
/// server's answer, as a finding of the invariant that covers it (see the module docs). The
/// frames the server wrote while the exchange was open are the answer; frames that are not
/// JSON-RPC are left to `stdout-not-protocol`. Over Streamable HTTP an error status (4xx,
/// 5xx) whose body holds nothing or an error with id null rejects the frame as a whole
/// (`basic/transports` §Sending Messages: "If the server cannot accept the input, it MUST
/// return an HTTP error status code"; the body MAY hold an error without id), which is right
/// for every frame but a request whose id was readable. A server that is gone after the frame
/// is judged by the liveness check instead.
pub fn check(ctx: &Context<'_>, ex: &Exchange) -> Vec<Finding> {
    let Probe::Wire { expected, what, .. } = &ex.probe else {
        return Vec::new();
    };
    let demoted;
    let mcp_invalid = mcp_invalid_params(&ex.sent);
    let expected = match (expected, mcp_invalid) {
        // A request whose `params` is an array, or whose `params._meta` is not an object:
        // valid JSON-RPC, but an invalid request under MCP.
        (Expected::Response(id), true) => {
            demoted = Expected::Error(Some(id.clone()));
            &demoted
        }
        _ => expected,
    };
    if matches!(
        ex.outcome,
        Outcome::Gone(_) | Outcome::SendFailed(_) | Outcome::Abandoned
    ) || ex.exited().is_some()
    {
        return Vec::new();
    }
    // The frames as the transport read them: a large answer (a `tools/list` of thousands of
    // tools, tens of MiB once parsed) is not parsed again here.
    let written: Vec<(&[u8], &wire::Message)> = ex
        .frames()
        .filter_map(|(_, f)| f.message.as_ref().ok().map(|m| (f.raw.as_slice(), m)))
        .collect();
    // Frames too large or too deep to read were not judged as answers: say nothing.
    if ex.received[ex.preceding..].iter().any(|r| {
        matches!(&r.item, crate::session::ReceivedItem::Oversize { .. })
            || matches!(&r.item, crate::session::ReceivedItem::Frame(f)
                if matches!(f.message, Err(WireError::TooDeep { .. })))
    }) {
        return Vec::new();
    }
    // Over HTTP, an error status whose body holds no response with an id (nothing, or an
    // error with id null) rejects the frame as a whole: right for anything but a request
    // whose id could be read.
    let http_error = ex
        .http()
        .and_then(|h| h.status)
        .filter(|s| *s >= 400)
        .filter(|_| {
            written.iter().all(|(_, message)| match message {
                wire::Message::Response(r) => {
                    r.is_error() && matches!(r.id(), ResponseId::Null | ResponseId::Absent)
                }
                _ => false,
            })
        });
    let verdict = match http_error {
        Some(_) if !matches!(expected, Expected::Response(_) | Expected::MaybeResponse(_)) => {
            return Vec::new();
        }
        Some(status) => Err(Violation(format!(
            "owed {expected}, but the server rejected the request with HTTP {status} and no response carrying its id"
        ))),
        None => expected.check_read(written.iter().map(|(raw, message)| (*raw, Ok(*message)))),
    };
    let Err(violation) = verdict else {
        return Vec::new();
    };
    let responses: Vec<&wire::Response> = written
        .iter()
        .filter_map(|(_, message)| match message {
            wire::Message::Response(r) => Some(r),
            _ => None,
        })
        .collect();
    let batches = written
        .iter()
        .filter(|(_, message)| matches!(message, wire::Message::Batch(_)))
        .count();
    let nothing = responses.is_empty() && batches == 0;
    let depth = wire::json_depth(&ex.sent, wire::MAX_DEPTH);
    let deep = depth > DEEP_NESTING;
    let (invariant, severity) = if nothing {
        let severity = if expected.drop_is_violation() && !deep {
            Severity::Violation
        } else {
            Severity::Warning
        };
        (&NO_RESPONSE, severity)
    } else if expected.owes_nothing() {
        (&REPLY_TO_NOTIFICATION, Severity::Violation)
    } else {
        match (expected, responses.as_slice()) {
            (Expected::Response(id), [r]) if batches == 0 && r.id().id() != Some(id) => {
                (&RESPONSE_ID_MISMATCH, Severity::Violation)
            }
            // An invalid request served as if it were valid: JSON-RPC asks for an error, but
            // the server read the frame more leniently (as for wrong-error-code's warning).
            (Expected::Error(Some(id)), [r])
                if batches == 0 && !r.is_error() && r.id().id() == Some(id) =>
            {
                // JSON-RPC 2.0 lists a request's members but forbids no other: serving a
                // request that also carries `result`, `error` or an unknown member is no fault.
                // Nor is serving array params where the method needs none, or ignoring a
                // `_meta` that is not an object.
                if mcp_invalid
                    || matches!(
                        crate::session::wire_kind(what),
                        "a result member" | "an error member" | "an unknown member"
                    )
                {
                    return Vec::new();
                }
                (&WIRE_ANSWER, Severity::Warning)
            }
            // A batch where the negotiated version does not define batches (2025-06-18 on):
            // the spec owes it nothing in particular, so an answer JSON-RPC 2.0 would call
            // incomplete is a warning; dying or hanging on it is judged elsewhere.
            (
                Expected::Batch {
                    may_reject: true, ..
                },
                _,
            ) => (&WIRE_ANSWER, Severity::Warning),
            _ => (&WIRE_ANSWER, Severity::Violation),
        }
    };
    // JSON-RPC 2.0 lists a request's members and neither allows nor forbids others: a server
    // whose parser reads such a frame strictly, as an invalid request, and drops or rejects
    // it (the TypeScript SDK's message schema is strict) breaks no rule the spec states
    // outright, only the rule that an error carries the id it could read.
    let extra_member = matches!(
        crate::session::wire_kind(what),
        "a result member" | "an error member" | "an unknown member"
    );
    let refused = nothing || (batches == 0 && responses.len() == 1 && responses[0].is_error());
    let severity = if extra_member && refused {
        Severity::Warning
    } else {
        severity
    };
    let note = if extra_member && refused {
        " (the frame carries a member JSON-RPC 2.0 does not define: a strict parser may read it as an invalid request, which is still owed an error carrying the id it could read)".to_owned()
    } else if nothing && deep && expected.drop_is_violation() {
        format!(
            " (the frame nests {depth} levels deep, past {DEEP_NESTING}: a JSON parser may refuse it on depth, RFC 8259 §9, and the spec does not say what such a frame is owed; a parse error -32700 with id null tells the client why)"
        )
    } else {
        String::new()
    };
    let mut f = finding(
        invariant,
        severity,
        ctx,
        ex,
        format!("{}: {violation}{note}", ex.probe.label()),
    );
    f.request = Some(escaped(&ex.sent, super::EXCERPT_BYTES));
    if nothing && severity == Severity::Warning {
        // A frame dropped where dropping is a warning: one finding per class of frame
        // (unreadable, invalid request, batch, nested very deep), whatever near-miss spoilt
        // it, under a label that depends on neither the case nor the seed (baselines key on
        // it); the first frame's message is shown, the others are counted.
        let class = if extra_member && !deep {
            "requests with a member JSON-RPC does not define".to_owned()
        } else {
            dropped_class(expected, deep)
        };
        f.probe = format!("wire frames dropped ({class})");
        f.group = Some(format!("wire-dropped|{class}"));
        return vec![f];
    }
    // One finding per rule broken and kind of frame owed (a batch, a response...), however
    // many frames broke it; the first one's message and frame are shown.
    f.group = Some(format!("wire|{}|{}", invariant.code, expected.kind()));
    vec![f]
}

/// The class of a frame dropped without an answer, where dropping it is a warning: what the
/// `no-response` warnings of the wire phase are grouped by.
fn dropped_class(expected: &Expected, deep: bool) -> String {
    if deep {
        return format!("nested past {DEEP_NESTING} levels");
    }
    match expected {
        Expected::Batch { .. } => "batches",
        Expected::Error(Some(_)) => "invalid requests",
        _ => "unreadable: not JSON, not UTF-8, ambiguous or not a message",
    }
    .to_owned()
}

/// Whether `sent` is one request whose `params` MCP defines otherwise than JSON-RPC does: not
/// an object (an array: JSON-RPC allows it, MCP does not), or with a `_meta` that is not an
/// object (every version's schema defines `params._meta` as an object). Such a request is
/// invalid under MCP, owed an error (or served leniently); a server whose parser reads it
/// strictly, as no request at all, drops it (the TypeScript SDK's message schema does).
fn mcp_invalid_params(sent: &[u8]) -> bool {
    match wire::parse(sent.strip_suffix(b"\n").unwrap_or(sent)) {
        Ok(wire::Message::Request(r)) => r
            .params()
            .is_some_and(|p| !p.is_object() || p.get("_meta").is_some_and(|m| !m.is_object())),
        _ => false,
    }
}

/// `bytes` as text for a report, cut to about `max` bytes: valid UTF-8 as it is (credential
/// shapes scrubbed), every byte that is not valid UTF-8 as `\xNN` (so `{"a":"\xff"}` is the
/// four-byte-longer spelling of a frame whose string holds the byte 0xFF). A frame that ends
/// in a newline is shown without it.
pub fn escaped(bytes: &[u8], max: usize) -> String {
    let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    if std::str::from_utf8(bytes).is_ok() {
        return super::safe_excerpt(bytes);
    }
    let mut out = String::new();
    let mut rest = bytes;
    while !rest.is_empty() && out.len() < max {
        match std::str::from_utf8(rest) {
            Ok(s) => {
                out.push_str(&super::leaks::scrub(s));
                break;
            }
            Err(e) => {
                let (good, bad) = rest.split_at(e.valid_up_to());
                if let Ok(s) = std::str::from_utf8(good) {
                    out.push_str(&super::leaks::scrub(s));
                }
                let n = e.error_len().unwrap_or(bad.len()).max(1).min(bad.len());
                for b in &bad[..n] {
                    let _ = write!(out, "\\x{b:02x}");
                }
                rest = &bad[n..];
            }
        }
    }
    if out.len() > max {
        let mut cut = max;
        while !out.is_char_boundary(cut) {
            cut -= 1;
        }
        out.truncate(cut);
        out.push_str("...");
    }
    out
}

/// This invariant as the oracle's [`judge`](super::judge) runs it on every exchange
/// ([`check`]), with the catalog entries it reports.
pub struct Rule;

impl super::Check for Rule {
    fn name(&self) -> &'static str {
        "wire_answer"
    }

    fn invariants(&self) -> &'static [crate::finding::Invariant] {
        &[
            crate::finding::NO_RESPONSE,
            crate::finding::REPLY_TO_NOTIFICATION,
            crate::finding::RESPONSE_ID_MISMATCH,
            crate::finding::WIRE_ANSWER,
        ]
    }

    fn check(&self, ctx: &super::Context<'_>, ex: &crate::session::Exchange) -> Vec<Finding> {
        check(ctx, ex)
    }
}
