//! The Streamable HTTP transport (MCP `basic/transports` §Streamable HTTP, 2025-03-26 on; the
//! only HTTP transport of 2026-07-28).
//!
//! Each frame is POSTed to the MCP endpoint with `Accept: application/json,
//! text/event-stream`; the response body is read as JSON or as an SSE stream (through the strict
//! [`crate::sse`] reader) in a task of its own, and every message in it becomes a
//! [`TransportEvent::Frame`], followed by one [`TransportEvent::Http`] that describes the HTTP
//! exchange (status, content type, session id, SSE anomalies). The session id the server issues
//! is kept and sent on every later request; the `MCP-Protocol-Version` header is sent once the
//! session sets it; in the stateless 2026-07-28 protocol the `Mcp-Method` and `Mcp-Name` headers
//! are derived from each frame.
//!
//! With `--start`, the server process is started first (in its own process group, see
//! [`super::process`]) and the transport waits until the endpoint's port accepts connections.
//! The legacy HTTP+SSE transport of 2024-11-05 is not supported.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::process::ServerProcess;
use super::{ExitKind, Frame, Oversized, ShutdownOutcome, StartError, StdioConfig, TransportEvent};
use crate::sse;

/// How to reach an HTTP server.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// The MCP endpoint, e.g. `http://127.0.0.1:3001/mcp`.
    pub url: String,
    /// A command that starts the server (`--start`); it is killed with its process tree at the
    /// end.
    pub start: Option<StdioConfig>,
    /// How long to wait for the port to accept connections after `start`.
    pub start_timeout: Duration,
    /// Largest message accepted in a body or SSE event, in bytes.
    pub max_frame_bytes: usize,
    /// Allow a URL whose host is not loopback.
    pub allow_remote: bool,
    /// Extra headers sent on every request (`--header`, expanded; see [`crate::auth`]):
    /// `(name, value)`. Values are credentials, never printed.
    pub headers: Vec<(String, String)>,
    /// The same headers as written, before `${NAME}` expansion: `(name, template)`. What a
    /// replay file saves of them (see [`crate::run::replay`]); empty when they were not
    /// written as templates (a scenario's).
    pub header_templates: Vec<(String, String)>,
}

impl HttpConfig {
    /// A config for `url` with no start command, a 10 s start timeout and the default frame
    /// limit.
    pub fn new(url: impl Into<String>) -> HttpConfig {
        HttpConfig {
            url: url.into(),
            start: None,
            start_timeout: Duration::from_secs(10),
            max_frame_bytes: super::DEFAULT_MAX_FRAME_BYTES,
            allow_remote: false,
            headers: Vec::new(),
            header_templates: Vec::new(),
        }
    }
}

pub use crate::observed::{HttpInfo, is_loopback_host};

/// What [`HttpTransport::send`] returns: which POST carried the frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SendReceipt {
    /// The POST's number, when the transport is HTTP.
    pub post: Option<u64>,
}

#[derive(Debug, Default)]
struct State {
    session_id: Option<String>,
    protocol_version: Option<String>,
    stateless: bool,
    next_post: u64,
}

/// Headers that a probe overrides on one request: `Some(value)` sets, `None` removes.
pub type HeaderOverrides = Vec<(String, Option<String>)>;

/// A connection to a Streamable HTTP server.
#[derive(Debug)]
pub struct HttpTransport {
    client: reqwest::Client,
    url: reqwest::Url,
    state: Arc<Mutex<State>>,
    tx: mpsc::Sender<TransportEvent>,
    events: mpsc::Receiver<TransportEvent>,
    process: Option<ServerProcess>,
    tasks: Vec<JoinHandle<()>>,
    config: HttpConfig,
}

/// A request body as JSON, for its `Mcp-Method`/`Mcp-Name` headers: nested deeper than
/// serde_json's 128 levels too (up to [`crate::wire::MAX_DEPTH`]), so that a deep but valid
/// request still carries the headers its body calls for.
fn body_json(body: &[u8]) -> Option<Value> {
    match serde_json::from_slice::<Value>(body) {
        Ok(value) => Some(value),
        Err(_) if crate::wire::json_depth(body, 128) > 128 => std::str::from_utf8(body)
            .ok()
            .and_then(|text| crate::wire::parse_to_depth(text, crate::wire::MAX_DEPTH).ok()),
        Err(_) => None,
    }
}

/// `url` parsed, if mcp-chaos may talk to it: its host is loopback (`localhost`,
/// 127.0.0.0/8, `::1`) unless `allow_remote` (`--allow-remote`). The one place this rule
/// lives: the command line, scenario files and the transport all ask it.
///
/// # Errors
///
/// Why not, as a sentence: the URL does not parse, or its host is not loopback (and
/// `allow_remote` is false).
pub fn loopback_url(url: &str, allow_remote: bool) -> Result<reqwest::Url, String> {
    let parsed = reqwest::Url::parse(url).map_err(|e| e.to_string())?;
    let host = parsed.host_str().unwrap_or_default();
    if !allow_remote && !is_loopback_host(host) {
        return Err(format!(
            "{host} is not a loopback address; mcp-chaos only talks to 127.0.0.1, ::1 and localhost (on the command line, --allow-remote lifts this)"
        ));
    }
    Ok(parsed)
}

impl HttpTransport {
    /// Starts the server (if `config.start`) and waits for its port, then returns a transport
    /// ready to POST. Errors: a URL that does not parse or is not loopback (unless
    /// `allow_remote`), a start command that fails, exits, or does not open its port within
    /// `start_timeout`.
    pub async fn connect(config: HttpConfig) -> Result<HttpTransport, StartError> {
        let url = loopback_url(&config.url, config.allow_remote).map_err(|reason| {
            StartError::BadUrl {
                url: config.url.clone(),
                reason,
            }
        })?;
        let host = url.host_str().unwrap_or_default().to_owned();
        let port = url.port_or_known_default().unwrap_or(80);
        let (tx, events) = mpsc::channel(1024);
        let process = match &config.start {
            Some(start) => {
                let (process, _pipes) = ServerProcess::spawn(start, false, false, tx.clone())?;
                Some(process)
            }
            None => None,
        };
        if let Some(process) = &process {
            wait_for_port(process, &host, port, config.start_timeout).await?;
        }
        // Redirects are not followed (reqwest follows up to 10 by default, to any host): a 3xx
        // comes back as the response, with its Location recorded, and the oracle reports it.
        let client = reqwest::Client::builder()
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| StartError::BadUrl {
                url: config.url.clone(),
                reason: e.to_string(),
            })?;
        Ok(HttpTransport {
            client,
            url,
            state: Arc::new(Mutex::new(State::default())),
            tx,
            events,
            process,
            tasks: Vec::new(),
            config,
        })
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The MCP endpoint URL that frames are POSTed to, as parsed (e.g.
    /// `http://127.0.0.1:3001/mcp`).
    pub fn url(&self) -> &str {
        self.url.as_str()
    }

    /// The names of the extra headers (`--header`) sent on every request; never their values.
    pub fn extra_header_names(&self) -> Vec<String> {
        self.config.headers.iter().map(|(k, _)| k.clone()).collect()
    }

    /// The session id the server issued, if any.
    pub fn session_id(&self) -> Option<String> {
        self.state().session_id.clone()
    }

    /// Replaces (or forgets) the session id sent with requests.
    pub fn set_session_id(&mut self, id: Option<String>) {
        self.state().session_id = id;
    }

    /// Sets the `MCP-Protocol-Version` header sent with every later request; in the stateless
    /// protocol, also sends `Mcp-Method`/`Mcp-Name`.
    pub fn set_protocol_version(&mut self, version: Option<String>, stateless: bool) {
        let mut state = self.state();
        state.protocol_version = version;
        state.stateless = stateless;
    }

    /// POSTs one frame; the response arrives as events. The frame's trailing newline, if any,
    /// is removed.
    pub fn send(&mut self, bytes: &[u8]) -> SendReceipt {
        self.send_with(bytes, Vec::new())
    }

    /// POSTs one frame with some headers overridden (for HTTP-level probes).
    pub fn send_with(&mut self, bytes: &[u8], overrides: HeaderOverrides) -> SendReceipt {
        let body = bytes.strip_suffix(b"\n").unwrap_or(bytes).to_vec();
        let post = {
            let mut state = self.state();
            state.next_post += 1;
            state.next_post
        };
        let mut headers = self.headers(&body);
        apply(&mut headers, overrides);
        let request = self
            .client
            .post(self.url.clone())
            .headers(to_header_map(&headers))
            .body(body);
        let task = tokio::spawn(run_request(
            request,
            "POST",
            post,
            self.tx.clone(),
            Arc::clone(&self.state),
            self.config.max_frame_bytes,
        ));
        self.tasks.retain(|t| !t.is_finished());
        self.tasks.push(task);
        SendReceipt { post: Some(post) }
    }

    /// Sends a bodiless request (`GET` to open a stream, `DELETE` to end the session) with the
    /// usual headers plus `overrides`; the result arrives as events like a POST's. Returns the
    /// request's number.
    pub fn send_method(&mut self, method: &str, overrides: HeaderOverrides) -> u64 {
        let post = {
            let mut state = self.state();
            state.next_post += 1;
            state.next_post
        };
        let mut headers = self.headers(&[]);
        headers.retain(|(k, _)| k != "content-type");
        if method == "GET" {
            apply(
                &mut headers,
                vec![("accept".into(), Some("text/event-stream".into()))],
            );
        }
        apply(&mut headers, overrides);
        let m = reqwest::Method::from_bytes(method.as_bytes()).unwrap_or(reqwest::Method::GET);
        let request = self
            .client
            .request(m, self.url.clone())
            .headers(to_header_map(&headers));
        let task = tokio::spawn(run_request(
            request,
            if method == "GET" { "GET" } else { "DELETE" },
            post,
            self.tx.clone(),
            Arc::clone(&self.state),
            self.config.max_frame_bytes,
        ));
        self.tasks.push(task);
        post
    }

    /// Opens the standalone server-to-client stream (`GET` with `Accept: text/event-stream`,
    /// 2025-03-26 … 2025-11-25), where a server may send requests and notifications not tied
    /// to a client request; its messages arrive as frames. A server without one answers 405.
    /// Returns the request's number.
    pub fn open_stream(&mut self) -> u64 {
        self.send_method("GET", Vec::new())
    }

    /// Sends one request directly and waits for it (within `timeout`), for HTTP-level probes:
    /// the usual headers plus `overrides`, `body` for a POST. A `GET` is judged by its status
    /// and headers only (its stream is closed at once); any other response is read whole.
    /// Returns what happened and the messages in the body.
    pub async fn probe(
        &mut self,
        method: &str,
        body: Option<Vec<u8>>,
        overrides: HeaderOverrides,
        timeout: Duration,
    ) -> (HttpInfo, Vec<Frame>) {
        let post = {
            let mut state = self.state();
            state.next_post += 1;
            state.next_post
        };
        let body = body.map(|b| b.strip_suffix(b"\n").map(<[u8]>::to_vec).unwrap_or(b));
        let mut headers = self.headers(body.as_deref().unwrap_or_default());
        if body.is_none() {
            headers.retain(|(k, _)| k != "content-type");
        }
        if method == "GET" {
            apply(
                &mut headers,
                vec![("accept".into(), Some("text/event-stream".into()))],
            );
        }
        apply(&mut headers, overrides);
        let m = reqwest::Method::from_bytes(method.as_bytes()).unwrap_or(reqwest::Method::GET);
        let mut request = self
            .client
            .request(m, self.url.clone())
            .headers(to_header_map(&headers));
        if let Some(body) = body {
            request = request.body(body);
        }
        let (tx, mut rx) = mpsc::channel(64);
        let state = Arc::new(Mutex::new(State::default()));
        let max = self.config.max_frame_bytes;
        let headers_only = method == "GET";
        let work = async move {
            if headers_only {
                let started = Instant::now();
                let mut info = blank_info(post, "GET");
                match request.send().await {
                    Ok(response) => {
                        info.status = Some(response.status().as_u16());
                        info.content_type = response
                            .headers()
                            .get("content-type")
                            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
                        info.location = response
                            .headers()
                            .get("location")
                            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
                    }
                    Err(e) => info.error = Some(error_text(&e)),
                }
                info.elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(0);
                let _ = tx.send(TransportEvent::Http(info)).await;
            } else {
                run_request(request, "POST", post, tx, state, max).await;
            }
        };
        let mut info = blank_info(post, method);
        let mut frames = Vec::new();
        let collect = async {
            tokio::spawn(work);
            while let Some(event) = rx.recv().await {
                match event {
                    TransportEvent::Frame(f) => frames.push(f),
                    TransportEvent::Http(i) => {
                        info = i;
                        break;
                    }
                    _ => {}
                }
            }
        };
        if tokio::time::timeout(timeout, collect).await.is_err() {
            info.error = Some(format!("no response within {} ms", timeout.as_millis()));
        }
        info.method = method.to_owned();
        (info, frames)
    }

    /// Drops every request still in flight (their connections close): the disconnect that
    /// 2026-07-28 treats as cancellation.
    pub fn abandon_requests(&mut self) {
        for task in self.tasks.drain(..) {
            task.abort();
        }
    }

    fn headers(&self, body: &[u8]) -> Vec<(String, String)> {
        let state = self.state();
        let mut headers = vec![
            ("content-type".to_owned(), "application/json".to_owned()),
            (
                "accept".to_owned(),
                "application/json, text/event-stream".to_owned(),
            ),
        ];
        headers.extend(self.config.headers.iter().cloned());
        if let Some(id) = &state.session_id
            && !state.stateless
        {
            headers.push(("mcp-session-id".into(), id.clone()));
        }
        if let Some(v) = &state.protocol_version {
            headers.push(("mcp-protocol-version".into(), v.clone()));
        }
        if state.stateless
            && let Some(value) = body_json(body)
            && let Some(method) = value.get("method").and_then(Value::as_str)
        {
            headers.push(("mcp-method".into(), method.to_owned()));
            let name = value.get("params").and_then(|p| {
                p.get("name")
                    .or_else(|| p.get("uri"))
                    .and_then(Value::as_str)
            });
            if let Some(name) = name {
                headers.push(("mcp-name".into(), encode_header(name)));
            }
        }
        headers
    }

    /// The next event, or `None` when nothing arrives before `until`. At `until`, what the
    /// server had already sent is read first (see `super::late`).
    pub async fn recv(&mut self, until: Instant) -> Option<TransportEvent> {
        match tokio::time::timeout_at(until.into(), self.events.recv()).await {
            Ok(event) => event,
            Err(_) => super::late(&mut self.events).await,
        }
    }

    /// An event that has already arrived.
    pub fn try_recv(&mut self) -> Option<TransportEvent> {
        self.events.try_recv().ok()
    }

    /// The started server's newest output (stdout and stderr), if mcp-chaos started it.
    pub fn log_tail(&self) -> String {
        self.process
            .as_ref()
            .map(ServerProcess::log_tail)
            .unwrap_or_default()
    }

    /// How the started server exited, if it did.
    pub fn has_exited(&self) -> Option<ExitKind> {
        self.process.as_ref().and_then(ServerProcess::has_exited)
    }

    /// Waits up to `within` for the started server to exit; how it exited, or `None` (also
    /// when mcp-chaos did not start it).
    pub async fn wait_exit(&self, within: std::time::Duration) -> Option<ExitKind> {
        match &self.process {
            Some(process) => process.wait_exit(within).await,
            None => None,
        }
    }

    /// Ends the session with `DELETE` (when there is one), drops requests in flight, and stops
    /// the server process if mcp-chaos started it.
    pub async fn shutdown(mut self) -> ShutdownOutcome {
        let session = self.session_id();
        if session.is_some() && !self.state().stateless {
            let request = self
                .client
                .delete(self.url.clone())
                .headers(to_header_map(&self.headers(&[])));
            let _ = tokio::time::timeout(Duration::from_secs(2), request.send()).await;
        }
        self.abandon_requests();
        // The started server's stdin is /dev/null from the start: it is not expected to exit
        // on its own, so SIGTERM at once (then SIGKILL after the term grace).
        match self.process.take() {
            Some(process) => process.shutdown_after(Duration::ZERO).await,
            None => ShutdownOutcome::Killed,
        }
    }

    /// Drops requests in flight and kills the started server at once (no `DELETE`, no grace):
    /// see [`ServerProcess::kill`].
    pub async fn kill(mut self) -> ShutdownOutcome {
        self.abandon_requests();
        match self.process.take() {
            Some(process) => process.kill().await,
            None => ShutdownOutcome::Killed,
        }
    }
}

impl Drop for HttpTransport {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

fn apply(headers: &mut Vec<(String, String)>, overrides: HeaderOverrides) {
    for (name, value) in overrides {
        let name = name.to_ascii_lowercase();
        headers.retain(|(k, _)| *k != name);
        if let Some(value) = value {
            headers.push((name, value));
        }
    }
}

fn to_header_map(headers: &[(String, String)]) -> reqwest::header::HeaderMap {
    let mut map = reqwest::header::HeaderMap::new();
    for (k, v) in headers {
        if let (Ok(name), Ok(value)) = (
            reqwest::header::HeaderName::from_bytes(k.as_bytes()),
            reqwest::header::HeaderValue::from_str(v),
        ) {
            map.append(name, value);
        }
    }
    map
}

/// Non-ASCII header values are sent as `=?base64?…?=` (SEP-2243).
fn encode_header(value: &str) -> String {
    if value.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        value.to_owned()
    } else {
        use base64::Engine;
        format!(
            "=?base64?{}?=",
            base64::engine::general_purpose::STANDARD.encode(value)
        )
    }
}

async fn wait_for_port(
    process: &ServerProcess,
    host: &str,
    port: u16,
    timeout: Duration,
) -> Result<(), StartError> {
    let deadline = Instant::now() + timeout;
    let host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_owned();
    loop {
        if let Some(status) = process.has_exited() {
            return Err(StartError::Exited {
                status: status.to_string(),
                log: process.log_tail(),
            });
        }
        if tokio::net::TcpStream::connect((host.as_str(), port))
            .await
            .is_ok()
        {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(StartError::PortTimeout {
                port,
                timeout_ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
                log: process.log_tail(),
            });
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn run_request(
    request: reqwest::RequestBuilder,
    method: &'static str,
    post: u64,
    tx: mpsc::Sender<TransportEvent>,
    state: Arc<Mutex<State>>,
    max: usize,
) {
    let started = Instant::now();
    let mut info = blank_info(post, method);
    match request.send().await {
        Err(e) => info.error = Some(error_text(&e)),
        Ok(mut response) => {
            info.status = Some(response.status().as_u16());
            let header = |name: &str| {
                response
                    .headers()
                    .get(name)
                    .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
            };
            info.content_type = header("content-type");
            info.session_id = header("mcp-session-id");
            info.location = header("location");
            info.www_authenticate = header("www-authenticate");
            if let Some(id) = &info.session_id {
                let mut state = state
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                if state.session_id.is_none() && !state.stateless {
                    state.session_id = Some(id.clone());
                }
            }
            let is_sse = info.content_type.as_deref().is_some_and(|c| {
                c.trim_start()
                    .to_ascii_lowercase()
                    .starts_with("text/event-stream")
            });
            if is_sse {
                let mut reader = sse::Reader::new();
                let mut first = true;
                // Bounded as bytes arrive: one event (its pending line and data) and the whole
                // stream each under `max`; past either, the stream is cut (the response is
                // dropped, closing the connection) and the oversize reported.
                let mut cut: Option<TransportEvent> = None;
                loop {
                    match response.chunk().await {
                        Ok(Some(chunk)) => {
                            info.body_bytes += chunk.len();
                            for event in reader.push(&chunk) {
                                if first {
                                    info.sse_priming = event.id.is_some() && event.data.is_empty();
                                    first = false;
                                }
                                if event.data.trim().is_empty() {
                                    continue;
                                }
                                let item = if event.data.len() > max {
                                    oversize(
                                        event.data.len(),
                                        event.data.as_bytes(),
                                        Oversized::SseEvent,
                                    )
                                } else {
                                    TransportEvent::Frame(Frame::new(event.data.into_bytes()))
                                };
                                if tx.send(item).await.is_err() {
                                    return;
                                }
                            }
                            if reader.buffered() > max {
                                cut =
                                    Some(oversize(reader.buffered(), &chunk, Oversized::SseEvent));
                            } else if info.body_bytes > max {
                                cut = Some(oversize(info.body_bytes, &chunk, Oversized::SseStream));
                            }
                            if cut.is_some() {
                                break;
                            }
                        }
                        Ok(None) => break,
                        Err(e) => {
                            info.error = Some(error_text(&e));
                            break;
                        }
                    }
                }
                info.sse_events = reader.events();
                match cut {
                    Some(item) => {
                        drop(response);
                        if tx.send(item).await.is_err() {
                            return;
                        }
                    }
                    None => {
                        info.sse_anomalies =
                            reader.finish().iter().map(ToString::to_string).collect();
                    }
                }
            } else {
                // Bounded as bytes arrive: a declared Content-Length over `max` is refused
                // unread; a body (chunked or not) that grows past `max` is cut there.
                let declared = response
                    .content_length()
                    .and_then(|n| usize::try_from(n).ok());
                let mut body = Vec::new();
                let mut over: Option<usize> = declared.filter(|&n| n > max);
                while over.is_none() {
                    match response.chunk().await {
                        Ok(Some(chunk)) => {
                            info.body_bytes += chunk.len();
                            if body.len() + chunk.len() > max {
                                over = Some(body.len() + chunk.len());
                                let room = 256usize.saturating_sub(body.len());
                                body.extend_from_slice(&chunk[..chunk.len().min(room)]);
                            } else {
                                body.extend_from_slice(&chunk);
                            }
                        }
                        Ok(None) => break,
                        Err(e) => {
                            info.error = Some(error_text(&e));
                            break;
                        }
                    }
                }
                drop(response);
                // A non-2xx body that is not JSON (a plain-text 403, an HTML error page) is the
                // HTTP layer talking, not a message.
                let json = info
                    .content_type
                    .as_deref()
                    .is_some_and(|c| c.to_ascii_lowercase().contains("json"));
                let success = info.status.is_some_and(|s| (200..300).contains(&s));
                let item = if !success && !json {
                    None
                } else if let Some(len) = over {
                    Some(oversize(len, &body, Oversized::Body))
                } else if body.iter().any(|b| !b.is_ascii_whitespace()) {
                    Some(TransportEvent::Frame(Frame::new(body)))
                } else {
                    None
                };
                if let Some(item) = item
                    && tx.send(item).await.is_err()
                {
                    return;
                }
            }
        }
    }
    info.elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let _ = tx.send(TransportEvent::Http(info)).await;
}

/// The oversize event for `len` bytes of `what`, with the first bytes of `head`.
fn oversize(len: usize, head: &[u8], what: Oversized) -> TransportEvent {
    TransportEvent::Oversize {
        at: Instant::now(),
        len,
        head: head[..head.len().min(256)].to_vec(),
        what,
    }
}

fn blank_info(post: u64, method: &str) -> HttpInfo {
    HttpInfo {
        post,
        method: method.to_owned(),
        status: None,
        content_type: None,
        session_id: None,
        location: None,
        body_bytes: 0,
        sse_events: 0,
        sse_priming: false,
        sse_anomalies: Vec::new(),
        error: None,
        www_authenticate: None,
        elapsed_ms: 0,
    }
}

fn error_text(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts() {
        for host in ["localhost", "127.0.0.1", "127.3.4.5", "[::1]", "::1"] {
            assert!(is_loopback_host(host), "{host}");
        }
        for host in ["example.com", "10.0.0.1", "0.0.0.0", "[::]"] {
            assert!(!is_loopback_host(host), "{host}");
        }
    }

    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    /// A one-connection server on 127.0.0.1: reads the request head, then writes `head` and
    /// `repeat` copies of `chunk` (ignoring a client that hangs up) and `tail`. Returns its URL.
    async fn serve(head: String, chunk: Vec<u8>, repeat: usize, tail: Vec<u8>) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        tokio::spawn(async move {
            let (mut conn, _) = listener.accept().await.unwrap();
            let mut seen = Vec::new();
            let mut buf = [0u8; 4096];
            while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
                match conn.read(&mut buf).await {
                    Ok(0) | Err(_) => return,
                    Ok(n) => seen.extend_from_slice(&buf[..n]),
                }
            }
            if conn.write_all(head.as_bytes()).await.is_err() {
                return;
            }
            for _ in 0..repeat {
                if conn.write_all(&chunk).await.is_err() {
                    return;
                }
            }
            let _ = conn.write_all(&tail).await;
        });
        url
    }

    /// Sends one frame to `url` with a 64 KiB frame limit and collects the events up to the
    /// end of the HTTP exchange.
    async fn exchange(url: String) -> (Vec<TransportEvent>, HttpInfo) {
        let mut config = HttpConfig::new(url);
        config.max_frame_bytes = 64 * 1024;
        let mut t = HttpTransport::connect(config).await.unwrap();
        t.send(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
        let until = Instant::now() + Duration::from_secs(20);
        let mut events = Vec::new();
        loop {
            match t.recv(until).await.expect("the exchange ends") {
                TransportEvent::Http(info) => return (events, info),
                other => events.push(other),
            }
        }
    }

    fn oversized(events: &[TransportEvent]) -> Vec<(Oversized, usize)> {
        events
            .iter()
            .filter_map(|e| match e {
                TransportEvent::Oversize { what, len, .. } => Some((*what, *len)),
                _ => None,
            })
            .collect()
    }

    const MIB: usize = 1 << 20;

    #[tokio::test]
    async fn a_declared_body_over_the_limit_is_refused_unread() {
        let len = 64 * MIB;
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {len}\r\n\r\n"
        );
        let url = serve(head, vec![b'a'; MIB], 64, Vec::new()).await;
        let (events, info) = exchange(url).await;
        assert_eq!(oversized(&events), [(Oversized::Body, len)]);
        assert!(info.body_bytes < MIB, "read {} bytes", info.body_bytes);
    }

    #[tokio::test]
    async fn a_chunked_body_is_cut_when_it_passes_the_limit() {
        let head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n";
        let mut chunk = format!("{:x}\r\n", 16 * 1024).into_bytes();
        chunk.extend(vec![b'a'; 16 * 1024]);
        chunk.extend_from_slice(b"\r\n");
        let url = serve(head.into(), chunk, 4096, b"0\r\n\r\n".to_vec()).await;
        let (events, info) = exchange(url).await;
        let found = oversized(&events);
        assert_eq!(found.len(), 1, "{events:?}");
        assert_eq!(found[0].0, Oversized::Body);
        assert!(
            found[0].1 > 64 * 1024 && info.body_bytes < 4 * MIB,
            "{found:?} {info:?}"
        );
    }

    #[tokio::test]
    async fn one_sse_event_over_the_limit_is_cut_as_it_arrives() {
        let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"x\":\"";
        let url = serve(
            head.into(),
            vec![b'a'; 64 * 1024],
            1024,
            b"\"}}\n\n".to_vec(),
        )
        .await;
        let (events, info) = exchange(url).await;
        let found = oversized(&events);
        assert_eq!(found.len(), 1, "{events:?}");
        assert_eq!(found[0].0, Oversized::SseEvent);
        assert!(info.body_bytes < 4 * MIB, "{info:?}");
        assert!(info.sse_anomalies.is_empty(), "{info:?}");
    }

    #[tokio::test]
    async fn an_sse_stream_over_the_limit_is_cut_after_the_events_under_it() {
        let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n";
        let note = format!(
            "data: {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{{\"level\":\"info\",\"data\":\"{}\"}}}}\n\n",
            "a".repeat(4000)
        );
        let url = serve(head.into(), note.into_bytes(), 4096, Vec::new()).await;
        let (events, info) = exchange(url).await;
        let frames = events
            .iter()
            .filter(|e| matches!(e, TransportEvent::Frame(_)))
            .count();
        let found = oversized(&events);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, Oversized::SseStream);
        assert!((10..=20).contains(&frames), "{frames} frames");
        assert!(info.body_bytes < 4 * MIB, "{info:?}");
    }

    #[tokio::test]
    async fn bodies_and_events_under_the_limit_are_frames() {
        let body = r#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        );
        let (events, _) = exchange(serve(head, Vec::new(), 0, Vec::new()).await).await;
        assert!(
            matches!(&events[..], [TransportEvent::Frame(f)] if f.message.is_ok()),
            "{events:?}"
        );
        let head =
            format!("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\ndata: {body}\n\n");
        let (events, info) = exchange(serve(head, Vec::new(), 0, Vec::new()).await).await;
        assert!(
            matches!(&events[..], [TransportEvent::Frame(f)] if f.message.is_ok()),
            "{events:?}"
        );
        assert!(info.sse_anomalies.is_empty());
    }

    #[tokio::test]
    async fn a_redirect_is_not_followed() {
        // The target is another loopback listener that records whether anything connected.
        let target = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let location = format!("http://{}/mcp", target.local_addr().unwrap());
        let head = format!(
            "HTTP/1.1 307 Temporary Redirect\r\nlocation: {location}\r\ncontent-length: 0\r\n\r\n"
        );
        let (events, info) = exchange(serve(head, Vec::new(), 0, Vec::new()).await).await;
        assert!(events.is_empty(), "{events:?}");
        assert_eq!(info.status, Some(307));
        assert_eq!(info.location.as_deref(), Some(location.as_str()));
        let connected = tokio::time::timeout(Duration::from_millis(300), target.accept()).await;
        assert!(connected.is_err(), "the redirect was followed");
    }

    #[test]
    fn header_values_are_encoded_when_not_ascii() {
        assert_eq!(encode_header("weather"), "weather");
        assert!(encode_header("météo").starts_with("=?base64?"));
    }
}
