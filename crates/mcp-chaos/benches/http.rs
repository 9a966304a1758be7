//! Tool calls per second over Streamable HTTP against the bundled fixture server, one call in
//! flight at a time: POST a `tools/call` of `echo`, read the whole response, classify it. Calls
//! per second = 1 / divan's median time per call.
//!
//! Two protocols, one benchmark each (divan's `version` argument):
//!
//! - `2025-11-25`: the session era. `initialize` once (outside the timing); every call then
//!   carries `Mcp-Session-Id` and `MCP-Protocol-Version`.
//! - `2026-07-28`: stateless. `server/discover` once (outside the timing); every call carries
//!   the protocol version and client capabilities in `_meta` and the `Mcp-Method` / `Mcp-Name`
//!   headers.
//!
//! The fixture answers `tools/call` with `text/event-stream`, not `application/json` (under
//! 2025-11-25 a priming event first, then the response; under 2026-07-28 the response alone),
//! so what is measured is a POST with an SSE response; the benchmark checks that once before
//! timing. The client keeps its HTTP/1.1 connection alive, so a call is one request/response on
//! an open loopback connection, not a new TCP connection.
//!
//! The fixture runs as a child process (`mcp-chaos fixture --http 127.0.0.1:0`, its own process
//! group, loopback only); the URL is read from the `listening on …` line it prints. It is ended
//! (SIGTERM, then SIGKILL of the group) after each benchmark, and killed if the benchmark
//! panics.

mod common;

use std::cell::RefCell;
use std::time::{Duration, Instant};

use divan::Bencher;
use divan::counter::ItemsCount;
use mcp_chaos::protocol::ProtocolVersion;
use mcp_chaos::session::{ClientConfig, Exchange, Probe, ReceivedItem, Session};
use mcp_chaos::transport::process::ServerProcess;
use mcp_chaos::transport::{HttpConfig, HttpTransport, Transport};
use serde_json::{Value, json};
use tokio::sync::mpsc;

fn main() {
    common::serve_if_asked();
    divan::main();
}

/// Starts the fixture over Streamable HTTP at `127.0.0.1:0` and returns it with its endpoint URL.
async fn start_fixture() -> (ServerProcess, String) {
    let mut config = common::fixture("127.0.0.1:0");
    // No stdin to close: go straight to SIGTERM at the end.
    config.eof_grace = Duration::ZERO;
    // Exit events are not needed; a closed receiver just drops them.
    let (events, _) = mpsc::channel::<mcp_chaos::transport::TransportEvent>(1);
    let (process, _pipes) =
        ServerProcess::spawn(&config, false, false, events).expect("the fixture starts");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let log = process.log_tail();
        if let Some(url) = log
            .split_once("listening on ")
            .and_then(|(_, rest)| rest.split_whitespace().next())
        {
            return (process, url.to_owned());
        }
        assert!(
            process.has_exited().is_none() && Instant::now() < deadline,
            "the fixture did not start listening: {log}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// One `tools/call` of `echo` with `args`, waited for to the end of its HTTP exchange.
async fn call_echo(session: &mut Session, args: &Value) -> Exchange {
    let probe = Probe::ToolCall {
        tool: "echo".into(),
        arguments: args.clone(),
    };
    session.call_tool(probe, "echo", args).await
}

#[divan::bench(args = ["2025-11-25", "2026-07-28"], sample_count = 20, sample_size = 200)]
fn tool_call_round_trip(bencher: Bencher<'_, '_>, version: &str) {
    let version: ProtocolVersion = version.parse().expect("a known version");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let args = json!({"text": "hello"});
    let (fixture, session) = runtime.block_on(async {
        let (fixture, url) = start_fixture().await;
        let transport = HttpTransport::connect(HttpConfig::new(url))
            .await
            .expect("the transport connects");
        let mut session = Session::new(
            Transport::Http(transport),
            ClientConfig::new(version, Duration::from_secs(10)),
        );
        session.initialize().await.expect("the fixture initializes");
        // Say what is measured: the call's response is an event stream.
        let ex = call_echo(&mut session, &args).await;
        assert!(ex.response().is_some(), "the fixture answered");
        let content_type = ex.received.iter().find_map(|r| match &r.item {
            ReceivedItem::Http(info) => info.content_type.clone(),
            _ => None,
        });
        assert!(
            content_type
                .as_deref()
                .is_some_and(|t| t.starts_with("text/event-stream")),
            "tools/call is answered with {content_type:?}"
        );
        (fixture, session)
    });
    let session = RefCell::new(session);
    bencher.counter(ItemsCount::new(1usize)).bench_local(|| {
        let mut session = session.borrow_mut();
        runtime.block_on(async {
            let ex = call_echo(&mut session, &args).await;
            assert!(ex.response().is_some(), "the fixture answered");
        })
    });
    runtime.block_on(async {
        session.into_inner().shutdown().await;
        fixture.shutdown().await;
    });
}
