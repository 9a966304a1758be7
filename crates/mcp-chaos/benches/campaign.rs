//! The campaign at the server's pace (issue 14), against the bundled fixture over stdio:
//!
//! - before the divan benches, the generated phase's calls/s on one fast tool (`echo`, 2 000
//!   valid cases) with 8 calls in flight (the default `--in-flight`) and one at a time,
//!   next to a bare pipelined client on the same fixture (10 `tools/call` in flight, nothing
//!   judged), and the ratio;
//! - `default_campaign`: the wall time of a default campaign (every phase) on the fixture.

mod common;

use std::time::{Duration, Instant};

use mcp_chaos::protocol::ProtocolVersion;
use mcp_chaos::run::{self, RunConfig, ServerSpec, VersionChoice};
use mcp_chaos::transport::StdioConfig;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

fn main() {
    common::serve_if_asked();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let bare = runtime.block_on(bare_client(10, 4_000));
    for k in [8, 1] {
        let (calls, secs, phase) = runtime.block_on(generated_only(k, 2_000));
        let rate = calls as f64 / secs;
        let (phase_calls, phase_ms) = phase;
        let phase_rate = phase_calls as f64 * 1_000.0 / phase_ms.max(1) as f64;
        println!(
            "generated phase, --in-flight {k}: {calls} calls in {secs:.2} s = {rate:.0} calls/s; \
             bare pipelined client (10 in flight): {bare:.0} calls/s; ratio {:.2}",
            rate / bare
        );
        println!(
            "  the phase alone (summary.generated): {phase_calls} calls in {phase_ms} ms = \
             {phase_rate:.0} calls/s; ratio {:.2}",
            phase_rate / bare
        );
    }
    divan::main();
}

fn fixture() -> StdioConfig {
    common::fixture("stdio")
}

/// A config for the fixture under 2025-11-25 with only the phases `generated` asks for.
fn config(generated: bool) -> RunConfig {
    let mut config = RunConfig::new(
        ServerSpec::Stdio(fixture()),
        VersionChoice::Exactly(ProtocolVersion::V2025_11_25),
    );
    config.seed = 7;
    if generated {
        config.protocol_probes = false;
        config.transport_chaos = false;
        config.version_probe = false;
    }
    config
}

/// The generated phase alone on `echo` with `cases` valid cases and `k` in flight: tool
/// calls made and wall seconds of the whole run, and the phase's own calls and milliseconds
/// (`summary.generated`, without the run's start, its other phases and its shutdown).
async fn generated_only(k: usize, cases: usize) -> (u64, f64, (u64, u64)) {
    let mut config = config(true);
    config.in_flight = k;
    config.cases = cases;
    config.tool_budget = Duration::from_secs(600);
    config.generated_budget = Duration::from_secs(600);
    config.selection.tools = vec!["echo".into()];
    let started = Instant::now();
    let report = run::run(&config, &mut |_| {})
        .await
        .expect("the run starts");
    let phase = report
        .summary
        .generated
        .iter()
        .fold((0, 0), |(c, ms), g| (c + g.calls, ms + g.elapsed_ms));
    (
        report.summary.tool_calls,
        started.elapsed().as_secs_f64(),
        phase,
    )
}

/// A bare client: initialize, then `calls` echo calls with `k` in flight; calls/s.
async fn bare_client(k: usize, calls: usize) -> f64 {
    let mut child = tokio::process::Command::new(common::program())
        .env(common::SERVE, "stdio")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("the fixture starts");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bare","version":"0"}}}"#;
    stdin
        .write_all(format!("{init}\n").as_bytes())
        .await
        .expect("write");
    while let Ok(Some(line)) = lines.next_line().await {
        if line.contains("\"id\":0") {
            break;
        }
    }
    stdin
        .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
        .await
        .expect("write");
    let call = |id: usize| {
        format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"echo\",\"arguments\":{{\"text\":\"hello\"}}}}}}\n"
        )
    };
    let started = Instant::now();
    let (mut sent, mut answered) = (0, 0);
    while sent < k.min(calls) {
        sent += 1;
        stdin.write_all(call(sent).as_bytes()).await.expect("write");
    }
    while answered < calls {
        let Ok(Some(line)) = lines.next_line().await else {
            break;
        };
        if !line.contains("\"result\"") && !line.contains("\"error\"") {
            continue;
        }
        answered += 1;
        if sent < calls {
            sent += 1;
            stdin.write_all(call(sent).as_bytes()).await.expect("write");
        }
    }
    answered as f64 / started.elapsed().as_secs_f64()
}

/// The wall time of a default campaign (every phase) on the fixture.
#[divan::bench(sample_count = 3, sample_size = 1)]
fn default_campaign(bencher: divan::Bencher<'_, '_>) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let config = config(false);
    bencher.bench_local(|| {
        let report = runtime
            .block_on(run::run(&config, &mut |_| {}))
            .expect("the run starts");
        assert!(report.summary.tool_calls > 0);
    });
}
