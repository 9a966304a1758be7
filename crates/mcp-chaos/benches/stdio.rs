//! Tool calls per second over stdio against the bundled fixture server (target: at least
//! 5 000 calls/s), one call in flight at a time: send, wait for the response, classify it.

mod common;

use std::cell::RefCell;
use std::time::Duration;

use divan::Bencher;
use divan::counter::ItemsCount;
use mcp_chaos::protocol::ProtocolVersion;
use mcp_chaos::session::{ClientConfig, Probe, Session};
use mcp_chaos::transport::{StdioTransport, Transport};
use serde_json::json;

fn main() {
    common::serve_if_asked();
    divan::main();
}

#[divan::bench(sample_count = 20, sample_size = 200)]
fn tool_call_round_trip(bencher: Bencher<'_, '_>) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let session = runtime.block_on(async {
        let transport =
            StdioTransport::spawn(common::fixture("stdio")).expect("the fixture starts");
        let mut session = Session::new(
            Transport::Stdio(transport),
            ClientConfig::new(ProtocolVersion::V2025_11_25, Duration::from_secs(10)),
        );
        session.initialize().await.expect("the fixture initializes");
        session
    });
    let session = RefCell::new(session);
    let args = json!({"text": "hello"});
    bencher.counter(ItemsCount::new(1usize)).bench_local(|| {
        let mut session = session.borrow_mut();
        runtime.block_on(async {
            let probe = Probe::ToolCall {
                tool: "echo".into(),
                arguments: args.clone(),
            };
            let ex = session.call_tool(probe, "echo", &args).await;
            assert!(ex.response().is_some(), "the fixture answered");
        })
    });
    runtime.block_on(session.into_inner().shutdown());
}
