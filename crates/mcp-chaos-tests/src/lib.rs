//! Helpers for mcp-chaos's end-to-end tests: locate the `mcp-chaos` binary and the fixture
//! server binary, run a campaign, and read its JSON report.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use serde_json::Value;

/// The path of a binary of this workspace built with the same profile as the running test
/// (`target/<profile>/<name>`). It is (re)built once per test process with `cargo build`, so
/// that running only this package's tests never uses a stale binary.
pub fn workspace_bin(name: &str, package: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary has a path");
    // target/<profile>/deps/<test> → target/<profile>
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("the test binary lives in target/<profile>/deps")
        .to_path_buf();
    static BUILT: OnceLock<std::sync::Mutex<Vec<String>>> = OnceLock::new();
    let built = BUILT.get_or_init(Default::default);
    let mut built = built
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if !built.iter().any(|b| b == name) {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut cmd = Command::new(cargo);
        cmd.args(["build", "--quiet", "-p", package, "--bin", name]);
        if dir.ends_with("release") {
            cmd.arg("--release");
        }
        let status = cmd.status().expect("cargo build runs");
        assert!(status.success(), "building {name} failed");
        built.push(name.to_owned());
    }
    dir.join(name)
}

/// The repository's root folder (this crate lives in `crates/mcp-chaos-tests/`).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The `mcp-chaos` binary.
pub fn mcp_chaos() -> PathBuf {
    workspace_bin("mcp-chaos", "mcp-chaos-cli")
}

/// The fixture server binary.
pub fn fixture() -> PathBuf {
    workspace_bin("mcp-chaos-fixture", "mcp-chaos-fixture")
}

/// The fixture's command line with `flaws` planted.
pub fn fixture_command(flaws: &[&str]) -> String {
    let mut words = vec![fixture().to_string_lossy().into_owned()];
    for flaw in flaws {
        words.push(format!("--flaw={flaw}"));
    }
    words.join(" ")
}

/// The result of one `mcp-chaos` invocation.
#[derive(Debug)]
pub struct ChaosRun {
    /// The exit code (`-1` if killed by a signal).
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
    /// The JSON report, when one was written.
    pub report: Option<Value>,
}

impl ChaosRun {
    /// The distinct invariant names of the findings, sorted.
    pub fn invariants(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .findings()
            .iter()
            .filter_map(|f| f["invariant"].as_str().map(str::to_owned))
            .collect();
        names.sort();
        names.dedup();
        names
    }

    /// The findings of the report. Panics when there is no report, so that a run that failed
    /// to start can never pass for a clean one.
    pub fn findings(&self) -> Vec<Value> {
        let report = self.report.as_ref().unwrap_or_else(|| {
            panic!(
                "mcp-chaos wrote no report (exit code {}):\n{}\n{}",
                self.code, self.stdout, self.stderr
            )
        });
        report["findings"].as_array().cloned().unwrap_or_default()
    }

    /// The findings of one severity.
    pub fn with_severity(&self, severity: &str) -> Vec<Value> {
        self.findings()
            .into_iter()
            .filter(|f| f["severity"] == severity)
            .collect()
    }
}

/// Runs `mcp-chaos` with `args`, adding `--report-json` into a temporary directory, and reads
/// the report back.
pub fn run_chaos(args: &[&str]) -> ChaosRun {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let report = dir.path().join("report.json");
    let mut cmd = Command::new(mcp_chaos());
    cmd.args(args);
    let wants_report = args.first().is_some_and(|a| *a == "run" || *a == "demo");
    if wants_report {
        cmd.arg("--report-json").arg(&report).arg("--quiet");
    }
    let out: Output = cmd.output().expect("mcp-chaos runs");
    ChaosRun {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        report: std::fs::read_to_string(&report)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .inspect(|r| assert_matches_schema(Schema::Report, r)),
    }
}

/// A published JSON Schema of mcp-chaos's reports (`schemas/` in the repository).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Schema {
    /// `schemas/report.schema.json`: `mcp-chaos run --report-json`.
    Report,
    /// `schemas/suite-report.schema.json`: `mcp-chaos scenario --report-json`.
    SuiteReport,
}

impl Schema {
    /// The committed file.
    pub fn path(self) -> PathBuf {
        let name = match self {
            Schema::Report => "report.schema.json",
            Schema::SuiteReport => "suite-report.schema.json",
        };
        repo_root().join("schemas").join(name)
    }

    /// The schema generated from mcp-chaos's report types.
    pub fn generated(self) -> Value {
        match self {
            Schema::Report => mcp_chaos::run::report_json_schema(),
            Schema::SuiteReport => mcp_chaos::scenario::outcome::suite_report_json_schema(),
        }
    }
}

/// Panics unless `report` validates against the committed `schema`, listing every error:
/// every report an end-to-end test reads is held against the published contract.
pub fn assert_matches_schema(schema: Schema, report: &Value) {
    static VALIDATORS: OnceLock<[jsonschema::Validator; 2]> = OnceLock::new();
    let validators = VALIDATORS.get_or_init(|| {
        [Schema::Report, Schema::SuiteReport].map(|s| {
            let text = std::fs::read_to_string(s.path()).expect("the committed schema");
            let schema: Value = serde_json::from_str(&text).expect("the schema is JSON");
            jsonschema::validator_for(&schema).expect("the schema compiles")
        })
    });
    let validator = &validators[usize::from(schema == Schema::SuiteReport)];
    let errors: Vec<String> = validator
        .iter_errors(report)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "the report does not match {}: {errors:#?}",
        schema.path().display()
    );
}

/// Whether any process whose command line contains `marker` is running.
pub fn process_running(marker: &str) -> bool {
    Command::new("pgrep")
        .args(["-f", marker])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}
