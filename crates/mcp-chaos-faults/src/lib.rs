//! Fault injectors for mcp-chaos: upstreams and proxies that fail on purpose.
//!
//! An MCP server's tools call upstream services. This crate makes those upstreams fail
//! in controlled, reproducible ways so that the harness can judge whether the server
//! reports each failure well: a `CallToolResult` with `isError: true` and an actionable
//! message — never a JSON-RPC error, never a quiet success, never leaked internals.
//!
//! Three injectors share one vocabulary of [`Fault`]s and [`Schedule`]s:
//!
//! * [`FakeUpstream`] — an HTTP/1.1 server on `127.0.0.1` that answers through a fault
//!   plan: an ordered list of [`Rule`]s, each a request matcher, a fault, a schedule and
//!   a healthy fallback. Point the server under test at [`FakeUpstream::url`].
//! * [`ForwardProxy`] — the same fault plan as an HTTP proxy, for servers whose client
//!   honours `HTTP_PROXY`/`HTTPS_PROXY`/`ALL_PROXY` ([`ForwardProxy::env_vars`]).
//! * [`TcpProxy`] — a Toxiproxy-style TCP proxy in front of a real loopback upstream,
//!   with [`Toxic`]s such as latency, bandwidth and resets.
//!
//! Everything binds loopback only: asking for any other address is an
//! [`Error::NonLoopbackBind`], and pass-through traffic only ever goes to loopback
//! origins. Every HTTP request is recorded in a [`Journal`], and every failure response
//! carries the run's [`Canaries`] — fake API keys, internal hostnames, SQL and stack
//! traces — so an oracle can tell whether the server leaked them.
//!
//! # Worked example
//!
//! An upstream whose `/v1/forecast` endpoint fails twice with `503` before recovering,
//! and whose `/v1/alerts` endpoint is rate limited; everything else is healthy:
//!
//! ```
//! use std::time::Duration;
//! use mcp_chaos_faults::{
//!     FakeUpstream, Fault, Rule, Schedule,
//!     matchers::{method, path_prefix},
//! };
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let upstream = FakeUpstream::builder()
//!     .seed(42) // canaries and random schedules replay from this seed
//!     .rule(
//!         Rule::given(method("GET"))
//!             .and(path_prefix("/v1/forecast"))
//!             .respond_with(Fault::unavailable())
//!             .schedule(Schedule::first_n(2))
//!             .otherwise(Fault::ok(r#"{"temp_c":21}"#))
//!             .named("forecast-flaps"),
//!     )
//!     .rule(
//!         Rule::given(path_prefix("/v1/alerts"))
//!             .respond_with(Fault::rate_limit(0))
//!             .schedule(Schedule::quota(1, Duration::from_secs(60))),
//!     )
//!     .start()
//!     .await?;
//!
//! // Hand `upstream.url()` to the MCP server under test, call a tool, then look at what
//! // the tool call did upstream:
//! let mark = upstream.journal().mark();
//! // ... the server under test calls GET {url}/v1/forecast?city=Oslo three times ...
//! # for _ in 0..3 {
//! #     use tokio::io::{AsyncReadExt, AsyncWriteExt};
//! #     let mut s = tokio::net::TcpStream::connect(upstream.addr()).await?;
//! #     s.write_all(b"GET /v1/forecast?city=Oslo HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n").await?;
//! #     let mut out = Vec::new();
//! #     s.read_to_end(&mut out).await?;
//! # }
//! let calls = upstream.journal().since(mark);
//! let served: Vec<&str> = calls.iter().map(|e| e.fault.name()).collect();
//! assert_eq!(served, ["unavailable", "unavailable", "ok"]);
//! assert_eq!(calls[0].target, "/v1/forecast?city=Oslo");
//! assert_eq!(calls[0].rule_name.as_deref(), Some("forecast-flaps"));
//!
//! // Whatever the server told its client must not contain these:
//! let canaries = upstream.canaries();
//! assert!(canaries.api_key().starts_with("sk_live_"));
//! assert!(!canaries.leaked_in("The weather service is unavailable, try again later."));
//!
//! // Switch the whole plan between tool calls without changing the port:
//! upstream.set_fault("hang".parse()?);
//! upstream.shutdown().await;
//! # Ok(())
//! # }
//! ```
//!
//! # Scoped faults
//!
//! A tool call may make several upstream requests (a `robots.txt` or metadata request, then
//! the real one). A [`ScopedFault`] is one fault and the [`Scope`] of requests it hits: every
//! request, the first only, the n-th only, the requests to one path (the others answer
//! healthy), each with a seeded probability, or a path combined with any of those. It becomes
//! one [`Rule`] ([`ScopedFault::rule`]); install it right before a tool call and the journal
//! tells which request got what ([`describe_requests`]):
//!
//! ```
//! use mcp_chaos_faults::{FakeUpstream, Fault, Scope, describe_requests};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let upstream = FakeUpstream::builder().seed(7).start().await?;
//! upstream.set_scoped(&Fault::unavailable().scoped(Scope::first()));
//! let mark = upstream.journal().mark();
//! // ... the server under test calls GET /robots.txt, then GET /data ...
//! # for path in ["/robots.txt", "/data"] {
//! #     use tokio::io::{AsyncReadExt, AsyncWriteExt};
//! #     let mut s = tokio::net::TcpStream::connect(upstream.addr()).await?;
//! #     s.write_all(format!("GET {path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n").as_bytes()).await?;
//! #     let mut out = Vec::new();
//! #     s.read_to_end(&mut out).await?;
//! # }
//! let calls = upstream.journal().since(mark);
//! assert_eq!(
//!     describe_requests(&calls),
//!     "the first request (GET /robots.txt) got 503 unavailable, the second (GET /data) 200 ok"
//! );
//! assert!(calls[0].faulted && !calls[1].faulted);
//! # Ok(())
//! # }
//! ```
//!
//! With the `proptest` feature, the `strategy` module draws scoped faults for property tests and
//! shrinks a failing one toward the simplest fault and scope.
//!
//! # Fault names
//!
//! Every fault has a stable kebab-case name, parsed by [`FromStr`](std::str::FromStr) (so a
//! CLI can take `--faults not-found,hang,delay=500`) and listed with its default parameter
//! by [`Fault::catalog`]: `ok`, `not-found`, `gone`, `rate-limited`, `server-error-500`,
//! `bad-gateway`, `unavailable`, `gateway-timeout`, `delay`, `hang`, `reset`,
//! `reset-mid-body`, `close-before-headers`, `truncated-body`, `malformed-json`,
//! `wrong-content-type`, `slow-body`, `huge-body` (plus `unauthorized`, `forbidden` and
//! `pass-through`). [`Fault::is_failure`] and [`Fault::retryability`] classify them for
//! oracles.
//!
//! # Lifetimes
//!
//! Servers and proxies run on the Tokio runtime that started them. Each has an async
//! `shutdown()` that closes the port, drops every connection (hung ones included) and
//! waits for its tasks; dropping the handle aborts the same tasks without waiting.

mod body;
mod canary;
mod connect;
mod error;
mod fault;
mod handle;
mod journal;
mod net;
mod proxy;
mod rule;
mod schedule;
pub mod scope;
mod server;
#[cfg(feature = "proptest")]
pub mod strategy;
mod tcp;
mod upstream;

pub use canary::Canaries;
pub use error::{Error, Result};
pub use fault::{
    DEFAULT_CUT_FRACTION, DEFAULT_DELAY_MS, DEFAULT_HUGE_BODY_BYTES, DEFAULT_OK_BODY,
    DEFAULT_RETRY_AFTER_SECS, DEFAULT_SLOW_CHUNK_BYTES, DEFAULT_SLOW_INTERVAL_MS, Fault, FaultKind,
    Retryability,
};
pub use journal::{
    DEFAULT_JOURNAL_CAPACITY, DEFAULT_JOURNAL_HEADERS, Journal, JournalEntry, JournalMark,
    describe_requests,
};
pub use net::is_loopback;
pub use proxy::{ForwardProxy, ForwardProxyBuilder};
pub use rule::{Matcher, Rule, RuleBuilder, matchers};
pub use schedule::Schedule;
pub use scope::{Requests, Scope, ScopeKind, ScopedFault};
pub use tcp::{Direction, TcpProxy, TcpProxyBuilder, Toxic};
pub use upstream::{FakeUpstream, FakeUpstreamBuilder};
