//! The answer a correct server owes to one frame, whatever the frame is (JSON-RPC 2.0 §4–§6,
//! MCP `basic/index` §Messages): exactly one response per request, carrying its id; none per
//! notification (nor to a response sent to the server); one error response for a frame that
//! is not JSON or not a valid request (with the id when it can be read, null otherwise); one
//! array per batch (MCP 2025-03-26 defines batches; other versions may reject them with one
//! error). [`Expected::of_frame`] says what a frame is owed, [`Expected::check`] judges the
//! frames a server wrote back. No I/O: the cargo-fuzz targets judge in-process servers with
//! these rules (re-exported as `mcp_chaos::fuzz::Expected`), and the campaign's wire phase
//! judges live servers with them through `oracle::wire_answer`, which turns a broken rule
//! into a finding of the invariant that covers it.

use std::fmt;

use serde_json::Value;

use crate::protocol::ProtocolVersion;
use crate::wire::{self, BatchItem, IdNumber, RequestId, ResponseId, WireError};

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
    /// What a candidate frame (one a shrinker made, or a replay file holds) is owed under
    /// `version`: as [`Expected::of_frame`] reads it, or, when it is not UTF-8, either that or
    /// what its lossy decoding is owed (a server may decode it either way).
    pub fn of_candidate(frame: &[u8], version: ProtocolVersion) -> Expected {
        let base = Expected::of_frame(frame, version);
        if std::str::from_utf8(frame).is_ok() {
            return base;
        }
        let lossy = String::from_utf8_lossy(frame).into_owned().into_bytes();
        Expected::AnyOf(vec![base, Expected::of_frame(&lossy, version)])
    }

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
    ///
    /// # Errors
    /// A [`Violation`] naming the first problem and quoting the frame: a frame that is not a
    /// JSON-RPC message, an answer not owed, or an owed answer missing or repeated.
    pub fn check<F: AsRef<[u8]>>(&self, written: &[F]) -> std::result::Result<(), Violation> {
        let read: Vec<(&[u8], Result<wire::Message, WireError>)> = written
            .iter()
            .map(|frame| (frame.as_ref(), wire::parse(frame.as_ref())))
            .collect();
        self.check_read(read.iter().map(|(raw, message)| (*raw, message.as_ref())))
    }

    /// [`Expected::check`] of frames already read: each frame's bytes with what
    /// [`wire::parse`] made of them (a received [`crate::observed::Frame`]'s `raw` and
    /// `message`), so that a large answer (a `tools/list` of thousands of tools) is not
    /// parsed again.
    ///
    /// # Errors
    /// As [`Expected::check`].
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
    pub fn may_go_unanswered(&self) -> bool {
        matches!(self, Expected::AnyOf(_)) && self.accepts_nothing()
    }

    /// Whether answering nothing at all meets the expectation.
    pub fn accepts_nothing(&self) -> bool {
        self.judge(&[]).is_ok()
    }

    /// Whether answering nothing is a violation rather than a warning: the frame is a valid
    /// request under every reading (dropping a frame the server cannot read, or a batch where
    /// batches are undefined, is a warning, as for the malformed-JSON and batch probes).
    pub fn drop_is_violation(&self) -> bool {
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
    pub fn owes_nothing(&self) -> bool {
        match self {
            Expected::Nothing => true,
            Expected::Batch { items, .. } => items.iter().all(|i| matches!(i, Expected::Nothing)),
            Expected::AnyOf(all) => all.iter().all(Expected::owes_nothing),
            _ => false,
        }
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
