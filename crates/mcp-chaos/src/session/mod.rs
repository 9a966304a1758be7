//! The MCP session: lifecycle per protocol version, request ids, deadlines, and the client side
//! of the protocol (answering every server-to-client request at once, so that a server waiting
//! on us never looks like a hung server).
//!
//! Every send produces an [`Exchange`]: the frame, everything received while waiting, and how
//! the wait ended. Frames that expect no response (notifications, malformed frames) are
//! *fenced*: a `ping` follows them, and the window closes a grace period after the ping is
//! answered, so that a dropped frame costs one round trip rather than a full timeout.

mod exchange;
mod feature;
pub mod flood;
mod many;
mod pipeline;

use std::time::{Duration, Instant};

use serde_json::{Value, json};

pub use exchange::{
    Exchange, Expect, FaultContext, HttpProbe, LifecycleState, Outcome, Probe, Received,
    ReceivedItem, Retry, UpstreamHit, wire_kind,
};
pub use feature::FeatureProbe;
pub use many::{Action, Outgoing};

use crate::protocol::ProtocolVersion;
use crate::transport::http as transport_http;
use crate::transport::{ExitKind, ShutdownOutcome, Transport, TransportEvent};
use crate::wire::{self, Message, RequestId, ResponseId};

/// The client name sent in `clientInfo`.
pub const CLIENT_NAME: &str = "mcp-chaos";
/// The `_meta` key of the protocol version on every 2026-07-28 request.
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// The `_meta` key of the client capabilities on every 2026-07-28 request.
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// The `_meta` key of the client info (SHOULD) on 2026-07-28 requests.
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// The `_meta` key of the server info in 2026-07-28 results.
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// The text of the scripted reply to `sampling/createMessage`.
pub const SAMPLING_REPLY: &str = "mcp-chaos scripted sampling reply";

/// The fence grace, once a round trip is measured, is this many smoothed round trips of the
/// server (`ping` or `server/discover` answered, a fence answered)...
pub const GRACE_RTTS: u32 = 4;
/// ...but never less than this: a reply a server sends a little after its fence's answer (a
/// scheduler hiccup) still lands in its own exchange.
pub const GRACE_FLOOR: Duration = Duration::from_millis(20);
/// ...and never more than this (a server whose round trip is slow waits at most this long
/// per fenced frame).
pub const GRACE_CEILING: Duration = Duration::from_millis(1_000);

/// The fence grace for a server whose smoothed round trip is `rtt`: [`GRACE_RTTS`] round
/// trips within [`GRACE_FLOOR`]..[`GRACE_CEILING`], or `fallback` before any was measured.
pub fn scaled_grace(rtt: Option<Duration>, fallback: Duration) -> Duration {
    rtt.map_or(fallback, |rtt| {
        (rtt * GRACE_RTTS).clamp(GRACE_FLOOR, GRACE_CEILING)
    })
}

/// The smoothed round trip after one more `sample`: the first sample as is, then weight 1/4
/// to each new one (as TCP's SRTT does with 1/8, a little quicker to follow a server that
/// slows down).
pub fn smoothed_rtt(old: Option<Duration>, sample: Duration) -> Duration {
    match old {
        None => sample,
        Some(old) => (old * 3 + sample) / 4,
    }
}

/// How the client behaves.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// The protocol version requested in `initialize`.
    pub version: ProtocolVersion,
    /// Deadline for one request.
    pub timeout: Duration,
    /// How long to keep listening after a fence is answered, until a round trip has been
    /// measured (then [`Session::grace`] scales it with the server: see [`GRACE_RTTS`]).
    pub grace: Duration,
    /// Upper bound on a request's deadline when progress notifications keep extending it
    /// (`basic/lifecycle` §Timeouts: implementations MAY reset the timeout on progress and
    /// SHOULD enforce a maximum).
    pub max_timeout: Duration,
}

impl ClientConfig {
    /// A config with the given version and per-request timeout, a 200 ms grace and a maximum of
    /// three timeouts (a call that keeps reporting progress waits at most 30 s by default).
    pub fn new(version: ProtocolVersion, timeout: Duration) -> ClientConfig {
        ClientConfig {
            version,
            timeout,
            grace: Duration::from_millis(200),
            max_timeout: timeout * 3,
        }
    }
}

/// What the `initialize` handshake settled.
#[derive(Debug, Clone)]
pub struct Negotiated {
    /// The version the client asked for.
    pub requested: ProtocolVersion,
    /// The `protocolVersion` string the server answered.
    pub answered: String,
    /// The version the rest of the run is judged by: the answered one if mcp-chaos knows it,
    /// otherwise the requested one.
    pub version: ProtocolVersion,
    /// The server's `serverInfo` (an MCP `Implementation`, `{"name", "version", ...}`) as
    /// answered (from `_meta` for `server/discover`); `Null` when absent.
    pub server_info: Value,
    /// The server's `capabilities` object as answered (`basic/lifecycle` §Capability
    /// Negotiation); `Null` when absent.
    pub capabilities: Value,
}

/// Why a session could not be initialized (exit code 2).
#[derive(Debug, thiserror::Error)]
pub enum InitError {
    /// The server exited or closed stdout before answering `initialize`.
    #[error("the server exited before answering initialize ({status}){stderr}")]
    Exited {
        /// How it ended, e.g. `exit code 1`, `killed by signal 9` or `closed stdout`.
        status: String,
        /// Its stderr, formatted for the message.
        stderr: String,
    },
    /// No answer within the deadline.
    #[error("the server did not answer initialize within {timeout_ms} ms{detail}")]
    NoAnswer {
        /// The deadline, in ms.
        timeout_ms: u64,
        /// Stdout garbage and stderr, formatted for the message.
        detail: String,
    },
    /// The server answered `initialize` with an error.
    #[error("the server rejected initialize: error {code}: {message}")]
    Rejected {
        /// The JSON-RPC `error.code` of the answer (e.g. -32602).
        code: i64,
        /// The JSON-RPC `error.message` of the answer.
        message: String,
    },
    /// The answer is not a usable `InitializeResult`.
    #[error("the server's initialize result is unusable: {0}")]
    BadResult(String),
    /// The request could not be written.
    #[error("could not send initialize: {0}")]
    Send(String),
    /// The HTTP endpoint answered the handshake with a redirect (3xx), which mcp-chaos never
    /// follows (it could lead off loopback); the `http-status` finding reports it too.
    #[error(
        "the server answered initialize with HTTP {status}, a redirect to {location}; mcp-chaos does not follow redirects: point --http at the endpoint itself"
    )]
    Redirected {
        /// The HTTP status code (300–399).
        status: u16,
        /// The `Location` header, quoted as an excerpt, or "(no Location)".
        location: String,
    },
    /// The HTTP server answered the handshake with 401 or 403 (credentials missing or
    /// refused); says what the server asked for.
    #[error("{0}")]
    Unauthorized(crate::auth::Refusal),
}

/// A session with one server process (or connection).
#[derive(Debug)]
pub struct Session {
    transport: Transport,
    config: ClientConfig,
    next_id: i64,
    negotiated: Option<Negotiated>,
    /// Ids whose responses are no longer awaited (fences of exchanges that ended early,
    /// requests that timed out).
    stale: std::collections::HashMap<RequestId, usize>,
    /// A limit of mcp-chaos's own on how far progress may extend the next request's deadline
    /// (set by [`Session::call_tool_within`] for one call).
    wait_cap: Option<Duration>,
    /// Whether the server closed its stdout (stdio): remembered, so that every later
    /// exchange ends as [`Outcome::Gone`] at once instead of waiting out its deadline.
    stdout_closed: bool,
    /// Whether the server's exit was seen (stdio: its [`TransportEvent::Exited`] taken in by
    /// an exchange): remembered, so that every later exchange ends as [`Outcome::Gone`] at
    /// once instead of waiting for an answer, or for a stdout that another process may hold
    /// open. Not over HTTP, where the process that exits is the `--start` command, which may
    /// leave the server running.
    exit_seen: bool,
    /// The exchanges of the last handshake that failed (see [`Session::take_failed_handshake`]).
    failed_handshake: Vec<Exchange>,
    /// The rate of unsolicited messages, and what the current exchange keeps (see [`flood`]).
    flood: flood::FloodMeter,
    /// While the transport drops a flood's lines unparsed: since when the current window
    /// runs, and the transport's count of dropped lines at its start.
    skipping: Option<(Instant, u64)>,
    /// The transport's count of dropped lines already counted in an exchange.
    skipped_counted: u64,
    /// The smoothed round trip of the server's liveness answers (fences, liveness probes),
    /// once one was measured: the fence grace scales with it.
    rtt: Option<Duration>,
    /// Progress the recording dropped (past an exchange's keep budget, or in a flood): each
    /// string `progressToken` with when its latest such notification came, at most
    /// [`PROGRESS_HEARD_MAX`] tokens. Dropped from the record, progress still extends its
    /// request's deadline (see [`Session::take_progress_heard`]).
    progress_heard: Vec<(String, Instant)>,
}

/// How long the end of a stdio server is waited for once one side of it was seen (500 ms): after
/// its exit, its stdout and stderr closing (what it wrote just before exiting may still be in
/// the pipes); after its stdout closed, its exit (so that a finding says how it exited). Only
/// a process the server left behind holding a pipe open, or a server that closed its stdout
/// and lives on, makes the wait this long; otherwise the other side follows at once.
pub const EXIT_OUTPUT_GRACE: Duration = Duration::from_millis(500);

/// Tokens remembered in [`Session::take_progress_heard`]'s list (the oldest goes first).
pub const PROGRESS_HEARD_MAX: usize = 64;

impl Session {
    /// A session over `transport`; nothing is sent yet.
    pub fn new(transport: Transport, config: ClientConfig) -> Session {
        Session {
            transport,
            config,
            next_id: 1,
            negotiated: None,
            stale: std::collections::HashMap::new(),
            wait_cap: None,
            stdout_closed: false,
            exit_seen: false,
            failed_handshake: Vec::new(),
            flood: flood::FloodMeter::new(Instant::now()),
            skipping: None,
            skipped_counted: 0,
            rtt: None,
            progress_heard: Vec::new(),
        }
    }

    /// The smoothed round trip of the server (`ping` or `server/discover` answered), once one
    /// was measured.
    pub fn rtt(&self) -> Option<Duration> {
        self.rtt
    }

    /// How long an exchange keeps listening after its fence is answered: [`GRACE_RTTS`]
    /// smoothed round trips within [`GRACE_FLOOR`]..[`GRACE_CEILING`], or
    /// [`ClientConfig::grace`] until a round trip has been measured.
    pub fn grace(&self) -> Duration {
        scaled_grace(self.rtt, self.config.grace)
    }

    /// Folds one measured round trip into the smoothed one (see [`smoothed_rtt`]).
    fn sample_rtt(&mut self, sample: Duration) {
        self.rtt = Some(smoothed_rtt(self.rtt, sample));
    }

    /// What the session dropped (unsolicited messages not kept), throttled (server-to-client
    /// requests over the rate limit) or could not answer (write queue full), so far.
    pub fn dropped(&self) -> flood::Dropped {
        self.flood.totals()
    }

    /// Ends the current exchange's recording: what it dropped, as one item at the end.
    fn close_recording(&mut self, started: Instant, received: &mut Vec<Received>) {
        let skipped = self.transport.skipped_lines();
        self.flood
            .skipped(skipped.saturating_sub(self.skipped_counted));
        self.skipped_counted = skipped;
        // Lines are dropped unparsed while the flood lasts: once a whole window brings fewer
        // than half a flood, they are parsed (and judged) again.
        if let Some((since, base)) = self.skipping
            && since.elapsed() >= flood::FLOOD_WINDOW
        {
            if skipped - base < flood::NOTIFICATION_FLOOD / 2 {
                self.transport.skip_lines(None);
                self.skipping = None;
            } else {
                self.skipping = Some((Instant::now(), skipped));
            }
        }
        if let Some(dropped) = self.flood.end_exchange() {
            received.push(Received {
                at_ms: ms_since(started),
                item: ReceivedItem::Dropped(dropped),
            });
        }
    }

    /// The configuration the session was opened with (deadline, version, grace, ...), with
    /// any later [`Session::set_grace`] applied.
    pub fn config(&self) -> &ClientConfig {
        &self.config
    }

    /// Sets how long a fenced exchange keeps listening after its fence is answered (the wire
    /// phase shortens it: a frame's answer comes before the fence's on an in-order stream).
    pub fn set_grace(&mut self, grace: Duration) {
        self.config.grace = grace;
    }

    /// The version findings are judged by: the negotiated one once `initialize` succeeded,
    /// the requested one before.
    pub fn version(&self) -> ProtocolVersion {
        self.negotiated
            .as_ref()
            .map_or(self.config.version, |n| n.version)
    }

    /// What `initialize` settled, once it has succeeded.
    pub fn negotiated(&self) -> Option<&Negotiated> {
        self.negotiated.as_ref()
    }

    /// A fresh numeric request id: the session hands out 1, 2, 3, ... in order.
    pub fn next_id(&mut self) -> RequestId {
        let id = RequestId::from(self.next_id);
        self.next_id += 1;
        id
    }

    /// The newest stderr output of the server.
    pub fn stderr_tail(&self) -> String {
        self.transport.stderr_tail()
    }

    /// Whether the server process has exited.
    pub fn has_exited(&self) -> Option<ExitKind> {
        self.transport.has_exited()
    }

    /// Mutable access to the transport, for transport-level probes.
    pub fn transport_mut(&mut self) -> &mut Transport {
        &mut self.transport
    }

    /// Ends the session (see [`Transport::shutdown`]).
    pub async fn shutdown(self) -> ShutdownOutcome {
        self.transport.shutdown().await
    }

    /// Ends the session at once (see [`Transport::kill`]).
    pub async fn kill(self) -> ShutdownOutcome {
        self.transport.kill().await
    }

    /// Whether the session runs over stdio (its shutdown closes the server's stdin).
    pub fn is_stdio(&self) -> bool {
        matches!(self.transport, Transport::Stdio(_))
    }

    /// How long a graceful shutdown waits for a stdio server to exit after its stdin is
    /// closed; `None` over HTTP.
    pub fn eof_grace(&self) -> Option<Duration> {
        match &self.transport {
            Transport::Stdio(t) => t.eof_grace(),
            Transport::Http(_) => None,
        }
    }

    /// The client capabilities declared for `version`: roots (answered with an empty list),
    /// sampling (answered with a scripted reply) and, where the version has it, elicitation
    /// (answered with `decline`). Every one is really answered.
    pub fn client_capabilities(version: ProtocolVersion) -> Value {
        let mut caps = json!({"roots": {}, "sampling": {}});
        if version.rules().elicitation {
            caps["elicitation"] = json!({});
        }
        caps
    }

    /// Whether requests are stateless (2026-07-28): each carries the protocol version and the
    /// client capabilities in `_meta`, and there is no `initialize` or `ping`.
    pub fn stateless(&self) -> bool {
        !self.version().rules().handshake
    }

    /// `params` with the stateless `_meta` fields added (`basic/index` §`_meta`, 2026-07-28:
    /// `io.modelcontextprotocol/protocolVersion`, `.../clientCapabilities`, `.../clientInfo`),
    /// when the session is stateless; unchanged otherwise.
    pub fn with_meta(&self, params: Option<Value>) -> Option<Value> {
        if !self.stateless() {
            return params;
        }
        let mut params = match params {
            Some(Value::Object(map)) => Value::Object(map),
            Some(other) => return Some(other),
            None => json!({}),
        };
        let version = self.version();
        let meta = params
            .as_object_mut()
            .map(|p| p.entry("_meta").or_insert_with(|| json!({})));
        if let Some(Value::Object(meta)) = meta {
            meta.insert(META_PROTOCOL_VERSION.into(), json!(version.as_str()));
            meta.insert(
                META_CLIENT_CAPABILITIES.into(),
                Session::client_capabilities(version),
            );
            meta.insert(
                META_CLIENT_INFO.into(),
                json!({"name": CLIENT_NAME, "version": env!("CARGO_PKG_VERSION")}),
            );
        }
        Some(params)
    }

    /// The method used to check the server is alive: `ping`, or `server/discover` where `ping`
    /// no longer exists (2026-07-28).
    pub fn liveness_method(&self) -> &'static str {
        if self.version().rules().ping {
            "ping"
        } else {
            "server/discover"
        }
    }

    /// Sends a request for `method` with a fresh id and waits for its response. In a stateless
    /// session the `_meta` fields are added.
    pub async fn request(&mut self, probe: Probe, method: &str, params: Option<Value>) -> Exchange {
        let id = self.next_id();
        let params = self.with_meta(params);
        let frame = wire::to_line(&wire::request(&id, method, params));
        self.send(
            probe,
            frame,
            Expect::Response {
                id,
                or_null: false,
                fence: false,
            },
        )
        .await
    }

    /// Sends a notification, fenced.
    pub async fn notify(&mut self, probe: Probe, method: &str, params: Option<Value>) -> Exchange {
        let frame = wire::to_line(&wire::notification(method, params));
        self.send(probe, frame, Expect::Fenced).await
    }

    /// Calls a tool: `tools/call` with `name`, `arguments` and a progress token, so that a
    /// long-running tool that reports progress extends its own deadline.
    pub async fn call_tool(&mut self, probe: Probe, name: &str, arguments: &Value) -> Exchange {
        let id = self.next_id();
        let frame = self.call_frame(&id, name, arguments);
        self.send(
            probe,
            frame,
            Expect::Response {
                id,
                or_null: false,
                fence: false,
            },
        )
        .await
    }

    /// [`Session::call_tool`], with a call that reports progress waited for only up to
    /// `max_wait` after the request was sent (never past the client's maximum): the generated
    /// phase keeps a call from running past its tool's time budget. A silent call still gets
    /// the plain timeout before it counts as unanswered, whatever `max_wait` is. A call still
    /// reporting progress when that cap ends the wait is [`Outcome::Abandoned`], not
    /// [`Outcome::NoAnswer`]: it was not given the time the client otherwise allows, so it is
    /// not judged.
    pub async fn call_tool_within(
        &mut self,
        probe: Probe,
        name: &str,
        arguments: &Value,
        max_wait: Duration,
    ) -> Exchange {
        self.wait_cap = Some(max_wait);
        let exchange = self.call_tool(probe, name, arguments).await;
        self.wait_cap = None;
        exchange
    }

    /// Forgets a request id: a response to it that arrives later is dropped instead of being
    /// taken for a mismatched answer to another request.
    pub fn forget(&mut self, id: RequestId) {
        *self.stale.entry(id).or_insert(0) += 1;
    }

    /// The frame of a `tools/call` of `name` with `arguments` and request id `id` (with a
    /// progress token, and `_meta` in a stateless session), for sending without waiting.
    pub fn call_frame(&self, id: &RequestId, name: &str, arguments: &Value) -> Vec<u8> {
        if !self.stateless() {
            return call_line(id, name, arguments);
        }
        let params = self.with_meta(Some(json!({
            "name": name,
            "arguments": arguments,
            "_meta": {"progressToken": format!("mcp-chaos-{id}")},
        })));
        wire::to_line(&wire::request(id, "tools/call", params))
    }

    /// The frame of a liveness request (`ping` or `server/discover`) with request id `id`,
    /// with `params` (and `_meta` in a stateless session).
    pub fn liveness_frame(&self, id: &RequestId, params: Option<Value>) -> Vec<u8> {
        wire::to_line(&wire::request(
            id,
            self.liveness_method(),
            self.with_meta(params),
        ))
    }

    /// Sends the liveness probe (`ping`, or `server/discover` in 2026-07-28) and waits for its
    /// answer.
    pub async fn liveness(&mut self) -> Exchange {
        let method = self.liveness_method();
        self.request(Probe::Liveness, method, None).await
    }

    /// Sends `bytes` as they are (a frame of any shape, newline included) and waits as `expect`
    /// says. This is the one place where frames go out and exchanges are recorded.
    pub async fn send(&mut self, probe: Probe, bytes: Vec<u8>, expect: Expect) -> Exchange {
        self.send_with_headers(probe, bytes, expect, Vec::new())
            .await
    }

    /// [`Session::send`] with some HTTP headers overridden for this frame (ignored over stdio).
    pub async fn send_with_headers(
        &mut self,
        probe: Probe,
        bytes: Vec<u8>,
        expect: Expect,
        overrides: transport_http::HeaderOverrides,
    ) -> Exchange {
        let mut received = Vec::new();
        let started = Instant::now();
        self.flood.start_exchange();
        // Anything that arrived since the last exchange closed (late replies, log
        // notifications, a crash) is recorded first, at time 0; at most what the event queue
        // holds, so that a flood cannot keep the exchange from starting.
        for _ in 0..LEFTOVERS_MAX {
            let Some(event) = self.transport.try_recv() else {
                break;
            };
            if matches!(event, TransportEvent::Http(_)) {
                continue;
            }
            if let Some(item) = self.absorb(event).await {
                received.push(Received { at_ms: 0, item });
            }
        }
        let preceding = received.len();
        let timeout_ms = u64::try_from(self.config.timeout.as_millis()).unwrap_or(u64::MAX);
        let make = |received, outcome, sent| Exchange {
            probe: probe.clone(),
            sent,
            expect: expect.clone(),
            received,
            preceding,
            outcome,
            elapsed: started.elapsed(),
            timeout_ms,
            fault: None,
        };
        self.flood.client_sent(Instant::now());
        let receipt = self
            .transport
            .send_with(&bytes, self.config.timeout, overrides)
            .await;
        if let Err(e) = receipt {
            // The server is most likely gone: collect how it ended, briefly (only what is
            // queued when its exit has already been seen).
            let until = Instant::now() + Duration::from_millis(500);
            let exited_already = self.transport.has_exited().is_some();
            loop {
                let event = if exited_already {
                    self.transport.try_recv()
                } else {
                    self.transport.recv(until).await
                };
                let Some(event) = event else { break };
                let exited = matches!(event, TransportEvent::Exited { .. });
                if let Some(item) = self.absorb(event).await {
                    received.push(Received {
                        at_ms: ms_since(started),
                        item,
                    });
                }
                if exited {
                    break;
                }
            }
            self.stderr_settled().await;
            self.close_recording(started, &mut received);
            return make(received, Outcome::SendFailed(e.to_string()), bytes);
        }
        let own_post = receipt.ok().and_then(|r| r.post);
        // Over HTTP the end of the request's own exchange ends the wait; only a shared stream
        // (stdio) needs a fence.
        let fence = match (&expect, own_post) {
            (_, Some(_)) => None,
            (Expect::Fenced | Expect::Response { fence: true, .. }, None) => {
                match self.send_fence().await {
                    Ok(id) => Some(id),
                    Err(e) => {
                        self.stderr_settled().await;
                        self.close_recording(started, &mut received);
                        return make(received, Outcome::SendFailed(e), bytes);
                    }
                }
            }
            (Expect::Response { fence: false, .. }, None) => None,
        };
        let outcome = self
            .wait(&expect, fence, own_post, started, &mut received)
            .await;
        if matches!(probe, Probe::Liveness) && matches!(outcome, Outcome::Answered { .. }) {
            self.sample_rtt(started.elapsed());
        }
        self.stderr_settled().await;
        self.close_recording(started, &mut received);
        make(received, outcome, bytes)
    }

    /// Once a stdio server has exited, waits for its stderr to be read to the end (until at
    /// most [`EXIT_OUTPUT_GRACE`] after the exit), so that the tail a `server-died` finding
    /// quotes holds its last words; at once otherwise. Every exchange ends with it.
    async fn stderr_settled(&self) {
        self.transport.stderr_settled(EXIT_OUTPUT_GRACE).await;
    }

    async fn send_fence(&mut self) -> Result<RequestId, String> {
        let id = self.next_id();
        let method = self.liveness_method();
        let params = self.with_meta(None);
        let frame = wire::to_line(&wire::request(&id, method, params));
        self.flood.client_sent(Instant::now());
        self.transport
            .send(&frame, self.config.timeout)
            .await
            .map_err(|e| e.to_string())?;
        Ok(id)
    }

    async fn wait(
        &mut self,
        expect: &Expect,
        mut fence: Option<RequestId>,
        own_post: Option<u64>,
        started: Instant,
        received: &mut Vec<Received>,
    ) -> Outcome {
        let client_max = self.config.max_timeout.max(self.config.timeout);
        let hard_deadline = started + self.wait_cap.map_or(client_max, |cap| cap.min(client_max));
        let capped = hard_deadline < started + client_max;
        // Set when progress pushed the deadline to a cap below the client's maximum.
        let mut at_cap = false;
        let mut deadline = started + self.config.timeout;
        let mut fenced_at: Option<Instant> = None;
        // When the fence went out (just before this wait began), so that its answer measures
        // the server's round trip; only after a frame that asks for no work (a notification,
        // a malformed frame): a fence behind a request would measure the request.
        let mut fence_sent =
            (fence.is_some() && matches!(expect, Expect::Fenced)).then(Instant::now);
        let mut exited: Option<ExitKind> = None;
        // A stdout closed in an earlier exchange stays closed: nothing can answer this one.
        let mut closed = self.stdout_closed;
        // Nor can a server whose exit was seen before this wait began (in an earlier exchange,
        // or among this one's leftovers); its last output was read then or is queued now, so
        // there is no stdout to wait for either (another process may hold it open).
        let exited_before = self.exit_seen;
        let mut gone_at: Option<Instant> = (closed || exited_before).then(Instant::now);
        // Events taken without waiting once gone, for the cap below.
        let mut drained = 0usize;
        let progress_token = match expect {
            Expect::Response { id, .. } => Some(format!("mcp-chaos-{id}")),
            Expect::Fenced => None,
        };
        // The answer, when it came before the fence's response (which is still awaited, so
        // that it cannot land in the next exchange).
        let mut answered: Option<usize> = None;
        let outcome = loop {
            let until = match (fenced_at, gone_at) {
                (_, Some(t)) => t + EXIT_OUTPUT_GRACE,
                (Some(t), None) => t + self.grace(),
                (None, None) => deadline,
            };
            // Once the output is closed and the process has exited (or it had exited before
            // the wait), nothing more can come but what is already queued: no waiting. From an
            // output still open (a process the server left behind holds it), at most a
            // queue's worth.
            let settled = gone_at.is_some()
                && (closed || exited_before)
                && self.transport.has_exited().is_some();
            // A steady stream of events (a flood) must not keep the window open past its end.
            let event = if settled {
                drained += 1;
                if closed || drained <= LEFTOVERS_MAX {
                    self.transport.try_recv()
                } else {
                    None
                }
            } else if Instant::now() < until {
                self.transport.recv(until).await
            } else {
                None
            };
            let Some(event) = event else {
                if let Some(index) = answered {
                    break Outcome::Answered { index };
                }
                if gone_at.is_some() {
                    break Outcome::Gone(exited.or_else(|| self.transport.has_exited()));
                }
                if fenced_at.is_some() {
                    break match expect {
                        Expect::Fenced => Outcome::Fenced,
                        // Fenced only because a mismatched response came: still unanswered.
                        Expect::Response { .. } => Outcome::NoAnswer,
                    };
                }
                if Instant::now() >= until {
                    break if at_cap {
                        Outcome::Abandoned
                    } else {
                        Outcome::NoAnswer
                    };
                }
                // The event stream ended without an exit event yet; poll briefly.
                tokio::time::sleep(Duration::from_millis(10)).await;
                if let Some(status) = self.transport.has_exited() {
                    received.push(Received {
                        at_ms: ms_since(started),
                        item: ReceivedItem::Exited(status.clone()),
                    });
                    break Outcome::Gone(Some(status));
                }
                continue;
            };
            let at_ms = ms_since(started);
            // Over HTTP, the end of the probe's own exchange closes the window; other HTTP
            // exchanges (replies to server requests) are not part of it.
            if let TransportEvent::Http(info) = &event {
                if Some(info.post) != own_post {
                    continue;
                }
                let failed = info.status.is_none();
                let error = info.error.clone().unwrap_or_default();
                received.push(Received {
                    at_ms,
                    item: ReceivedItem::Http(info.clone()),
                });
                break match expect {
                    _ if failed => Outcome::SendFailed(error),
                    Expect::Fenced => Outcome::Fenced,
                    Expect::Response { .. } => Outcome::NoAnswer,
                };
            }
            // The fence's own response closes the window; it is not part of the exchange.
            if let (Some(fence_id), TransportEvent::Frame(f)) = (&fence, &event)
                && let Ok(Message::Response(r)) = &f.message
                && r.id().id() == Some(fence_id)
            {
                let now = Instant::now();
                if let Some(sent) = fence_sent {
                    self.sample_rtt(now.saturating_duration_since(sent));
                }
                fenced_at = Some(now);
                fence = None;
                if let Some(index) = answered {
                    break Outcome::Answered { index };
                }
                continue;
            }
            let Some(item) = self.absorb(event).await else {
                // Progress past the keep budget is not recorded, but still extends the wait.
                if let Some(token) = &progress_token
                    && let Some(at) = self.progress_heard_for(token)
                {
                    (deadline, at_cap) =
                        progressed(at, self.config.timeout, deadline, hard_deadline, capped);
                }
                continue;
            };
            let index = received.len();
            let answers = match (&item, expect) {
                (
                    ReceivedItem::Frame(f),
                    Expect::Response {
                        id: want, or_null, ..
                    },
                ) => match &f.message {
                    Ok(Message::Response(r)) => match r.id() {
                        ResponseId::Id(id) => id == want,
                        ResponseId::Null | ResponseId::Absent => *or_null && r.is_error(),
                    },
                    _ => false,
                },
                _ => false,
            };
            if let (ReceivedItem::Frame(f), Some(token)) = (&item, &progress_token)
                && is_progress_for(f, token)
            {
                (deadline, at_cap) = progressed(
                    Instant::now(),
                    self.config.timeout,
                    deadline,
                    hard_deadline,
                    capped,
                );
            }
            let mismatched = matches!(expect, Expect::Response { .. })
                && !answers
                && fence.is_none()
                && fenced_at.is_none()
                && matches!(&item, ReceivedItem::Frame(f) if matches!(&f.message, Ok(Message::Response(_))));
            match &item {
                ReceivedItem::Exited(status) => {
                    exited = Some(status.clone());
                    gone_at.get_or_insert_with(Instant::now);
                }
                ReceivedItem::Closed => {
                    closed = true;
                    gone_at.get_or_insert_with(Instant::now);
                }
                _ => {}
            }
            received.push(Received { at_ms, item });
            if answers {
                if let Some(post) = own_post {
                    // Over HTTP, stay for the end of the request's own exchange (its status,
                    // content type and SSE framing are judged too), briefly.
                    self.await_http(post, started, received).await;
                    break Outcome::Answered { index };
                }
                if fence.is_none() {
                    break Outcome::Answered { index };
                }
                answered.get_or_insert(index);
                continue;
            }
            if exited.is_some() && closed {
                break Outcome::Gone(exited);
            }
            if mismatched {
                // A response that answers nothing we sent: most likely our answer with a wrong
                // id. Fence, so that the exchange ends after one round trip instead of the
                // full deadline; a correct answer arriving before the fence still counts.
                if let Ok(id) = self.send_fence().await {
                    fence = Some(id);
                    fence_sent = None;
                }
            }
        };
        // Responses that may still come for this exchange (its fence, or a request that timed
        // out) are dropped when they arrive later, instead of being blamed on another probe.
        if let Some(id) = fence {
            self.forget(id);
        }
        if let (Outcome::NoAnswer | Outcome::Abandoned, Expect::Response { id, .. }) =
            (&outcome, expect)
        {
            self.forget(id.clone());
        }
        outcome
    }

    /// Reads events (answering server requests, recording frames) until the HTTP exchange
    /// `post` ends or one second passes; records its [`crate::transport::HttpInfo`].
    async fn await_http(&mut self, post: u64, started: Instant, received: &mut Vec<Received>) {
        let until = Instant::now() + Duration::from_secs(1);
        while Instant::now() < until
            && let Some(event) = self.transport.recv(until).await
        {
            let at_ms = ms_since(started);
            if let TransportEvent::Http(info) = &event {
                if info.post == post {
                    received.push(Received {
                        at_ms,
                        item: ReceivedItem::Http(info.clone()),
                    });
                    return;
                }
                continue;
            }
            if let Some(item) = self.absorb(event).await {
                received.push(Received { at_ms, item });
            }
        }
    }

    /// Remembers that progress for `token` came at `at` though it was not recorded.
    fn heard_progress(&mut self, token: &str, at: Instant) {
        if let Some(entry) = self.progress_heard.iter_mut().find(|(t, _)| t == token) {
            entry.1 = at;
            return;
        }
        if self.progress_heard.len() >= PROGRESS_HEARD_MAX {
            self.progress_heard.remove(0);
        }
        self.progress_heard.push((token.to_owned(), at));
    }

    /// When the latest unrecorded progress for `token` came, if any came since the last ask
    /// (the entry is taken).
    fn progress_heard_for(&mut self, token: &str) -> Option<Instant> {
        let i = self.progress_heard.iter().position(|(t, _)| t == token)?;
        Some(self.progress_heard.swap_remove(i).1)
    }

    /// The progress notifications left out of the record since the last call (past an
    /// exchange's keep budget of [`flood::KEPT_PER_EXCHANGE`] unsolicited messages, or in a
    /// flood): each string `progressToken` with when its latest one came. The case scheduler
    /// extends the deadlines of its requests in flight by them, as by recorded progress: a
    /// call that keeps reporting progress while another floods is not cut as unanswered.
    pub fn take_progress_heard(&mut self) -> Vec<(String, Instant)> {
        std::mem::take(&mut self.progress_heard)
    }

    /// Turns a transport event into a received item, answering server-to-client requests on
    /// the way. Returns `None` for nothing worth recording.
    pub(crate) async fn absorb(&mut self, event: TransportEvent) -> Option<ReceivedItem> {
        match event {
            TransportEvent::Frame(frame)
                if matches!(&frame.message, Ok(Message::Response(r))
                    if r.id().id().is_some_and(|id| self.stale.contains_key(id))) =>
            {
                if let Ok(Message::Response(r)) = &frame.message
                    && let Some(id) = r.id().id()
                    && let Some(n) = self.stale.get_mut(id)
                {
                    *n -= 1;
                    if *n == 0 {
                        self.stale.remove(id);
                    }
                }
                None
            }
            TransportEvent::Frame(frame) => {
                let now = Instant::now();
                let (keep, flood) = match &frame.message {
                    Ok(Message::Request(request)) => {
                        let (answer, keep, flood) =
                            self.flood.request(request.method(), &frame.raw, now);
                        // Queued without waiting: mcp-chaos never stops reading to answer. A
                        // failed write means the server is gone; the exit event will say so.
                        // Over the window's budget, a request is left unanswered (counted):
                        // answering a flood only feeds it.
                        if answer == flood::Answer::Normally {
                            let reply = answer_server_request(request.id(), request.method());
                            if let Ok(false) = self.transport.try_send(&wire::to_line(&reply)) {
                                self.flood.unanswered();
                            }
                        }
                        (keep, flood)
                    }
                    Ok(Message::Notification(n)) => {
                        let progress = (n.method() == "notifications/progress")
                            .then(|| n.params().and_then(|p| p.get("progressToken")))
                            .flatten();
                        let token = progress.map(Value::to_string);
                        let (keep, flood) =
                            self.flood
                                .notification(n.method(), token.as_deref(), &frame.raw, now);
                        if (!keep || flood.is_some())
                            && let Some(token) = progress.and_then(Value::as_str)
                        {
                            self.heard_progress(token, now);
                        }
                        // Progress lines are never dropped unparsed: other calls in flight
                        // need theirs, which extend their deadlines.
                        if self.skipping.is_none()
                            && n.method() != "notifications/progress"
                            && self.flood.notifications_flooded()
                            && let Some(prefix) = flood::line_prefix(&frame.raw, n.method())
                        {
                            self.transport.skip_lines(Some(prefix));
                            self.skipping = Some((now, self.transport.skipped_lines()));
                        }
                        (keep, flood)
                    }
                    _ => (true, None),
                };
                match (flood, keep) {
                    (Some(flood), keep) => {
                        // The flood item takes the message's place: it is counted as dropped.
                        if keep {
                            self.flood.unkeep(flood.kind);
                        }
                        Some(ReceivedItem::Flood(flood))
                    }
                    (None, true) => Some(ReceivedItem::Frame(frame)),
                    (None, false) => None,
                }
            }
            TransportEvent::Oversize {
                len, head, what, ..
            } => Some(ReceivedItem::Oversize { len, head, what }),
            TransportEvent::Noise { lines, bytes, .. } => {
                Some(ReceivedItem::Noise { lines, bytes })
            }
            TransportEvent::Closed { .. } => {
                self.stdout_closed = true;
                Some(ReceivedItem::Closed)
            }
            TransportEvent::Exited { status, .. } => {
                self.exit_seen |= self.is_stdio();
                Some(ReceivedItem::Exited(status))
            }
            TransportEvent::Http(info) => Some(ReceivedItem::Http(info)),
        }
    }

    /// Over HTTP (2025-03-26 … 2025-11-25), opens the standalone server-to-client stream, so
    /// that a server request sent there (`roots/list`, sampling) is answered like any other.
    /// Does nothing on other transports or versions.
    pub fn open_server_stream(&mut self) {
        if self.version().rules().http_sessions
            && let Some(http) = self.transport.http()
        {
            http.open_stream();
        }
    }

    /// Runs an HTTP-level probe (see [`HttpProbe`]) directly on the HTTP transport and records
    /// it as an exchange. `None` on a transport that is not HTTP.
    pub async fn http_probe(&mut self, what: HttpProbe) -> Option<Exchange> {
        let started = Instant::now();
        let id = self.next_id();
        let liveness = self.liveness_method();
        let ping = wire::to_line(&wire::request(&id, liveness, self.with_meta(None)));
        let session = self.transport.http().and_then(|h| h.session_id());
        let (method, body, overrides): (&str, Option<Vec<u8>>, transport_http::HeaderOverrides) =
            match what {
                HttpProbe::BadVersionHeader => (
                    "POST",
                    Some(ping),
                    vec![("mcp-protocol-version".into(), Some("1999-01-01".into()))],
                ),
                HttpProbe::UnknownSession => (
                    "POST",
                    Some(ping),
                    vec![(
                        "mcp-session-id".into(),
                        Some("mcp-chaos-unknown-session-4f1c".into()),
                    )],
                ),
                HttpProbe::NoSession => ("POST", Some(ping), vec![("mcp-session-id".into(), None)]),
                HttpProbe::ForeignOrigin => (
                    "POST",
                    Some(ping),
                    vec![("origin".into(), Some("http://evil.example".into()))],
                ),
                HttpProbe::Get => ("GET", None, Vec::new()),
                HttpProbe::Delete => ("DELETE", None, Vec::new()),
                HttpProbe::DeletedSession => ("POST", Some(ping), Vec::new()),
                HttpProbe::MissingMethodHeader => {
                    let list =
                        wire::to_line(&wire::request(&id, "tools/list", self.with_meta(None)));
                    ("POST", Some(list), vec![("mcp-method".into(), None)])
                }
            };
        let timeout = self.config.timeout;
        let http = self.transport.http()?;
        let (info, frames) = http.probe(method, body.clone(), overrides, timeout).await;
        if what == HttpProbe::Delete && info.status.is_some_and(|s| (200..300).contains(&s)) {
            // The session is over on the server; keep its id for the DeletedSession probe.
            http.set_session_id(session);
        }
        let sent = body.unwrap_or_else(|| format!("{method} (no body)").into_bytes());
        let mut received: Vec<Received> = frames
            .into_iter()
            .map(|f| Received {
                at_ms: ms_since(started),
                item: ReceivedItem::Frame(f),
            })
            .collect();
        let answer = received.iter().position(|r| {
            matches!(&r.item, ReceivedItem::Frame(f)
                if matches!(&f.message, Ok(Message::Response(resp))
                    if resp.id().id() == Some(&id) || (resp.is_error() && resp.id().id().is_none())))
        });
        let failed = info
            .status
            .is_none()
            .then(|| info.error.clone().unwrap_or_default());
        received.push(Received {
            at_ms: ms_since(started),
            item: ReceivedItem::Http(info),
        });
        let outcome = match (answer, failed) {
            (Some(index), _) => Outcome::Answered { index },
            (None, Some(error)) => Outcome::SendFailed(error),
            (None, None) => Outcome::NoAnswer,
        };
        Some(Exchange {
            probe: Probe::Http { what },
            sent,
            expect: Expect::Response {
                id,
                or_null: true,
                fence: false,
            },
            received,
            preceding: 0,
            outcome,
            elapsed: started.elapsed(),
            timeout_ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
            fault: None,
        })
    }

    /// Performs the `initialize` handshake for the requested version (`basic/lifecycle`
    /// §Initialization): `initialize`, then `notifications/initialized`. Returns both
    /// exchanges for the oracle.
    ///
    /// For the stateless 2026-07-28 there is no handshake: `server/discover` is sent instead
    /// (`basic/lifecycle`, 2026-07-28), and every later request carries `_meta`.
    ///
    /// # Errors
    /// [`InitError`] when the server exits or does not answer in time, rejects the handshake
    /// with a JSON-RPC error, answers an unusable result, redirects or refuses (HTTP 3xx, 401,
    /// 403), or the request cannot be written.
    pub async fn initialize(&mut self) -> Result<(Vec<Exchange>, Negotiated), InitError> {
        let requested = self.config.version;
        if !requested.rules().handshake {
            // The stateless headers go out with server/discover itself.
            self.transport.set_protocol_version(requested);
            let mut ex = self.discover().await;
            self.await_exit_status(&mut ex).await;
            let negotiated = match read_discover(&ex, requested, self.stderr_tail()) {
                Ok(negotiated) => negotiated,
                Err(e) => {
                    self.failed_handshake.push(ex);
                    return Err(self.named(e));
                }
            };
            self.negotiated = Some(negotiated.clone());
            self.transport.set_protocol_version(negotiated.version);
            return Ok((vec![ex], negotiated));
        }
        let mut ex = self.initialize_with(requested.as_str()).await;
        self.await_exit_status(&mut ex).await;
        let negotiated = match read_initialize(&ex, requested, self.stderr_tail()) {
            Ok(negotiated) => negotiated,
            Err(e) => {
                self.failed_handshake.push(ex);
                return Err(self.named(e));
            }
        };
        self.negotiated = Some(negotiated.clone());
        self.transport.set_protocol_version(negotiated.version);
        let initialized = self
            .notify(Probe::Initialized, "notifications/initialized", None)
            .await;
        Ok((vec![ex, initialized], negotiated))
    }

    /// A handshake whose request could not be written, or whose server closed its stdout,
    /// before the server's exit was seen: waits up to 1 s for the exit, so that the error
    /// says how the server exited (its exit code) rather than only "broken pipe" or "closed
    /// stdout", whichever the race between the pipe and the exit status gave.
    async fn await_exit_status(&mut self, ex: &mut Exchange) {
        let unseen = ex.exited().is_none()
            && matches!(ex.outcome, Outcome::SendFailed(_) | Outcome::Gone(None));
        if unseen && let Some(status) = self.transport.wait_exit(Duration::from_secs(1)).await {
            ex.outcome = Outcome::Gone(Some(status));
        }
    }

    /// The exchanges of the handshake (`initialize` or `server/discover`) whose failure
    /// [`Session::initialize`] returned, for the report of a run that could not start; empty
    /// after a successful handshake.
    pub fn take_failed_handshake(&mut self) -> Vec<Exchange> {
        std::mem::take(&mut self.failed_handshake)
    }

    /// `e`, with the names of the extra headers sent when it is a 401/403 refusal.
    fn named(&mut self, e: InitError) -> InitError {
        match e {
            InitError::Unauthorized(mut refusal) => {
                if let Some(http) = self.transport.http() {
                    refusal.sent = http.extra_header_names();
                }
                InitError::Unauthorized(refusal)
            }
            other => other,
        }
    }

    /// Sends `server/discover` (2026-07-28) with the stateless `_meta` fields of the requested
    /// version.
    pub async fn discover(&mut self) -> Exchange {
        let id = self.next_id();
        let version = self.config.version;
        let params = json!({"_meta": {
            META_PROTOCOL_VERSION: version.as_str(),
            META_CLIENT_CAPABILITIES: Session::client_capabilities(version),
            META_CLIENT_INFO: {"name": CLIENT_NAME, "version": env!("CARGO_PKG_VERSION")},
        }});
        let frame = wire::to_line(&wire::request(&id, "server/discover", Some(params)));
        self.send(
            Probe::Discover,
            frame,
            Expect::Response {
                id,
                or_null: false,
                fence: false,
            },
        )
        .await
    }

    /// Sends `initialize` asking for `version` (any string, for negotiation probes).
    pub async fn initialize_with(&mut self, version: &str) -> Exchange {
        let known = version.parse::<ProtocolVersion>().ok();
        let caps = Session::client_capabilities(known.unwrap_or(self.config.version));
        let params = json!({
            "protocolVersion": version,
            "capabilities": caps,
            "clientInfo": {"name": CLIENT_NAME, "version": env!("CARGO_PKG_VERSION")},
        });
        let probe = if known.is_some() {
            Probe::Initialize {
                requested: version.to_owned(),
            }
        } else {
            Probe::VersionNegotiation {
                requested: version.to_owned(),
            }
        };
        self.request(probe, "initialize", Some(params)).await
    }

    /// Lists every tool, following `nextCursor` (`server/utilities/pagination`). Stops at a
    /// repeated cursor or after 100 pages. Returns the page exchanges and the tools found.
    pub async fn list_tools(&mut self) -> (Vec<Exchange>, Vec<Value>) {
        let mut exchanges = Vec::new();
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        let mut seen = std::collections::HashSet::new();
        for _ in 0..100 {
            let params = cursor.as_ref().map(|c| json!({"cursor": c}));
            let ex = self.request(Probe::ToolsList, "tools/list", params).await;
            // The tools are copied out of the page, not the whole result first (a page of
            // thousands of tools takes tens of MiB once parsed).
            let Some(result) = ex.response().and_then(|r| r.result()) else {
                exchanges.push(ex);
                break;
            };
            if let Some(page) = result.get("tools").and_then(Value::as_array) {
                tools.extend(page.iter().filter(|t| t.is_object()).cloned());
            }
            let next = result
                .get("nextCursor")
                .and_then(Value::as_str)
                .map(str::to_owned);
            exchanges.push(ex);
            match next {
                Some(next) if seen.insert(next.clone()) => cursor = Some(next),
                _ => break,
            }
        }
        (exchanges, tools)
    }
}

/// The most leftover events read before an exchange's frame is sent (the stdio event queue's
/// capacity): a flood cannot keep an exchange from starting.
const LEFTOVERS_MAX: usize = 1024;

fn ms_since(t: Instant) -> u64 {
    u64::try_from(t.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// A request's deadline after progress for it came at `at`: one `timeout` after it, never
/// earlier than `deadline` was, at most `hard` (the request's cap); and whether it now sits
/// at a cap of mcp-chaos's own (`capped`: `hard` is below the client's maximum), where a call
/// still running is given up on rather than called unanswered. Returns `(deadline, at_cap)`.
///
/// A cap may sit before the plain timeout (a tool's time budget nearly spent): a silent
/// request still gets its whole `timeout` before it counts as unanswered, but one that reports
/// progress is being worked on, and is given up on at the cap (`basic/utilities/progress`:
/// progress may reset a timeout; `basic/lifecycle` §Timeouts: a maximum is enforced anyway).
pub fn progressed(
    at: Instant,
    timeout: Duration,
    deadline: Instant,
    hard: Instant,
    capped: bool,
) -> (Instant, bool) {
    let extended = at + timeout;
    (extended.max(deadline).min(hard), capped && extended >= hard)
}

/// Whether `frame` is a `notifications/progress` for the progress token `token` (mcp-chaos
/// gives each request the token `mcp-chaos-<id>`).
pub fn is_progress_for(frame: &crate::transport::Frame, token: &str) -> bool {
    matches!(&frame.message, Ok(Message::Notification(n))
        if n.method() == "notifications/progress"
            && n.params().and_then(|p| p.get("progressToken")).and_then(Value::as_str) == Some(token))
}

/// The line (newline included) of a `tools/call` of `name` with `arguments`, request id `id`
/// and the progress token `mcp-chaos-{id}`, without any other `_meta`: byte for byte what
/// `wire::to_line(&wire::request(id, "tools/call", Some(json!({"name": .., "arguments": ..,
/// "_meta": {"progressToken": ..}}))))` gives, written directly (the arguments are
/// serialised where they are instead of being copied into a new value first).
fn call_line(id: &RequestId, name: &str, arguments: &Value) -> Vec<u8> {
    use std::io::Write;
    let token = format!("mcp-chaos-{id}");
    let mut out = Vec::with_capacity(128 + name.len() + token.len());
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    // Writing into a vector cannot fail, and neither can serialising a `Value` or a string.
    let _ = match id {
        RequestId::Number(wire::IdNumber::Signed(n)) => write!(out, "{n}"),
        RequestId::Number(wire::IdNumber::Unsigned(n)) => write!(out, "{n}"),
        RequestId::String(s) => serde_json::to_writer(&mut out, s).map_err(std::io::Error::from),
    };
    out.extend_from_slice(br#","method":"tools/call","params":{"name":"#);
    let _ = serde_json::to_writer(&mut out, name);
    out.extend_from_slice(br#","arguments":"#);
    let _ = serde_json::to_writer(&mut out, arguments);
    out.extend_from_slice(br#","_meta":{"progressToken":"#);
    let _ = serde_json::to_writer(&mut out, &token);
    out.extend_from_slice(b"}}}\n");
    out
}

/// The reply to a server-to-client request: `ping` → `{}`, `roots/list` → no roots,
/// `sampling/createMessage` → a scripted assistant message, `elicitation/create` → decline,
/// anything else → -32601.
pub fn answer_server_request(id: &RequestId, method: &str) -> Value {
    match method {
        "ping" => wire::success(id, json!({})),
        "roots/list" => wire::success(id, json!({"roots": []})),
        "sampling/createMessage" => wire::success(
            id,
            json!({
                "role": "assistant",
                "content": {"type": "text", "text": SAMPLING_REPLY},
                "model": "mcp-chaos-scripted",
                "stopReason": "endTurn",
            }),
        ),
        "elicitation/create" => wire::success(id, json!({"action": "decline"})),
        other => wire::error(
            Some(id),
            wire::METHOD_NOT_FOUND,
            &format!("mcp-chaos does not implement {other}"),
            None,
        ),
    }
}

/// What a `server/discover` answer settles: the versions the server supports; 2026-07-28 must
/// be among them for a stateless session.
fn read_discover(
    ex: &Exchange,
    requested: ProtocolVersion,
    stderr: String,
) -> Result<Negotiated, InitError> {
    let result = handshake_result(ex, stderr)?;
    let supported: Vec<&str> = result
        .get("supportedVersions")
        .and_then(Value::as_array)
        .map(|v| v.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if !supported.contains(&requested.as_str()) {
        return Err(InitError::BadResult(format!(
            "server/discover lists supportedVersions {supported:?}, without {requested}"
        )));
    }
    Ok(Negotiated {
        requested,
        answered: requested.as_str().to_owned(),
        version: requested,
        server_info: result
            .get("_meta")
            .and_then(|m| m.get(META_SERVER_INFO))
            .cloned()
            .unwrap_or(Value::Null),
        capabilities: result.get("capabilities").cloned().unwrap_or(Value::Null),
    })
}

/// The error for an exchange that got no usable answer at all.
fn unanswered(ex: &Exchange, stderr: String) -> Result<(), InitError> {
    let stderr_note = if stderr.trim().is_empty() {
        String::new()
    } else {
        format!("\nserver output (last lines):\n{}", last_lines(&stderr, 20))
    };
    match &ex.outcome {
        Outcome::SendFailed(e) => Err(match ex.exited() {
            Some(status) => InitError::Exited {
                status: status.to_string(),
                stderr: stderr_note,
            },
            None => InitError::Send(e.clone()),
        }),
        Outcome::Gone(status) => Err(InitError::Exited {
            status: status
                .as_ref()
                .map_or_else(|| "closed stdout".to_owned(), ToString::to_string),
            stderr: stderr_note,
        }),
        Outcome::NoAnswer | Outcome::Abandoned | Outcome::Fenced => {
            let garbage: Vec<String> = ex
                .invalid_frames()
                .take(3)
                .map(|(f, e)| format!("\n  stdout: {} ({e})", f.excerpt(120)))
                .collect();
            if let Some(h) = ex.http()
                && let Some(status) = h.status.filter(|s| (300..400).contains(s))
            {
                return Err(InitError::Redirected {
                    status,
                    location: h.location.as_deref().map_or_else(
                        || "(no Location)".to_owned(),
                        |l| format!("{:?}", wire::excerpt(l.as_bytes(), 120)),
                    ),
                });
            }
            let http = ex
                .http()
                .and_then(|h| h.status)
                .map(|s| format!(" (HTTP {s} without a JSON-RPC response)"))
                .unwrap_or_default();
            Err(InitError::NoAnswer {
                timeout_ms: ex.timeout_ms,
                detail: format!("{http}{}{stderr_note}", garbage.concat()),
            })
        }
        Outcome::Answered { .. } => Ok(()),
    }
}

/// The `result` of a handshake request's answer (`initialize` or `server/discover`), or why
/// there is none: no answer, or an error response.
fn handshake_result(ex: &Exchange, stderr: String) -> Result<Value, InitError> {
    if let Some(info) = ex.http()
        && let Some(status @ (401 | 403)) = info.status
    {
        return Err(InitError::Unauthorized(crate::auth::Refusal {
            status,
            www_authenticate: info.www_authenticate.clone(),
            sent: Vec::new(),
        }));
    }
    unanswered(ex, stderr)?;
    let Some(response) = ex.response() else {
        return Err(InitError::BadResult("no response".into()));
    };
    if let Some(error) = response.error() {
        return Err(InitError::Rejected {
            code: error.code,
            message: error.message.to_owned(),
        });
    }
    Ok(response.result().cloned().unwrap_or(Value::Null))
}

fn read_initialize(
    ex: &Exchange,
    requested: ProtocolVersion,
    stderr: String,
) -> Result<Negotiated, InitError> {
    let result = handshake_result(ex, stderr)?;
    let answered = result
        .get("protocolVersion")
        .and_then(Value::as_str)
        .ok_or_else(|| {
            InitError::BadResult(format!(
                "no protocolVersion string in {}",
                wire::excerpt(result.to_string().as_bytes(), 200)
            ))
        })?
        .to_owned();
    // A handshake can only settle a handshake version.
    let version = answered
        .parse::<ProtocolVersion>()
        .ok()
        .filter(|v| v.rules().handshake)
        .unwrap_or(requested);
    Ok(Negotiated {
        requested,
        answered,
        version,
        server_info: result.get("serverInfo").cloned().unwrap_or(Value::Null),
        capabilities: result.get("capabilities").cloned().unwrap_or(Value::Null),
    })
}

fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::{StdioConfig, StdioTransport};

    #[test]
    fn a_call_line_is_the_frame_the_value_builders_give() {
        let ids = [
            RequestId::from(7),
            RequestId::from(i64::MIN),
            RequestId::Number(wire::IdNumber::Unsigned(u64::MAX)),
            RequestId::from("a\"b\\c\u{1}é"),
        ];
        let arguments = [
            json!({}),
            json!({"b": 1.5e300, "a": -0.0, "s": "x\"\n\u{7f}é😀", "n": [null, true, {"z": 1, "a": 2}]}),
            json!(null),
            json!("s"),
        ];
        for id in &ids {
            for args in &arguments {
                for name in ["get-sum", "we\"ird\u{2028}"] {
                    let built = wire::to_line(&wire::request(
                        id,
                        "tools/call",
                        Some(json!({
                            "name": name,
                            "arguments": args,
                            "_meta": {"progressToken": format!("mcp-chaos-{id}")},
                        })),
                    ));
                    assert_eq!(
                        String::from_utf8_lossy(&call_line(id, name, args)),
                        String::from_utf8_lossy(&built)
                    );
                }
            }
        }
    }

    #[test]
    fn the_fence_grace_is_a_few_round_trips_within_its_bounds() {
        let fallback = Duration::from_millis(200);
        assert_eq!(scaled_grace(None, fallback), fallback);
        let ms = Duration::from_millis;
        // A fast server (0.5 ms round trip) gets the floor, a 10 ms one four round trips, a
        // very slow one the ceiling.
        assert_eq!(
            scaled_grace(Some(Duration::from_micros(500)), fallback),
            GRACE_FLOOR
        );
        assert_eq!(scaled_grace(Some(ms(10)), fallback), ms(40));
        assert_eq!(scaled_grace(Some(ms(900)), fallback), GRACE_CEILING);
    }

    #[test]
    fn the_round_trip_follows_its_samples_smoothly() {
        let ms = Duration::from_millis;
        assert_eq!(smoothed_rtt(None, ms(8)), ms(8));
        assert_eq!(smoothed_rtt(Some(ms(8)), ms(16)), ms(10));
        // One slow sample moves it a quarter of the way, not all the way.
        let mut rtt = ms(1);
        rtt = smoothed_rtt(Some(rtt), ms(401));
        assert_eq!(rtt, ms(101));
        for _ in 0..20 {
            rtt = smoothed_rtt(Some(rtt), ms(1));
        }
        assert!(rtt < ms(2), "{rtt:?}");
    }

    /// A server that writes 50 000 log notifications (about 4 MiB) before it reads anything,
    /// then answers one request and waits for EOF: the 128 KiB request (more than a pipe
    /// holds) is written while mcp-chaos keeps reading, and the exchange keeps a bounded
    /// number of notifications, counting the rest.
    const FLOOD_THEN_ANSWER: &str = r#"
import json, os, sys
note = b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}\n'
os.write(1, note * 50000)
req = json.loads(sys.stdin.buffer.readline())
os.write(1, json.dumps({"jsonrpc": "2.0", "id": req["id"], "result": {}}).encode() + b"\n")
sys.stdin.buffer.read()
"#;

    /// A server that answers a `tools/call` after 1.6 s of progress: 400 notifications at
    /// once (past the keep budget of one exchange), then one every 100 ms, then the answer.
    /// Every request after it is answered at once.
    const PROGRESS_BURST_THEN_STEADY: &str = r#"
import json, sys, time
def out(m):
    sys.stdout.write(json.dumps(m) + "\n"); sys.stdout.flush()
for line in sys.stdin:
    req = json.loads(line)
    if "id" not in req:
        continue
    if req.get("method") == "tools/call":
        token = req["params"]["_meta"]["progressToken"]
        note = lambda n: {"jsonrpc": "2.0", "method": "notifications/progress",
                          "params": {"progressToken": token, "progress": n}}
        sys.stdout.write("".join(json.dumps(note(n)) + "\n" for n in range(400)))
        sys.stdout.flush()
        for n in range(16):
            time.sleep(0.1)
            out(note(400 + n))
    out({"jsonrpc": "2.0", "id": req["id"], "result": {"content": []}})
"#;

    /// Progress left out of the record (past the keep budget) still extends the deadline: a
    /// call that reports progress for 1.6 s with a 1 s timeout is answered, not cut, in an
    /// exchange of its own and as a request in flight of the case scheduler.
    #[tokio::test]
    async fn progress_past_the_keep_budget_still_extends_the_deadline() {
        let mut s = session_with(PROGRESS_BURST_THEN_STEADY, Duration::from_secs(1));
        let ex = s
            .call_tool_within(Probe::ToolsList, "slow", &json!({}), Duration::from_secs(3))
            .await;
        assert!(
            matches!(ex.outcome, Outcome::Answered { .. }),
            "{:?} after {:?}",
            ex.outcome,
            ex.elapsed
        );
        assert!(
            ex.elapsed >= Duration::from_millis(1500),
            "{:?}",
            ex.elapsed
        );
        assert!(ex.received.len() <= flood::KEPT_PER_EXCHANGE + 3);

        // Submitted without waiting: what the recording left out is handed to the caller.
        s.begin_batch();
        let id = s.next_id();
        let token = format!("mcp-chaos-{id}");
        s.submit(&s.call_frame(&id, "slow", &json!({})))
            .await
            .expect("written");
        let until = Instant::now() + Duration::from_secs(4);
        let mut recorded = 0;
        let mut heard_late = false;
        loop {
            let item = s.pull(until).await;
            heard_late |= s
                .take_progress_heard()
                .iter()
                .any(|(t, at)| *t == token && at.elapsed() < Duration::from_millis(300));
            match item {
                Some(ReceivedItem::Frame(f)) if matches!(&f.message, Ok(Message::Response(_))) => {
                    break;
                }
                Some(_) => recorded += 1,
                None => panic!("no answer in 4 s"),
            }
        }
        assert!(recorded <= flood::KEPT_PER_EXCHANGE, "{recorded} recorded");
        assert!(
            heard_late,
            "no unrecorded progress handed over near the answer"
        );
        s.shutdown().await;
    }

    /// A server whose `tools/call` with `{"progress": false}` answers after 800 ms without a
    /// word meanwhile, and with `{"progress": true}` reports progress every 100 ms and never
    /// answers.
    const SILENT_OR_PROGRESSING: &str = r#"
import json, sys, threading, time
def out(m):
    sys.stdout.write(json.dumps(m) + "\n"); sys.stdout.flush()
def report(token):
    n = 0
    while True:
        time.sleep(0.1); n += 1
        out({"jsonrpc": "2.0", "method": "notifications/progress",
             "params": {"progressToken": token, "progress": n}})
for line in sys.stdin:
    req = json.loads(line)
    if req["params"]["arguments"]["progress"]:
        token = req["params"]["_meta"]["progressToken"]
        threading.Thread(target=report, args=(token,), daemon=True).start()
    else:
        time.sleep(0.8)
        out({"jsonrpc": "2.0", "id": req["id"], "result": {"content": []}})
"#;

    /// A cap shorter than the timeout (a tool's time budget nearly spent) binds only a call
    /// that reports progress: a silent call still gets its whole timeout and is answered; one
    /// that keeps reporting progress is given up on at the cap, long before the timeout, and
    /// is not called unanswered.
    #[tokio::test]
    async fn a_cap_below_the_timeout_cuts_only_a_call_that_reports_progress() {
        let mut s = session_with(SILENT_OR_PROGRESSING, Duration::from_secs(10));
        let cap = Duration::from_millis(300);
        let silent = s
            .call_tool_within(Probe::ToolsList, "slow", &json!({"progress": false}), cap)
            .await;
        assert!(
            matches!(silent.outcome, Outcome::Answered { .. }),
            "{:?} after {:?}",
            silent.outcome,
            silent.elapsed
        );
        let working = s
            .call_tool_within(Probe::ToolsList, "slow", &json!({"progress": true}), cap)
            .await;
        assert!(
            matches!(working.outcome, Outcome::Abandoned),
            "{:?} after {:?}",
            working.outcome,
            working.elapsed
        );
        assert!(
            working.elapsed < Duration::from_secs(5),
            "{:?}",
            working.elapsed
        );
        s.kill().await;
    }

    fn session(script: &str) -> Session {
        session_with(script, Duration::from_secs(20))
    }

    fn session_with(script: &str, timeout: Duration) -> Session {
        let mut config = StdioConfig::new("python3", vec!["-c".into(), script.into()]);
        config.eof_grace = Duration::from_millis(500);
        config.term_grace = Duration::from_millis(500);
        let transport = Transport::Stdio(StdioTransport::spawn(config).expect("python3 starts"));
        Session::new(
            transport,
            ClientConfig::new(ProtocolVersion::LATEST_WITH_INITIALIZE, timeout),
        )
    }

    #[tokio::test]
    async fn a_large_request_is_written_while_a_flood_is_read_and_recording_stays_bounded() {
        let mut s = session(FLOOD_THEN_ANSWER);
        let pad = "x".repeat(128 * 1024);
        let ex = s
            .request(Probe::ToolsList, "tools/list", Some(json!({ "pad": pad })))
            .await;
        assert!(
            matches!(ex.outcome, Outcome::Answered { .. }),
            "{:?}",
            ex.outcome
        );
        assert!(
            ex.received.len() <= flood::KEPT_PER_EXCHANGE + 3,
            "{} items kept",
            ex.received.len()
        );
        let dropped = ex.received.iter().find_map(|r| match &r.item {
            ReceivedItem::Dropped(d) => Some(*d),
            _ => None,
        });
        let kept = ex
            .received
            .iter()
            .filter(|r| matches!(&r.item, ReceivedItem::Frame(f) if matches!(f.message, Ok(Message::Notification(_)))))
            .count() as u64;
        let dropped = dropped.expect("a Dropped item");
        // Every notification is either kept or counted.
        assert_eq!(kept + dropped.notifications, 50_000, "{dropped:?}");
        assert!(
            ex.received
                .iter()
                .any(|r| matches!(&r.item, ReceivedItem::Flood(f) if f.kind == flood::FloodKind::Notifications)),
            "no flood recorded"
        );
        assert_eq!(s.dropped().notifications, dropped.notifications);
        s.shutdown().await;
    }

    /// A server that leaves a process behind holding its stdin, stdout and stderr open, and
    /// on its first request says its last words on stderr and exits 3 without answering.
    const EXIT_LEAVING_A_CHILD: &str = r#"
import subprocess, sys
subprocess.Popen(["sleep", "60"])
sys.stdin.buffer.readline()
sys.stderr.write("last words\n")
sys.stderr.flush()
sys.exit(3)
"#;

    /// Once its exit was seen, a server whose stdout another process holds open gets no
    /// more waiting: a later request or batch ends `Gone` with the exit status (not
    /// unanswered at its deadline), and the stderr tail holds what it wrote before exiting.
    #[tokio::test]
    async fn after_the_exit_nothing_waits_for_an_output_held_open() {
        let mut s = session(EXIT_LEAVING_A_CHILD);
        let first = s.request(Probe::Liveness, "ping", None).await;
        assert_eq!(first.outcome, Outcome::Gone(Some(ExitKind::Code(3))));
        let again = s.request(Probe::Liveness, "ping", None).await;
        assert!(
            matches!(
                again.outcome,
                Outcome::Gone(Some(ExitKind::Code(3))) | Outcome::SendFailed(_)
            ),
            "{:?}",
            again.outcome
        );
        let id = s.next_id();
        let frame = s.liveness_frame(&id, None);
        let batch = s
            .send_many(
                vec![Outgoing::new(
                    Probe::Liveness,
                    frame,
                    vec![id],
                    Duration::ZERO,
                )],
                Duration::from_secs(20),
            )
            .await;
        assert!(
            matches!(
                batch[0].outcome,
                Outcome::Gone(Some(ExitKind::Code(3))) | Outcome::SendFailed(_)
            ),
            "{:?}",
            batch[0].outcome
        );
        assert!(
            s.stderr_tail().contains("last words"),
            "{}",
            s.stderr_tail()
        );
        s.kill().await;
    }

    /// A server that sends 2 000 `roots/list` requests without reading, then reads: none
    /// blocks the reading; the first window's budget is answered, the rest counted as
    /// throttled.
    const REQUEST_LOOP: &str = r#"
import json, os, sys
reqs = b"".join(json.dumps({"jsonrpc": "2.0", "id": f"s{i}", "method": "roots/list"}).encode() + b"\n" for i in range(2000))
os.write(1, reqs)
answers = refused = 0
for line in sys.stdin.buffer:
    msg = json.loads(line)
    if "method" in msg and "id" in msg:
        os.write(1, json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {"answers": answers, "refused": refused}}).encode() + b"\n")
        continue
    if "error" in msg:
        refused += 1
    else:
        answers += 1
"#;

    #[tokio::test]
    async fn a_request_flood_is_answered_within_budget_and_throttled_beyond() {
        let mut s = session(REQUEST_LOOP);
        // The server answers this ping only once its 2 000 requests are out: they are all read
        // (and answered or throttled) during this exchange.
        let ex = s.request(Probe::Liveness, "ping", None).await;
        assert!(
            ex.received.iter().any(|r| matches!(&r.item, ReceivedItem::Flood(f) if f.kind == flood::FloodKind::ServerRequests)),
            "no flood recorded"
        );
        // The second ping is written after every reply queued so far: its answer counts them
        // (the server counts error replies as `refused`: there must be none).
        let ex = s.request(Probe::Liveness, "ping", None).await;
        let result = ex.response().and_then(|r| r.result()).cloned();
        let result = result.unwrap_or_else(|| panic!("no answer: {:?}", ex.outcome));
        let (answers, refused) = (result["answers"].as_u64(), result["refused"].as_u64());
        let totals = s.dropped();
        assert_eq!(answers, Some(flood::REQUEST_FLOOD), "{result}");
        assert_eq!(refused, Some(0), "{result}");
        assert_eq!(totals.unanswered, 0);
        assert_eq!(totals.throttled, 2000 - flood::REQUEST_FLOOD);
        s.shutdown().await;
    }
}
