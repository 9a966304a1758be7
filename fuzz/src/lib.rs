//! Shared code of the mcp-chaos fuzz targets: the properties of the request parser, and a
//! driver that feeds the bundled fixture server in-process and judges every answer with
//! [`mcp_chaos::fuzz::Expected`]. It doubles as the worked example for server authors: replace
//! [`Fixture::handle`] with your server's frame handler.

use std::sync::OnceLock;

use arbitrary::Arbitrary;
use mcp_chaos::fixture::{Action, FetchOutcome, Fixture, Flaw};
use mcp_chaos::fuzz::{Expected, Request};
use mcp_chaos::protocol::ProtocolVersion;
use mcp_chaos::wire::{self, BatchItem, Message};

/// The environment variable naming flaws to plant in the fixture (comma-separated flaw names,
/// e.g. `MCP_CHAOS_FUZZ_FLAW=panic-in-handler`); unset: the correct fixture.
pub const FLAW_ENV: &str = "MCP_CHAOS_FUZZ_FLAW";

/// The flaws named by [`FLAW_ENV`], read once. An unknown name stops the run.
pub fn flaws_from_env() -> &'static [Flaw] {
    static FLAWS: OnceLock<Vec<Flaw>> = OnceLock::new();
    FLAWS.get_or_init(|| {
        let names = std::env::var(FLAW_ENV).unwrap_or_default();
        names
            .split(',')
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(|n| match n.parse::<Flaw>() {
                Ok(flaw) => flaw,
                Err(e) => {
                    eprintln!("{FLAW_ENV}: {e}");
                    std::process::exit(2);
                }
            })
            .collect()
    })
}

/// What classifying a frame said, in a form that survives re-serialisation: the class and id
/// of a message (the method of a notification), item by item for a batch, and the error kind
/// of an invalid batch element.
pub fn signature(message: &Message) -> String {
    match message {
        Message::Request(r) => format!("request {} {}", r.id(), r.method()),
        Message::Notification(n) => format!("notification {}", n.method()),
        Message::Response(r) => format!("{} {}", message.class(), r.id()),
        Message::Batch(b) => {
            let items: Vec<String> = b
                .items()
                .iter()
                .map(|item| match item {
                    BatchItem::Valid(m) => signature(m),
                    BatchItem::Invalid { error, .. } => format!("invalid {}", error.kind()),
                })
                .collect();
            format!("batch [{}]", items.join(", "))
        }
    }
}

/// The request parser's properties on one frame: it never panics; a classified message
/// re-serialised with [`Message::to_bytes`] parses to the same signature; every error has a
/// non-empty `Display` and a kebab-case `kind()`.
pub fn check_parser(frame: &[u8]) {
    match wire::parse(frame) {
        Ok(message) => {
            let bytes = message.to_bytes();
            match wire::parse(&bytes) {
                Ok(again) => assert_eq!(
                    signature(&message),
                    signature(&again),
                    "re-serialised as {}",
                    String::from_utf8_lossy(&bytes)
                ),
                Err(e) => panic!(
                    "{} re-serialised as {} does not parse: {e}",
                    signature(&message),
                    String::from_utf8_lossy(&bytes)
                ),
            }
        }
        Err(error) => {
            assert!(
                !error.to_string().is_empty(),
                "{error:?} displays as nothing"
            );
            let kind = error.kind();
            assert!(
                kind.starts_with(|c: char| c.is_ascii_lowercase())
                    && kind
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
                "{error:?} has kind {kind:?}"
            );
        }
    }
}

/// What the fixture's upstream does when a tool call fetches (the `weather` and `get_record`
/// tools), chosen by the fuzzer.
#[derive(Debug, Clone, Arbitrary)]
pub enum Upstream {
    /// A JSON response with one of a few statuses.
    Json {
        /// Index into 200, 200, 201, 404, 410, 401, 403, 429, 500, 503, 302, 418.
        status: u8,
        /// The body.
        body: Body,
    },
    /// A non-JSON response.
    Text {
        /// As for `Json`.
        status: u8,
        /// The body.
        body: Vec<u8>,
        /// A `Retry-After` header.
        retry_after: Option<String>,
    },
    /// No answer within the timeout.
    TimedOut,
    /// The connection broke.
    Broken,
    /// More than 1 MiB of body.
    TooLarge,
}

/// An upstream JSON body.
#[derive(Debug, Clone, Arbitrary)]
pub enum Body {
    /// `{"data": {"name": "widget", "value": 1.5}}`.
    Record,
    /// `{"temp_c": 21, "sky": "clear"}`.
    Weather,
    /// `{}`.
    Empty,
    /// Any bytes.
    Raw(Vec<u8>),
}

const STATUSES: [u16; 12] = [200, 200, 201, 404, 410, 401, 403, 429, 500, 503, 302, 418];

impl Upstream {
    /// The outcome handed to [`Fixture::complete`].
    pub fn outcome(&self) -> FetchOutcome {
        let status = |i: &u8| STATUSES[usize::from(*i) % STATUSES.len()];
        match self {
            Upstream::Json { status: s, body } => FetchOutcome::Response {
                status: status(s),
                content_type: Some("application/json".into()),
                retry_after: None,
                body: match body {
                    Body::Record => br#"{"data":{"name":"widget","value":1.5}}"#.to_vec(),
                    Body::Weather => br#"{"temp_c":21,"sky":"clear"}"#.to_vec(),
                    Body::Empty => b"{}".to_vec(),
                    Body::Raw(bytes) => bytes.clone(),
                },
            },
            Upstream::Text {
                status: s,
                body,
                retry_after,
            } => FetchOutcome::Response {
                status: status(s),
                content_type: Some("text/html".into()),
                retry_after: retry_after.clone(),
                body: body.clone(),
            },
            Upstream::TimedOut => FetchOutcome::TimedOut { timeout_ms: 2_000 },
            Upstream::Broken => FetchOutcome::Broken("connection reset by peer".into()),
            Upstream::TooLarge => FetchOutcome::TooLarge,
        }
    }
}

/// The input of the `mcp_request` targets: up to four frames sent in turn to one fixture, and
/// what its upstream does for each tool call that fetches.
#[derive(Debug, Clone, Arbitrary)]
pub struct Session {
    /// The frames (the first four are sent).
    pub messages: Vec<Request>,
    /// Upstream outcomes, used in turn (none: the connection breaks).
    pub upstream: Vec<Upstream>,
}

/// The URL the fixture's upstream tools call; nothing is fetched in-process.
const UPSTREAM: &str = "http://127.0.0.1:9/upstream";

/// Sends one frame to `server` and returns what it wrote, completing upstream fetches with
/// `upstream`. `None` when the server exited or hung: allowed only with flaws planted.
fn exchange(
    server: &mut Fixture,
    frame: &[u8],
    upstream: &mut dyn Iterator<Item = FetchOutcome>,
) -> Option<Vec<Vec<u8>>> {
    let flawed = !server.flaws().is_empty();
    let mut written = Vec::new();
    let mut actions = server.handle(frame);
    let mut i = 0;
    while i < actions.len() {
        match actions[i].clone() {
            Action::Write(bytes) => written.push(bytes),
            // Statuses apply over HTTP only; no call is cancelled here, so none is aborted.
            Action::Log(_) | Action::HttpStatus(_) | Action::Abort { .. } => {}
            Action::Fetch { call, .. } => {
                let outcome = upstream
                    .next()
                    .unwrap_or_else(|| FetchOutcome::Broken("no outcome".into()));
                actions.extend(server.complete(call, &outcome));
            }
            action @ (Action::Exit(_) | Action::Hang) => {
                assert!(
                    flawed,
                    "the correct fixture took {action:?} on {}",
                    wire::excerpt(frame, 500)
                );
                return None;
            }
        }
        i += 1;
    }
    Some(written)
}

/// Drives a fixture with `flaws` planted through `session`, judging every answer: no panic,
/// every request answered exactly once with a well-formed response carrying its id, no answer
/// to a notification (see [`Expected`]). Exits and hangs end the session, and are allowed only
/// with flaws planted.
pub fn run_session(flaws: &[Flaw], session: &Session) {
    let mut server = Fixture::new(flaws).with_upstream(UPSTREAM);
    let mut upstream = session.upstream.iter().map(Upstream::outcome).cycle();
    for msg in session.messages.iter().take(4) {
        let (frame, expected) = msg.to_bytes_with_expected();
        let Some(written) = exchange(&mut server, &frame, &mut upstream) else {
            return;
        };
        if let Err(violation) = expected.check(&written) {
            panic!("{violation}\n  sent: {}", wire::excerpt(&frame, 500));
        }
    }
}

/// Sends raw bytes to a fixture with `flaws` planted, and judges the answer as owed to that
/// frame under 2025-03-26 (which defines batches).
pub fn run_bytes(flaws: &[Flaw], frame: &[u8]) {
    let mut server = Fixture::new(flaws).with_upstream(UPSTREAM);
    let mut upstream = std::iter::repeat_with(|| {
        Upstream::Json {
            status: 0,
            body: Body::Record,
        }
        .outcome()
    });
    let Some(written) = exchange(&mut server, frame, &mut upstream) else {
        return;
    };
    let expected = Expected::of_frame(frame, ProtocolVersion::V2025_03_26);
    if let Err(violation) = expected.check(&written) {
        panic!("{violation}\n  sent: {}", wire::excerpt(frame, 500));
    }
}
