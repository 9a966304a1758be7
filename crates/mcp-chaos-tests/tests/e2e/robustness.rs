//! Bad input to mcp-chaos itself: a server that prints garbage, exits at once, or never
//! answers `initialize` gives a clear error and exit code 2 within the deadline, leaves no
//! process behind, and still writes the JSON report (`"outcome": "not-started"`, the error,
//! the server's output tail and the handshake exchanges).

use std::time::{Duration, Instant};

use mcp_chaos_tests::{ChaosRun, process_running, run_chaos};

fn assert_start_failure(command: &str, marker: &str, expect_in_error: &str) -> ChaosRun {
    let started = Instant::now();
    let run = run_chaos(&["run", "--stdio", command, "--timeout-ms", "1500"]);
    let elapsed = started.elapsed();
    assert_eq!(
        run.code, 2,
        "stdout: {}\nstderr: {}",
        run.stdout, run.stderr
    );
    assert!(
        run.stderr.contains(expect_in_error),
        "stderr should mention {expect_in_error:?}: {}",
        run.stderr
    );
    // Within the deadline plus the shutdown sequence (close stdin, SIGTERM, SIGKILL).
    assert!(elapsed < Duration::from_secs(15), "took {elapsed:?}");
    // Nothing is left behind: the whole process group was killed.
    let deadline = Instant::now() + Duration::from_secs(5);
    while process_running(marker) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        !process_running(marker),
        "a process matching {marker:?} outlived the run"
    );
    assert_not_started_report(&run, "initialize", expect_in_error);
    run
}

/// The report of a run that could not start: written, marked `not-started`, with the error
/// of `kind` saying `expect_in_error`, nothing tested, and not marked interrupted.
fn assert_not_started_report(run: &ChaosRun, kind: &str, expect_in_error: &str) {
    let report = run
        .report
        .as_ref()
        .unwrap_or_else(|| panic!("exit 2 wrote no report:\n{}\n{}", run.stdout, run.stderr));
    assert_eq!(report["outcome"], "not-started", "{report:#}");
    assert_eq!(report["interrupted"], false, "{report:#}");
    assert_eq!(report["error"]["kind"], kind, "{report:#}");
    assert!(
        report["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains(expect_in_error)),
        "{report:#}"
    );
    assert_eq!(report["findings"], serde_json::json!([]), "{report:#}");
    assert_eq!(report["summary"]["tool_calls"], 0, "{report:#}");
    // The usual terminal summary, saying the run did not start.
    assert!(run.stdout.contains("DID NOT START"), "{}", run.stdout);
}

/// The probes of the exchanges a report quotes.
fn quoted_probes(run: &ChaosRun) -> Vec<String> {
    run.report.as_ref().expect("a report")["exchanges"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|e| e["probe"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// A server that prints garbage and never answers.
#[test]
fn garbage_server_exits_2() {
    let run = assert_start_failure(
        "sh -c 'echo hello world; echo not json either; exec sleep 31.4101'",
        "sleep 31.4101",
        "did not answer initialize within 1500 ms",
    );
    // What was exchanged: both handshake attempts, and the garbage the server answered with.
    assert_eq!(
        quoted_probes(&run),
        ["server/discover", "initialize 2025-11-25"],
        "{:#}",
        run.report.as_ref().expect("a report")
    );
    let exchanges = &run.report.as_ref().expect("a report")["exchanges"];
    assert!(
        exchanges.to_string().contains("hello world"),
        "{exchanges:#}"
    );
    assert!(
        exchanges[0]["sent"]
            .as_str()
            .is_some_and(|s| s.contains(r#""method":"server/discover""#)),
        "{exchanges:#}"
    );
}

/// A server that exits at once.
#[test]
fn server_that_exits_at_once_exits_2() {
    let run = assert_start_failure(
        "sh -c 'echo fatal: missing config >&2; exit 7'",
        "missing config",
        "exited before answering initialize (exit code 7)",
    );
    // The server's output tail is in the report, on its own.
    let error = &run.report.as_ref().expect("a report")["error"];
    assert!(
        error["stderr_tail"]
            .as_str()
            .is_some_and(|t| t.contains("fatal: missing config")),
        "{error:#}"
    );
}

/// A server that answers `initialize` correctly has no `error` in its report, which is
/// `completed`: the fields above are not there whatever happens.
#[test]
fn a_server_that_starts_has_a_completed_report() {
    let command = mcp_chaos_tests::fixture_command(&[]);
    let run = run_chaos(&[
        "run",
        "--stdio",
        &command,
        "--protocol-version",
        "2025-11-25",
        "--skip-generated",
        "--skip-chaos",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = run.report.as_ref().expect("a report");
    assert_eq!(report["outcome"], "completed", "{report:#}");
    assert_eq!(report["interrupted"], false, "{report:#}");
    assert!(report.get("error").is_none(), "{report:#}");
    assert!(report.get("exchanges").is_none(), "{report:#}");
    assert!(!run.stdout.contains("DID NOT START"), "{}", run.stdout);
}

/// A server that never answers `initialize`, with a grandchild that ignores SIGTERM: the
/// whole tree must still be gone.
#[test]
fn silent_server_with_stubborn_grandchild_exits_2() {
    assert_start_failure(
        "sh -c 'trap \"\" TERM; sleep 31.4102 & cat > /dev/null'",
        "sleep 31.4102",
        "did not answer initialize",
    );
}

/// A program that does not exist.
#[test]
fn missing_program_exits_2() {
    let run = run_chaos(&["run", "--stdio", "/no/such/mcp-server --flag"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .contains("could not start \"/no/such/mcp-server\""),
        "{}",
        run.stderr
    );
    assert_not_started_report(&run, "start", "could not start \"/no/such/mcp-server\"");
    assert!(quoted_probes(&run).is_empty());
}
