//! A report whatever happens: the findings journal beside `--report-json`
//! (`report.findings.jsonl`, one line per finding as it is found), and the partial report
//! that SIGTERM and SIGINT write (the findings so far, `"interrupted": true`, exit 1 with a
//! violation so far, else 2, never a signal) before the server's process tree is killed,
//! with `--junit`, `--sarif`, `--markdown` and `--html` written from it too. The exit-2
//! report (a server that cannot start) is checked in `robustness.rs`.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use mcp_chaos_tests::{fixture_command, process_running};

/// The JSON lines of the file at `path` (none when it does not exist).
fn json_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// What identifies a finding across the journal and the report.
fn key(f: &Value) -> (String, String, String) {
    (
        f["code"].as_str().unwrap_or_default().to_owned(),
        f["probe"].as_str().unwrap_or_default().to_owned(),
        f["message"].as_str().unwrap_or_default().to_owned(),
    )
}

fn keys(findings: &[Value]) -> Vec<(String, String, String)> {
    let mut k: Vec<_> = findings.iter().map(key).collect();
    k.sort();
    k
}

/// `--report-json out/r.json` journals every finding of a completed run in
/// `out/r.findings.jsonl`, each in the report's shape, as many lines as distinct findings;
/// a correct server's journal is empty.
#[test]
fn the_journal_lists_every_finding_of_the_report() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let report_path = dir.path().join("out/r.json");
    let journal_path = dir.path().join("out/r.findings.jsonl");
    for (flaws, code) in [
        (&["wrong-error-codes", "stdout-noise"][..], 1),
        (&[][..], 0),
    ] {
        let command = fixture_command(flaws);
        let out = Command::new(mcp_chaos_tests::mcp_chaos())
            .args([
                "run",
                "--stdio",
                &command,
                "--protocol-version",
                "2025-11-25",
                "--skip-generated",
                "--skip-chaos",
                "--quiet",
                "--report-json",
            ])
            .arg(&report_path)
            .output()
            .expect("mcp-chaos runs");
        assert_eq!(
            out.status.code(),
            Some(code),
            "{flaws:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let report: Value =
            serde_json::from_str(&std::fs::read_to_string(&report_path).expect("a report"))
                .expect("JSON");
        let findings = report["findings"].as_array().cloned().unwrap_or_default();
        let journal = json_lines(&journal_path);
        assert!(journal_path.is_file(), "{flaws:?}: no journal");
        assert_eq!(keys(&journal), keys(&findings), "{flaws:?}");
        if flaws.is_empty() {
            assert!(journal.is_empty(), "{journal:?}");
        } else {
            let invariants: Vec<&str> = journal
                .iter()
                .filter_map(|f| f["invariant"].as_str())
                .collect();
            assert!(invariants.contains(&"wrong-error-code"), "{invariants:?}");
            assert!(
                invariants.contains(&"stdout-not-protocol"),
                "{invariants:?}"
            );
            // The report's shape, field for field (occurrences aside: counted on).
            for line in &journal {
                let in_report = findings
                    .iter()
                    .find(|f| key(f) == key(line))
                    .expect("there");
                let mut a = line.clone();
                let mut b = in_report.clone();
                a["occurrences"] = Value::Null;
                b["occurrences"] = Value::Null;
                assert_eq!(a, b);
            }
        }
    }
}

/// A run in the background, its stderr in a file.
struct Background {
    child: Child,
    stderr: PathBuf,
    report: PathBuf,
    journal: PathBuf,
    dir: tempfile::TempDir,
}

fn start(command: &str) -> Background {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let report = dir.path().join("report.json");
    let stderr = dir.path().join("stderr");
    let child = Command::new(mcp_chaos_tests::mcp_chaos())
        .args(["run", "--stdio", command, "--report-json"])
        .arg(&report)
        .arg("--junit")
        .arg(dir.path().join("junit.xml"))
        .arg("--sarif")
        .arg(dir.path().join("results.sarif"))
        .arg("--markdown")
        .arg(dir.path().join("summary.md"))
        .arg("--html")
        .arg(dir.path().join("report.html"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&stderr).expect("the stderr file"))
        .spawn()
        .expect("mcp-chaos starts");
    Background {
        child,
        stderr,
        journal: dir.path().join("report.findings.jsonl"),
        report,
        dir,
    }
}

impl Background {
    /// Waits (up to 60 s) until `ready` holds.
    fn wait_until(&self, what: &str, ready: impl Fn(&Background) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !ready(self) {
            assert!(Instant::now() < deadline, "never {what}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    /// Sends `signal` and waits for the exit: its code (None: a signal ended it) and the time
    /// it took.
    fn signal_and_wait(&mut self, signal: &str) -> (Option<i32>, Duration) {
        let sent = Instant::now();
        let status = Command::new("kill")
            .args([signal, &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success());
        let deadline = sent + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.try_wait().expect("waitable") {
                return (status.code(), sent.elapsed());
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("mcp-chaos still running 30 s after {signal}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn report(&self) -> Value {
        let text = std::fs::read_to_string(&self.report).unwrap_or_else(|e| {
            panic!("no report: {e}\n{}", self.stderr());
        });
        serde_json::from_str(&text).expect("the report is JSON")
    }

    /// The file reports written beside the JSON one: JUnit (read back by junit-parser), the
    /// SARIF (JSON), the Markdown and the HTML.
    fn file_reports(&self) -> (junit_parser::TestSuites, Value, String, String) {
        let read = |name: &str| {
            std::fs::read_to_string(self.dir.path().join(name))
                .unwrap_or_else(|e| panic!("no {name}: {e}\n{}", self.stderr()))
        };
        let junit = junit_parser::from_reader(std::io::Cursor::new(read("junit.xml")))
            .expect("junit-parser reads it");
        let sarif = serde_json::from_str(&read("results.sarif")).expect("SARIF is JSON");
        (junit, sarif, read("summary.md"), read("report.html"))
    }
}

/// SIGTERM mid-campaign, once a violation was found: the partial report holds the findings
/// so far (every one the journal has), is marked interrupted, the exit code is 1, and the
/// server's process tree is gone.
#[test]
fn sigterm_writes_the_partial_report_and_exits_1_after_a_violation() {
    let marker = format!("report-e2e-sigterm-{}", std::process::id());
    let command = format!(
        "sh -c '{} --flaw=wrong-error-codes; : {marker}'",
        fixture_command(&[])
    );
    let mut run = start(&command);
    run.wait_until("a violation in the journal", |r| {
        json_lines(&r.journal)
            .iter()
            .any(|f| f["severity"] == "violation")
    });
    let (code, took) = run.signal_and_wait("-TERM");
    assert_eq!(code, Some(1), "{}", run.stderr());
    assert!(took < Duration::from_secs(5), "{took:?}");
    let report = run.report();
    assert_eq!(report["interrupted"], true, "{report:#}");
    assert_eq!(report["outcome"], "interrupted", "{report:#}");
    assert_eq!(report["error"]["kind"], "interrupted", "{report:#}");
    assert!(
        report["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("SIGTERM")),
        "{report:#}"
    );
    let findings = report["findings"].as_array().cloned().unwrap_or_default();
    assert!(
        findings
            .iter()
            .any(|f| f["invariant"] == "wrong-error-code"),
        "{report:#}"
    );
    // Everything journaled is in the report (the journal was read before the signal, and
    // the run went on: the report may have more).
    let reported = keys(&findings);
    for line in json_lines(&run.journal) {
        assert!(reported.contains(&key(&line)), "{line} not in the report");
    }
    assert!(report["summary"]["exchanges"].as_u64() > Some(0));
    // The file reports say the same: a failed test case per violating step, a SARIF result
    // per finding, FAILED.
    let (junit, sarif, markdown, html) = run.file_reports();
    assert!(junit.failures > 0, "{junit:?}");
    assert_eq!(
        sarif["runs"][0]["results"].as_array().map(Vec::len),
        Some(findings.len())
    );
    assert!(markdown.contains("FAILED"), "{markdown}");
    assert!(
        markdown.contains("**Interrupted** (SIGINT or SIGTERM)"),
        "{markdown}"
    );
    assert!(html.contains("mcp-chaos: FAILED"), "{html}");
    assert!(html.contains("<strong>Interrupted</strong>"), "{html}");
    let deadline = Instant::now() + Duration::from_secs(5);
    while process_running(&marker) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!process_running(&marker), "the server outlived the run");
}

/// SIGINT against a correct server, once the probes are planned: nothing found, so the
/// exit code is 2 (the run did not complete), with a report marked interrupted; a completed
/// run of the same server is not marked (see `robustness.rs`).
#[test]
fn sigint_without_a_violation_exits_2_with_the_report() {
    let command = fixture_command(&[]);
    let mut run = start(&command);
    run.wait_until("the probes planned", |r| {
        r.stderr().contains("probes planned")
    });
    let (code, took) = run.signal_and_wait("-INT");
    assert_eq!(code, Some(2), "{}", run.stderr());
    assert!(took < Duration::from_secs(5), "{took:?}");
    let report = run.report();
    assert_eq!(report["interrupted"], true, "{report:#}");
    assert!(
        report["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("SIGINT")),
        "{report:#}"
    );
    assert_eq!(report["summary"]["violations"], 0, "{report:#}");
    assert!(
        run.stderr().contains("interrupted by SIGINT"),
        "{}",
        run.stderr()
    );
    // The file reports: the run is an error (it did not complete), not a pass.
    let (junit, _, markdown, html) = run.file_reports();
    assert_eq!(junit.failures, 0, "{junit:?}");
    assert_eq!(junit.errors, 1, "{junit:?}");
    let error = junit.suites[0]
        .cases
        .iter()
        .find(|c| c.status.is_error())
        .expect("an error test case");
    assert!(
        format!("{:?}", error.status).contains("SIGINT"),
        "{error:?}"
    );
    assert!(markdown.contains("ERROR"), "{markdown}");
    assert!(
        html.contains("mcp-chaos: ERROR") && html.contains("SIGINT"),
        "{html}"
    );
}

/// The published JSON Schemas of the reports (`schemas/report.schema.json`,
/// `schemas/suite-report.schema.json`) are the ones generated from the report types; every
/// report the end-to-end tests read is held against them (`run_chaos`, the scenario tests).
/// `MCP_CHAOS_WRITE_SCHEMAS=1` rewrites them.
#[test]
fn the_published_report_schemas_are_current() {
    use mcp_chaos_tests::Schema;
    for schema in [Schema::Report, Schema::SuiteReport] {
        let generated = schema.generated();
        assert!(
            generated["$defs"].as_object().is_some_and(|d| d.len() > 5),
            "{generated:#}"
        );
        let text = serde_json::to_string_pretty(&generated).expect("JSON") + "\n";
        if std::env::var_os("MCP_CHAOS_WRITE_SCHEMAS").is_some() {
            std::fs::write(schema.path(), &text).expect("the schema is written");
        }
        let committed = std::fs::read_to_string(schema.path()).unwrap_or_default();
        let committed: Value = serde_json::from_str(&committed).unwrap_or(Value::Null);
        assert_eq!(
            committed,
            generated,
            "{} is stale: MCP_CHAOS_WRITE_SCHEMAS=1 cargo test -p mcp-chaos-tests --test e2e \
             the_published_report_schemas_are_current",
            schema.path().display()
        );
    }
}

/// The schema rejects what is not a report: it is a contract, not a formality.
#[test]
fn the_report_schema_rejects_a_report_missing_its_findings() {
    let command = fixture_command(&["wrong-error-codes"]);
    let run = mcp_chaos_tests::run_chaos(&[
        "run",
        "--stdio",
        &command,
        "--protocol-version",
        "2025-11-25",
        "--skip-generated",
        "--skip-chaos",
    ]);
    let mut report = run.report.expect("a report");
    assert!(
        report["findings"].as_array().is_some_and(|f| !f.is_empty()),
        "{report:#}"
    );
    mcp_chaos_tests::assert_matches_schema(mcp_chaos_tests::Schema::Report, &report);
    report
        .as_object_mut()
        .expect("an object")
        .remove("findings");
    let missing = std::panic::catch_unwind(|| {
        mcp_chaos_tests::assert_matches_schema(mcp_chaos_tests::Schema::Report, &report);
    });
    assert!(missing.is_err(), "a report without findings passed");
}
