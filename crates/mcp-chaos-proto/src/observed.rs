//! What mcp-chaos observed of a server, as plain data: a frame it wrote, what grew past the
//! frame limit, how its process ended and how a shutdown went, what one HTTP
//! request/response looked like. The engine's transports (`mcp_chaos::transport`) produce these, the
//! session records them in exchanges, and the oracle judges them; no I/O here, so the oracle
//! needs no transport module (the transports re-export them under their old paths).

use std::time::Instant;

use crate::wire::{self, Message, WireError};

/// One frame received from the server: its raw bytes (without the trailing newline), when it
/// arrived, and how the wire layer classified it.
#[derive(Debug, Clone)]
pub struct Frame {
    /// When the frame was read completely.
    pub at: Instant,
    /// The bytes of the frame, without the line terminator.
    pub raw: Vec<u8>,
    /// The classification by [`wire::parse`].
    pub message: Result<Message, WireError>,
}

impl Frame {
    /// Classifies `raw` and stamps it with the current time.
    pub fn new(raw: Vec<u8>) -> Frame {
        let message = wire::parse(&raw);
        Frame {
            at: Instant::now(),
            raw,
            message,
        }
    }

    /// Classifies `raw`, read completely at `at` (a frame parsed later than it was read).
    pub fn read_at(raw: Vec<u8>, at: Instant) -> Frame {
        Frame {
            at,
            message: wire::parse(&raw),
            raw,
        }
    }

    /// The frame as text for a report, cut to `max` bytes.
    pub fn excerpt(&self, max: usize) -> String {
        wire::excerpt(&self.raw, max)
    }
}

/// What grew past `--max-frame-bytes` (the engine's `mcp_chaos::transport::TransportEvent::Oversize`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Oversized {
    /// A stdout line (stdio), newline-terminated or not.
    Line,
    /// An HTTP response body (`application/json` or any non-SSE body), by `Content-Length` or as
    /// it arrived (chunked).
    Body,
    /// One SSE event (its pending line and data).
    SseEvent,
    /// An SSE response stream in total (every event in it).
    SseStream,
}

impl std::fmt::Display for Oversized {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Oversized::Line => "a stdout line",
            Oversized::Body => "an HTTP response body",
            Oversized::SseEvent => "an SSE event",
            Oversized::SseStream => "an SSE response stream (all its events together)",
        })
    }
}

/// How a server process ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExitKind {
    /// Exited with a code.
    Code(i32),
    /// Killed by a signal (Unix signal number).
    Signal(i32),
    /// The status could not be read.
    Unknown,
}

impl std::fmt::Display for ExitKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExitKind::Code(c) => write!(f, "exit code {c}"),
            ExitKind::Signal(s) => write!(f, "killed by signal {s}"),
            ExitKind::Unknown => f.write_str("unknown exit status"),
        }
    }
}

/// How a stdio server's shutdown went: its stdin is closed, then it gets SIGTERM, then
/// SIGKILL, each step only if it has not exited after a grace period.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShutdownOutcome {
    /// The server had already exited before shutdown began.
    AlreadyExited(ExitKind),
    /// The server exited after its input was closed.
    ExitedOnEof(ExitKind),
    /// The server exited after SIGTERM.
    Terminated(ExitKind),
    /// The server had to be killed with SIGKILL.
    Killed,
}

/// What one HTTP request/response looked like.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpInfo {
    /// Which send it was (see the engine's `mcp_chaos::transport::http::SendReceipt::post`).
    pub post: u64,
    /// The HTTP method, e.g. `POST`, `GET` or `DELETE`.
    pub method: String,
    /// The status, or `None` when no response arrived (connection refused or reset, or the
    /// request was abandoned).
    pub status: Option<u16>,
    /// The `Content-Type` of the response.
    pub content_type: Option<String>,
    /// The `Mcp-Session-Id` of the response.
    pub session_id: Option<String>,
    /// The `Location` of a redirect (3xx) response. Redirects are never followed: an MCP
    /// endpoint answers at its own URL, and following could take mcp-chaos off loopback.
    pub location: Option<String>,
    /// Body size in bytes.
    pub body_bytes: usize,
    /// SSE events dispatched (for an event-stream body).
    pub sse_events: usize,
    /// Whether the first SSE event was a priming event (an `id` with empty `data`).
    pub sse_priming: bool,
    /// What a conforming SSE client would silently lose or misread.
    pub sse_anomalies: Vec<String>,
    /// A transport error, if the exchange failed.
    pub error: Option<String>,
    /// The `WWW-Authenticate` header of the response (a 401 or 403 says what it wants).
    pub www_authenticate: Option<String>,
    /// Time from sending to the end of the body, in ms.
    pub elapsed_ms: u64,
}

/// Whether a URL host is loopback (`localhost`, 127.0.0.0/8, `::1`).
pub fn is_loopback_host(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if host.eq_ignore_ascii_case("localhost") {
        return true;
    }
    host.parse::<std::net::IpAddr>()
        .is_ok_and(|ip| ip.is_loopback())
}
