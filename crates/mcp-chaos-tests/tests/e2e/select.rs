//! Tool selection: `--tools`, `--skip-tools` and `--read-only` call exactly the tools asked
//! (every `tools/call` frame sent is read back from `--record`), and the tools annotated
//! `destructiveHint: true` are listed on stderr before the campaign starts. The fixture lists
//! echo, add, big (annotated read-only) and, with `FIXTURE_DESTRUCTIVE_TOOL=1`,
//! delete_all_records (annotated destructive).

use std::collections::BTreeSet;
use std::process::Command;

use mcp_chaos_tests::{fixture_command, mcp_chaos};
use serde_json::Value;

/// The tools the fixture lists with `FIXTURE_DESTRUCTIVE_TOOL=1`.
const FIXTURE_TOOLS: [&str; 4] = ["echo", "add", "big", "delete_all_records"];

struct Selected {
    code: i32,
    stderr: String,
    report: Value,
    /// The tools named by every `tools/call` frame sent.
    called: BTreeSet<String>,
}

fn run(extra: &[&str]) -> Selected {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let report = dir.path().join("report.json");
    let record = dir.path().join("record");
    let out = Command::new(mcp_chaos())
        .args([
            "run",
            "--stdio",
            &fixture_command(&[]),
            "--env",
            "FIXTURE_DESTRUCTIVE_TOOL=1",
            "--protocol-version",
            "2025-11-25",
            "--cases",
            "4",
            "--timeout-ms",
            "3000",
            "--report-json",
        ])
        .arg(&report)
        .arg("--record")
        .arg(&record)
        .args(extra)
        .output()
        .expect("mcp-chaos runs");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let report: Value = serde_json::from_str(
        &std::fs::read_to_string(&report).unwrap_or_else(|_| panic!("no report: {stderr}")),
    )
    .expect("JSON");
    let mut called = BTreeSet::new();
    for entry in std::fs::read_dir(record.join("sent")).expect("recorded frames") {
        // The wire phase sends frames that are not UTF-8 (nor JSON): they name no tool.
        let bytes = std::fs::read(entry.expect("an entry").path()).expect("a frame");
        let Ok(frame) = serde_json::from_slice::<Value>(&bytes) else {
            continue;
        };
        for message in frame.as_array().cloned().unwrap_or_else(|| vec![frame]) {
            if message["method"] == "tools/call"
                && let Some(name) = message["params"]["name"].as_str()
            {
                called.insert(name.to_owned());
            }
        }
    }
    // Only the fixture's own tools count: the unknown-tool probe and the wire phase's
    // generated frames also call names the server does not list (an unknown tool is owed a
    // protocol error, and no selection can leave out a tool that is not there).
    called.retain(|name| FIXTURE_TOOLS.contains(&name.as_str()));
    Selected {
        code: out.status.code().unwrap_or(-1),
        stderr,
        report,
        called,
    }
}

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|n| (*n).to_owned()).collect()
}

/// The tools of the report's generated phase.
fn generated(report: &Value) -> BTreeSet<String> {
    report["summary"]["generated"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|g| g["tool"].as_str().map(str::to_owned))
        .collect()
}

fn skipped(report: &Value) -> BTreeSet<String> {
    report["summary"]["skipped_tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s["tool"].as_str().map(str::to_owned))
        .collect()
}

const WARNING: &str = "annotated destructiveHint: true and will be called";

#[test]
fn every_tool_by_default_and_the_destructive_one_is_listed_before_the_campaign() {
    let run = run(&[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let all = set(&["echo", "add", "big", "delete_all_records"]);
    assert_eq!(run.called, all);
    assert_eq!(generated(&run.report), all);
    assert_eq!(run.report["summary"]["tools"], 4);
    let warning = run.stderr.find(WARNING).expect("the destructive warning");
    assert!(run.stderr[warning..].contains("delete_all_records"));
    let planned = run.stderr.find("probes planned").expect("the plan line");
    assert!(warning < planned, "{}", run.stderr);
}

#[test]
fn tools_calls_only_the_tools_matching() {
    let run = run(&["--tools", "e*,a?d", "--quiet"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.called, set(&["echo", "add"]));
    assert_eq!(generated(&run.report), set(&["echo", "add"]));
    assert_eq!(skipped(&run.report), set(&["big", "delete_all_records"]));
    assert!(!run.stderr.contains(WARNING), "{}", run.stderr);
}

#[test]
fn skip_tools_leaves_the_matching_tools_out() {
    let run = run(&["--skip-tools", "delete_*", "--skip-tools", "big", "--quiet"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.called, set(&["echo", "add"]));
    assert_eq!(skipped(&run.report), set(&["big", "delete_all_records"]));
}

#[test]
fn read_only_calls_only_tools_annotated_read_only() {
    let run = run(&["--read-only", "--quiet"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.called, set(&["echo", "add", "big"]));
    assert_eq!(skipped(&run.report), set(&["delete_all_records"]));
    assert!(!run.stderr.contains(WARNING), "{}", run.stderr);
}

#[test]
fn a_glob_matching_no_tool_is_warned_about() {
    let run = run(&["--tools", "ehco", "--quiet"]);
    assert!(
        run.stderr.contains("\"ehco\" matches no tool"),
        "{}",
        run.stderr
    );
    assert_eq!(run.called, BTreeSet::new());
}

/// A scenario's `skip_tools`: the fixture's `configure` tool crashes the server (the
/// panic-in-handler flaw); a `generate` step over every tool finds it, and the same scenario
/// with `skip_tools = ["conf*"]` never calls it and passes.
#[test]
fn scenario_skip_tools_leaves_the_crashing_tool_out() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let play = |keys: &str| {
        let file = dir.path().join("s.toml");
        let fixture = mcp_chaos_tests::fixture();
        std::fs::write(
            &file,
            format!(
                "{keys}\ncases = 4\n[server]\nstdio = [\"{}\", \"--flaw=panic-in-handler\"]\nprotocol_version = \"2025-11-25\"\n\n[[step]]\ngenerate = {{}}\n",
                fixture.display()
            ),
        )
        .expect("write");
        let report = dir.path().join("report.json");
        let out = Command::new(mcp_chaos())
            .arg("scenario")
            .arg(&file)
            .arg("-q")
            .arg("--report-json")
            .arg(&report)
            .output()
            .expect("mcp-chaos runs");
        let report: Value =
            serde_json::from_str(&std::fs::read_to_string(&report).expect("a report"))
                .expect("JSON");
        (out.status.code(), report)
    };
    let (code, report) = play("");
    let findings = report["scenarios"][0]["findings"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(code, Some(1), "{report}");
    assert!(
        findings.iter().any(|f| f["tool"] == "configure"),
        "{report}"
    );
    let (code, report) = play("skip_tools = [\"conf*\"]");
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(report["scenarios"][0]["findings"], serde_json::json!([]));
}
