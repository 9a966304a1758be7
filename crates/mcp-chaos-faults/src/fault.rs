//! Faults: what the fake upstream (or the forward proxy) does with one request.

use std::fmt;
use std::str::FromStr;

use bytes::Bytes;

use crate::error::Error;

/// The body served by [`Fault::ok_default`] and, unless configured otherwise, by every
/// healthy response of a [`FakeUpstream`](crate::FakeUpstream).
///
/// It contains no canary strings (see [`Canaries`](crate::Canaries)).
pub const DEFAULT_OK_BODY: &str = r#"{"status":"ok","source":"mcp-chaos fake upstream","data":{"id":1,"name":"example","value":42,"items":["alpha","beta","gamma"]}}"#;

/// Default `Retry-After` of [`Fault::rate_limit`] in the catalog, in seconds.
pub const DEFAULT_RETRY_AFTER_SECS: u64 = 2;
/// Default delay of [`Fault::delay`] in the catalog, in milliseconds.
pub const DEFAULT_DELAY_MS: u64 = 1_500;
/// Default fraction of the body sent by [`Fault::truncate_body`] and
/// [`Fault::reset_mid_body`] in the catalog.
pub const DEFAULT_CUT_FRACTION: f64 = 0.5;
/// Default chunk size of [`Fault::slow_body`] in the catalog, in bytes.
pub const DEFAULT_SLOW_CHUNK_BYTES: usize = 16;
/// Default pause between chunks of [`Fault::slow_body`] in the catalog, in milliseconds.
pub const DEFAULT_SLOW_INTERVAL_MS: u64 = 100;
/// Default size of [`Fault::huge_body`] in the catalog: 16 MiB.
pub const DEFAULT_HUGE_BODY_BYTES: u64 = 16 * 1024 * 1024;

/// One upstream behaviour: a healthy answer, an HTTP error, or a transport-level failure.
///
/// A `Fault` is a value: cheap to clone, comparable, and printable as a stable
/// specification (`Display`) that [`FromStr`] parses back, e.g. `"not-found"`,
/// `"delay=1500"`, `"slow-body=16:100"`. Each variant's documentation says what the MCP
/// server under test owes its client when its upstream behaves this way.
///
/// Body-shaping faults ([`Delay`](Fault::Delay), [`SlowBody`](Fault::SlowBody),
/// [`TruncatedBody`](Fault::TruncatedBody), [`ResetMidBody`](Fault::ResetMidBody)) shape
/// the *healthy* body of the rule that served them (see
/// [`Rule::otherwise`](crate::Rule::otherwise)). Every failure response carries the run's
/// [`Canaries`](crate::Canaries) in its headers and, where it has an error body, in the body.
///
/// Build faults with the constructor functions (`Fault::status(503)`,
/// `Fault::rate_limit(30)`, …), which normalise their parameters.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Fault {
    /// `ok`: `200 OK` with a canned body.
    ///
    /// The server owes a successful tool result (`isError: false`) built from the body.
    Ok {
        /// The response body, served verbatim.
        body: Bytes,
        /// The `Content-Type` header value.
        content_type: String,
    },
    /// `not-found`: `404 Not Found` with a JSON error body.
    ///
    /// Permanent. The server owes `isError: true` with a message saying the requested
    /// thing does not exist (ideally naming it), and should not retry.
    NotFound,
    /// `gone`: `410 Gone` with a JSON error body.
    ///
    /// Permanent. The server owes `isError: true` saying the resource was removed or
    /// the API is retired, and should not retry.
    Gone,
    /// `unauthorized`: `401 Unauthorized` with a JSON error body and `WWW-Authenticate`.
    ///
    /// Permanent until credentials change. The server owes `isError: true` saying its
    /// upstream credentials were rejected, without echoing the credentials.
    /// Not part of the default [`catalog`](Fault::catalog).
    Unauthorized,
    /// `forbidden`: `403 Forbidden` with a JSON error body. On a `CONNECT` tunnel this
    /// is the proxy refusing the tunnel.
    ///
    /// Permanent. The server owes `isError: true` saying access was denied.
    /// Not part of the default [`catalog`](Fault::catalog).
    Forbidden,
    /// `rate-limited`: `429 Too Many Requests` with `Retry-After: <retry_after_secs>`.
    ///
    /// Retryable. The server owes `isError: true` saying it was rate limited and, ideally,
    /// when to try again; if it retries by itself it must honour `Retry-After`.
    RateLimited {
        /// Value of the `Retry-After` header, in whole seconds.
        retry_after_secs: u64,
    },
    /// `server-error-500`: `500 Internal Server Error` with a JSON error body that is
    /// full of leaked internals (canaries).
    ///
    /// Indeterminate retryability. The server owes `isError: true` with a generic
    /// "upstream failed" message, and must not pass the body's internals through.
    ServerError,
    /// `bad-gateway`: `502 Bad Gateway` with a JSON error body.
    ///
    /// Retryable. The server owes `isError: true` saying the upstream is failing,
    /// suggesting a retry.
    BadGateway,
    /// `unavailable`: `503 Service Unavailable` with a JSON error body.
    ///
    /// Retryable. The server owes `isError: true` saying the upstream is temporarily
    /// unavailable.
    Unavailable,
    /// `gateway-timeout`: `504 Gateway Timeout` with a JSON error body.
    ///
    /// Retryable. The server owes `isError: true` saying the upstream timed out.
    GatewayTimeout,
    /// `delay`: wait `ms` milliseconds, then serve the rule's healthy response.
    ///
    /// Not a failure. The server owes the same successful result as without the delay,
    /// unless the delay exceeds its own timeout, in which case it owes a timeout error
    /// (`isError: true`), never a JSON-RPC error or a hang.
    Delay {
        /// How long to wait before answering, in milliseconds.
        ms: u64,
    },
    /// `hang`: read the request, then never answer (until the client gives up or the
    /// server shuts down).
    ///
    /// Retryable. The server owes a timely `isError: true` saying the upstream timed out;
    /// it must not hang its own client.
    Hang,
    /// `reset`: read the request, then abort the TCP connection with an RST before any
    /// response byte is sent.
    ///
    /// Retryable. The server owes `isError: true` saying the connection to the upstream
    /// failed.
    Reset,
    /// `reset-mid-body`: send `200 OK` with a full `Content-Length` and the first
    /// `fraction` of the healthy body, then abort the connection with an RST.
    ///
    /// Retryable. The server owes `isError: true`; it must not return the partial body
    /// as a success.
    ResetMidBody {
        /// Share of the body sent before the reset, in `[0, 1]`; at least one byte is
        /// always withheld.
        fraction: f64,
    },
    /// `close-before-headers`: read the request, then close the connection cleanly (FIN)
    /// without sending a response.
    ///
    /// Retryable. The server owes `isError: true` saying the upstream closed the
    /// connection unexpectedly.
    CloseBeforeHeaders,
    /// `truncated-body`: send `200 OK` with a `Content-Length` for the full healthy body,
    /// send only the first `fraction` of it, then close cleanly (FIN).
    ///
    /// Retryable. The server owes `isError: true`; it must not return the partial body
    /// as a success.
    TruncatedBody {
        /// Share of the body sent before closing, in `[0, 1]`; at least one byte is
        /// always withheld.
        fraction: f64,
    },
    /// `malformed-json`: `200 OK`, `Content-Type: application/json`, and a body that is
    /// not valid JSON (it also embeds canaries, as a half-written error dump would).
    ///
    /// Indeterminate retryability. The server owes `isError: true` saying the upstream
    /// answered with an invalid response, without quoting the raw body.
    MalformedJson,
    /// `wrong-content-type`: `200 OK` with `Content-Type: text/html` and an HTML error
    /// page (like a captive portal or a misrouted load balancer).
    ///
    /// Indeterminate retryability. The server owes `isError: true` saying the upstream
    /// answered with something unexpected, without quoting the page.
    WrongContentType,
    /// `slow-body`: `200 OK` with the healthy body dribbled `chunk_bytes` at a time with
    /// `interval_ms` milliseconds between chunks.
    ///
    /// Not a failure. The server owes the normal successful result, or a timeout error if
    /// the total time exceeds its own deadline.
    SlowBody {
        /// Bytes per chunk (at least 1).
        chunk_bytes: usize,
        /// Pause between chunks, in milliseconds.
        interval_ms: u64,
    },
    /// `huge-body`: `200 OK` with a valid JSON document of exactly `bytes` bytes, streamed
    /// (never held in memory).
    ///
    /// Indeterminate retryability. The server owes a bounded answer: either a result that
    /// is clearly truncated/summarised, or `isError: true` saying the response was too
    /// large. It must not stream megabytes into its client or run out of memory.
    HugeBody {
        /// Exact body size, in bytes (a minimum of a few bytes for the JSON framing is
        /// enforced).
        bytes: u64,
    },
    /// `pass-through`: forward the request to its real origin.
    ///
    /// Only meaningful for a [`ForwardProxy`](crate::ForwardProxy), and only for loopback
    /// origins; anything else is refused with `502 Bad Gateway` (recorded in the journal).
    /// A [`FakeUpstream`](crate::FakeUpstream) has no origin and always refuses it.
    /// Not a failure. Not part of the [`catalog`](Fault::catalog).
    PassThrough,
}

/// How a client should treat a failure: the answer an oracle checks the server's error
/// text against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Retryability {
    /// The fault is not a failure from the client's point of view (`ok`, `delay`,
    /// `slow-body`, `pass-through`).
    NotAFailure,
    /// Trying again later may succeed: 429, 502, 503, 504, timeouts and connection
    /// failures.
    Retryable,
    /// Trying again will not help: 401, 403, 404, 410.
    Permanent,
    /// A failure whose retryability the client cannot know: 500, malformed or unexpected
    /// bodies, oversized bodies.
    Indeterminate,
}

/// The name of a fault, without its parameters.
///
/// Names are stable kebab-case strings ([`FaultKind::name`]) used on command lines,
/// in reports and in the journal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum FaultKind {
    /// `ok`
    Ok,
    /// `not-found`
    NotFound,
    /// `gone`
    Gone,
    /// `unauthorized`
    Unauthorized,
    /// `forbidden`
    Forbidden,
    /// `rate-limited`
    RateLimited,
    /// `server-error-500`
    ServerError,
    /// `bad-gateway`
    BadGateway,
    /// `unavailable`
    Unavailable,
    /// `gateway-timeout`
    GatewayTimeout,
    /// `delay`
    Delay,
    /// `hang`
    Hang,
    /// `reset`
    Reset,
    /// `reset-mid-body`
    ResetMidBody,
    /// `close-before-headers`
    CloseBeforeHeaders,
    /// `truncated-body`
    TruncatedBody,
    /// `malformed-json`
    MalformedJson,
    /// `wrong-content-type`
    WrongContentType,
    /// `slow-body`
    SlowBody,
    /// `huge-body`
    HugeBody,
    /// `pass-through`
    PassThrough,
}

impl FaultKind {
    /// Every kind, in catalog order followed by the extras (`unauthorized`, `forbidden`,
    /// `pass-through`).
    pub const ALL: [FaultKind; 21] = [
        FaultKind::Ok,
        FaultKind::NotFound,
        FaultKind::Gone,
        FaultKind::RateLimited,
        FaultKind::ServerError,
        FaultKind::BadGateway,
        FaultKind::Unavailable,
        FaultKind::GatewayTimeout,
        FaultKind::Delay,
        FaultKind::Hang,
        FaultKind::Reset,
        FaultKind::ResetMidBody,
        FaultKind::CloseBeforeHeaders,
        FaultKind::TruncatedBody,
        FaultKind::MalformedJson,
        FaultKind::WrongContentType,
        FaultKind::SlowBody,
        FaultKind::HugeBody,
        FaultKind::Unauthorized,
        FaultKind::Forbidden,
        FaultKind::PassThrough,
    ];

    /// Every kind from the simplest to the most complex: the order in which a failing fault
    /// shrinks (see [`shrink_rank`](FaultKind::shrink_rank)).
    ///
    /// 1. healthy: `ok`, `pass-through`;
    /// 2. status faults, permanent before retryable: `not-found` (404), `gone` (410),
    ///    `unauthorized` (401), `forbidden` (403), `rate-limited` (429), then the 5xx
    ///    (`server-error-500`, `bad-gateway`, `unavailable`, `gateway-timeout`);
    /// 3. timeouts and hangs: `delay`, `slow-body`, `hang`;
    /// 4. connection faults (no response at all): `reset`, `close-before-headers`;
    /// 5. body faults (a `200` whose body breaks or lies): `truncated-body`,
    ///    `reset-mid-body`, `malformed-json`, `wrong-content-type`, `huge-body`.
    ///
    /// A status fault is the easiest failure to read in a finding and to reproduce by hand; a
    /// timing fault costs a deadline to run; a connection or body fault needs the reader to
    /// know what the client saw on the wire.
    pub const SHRINK_ORDER: [FaultKind; 21] = [
        FaultKind::Ok,
        FaultKind::PassThrough,
        FaultKind::NotFound,
        FaultKind::Gone,
        FaultKind::Unauthorized,
        FaultKind::Forbidden,
        FaultKind::RateLimited,
        FaultKind::ServerError,
        FaultKind::BadGateway,
        FaultKind::Unavailable,
        FaultKind::GatewayTimeout,
        FaultKind::Delay,
        FaultKind::SlowBody,
        FaultKind::Hang,
        FaultKind::Reset,
        FaultKind::CloseBeforeHeaders,
        FaultKind::TruncatedBody,
        FaultKind::ResetMidBody,
        FaultKind::MalformedJson,
        FaultKind::WrongContentType,
        FaultKind::HugeBody,
    ];

    /// The kind's position in [`SHRINK_ORDER`](FaultKind::SHRINK_ORDER), from 0 (`ok`):
    /// a strategy over faults shrinks a failing fault toward lower ranks.
    pub fn shrink_rank(self) -> usize {
        FaultKind::SHRINK_ORDER
            .iter()
            .position(|k| *k == self)
            .unwrap_or(FaultKind::SHRINK_ORDER.len())
    }

    /// The stable kebab-case name, e.g. `"rate-limited"`.
    pub const fn name(self) -> &'static str {
        match self {
            FaultKind::Ok => "ok",
            FaultKind::NotFound => "not-found",
            FaultKind::Gone => "gone",
            FaultKind::Unauthorized => "unauthorized",
            FaultKind::Forbidden => "forbidden",
            FaultKind::RateLimited => "rate-limited",
            FaultKind::ServerError => "server-error-500",
            FaultKind::BadGateway => "bad-gateway",
            FaultKind::Unavailable => "unavailable",
            FaultKind::GatewayTimeout => "gateway-timeout",
            FaultKind::Delay => "delay",
            FaultKind::Hang => "hang",
            FaultKind::Reset => "reset",
            FaultKind::ResetMidBody => "reset-mid-body",
            FaultKind::CloseBeforeHeaders => "close-before-headers",
            FaultKind::TruncatedBody => "truncated-body",
            FaultKind::MalformedJson => "malformed-json",
            FaultKind::WrongContentType => "wrong-content-type",
            FaultKind::SlowBody => "slow-body",
            FaultKind::HugeBody => "huge-body",
            FaultKind::PassThrough => "pass-through",
        }
    }

    /// The kind's standard profile: the fault with its default parameters.
    pub fn default_fault(self) -> Fault {
        match self {
            FaultKind::Ok => Fault::ok_default(),
            FaultKind::NotFound => Fault::NotFound,
            FaultKind::Gone => Fault::Gone,
            FaultKind::Unauthorized => Fault::Unauthorized,
            FaultKind::Forbidden => Fault::Forbidden,
            FaultKind::RateLimited => Fault::rate_limit(DEFAULT_RETRY_AFTER_SECS),
            FaultKind::ServerError => Fault::ServerError,
            FaultKind::BadGateway => Fault::BadGateway,
            FaultKind::Unavailable => Fault::Unavailable,
            FaultKind::GatewayTimeout => Fault::GatewayTimeout,
            FaultKind::Delay => Fault::delay(DEFAULT_DELAY_MS),
            FaultKind::Hang => Fault::Hang,
            FaultKind::Reset => Fault::Reset,
            FaultKind::ResetMidBody => Fault::reset_mid_body(DEFAULT_CUT_FRACTION),
            FaultKind::CloseBeforeHeaders => Fault::CloseBeforeHeaders,
            FaultKind::TruncatedBody => Fault::truncate_body(DEFAULT_CUT_FRACTION),
            FaultKind::MalformedJson => Fault::MalformedJson,
            FaultKind::WrongContentType => Fault::WrongContentType,
            FaultKind::SlowBody => {
                Fault::slow_body(DEFAULT_SLOW_CHUNK_BYTES, DEFAULT_SLOW_INTERVAL_MS)
            }
            FaultKind::HugeBody => Fault::huge_body(DEFAULT_HUGE_BODY_BYTES),
            FaultKind::PassThrough => Fault::PassThrough,
        }
    }
}

impl fmt::Display for FaultKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for FaultKind {
    type Err = Error;

    /// Parses a bare fault name such as `"hang"` (ASCII case-insensitive, surrounding
    /// whitespace ignored).
    fn from_str(s: &str) -> Result<Self, Error> {
        let wanted = s.trim();
        FaultKind::ALL
            .iter()
            .copied()
            .find(|k| k.name().eq_ignore_ascii_case(wanted))
            .ok_or_else(|| Error::InvalidFault {
                spec: s.to_owned(),
                reason: format!(
                    "unknown fault name; known names: {}",
                    FaultKind::ALL.map(FaultKind::name).join(", ")
                ),
            })
    }
}

impl Fault {
    /// `200 OK` with `body` and `Content-Type: application/json`.
    pub fn ok(body: impl Into<Bytes>) -> Fault {
        Fault::Ok {
            body: body.into(),
            content_type: "application/json".to_owned(),
        }
    }

    /// `200 OK` with `body` and the given `Content-Type`.
    pub fn ok_with_content_type(body: impl Into<Bytes>, content_type: impl Into<String>) -> Fault {
        Fault::Ok {
            body: body.into(),
            content_type: content_type.into(),
        }
    }

    /// `200 OK` with `value` serialised as JSON.
    pub fn ok_json(value: &serde_json::Value) -> Fault {
        Fault::ok(value.to_string())
    }

    /// `200 OK` with [`DEFAULT_OK_BODY`].
    pub fn ok_default() -> Fault {
        Fault::ok(Bytes::from_static(DEFAULT_OK_BODY.as_bytes()))
    }

    /// An HTTP error status with a JSON error body full of canaries.
    ///
    /// `404`, `410`, `401`, `403`, `500`, `502`, `503` and `504` map to their named
    /// variants ([`NotFound`](Fault::NotFound), …); `429` maps to
    /// [`rate_limit`](Fault::rate_limit) with the default `Retry-After`. Any other code is
    /// rejected with [`Error::InvalidFault`], because its meaning for an oracle would be
    /// unclear.
    pub fn status(code: u16) -> Result<Fault, Error> {
        Ok(match code {
            401 => Fault::Unauthorized,
            403 => Fault::Forbidden,
            404 => Fault::NotFound,
            410 => Fault::Gone,
            429 => Fault::rate_limit(DEFAULT_RETRY_AFTER_SECS),
            500 => Fault::ServerError,
            502 => Fault::BadGateway,
            503 => Fault::Unavailable,
            504 => Fault::GatewayTimeout,
            other => {
                return Err(Error::InvalidFault {
                    spec: other.to_string(),
                    reason: "supported statuses are 401, 403, 404, 410, 429, 500, 502, 503 and 504"
                        .to_owned(),
                });
            }
        })
    }

    /// `404 Not Found`.
    pub fn not_found() -> Fault {
        Fault::NotFound
    }

    /// `410 Gone`.
    pub fn gone() -> Fault {
        Fault::Gone
    }

    /// `401 Unauthorized` (with `WWW-Authenticate`).
    pub fn unauthorized() -> Fault {
        Fault::Unauthorized
    }

    /// `403 Forbidden`.
    pub fn forbidden() -> Fault {
        Fault::Forbidden
    }

    /// `500 Internal Server Error`.
    pub fn server_error() -> Fault {
        Fault::ServerError
    }

    /// `502 Bad Gateway`.
    pub fn bad_gateway() -> Fault {
        Fault::BadGateway
    }

    /// `504 Gateway Timeout`.
    pub fn gateway_timeout() -> Fault {
        Fault::GatewayTimeout
    }

    /// `429 Too Many Requests` with `Retry-After: retry_after_secs` (seconds).
    pub fn rate_limit(retry_after_secs: u64) -> Fault {
        Fault::RateLimited { retry_after_secs }
    }

    /// `503 Service Unavailable`.
    pub fn unavailable() -> Fault {
        Fault::Unavailable
    }

    /// Wait `ms` milliseconds, then answer healthily.
    pub fn delay(ms: u64) -> Fault {
        Fault::Delay { ms }
    }

    /// Accept and read the request, never answer.
    pub fn hang() -> Fault {
        Fault::Hang
    }

    /// TCP RST before any response byte.
    pub fn reset() -> Fault {
        Fault::Reset
    }

    /// TCP RST after the headers and the first `fraction` of the body. A `fraction`
    /// outside `[0, 1]` is clamped into it; NaN becomes 0.5. At least one byte of a
    /// non-empty body is always withheld.
    pub fn reset_mid_body(fraction: f64) -> Fault {
        Fault::ResetMidBody {
            fraction: clamp_fraction(fraction),
        }
    }

    /// Close (FIN) before any response byte.
    pub fn close_before_headers() -> Fault {
        Fault::CloseBeforeHeaders
    }

    /// Full `Content-Length`, only the first `fraction` of the body, then FIN. A
    /// `fraction` outside `[0, 1]` is clamped into it; NaN becomes 0.5. At least one byte
    /// of a non-empty body is always withheld.
    pub fn truncate_body(fraction: f64) -> Fault {
        Fault::TruncatedBody {
            fraction: clamp_fraction(fraction),
        }
    }

    /// `200 OK` JSON content type, invalid JSON body.
    pub fn malformed_json() -> Fault {
        Fault::MalformedJson
    }

    /// `200 OK` with an HTML page instead of JSON.
    pub fn wrong_content_type() -> Fault {
        Fault::WrongContentType
    }

    /// Dribble the healthy body `chunk_bytes` (at least 1) at a time, pausing
    /// `interval_ms` milliseconds between chunks.
    pub fn slow_body(chunk_bytes: usize, interval_ms: u64) -> Fault {
        Fault::SlowBody {
            chunk_bytes: chunk_bytes.max(1),
            interval_ms,
        }
    }

    /// A streamed JSON body of exactly `bytes` bytes (raised to the 12-byte minimum the
    /// JSON framing needs).
    pub fn huge_body(bytes: u64) -> Fault {
        Fault::HugeBody {
            bytes: bytes.max(crate::body::HUGE_MIN_BYTES),
        }
    }

    /// Forward to the real (loopback-only) origin; see [`Fault::PassThrough`].
    pub fn pass_through() -> Fault {
        Fault::PassThrough
    }

    /// The standard profiles the harness runs by default: one fault per kind in the
    /// issue's list, each with its default parameter, in a stable order.
    ///
    /// The 18 entries are `ok`, `not-found`, `gone`, `rate-limited` (2 s),
    /// `server-error-500`, `bad-gateway`, `unavailable`, `gateway-timeout`,
    /// `delay` (1500 ms), `hang`, `reset`, `reset-mid-body` (0.5), `close-before-headers`,
    /// `truncated-body` (0.5), `malformed-json`, `wrong-content-type`,
    /// `slow-body` (16 bytes every 100 ms) and `huge-body` (16 MiB). `ok` is the control.
    pub fn catalog() -> Vec<Fault> {
        FaultKind::ALL[..18]
            .iter()
            .map(|k| k.default_fault())
            .collect()
    }

    /// Every fault kind's default profile: the [`catalog`](Fault::catalog) plus
    /// `unauthorized`, `forbidden` and `pass-through`.
    pub fn all() -> Vec<Fault> {
        FaultKind::ALL.iter().map(|k| k.default_fault()).collect()
    }

    /// Parses a comma-separated list of specifications, e.g. `"not-found,hang,delay=500"`.
    /// Empty items are ignored.
    ///
    /// # Errors
    /// [`Error::InvalidFault`] for the first item that does not parse (an unknown name or a
    /// bad parameter).
    pub fn parse_list(list: &str) -> Result<Vec<Fault>, Error> {
        list.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::parse)
            .collect()
    }

    /// This fault's kind.
    pub fn kind(&self) -> FaultKind {
        match self {
            Fault::Ok { .. } => FaultKind::Ok,
            Fault::NotFound => FaultKind::NotFound,
            Fault::Gone => FaultKind::Gone,
            Fault::Unauthorized => FaultKind::Unauthorized,
            Fault::Forbidden => FaultKind::Forbidden,
            Fault::RateLimited { .. } => FaultKind::RateLimited,
            Fault::ServerError => FaultKind::ServerError,
            Fault::BadGateway => FaultKind::BadGateway,
            Fault::Unavailable => FaultKind::Unavailable,
            Fault::GatewayTimeout => FaultKind::GatewayTimeout,
            Fault::Delay { .. } => FaultKind::Delay,
            Fault::Hang => FaultKind::Hang,
            Fault::Reset => FaultKind::Reset,
            Fault::ResetMidBody { .. } => FaultKind::ResetMidBody,
            Fault::CloseBeforeHeaders => FaultKind::CloseBeforeHeaders,
            Fault::TruncatedBody { .. } => FaultKind::TruncatedBody,
            Fault::MalformedJson => FaultKind::MalformedJson,
            Fault::WrongContentType => FaultKind::WrongContentType,
            Fault::SlowBody { .. } => FaultKind::SlowBody,
            Fault::HugeBody { .. } => FaultKind::HugeBody,
            Fault::PassThrough => FaultKind::PassThrough,
        }
    }

    /// The stable kebab-case name, e.g. `"gateway-timeout"`.
    pub fn name(&self) -> &'static str {
        self.kind().name()
    }

    /// The HTTP status the client sees, if it sees one at all (`None` for `hang`,
    /// `reset`, `close-before-headers` and `pass-through`).
    pub fn http_status(&self) -> Option<u16> {
        Some(match self {
            Fault::Ok { .. }
            | Fault::Delay { .. }
            | Fault::ResetMidBody { .. }
            | Fault::TruncatedBody { .. }
            | Fault::MalformedJson
            | Fault::WrongContentType
            | Fault::SlowBody { .. }
            | Fault::HugeBody { .. } => 200,
            Fault::NotFound => 404,
            Fault::Gone => 410,
            Fault::Unauthorized => 401,
            Fault::Forbidden => 403,
            Fault::RateLimited { .. } => 429,
            Fault::ServerError => 500,
            Fault::BadGateway => 502,
            Fault::Unavailable => 503,
            Fault::GatewayTimeout => 504,
            Fault::Hang | Fault::Reset | Fault::CloseBeforeHeaders | Fault::PassThrough => {
                return None;
            }
        })
    }

    /// Whether the client (the server under test) experiences this as a failure:
    /// everything except `ok`, `delay`, `slow-body` and `pass-through`.
    pub fn is_failure(&self) -> bool {
        self.retryability() != Retryability::NotAFailure
    }

    /// How a client should treat this fault; see [`Retryability`].
    pub fn retryability(&self) -> Retryability {
        match self {
            Fault::Ok { .. }
            | Fault::Delay { .. }
            | Fault::SlowBody { .. }
            | Fault::PassThrough => Retryability::NotAFailure,
            Fault::NotFound | Fault::Gone | Fault::Unauthorized | Fault::Forbidden => {
                Retryability::Permanent
            }
            Fault::RateLimited { .. }
            | Fault::BadGateway
            | Fault::Unavailable
            | Fault::GatewayTimeout
            | Fault::Hang
            | Fault::Reset
            | Fault::ResetMidBody { .. }
            | Fault::CloseBeforeHeaders
            | Fault::TruncatedBody { .. } => Retryability::Retryable,
            Fault::ServerError
            | Fault::MalformedJson
            | Fault::WrongContentType
            | Fault::HugeBody { .. } => Retryability::Indeterminate,
        }
    }

    /// `true` for [`Retryability::Retryable`] faults (429, 502, 503, 504, hang, resets,
    /// truncation, early close).
    pub fn is_retryable(&self) -> bool {
        self.retryability() == Retryability::Retryable
    }

    /// `true` for [`Retryability::Permanent`] faults (401, 403, 404, 410).
    pub fn is_permanent(&self) -> bool {
        self.retryability() == Retryability::Permanent
    }

    /// One sentence saying what the MCP server under test owes its client for this fault;
    /// suitable for a finding's explanation.
    pub fn expectation(&self) -> &'static str {
        match self {
            Fault::Ok { .. } | Fault::PassThrough => {
                "a successful tool result (isError: false) built from the upstream's answer"
            }
            Fault::NotFound => {
                "a tool result with isError: true saying the requested resource does not exist; no retry"
            }
            Fault::Gone => {
                "a tool result with isError: true saying the resource or API is gone; no retry"
            }
            Fault::Unauthorized => {
                "a tool result with isError: true saying the upstream rejected its credentials, without echoing them"
            }
            Fault::Forbidden => {
                "a tool result with isError: true saying the upstream denied access"
            }
            Fault::RateLimited { .. } => {
                "a tool result with isError: true saying it was rate limited and when to retry (honouring Retry-After)"
            }
            Fault::ServerError => {
                "a tool result with isError: true reporting an upstream failure, without leaking the upstream's internals"
            }
            Fault::BadGateway | Fault::Unavailable => {
                "a tool result with isError: true saying the upstream is temporarily unavailable; retry later"
            }
            Fault::GatewayTimeout | Fault::Hang => {
                "a timely tool result with isError: true saying the upstream timed out"
            }
            Fault::Delay { .. } | Fault::SlowBody { .. } => {
                "the normal successful result, or a timeout error (isError: true) if its own deadline passes first"
            }
            Fault::Reset | Fault::CloseBeforeHeaders => {
                "a tool result with isError: true saying the connection to the upstream failed"
            }
            Fault::ResetMidBody { .. } | Fault::TruncatedBody { .. } => {
                "a tool result with isError: true; the partial body must not be reported as success"
            }
            Fault::MalformedJson | Fault::WrongContentType => {
                "a tool result with isError: true saying the upstream's answer was invalid, without quoting it"
            }
            Fault::HugeBody { .. } => {
                "a bounded answer: a clearly truncated result or isError: true saying the response was too large"
            }
        }
    }
}

fn clamp_fraction(fraction: f64) -> f64 {
    if fraction.is_nan() {
        DEFAULT_CUT_FRACTION
    } else {
        fraction.clamp(0.0, 1.0)
    }
}

impl fmt::Display for Fault {
    /// Writes the canonical specification: the name, plus `=PARAM` for parameterised
    /// faults (`slow-body=CHUNK:INTERVAL`). The body of `ok` is not printed.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = self.name();
        match self {
            Fault::RateLimited { retry_after_secs } => write!(f, "{name}={retry_after_secs}"),
            Fault::Delay { ms } => write!(f, "{name}={ms}"),
            Fault::ResetMidBody { fraction } | Fault::TruncatedBody { fraction } => {
                write!(f, "{name}={fraction}")
            }
            Fault::SlowBody {
                chunk_bytes,
                interval_ms,
            } => write!(f, "{name}={chunk_bytes}:{interval_ms}"),
            Fault::HugeBody { bytes } => write!(f, "{name}={bytes}"),
            _ => f.write_str(name),
        }
    }
}

impl serde::Serialize for Fault {
    /// Serializes as the canonical specification (`Display`): `"not-found"`, `"delay=1500"`.
    /// The body of `ok` is not kept (it reads back as [`Fault::ok_default`]).
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Fault {
    /// Reads a specification as [`FromStr`] does; a bad one is a custom error with the
    /// [`Error::InvalidFault`] message.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let spec = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        spec.parse().map_err(serde::de::Error::custom)
    }
}

impl FromStr for Fault {
    type Err = Error;

    /// Parses `NAME` or `NAME=PARAM`:
    ///
    /// | spec | parameter |
    /// |---|---|
    /// | `rate-limited=SECS` | `Retry-After` in seconds |
    /// | `delay=MS` | delay in milliseconds |
    /// | `reset-mid-body=FRACTION`, `truncated-body=FRACTION` | share of body sent, `0 ≤ f ≤ 1` |
    /// | `slow-body=CHUNK:INTERVAL` | bytes per chunk (≥ 1) : milliseconds between chunks |
    /// | `huge-body=BYTES` | body size in bytes |
    ///
    /// A bare name gives the default profile ([`FaultKind::default_fault`]). Names are
    /// ASCII case-insensitive. Giving a parameter to a fault that takes none, or a
    /// malformed parameter, is an [`Error::InvalidFault`].
    fn from_str(spec: &str) -> Result<Self, Error> {
        let trimmed = spec.trim();
        let (name, param) = match trimmed.split_once('=') {
            Some((n, p)) => (n.trim(), Some(p.trim())),
            None => (trimmed, None),
        };
        let kind: FaultKind = name.parse().map_err(|e| match e {
            Error::InvalidFault { reason, .. } => Error::InvalidFault {
                spec: spec.to_owned(),
                reason,
            },
            other => other,
        })?;
        let Some(param) = param else {
            return Ok(kind.default_fault());
        };
        let bad = |reason: &str| Error::InvalidFault {
            spec: spec.to_owned(),
            reason: reason.to_owned(),
        };
        let int = |p: &str, what: &str| -> Result<u64, Error> {
            p.parse::<u64>()
                .map_err(|_| bad(&format!("{what} must be a non-negative integer")))
        };
        let fraction = |p: &str| -> Result<f64, Error> {
            match p.parse::<f64>() {
                Ok(f) if (0.0..=1.0).contains(&f) => Ok(f),
                _ => Err(bad("fraction must be a number with 0 <= fraction <= 1")),
            }
        };
        match kind {
            FaultKind::RateLimited => Ok(Fault::rate_limit(int(param, "Retry-After seconds")?)),
            FaultKind::Delay => Ok(Fault::delay(int(param, "delay milliseconds")?)),
            FaultKind::ResetMidBody => Ok(Fault::reset_mid_body(fraction(param)?)),
            FaultKind::TruncatedBody => Ok(Fault::truncate_body(fraction(param)?)),
            FaultKind::HugeBody => Ok(Fault::huge_body(int(param, "body size in bytes")?)),
            FaultKind::SlowBody => {
                let (chunk, interval) = param
                    .split_once(':')
                    .ok_or_else(|| bad("expected slow-body=CHUNK_BYTES:INTERVAL_MS"))?;
                let chunk = int(chunk.trim(), "chunk size")?;
                if chunk == 0 {
                    return Err(bad("chunk size must be at least 1 byte"));
                }
                let chunk = usize::try_from(chunk).map_err(|_| bad("chunk size too large"))?;
                Ok(Fault::slow_body(
                    chunk,
                    int(interval.trim(), "interval milliseconds")?,
                ))
            }
            other => Err(bad(&format!(
                "the {} fault takes no parameter",
                other.name()
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalog_has_the_eighteen_standard_names_in_order() {
        let names: Vec<&str> = Fault::catalog().iter().map(Fault::name).collect();
        assert_eq!(
            names,
            [
                "ok",
                "not-found",
                "gone",
                "rate-limited",
                "server-error-500",
                "bad-gateway",
                "unavailable",
                "gateway-timeout",
                "delay",
                "hang",
                "reset",
                "reset-mid-body",
                "close-before-headers",
                "truncated-body",
                "malformed-json",
                "wrong-content-type",
                "slow-body",
                "huge-body",
            ]
        );
    }

    #[test]
    fn every_fault_round_trips_through_display_and_from_str() {
        let mut faults = Fault::all();
        faults.extend([
            Fault::delay(7),
            Fault::rate_limit(0),
            Fault::truncate_body(0.25),
            Fault::reset_mid_body(0.0),
            Fault::slow_body(3, 40),
            Fault::huge_body(1 << 20),
        ]);
        for fault in faults {
            let spec = fault.to_string();
            let parsed: Fault = spec.parse().unwrap_or_else(|e| panic!("{spec}: {e}"));
            if fault.kind() == FaultKind::Ok {
                assert_eq!(parsed, Fault::ok_default());
            } else {
                assert_eq!(parsed, fault, "{spec}");
            }
        }
    }

    #[test]
    fn parse_list_takes_cli_style_lists() {
        let faults =
            Fault::parse_list(" not-found, hang,,delay=500,slow-body=4:10 ").expect("valid");
        assert_eq!(
            faults,
            vec![
                Fault::NotFound,
                Fault::Hang,
                Fault::delay(500),
                Fault::slow_body(4, 10)
            ]
        );
        assert_eq!("HANG".parse::<Fault>().expect("valid"), Fault::Hang);
    }

    #[test]
    fn bad_specs_are_errors_not_panics() {
        for spec in [
            "",
            "teapot",
            "hang=3",
            "delay=-1",
            "delay=abc",
            "truncated-body=1.5",
            "truncated-body=NaN",
            "slow-body=0:10",
            "slow-body=10",
            "huge-body=1e9",
            "=",
        ] {
            let err = spec.parse::<Fault>().expect_err(spec);
            assert!(matches!(err, Error::InvalidFault { .. }), "{spec}: {err}");
        }
        let msg = "teapot".parse::<Fault>().expect_err("unknown").to_string();
        assert!(msg.contains("gateway-timeout"), "{msg}");
    }

    #[test]
    fn classification_matches_the_issue() {
        use Retryability::*;
        let expect = [
            ("ok", NotAFailure),
            ("delay", NotAFailure),
            ("slow-body", NotAFailure),
            ("not-found", Permanent),
            ("gone", Permanent),
            ("rate-limited", Retryable),
            ("bad-gateway", Retryable),
            ("unavailable", Retryable),
            ("gateway-timeout", Retryable),
            ("hang", Retryable),
            ("reset", Retryable),
            ("reset-mid-body", Retryable),
            ("server-error-500", Indeterminate),
            ("malformed-json", Indeterminate),
        ];
        for (name, class) in expect {
            let f: Fault = name.parse().expect("valid");
            assert_eq!(f.retryability(), class, "{name}");
            assert_eq!(f.is_failure(), class != NotAFailure, "{name}");
        }
        for f in Fault::catalog() {
            let ok_like = matches!(f.name(), "ok" | "delay" | "slow-body");
            assert_eq!(f.is_failure(), !ok_like, "{f}");
        }
    }

    #[test]
    fn the_shrink_order_lists_every_kind_once_healthy_then_status_then_time_then_wire() {
        let mut sorted = FaultKind::SHRINK_ORDER.to_vec();
        sorted.sort();
        let mut all = FaultKind::ALL.to_vec();
        all.sort();
        assert_eq!(sorted, all);
        let rank = |name: &str| name.parse::<FaultKind>().expect("a kind").shrink_rank();
        assert_eq!(rank("ok"), 0);
        assert!(rank("not-found") < rank("rate-limited"));
        assert!(rank("rate-limited") < rank("server-error-500"));
        assert!(rank("gateway-timeout") < rank("delay"));
        assert!(rank("hang") < rank("reset"));
        assert!(rank("close-before-headers") < rank("truncated-body"));
        assert_eq!(rank("huge-body"), FaultKind::SHRINK_ORDER.len() - 1);
    }

    #[test]
    fn status_maps_codes_to_named_faults() {
        assert_eq!(Fault::status(404).expect("valid"), Fault::NotFound);
        assert_eq!(Fault::status(410).expect("valid"), Fault::Gone);
        assert_eq!(
            Fault::status(500).expect("valid").name(),
            "server-error-500"
        );
        assert_eq!(Fault::status(502).expect("valid").name(), "bad-gateway");
        assert_eq!(Fault::status(503).expect("valid").name(), "unavailable");
        assert_eq!(Fault::status(504).expect("valid").name(), "gateway-timeout");
        assert_eq!(Fault::status(429).expect("valid").http_status(), Some(429));
        assert!(Fault::status(418).is_err());
    }

    #[test]
    fn constructors_normalise_parameters() {
        assert_eq!(
            Fault::truncate_body(f64::NAN),
            Fault::TruncatedBody { fraction: 0.5 }
        );
        assert_eq!(
            Fault::reset_mid_body(7.0),
            Fault::ResetMidBody { fraction: 1.0 }
        );
        assert_eq!(
            Fault::slow_body(0, 5),
            Fault::SlowBody {
                chunk_bytes: 1,
                interval_ms: 5
            }
        );
        assert_eq!(
            Fault::huge_body(0),
            Fault::HugeBody {
                bytes: crate::body::HUGE_MIN_BYTES
            }
        );
    }
}
