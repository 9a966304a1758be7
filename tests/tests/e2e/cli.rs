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
