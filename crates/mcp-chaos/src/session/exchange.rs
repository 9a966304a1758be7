//! The record of one exchange with the server: what was sent, everything that came back while
//! waiting, and how the wait ended. The oracle judges exchanges; it never re-sends or re-parses.

use std::time::Duration;

use serde_json::Value;

use crate::transport::{ExitKind, Frame};
use crate::wire::{Message, RequestId, Response, ResponseId, WireError};

/// Why a frame was sent: the probe's intent, which tells the oracle what the server owes.
#[derive(Debug, Clone, PartialEq)]
pub enum Probe {
    /// `initialize` (handshake versions).
    Initialize {
        /// The version string requested.
        requested: String,
    },
    /// `initialize` with a version string no release has, to see how the server negotiates.
    VersionNegotiation {
        /// The bogus version string requested.
        requested: String,
    },
    /// `notifications/initialized`.
    Initialized,
    /// `server/discover` (2026-07-28), which replaces `initialize`.
    Discover,
    /// A `tools/list` request for one page (`server/tools` §Listing Tools; pagination by
    /// `cursor`).
    ToolsList,
    /// `ping` (or `server/discover` in 2026-07-28), sent to check that the server is alive.
    Liveness,
    /// `tools/call` of a listed tool with arguments built from its `inputSchema`.
    ToolCall {
        /// The tool's name.
        tool: String,
        /// The `arguments` object sent.
        arguments: Value,
    },
    /// `tools/call` of a listed tool with generated arguments: schema-valid ones, or ones that
    /// break exactly one constraint.
    Generated {
        /// The tool's name.
        tool: String,
        /// The `arguments` sent (a JSON object, or any value for an invalid case).
        arguments: Value,
        /// The constraint the arguments break, `None` for schema-valid arguments.
        violation: Option<crate::generate::Violation>,
        /// Where the case came from: `boundary`, `random`, `shrunk`, `replay`.
        phase: &'static str,
    },
    /// `tools/call` of a tool name the server did not list.
    UnknownTool {
        /// The made-up tool name sent in `params.name`.
        name: String,
    },
    /// A request for a method no MCP version defines.
    UnknownMethod {
        /// The made-up method name sent (owed JSON-RPC -32601, method not found).
        method: String,
    },
    /// A frame that is not JSON.
    ParseError,
    /// JSON that is not a valid JSON-RPC request.
    InvalidRequest {
        /// What is wrong with it, e.g. "no jsonrpc member".
        what: &'static str,
        /// The id the frame carries, if one can be read from it.
        id: Option<RequestId>,
    },
    /// A `tools/call` whose params fail the `CallToolRequest` schema.
    InvalidCallParams {
        /// What is wrong with it, e.g. "arguments is a string".
        what: &'static str,
    },
    /// A notification, which must get no reply.
    Notification {
        /// The notification's method, e.g. `notifications/cancelled`.
        method: String,
        /// Whether the method is defined by MCP.
        known: bool,
    },
    /// An HTTP-level probe (Streamable HTTP only).
    Http {
        /// Which HTTP-level probe was sent.
        what: HttpProbe,
    },
    /// A 2026-07-28 request without the required `_meta` fields (MUST get -32602, HTTP 400).
    MissingMeta,
    /// A liveness request sent while a tool call was in flight (transport chaos).
    PingDuringCall {
        /// The tool being called.
        tool: String,
        /// How soon the answer is owed, in ms.
        budget_ms: u64,
        /// When the call's own response came, in ms after this request was sent (`None`: not
        /// within the window).
        call_answered_ms: Option<u64>,
    },
    /// A tool call cancelled while in flight (`notifications/cancelled`, or a dropped HTTP
    /// stream in 2026-07-28).
    CancelledCall {
        /// The tool's name.
        tool: String,
    },
    /// The `notifications/cancelled` itself.
    Cancel,
    /// A tool call in flight when the client disconnected.
    Disconnected {
        /// The tool's name.
        tool: String,
    },
    /// One of several requests in flight at once.
    Concurrent {
        /// How many were in flight.
        n: usize,
    },
    /// A request that reuses the id of one still in flight (the server must only survive it).
    DuplicateId,
    /// Several requests written in one chunk.
    Pipelined,
    /// A request written a few bytes at a time.
    SplitWrites,
    /// A large request: a liveness request padded in `_meta` to a given size.
    LargeRequest {
        /// The whole frame's size, in bytes.
        bytes: usize,
    },
    /// A frame of the wire phase, drawn by [`crate::fuzz::Request::live`]: a message of the
    /// negotiated version, or a near-miss of one (invalid UTF-8, deep nesting, ...).
    Wire {
        /// Which case of the phase (from 1).
        case: usize,
        /// What the frame is, e.g. `tools/call with invalid UTF-8` (see
        /// [`crate::fuzz::Request::describe`]).
        what: String,
        /// What a correct server owes in answer.
        expected: crate::wire::answer::Expected,
        /// Where it came from: `generated`, `shrunk`, `replay`.
        phase: &'static str,
    },
    /// A request of the features phase (resources, prompts, completion, logging, pagination,
    /// capability gating).
    Feature(super::FeatureProbe),
    /// A JSON-RPC batch of requests.
    Batch {
        /// The ids of the requests in the batch.
        ids: Vec<RequestId>,
        /// Whether the negotiated version defines batches (2025-03-26).
        defined: bool,
    },
    /// A request sent out of the lifecycle order on a fresh connection (`basic/lifecycle`
    /// §Initialization, handshake versions).
    Lifecycle {
        /// Where in the handshake it was sent.
        state: LifecycleState,
        /// Its method (`tools/list`, `initialize`).
        method: String,
    },
}

/// Where in the `initialize` handshake a [`Probe::Lifecycle`] request was sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LifecycleState {
    /// On a fresh connection, before `initialize` was sent.
    BeforeInitialize,
    /// After the `initialize` response, before `notifications/initialized` was sent.
    BeforeInitialized,
    /// After the whole handshake: another `initialize`.
    Reinitialize,
}

impl LifecycleState {
    /// When the request was sent, e.g. `before initialize`.
    pub fn describe(self) -> &'static str {
        match self {
            LifecycleState::BeforeInitialize => "before initialize",
            LifecycleState::BeforeInitialized => "before notifications/initialized",
            LifecycleState::Reinitialize => "after the handshake",
        }
    }
}

/// The near-miss part of a [`Probe::Wire`] frame's `what` (`invalid UTF-8` of `tools/call
/// with invalid UTF-8`, as `fuzz::Request::describe` writes it), or the whole text for a
/// valid frame: what the wire phase's findings are grouped by.
pub fn wire_kind(what: &str) -> &str {
    what.split_once(" with ").map_or(what, |(_, kind)| kind)
}

impl Probe {
    /// A short human label, e.g. `tools/call weather`, `malformed JSON`.
    pub fn label(&self) -> String {
        match self {
            Probe::Initialize { requested } => format!("initialize {requested}"),
            Probe::VersionNegotiation { requested } => {
                format!("initialize with unsupported version {requested:?}")
            }
            Probe::Initialized => "notifications/initialized".into(),
            Probe::Discover => "server/discover".into(),
            Probe::ToolsList => "tools/list".into(),
            Probe::Liveness => "liveness ping".into(),
            Probe::ToolCall { tool, .. } => format!("tools/call {tool}"),
            Probe::Generated {
                tool,
                violation: None,
                phase,
                ..
            } => format!("tools/call {tool} with {phase} valid arguments"),
            Probe::Generated {
                tool,
                violation: Some(v),
                ..
            } => format!(
                "tools/call {tool} with arguments breaking {} at {:?}",
                v.keyword,
                if v.pointer.is_empty() {
                    "/"
                } else {
                    &v.pointer
                }
            ),
            Probe::UnknownTool { name } => format!("tools/call of unknown tool {name:?}"),
            Probe::UnknownMethod { method } => format!("unknown method {method:?}"),
            Probe::ParseError => "malformed JSON".into(),
            Probe::InvalidRequest { what, .. } => format!("invalid request ({what})"),
            Probe::InvalidCallParams { what } => format!("tools/call with invalid params ({what})"),
            Probe::Notification { method, .. } => format!("notification {method}"),
            Probe::Http { what } => format!("HTTP: {}", what.label()),
            Probe::MissingMeta => "request without the 2026-07-28 _meta fields".into(),
            Probe::PingDuringCall { tool, .. } => format!("ping while tools/call {tool} runs"),
            Probe::CancelledCall { tool } => format!("tools/call {tool}, cancelled"),
            Probe::Cancel => "notifications/cancelled".into(),
            Probe::Disconnected { tool } => format!("disconnect during tools/call {tool}"),
            Probe::Concurrent { n } => format!("one of {n} concurrent requests"),
            Probe::DuplicateId => "request reusing an in-flight id".into(),
            Probe::Pipelined => "requests written in one chunk".into(),
            Probe::SplitWrites => "request written in pieces".into(),
            Probe::LargeRequest { bytes } => format!("request of {bytes} bytes"),
            Probe::Wire {
                case, what, phase, ..
            } => match *phase {
                "generated" => format!("wire frame {case} ({what})"),
                _ => format!("wire frame {case} ({what}), {phase}"),
            },
            Probe::Feature(f) => f.label(),
            Probe::Batch { defined: true, .. } => "batch of requests".into(),
            Probe::Batch { defined: false, .. } => "batch of requests (robustness)".into(),
            Probe::Lifecycle {
                state: LifecycleState::Reinitialize,
                ..
            } => "second initialize".into(),
            Probe::Lifecycle { state, method } => format!("{method} {}", state.describe()),
        }
    }

    /// The tool called, for a `tools/call` of a listed tool (simple or generated arguments).
    pub fn called_tool(&self) -> Option<&str> {
        match self {
            Probe::ToolCall { tool, .. } | Probe::Generated { tool, .. } => Some(tool),
            _ => None,
        }
    }

    /// The arguments of a `tools/call` of a listed tool (simple or generated).
    pub fn arguments(&self) -> Option<&Value> {
        match self {
            Probe::ToolCall { arguments, .. } | Probe::Generated { arguments, .. } => {
                Some(arguments)
            }
            _ => None,
        }
    }

    /// The tool the probe concerns, if any.
    pub fn tool(&self) -> Option<&str> {
        match self {
            Probe::ToolCall { tool, .. } | Probe::Generated { tool, .. } => Some(tool),
            Probe::UnknownTool { name } => Some(name),
            Probe::PingDuringCall { tool, .. }
            | Probe::CancelledCall { tool }
            | Probe::Disconnected { tool } => Some(tool),
            _ => None,
        }
    }
}

/// The HTTP-level probes of Streamable HTTP (`basic/transports` §Streamable HTTP).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HttpProbe {
    /// A `ping` with `MCP-Protocol-Version: 1999-01-01` (MUST get 400, 2025-06-18 on).
    BadVersionHeader,
    /// A `ping` with a session id the server never issued (should get 404, as for an ended
    /// session: a warning otherwise).
    UnknownSession,
    /// A `ping` without the session id the server issued (SHOULD get 400).
    NoSession,
    /// A `ping` with `Origin: http://evil.example` (MUST be refused; 403 from 2025-11-25).
    ForeignOrigin,
    /// A `GET` for the server-to-client stream (SSE, or 405; 405 in 2026-07-28).
    Get,
    /// A `DELETE` ending the session (2xx, or 405 when the server does not allow it).
    Delete,
    /// A `ping` with the session id just deleted (MUST get 404).
    DeletedSession,
    /// A 2026-07-28 request without the `Mcp-Method` header (MUST get 400 with -32020).
    MissingMethodHeader,
}

impl HttpProbe {
    /// The probe's name in reports, e.g. `foreign Origin` (shown as `HTTP: foreign Origin`).
    pub fn label(self) -> &'static str {
        match self {
            HttpProbe::BadVersionHeader => "unsupported MCP-Protocol-Version header",
            HttpProbe::UnknownSession => "unknown session id",
            HttpProbe::NoSession => "no session id",
            HttpProbe::ForeignOrigin => "foreign Origin",
            HttpProbe::Get => "GET stream",
            HttpProbe::Delete => "DELETE session",
            HttpProbe::DeletedSession => "deleted session id",
            HttpProbe::MissingMethodHeader => "no Mcp-Method header",
        }
    }
}

/// What the session waited for after sending.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expect {
    /// A response with this id. `or_null`: an error response with a null or absent id also
    /// counts (the request was invalid, so its id may not have been readable).
    Response {
        /// The JSON-RPC `id` of the request sent, which the response must echo.
        id: RequestId,
        /// Whether a null/absent-id error response also answers it.
        or_null: bool,
        /// Whether a fence `ping` follows the frame, so that the wait ends a grace period after
        /// the fence is answered instead of at the deadline (for frames a server answers at
        /// once or not at all, such as invalid requests).
        fence: bool,
    },
    /// Nothing in particular: a fence `ping` was sent after the frame and the window closed a
    /// grace period after the fence was answered. Anything received before is attributed to
    /// the frame.
    Fenced,
}

/// One thing received while an exchange was open.
#[derive(Debug, Clone)]
pub struct Received {
    /// Milliseconds since the exchange started.
    pub at_ms: u64,
    /// What arrived: a frame, or a transport event (EOF, exit, HTTP info, counts).
    pub item: ReceivedItem,
}

/// One thing received during an exchange: a frame, or what the transport observed about the
/// server (oversize, noise, EOF, exit, HTTP status, flood, dropped counts).
#[derive(Debug, Clone)]
pub enum ReceivedItem {
    /// A frame, whatever it is (response, notification, server request, batch, or garbage).
    Frame(Frame),
    /// A frame over the size limit, discarded as it arrived.
    Oversize {
        /// Bytes seen when the limit was passed (at least this many).
        len: usize,
        /// The first bytes of the frame (at most 256), for the report.
        head: Vec<u8>,
        /// What grew past the limit.
        what: crate::transport::Oversized,
    },
    /// Noise lines on stdout that were counted, not kept (see
    /// [`crate::transport::TransportEvent::Noise`]).
    Noise {
        /// How many non-JSON lines were dropped since the last count.
        lines: usize,
        /// Their total size, in bytes.
        bytes: usize,
    },
    /// The server closed its output.
    Closed,
    /// The server process exited.
    Exited(ExitKind),
    /// The HTTP exchange that carried the probe (status, content type, SSE anomalies).
    Http(crate::transport::HttpInfo),
    /// The session's first flooded window of a kind began during this exchange (see
    /// [`super::flood`]); the message that crossed the threshold is its sample.
    Flood(super::flood::Flood),
    /// Unsolicited messages this exchange counted but did not keep, or requests it throttled or
    /// could not answer (recorded once, at its end).
    Dropped(super::flood::Dropped),
}

/// How the wait ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The expected response arrived: `received[index]`.
    Answered {
        /// Index into [`Exchange::received`].
        index: usize,
    },
    /// The fence was answered (for [`Expect::Fenced`]).
    Fenced,
    /// The deadline passed without the expected response (or, for a fenced exchange, without
    /// the fence's response).
    NoAnswer,
    /// mcp-chaos stopped waiting at a limit of its own below the client's maximum (a tool's
    /// time budget in the generated phase) while progress notifications were still extending
    /// the deadline: the call was not given its full time, so nothing is judged about it.
    Abandoned,
    /// The server exited or closed its output before answering.
    Gone(Option<ExitKind>),
    /// The frame could not be written.
    SendFailed(String),
}

/// How a client should treat an injected upstream failure (mirrors the fault injectors'
/// classification, so the oracle does not depend on them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Retry {
    /// Not a failure (delays, slow bodies).
    NotAFailure,
    /// Trying again later may succeed (429, 502/503/504, timeouts, resets).
    Retryable,
    /// Trying again will not help (401, 403, 404, 410).
    Permanent,
    /// A failure whose retryability the client cannot know (500, malformed bodies).
    Indeterminate,
}

/// One request the server made to the fake upstream during an exchange.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct UpstreamHit {
    /// The HTTP method of the request, e.g. `GET` or `CONNECT`.
    pub method: String,
    /// Path and query (or `host:port` for CONNECT).
    pub target: String,
    /// The fault actually served (`ok` when the schedule let it through).
    pub served: String,
    /// Whether the client experienced it as a failure.
    pub failure: bool,
    /// Whether it was a failure whatever the client wanted: an HTTP error status, or a broken
    /// or missing response (not a 200 whose body merely has an unexpected shape, which a
    /// fetch-like tool may rightly pass through).
    pub definite: bool,
}

/// The upstream fault in effect during an exchange and the upstream requests the exchange
/// caused (from the fault injector's journal).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct FaultContext {
    /// The fault profile's name, e.g. `rate-limited`.
    pub name: String,
    /// The HTTP status it serves, if any.
    pub status: Option<u16>,
    /// Whether the profile is a failure from the client's point of view.
    pub failure: bool,
    /// How a client should treat it.
    pub retry: Retry,
    /// Whether the profile never answers (the server must time out on its own).
    pub hangs: bool,
    /// What the server owes in return, in one sentence.
    pub expectation: String,
    /// The upstream requests the exchange caused.
    pub upstream_requests: Vec<UpstreamHit>,
    /// Which requests the fault was scoped to (`the first request only`, `every request to
    /// /robots.txt`); `None` when it hit every request.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// Under a scoped fault, what each upstream request got, in order (`the first request (GET
    /// /robots.txt) got 503 unavailable, the second (GET /data) 200 ok`); `None` otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attribution: Option<String>,
}

impl FaultContext {
    /// Whether the exchange really met the fault: at least one upstream request failed.
    pub fn met(&self) -> bool {
        self.upstream_requests.iter().any(|h| h.failure)
    }

    /// Whether every upstream request of the exchange failed definitely (and there was at
    /// least one): the operation cannot have succeeded.
    pub fn all_failed(&self) -> bool {
        !self.upstream_requests.is_empty()
            && self
                .upstream_requests
                .iter()
                .all(|h| h.failure && h.definite)
    }

    /// Whether at least one upstream request failed definitely.
    pub fn met_definitely(&self) -> bool {
        self.upstream_requests
            .iter()
            .any(|h| h.failure && h.definite)
    }

    /// The JSON put in a finding's `fault` field.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// One exchange: a probe, the frame(s) sent, everything received, the outcome.
#[derive(Debug, Clone)]
pub struct Exchange {
    /// Why the frame was sent.
    pub probe: Probe,
    /// The bytes sent (one frame, newline included).
    pub sent: Vec<u8>,
    /// What the session waited for: a response to a given id, or a fenced window.
    pub expect: Expect,
    /// Everything received while the exchange was open, in arrival order, except the fence's
    /// own response. The first [`Exchange::preceding`] items arrived before the frame was sent
    /// (leftovers since the previous exchange) and are not attributed to this probe.
    pub received: Vec<Received>,
    /// How many items of `received` arrived before the frame was sent.
    pub preceding: usize,
    /// How the wait ended.
    pub outcome: Outcome,
    /// Time from send to outcome.
    pub elapsed: Duration,
    /// The deadline that applied, in ms.
    pub timeout_ms: u64,
    /// The upstream fault in effect, when the exchange ran under one (set by the run).
    pub fault: Option<FaultContext>,
}

impl Exchange {
    /// The response that answered the probe, if any.
    pub fn response(&self) -> Option<&Response> {
        let Outcome::Answered { index } = self.outcome else {
            return None;
        };
        match self.received.get(index).map(|r| &r.item) {
            Some(ReceivedItem::Frame(Frame {
                message: Ok(Message::Response(r)),
                ..
            })) => Some(r),
            _ => None,
        }
    }

    /// The frame that answered the probe, if any (also for a batch answer).
    pub fn answer_frame(&self) -> Option<&Frame> {
        let Outcome::Answered { index } = self.outcome else {
            return None;
        };
        match self.received.get(index).map(|r| &r.item) {
            Some(ReceivedItem::Frame(f)) => Some(f),
            _ => None,
        }
    }

    /// Every frame received, with its index in [`Exchange::received`], including leftovers
    /// from before the send.
    pub fn all_frames(&self) -> impl Iterator<Item = (usize, &Frame)> {
        self.received
            .iter()
            .enumerate()
            .filter_map(|(i, r)| match &r.item {
                ReceivedItem::Frame(f) => Some((i, f)),
                _ => None,
            })
    }

    /// Every frame received after the send (the ones attributable to this probe), with its
    /// index in [`Exchange::received`].
    pub fn frames(&self) -> impl Iterator<Item = (usize, &Frame)> {
        let preceding = self.preceding;
        self.all_frames().filter(move |(i, _)| *i >= preceding)
    }

    /// Every response frame received other than the answer, with its id.
    pub fn other_responses(&self) -> impl Iterator<Item = (&Frame, &ResponseId)> {
        let answer = match self.outcome {
            Outcome::Answered { index } => Some(index),
            _ => None,
        };
        self.frames().filter_map(move |(i, f)| match &f.message {
            Ok(Message::Response(r)) if Some(i) != answer => Some((f, r.id())),
            _ => None,
        })
    }

    /// Frames that are not valid JSON-RPC (including leftovers from before the send), with what
    /// is wrong with them.
    pub fn invalid_frames(&self) -> impl Iterator<Item = (&Frame, &WireError)> {
        self.all_frames().filter_map(|(_, f)| match &f.message {
            Err(e) => Some((f, e)),
            Ok(_) => None,
        })
    }

    /// The HTTP exchange that carried the probe's frame, over HTTP.
    pub fn http(&self) -> Option<&crate::transport::HttpInfo> {
        self.received[self.preceding..]
            .iter()
            .find_map(|r| match &r.item {
                ReceivedItem::Http(info) => Some(info),
                _ => None,
            })
    }

    /// Whether the server exited during the exchange.
    pub fn exited(&self) -> Option<&ExitKind> {
        self.received.iter().find_map(|r| match &r.item {
            ReceivedItem::Exited(status) => Some(status),
            _ => None,
        })
    }
}
