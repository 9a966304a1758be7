//! Shared code of the mcp-chaos fuzz targets: the properties of the request parser, and a
//! driver that feeds the bundled fixture server in-process and judges every answer with
//! [`mcp_chaos::fuzz::Expected`]. It doubles as the worked example for server authors: replace
//! [`Fixture::handle`] with your server's frame handler.
#![forbid(unsafe_code)]

use std::sync::OnceLock;

use arbitrary::Arbitrary;
use mcp_chaos_fixture::{Action, FetchOutcome, Fixture, Flaw};
use mcp_chaos::fuzz::{Expected, Request};
use mcp_chaos::generate::{Case, GenOptions, Generator, KNOWN_FORMATS};
use mcp_chaos::protocol::ProtocolVersion;
use mcp_chaos::protocol::SchemaDialect;
use mcp_chaos::sse;
use mcp_chaos::wire::{self, BatchItem, Message};
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use serde_json::{Map as JsonMap, Value};

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
/// of an invalid batch element. Borrowed from the message: comparing two costs no allocation.
#[derive(Debug, PartialEq, Eq)]
pub enum Signature<'a> {
    /// A request's id and method.
    Request(&'a wire::RequestId, &'a str),
    /// A notification's method.
    Notification(&'a str),
    /// A response's class (`response` or `error response`) and id.
    Response(&'static str, &'a wire::ResponseId),
    /// A batch, element by element.
    Batch(Vec<Signature<'a>>),
    /// An invalid batch element's error kind.
    Invalid(&'static str),
}

/// The [`Signature`] of `message`.
pub fn signature(message: &Message) -> Signature<'_> {
    match message {
        Message::Request(r) => Signature::Request(r.id(), r.method()),
        Message::Notification(n) => Signature::Notification(n.method()),
        Message::Response(r) => Signature::Response(message.class(), r.id()),
        Message::Batch(b) => Signature::Batch(
            b.items()
                .iter()
                .map(|item| match item {
                    BatchItem::Valid(m) => signature(m),
                    BatchItem::Invalid { error, .. } => Signature::Invalid(error.kind()),
                })
                .collect(),
        ),
    }
}

/// A `fmt::Write` sink that only records whether anything non-empty was written, and ends the
/// formatting there (the rest of the text is not needed to know it is not empty).
#[derive(Default)]
struct Wrote(bool);

impl std::fmt::Write for Wrote {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        if s.is_empty() {
            return Ok(());
        }
        self.0 = true;
        Err(std::fmt::Error)
    }
}

/// The request parser's properties on one frame: it never panics; a classified message
/// re-serialised with [`Message::to_bytes`] parses to the same [`Signature`] (class and id,
/// per element for a batch); every error has a non-empty `Display` and a kebab-case `kind()`.
pub fn check_parser(frame: &[u8]) {
    match wire::parse(frame) {
        Ok(message) => {
            let bytes = message.to_bytes();
            // `parse` is a pure function: a frame that already is its own serialisation
            // re-parses to exactly what it parsed to, so the round trip has nothing to check.
            if bytes == frame {
                return;
            }
            match wire::parse(&bytes) {
                Ok(again) => assert_eq!(
                    signature(&message),
                    signature(&again),
                    "re-serialised as {}",
                    String::from_utf8_lossy(&bytes)
                ),
                Err(e) => panic!(
                    "{:?} re-serialised as {} does not parse: {e}",
                    signature(&message),
                    String::from_utf8_lossy(&bytes)
                ),
            }
        }
        Err(error) => {
            let mut wrote = Wrote::default();
            let _ = std::fmt::write(&mut wrote, format_args!("{error}"));
            assert!(wrote.0, "{error:?} displays as nothing");
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
            // A request left unanswered (with progress reported forever) is a hang too.
            action @ (Action::Exit(_) | Action::Hang | Action::ReportProgress { .. }) => {
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
    let mut server = Fixture::new(flaws).with_upstream(UPSTREAM).initialized();
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
    let mut server = Fixture::new(flaws).with_upstream(UPSTREAM).initialized();
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

/// Everything an SSE reader produced for one stream: the dispatched events, the anomalies
/// reported by [`sse::Reader::finish`], and the reader's own event count.
#[derive(Debug, PartialEq, Eq)]
pub struct SseOutcome {
    /// The events, in order.
    pub events: Vec<sse::Event>,
    /// What `finish` reported.
    pub anomalies: Vec<sse::Anomaly>,
    /// [`sse::Reader::events`] just before `finish`.
    pub counted: usize,
}

/// Feeds `chunks` in turn to a fresh [`sse::Reader`] and ends the stream.
pub fn read_sse<'a>(chunks: impl IntoIterator<Item = &'a [u8]>) -> SseOutcome {
    let mut reader = sse::Reader::new();
    let mut events = Vec::new();
    for chunk in chunks {
        events.extend(reader.push(chunk));
    }
    let counted = reader.events();
    SseOutcome {
        events,
        anomalies: reader.finish(),
        counted,
    }
}

/// Chunk lengths drawn from the stream itself: the input read backwards from its last byte,
/// each byte modulo 9 (0 is an empty chunk, which a transport may deliver, but never two in
/// a row), cycling. The fuzzer moves the split points by mutating the tail of its input.
pub fn chunks_from_tail(data: &[u8]) -> Vec<&[u8]> {
    let mut chunks = Vec::new();
    let mut at = 0;
    let mut k = 0;
    let mut after_empty = false;
    while at < data.len() {
        let mut len = usize::from(data[data.len() - 1 - k % data.len()] % 9);
        if after_empty {
            len = len.max(1);
        }
        after_empty = len == 0;
        let end = (at + len).min(data.len());
        chunks.push(&data[at..end]);
        at = end;
        k += 1;
    }
    chunks
}

/// The SSE reader's properties on one stream (`data`, the raw body bytes): it never panics;
/// the events and anomalies are the same whether the body arrives in one chunk, one byte at a
/// time with empty chunks between, or in chunks whose lengths come from the input; the event
/// count matches the events returned; no field carries a line terminator (nor the id a NUL);
/// every anomaly displays a non-empty reason; and an event left open at the end (reported as
/// unterminated) is exactly the one dispatched when a blank line is appended.
pub fn check_sse(data: &[u8]) {
    let whole = read_sse([data]);
    assert_eq!(
        whole.counted,
        whole.events.len(),
        "events() disagrees with the events returned"
    );
    for event in &whole.events {
        for (name, field) in [("event", &event.event), ("data", &event.data)] {
            assert!(
                !field.contains(['\r']) && (name == "data" || !field.contains('\n')),
                "{name} of {event:?} holds a line terminator"
            );
        }
        if let Some(id) = &event.id {
            assert!(
                !id.contains(['\r', '\n', '\0']),
                "id of {event:?} holds a terminator or NUL"
            );
        }
    }
    for anomaly in &whole.anomalies {
        assert!(
            !anomaly.to_string().is_empty(),
            "{anomaly:?} displays as nothing"
        );
    }

    let bytewise = read_sse(
        data.chunks(1)
            .flat_map(|byte| [byte, &[][..]])
            .collect::<Vec<_>>(),
    );
    assert_eq!(whole, bytewise, "one chunk vs one byte at a time");
    let drawn = chunks_from_tail(data);
    let split = read_sse(drawn.iter().copied());
    assert_eq!(
        whole,
        split,
        "one chunk vs chunks of {:?} bytes",
        drawn.iter().map(|c| c.len()).collect::<Vec<_>>()
    );

    // Terminating the stream dispatches the open event, and only it.
    let open: Vec<&String> = whole
        .anomalies
        .iter()
        .filter_map(|a| match a {
            sse::Anomaly::UnterminatedEvent(data) => Some(data),
            _ => None,
        })
        .collect();
    assert!(open.len() <= 1, "several open events: {open:?}");
    let closed = read_sse([data, b"\n\n"]);
    assert!(
        !closed
            .anomalies
            .iter()
            .any(|a| matches!(a, sse::Anomaly::UnterminatedEvent(_))),
        "still open after a blank line: {:?}",
        closed.anomalies
    );
    assert_eq!(
        closed.events[..closed.events.len().min(whole.events.len())],
        whole.events[..],
        "appending a blank line changed the earlier events"
    );
    let extra: Vec<&String> = closed.events[whole.events.len()..]
        .iter()
        .map(|e| &e.data)
        .collect();
    assert_eq!(
        extra, open,
        "the blank line dispatched other than the open event"
    );
}

/// How deep an [`ArbSchema`] nests subschemas (the root is depth 0).
pub const SCHEMA_DEPTH: u32 = 3;
/// At most this many `$defs` in an [`ArbSchema`], named `d0`, `d1`, ...
pub const SCHEMA_DEFS: usize = 2;

/// Property names: plain ones, and `url`/`email`, which the generator treats specially.
const PROP_NAMES: &[&str] = &["a", "b", "c", "name", "url", "email"];
/// A format the generator does not know (an annotation only), drawn beside
/// [`mcp_chaos::generate::KNOWN_FORMATS`].
const UNKNOWN_FORMAT: &str = "color";
/// Small ECMA-262 patterns: anchored and not, classes, quantifiers, alternation, escapes, and
/// the forms the generator only filters (lookahead, backreference).
const PATTERNS: &[&str] = &[
    "^[a-z]+$",
    "^\\d{2,4}$",
    "x",
    "^[A-Z][a-z]*$",
    "^(foo|bar)-\\d+$",
    "^\\w+@\\w+$",
    "^.{3}$",
    "^[^/]*$",
    "^\\s*$",
    "a*b?c+",
    "^[0-9a-f]{8}$",
    "^\\u00e9+$",
    "^(?!a)\\w*$",
    "^(a|b)\\1$",
    "^$",
    "\\.json$",
];
/// Numbers for bounds, `multipleOf` (the positive ones) and `enum`/`const`.
const NUMBERS: &[f64] = &[
    0.0, 1.0, -1.0, 2.0, 3.0, 5.0, 10.0, -7.0, 0.5, 2.5, 0.1, 1.5, 100.0, -0.25, 0.25, 1e9,
];
/// Whole JSON values for `enum` and `const`, including an off-loopback URL (which the
/// generator must never emit).
const CONSTANTS: &[&str] = &[
    "null",
    "true",
    "false",
    "0",
    "1",
    "-3",
    "2.5",
    "\"\"",
    "\"a\"",
    "\"abc\"",
    "\"http://127.0.0.1:9/x\"",
    "\"http://example.com/\"",
    "[]",
    "[1,\"a\"]",
    "{}",
    "{\"a\":1}",
    "{\"name\":\"x\",\"url\":\"http://localhost/\"}",
];

/// An arbitrary JSON Schema (2020-12, no `$schema`) of bounded depth ([`SCHEMA_DEPTH`]),
/// built from the keywords `mcp_chaos::generate` supports: `type` (single and lists),
/// `properties`/`required`/`additionalProperties`/`dependentRequired`/`minProperties`/
/// `maxProperties`, `enum`/`const`, `minimum`/`maximum`/`exclusiveMinimum`/
/// `exclusiveMaximum`/`multipleOf`, `minLength`/`maxLength`/`pattern` (from a list of small
/// patterns)/`format`, `items`/`prefixItems`/`minItems`/`maxItems`/`uniqueItems`/`contains`/
/// `minContains`/`maxContains`, `$ref` to `$defs` and to the root, `allOf`/`anyOf`/`oneOf`/
/// `not`, `if`/`then`/`else`, and boolean schemas.
///
/// Decoding is structure-aware: every input decodes to a schema, the first choices of each
/// decision are the simplest (an exhausted input yields `{}`-like leaves), and the bytes steer
/// which keywords appear with which values. `seed` seeds the proptest runner that draws values.
#[derive(Clone)]
pub struct ArbSchema {
    /// The schema document.
    pub schema: serde_json::Value,
    /// Seed of the value-drawing runner.
    pub seed: u64,
}

impl std::fmt::Debug for ArbSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "seed {} schema {}", self.seed, self.schema)
    }
}

/// `true` with probability 1/`n`; `false` once the input is exhausted.
fn one_in(u: &mut arbitrary::Unstructured<'_>, n: u8) -> arbitrary::Result<bool> {
    Ok(u.arbitrary::<u8>()? % n == 1)
}

fn number(u: &mut arbitrary::Unstructured<'_>, integer: bool) -> arbitrary::Result<Value> {
    let n = *u.choose(NUMBERS)?;
    Ok(
        if integer || n.fract() == 0.0 && n.abs() < 1e15 && one_in(u, 2)? {
            // Integral values written as integers (`3`), or as the float that the schema writer
            // might have typed (`3.0`).
            Value::from(n.trunc() as i64)
        } else {
            Value::from(n)
        },
    )
}

fn constant(u: &mut arbitrary::Unstructured<'_>) -> arbitrary::Result<Value> {
    let text = u.choose(CONSTANTS)?;
    Ok(serde_json::from_str(text).unwrap_or(Value::Null))
}

struct SchemaBuilder {
    defs: usize,
}

impl SchemaBuilder {
    fn node(&self, u: &mut arbitrary::Unstructured<'_>, depth: u32) -> arbitrary::Result<Value> {
        let nested = depth < SCHEMA_DEPTH;
        // 0..=7: typed leaves and containers; 8..: enum/const, booleans, combinators, refs.
        let kind = u.int_in_range(0..=15u8)?;
        let mut m = JsonMap::new();
        match kind {
            0 => {}
            1 => self.string(u, &mut m)?,
            2 => self.numeric(u, &mut m, true)?,
            3 => self.numeric(u, &mut m, false)?,
            4 if nested => self.array(u, &mut m, depth)?,
            5 if nested => self.object(u, &mut m, depth)?,
            4 | 5 => {
                m.insert(
                    "type".into(),
                    Value::from(if kind == 4 { "array" } else { "object" }),
                );
            }
            6 => {
                let t = u.choose(&["boolean", "null"])?;
                m.insert("type".into(), Value::from(*t));
            }
            7 => {
                // Several types and the keywords of each.
                let mut types = Vec::new();
                for t in ["string", "integer", "null", "object", "array", "number"] {
                    if one_in(u, 2)? {
                        types.push(Value::from(t));
                    }
                }
                if one_in(u, 2)? {
                    self.string(u, &mut m)?;
                }
                if one_in(u, 2)? {
                    let integer = one_in(u, 2)?;
                    self.numeric(u, &mut m, integer)?;
                }
                if nested && one_in(u, 3)? {
                    self.object(u, &mut m, depth)?;
                }
                m.insert("type".into(), Value::Array(types));
            }
            8 => {
                let n = u.int_in_range(0..=4)?;
                let values = (0..n).map(|_| constant(u)).collect::<Result<_, _>>()?;
                m.insert("enum".into(), Value::Array(values));
            }
            9 => {
                m.insert("const".into(), constant(u)?);
            }
            10 => return Ok(Value::Bool(one_in(u, 2)?)),
            11 if nested => {
                let key = u.choose(&["allOf", "anyOf", "oneOf"])?;
                let n = u.int_in_range(1..=3)?;
                let subs = (0..n)
                    .map(|_| self.node(u, depth + 1))
                    .collect::<Result<_, _>>()?;
                m.insert((*key).into(), Value::Array(subs));
            }
            12 if nested => {
                m.insert("not".into(), self.node(u, depth + 1)?);
            }
            13 if nested => {
                m.insert("if".into(), self.node(u, depth + 1)?);
                if one_in(u, 2)? || u.is_empty() {
                    m.insert("then".into(), self.node(u, depth + 1)?);
                }
                if one_in(u, 2)? {
                    m.insert("else".into(), self.node(u, depth + 1)?);
                }
            }
            14 | 15 if self.defs > 0 || depth > 0 => {
                let target = u.int_in_range(0..=self.defs)?;
                let reference = if target == self.defs {
                    "#".to_owned()
                } else {
                    format!("#/$defs/d{target}")
                };
                m.insert("$ref".into(), Value::from(reference));
            }
            _ => self.string(u, &mut m)?,
        }
        // A keyword of another family on top, now and then (they apply to their own type).
        if nested && one_in(u, 6)? {
            match u.int_in_range(0..=3u8)? {
                0 => self.string(u, &mut m)?,
                1 => self.numeric(u, &mut m, false)?,
                2 => {
                    m.insert("allOf".into(), Value::Array(vec![self.node(u, depth + 1)?]));
                }
                _ => {
                    m.insert("not".into(), self.node(u, depth + 1)?);
                }
            }
        }
        Ok(Value::Object(m))
    }

    fn string(
        &self,
        u: &mut arbitrary::Unstructured<'_>,
        m: &mut JsonMap<String, Value>,
    ) -> arbitrary::Result<()> {
        m.insert("type".into(), Value::from("string"));
        if one_in(u, 2)? {
            m.insert("minLength".into(), Value::from(u.int_in_range(0..=8u64)?));
        }
        if one_in(u, 2)? {
            m.insert("maxLength".into(), Value::from(u.int_in_range(0..=12u64)?));
        }
        if one_in(u, 3)? {
            m.insert("pattern".into(), Value::from(*u.choose(PATTERNS)?));
        }
        if one_in(u, 3)? {
            let i = u.choose_index(KNOWN_FORMATS.len() + 1)?;
            let format = KNOWN_FORMATS.get(i).copied().unwrap_or(UNKNOWN_FORMAT);
            m.insert("format".into(), Value::from(format));
        }
        Ok(())
    }

    fn numeric(
        &self,
        u: &mut arbitrary::Unstructured<'_>,
        m: &mut JsonMap<String, Value>,
        integer: bool,
    ) -> arbitrary::Result<()> {
        m.insert(
            "type".into(),
            Value::from(if integer { "integer" } else { "number" }),
        );
        for key in ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"] {
            if one_in(u, 3)? {
                let whole = integer && one_in(u, 2)?;
                m.insert(key.into(), number(u, whole)?);
            }
        }
        if one_in(u, 3)? {
            let whole = integer && one_in(u, 2)?;
            let step = number(u, whole)?;
            if step.as_f64().is_some_and(|s| s > 0.0) {
                m.insert("multipleOf".into(), step);
            }
        }
        Ok(())
    }

    fn array(
        &self,
        u: &mut arbitrary::Unstructured<'_>,
        m: &mut JsonMap<String, Value>,
        depth: u32,
    ) -> arbitrary::Result<()> {
        m.insert("type".into(), Value::from("array"));
        if one_in(u, 2)? {
            m.insert("items".into(), self.node(u, depth + 1)?);
        }
        if one_in(u, 4)? {
            let n = u.int_in_range(1..=2)?;
            let prefix = (0..n)
                .map(|_| self.node(u, depth + 1))
                .collect::<Result<_, _>>()?;
            m.insert("prefixItems".into(), Value::Array(prefix));
        }
        for (key, max) in [("minItems", 4u64), ("maxItems", 5)] {
            if one_in(u, 3)? {
                m.insert(key.into(), Value::from(u.int_in_range(0..=max)?));
            }
        }
        if one_in(u, 3)? {
            m.insert(
                "uniqueItems".into(),
                Value::Bool(one_in(u, 2)? || u.is_empty()),
            );
        }
        if one_in(u, 4)? {
            m.insert("contains".into(), self.node(u, depth + 1)?);
            for key in ["minContains", "maxContains"] {
                if one_in(u, 3)? {
                    m.insert(key.into(), Value::from(u.int_in_range(0..=3u64)?));
                }
            }
        }
        Ok(())
    }

    fn object(
        &self,
        u: &mut arbitrary::Unstructured<'_>,
        m: &mut JsonMap<String, Value>,
        depth: u32,
    ) -> arbitrary::Result<()> {
        m.insert("type".into(), Value::from("object"));
        let mut props = JsonMap::new();
        let mut required = Vec::new();
        let n = u.int_in_range(0..=3)?;
        for _ in 0..n {
            let name = *u.choose(PROP_NAMES)?;
            props.insert(name.into(), self.node(u, depth + 1)?);
        }
        for name in PROP_NAMES {
            // Mostly declared properties; now and then one that is not.
            if (props.contains_key(*name) && one_in(u, 2)?) || one_in(u, 16)? {
                required.push(Value::from(*name));
            }
        }
        if !props.is_empty() || one_in(u, 2)? {
            m.insert("properties".into(), Value::Object(props));
        }
        if !required.is_empty() {
            m.insert("required".into(), Value::Array(required));
        }
        match u.int_in_range(0..=5u8)? {
            1 => {
                m.insert("additionalProperties".into(), Value::Bool(false));
            }
            2 => {
                m.insert("additionalProperties".into(), Value::Bool(true));
            }
            3 => {
                m.insert("additionalProperties".into(), self.node(u, depth + 1)?);
            }
            _ => {}
        }
        if one_in(u, 4)? {
            let mut deps = JsonMap::new();
            let trigger = *u.choose(PROP_NAMES)?;
            let needed = *u.choose(PROP_NAMES)?;
            deps.insert(trigger.into(), Value::Array(vec![Value::from(needed)]));
            m.insert("dependentRequired".into(), Value::Object(deps));
        }
        for (key, max) in [("minProperties", 3u64), ("maxProperties", 4)] {
            if one_in(u, 6)? {
                m.insert(key.into(), Value::from(u.int_in_range(0..=max)?));
            }
        }
        Ok(())
    }
}

impl<'a> Arbitrary<'a> for ArbSchema {
    fn arbitrary(u: &mut arbitrary::Unstructured<'a>) -> arbitrary::Result<Self> {
        let defs = u.int_in_range(0..=SCHEMA_DEFS)?;
        let builder = SchemaBuilder { defs };
        let mut root = match builder.node(u, 0)? {
            Value::Object(m) => m,
            other => {
                // A boolean root: keep it, wrapped, so `$defs` has somewhere to live.
                let mut m = JsonMap::new();
                m.insert("allOf".into(), Value::Array(vec![other]));
                m
            }
        };
        if defs > 0 {
            let mut table = JsonMap::new();
            for i in 0..defs {
                table.insert(format!("d{i}"), builder.node(u, 1)?);
            }
            root.insert("$defs".into(), Value::Object(table));
        }
        // Last, so that a short input is spent on the schema.
        let seed = u.arbitrary()?;
        Ok(ArbSchema {
            schema: Value::Object(root),
            seed,
        })
    }
}

/// The generator's options in the `schema_generator` target: its own budgets, tightened so
/// one input stays within milliseconds (fewer candidates per filtered value, less lowering
/// work, fewer alternatives, a small size cap, shallower `$ref` recursion).
pub fn fuzz_gen_options() -> GenOptions {
    GenOptions {
        filter_budget: 16,
        max_schema_nodes: 2_000,
        max_alternatives: 16,
        size_cap: 4_096,
        max_ref_depth: 2,
        ..GenOptions::default()
    }
}

/// Values drawn per strategy, and shrinking steps followed, per input.
const DRAWS: usize = 6;
const SHRINK_STEPS: usize = 8;

/// Whether `v` (a schema) has a `format` keyword anywhere: the harness's validator
/// ([`mcp_chaos::schema::compile`]) treats `format` as an annotation, as 2020-12 does by
/// default, while the generator asserts formats, so the two verdicts may differ there.
fn has_format(v: &Value) -> bool {
    match v {
        Value::Object(m) => m
            .iter()
            .any(|(k, v)| (k == "format" && v.is_string()) || has_format(v)),
        Value::Array(a) => a.iter().any(has_format),
        _ => false,
    }
}

/// The schema generator's properties on one schema: building a generator with
/// [`fuzz_gen_options`] never panics (an error such as unsatisfiable, too complex or exhausted
/// is fine and must name its reason); every value it calls valid (drawn values and the values
/// they shrink to, the example, the valid boundary cases) is accepted, and every invalid case
/// it produces is rejected (with the keyword it names at the pointer it names), by a validator
/// compiled independently of the generator: the harness's own
/// [`mcp_chaos::schema::compile`] (2020-12, offline), with formats asserted. When the schema
/// has no `format`, the harness's validator as it is (formats as annotations) must agree too.
pub fn check_schema_generator(input: &ArbSchema) {
    let schema = &input.schema;
    let g = match Generator::new(schema, &fuzz_gen_options()) {
        Ok(g) => g,
        Err(e) => {
            assert!(
                !e.to_string().is_empty() && !e.kind().is_empty(),
                "{e:?} names no reason"
            );
            return;
        }
    };
    let plain =
        mcp_chaos::schema::compile(schema, SchemaDialect::Draft202012).unwrap_or_else(|e| {
            panic!("the generator accepts {schema} but the harness cannot compile it: {e}")
        });
    let asserting = jsonschema::options()
        .offline()
        .should_validate_formats(true)
        .with_pattern_options(
            jsonschema::PatternOptions::fancy_regex()
                .backtrack_limit(mcp_chaos::schema::PATTERN_BACKTRACK_LIMIT),
        )
        .build(schema)
        .unwrap_or_else(|e| panic!("{schema} compiles for the generator, not with formats: {e}"));
    let formats = has_format(schema);
    let check_valid = |v: &Value, what: &str| {
        assert!(
            asserting.is_valid(v),
            "{what} {v} is invalid: {:?}",
            mcp_chaos::schema::errors(&asserting, v, 3)
        );
        assert!(
            formats || plain.is_valid(v),
            "{what} {v} is invalid for the harness: {:?}",
            mcp_chaos::schema::errors(&plain, v, 3)
        );
    };
    let check_invalid = |v: &Value, violation: &mcp_chaos::generate::Violation| {
        assert!(
            !asserting.is_valid(v),
            "invalid case {v} ({violation:?}) is valid"
        );
        assert!(
            formats || !plain.is_valid(v),
            "invalid case {v} ({violation:?}) is valid for the harness"
        );
        assert!(
            g.confirms(v, violation),
            "invalid case {v} is not rejected for {violation:?}: {:?}",
            g.errors(v)
        );
    };

    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &seed_bytes(input.seed)),
    );
    if let Ok(strategy) = g.valid() {
        for i in 0..DRAWS {
            let Ok(mut tree) = strategy.new_tree(&mut runner) else {
                continue;
            };
            check_valid(&tree.current(), "valid value");
            if i == 0 {
                for _ in 0..SHRINK_STEPS {
                    if !tree.simplify() {
                        break;
                    }
                    check_valid(&tree.current(), "shrunk valid value");
                }
            }
        }
    }
    match g.invalid() {
        Ok(strategy) => {
            for _ in 0..DRAWS {
                if let Ok(tree) = strategy.new_tree(&mut runner) {
                    let (v, violation) = tree.current();
                    check_invalid(&v, &violation);
                }
            }
        }
        Err(e) => assert!(!e.to_string().is_empty(), "{e:?} names no reason"),
    }
    for case in g.boundary().unwrap_or_default() {
        match &case {
            Case::Valid { value, label } => check_valid(value, &format!("boundary case {label:?}")),
            Case::Invalid { value, violation } => check_invalid(value, violation),
        }
    }
    if let Ok(example) = g.example() {
        check_valid(&example, "example");
    }
}

/// 32 seed bytes for the value-drawing runner.
fn seed_bytes(seed: u64) -> [u8; 32] {
    let mut bytes = [0u8; 32];
    for (i, chunk) in bytes.chunks_mut(8).enumerate() {
        chunk.copy_from_slice(
            &(seed ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)).to_le_bytes(),
        );
    }
    bytes
}
