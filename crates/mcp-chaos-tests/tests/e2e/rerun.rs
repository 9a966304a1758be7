//! The summary's last lines name the seed and the exact command that reruns the run; running
//! that command (through `sh`, as a user pasting it would) finds the same findings, with the
//! same generated requests. Numeric knobs come from the environment (`MCP_CHAOS_*`) and the
//! rerun command carries them as flags.

use std::process::Command;

use mcp_chaos_tests::{fixture_command, mcp_chaos};
use serde_json::Value;

/// (code, tool, request) of every finding of the report at `path`.
fn findings(path: &std::path::Path) -> Vec<(String, String, String)> {
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("a report")).expect("JSON");
    report["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|f| {
            (
                f["code"].as_str().unwrap_or_default().to_owned(),
                f["tool"].as_str().unwrap_or_default().to_owned(),
                f["request"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

#[test]
fn the_printed_rerun_command_reproduces_the_findings() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let report = dir.path().join("report.json");
    let out = Command::new(mcp_chaos())
        .args([
            "run",
            "--stdio",
            &fixture_command(&["rejects-valid-args"]),
            "--protocol-version",
            "2025-11-25",
            "--skip-chaos",
            "--quiet",
            "--report-json",
        ])
        .arg(&report)
        .env_remove("MCP_CHAOS_SEED")
        .env("MCP_CHAOS_CASES", "12")
        .env("MCP_CHAOS_TIMEOUT_MS", "4000")
        .output()
        .expect("mcp-chaos runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let first = findings(&report);
    assert!(
        first
            .iter()
            .any(|(_, tool, request)| !tool.is_empty() && !request.is_empty()),
        "{first:?}"
    );
    let line = stdout
        .lines()
        .find(|l| l.starts_with("seed "))
        .unwrap_or_else(|| panic!("no seed line in {stdout}"));
    let (seed, command) = line
        .strip_prefix("seed ")
        .and_then(|l| l.split_once("; rerun exactly: "))
        .unwrap_or_else(|| panic!("{line}"));
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(&report).expect("a report")).expect("JSON");
    assert_eq!(json["seed"].to_string(), seed);
    assert_eq!(json["rerun"], command);
    assert!(command.ends_with(&format!("--seed {seed}")), "{command}");
    assert!(command.contains("--cases 12") && command.contains("--timeout-ms 4000"));
    std::fs::remove_file(&report).expect("remove");
    let again = Command::new("sh")
        .args(["-c", command])
        .env_remove("MCP_CHAOS_CASES")
        .env_remove("MCP_CHAOS_TIMEOUT_MS")
        .env("MCP_CHAOS_SEED", "1")
        .output()
        .expect("sh runs");
    assert_eq!(again.status.code(), Some(1));
    assert_eq!(findings(&report), first);
}

#[test]
fn a_seed_from_the_environment_is_used_and_printed() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let report = dir.path().join("report.json");
    let out = Command::new(mcp_chaos())
        .args([
            "run",
            "--stdio",
            &fixture_command(&[]),
            "--skip-generated",
            "--skip-chaos",
            "--quiet",
            "--report-json",
        ])
        .arg(&report)
        .env("MCP_CHAOS_SEED", "424242")
        .output()
        .expect("mcp-chaos runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(&report).expect("a report")).expect("JSON");
    assert_eq!(json["seed"], 424242);
    assert!(stdout.contains("seed 424242; rerun exactly: "), "{stdout}");
    assert!(
        stdout
            .trim_end()
            .lines()
            .any(|l| l.ends_with("--seed 424242"))
    );
}
