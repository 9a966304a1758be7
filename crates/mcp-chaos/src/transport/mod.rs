//! Transports: bytes out, classified frames in, with deadlines. A transport knows nothing of MCP
//! rules; it moves frames and reports what happened to the connection (a frame too large, the
//! stream closed, the process exited).
//!
//! - [`stdio`]: a child process speaking newline-delimited JSON-RPC on stdin/stdout
//!   (MCP `basic/transports` §stdio).
//! - [`http`]: Streamable HTTP, JSON or SSE responses, sessions, optional `--start`.

pub mod http;
pub mod process;
pub mod stdio;

use std::time::{Duration, Instant};

pub use http::{HttpConfig, HttpInfo, HttpTransport, SendReceipt};
pub use stdio::{StdioConfig, StdioTransport};

/// Default deadline for one request, in milliseconds (`--timeout-ms`).
pub const DEFAULT_TIMEOUT_MS: u64 = 10_000;

/// How many times [`late`] lets the runtime's other tasks run before it settles for nothing.
pub(crate) const LATE_YIELDS: usize = 4;

/// What reached `events` by a deadline that passed: its first event, read once the tasks
/// that fill it (the server's stdout reader, the HTTP response readers, the exit watcher)
/// had their turn. On a one-thread runtime, synchronous work elsewhere in the run (a
/// generator built for a large schema, a large frame judged; the tool calls run beside the
/// other phases) can hold those tasks past a deadline while the server's answer sits unread
/// in the pipe: without this, an answer written in time would be taken for none.
pub(crate) async fn late<T>(events: &mut tokio::sync::mpsc::Receiver<T>) -> Option<T> {
    for _ in 0..LATE_YIELDS {
        if let Ok(event) = events.try_recv() {
            return Some(event);
        }
        tokio::task::yield_now().await;
    }
    events.try_recv().ok()
}
/// Default largest frame accepted from a server, in bytes (16 MiB). A larger frame is reported
/// as [`TransportEvent::Oversize`] and discarded without being buffered whole.
pub use crate::observed::{ExitKind, Frame, Oversized, ShutdownOutcome};

/// Default largest frame accepted from a server, in bytes (16 MiB). A larger frame is reported
/// as [`TransportEvent::Oversize`] and discarded without being buffered whole.
pub const DEFAULT_MAX_FRAME_BYTES: usize = 16 * 1024 * 1024;
/// Default size of the stderr ring buffer, in bytes (64 KiB): the newest output is kept.
pub const DEFAULT_STDERR_BYTES: usize = 64 * 1024;

/// Something that happened on the transport.
#[derive(Debug, Clone)]
pub enum TransportEvent {
    /// A complete frame (one stdio line, or one HTTP/SSE message), classified, with the time
    /// it was read.
    Frame(Frame),
    /// A frame larger than the limit, judged as its bytes arrive: the event comes as soon as
    /// the limit is passed (not at the end of the frame, which may never come), and the rest
    /// of the frame is discarded unread (stdio) or the HTTP response is cut.
    Oversize {
        /// When the limit was passed.
        at: Instant,
        /// Bytes seen when the limit was passed (or the declared `Content-Length`): at least
        /// this many, in bytes.
        len: usize,
        /// The first bytes of the frame (at most 256), for the report.
        head: Vec<u8>,
        /// What grew past the limit.
        what: Oversized,
    },
    /// Lines on stdout that are not JSON (noise) beyond the first few of a run of them: counted,
    /// not kept, so that a server writing garbage forever costs no memory.
    Noise {
        /// When the count was sent.
        at: Instant,
        /// How many lines were dropped since the last count.
        lines: usize,
        /// Their total size in bytes.
        bytes: usize,
    },
    /// The server closed its output (stdout EOF).
    Closed {
        /// When the end of output was seen.
        at: Instant,
    },
    /// The server process exited.
    Exited {
        /// When the exit was seen.
        at: Instant,
        /// How it ended: an exit code, a signal, or unknown.
        status: ExitKind,
    },
    /// An HTTP request finished (its frames, if any, came before this event).
    Http(HttpInfo),
}

/// Why a frame could not be sent.
#[derive(Debug, thiserror::Error)]
pub enum SendError {
    /// The server's input is closed (it exited or closed stdin).
    #[error("the server's input is closed: {0}")]
    Closed(String),
    /// The write did not complete before the deadline (the server is not reading its input).
    #[error("writing {bytes} bytes to the server did not finish within {timeout_ms} ms")]
    Timeout {
        /// Size of the frame, in bytes.
        bytes: usize,
        /// The deadline, in ms.
        timeout_ms: u64,
    },
}

/// Why a server could not be started.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The command line is empty or cannot be split into words.
    #[error("invalid server command line {command:?}: {reason}")]
    BadCommand {
        /// The command line as given.
        command: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The program could not be spawned.
    #[error("could not start {program:?}: {source}")]
    Spawn {
        /// The program, as named in the command line.
        program: String,
        /// The OS error from spawning (e.g. `NotFound` when the program is not on `PATH`).
        source: std::io::Error,
    },
    /// The server URL is unusable.
    #[error("invalid server URL {url:?}: {reason}")]
    BadUrl {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The started server exited before its port opened.
    #[error("the server exited ({status}) before its port opened{}", tail(log))]
    Exited {
        /// How it ended, e.g. `exit code 1` or `killed by signal 9`.
        status: String,
        /// The newest stderr (and unread stdout) output, lossily decoded.
        log: String,
    },
    /// The started server's port did not open in time.
    #[error(
        "the server did not open port {port} within {timeout_ms} ms{}",
        tail(log)
    )]
    PortTimeout {
        /// The loopback port waited for.
        port: u16,
        /// How long mcp-chaos waited for the port, in ms.
        timeout_ms: u64,
        /// The newest stderr (and unread stdout) output, lossily decoded.
        log: String,
    },
}

fn tail(log: &str) -> String {
    let lines: Vec<&str> = log.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.is_empty() {
        String::new()
    } else {
        format!(
            "\nserver output (last lines):\n{}",
            lines[lines.len().saturating_sub(15)..].join("\n")
        )
    }
}

/// A transport to a server under test. An enum rather than a trait object, so that every
/// transport's async methods stay plain `async fn`s.
#[derive(Debug)]
pub enum Transport {
    /// A child process over stdio.
    Stdio(StdioTransport),
    /// A Streamable HTTP endpoint.
    Http(HttpTransport),
}

impl Transport {
    /// Sends one frame (the stdio transport writes the bytes as given, so include the `\n`;
    /// HTTP POSTs them without it). Fails if the server's input is closed or the write exceeds
    /// `timeout` (stdio). The receipt names the HTTP request that carries the frame.
    pub async fn send(
        &mut self,
        bytes: &[u8],
        timeout: Duration,
    ) -> Result<SendReceipt, SendError> {
        match self {
            Transport::Stdio(t) => t
                .send(bytes, timeout)
                .await
                .map(|()| SendReceipt::default()),
            Transport::Http(t) => Ok(t.send(bytes)),
        }
    }

    /// [`Transport::send`] of a frame the caller keeps too (in its exchange): over stdio the
    /// writer shares `bytes` instead of copying them (a 16 MiB request costs 16 MiB, not 32).
    pub async fn send_shared(
        &mut self,
        bytes: bytes::Bytes,
        timeout: Duration,
    ) -> Result<SendReceipt, SendError> {
        match self {
            Transport::Stdio(t) => t
                .send_shared(bytes, timeout)
                .await
                .map(|()| SendReceipt::default()),
            Transport::Http(t) => Ok(t.send(&bytes)),
        }
    }

    /// Like [`Transport::send`], with some HTTP headers overridden (ignored over stdio).
    pub async fn send_with(
        &mut self,
        bytes: &[u8],
        timeout: Duration,
        overrides: http::HeaderOverrides,
    ) -> Result<SendReceipt, SendError> {
        match self {
            Transport::Stdio(t) => t
                .send(bytes, timeout)
                .await
                .map(|()| SendReceipt::default()),
            Transport::Http(t) => Ok(t.send_with(bytes, overrides)),
        }
    }

    /// Sends one frame without waiting (for replies to server-to-client requests, which must
    /// never stop mcp-chaos from reading): `Ok(false)` when the stdio write queue is full and
    /// the frame was dropped; HTTP POSTs it in the background.
    pub fn try_send(&mut self, bytes: &[u8]) -> Result<bool, SendError> {
        match self {
            Transport::Stdio(t) => t.try_send(bytes),
            Transport::Http(t) => {
                t.send(bytes);
                Ok(true)
            }
        }
    }

    /// Stdio: stdout lines starting with `prefix` are from now on counted and dropped unparsed
    /// (see [`StdioTransport::skip_lines`]). Does nothing over HTTP.
    pub fn skip_lines(&self, prefix: Option<Vec<u8>>) {
        if let Transport::Stdio(t) = self {
            t.skip_lines(prefix);
        }
    }

    /// How many lines [`Transport::skip_lines`] has dropped so far (0 over HTTP).
    pub fn skipped_lines(&self) -> u64 {
        match self {
            Transport::Stdio(t) => t.skipped_lines(),
            Transport::Http(_) => 0,
        }
    }

    /// Whether each request's response comes back on its own HTTP exchange (so the end of
    /// that exchange ends the wait), rather than on one shared stream.
    pub fn per_request(&self) -> bool {
        matches!(self, Transport::Http(_))
    }

    /// The HTTP transport, if this is one.
    pub fn http(&mut self) -> Option<&mut HttpTransport> {
        match self {
            Transport::Http(t) => Some(t),
            Transport::Stdio(_) => None,
        }
    }

    /// Tells the transport the negotiated protocol version (HTTP sends it as
    /// `MCP-Protocol-Version` from 2025-06-18 on, and the stateless headers in 2026-07-28).
    pub fn set_protocol_version(&mut self, version: crate::protocol::ProtocolVersion) {
        if let Transport::Http(t) = self {
            let header = version
                .rules()
                .http_version_header
                .then(|| version.as_str().to_owned());
            t.set_protocol_version(header, !version.rules().handshake);
        }
    }

    /// The next event, or `None` if nothing arrives before `until`.
    pub async fn recv(&mut self, until: Instant) -> Option<TransportEvent> {
        match self {
            Transport::Stdio(t) => t.recv(until).await,
            Transport::Http(t) => t.recv(until).await,
        }
    }

    /// An event that has already arrived, without waiting.
    pub fn try_recv(&mut self) -> Option<TransportEvent> {
        match self {
            Transport::Stdio(t) => t.try_recv(),
            Transport::Http(t) => t.try_recv(),
        }
    }

    /// The newest stderr output (at most the ring buffer's size), lossily decoded; for HTTP,
    /// the output of the server mcp-chaos started, if any.
    pub fn stderr_tail(&self) -> String {
        match self {
            Transport::Stdio(t) => t.stderr_tail(),
            Transport::Http(t) => t.log_tail(),
        }
    }

    /// Once a stdio server has exited, waits until its stderr is read to the end, until at
    /// most `grace` after the exit, so that [`Transport::stderr_tail`] holds its last words.
    /// Returns at once while it runs, once `grace` after its exit has passed, and over HTTP.
    pub async fn stderr_settled(&self, grace: std::time::Duration) {
        if let Transport::Stdio(t) = self {
            t.stderr_settled(grace).await;
        }
    }

    /// Whether the server process has exited.
    pub fn has_exited(&self) -> Option<ExitKind> {
        match self {
            Transport::Stdio(t) => t.has_exited(),
            Transport::Http(t) => t.has_exited(),
        }
    }

    /// Waits up to `within` for the server process to exit; how it exited, or `None` (still
    /// running, or an HTTP server mcp-chaos did not start).
    pub async fn wait_exit(&self, within: std::time::Duration) -> Option<ExitKind> {
        match self {
            Transport::Stdio(t) => t.wait_exit(within).await,
            Transport::Http(t) => t.wait_exit(within).await,
        }
    }

    /// Ends the connection the way the spec asks (stdio: close stdin, wait, SIGTERM, SIGKILL on
    /// the whole process group) and returns how the server ended.
    pub async fn shutdown(self) -> ShutdownOutcome {
        match self {
            Transport::Stdio(t) => t.shutdown().await,
            Transport::Http(t) => t.shutdown().await,
        }
    }

    /// Ends the connection at once: the server's process group is killed (SIGKILL) without
    /// waiting for it to exit on its own (a server busy with a call given up on, or one known
    /// to ignore its input closing); over HTTP no `DELETE` is sent.
    pub async fn kill(self) -> ShutdownOutcome {
        match self {
            Transport::Stdio(t) => t.kill().await,
            Transport::Http(t) => t.kill().await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On a one-thread runtime, an event another task is about to send (it has not had its
    /// turn) is not there for a plain look, and is read by [`late`]; nothing is made up.
    #[tokio::test(flavor = "current_thread")]
    async fn late_lets_the_sender_run_before_settling_for_nothing() {
        let (tx, mut rx) = tokio::sync::mpsc::channel::<u32>(4);
        tokio::spawn(async move {
            let _ = tx.send(7).await;
        });
        assert!(rx.try_recv().is_err());
        assert_eq!(late(&mut rx).await, Some(7));
        assert_eq!(late(&mut rx).await, None);
    }
}
