//! Wire layer throughput: parse + classify typical server frames (target: at least 1 M
//! frames/s on one core, averaged over the mix).

use divan::counter::{BytesCount, ItemsCount};
use divan::{Bencher, black_box};

fn main() {
    divan::main();
}

const FRAMES: &[(&str, &str)] = &[
    ("ping_result", r#"{"jsonrpc":"2.0","id":42,"result":{}}"#),
    (
        "call_tool_result",
        r#"{"jsonrpc":"2.0","id":17,"result":{"content":[{"type":"text","text":"The weather in Paris is 18°C and cloudy."}],"structuredContent":{"temperature":18,"conditions":"cloudy"},"isError":false}}"#,
    ),
    (
        "error_response",
        r#"{"jsonrpc":"2.0","id":9,"error":{"code":-32601,"message":"Method not found","data":"no/such/method"}}"#,
    ),
    (
        "progress_notification",
        r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"mcp-chaos-5","progress":2,"total":3}}"#,
    ),
    (
        "tool_error_result",
        r#"{"jsonrpc":"2.0","id":21,"result":{"content":[{"type":"text","text":"Upstream answered 429 Too Many Requests; retry after 30 seconds."}],"isError":true}}"#,
    ),
];

/// Each typical frame on its own.
#[divan::bench(args = ["ping_result", "call_tool_result", "error_response", "progress_notification", "tool_error_result"])]
fn parse(bencher: Bencher<'_, '_>, name: &str) {
    let frame = FRAMES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, f)| f.as_bytes())
        .unwrap_or_default();
    bencher
        .counter(BytesCount::new(frame.len()))
        .counter(ItemsCount::new(1usize))
        .bench(|| mcp_chaos::wire::parse(black_box(frame)));
}

/// The whole mix, one frame of each kind per iteration.
#[divan::bench]
fn parse_mix(bencher: Bencher<'_, '_>) {
    bencher.counter(ItemsCount::new(FRAMES.len())).bench(|| {
        for (_, frame) in FRAMES {
            let _ = black_box(mcp_chaos::wire::parse(black_box(frame.as_bytes())));
        }
    });
}

/// A `tools/list` result with 16 tools (about 6 KB), as a real server sends it.
#[divan::bench]
fn parse_tools_list(bencher: Bencher<'_, '_>) {
    let tool = r#"{"name":"get_weather","description":"Returns the current weather for a city, with temperature and conditions.","inputSchema":{"type":"object","properties":{"city":{"type":"string","minLength":1},"units":{"type":"string","enum":["metric","imperial"]},"days":{"type":"integer","minimum":1,"maximum":7}},"required":["city"]}}"#;
    let tools = vec![tool; 16].join(",");
    let frame = format!(r#"{{"jsonrpc":"2.0","id":3,"result":{{"tools":[{tools}]}}}}"#);
    bencher
        .counter(BytesCount::new(frame.len()))
        .bench(|| mcp_chaos::wire::parse(black_box(frame.as_bytes())));
}
