//! The stdio transport (MCP `basic/transports` §stdio): the server is a child process; each
//! JSON-RPC message is one line on its stdin or stdout; stderr is the server's log.
//!
//! The server runs as the leader of its own process group ([`super::process`]), killed as a
//! group when the transport is shut down or dropped. Shutdown follows `basic/lifecycle`
//! §Shutdown: close stdin, wait, SIGTERM, wait, SIGKILL.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::ChildStdin;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::process::ServerProcess;
use super::{
    DEFAULT_MAX_FRAME_BYTES, DEFAULT_STDERR_BYTES, ExitKind, Frame, SendError, ShutdownOutcome,
    StartError, TransportEvent,
};

pub use super::process::KEPT_ENV;

/// How many bytes of an oversize frame are kept for the report.
const OVERSIZE_HEAD_BYTES: usize = 256;
/// Capacity of the event channel; a server that floods stdout is slowed by backpressure rather
/// than buffered without bound.
const EVENT_CAPACITY: usize = 1024;
/// Lines longer than this (in bytes) that are not noise are parsed by the task that receives
/// them ([`StdioTransport::recv`]), not by the stdout reader: the value of a large frame (a
/// `tools/list` of thousands of tools: 2 MB of JSON, over 20 MiB once parsed) is then built
/// where it is used and freed, instead of in the allocator arena of whichever runtime worker
/// thread ran the reader, where each such frame left its own 20-odd MiB resident.
const PARSE_ON_RECEIPT_BYTES: usize = 64 * 1024;
/// How many frames may wait to be written to the server's stdin. Frames are written by a task
/// of their own, so that mcp-chaos keeps reading the server's stdout while a write waits for
/// the server to read (a server that writes while it does not read would otherwise deadlock
/// both sides).
pub const WRITE_QUEUE_FRAMES: usize = 256;
/// Bytes of queued frames written in one write at most (a frame larger than this still goes
/// whole; frames are never split or reordered).
const WRITE_COALESCE_BYTES: usize = 64 * 1024;

/// How to start a server process: a stdio server, or the command behind an HTTP server's
/// `--start`.
#[derive(Debug, Clone)]
pub struct StdioConfig {
    /// The program to run (looked up on `PATH`).
    pub program: String,
    /// Its arguments, passed as given (no shell, no expansion).
    pub args: Vec<String>,
    /// Extra environment variables, added to the inherited environment (later entries win).
    pub env: Vec<(String, String)>,
    /// Start from an empty environment instead of inheriting mcp-chaos's, keeping only
    /// [`KEPT_ENV`] (so that a server that reports its environment cannot leak CI secrets).
    pub clean_env: bool,
    /// The working directory; the current one when `None`.
    pub cwd: Option<PathBuf>,
    /// Largest frame accepted on stdout, in bytes.
    pub max_frame_bytes: usize,
    /// Size of the stderr ring buffer, in bytes.
    pub stderr_bytes: usize,
    /// How long to wait for the server to exit after its stdin is closed.
    pub eof_grace: Duration,
    /// How long to wait after SIGTERM before SIGKILL.
    pub term_grace: Duration,
}

impl StdioConfig {
    /// Builds a config from a shell-like command line, e.g.
    /// `"npx -y @modelcontextprotocol/server-everything"` (split with POSIX shell quoting rules,
    /// without running a shell). Errors on an empty line or unbalanced quotes.
    pub fn from_command_line(line: &str) -> Result<StdioConfig, StartError> {
        let words = shell_words::split(line).map_err(|e| StartError::BadCommand {
            command: line.to_owned(),
            reason: e.to_string(),
        })?;
        let mut words = words.into_iter();
        let program = words.next().ok_or_else(|| StartError::BadCommand {
            command: line.to_owned(),
            reason: "it is empty".to_owned(),
        })?;
        Ok(StdioConfig::new(program, words.collect()))
    }

    /// A config for `program args…` with default limits.
    pub fn new(program: impl Into<String>, args: Vec<String>) -> StdioConfig {
        StdioConfig {
            program: program.into(),
            args,
            env: Vec::new(),
            clean_env: false,
            cwd: None,
            max_frame_bytes: DEFAULT_MAX_FRAME_BYTES,
            stderr_bytes: DEFAULT_STDERR_BYTES,
            eof_grace: Duration::from_millis(2_000),
            term_grace: Duration::from_millis(2_000),
        }
    }

    /// The command line, quoted so that it can be pasted into a shell.
    pub fn display(&self) -> String {
        let mut words = vec![self.program.as_str()];
        words.extend(self.args.iter().map(String::as_str));
        shell_words::join(words)
    }
}

/// A running stdio server. Dropping it kills the whole process group.
#[derive(Debug)]
pub struct StdioTransport {
    stdin: Option<Writer>,
    events: mpsc::Receiver<Read>,
    process: Option<ServerProcess>,
    reader: JoinHandle<()>,
    config: StdioConfig,
    skip: Arc<SkipLines>,
}

/// Lines the stdout reader counts and drops without parsing them: the lines of a flood the
/// session recognised (see [`StdioTransport::skip_lines`]).
#[derive(Debug, Default)]
pub struct SkipLines {
    prefix: Mutex<Option<Vec<u8>>>,
    skipped: AtomicU64,
}

impl SkipLines {
    /// Whether `line` is to be skipped (and counts it if so).
    fn skips(&self, line: &[u8]) -> bool {
        let skip = self
            .prefix
            .lock()
            .ok()
            .is_some_and(|p| p.as_ref().is_some_and(|p| line.starts_with(p)));
        if skip {
            self.skipped.fetch_add(1, Ordering::Relaxed);
        }
        skip
    }
}

impl StdioTransport {
    /// Spawns the server with piped stdin, stdout and stderr, as the leader of a new process
    /// group. Must be called inside a Tokio runtime.
    pub fn spawn(config: StdioConfig) -> Result<StdioTransport, StartError> {
        let (tx, events) = mpsc::channel(EVENT_CAPACITY);
        let (process, pipes) = ServerProcess::spawn(&config, true, true, tx.clone())?;
        let skip = Arc::new(SkipLines::default());
        let reader = match pipes.stdout {
            Some(stdout) => tokio::spawn(read_frames(
                stdout,
                tx,
                config.max_frame_bytes,
                Arc::clone(&skip),
            )),
            None => tokio::spawn(async {}),
        };
        Ok(StdioTransport {
            stdin: pipes.stdin.map(Writer::spawn),
            events,
            process: Some(process),
            reader,
            config,
            skip,
        })
    }

    /// The configuration the server was started with.
    pub fn config(&self) -> &StdioConfig {
        &self.config
    }

    /// The server's process id (also its process group id).
    pub fn pid(&self) -> i32 {
        self.process.as_ref().map_or(0, ServerProcess::pid)
    }

    /// Queues `bytes` for the server's stdin. Returns once the frame is queued (the writer
    /// task writes and flushes queued frames in order), waiting at most `timeout` for room in
    /// the queue ([`WRITE_QUEUE_FRAMES`] frames): a full queue for that long means the server
    /// is not reading its input ([`SendError::Timeout`]). Fails with [`SendError::Closed`]
    /// once a write failed or stdin was closed.
    pub async fn send(&mut self, bytes: &[u8], timeout: Duration) -> Result<(), SendError> {
        self.send_shared(Bytes::copy_from_slice(bytes), timeout)
            .await
    }

    /// [`StdioTransport::send`] of a frame the caller keeps too, without copying it: the
    /// writer task holds `bytes` (a reference to the caller's buffer) until it is written.
    pub async fn send_shared(&mut self, bytes: Bytes, timeout: Duration) -> Result<(), SendError> {
        let Some(writer) = self.stdin.as_ref() else {
            return Err(SendError::Closed("stdin was closed".into()));
        };
        writer.check()?;
        let len = bytes.len();
        match tokio::time::timeout(timeout, writer.tx.send(bytes)).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(_)) => Err(writer
                .check()
                .err()
                .unwrap_or_else(|| SendError::Closed("the stdin writer ended".into()))),
            Err(_) => Err(SendError::Timeout {
                bytes: len,
                timeout_ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
            }),
        }
    }

    /// Queues `bytes` for the server's stdin without waiting: `Ok(false)` when the queue is
    /// full (the frame is dropped; the caller counts it), an error when stdin is closed or a
    /// write failed. For replies to server-to-client requests, which must never stop
    /// mcp-chaos from reading.
    pub fn try_send(&mut self, bytes: &[u8]) -> Result<bool, SendError> {
        let Some(writer) = self.stdin.as_ref() else {
            return Err(SendError::Closed("stdin was closed".into()));
        };
        writer.check()?;
        match writer.tx.try_send(Bytes::copy_from_slice(bytes)) {
            Ok(()) => Ok(true),
            Err(mpsc::error::TrySendError::Full(_)) => Ok(false),
            Err(mpsc::error::TrySendError::Closed(_)) => Err(writer
                .check()
                .err()
                .unwrap_or_else(|| SendError::Closed("the stdin writer ended".into()))),
        }
    }

    /// From now on, stdout lines that start with `prefix` are counted and dropped by the
    /// reader without being parsed (`None`: none are). For a flood of one notification: its
    /// lines then cost a comparison instead of a parse, so mcp-chaos keeps up with the pipe.
    pub fn skip_lines(&self, prefix: Option<Vec<u8>>) {
        if let Ok(mut p) = self.skip.prefix.lock() {
            *p = prefix;
        }
    }

    /// How many lines [`StdioTransport::skip_lines`] has dropped so far.
    pub fn skipped_lines(&self) -> u64 {
        self.skip.skipped.load(Ordering::Relaxed)
    }

    /// Closes the server's stdin (the first step of a shutdown, or a transport-chaos probe),
    /// once the frames already queued are written.
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// The next event, or `None` when nothing arrives before `until` or nothing more can arrive.
    /// At `until`, what the server had already written is read first (see `super::late`).
    pub async fn recv(&mut self, until: Instant) -> Option<TransportEvent> {
        match tokio::time::timeout_at(until.into(), self.events.recv()).await {
            Ok(event) => event.map(Read::event),
            Err(_) => super::late(&mut self.events).await.map(Read::event),
        }
    }

    /// An event that has already arrived.
    pub fn try_recv(&mut self) -> Option<TransportEvent> {
        self.events.try_recv().ok().map(Read::event)
    }

    /// The newest stderr output, lossily decoded.
    pub fn stderr_tail(&self) -> String {
        self.process
            .as_ref()
            .map(ServerProcess::log_tail)
            .unwrap_or_default()
    }

    /// How the server exited, if it has.
    pub fn has_exited(&self) -> Option<ExitKind> {
        self.process.as_ref().and_then(ServerProcess::has_exited)
    }

    /// Once the server has exited, waits until its stderr is read to the end, until at most
    /// `grace` after the exit (see [`ServerProcess::log_settled`]).
    pub async fn stderr_settled(&self, grace: Duration) {
        if let Some(process) = &self.process {
            process.log_settled(grace).await;
        }
    }

    /// Waits up to `within` for the server to exit; how it exited, or `None`.
    pub async fn wait_exit(&self, within: std::time::Duration) -> Option<ExitKind> {
        match &self.process {
            Some(process) => process.wait_exit(within).await,
            None => None,
        }
    }

    /// Shuts the server down: close stdin, wait, SIGTERM the process group, wait, SIGKILL the
    /// group (see [`ServerProcess::shutdown`]).
    pub async fn shutdown(mut self) -> ShutdownOutcome {
        // Close stdin now, queued frames or not, and stop reading stdout: a server blocked
        // writing to a full pipe (a flood) then sees EPIPE instead of waiting for SIGTERM.
        if let Some(writer) = self.stdin.take() {
            writer.task.abort();
        }
        self.reader.abort();
        match self.process.take() {
            Some(process) => process.shutdown().await,
            None => ShutdownOutcome::Killed,
        }
    }

    /// How long [`StdioTransport::shutdown`] waits for the server to exit after closing its
    /// stdin (`None` once the process was handed to a shutdown).
    pub fn eof_grace(&self) -> Option<Duration> {
        self.process.as_ref().map(ServerProcess::eof_grace)
    }

    /// Kills the server at once (SIGKILL on its process group, no stdin grace): see
    /// [`ServerProcess::kill`].
    pub async fn kill(mut self) -> ShutdownOutcome {
        if let Some(writer) = self.stdin.take() {
            writer.task.abort();
        }
        self.reader.abort();
        match self.process.take() {
            Some(process) => process.kill().await,
            None => ShutdownOutcome::Killed,
        }
    }
}

impl Drop for StdioTransport {
    fn drop(&mut self) {
        self.reader.abort();
        if let Some(writer) = &self.stdin {
            writer.task.abort();
        }
    }
}

/// The task that writes queued frames to the server's stdin, in order. Dropping the handle
/// closes the queue: the task writes what is queued, then drops stdin (EOF for the server).
#[derive(Debug)]
struct Writer {
    tx: mpsc::Sender<Bytes>,
    /// Why a write failed, once one did.
    failed: Arc<Mutex<Option<String>>>,
    task: JoinHandle<()>,
}

impl Writer {
    fn spawn(mut stdin: ChildStdin) -> Writer {
        let (tx, mut rx) = mpsc::channel::<Bytes>(WRITE_QUEUE_FRAMES);
        let failed = Arc::new(Mutex::new(None));
        let record = Arc::clone(&failed);
        let task = tokio::spawn(async move {
            while let Some(first) = rx.recv().await {
                // Frames queued meanwhile go out in the same write (in order), up to
                // WRITE_COALESCE_BYTES: requests submitted together cost one write here and
                // one read in the server, not one each. A frame written alone is not copied.
                let mut joined: Option<bytes::BytesMut> = None;
                while joined.as_ref().map_or(first.len(), bytes::BytesMut::len)
                    < WRITE_COALESCE_BYTES
                    && let Ok(more) = rx.try_recv()
                {
                    joined
                        .get_or_insert_with(|| bytes::BytesMut::from(&first[..]))
                        .extend_from_slice(&more);
                }
                let bytes = joined.map_or(first, bytes::BytesMut::freeze);
                let written = async {
                    stdin.write_all(&bytes).await?;
                    stdin.flush().await
                };
                if let Err(e) = written.await {
                    if let Ok(mut slot) = record.lock() {
                        *slot = Some(e.to_string());
                    }
                    return;
                }
            }
        });
        Writer { tx, failed, task }
    }

    /// The error of a write that failed, if one did.
    fn check(&self) -> Result<(), SendError> {
        match self.failed.lock().ok().and_then(|f| f.clone()) {
            Some(e) => Err(SendError::Closed(e)),
            None => Ok(()),
        }
    }
}

/// What the stdout reader sends: an event, or a line longer than [`PARSE_ON_RECEIPT_BYTES`]
/// that is not noise, to be parsed into its frame by the receiving side.
#[derive(Debug)]
enum Read {
    Event(TransportEvent),
    Unparsed {
        /// When the line was read completely.
        at: Instant,
        raw: Vec<u8>,
    },
}

impl From<TransportEvent> for Read {
    fn from(event: TransportEvent) -> Read {
        Read::Event(event)
    }
}

impl Read {
    /// The event (an unparsed line parsed into its frame).
    fn event(self) -> TransportEvent {
        match self {
            Read::Event(event) => event,
            Read::Unparsed { at, raw } => TransportEvent::Frame(Frame::read_at(raw, at)),
        }
    }
}

/// Splits a byte stream into newline-terminated frames of at most `max` bytes, sending each as
/// an event; an unterminated last line is sent as a frame when the stream ends.
async fn read_frames<R: AsyncRead + Unpin>(
    mut reader: R,
    tx: mpsc::Sender<Read>,
    max: usize,
    skip: Arc<SkipLines>,
) {
    let mut splitter = LineSplitter::new(max);
    splitter.skip = Some(skip);
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match reader.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        for event in splitter.push(&buf[..n]) {
            if tx.send(event).await.is_err() {
                return;
            }
        }
    }
    for event in splitter.finish() {
        let _ = tx.send(event).await;
    }
    let _ = tx
        .send(Read::Event(TransportEvent::Closed { at: Instant::now() }))
        .await;
}

/// How many noise lines in a row are passed on as frames (the sample a report quotes) before
/// the rest of the run is only counted ([`TransportEvent::Noise`]).
const NOISE_SAMPLE: usize = 16;

/// Incremental newline framing with a size limit, judged as bytes arrive (no I/O, so it is
/// unit-testable). Memory is bounded by `max` plus a small sample, whatever the input:
/// - a line that passes `max` bytes is reported at once ([`TransportEvent::Oversize`], even if
///   its newline never comes) and the rest of it is discarded as it arrives;
/// - after [`NOISE_SAMPLE`] noise lines in a row (not JSON, not UTF-8, blank, or a JSON
///   scalar), further noise lines are counted and reported as [`TransportEvent::Noise`] at the
///   end of each chunk, not kept.
#[derive(Debug)]
struct LineSplitter {
    max: usize,
    line: Vec<u8>,
    /// Whether the current line passed `max` and is being discarded (already reported).
    discarding: bool,
    /// Noise lines in a row so far.
    noise_run: usize,
    /// Noise lines counted (not kept) since the last [`TransportEvent::Noise`]: lines, bytes.
    dropped: (usize, usize),
    /// Lines counted and dropped unparsed (a notification flood the session recognised).
    skip: Option<Arc<SkipLines>>,
}

impl LineSplitter {
    fn new(max: usize) -> LineSplitter {
        LineSplitter {
            max,
            line: Vec::new(),
            discarding: false,
            noise_run: 0,
            dropped: (0, 0),
            skip: None,
        }
    }

    fn push(&mut self, mut chunk: &[u8]) -> Vec<Read> {
        let mut out = Vec::new();
        while !chunk.is_empty() {
            let newline = chunk.iter().position(|&b| b == b'\n');
            let (part, rest, complete) = match newline {
                Some(i) => (&chunk[..i], &chunk[i + 1..], true),
                None => (chunk, &chunk[chunk.len()..], false),
            };
            out.extend(self.take(part));
            if complete {
                self.end_line(&mut out);
            }
            chunk = rest;
        }
        self.flush_noise(&mut out);
        out
    }

    fn take(&mut self, part: &[u8]) -> Option<Read> {
        if self.discarding {
            return None;
        }
        if self.line.len() + part.len() <= self.max {
            self.line.extend_from_slice(part);
            return None;
        }
        let len = self.line.len() + part.len();
        let mut head = std::mem::take(&mut self.line);
        head.truncate(OVERSIZE_HEAD_BYTES);
        let room = OVERSIZE_HEAD_BYTES - head.len();
        head.extend_from_slice(&part[..part.len().min(room)]);
        self.discarding = true;
        Some(Read::Event(TransportEvent::Oversize {
            at: Instant::now(),
            len,
            head,
            what: super::Oversized::Line,
        }))
    }

    fn end_line(&mut self, out: &mut Vec<Read>) {
        if std::mem::take(&mut self.discarding) {
            // Reported when it passed the limit.
            return;
        }
        if self.skip.as_ref().is_some_and(|s| s.skips(&self.line)) {
            self.line.clear();
            return;
        }
        if self.line.len() > PARSE_ON_RECEIPT_BYTES
            && crate::wire::reads_as_noise(&self.line) == Some(false)
        {
            self.noise_run = 0;
            self.flush_noise(out);
            out.push(Read::Unparsed {
                at: Instant::now(),
                raw: std::mem::take(&mut self.line),
            });
            return;
        }
        let frame = Frame::new(std::mem::take(&mut self.line));
        if is_noise(&frame) {
            self.noise_run += 1;
            if self.noise_run > NOISE_SAMPLE {
                self.dropped.0 += 1;
                self.dropped.1 += frame.raw.len();
                return;
            }
        } else {
            self.noise_run = 0;
            self.flush_noise(out);
        }
        out.push(Read::Event(TransportEvent::Frame(frame)));
    }

    fn flush_noise(&mut self, out: &mut Vec<Read>) {
        if self.dropped.0 > 0 {
            let (lines, bytes) = std::mem::take(&mut self.dropped);
            out.push(Read::Event(TransportEvent::Noise {
                at: Instant::now(),
                lines,
                bytes,
            }));
        }
    }

    fn finish(&mut self) -> Vec<Read> {
        let mut out = Vec::new();
        if !self.discarding && !self.line.is_empty() {
            self.end_line(&mut out);
        }
        self.flush_noise(&mut out);
        out
    }
}

/// Whether a frame is noise on stdout rather than an attempt at a message: the same frames the
/// `stdout-not-protocol` invariant calls noise at the wire level (blank, not UTF-8, not JSON,
/// a JSON scalar).
fn is_noise(frame: &Frame) -> bool {
    matches!(
        frame.message,
        Err(crate::wire::WireError::Empty
            | crate::wire::WireError::NotUtf8 { .. }
            | crate::wire::WireError::NotJson { .. }
            | crate::wire::WireError::NotAnObject { .. })
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{Message, WireError};
    use nix::sys::signal::killpg;
    use nix::unistd::Pid;

    /// The events the reader would deliver (large lines parsed as on receipt).
    fn ev(reads: Vec<Read>) -> Vec<TransportEvent> {
        reads.into_iter().map(Read::event).collect()
    }

    fn frames(events: &[TransportEvent]) -> Vec<String> {
        events
            .iter()
            .map(|e| match e {
                TransportEvent::Frame(f) => String::from_utf8_lossy(&f.raw).into_owned(),
                TransportEvent::Oversize { len, .. } => format!("<oversize {len}>"),
                TransportEvent::Noise { lines, bytes, .. } => format!("<noise {lines} {bytes}>"),
                other => format!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn splits_lines_across_chunks() {
        let mut s = LineSplitter::new(100);
        let mut out = ev(s.push(b"{\"a\":1}\n{\"b\""));
        out.extend(ev(s.push(b":2}\n\n")));
        out.extend(ev(s.push(b"tail")));
        out.extend(ev(s.finish()));
        assert_eq!(frames(&out), ["{\"a\":1}", "{\"b\":2}", "", "tail"]);
    }

    #[test]
    fn a_large_message_is_parsed_on_receipt_and_large_noise_by_the_reader() {
        let big = format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{{"s":"{}"}}}}"#,
            "x".repeat(PARSE_ON_RECEIPT_BYTES)
        );
        let noise = "y".repeat(PARSE_ON_RECEIPT_BYTES + 1);
        let mut s = LineSplitter::new(1 << 20);
        let reads = s.push(format!("{big}\n{noise}\n").as_bytes());
        assert!(
            matches!(&reads[..], [Read::Unparsed { raw, .. }, Read::Event(TransportEvent::Frame(f))]
                if raw == big.as_bytes() && f.raw == noise.as_bytes()),
            "{reads:?}"
        );
        let events = ev(reads);
        let TransportEvent::Frame(f) = &events[0] else {
            panic!("{events:?}")
        };
        assert_eq!(f.message, Frame::new(big.into_bytes()).message);
        assert!(matches!(f.message, Ok(Message::Response(_))));
        let TransportEvent::Frame(f) = &events[1] else {
            panic!("{events:?}")
        };
        assert!(matches!(f.message, Err(WireError::NotJson { .. })));
    }

    #[test]
    fn oversize_is_reported_when_the_limit_is_passed_not_at_the_newline() {
        let mut s = LineSplitter::new(10);
        // 16 bytes with no newline: reported at once, with what was seen.
        let out = ev(s.push(b"0123456789ABCDEF"));
        assert_eq!(frames(&out), ["<oversize 16>"]);
        // The rest of the line is discarded silently; the next line is read normally.
        let out = ev(s.push(b"GHIJ\nok\n"));
        assert_eq!(frames(&out), ["ok"]);
        let mut s = LineSplitter::new(10);
        assert_eq!(frames(&ev(s.push(b"01234567890\n"))), ["<oversize 11>"]);
        // Exactly the limit is fine.
        assert_eq!(frames(&ev(s.push(b"0123456789\n"))), ["0123456789"]);
    }

    #[test]
    fn a_line_that_never_ends_costs_at_most_the_limit() {
        let max = 1 << 20;
        let mut s = LineSplitter::new(max);
        let chunk = vec![b'a'; 64 * 1024];
        let mut reported = Vec::new();
        for _ in 0..200 {
            reported.extend(ev(s.push(&chunk)));
            assert!(s.line.capacity() <= 2 * max, "{}", s.line.capacity());
        }
        reported.extend(ev(s.finish()));
        assert_eq!(
            frames(&reported),
            [format!("<oversize {}>", max + 64 * 1024)]
        );
        let TransportEvent::Oversize { head, .. } = &reported[0] else {
            unreachable!()
        };
        assert_eq!(head.len(), OVERSIZE_HEAD_BYTES);
    }

    #[test]
    fn noise_is_sampled_then_counted() {
        let mut s = LineSplitter::new(1000);
        let mut input = Vec::new();
        for i in 0..100 {
            input.extend_from_slice(format!("garbage {i}\n").as_bytes());
        }
        let out = ev(s.push(&input));
        assert_eq!(out.len(), NOISE_SAMPLE + 1, "{:?}", frames(&out));
        assert_eq!(frames(&out[..1]), ["garbage 0"]);
        let TransportEvent::Noise { lines, bytes, .. } = out[NOISE_SAMPLE] else {
            panic!("{:?}", out[NOISE_SAMPLE])
        };
        assert_eq!(lines, 100 - NOISE_SAMPLE);
        let kept: usize = (0..NOISE_SAMPLE)
            .map(|i| format!("garbage {i}").len())
            .sum();
        assert_eq!(bytes, input.len() - 100 - kept);
        // A message ends the run: it is passed on, and noise after it is sampled again.
        let out = ev(s.push(b"more\n{\"jsonrpc\":\"2.0\",\"method\":\"x\"}\nagain\n"));
        assert!(
            matches!(
                out[0],
                TransportEvent::Noise {
                    lines: 1,
                    bytes: 4,
                    ..
                }
            ),
            "{out:?}"
        );
        assert_eq!(
            frames(&out[1..]),
            ["{\"jsonrpc\":\"2.0\",\"method\":\"x\"}", "again"]
        );
    }

    #[tokio::test]
    async fn runs_a_process_and_kills_its_group() {
        // `sh` echoes one JSON-RPC line, one garbage line, and then starts a grandchild that
        // would outlive it; shutdown must kill the whole group.
        let mut config = StdioConfig::from_command_line(
            r#"sh -c 'echo "{\"jsonrpc\":\"2.0\",\"method\":\"x\"}"; echo garbage; echo oops >&2; sleep 30 & wait'"#,
        )
        .unwrap();
        config.eof_grace = Duration::from_millis(200);
        config.term_grace = Duration::from_millis(500);
        let mut t = StdioTransport::spawn(config).unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        let Some(TransportEvent::Frame(f)) = t.recv(deadline).await else {
            panic!("no frame")
        };
        assert!(matches!(f.message, Ok(Message::Notification(_))));
        let Some(TransportEvent::Frame(f)) = t.recv(deadline).await else {
            panic!("no frame")
        };
        assert!(matches!(f.message, Err(WireError::NotJson { .. })));
        let pgid = t.pid();
        let outcome = t.shutdown().await;
        assert!(
            matches!(
                outcome,
                ShutdownOutcome::Terminated(_) | ShutdownOutcome::Killed
            ),
            "{outcome:?}"
        );
        // Nothing is left in the group (allow the kernel a moment to reap the grandchild).
        let gone = async {
            while killpg(Pid::from_raw(pgid), None) != Err(nix::errno::Errno::ESRCH) {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        };
        tokio::time::timeout(Duration::from_secs(5), gone)
            .await
            .expect("the process group outlived shutdown");
    }

    #[tokio::test]
    async fn spawn_error_names_the_program() {
        let err = StdioTransport::spawn(StdioConfig::new("/no/such/program", vec![])).unwrap_err();
        assert!(err.to_string().contains("/no/such/program"), "{err}");
    }
}
