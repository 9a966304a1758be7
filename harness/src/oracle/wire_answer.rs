//! The answer a correct server owes to one frame, whatever the frame is (JSON-RPC 2.0 §4–§6,
//! MCP `basic/index` §Messages): exactly one response per request, carrying its id; none per
//! notification (nor to a response sent to the server); one error response for a frame that
//! is not JSON or not a valid request (with the id when it can be read, null otherwise); one
//! array per batch (MCP 2025-03-26 defines batches; other versions may reject them with one
//! error). [`Expected::of_frame`] says what a frame is owed, [`Expected::check`] judges the
//! frames a server wrote back.
//!
//! One set of rules for every user: the cargo-fuzz targets judge in-process servers with
//! [`Expected::check`] (re-exported as `mcp_chaos::fuzz::Expected`), and the campaign's wire
//! phase judges live servers with [`check`], which reports a broken rule under the invariant
//! that already covers it:
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

use std::fmt::{self, Write as _};

use serde_json::Value;

use super::{Context, finding};
use crate::finding::{
    Finding, NO_RESPONSE, REPLY_TO_NOTIFICATION, RESPONSE_ID_MISMATCH, Severity, WIRE_ANSWER,
};
use crate::protocol::ProtocolVersion;
use crate::session::{Exchange, Outcome, Probe};
use crate::wire::{self, BatchItem, IdNumber, RequestId, ResponseId, WireError};

/// Nesting (arrays and objects) past which a request left unanswered is a warning, not a
/// violation: RFC 8259 §9 lets a JSON parser limit the depth it reads, and neither JSON-RPC
/// nor MCP says what a server owes a frame its parser refused on depth (common limits: 100 in
/// Ruby's `json`, 128 in serde_json, 200 in pydantic's jiter, which the Python SDK reads
/// frames with and silently drops a frame 200 levels deep). A server that dies or wedges on
/// such a frame is still judged by the liveness check.
pub const DEEP_NESTING: usize = 64;

/// What a correct server owes in answer to one frame (JSON-RPC 2.0 §4–§6, MCP
/// `basic/index` §Messages). Only responses count as answers: the server may also write
/// notifications and requests of its own (log messages, progress, sampling).
#[derive(Debug, Clone, PartialEq)]
pub enum Expected {
    /// Exactly one response (success or error) whose id is this one.
    Response(RequestId),
    /// At most one response, whose id is this one: `subscriptions/listen`, whose stream may
    /// stay open.
    MaybeResponse(RequestId),
    /// No response: a notification (or a response sent to the server).
    Nothing,
    /// Exactly one error response, with this id (when it could be read) or a null or absent
    /// id: the frame is not JSON, or not a valid request (JSON-RPC 2.0 §5).
    Error(Option<RequestId>),
    /// An empty frame: nothing, or one error response with a null or absent id.
    Blank,
    /// A batch: one array holding one response per element that is owed one (§6), and none
    /// at all when no element is; `may_reject` (a version that does not define batches):
    /// any answer made of single responses also does (one error with id null rejecting the
    /// array, or the elements answered one by one); only no answer at all does not.
    Batch {
        /// What each element is owed.
        items: Vec<Expected>,
        /// Whether a single error response rejecting the batch is accepted.
        may_reject: bool,
    },
    /// Any one of these.
    AnyOf(Vec<Expected>),
    /// Anything, or nothing: the frame nests deeper than mcp-chaos reads
    /// ([`wire::MAX_DEPTH`] levels), so what it is owed is not known here (the spec sets no
    /// depth limit); only the server's liveness after it is judged.
    Unread,
}

/// A frame's `id` when it can be read as an MCP request id.
fn readable_id(value: &Value) -> Option<RequestId> {
    match value.get("id")? {
        Value::String(s) => Some(RequestId::String(s.clone())),
        Value::Number(n) => n
            .as_i64()
            .map(RequestId::from)
            .or_else(|| n.as_u64().map(|u| RequestId::Number(IdNumber::Unsigned(u)))),
        _ => None,
    }
}

/// What a frame (or batch element) `raw` that is not a valid message is owed: one error with
/// the id it carries when that can be read (JSON-RPC 2.0 §5). But an object with a string
/// `method` and no `id` (spoilt by `params` of another type, `result` or `error` beside the
/// method, a wrong `jsonrpc`): read by its `method` it is a notification, owed nothing
/// (§4.1: a notification's errors are not reported); read strictly it is an invalid
/// request, owed an error with id null (§5). The spec picks neither reading, so either is
/// accepted.
fn invalid(raw: &Value) -> Expected {
    if raw.get("method").is_some_and(Value::is_string) && raw.get("id").is_none() {
        return Expected::AnyOf(vec![Expected::Nothing, Expected::Error(None)]);
    }
    Expected::Error(readable_id(raw))
}

fn owed(request: &wire::Request) -> Expected {
    if request.method() == "subscriptions/listen" {
        Expected::MaybeResponse(request.id().clone())
    } else {
        Expected::Response(request.id().clone())
    }
}

/// An answer: one response, or an array of them (borrowed from the frames as read).
enum Answer<'a> {
    One(&'a wire::Response),
    Batch(Vec<&'a wire::Response>),
}

/// What a server did wrong in answer to a frame.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Violation(pub String);

fn describe(answers: &[Answer<'_>]) -> String {
    if answers.is_empty() {
        return "no response".into();
    }
    let each: Vec<String> = answers
        .iter()
        .map(|a| match a {
            Answer::One(r) => format!("{} id {}", wire_class(r), r.id()),
            Answer::Batch(rs) => format!("an array of {} responses", rs.len()),
        })
        .collect();
    each.join(", ")
}

fn wire_class(r: &wire::Response) -> &'static str {
    if r.is_error() {
        "an error response with"
    } else {
        "a response with"
    }
}

fn null_id(r: &wire::Response) -> bool {
    matches!(r.id(), ResponseId::Null | ResponseId::Absent)
}

impl Expected {
    /// What a correct server owes in answer to `frame`, as [`wire::parse`] reads it, under
    /// `version` (which says whether batches are defined).
    pub fn of_frame(frame: &[u8], version: ProtocolVersion) -> Expected {
        match wire::parse(frame) {
            Ok(wire::Message::Request(r)) => owed(&r),
            Ok(wire::Message::Notification(_) | wire::Message::Response(_)) => Expected::Nothing,
            Ok(wire::Message::Batch(b)) => Expected::Batch {
                items: b
                    .items()
                    .iter()
                    .map(|item| match item {
                        BatchItem::Valid(wire::Message::Request(r)) => owed(r),
                        BatchItem::Valid(_) => Expected::Nothing,
                        BatchItem::Invalid { raw, .. } => invalid(raw),
                    })
                    .collect(),
                may_reject: !version.rules().batches,
            },
            Err(WireError::Empty) => Expected::Blank,
            Err(WireError::TooDeep { .. }) => Expected::Unread,
            Err(e) if e.is_json() => serde_json::from_slice::<Value>(frame)
                .map_or(Expected::Error(None), |v| invalid(&v)),
            Err(_) => Expected::Error(None),
        }
    }

    /// Judges the frames a server wrote in answer to the frame (each one JSON-RPC message,
    /// with or without its newline): every frame must parse, every answer must be owed, and
    /// every owed answer must be there exactly once. A server that answers later must collect
    /// those frames first.
    pub fn check<F: AsRef<[u8]>>(&self, written: &[F]) -> std::result::Result<(), Violation> {
        let read: Vec<(&[u8], Result<wire::Message, WireError>)> = written
            .iter()
            .map(|frame| (frame.as_ref(), wire::parse(frame.as_ref())))
            .collect();
        self.check_read(read.iter().map(|(raw, message)| (*raw, message.as_ref())))
    }

    /// [`Expected::check`] of frames already read: each frame's bytes with what
    /// [`wire::parse`] made of them (a received [`crate::transport::Frame`]'s `raw` and
    /// `message`), so that a large answer (a `tools/list` of thousands of tools) is not
    /// parsed again.
    pub fn check_read<'a>(
        &self,
        written: impl IntoIterator<Item = (&'a [u8], Result<&'a wire::Message, &'a WireError>)>,
    ) -> std::result::Result<(), Violation> {
        let mut answers = Vec::new();
        for (frame, message) in written {
            let bad = |what: String| {
                Violation(format!(
                    "the server wrote {what}: {}",
                    wire::excerpt(frame, 300)
                ))
            };
            match message {
                Err(e) => return Err(bad(format!("a frame that is not a JSON-RPC message ({e})"))),
                Ok(wire::Message::Response(r)) => answers.push(Answer::One(r)),
                Ok(wire::Message::Batch(b)) => {
                    let mut responses = Vec::new();
                    for item in b.items() {
                        match item {
                            BatchItem::Valid(wire::Message::Response(r)) => {
                                responses.push(r);
                            }
                            BatchItem::Valid(m) => {
                                return Err(bad(format!("a batch holding a {}", m.class())));
                            }
                            BatchItem::Invalid { error, .. } => {
                                return Err(bad(format!(
                                    "a batch holding an invalid element ({error})"
                                )));
                            }
                        }
                    }
                    answers.push(Answer::Batch(responses));
                }
                Ok(_) => {}
            }
        }
        self.judge(&answers)
    }

    fn judge(&self, answers: &[Answer<'_>]) -> std::result::Result<(), Violation> {
        let fail = || {
            Err(Violation(format!(
                "owed {self}, but the server sent {}",
                describe(answers)
            )))
        };
        let one = || match answers {
            [Answer::One(r)] => Some(r),
            _ => None,
        };
        let ok = match self {
            Expected::Response(id) => one().is_some_and(|r| r.id().id() == Some(id)),
            Expected::MaybeResponse(id) => {
                answers.is_empty() || one().is_some_and(|r| r.id().id() == Some(id))
            }
            Expected::Nothing => answers.is_empty(),
            Expected::Unread => true,
            Expected::Error(id) => one().is_some_and(|r| {
                r.is_error() && (null_id(r) || (id.is_some() && r.id().id() == id.as_ref()))
            }),
            Expected::Blank => {
                answers.is_empty() || one().is_some_and(|r| r.is_error() && null_id(r))
            }
            Expected::Batch { items, may_reject } => {
                // Where batches are not defined, a server may reject the array (one error with
                // id null) or read it some other way (its elements one by one): any answer of
                // single responses is accepted, only silence is not.
                let rejected = *may_reject
                    && !answers.is_empty()
                    && answers.iter().all(|a| matches!(a, Answer::One(_)));
                let owed_any = items
                    .iter()
                    .any(|i| !matches!(i, Expected::Nothing) && !i.may_go_unanswered());
                rejected
                    || match answers {
                        [] => !owed_any,
                        [Answer::Batch(responses)] => match match_batch(items, responses) {
                            Ok(()) => true,
                            Err(why) => {
                                return Err(Violation(format!(
                                    "owed {self}, but the batch answer {why}"
                                )));
                            }
                        },
                        _ => false,
                    }
            }
            Expected::AnyOf(all) => {
                let mut first = None;
                for e in all {
                    match e.judge(answers) {
                        Ok(()) => return Ok(()),
                        Err(v) => {
                            first.get_or_insert(v);
                        }
                    }
                }
                return match first {
                    Some(v) => Err(v),
                    None => Ok(()),
                };
            }
        };
        if ok { Ok(()) } else { fail() }
    }
}

/// Matches a batch answer against what its elements are owed: each owed response once, in
/// any order, and nothing else.
fn match_batch(
    items: &[Expected],
    responses: &[&wire::Response],
) -> std::result::Result<(), String> {
    let mut left: Vec<&wire::Response> = responses.to_vec();
    let mut take = |pred: &dyn Fn(&wire::Response) -> bool| -> bool {
        match left.iter().position(|r| pred(r)) {
            Some(i) => {
                left.remove(i);
                true
            }
            None => false,
        }
    };
    // Ids first (successes before errors, so that an invalid element with the same id finds
    // its error), then errors that may carry a null id.
    for item in items {
        match item {
            Expected::Response(id) | Expected::MaybeResponse(id) => {
                let found = take(&|r| !r.is_error() && r.id().id() == Some(id))
                    || take(&|r| r.id().id() == Some(id));
                if !found && matches!(item, Expected::Response(_)) {
                    return Err(format!("has no response with id {id}"));
                }
            }
            _ => {}
        }
    }
    for item in items {
        if let Expected::Error(id) = item {
            let found = id
                .as_ref()
                .is_some_and(|id| take(&|r| r.is_error() && r.id().id() == Some(id)))
                || take(&|r| r.is_error() && null_id(r));
            if !found {
                return Err(format!(
                    "has no error response for an invalid element (id {})",
                    id.as_ref().map_or("null".into(), ToString::to_string)
                ));
            }
        }
    }
    // An element that may be read as a notification or rejected (see `invalid`): its error,
    // if the server gave one, has a null id.
    for item in items {
        if item.may_go_unanswered() {
            take(&|r| r.is_error() && null_id(r));
        }
    }
    if let Some(extra) = left.first() {
        return Err(format!("holds an unexpected response (id {})", extra.id()));
    }
    Ok(())
}

impl fmt::Display for Expected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expected::Response(id) => write!(f, "one response with id {id}"),
            Expected::MaybeResponse(id) => write!(f, "at most one response with id {id}"),
            Expected::Nothing => f.write_str("no response"),
            Expected::Error(Some(id)) => write!(f, "one error response with id {id} or null"),
            Expected::Error(None) => f.write_str("one error response with id null"),
            Expected::Blank => f.write_str("no response, or an error response with id null"),
            Expected::Unread => {
                f.write_str("any answer (the frame nests deeper than mcp-chaos reads)")
            }
            Expected::Batch { items, may_reject } => {
                let optional = items.iter().filter(|i| i.may_go_unanswered()).count();
                let owed = items
                    .iter()
                    .filter(|i| !matches!(i, Expected::Nothing))
                    .count()
                    - optional;
                write!(f, "an array of {owed} responses")?;
                if optional > 0 {
                    write!(
                        f,
                        " (and up to {optional} more error responses with id null)"
                    )?;
                }
                if *may_reject {
                    f.write_str(" (or, batches being undefined here, any single responses)")?;
                }
                Ok(())
            }
            Expected::AnyOf(all) => {
                let each: Vec<String> = all.iter().map(ToString::to_string).collect();
                write!(f, "one of: {}", each.join("; "))
            }
        }
    }
}

impl Expected {
    /// Whether this is a choice of readings one of which is owed nothing (a batch element
    /// that is a notification or an invalid request, see `invalid`).
    fn may_go_unanswered(&self) -> bool {
        matches!(self, Expected::AnyOf(_)) && self.accepts_nothing()
    }

    /// Whether answering nothing at all meets the expectation.
    pub fn accepts_nothing(&self) -> bool {
        self.judge(&[]).is_ok()
    }

    /// Whether answering nothing is a violation rather than a warning: the frame is a valid
    /// request under every reading (dropping a frame the server cannot read, or a batch where
    /// batches are undefined, is a warning, as for the malformed-JSON and batch probes).
    fn drop_is_violation(&self) -> bool {
        match self {
            Expected::Response(_) | Expected::MaybeResponse(_) => true,
            Expected::Batch {
                may_reject: false,
                items,
            } => items.iter().any(Expected::drop_is_violation),
            Expected::AnyOf(all) => all.iter().all(Expected::drop_is_violation),
            _ => false,
        }
    }

    /// Whether the frame is owed nothing at all (a notification, a response, a batch of them).
    fn owes_nothing(&self) -> bool {
        match self {
            Expected::Nothing => true,
            Expected::Batch { items, .. } => items.iter().all(|i| matches!(i, Expected::Nothing)),
            Expected::AnyOf(all) => all.iter().all(Expected::owes_nothing),
            _ => false,
        }
    }
}

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
                        crate::fuzz::kind_of(what),
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
        crate::fuzz::kind_of(what),
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

impl Expected {
    /// A short name of what is owed, for grouping findings: `response`, `error`, `nothing`, ...
    pub fn kind(&self) -> &'static str {
        match self {
            Expected::Response(_) => "response",
            Expected::MaybeResponse(_) => "maybe-response",
            Expected::Nothing => "nothing",
            Expected::Error(_) => "error",
            Expected::Blank => "blank",
            Expected::Batch { .. } => "batch",
            Expected::AnyOf(_) => "any-of",
            Expected::Unread => "unread",
        }
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
