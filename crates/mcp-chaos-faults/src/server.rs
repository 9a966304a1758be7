//! The HTTP engine shared by [`FakeUpstream`](crate::FakeUpstream) and
//! [`ForwardProxy`](crate::ForwardProxy): accept loop, per-connection driver, rule
//! evaluation, journaling and fault serving.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bytes::{Bytes, BytesMut};
use http::header::{self, HeaderMap, HeaderName, HeaderValue};
use http::{Method, Request, Response, StatusCode, Uri};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinSet;

use crate::body::{ConnAction, ConnControl, FaultBody};
use crate::canary::Canaries;
use crate::error::Error;
use crate::fault::{DEFAULT_OK_BODY, Fault};
use crate::journal::{DEFAULT_JOURNAL_CAPACITY, DEFAULT_JOURNAL_HEADERS, Journal, JournalEntry};
use crate::net::{
    Background, DEFAULT_BIND, SharedStream, bind_loopback, loopback_target, set_reset_on_close,
    shutdown_both,
};
use crate::rule::{RequestView, Rule};
use crate::schedule::{Firing, ScheduleState, mix_seed};

/// How long the connection driver keeps flushing before it resets or closes a socket.
const FLUSH_GRACE: Duration = Duration::from_millis(25);
/// Request bytes kept in memory for a pass-through; larger bodies are counted, not kept.
const MAX_KEPT_REQUEST_BODY: usize = 16 * 1024 * 1024;
/// Largest origin response a pass-through relays.
const MAX_PASS_THROUGH_RESPONSE: usize = 64 * 1024 * 1024;
/// Timeout for connecting to a loopback origin.
const ORIGIN_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Hop-by-hop headers a proxy must not forward.
const HOP_BY_HOP: &[&str] = &[
    "connection",
    "proxy-connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

/// Which public type a server backs; it only changes the default healthy response and
/// whether pass-through is possible.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Upstream,
    Proxy,
}

/// Builder state shared by the HTTP server builders.
#[derive(Debug, Clone)]
pub(crate) struct HttpConfig {
    pub(crate) rules: Vec<Rule>,
    pub(crate) healthy: Option<Fault>,
    pub(crate) unmatched: Option<Fault>,
    pub(crate) seed: Option<u64>,
    pub(crate) bind: SocketAddr,
    pub(crate) journal_headers: Vec<String>,
    pub(crate) journal_capacity: usize,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            rules: Vec::new(),
            healthy: None,
            unmatched: None,
            seed: None,
            bind: DEFAULT_BIND,
            journal_headers: DEFAULT_JOURNAL_HEADERS
                .iter()
                .map(|s| (*s).to_owned())
                .collect(),
            journal_capacity: DEFAULT_JOURNAL_CAPACITY,
        }
    }
}

/// A seed that differs between runs (and between servers of one run).
pub(crate) fn fresh_seed() -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let pid = u64::from(std::process::id());
    mix_seed(nanos ^ (pid << 32), COUNTER.fetch_add(1, Ordering::Relaxed))
}

struct ActiveRule {
    rule: Rule,
    state: ScheduleState,
}

struct Plan {
    rules: Vec<ActiveRule>,
    healthy: Fault,
    unmatched: Option<Fault>,
    seed: u64,
    /// `t = 0` of time-based schedules.
    epoch: Instant,
}

impl Plan {
    fn install(&mut self, rules: Vec<Rule>, now: Instant) {
        self.rules = rules
            .into_iter()
            .enumerate()
            .map(|(i, rule)| ActiveRule {
                state: ScheduleState::new(rule.schedule.clone(), self.seed, i),
                rule,
            })
            .collect();
        self.epoch = now;
    }
}

/// The result of matching one request against the plan.
pub(crate) struct Decision {
    pub(crate) rule_index: Option<usize>,
    pub(crate) rule_name: Option<String>,
    /// Which of the rule's matched requests this is, from 1.
    pub(crate) rule_match: Option<u64>,
    /// Whether the rule's schedule fired (the rule's fault is served).
    pub(crate) faulted: bool,
    pub(crate) fault: Fault,
    pub(crate) healthy: Fault,
}

/// Serves a `CONNECT` request whose body has been read and whose fault has been decided,
/// recording its journal entry (with the fault actually served): the tunnel of
/// `crate::connect`, handed to [`start`] so that the server does not depend on it.
pub(crate) type ConnectHandler = for<'a> fn(
    &'a Ctx,
    JournalEntry,
    &'a Uri,
    Decision,
    hyper::upgrade::OnUpgrade,
) -> std::pin::Pin<
    Box<dyn std::future::Future<Output = Response<FaultBody>> + Send + 'a>,
>;

/// State shared by a server's accept loop, its connections and its public handle.
pub(crate) struct Shared {
    mode: Mode,
    connect: ConnectHandler,
    started: Instant,
    plan: Mutex<Plan>,
    pub(crate) journal: Journal,
    pub(crate) canaries: Canaries,
    journal_headers: Vec<HeaderName>,
}

impl Shared {
    fn plan(&self) -> MutexGuard<'_, Plan> {
        self.plan.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn seed(&self) -> u64 {
        self.plan().seed
    }

    /// Replaces the rules, resetting every schedule's counters and clock.
    pub(crate) fn set_rules(&self, rules: Vec<Rule>) {
        self.plan().install(rules, Instant::now());
    }

    fn decide(&self, view: &RequestView<'_>, arrived: Instant) -> Decision {
        let mut plan = self.plan();
        let elapsed = arrived.saturating_duration_since(plan.epoch);
        let default_healthy = plan.healthy.clone();
        for (index, active) in plan.rules.iter_mut().enumerate() {
            if !active.rule.matches(view) {
                continue;
            }
            let healthy = active
                .rule
                .otherwise
                .clone()
                .unwrap_or_else(|| default_healthy.clone());
            let firing = active.state.fire(elapsed);
            let fault = match firing {
                Firing::Healthy => healthy.clone(),
                Firing::Fault => active.rule.fault.clone(),
                Firing::FaultRetryAfter(secs) => match &active.rule.fault {
                    Fault::RateLimited { .. } => Fault::RateLimited {
                        retry_after_secs: secs,
                    },
                    other => other.clone(),
                },
            };
            return Decision {
                rule_index: Some(index),
                rule_name: active.rule.name.clone(),
                rule_match: Some(active.state.matched()),
                faulted: firing != Firing::Healthy,
                fault,
                healthy,
            };
        }
        Decision {
            rule_index: None,
            rule_name: None,
            rule_match: None,
            faulted: false,
            fault: plan
                .unmatched
                .clone()
                .unwrap_or_else(|| default_healthy.clone()),
            healthy: default_healthy,
        }
    }
}

/// A started HTTP server: its address, shared state and background task.
pub(crate) struct Running {
    pub(crate) addr: SocketAddr,
    pub(crate) shared: Arc<Shared>,
    pub(crate) background: Background,
}

/// Binds `config.bind` (loopback only) and serves in the background; `connect` serves the
/// `CONNECT` requests.
pub(crate) async fn start(
    config: HttpConfig,
    mode: Mode,
    connect: ConnectHandler,
) -> Result<Running, Error> {
    let listener = bind_loopback(config.bind).await?;
    let addr = listener.local_addr().map_err(|source| Error::Bind {
        addr: config.bind,
        source,
    })?;
    let seed = config.seed.unwrap_or_else(fresh_seed);
    let healthy = config.healthy.unwrap_or(match mode {
        Mode::Upstream => Fault::ok_default(),
        Mode::Proxy => Fault::PassThrough,
    });
    let now = Instant::now();
    let mut plan = Plan {
        rules: Vec::new(),
        healthy,
        unmatched: config.unmatched,
        seed,
        epoch: now,
    };
    plan.install(config.rules, now);
    let journal_headers = config
        .journal_headers
        .iter()
        .filter_map(|h| HeaderName::from_bytes(h.to_ascii_lowercase().as_bytes()).ok())
        .collect();
    let shared = Arc::new(Shared {
        mode,
        connect,
        started: now,
        plan: Mutex::new(plan),
        journal: Journal::new(config.journal_capacity),
        canaries: Canaries::from_seed(seed),
        journal_headers,
    });
    let (stop_tx, stop_rx) = oneshot::channel();
    let task = tokio::spawn(accept_loop(listener, Arc::clone(&shared), stop_rx));
    Ok(Running {
        addr,
        shared,
        background: Background::new(stop_tx, task),
    })
}

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>, mut stop: oneshot::Receiver<()>) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            _ = &mut stop => break,
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
            accepted = listener.accept() => match accepted {
                Ok((stream, _peer)) => {
                    connections.spawn(drive_connection(stream, Arc::clone(&shared)));
                }
                // Out of file descriptors and the like: back off instead of spinning.
                Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
            },
        }
    }
    drop(listener);
    connections.shutdown().await;
}

/// Serves one TCP connection with hyper, and carries out the socket-level actions
/// (reset, close, tunnel) that services and bodies request through the control channel.
async fn drive_connection(stream: TcpStream, shared: Arc<Shared>) {
    let _ = stream.set_nodelay(true);
    let io = SharedStream::new(stream);
    let raw = Arc::clone(&io.0);
    let (control, mut actions) = mpsc::unbounded_channel::<ConnAction>();

    let service = {
        let raw = Arc::clone(&raw);
        service_fn(move |req| {
            let shared = Arc::clone(&shared);
            let control = control.clone();
            let raw = Arc::clone(&raw);
            async move { Ok::<_, Infallible>(handle(req, shared, control, raw).await) }
        })
    };
    // No header-read timeout (it needs a timer): an idle keep-alive connection must stay
    // open until its client closes it, or a closing race would look like an injected
    // failure to the oracle. Clients here are local processes under test, not attackers.
    let mut builder = http1::Builder::new();
    builder.keep_alive(true);
    let mut conn = pin!(
        builder
            .serve_connection(TokioIo::new(io), service)
            .with_upgrades()
    );

    let (action, conn_done) = tokio::select! {
        biased;
        _ = conn.as_mut() => (actions.try_recv().ok(), true),
        Some(action) = actions.recv() => (Some(action), false),
    };
    match action {
        None => {}
        Some(ConnAction::Then(job)) => {
            if !conn_done {
                let _ = conn.as_mut().await;
            }
            job.await;
        }
        Some(action @ (ConnAction::Reset | ConnAction::Close)) => {
            if !conn_done {
                // Let hyper flush what it has already accepted from the body.
                let _ = tokio::time::timeout(FLUSH_GRACE, conn.as_mut()).await;
            }
            if matches!(action, ConnAction::Reset) {
                set_reset_on_close(&raw);
            } else {
                shutdown_both(&raw);
            }
        }
    }
    // Dropping `conn` drops hyper's handle on the socket; dropping `raw` closes it (with an
    // RST if linger 0 was set above).
}

/// Everything `serve` needs besides the fault.
pub(crate) struct Ctx {
    pub(crate) shared: Arc<Shared>,
    pub(crate) control: ConnControl,
    pub(crate) raw: Arc<TcpStream>,
}

fn strip_port(authority: &str) -> Option<String> {
    authority.parse::<http::uri::Authority>().ok().map(|a| {
        a.host()
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned()
    })
}

async fn handle(
    mut req: Request<Incoming>,
    shared: Arc<Shared>,
    control: ConnControl,
    raw: Arc<TcpStream>,
) -> Response<FaultBody> {
    let arrived = Instant::now();
    let at_ms = u64::try_from(
        arrived
            .saturating_duration_since(shared.started)
            .as_millis(),
    )
    .unwrap_or(u64::MAX);
    let is_connect = req.method() == Method::CONNECT;
    let method = req.method().as_str().to_owned();
    let uri = req.uri().clone();
    let host = uri
        .host()
        .map(|h| h.trim_start_matches('[').trim_end_matches(']').to_owned())
        .or_else(|| {
            req.headers()
                .get(header::HOST)
                .and_then(|h| h.to_str().ok())
                .and_then(strip_port)
        });
    let target = if is_connect {
        uri.authority()
            .map(|a| a.as_str().to_owned())
            .unwrap_or_else(|| uri.to_string())
    } else {
        uri.path_and_query()
            .map(|p| p.as_str().to_owned())
            .unwrap_or_else(|| "/".to_owned())
    };
    let path = if is_connect { "" } else { uri.path() };
    let headers: Vec<(String, String)> = shared
        .journal_headers
        .iter()
        .flat_map(|name| {
            req.headers().get_all(name).iter().map(move |v| {
                (
                    name.as_str().to_owned(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
        })
        .collect();

    let decision = shared.decide(
        &RequestView {
            method: &method,
            path,
            host: host.as_deref(),
            headers: req.headers(),
        },
        arrived,
    );

    let ctx = Ctx {
        shared: Arc::clone(&shared),
        control,
        raw,
    };
    let mut entry = JournalEntry {
        seq: 0,
        at_ms,
        method,
        host,
        target,
        headers,
        body_bytes: 0,
        rule_index: decision.rule_index,
        rule_name: decision.rule_name.clone(),
        rule_match: decision.rule_match,
        faulted: decision.faulted,
        fault: decision.fault.clone(),
        failure: decision.fault.is_failure(),
        note: None,
    };

    if is_connect {
        let on_upgrade = hyper::upgrade::on(&mut req);
        let (_, body) = req.into_parts();
        entry.body_bytes = read_body(body, false).await.1;
        return (ctx.shared.connect)(&ctx, entry, &uri, decision, on_upgrade).await;
    }

    let needs_body = matches!(decision.fault, Fault::PassThrough)
        || (matches!(decision.fault, Fault::Delay { .. })
            && matches!(decision.healthy, Fault::PassThrough));
    let (parts, body) = req.into_parts();
    let (kept, body_bytes) = read_body(body, needs_body).await;
    entry.body_bytes = body_bytes;
    let request = Forwardable {
        method: parts.method,
        uri: parts.uri,
        headers: parts.headers,
        body: kept,
    };

    if matches!(decision.fault, Fault::PassThrough) {
        let (response, served, note) = pass_through(&ctx, &request).await;
        entry.failure = served.is_failure();
        entry.fault = served;
        entry.note = Some(note);
        shared.journal.record(entry);
        return response;
    }
    shared.journal.record(entry);
    serve(&ctx, &decision.fault, &decision.healthy, &request).await
}

/// The parts of a request a pass-through needs.
pub(crate) struct Forwardable {
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
}

/// Reads a request body to the end, counting every byte and keeping up to
/// [`MAX_KEPT_REQUEST_BODY`] of them when `keep` is set. A body that errors (the client
/// went away) is counted up to the error.
pub(crate) async fn read_body(mut body: Incoming, keep: bool) -> (Bytes, u64) {
    let mut kept = BytesMut::new();
    let mut total = 0u64;
    while let Some(frame) = body.frame().await {
        let Ok(frame) = frame else { break };
        if let Ok(data) = frame.into_data() {
            total = total.saturating_add(data.len() as u64);
            if keep && kept.len() + data.len() <= MAX_KEPT_REQUEST_BODY {
                kept.extend_from_slice(&data);
            }
        }
    }
    (kept.freeze(), total)
}

/// The healthy body that body-shaping faults shape.
fn healthy_body(healthy: &Fault) -> (Bytes, String) {
    match healthy {
        Fault::Ok { body, content_type } if !body.is_empty() => {
            (body.clone(), content_type.clone())
        }
        _ => (
            Bytes::from_static(DEFAULT_OK_BODY.as_bytes()),
            "application/json".to_owned(),
        ),
    }
}

fn header_value(value: &str) -> HeaderValue {
    HeaderValue::from_str(value).unwrap_or_else(|_| HeaderValue::from_static("invalid"))
}

pub(crate) fn with_canary_headers(
    mut response: Response<FaultBody>,
    canaries: &Canaries,
) -> Response<FaultBody> {
    let headers = response.headers_mut();
    for (name, value) in canaries.headers() {
        headers.insert(name, header_value(&value));
    }
    response
}

fn plain_response(status: StatusCode, content_type: &str, body: FaultBody) -> Response<FaultBody> {
    let mut response = Response::new(body);
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, header_value(content_type));
    response
}

/// A JSON error response for a status fault, with canaries in headers and body.
/// `note`, when given, is added to the message (used for proxy refusals).
pub(crate) fn error_response(
    fault: &Fault,
    canaries: &Canaries,
    note: Option<&str>,
) -> Response<FaultBody> {
    let (status, code, message) = match fault {
        Fault::NotFound => (StatusCode::NOT_FOUND, "not_found", "The requested resource was not found.".to_owned()),
        Fault::Gone => (StatusCode::GONE, "gone", "This resource has been permanently removed; the API version it belonged to is retired.".to_owned()),
        Fault::Unauthorized => (StatusCode::UNAUTHORIZED, "unauthorized", "Invalid or expired API key.".to_owned()),
        Fault::Forbidden => (StatusCode::FORBIDDEN, "forbidden", "Access to this resource is forbidden for this API key.".to_owned()),
        Fault::RateLimited { retry_after_secs } => (StatusCode::TOO_MANY_REQUESTS, "rate_limited", format!("Rate limit exceeded. Retry after {retry_after_secs} seconds.")),
        Fault::ServerError => (StatusCode::INTERNAL_SERVER_ERROR, "internal_error", "Internal server error.".to_owned()),
        Fault::GatewayTimeout => (StatusCode::GATEWAY_TIMEOUT, "gateway_timeout", "Gateway timeout: the service did not respond in time.".to_owned()),
        Fault::Unavailable => (StatusCode::SERVICE_UNAVAILABLE, "unavailable", "Service temporarily unavailable. Please retry later.".to_owned()),
        _ => (StatusCode::BAD_GATEWAY, "bad_gateway", "Bad gateway: the service received an invalid response from its backend.".to_owned()),
    };
    let message = match note {
        Some(note) => format!("{message} ({note})"),
        None => message,
    };
    let body = serde_json::json!({
        "error": {
            "code": code,
            "status": status.as_u16(),
            "message": message,
        },
        "debug": {
            "upstream": canaries.hostname(),
            "backend": format!("{}:5432", canaries.private_ip()),
            "handler": canaries.source_path(),
            "credential": canaries.api_key(),
            "query": canaries.sql(),
            "frame": canaries.java_frame(),
            "trace": canaries.stack_trace(),
        }
    });
    let mut response = plain_response(
        status,
        "application/json",
        FaultBody::full(body.to_string()),
    );
    match fault {
        Fault::RateLimited { retry_after_secs } => {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(*retry_after_secs));
        }
        Fault::Unauthorized => {
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"api\", error=\"invalid_token\""),
            );
        }
        _ => {}
    }
    with_canary_headers(response, canaries)
}

fn malformed_json_body(c: &Canaries) -> String {
    format!(
        "{{\"status\":\"ok\",\"data\":{{\"id\":1,\"query\":\"{}\",\"token\":\"{}\",\"items\":[{{\"name\":\"alpha\"}},{{\"name\":\n{}\n",
        c.sql(),
        c.api_key(),
        c.stack_trace()
    )
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn wrong_content_type_body(c: &Canaries) -> String {
    format!(
        "<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head><body>\n<h1>Bad Gateway</h1>\n<p>The proxy at {host} ({ip}) received an invalid response from {path}.</p>\n<pre>{trace}</pre>\n<p>Request key: {key}</p>\n<hr><address>nginx/1.18.0 (Ubuntu) at {host}</address>\n</body></html>\n",
        host = c.hostname(),
        ip = c.private_ip(),
        path = c.source_path(),
        trace = html_escape(c.stack_trace()),
        key = c.api_key(),
    )
}

/// The response for body-cutting faults: full `Content-Length`, a prefix of the body,
/// then `action`.
fn cut_response(
    ctx: &Ctx,
    healthy: &Fault,
    fraction: f64,
    action: ConnAction,
) -> Response<FaultBody> {
    let (body, content_type) = healthy_body(healthy);
    let len = body.len();
    let fraction = if fraction.is_nan() {
        0.5
    } else {
        fraction.clamp(0.0, 1.0)
    };
    let keep = ((len as f64 * fraction).floor() as usize).min(len.saturating_sub(1));
    let mut response = plain_response(
        StatusCode::OK,
        &content_type,
        FaultBody::cut(body.slice(..keep), action, ctx.control.clone()),
    );
    response
        .headers_mut()
        .insert(header::CONTENT_LENGTH, HeaderValue::from(len as u64));
    with_canary_headers(response, &ctx.shared.canaries)
}

/// Never returns: waits until the client goes away (then closes the connection) or the
/// server shuts down (which drops this future).
pub(crate) async fn hang(ctx: &Ctx) -> Response<FaultBody> {
    let mut probe = [0u8; 1];
    match ctx.raw.peek(&mut probe).await {
        // EOF or error: the client gave up; release the connection.
        Ok(0) | Err(_) => {
            let _ = ctx.control.send(ConnAction::Close);
        }
        // The client sent more (pipelining): keep hanging until shutdown.
        Ok(_) => {}
    }
    std::future::pending().await
}

/// Asks the connection driver for `action` and never answers.
pub(crate) async fn abort_connection(ctx: &Ctx, action: ConnAction) -> Response<FaultBody> {
    let _ = ctx.control.send(action);
    std::future::pending().await
}

/// Serves `fault` (with `healthy` as the healthy response it may need).
async fn serve(
    ctx: &Ctx,
    fault: &Fault,
    healthy: &Fault,
    request: &Forwardable,
) -> Response<FaultBody> {
    let canaries = &ctx.shared.canaries;
    match fault {
        Fault::Ok { body, content_type } => {
            plain_response(StatusCode::OK, content_type, FaultBody::full(body.clone()))
        }
        Fault::NotFound
        | Fault::Gone
        | Fault::Unauthorized
        | Fault::Forbidden
        | Fault::RateLimited { .. }
        | Fault::ServerError
        | Fault::BadGateway
        | Fault::Unavailable
        | Fault::GatewayTimeout => error_response(fault, canaries, None),
        Fault::Delay { ms } => {
            tokio::time::sleep(Duration::from_millis(*ms)).await;
            let after = match healthy {
                Fault::Delay { .. } => Fault::ok_default(),
                other => other.clone(),
            };
            if matches!(after, Fault::PassThrough) {
                return pass_through(ctx, request).await.0;
            }
            Box::pin(serve(ctx, &after, &after, request)).await
        }
        Fault::Hang => hang(ctx).await,
        Fault::Reset => abort_connection(ctx, ConnAction::Reset).await,
        Fault::CloseBeforeHeaders => abort_connection(ctx, ConnAction::Close).await,
        Fault::ResetMidBody { fraction } => {
            cut_response(ctx, healthy, *fraction, ConnAction::Reset)
        }
        Fault::TruncatedBody { fraction } => {
            cut_response(ctx, healthy, *fraction, ConnAction::Close)
        }
        Fault::MalformedJson => with_canary_headers(
            plain_response(
                StatusCode::OK,
                "application/json",
                FaultBody::full(malformed_json_body(canaries)),
            ),
            canaries,
        ),
        Fault::WrongContentType => with_canary_headers(
            plain_response(
                StatusCode::OK,
                "text/html; charset=utf-8",
                FaultBody::full(wrong_content_type_body(canaries)),
            ),
            canaries,
        ),
        Fault::SlowBody {
            chunk_bytes,
            interval_ms,
        } => {
            let (body, content_type) = healthy_body(healthy);
            plain_response(
                StatusCode::OK,
                &content_type,
                FaultBody::dribble(body, *chunk_bytes, Duration::from_millis(*interval_ms)),
            )
        }
        Fault::HugeBody { bytes } => with_canary_headers(
            plain_response(StatusCode::OK, "application/json", FaultBody::huge(*bytes)),
            canaries,
        ),
        Fault::PassThrough => pass_through(ctx, request).await.0,
    }
}

/// Forwards an absolute-form request to its loopback origin. Returns the response, the
/// fault that describes what was served, and a journal note.
async fn pass_through(ctx: &Ctx, request: &Forwardable) -> (Response<FaultBody>, Fault, String) {
    let canaries = &ctx.shared.canaries;
    let refuse = |note: String| {
        let response = error_response(&Fault::BadGateway, canaries, Some(&note));
        (response, Fault::BadGateway, note)
    };
    if ctx.shared.mode == Mode::Upstream || request.uri.scheme().is_none() {
        return refuse(
            "pass-through refused: not an absolute-form proxy request, so there is no origin"
                .to_owned(),
        );
    }
    if request.uri.scheme_str() != Some("http") {
        return refuse(format!(
            "pass-through refused: scheme {:?} is not supported (plain http only)",
            request.uri.scheme_str().unwrap_or("")
        ));
    }
    let host = request.uri.host().unwrap_or("");
    let Some(ip) = loopback_target(host) else {
        return refuse(format!(
            "pass-through refused: origin {host:?} is not a loopback address"
        ));
    };
    let port = request.uri.port_u16().unwrap_or(80);
    let origin = SocketAddr::new(ip, port);
    match forward(origin, request).await {
        Ok((status, headers, body)) => {
            let mut response = Response::new(FaultBody::full(body));
            *response.status_mut() = status;
            for (name, value) in &headers {
                if !HOP_BY_HOP.contains(&name.as_str()) && name != header::CONTENT_LENGTH {
                    response.headers_mut().append(name, value.clone());
                }
            }
            let note = format!("passed through to {origin}: {}", status.as_u16());
            (response, Fault::PassThrough, note)
        }
        Err(reason) => refuse(format!("pass-through to {origin} failed: {reason}")),
    }
}

async fn forward(
    origin: SocketAddr,
    request: &Forwardable,
) -> Result<(StatusCode, HeaderMap, Bytes), String> {
    let stream = tokio::time::timeout(ORIGIN_CONNECT_TIMEOUT, TcpStream::connect(origin))
        .await
        .map_err(|_| "connect timed out".to_owned())?
        .map_err(|e| format!("connect failed: {e}"))?;
    let (mut sender, conn) =
        hyper::client::conn::http1::handshake::<_, Full<Bytes>>(TokioIo::new(stream))
            .await
            .map_err(|e| format!("handshake failed: {e}"))?;
    let path = request
        .uri
        .path_and_query()
        .map(|p| p.as_str())
        .unwrap_or("/");
    let mut builder = Request::builder().method(request.method.clone()).uri(path);
    for (name, value) in &request.headers {
        if !HOP_BY_HOP.contains(&name.as_str()) && name != header::HOST {
            builder = builder.header(name, value);
        }
    }
    if let Some(authority) = request.uri.authority() {
        builder = builder.header(header::HOST, authority.as_str());
    }
    let outgoing = builder
        .body(Full::new(request.body.clone()))
        .map_err(|e| format!("invalid request: {e}"))?;
    let fetch = async move {
        let response = sender
            .send_request(outgoing)
            .await
            .map_err(|e| format!("request failed: {e}"))?;
        let (parts, body) = response.into_parts();
        let body = Limited::new(body, MAX_PASS_THROUGH_RESPONSE)
            .collect()
            .await
            .map_err(|e| format!("reading the origin's body failed: {e}"))?
            .to_bytes();
        Ok::<_, String>((parts.status, parts.headers, body))
    };
    let mut fetch = pin!(fetch);
    let mut conn = pin!(conn);
    tokio::select! {
        result = fetch.as_mut() => result,
        _ = conn.as_mut() => fetch.await,
    }
}
