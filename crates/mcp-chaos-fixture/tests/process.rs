//! The fixture as a process (its binary, `mcp-chaos-fixture`, which `mcp-chaos fixture` also
//! serves), observed from outside: `--http` (its announced
//! URL, loopback only, SIGTERM, a crash's exit status and traceback) and, over stdio, the
//! cancellation, concurrency and shutdown behaviour the HTTP work added to the core, with the
//! flaws that break each. A fake upstream (`mcp-chaos-faults`) plays the slow or hung upstream.
//!
//! Waits have generous bounds that only turn a deadlock into a failure; assertions are about
//! order (a causal chain, or timer deadlines at least 100 ms apart), never about durations.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use mcp_chaos_faults::{FakeUpstream, Fault};
use serde_json::{Value, json};

const EXE: &str = env!("CARGO_BIN_EXE_mcp-chaos-fixture");
const WAIT: Duration = Duration::from_secs(20);

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a runtime")
}

fn upstream(rt: &tokio::runtime::Runtime, fault: Fault) -> FakeUpstream {
    rt.block_on(FakeUpstream::builder().fault(fault).start())
        .expect("a fake upstream")
}

/// Waits until the upstream has seen `count` requests in all.
fn seen(rt: &tokio::runtime::Runtime, up: &FakeUpstream, count: usize) {
    let journal = up.journal();
    let got = rt.block_on(async {
        let mark = journal.mark();
        let have = journal.entries().len();
        if have >= count {
            return have;
        }
        have + journal.wait_for(mark, count - have, WAIT).await.len()
    });
    assert!(got >= count, "the upstream saw {got} requests, not {count}");
}

/// Waits for the process to exit; its exit code.
fn exit_code(child: &mut Child) -> Option<i32> {
    for _ in 0..800 {
        if let Ok(Some(status)) = child.try_wait() {
            return status.code();
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    let _ = child.kill();
    None
}

fn stderr_text(child: &mut Child) -> String {
    let mut text = String::new();
    if let Some(mut err) = child.stderr.take() {
        let _ = err.read_to_string(&mut text);
    }
    text
}

// ---------------------------------------------------------------------------------------------
// HTTP
// ---------------------------------------------------------------------------------------------

struct HttpFixture {
    child: Child,
    url: String,
}

impl Drop for HttpFixture {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn http_fixture(flaws: &[&str], upstream: Option<&FakeUpstream>) -> HttpFixture {
    let mut cmd = Command::new(EXE);
    cmd.args(["--http", "127.0.0.1:0"]);
    for flaw in flaws {
        cmd.args(["--flaw", flaw]);
    }
    if let Some(up) = upstream {
        cmd.env("UPSTREAM_URL", up.url());
    }
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the fixture starts");
    let mut line = String::new();
    let mut err = BufReader::new(child.stderr.take().expect("stderr"));
    err.read_line(&mut line).expect("a line on stderr");
    child.stderr = Some(err.into_inner());
    let url = line
        .strip_prefix("listening on ")
        .and_then(|l| l.strip_suffix('\n'))
        .expect("the announcement")
        .to_owned();
    let port = url
        .strip_prefix("http://127.0.0.1:")
        .and_then(|rest| rest.strip_suffix("/mcp"))
        .expect("http://127.0.0.1:PORT/mcp");
    assert!(port.parse::<u16>().is_ok_and(|p| p > 0), "{line:?}");
    HttpFixture { child, url }
}

fn discover(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "server/discover", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}}})
}

fn post(client: &reqwest::Client, url: &str, body: &Value) -> reqwest::RequestBuilder {
    let method = body["method"].as_str().unwrap_or_default().to_owned();
    client
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method)
        .body(body.to_string())
}

#[test]
fn http_fixture_announces_its_url_serves_and_stops_on_sigterm() {
    let rt = runtime();
    let mut fx = http_fixture(&[], None);
    let client = reqwest::Client::new();
    let status = rt.block_on(async {
        let resp = post(&client, &fx.url, &discover(1)).send().await?;
        let status = resp.status();
        let body: Value = resp.json().await?;
        assert_eq!(body["result"]["resultType"], "complete");
        Ok::<_, reqwest::Error>(status)
    });
    assert_eq!(status.ok().map(|s| s.as_u16()), Some(200));
    let pid = nix::unistd::Pid::from_raw(i32::try_from(fx.child.id()).expect("a pid"));
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).expect("signalled");
    assert_eq!(exit_code(&mut fx.child), Some(0));
    assert_eq!(stderr_text(&mut fx.child), "", "exactly one line on stderr");
}

#[test]
fn http_fixture_binds_loopback_only() {
    for addr in ["0.0.0.0:0", "192.0.2.1:0", "[::]:0", "example.com:80"] {
        let out = Command::new(EXE)
            .args(["--http", addr])
            .stdin(Stdio::null())
            .output()
            .expect("runs");
        assert_eq!(out.status.code(), Some(3), "{addr}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("loopback") || err.contains("IP:PORT"),
            "{addr}: {err}"
        );
    }
}

#[test]
fn http_crash_on_disconnect_exits_1_with_a_traceback() {
    let rt = runtime();
    let up = upstream(&rt, Fault::hang());
    let mut fx = http_fixture(&["crash-on-disconnect"], Some(&up));
    let client = reqwest::Client::new();
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "weather", "arguments": {"city": "Oslo"}, "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}}});
    rt.block_on(async {
        let resp = post(&client, &fx.url, &call)
            .header("mcp-name", "weather")
            .send()
            .await
            .expect("a response");
        assert_eq!(resp.status(), 200);
        drop(resp);
    });
    assert_eq!(exit_code(&mut fx.child), Some(1));
    assert!(stderr_text(&mut fx.child).contains("Traceback"));
}

// ---------------------------------------------------------------------------------------------
// stdio
// ---------------------------------------------------------------------------------------------

struct StdioFixture {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<Value>,
}

impl Drop for StdioFixture {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl StdioFixture {
    fn send(&mut self, frame: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{frame}").expect("written");
        stdin.flush().expect("flushed");
    }

    /// The next response (notifications skipped).
    fn response(&self) -> Value {
        loop {
            let frame = self.lines.recv_timeout(WAIT).expect("a frame");
            if frame.get("id").is_some() {
                return frame;
            }
        }
    }
}

fn stdio_fixture(flaws: &[&str], up: &FakeUpstream, timeout_ms: u64) -> StdioFixture {
    let mut cmd = Command::new(EXE);
    for flaw in flaws {
        cmd.args(["--flaw", flaw]);
    }
    let mut child = cmd
        .env("UPSTREAM_URL", up.url())
        .env("FIXTURE_UPSTREAM_TIMEOUT_MS", timeout_ms.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the fixture starts");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Ok(v) = serde_json::from_str::<Value>(&line)
                && tx.send(v).is_err()
            {
                return;
            }
        }
    });
    let stdin = child.stdin.take();
    let mut fx = StdioFixture {
        child,
        stdin,
        lines,
    };
    fx.send(
        &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}}),
    );
    assert_eq!(fx.response()["id"], 0);
    fx.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    fx
}

fn weather(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "weather", "arguments": {"city": "Oslo"}}})
}

fn ping(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "ping"})
}

fn cancel(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id}})
}

/// Call 1 waits on a hung upstream and is cancelled; call 3 starts at least 100 ms later. With
/// the fixture's 300 ms upstream timeout, an uncancelled call 1 would time out, and be
/// answered, before call 3 does. The id of the first tool-call response.
fn first_answer_after_cancelling_call_1(flaws: &[&str]) -> Value {
    let rt = runtime();
    let up = upstream(&rt, Fault::hang());
    let mut fx = stdio_fixture(flaws, &up, 300);
    fx.send(&weather(1));
    seen(&rt, &up, 1);
    fx.send(&cancel(1));
    fx.send(&ping(2));
    assert_eq!(fx.response()["id"], 2, "the server keeps serving");
    std::thread::sleep(Duration::from_millis(100));
    fx.send(&weather(3));
    let first = fx.response();
    assert!(first["result"]["isError"] == json!(true), "{first}");
    first["id"].clone()
}

#[test]
fn stdio_cancellation_suppresses_the_response() {
    assert_eq!(first_answer_after_cancelling_call_1(&[]), json!(3));
}

#[test]
fn stdio_flaw_answer_after_cancel() {
    assert_eq!(
        first_answer_after_cancelling_call_1(&["answer-after-cancel"]),
        json!(1)
    );
}

#[test]
fn stdio_ping_is_answered_while_a_call_waits_unless_blocking_call() {
    let rt = runtime();
    // Correct: the upstream never answers, yet ping does.
    let up = upstream(&rt, Fault::hang());
    let mut fx = stdio_fixture(&[], &up, 60_000);
    fx.send(&weather(1));
    seen(&rt, &up, 1);
    fx.send(&ping(2));
    assert_eq!(fx.response()["id"], 2);
    // blocking-call: ping is read only after the call has finished.
    let up = upstream(&rt, Fault::delay(300));
    let mut fx = stdio_fixture(&["blocking-call"], &up, 60_000);
    fx.send(&weather(1));
    seen(&rt, &up, 1);
    fx.send(&ping(2));
    assert_eq!(fx.response()["id"], 1);
    assert_eq!(fx.response()["id"], 2);
}

#[test]
fn stdio_stdin_closing_with_a_call_in_flight() {
    let rt = runtime();
    let up = upstream(&rt, Fault::hang());
    for (flaws, code) in [(&[][..], 0), (&["crash-on-disconnect"][..], 1)] {
        let mut fx = stdio_fixture(flaws, &up, 60_000);
        let before = up.journal().entries().len();
        fx.send(&weather(1));
        seen(&rt, &up, before + 1);
        drop(fx.stdin.take());
        assert_eq!(exit_code(&mut fx.child), Some(code), "{flaws:?}");
        assert_eq!(
            stderr_text(&mut fx.child).contains("Traceback"),
            code == 1,
            "{flaws:?}"
        );
    }
}

#[test]
fn stdio_flaw_duplicate_id_crash() {
    let rt = runtime();
    let up = upstream(&rt, Fault::hang());
    let mut fx = stdio_fixture(&["duplicate-id-crash"], &up, 60_000);
    fx.send(&weather(5));
    seen(&rt, &up, 1);
    fx.send(&ping(5));
    assert_eq!(exit_code(&mut fx.child), Some(1));
    assert!(stderr_text(&mut fx.child).contains("Traceback"));
}

#[test]
fn stdio_flaw_large_frame_hang() {
    let rt = runtime();
    let up = upstream(&rt, Fault::hang());
    let mut fx = stdio_fixture(&["large-frame-hang"], &up, 60_000);
    let text = "x".repeat(1024 * 1024);
    fx.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": text}}}));
    fx.send(&ping(2));
    // A hung server never answers, so this short wait cannot fail spuriously.
    assert!(fx.lines.recv_timeout(Duration::from_millis(300)).is_err());
    assert!(matches!(fx.child.try_wait(), Ok(None)), "still running");
}
