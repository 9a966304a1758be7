//! The command-line surface: the demo, exit codes, `explain`, `--help`.

use mcp_chaos_tests::run_chaos;

/// `mcp-chaos demo` prints findings from the bundled fixture and exits 1.
#[test]
fn demo_prints_findings_and_exits_1() {
    let run = run_chaos(&["demo"]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("VIOLATIONS"), "{}", run.stdout);
    assert!(run.stdout.contains("stdout-not-protocol"), "{}", run.stdout);
    let report = run.report.expect("a report");
    assert!(report["summary"]["violations"].as_u64() > Some(0));
    assert!(report["mcp_chaos_version"].is_string());
    assert!(report["server"]["command"].is_string());
}

/// A usage error exits 3; `--help` teaches the exit codes and exits 0.
#[test]
fn usage_errors_exit_3_and_help_exits_0() {
    let run = run_chaos(&["run", "--no-such-flag"]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    let run = run_chaos(&["run", "--stdio", "x", "--protocol-version", "1999-01-01"]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(
        run.stderr.contains("unknown MCP protocol version"),
        "{}",
        run.stderr
    );
    let run = run_chaos(&["run", "--help"]);
    assert_eq!(run.code, 0);
    assert!(run.stdout.contains("Exit codes:"), "{}", run.stdout);
}

/// `explain` knows every invariant by code and by name.
#[test]
fn explain_lists_and_explains() {
    let run = run_chaos(&["explain"]);
    assert_eq!(run.code, 0);
    for inv in mcp_chaos::finding::CATALOG {
        assert!(run.stdout.contains(inv.code) && run.stdout.contains(inv.name));
    }
    let run = run_chaos(&["explain", "wrong-error-code"]);
    assert_eq!(run.code, 0);
    assert!(run.stdout.contains("MC102") && run.stdout.contains("Spec: https://"));
    let run = run_chaos(&["explain", "MC999"]);
    assert_eq!(run.code, 3);
}

/// `--record DIR` writes every frame sent and received, in order.
#[test]
fn record_writes_a_transcript() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let record = dir.path().join("frames");
    let record_arg = record.to_string_lossy().into_owned();
    let command = mcp_chaos_tests::fixture_command(&[]);
    let run = run_chaos(&[
        "run",
        "--stdio",
        &command,
        "--record",
        &record_arg,
        "--protocol-version",
        "2025-11-25",
        "--skip-generated",
        "--skip-chaos",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let transcript =
        std::fs::read_to_string(record.join("transcript.jsonl")).expect("a transcript");
    let lines: Vec<serde_json::Value> = transcript
        .lines()
        .map(|l| serde_json::from_str(l).expect("json lines"))
        .collect();
    assert!(lines.len() > 40, "{} lines", lines.len());
    assert_eq!(lines[0]["direction"], "sent");
    assert_eq!(lines[0]["probe"], "initialize 2025-11-25");
    let first = std::fs::read(record.join(lines[0]["file"].as_str().unwrap())).unwrap();
    assert!(mcp_chaos::wire::parse(&first).is_ok());
    let exchanges = run.report.unwrap()["summary"]["exchanges"]
        .as_u64()
        .unwrap();
    let sent = lines.iter().filter(|l| l["direction"] == "sent").count() as u64;
    assert_eq!(sent, exchanges);
}

/// `--budget-ms` bounds the run: with a budget spent before the first phase, the run still
/// ends with a verdict (exit 0 on the correct fixture), and the report and the terminal say
/// what was cut, phase by phase.
#[test]
fn a_spent_budget_cuts_every_phase_and_says_so() {
    let command = mcp_chaos_tests::fixture_command(&[]);
    let run = run_chaos(&[
        "run",
        "--stdio",
        &command,
        "--protocol-version",
        "2025-11-25",
        "--budget-ms",
        "1",
    ]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let report = run.report.expect("a report");
    let cut: Vec<&str> = report["summary"]["budget_cut"]
        .as_array()
        .expect("summary.budget_cut")
        .iter()
        .filter_map(serde_json::Value::as_str)
        .collect();
    for line in [
        "protocol probes: not run",
        "baseline calls: not run",
        "features phase: not run",
        "transport chaos: not run",
        "version probe: not run",
    ] {
        assert!(cut.contains(&line), "{line} missing from {cut:?}");
    }
    assert!(
        cut.iter()
            .any(|l| l.starts_with("generated phase: ") && l.ends_with(" tools not reached")),
        "{cut:?}"
    );
    assert!(
        run.stdout
            .contains("budget (--budget-ms) spent; cut: protocol probes: not run"),
        "{}",
        run.stdout
    );
    assert_eq!(report["summary"]["tool_calls"], 0, "{report:#}");
    // Nothing of the features phase was sent, so its counts are left out.
    assert!(report["summary"].get("features").is_none(), "{report:#}");
}
