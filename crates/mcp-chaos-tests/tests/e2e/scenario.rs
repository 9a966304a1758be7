//! `mcp-chaos scenario`: the scenario suite under `scenarios/`, run by the real binary. Every
//! flaw has its scenario; a flaw planted in a passing scenario fails it with the right finding
//! and a JUnit failure; a malformed file names its file, line and key; a server that never
//! starts fails its scenario only (exit 2); shards partition the suite; baselines accept,
//! and list as fixed; the committed JSON Schema is current and every scenario validates
//! against it; the SARIF of a run validates against the SARIF 2.1.0 schema.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use mcp_chaos_fixture::Flaw;
use mcp_chaos_tests::mcp_chaos;
use serde_json::Value;

/// The repository root.
fn repo() -> PathBuf {
    mcp_chaos_tests::repo_root()
}

/// One `mcp-chaos scenario` invocation.
struct SuiteRun {
    code: i32,
    stdout: String,
    stderr: String,
    report: Option<Value>,
    junit: Option<String>,
    sarif: Option<Value>,
}

impl SuiteRun {
    fn report(&self) -> &Value {
        self.report.as_ref().unwrap_or_else(|| {
            panic!(
                "no suite report (exit {}):\n{}\n{}",
                self.code, self.stdout, self.stderr
            )
        })
    }

    /// The scenario report named `name`.
    fn scenario(&self, name: &str) -> &Value {
        self.report()["scenarios"]
            .as_array()
            .and_then(|s| s.iter().find(|s| s["name"] == name))
            .unwrap_or_else(|| panic!("no scenario {name} in {}", self.report()))
    }
}

/// Runs `mcp-chaos scenario ARGS... -q` with JSON, JUnit and SARIF reports into a temporary
/// directory, and reads them back.
fn scenario(args: &[&str]) -> SuiteRun {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let report = dir.path().join("report.json");
    let junit = dir.path().join("junit.xml");
    let sarif = dir.path().join("results.sarif");
    let out = Command::new(mcp_chaos())
        .arg("scenario")
        .args(args)
        .arg("-q")
        .arg("--report-json")
        .arg(&report)
        .arg("--junit")
        .arg(&junit)
        .arg("--sarif")
        .arg(&sarif)
        .current_dir(repo())
        .output()
        .expect("mcp-chaos runs");
    SuiteRun {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        report: std::fs::read_to_string(&report)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .inspect(|r| {
                mcp_chaos_tests::assert_matches_schema(mcp_chaos_tests::Schema::SuiteReport, r);
            }),
        junit: std::fs::read_to_string(&junit).ok(),
        sarif: std::fs::read_to_string(&sarif)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok()),
    }
}

/// Runs `mcp-chaos scenario ARGS...` as is (for `--list`, `--schema`, errors).
fn scenario_plain(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(mcp_chaos())
        .arg("scenario")
        .args(args)
        .current_dir(repo())
        .output()
        .expect("mcp-chaos runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Every `*.toml` under `dir`, recursively.
fn toml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a readable folder") {
        let path = entry.expect("a folder entry").path();
        if path.is_dir() {
            toml_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "toml") {
            out.push(path);
        }
    }
}

/// A small fixture scenario: two explicit business failures and the protocol probes (a few
/// seconds), with `flaws` planted in the fixture.
fn small_fixture_scenario(name: &str, flaws: &[&str]) -> String {
    let mut stdio = vec!["\"{mcp-chaos}\"".to_owned(), "\"fixture\"".to_owned()];
    for flaw in flaws {
        stdio.push("\"--flaw\"".to_owned());
        stdio.push(format!("\"{flaw}\""));
    }
    format!(
        r#"name = "{name}"
seed = 3

[server]
stdio = [{stdio}]
protocol_version = "2025-11-25"

[upstream]
env = ["UPSTREAM_URL"]

[[step]]
name = "a missing record is an actionable isError result"
call = {{ tool = "get_record", arguments = {{ id = 404 }} }}
fault = "not-found"
expect = {{ channel = "result", is_error = true, content_matches = "(?i)no record" }}

[[step]]
faults = {{ tool = "get_record", faults = ["not-found", "server-error-500"] }}
"#,
        stdio = stdio.join(", ")
    )
}

#[test]
fn every_flaw_has_a_scenario_that_expects_its_invariant() {
    let dir = repo().join("scenarios/fixture/flaws");
    for flaw in Flaw::ALL {
        let path = dir.join(format!("{}.toml", flaw.name()));
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("no scenario for the flaw {flaw}: {}: {e}", path.display()));
        let doc: toml::Table = toml::from_str(&text).expect("the scenario is TOML");
        let stdio = doc["server"]
            .get("stdio")
            .or_else(|| doc["server"].get("start"))
            .map(ToString::to_string)
            .unwrap_or_default();
        assert!(
            stdio.contains(&format!("\"--flaw\", \"{}\"", flaw.name())),
            "{}: the fixture is not started with --flaw {flaw}: {stdio}",
            path.display()
        );
        let reported: Vec<&str> = doc["expect"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|e| e.get("reported")?.as_array())
            .flatten()
            .filter_map(toml::Value::as_str)
            .collect();
        assert!(
            reported.contains(&flaw.invariant()),
            "{}: does not expect {} to be reported",
            path.display(),
            flaw.invariant()
        );
    }
    // And no scenario for a flaw that no longer exists.
    for entry in std::fs::read_dir(&dir).expect("scenarios/fixture/flaws") {
        let path = entry.expect("an entry").path();
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        assert!(
            Flaw::ALL.iter().any(|f| f.name() == stem),
            "{} names no flaw",
            path.display()
        );
    }
}

/// The forecast tool makes two upstream requests; the `empty-success-on-lookup-failure` flaw
/// mishandles a failure of the first only. Its scenario finds it with a fault on the first
/// request only and with one on `/stations` only, and not with a fault on every request or on
/// the second only; each finding says which request got what. The correct fixture passes the
/// scoped-faults scenario with no finding, and the flaw scenario's expectations fail on it.
#[test]
fn a_scoped_fault_finds_the_lookup_flaw_and_the_correct_fixture_passes() {
    let flawed = repo().join("scenarios/fixture/flaws/empty-success-on-lookup-failure.toml");
    let correct = repo().join("scenarios/fixture/scoped-faults.toml");
    let run = scenario(&[
        flawed.to_str().expect("utf-8"),
        correct.to_str().expect("utf-8"),
    ]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let report = run.scenario("fixture-flaw-empty-success-on-lookup-failure");
    assert_eq!(report["status"], "passed", "{report:#}");
    let findings: Vec<&Value> = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .collect();
    let scopes: Vec<&str> = findings
        .iter()
        .map(|f| {
            assert_eq!(f["invariant"], "error-masked-as-success", "{f:#}");
            f["fault"]["scope"].as_str().unwrap_or("")
        })
        .collect();
    assert_eq!(
        scopes,
        ["the first request only", "every request to /stations"],
        "{findings:#?}"
    );
    let attribution = findings[0]["fault"]["attribution"].as_str().unwrap_or("");
    assert_eq!(
        attribution,
        "the first request (GET /stations?city=Oslo) got 503 unavailable, the second \
         (GET /forecast?city=Oslo) 200 ok"
    );
    assert!(
        findings[0]["message"]
            .as_str()
            .is_some_and(|m| m.contains(attribution)),
        "{:#}",
        findings[0]
    );
    let correct_report = run.scenario("fixture-scoped-faults");
    assert_eq!(correct_report["status"], "passed", "{correct_report:#}");
    assert_eq!(
        correct_report["findings"].as_array().map(Vec::len),
        Some(0),
        "{correct_report:#}"
    );

    // The flaw scenario's expectations can fail: against the correct fixture they do.
    let dir = tempfile::tempdir().expect("a temporary directory");
    let unplanted = dir.path().join("unplanted.toml");
    let text = std::fs::read_to_string(&flawed).expect("the flaw scenario");
    let text = text.replace(", \"--flaw\", \"empty-success-on-lookup-failure\"", "");
    assert!(!text.contains("--flaw"), "{text}");
    std::fs::write(&unplanted, text).expect("written");
    let run = scenario(&[unplanted.to_str().expect("utf-8")]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let report = run.scenario("fixture-flaw-empty-success-on-lookup-failure");
    assert_eq!(report["status"], "failed", "{report:#}");
}

#[test]
fn a_flaw_planted_in_a_passing_scenario_fails_it_with_its_finding_and_a_junit_failure() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let correct = dir.path().join("correct.toml");
    std::fs::write(&correct, small_fixture_scenario("small-correct", &[])).expect("written");
    let run = scenario(&[correct.to_str().expect("utf-8")]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(run.scenario("small-correct")["status"], "passed");
    assert_eq!(
        run.scenario("small-correct")["findings"]
            .as_array()
            .map(Vec::len),
        Some(0)
    );

    let broken = dir.path().join("broken.toml");
    std::fs::write(
        &broken,
        small_fixture_scenario("small-broken", &["protocol-error-on-404"]),
    )
    .expect("written");
    let run = scenario(&[broken.to_str().expect("utf-8")]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let report = run.scenario("small-broken");
    assert_eq!(report["status"], "failed");
    let findings = report["findings"].as_array().expect("findings");
    assert!(
        findings
            .iter()
            .any(|f| f["invariant"] == "business-failure-as-protocol-error"
                && f["status"]["kind"] == "new"),
        "{findings:#?}"
    );
    // The explicit step's expectation failed too (a JSON-RPC error, not a result).
    assert!(
        findings.iter().any(|f| f["code"] == "MC601"),
        "{findings:#?}"
    );

    let junit = run.junit.as_deref().expect("a JUnit report");
    let suites =
        junit_parser::from_reader(std::io::Cursor::new(junit)).expect("the JUnit report parses");
    let suite = suites
        .suites
        .iter()
        .find(|s| s.name == "small-broken")
        .expect("a test suite per scenario");
    assert!(suite.failures >= 1, "{junit}");
    let failed: Vec<&junit_parser::TestCase> = suite
        .cases
        .iter()
        .filter(|c| c.status.is_failure())
        .collect();
    assert!(
        failed.iter().any(|c| {
            let f = c.status.failure_as_ref();
            f.text.contains("MC") || f.message.contains("MC")
        }),
        "a failing test case carries the finding: {junit}"
    );
}

#[test]
fn a_malformed_scenario_names_file_line_and_key_and_nothing_runs() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let good = dir.path().join("a-good.toml");
    std::fs::write(&good, small_fixture_scenario("good", &[])).expect("written");
    let bad = dir.path().join("b-bad.toml");
    std::fs::write(
        &bad,
        "name = \"bad\"\n\n[server]\nstdio = [\"true\"]\n\n[[step]]\ncall = { tool = \"x\" }\nexpct = { is_error = true }\n",
    )
    .expect("written");
    let (code, stdout, stderr) = scenario_plain(&[dir.path().to_str().expect("utf-8")]);
    assert_eq!(code, 3, "{stdout}{stderr}");
    assert!(
        stderr.contains(&format!("{}:8", bad.display())),
        "the file and line: {stderr}"
    );
    assert!(stderr.contains("expct"), "the key: {stderr}");
    assert!(
        !stdout.contains("good") && !stderr.contains("passed"),
        "nothing ran: {stdout}{stderr}"
    );
}

#[test]
fn a_server_that_never_starts_fails_its_scenario_only() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    std::fs::write(
        dir.path().join("a-good.toml"),
        small_fixture_scenario("good", &[]),
    )
    .expect("written");
    std::fs::write(
        dir.path().join("b-dead.toml"),
        "name = \"dead\"\n\n[server]\nstdio = [\"sh\", \"-c\", \"echo no such server >&2; exit 7\"]\n\n[[step]]\nprobes = true\n",
    )
    .expect("written");
    std::fs::write(
        dir.path().join("c-silent.toml"),
        format!(
            "name = \"never-listens\"\n\n[server]\nhttp = \"http://127.0.0.1:{port}/mcp\"\nstart = [\"sleep\", \"27.182\"]\nstart_timeout_ms = 1000\n\n[[step]]\nprobes = true\n",
            port = free_port()
        ),
    )
    .expect("written");
    let run = scenario(&["-j", "2", dir.path().to_str().expect("utf-8")]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert_eq!(run.scenario("good")["status"], "passed");
    for name in ["dead", "never-listens"] {
        let report = run.scenario(name);
        assert_eq!(report["status"], "error", "{report:#}");
        assert_eq!(report["exit_code"], 2, "{report:#}");
    }
    let junit = run.junit.as_deref().expect("a JUnit report");
    let suites = junit_parser::from_reader(std::io::Cursor::new(junit)).expect("parses");
    let dead = suites
        .suites
        .iter()
        .find(|s| s.name == "dead")
        .expect("the dead scenario has a suite");
    assert!(dead.errors + dead.failures >= 1, "{junit}");
    assert!(
        !mcp_chaos_tests::process_running("sleep 27.182"),
        "the start command outlived the run"
    );
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

#[test]
fn two_shards_run_every_scenario_exactly_once() {
    let (code, all, stderr) = scenario_plain(&["scenarios", "--list"]);
    assert_eq!(code, 0, "{stderr}");
    let all: Vec<&str> = all.lines().collect();
    assert!(all.len() > 40, "{all:?}");
    let mut seen = Vec::new();
    for shard in ["1/2", "2/2"] {
        let (code, out, stderr) = scenario_plain(&["scenarios", "--list", "--shard", shard]);
        assert_eq!(code, 0, "{stderr}");
        assert!(!out.trim().is_empty(), "shard {shard} is empty");
        seen.extend(out.lines().map(str::to_owned));
    }
    let unique: BTreeSet<&str> = seen.iter().map(String::as_str).collect();
    assert_eq!(seen.len(), unique.len(), "a scenario ran twice: {seen:?}");
    assert_eq!(unique, all.iter().copied().collect::<BTreeSet<_>>());
    let (code, _, stderr) = scenario_plain(&["scenarios", "--list", "--shard", "3/2"]);
    assert_eq!(code, 3, "{stderr}");
}

#[test]
fn a_baseline_accepts_known_findings_and_lists_fixed_ones() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("s.toml");
    let baseline = dir.path().join("baseline.toml");
    let (s, b) = (
        path.to_str().expect("utf-8"),
        baseline.to_str().expect("utf-8"),
    );
    let flawed = small_fixture_scenario("baselined", &["protocol-error-on-404"])
        .replace("fault = \"not-found\"\nexpect = { channel = \"result\", is_error = true, content_matches = \"(?i)no record\" }\n", "fault = \"not-found\"\n");
    std::fs::write(&path, &flawed).expect("written");

    let first = scenario(&[s]);
    assert_eq!(first.code, 1, "{}{}", first.stdout, first.stderr);

    let update = scenario(&[s, "--baseline", b, "--update-baseline"]);
    assert_eq!(update.code, 0, "{}{}", update.stdout, update.stderr);
    let text = std::fs::read_to_string(&baseline).expect("the baseline was written");
    assert!(
        text.contains("business-failure-as-protocol-error"),
        "{text}"
    );
    assert!(text.contains("UNJUDGED"), "{text}");

    let again = scenario(&[s, "--baseline", b]);
    assert_eq!(again.code, 0, "{}{}", again.stdout, again.stderr);
    let findings = again.scenario("baselined")["findings"]
        .as_array()
        .expect("findings")
        .clone();
    assert!(!findings.is_empty());
    assert!(
        findings.iter().all(|f| f["status"]["kind"] == "baseline"),
        "{findings:#?}"
    );
    let sarif = again.sarif.as_ref().expect("a SARIF report");
    let results = sarif["runs"][0]["results"].as_array().expect("results");
    assert!(
        results
            .iter()
            .all(|r| r["suppressions"].as_array().is_some_and(|s| !s.is_empty())),
        "baselined findings are suppressed: {results:#?}"
    );

    std::fs::write(&path, small_fixture_scenario("baselined", &[])).expect("written");
    let fixed = scenario(&[s, "--baseline", b]);
    assert_eq!(fixed.code, 0, "{}{}", fixed.stdout, fixed.stderr);
    let listed = fixed.scenario("baselined")["fixed"]
        .as_array()
        .expect("fixed");
    assert!(
        listed
            .iter()
            .any(|e| e["invariant"] == "business-failure-as-protocol-error"),
        "{listed:#?}"
    );
}

#[test]
fn the_committed_schema_is_current_and_every_scenario_validates_and_loads() {
    let (code, schema, stderr) = scenario_plain(&["--schema"]);
    assert_eq!(code, 0, "{stderr}");
    let committed = std::fs::read_to_string(repo().join("scenarios/scenario.schema.json"))
        .expect("scenarios/scenario.schema.json");
    let generated: Value = serde_json::from_str(&schema).expect("--schema prints JSON");
    let committed: Value = serde_json::from_str(&committed).expect("the committed schema");
    assert_eq!(
        generated, committed,
        "regenerate: mcp-chaos scenario --schema > scenarios/scenario.schema.json"
    );

    let mut schemas = boon::Schemas::new();
    let mut compiler = boon::Compiler::new();
    compiler
        .add_resource("urn:scenario", generated)
        .expect("the schema is a resource");
    let index = compiler
        .compile("urn:scenario", &mut schemas)
        .expect("the schema compiles");
    let mut files = Vec::new();
    toml_files(&repo().join("scenarios"), &mut files);
    assert!(files.len() > 40, "{files:?}");
    for file in &files {
        if file.file_name().is_some_and(|n| n == "baseline.toml") {
            continue;
        }
        let text = std::fs::read_to_string(file).expect("readable");
        let doc: toml::Value = toml::from_str(&text).expect("TOML");
        let json = serde_json::to_value(&doc).expect("TOML → JSON");
        if let Err(e) = schemas.validate(&json, index) {
            panic!("{} does not validate: {e:#}", file.display());
        }
    }
    // A file the schema rejects.
    let bad = serde_json::json!({"server": {"stdio": ["x"]}, "step": [{"cal": {}}]});
    assert!(schemas.validate(&bad, index).is_err());
    // And every one loads (`--list` parses the whole suite).
    let (code, _, stderr) = scenario_plain(&["scenarios", "--list"]);
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn the_sarif_of_a_run_validates_against_sarif_2_1_0() {
    let run = scenario(&[repo()
        .join("scenarios/fixture/flaws/protocol-error-on-404.toml")
        .to_str()
        .expect("utf-8")]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let sarif = run.sarif.expect("a SARIF report");
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(
            repo().join("crates/mcp-chaos-tests/data/sarif/sarif-schema-2.1.0.json"),
        )
        .expect("the SARIF schema"),
    )
    .expect("JSON");
    let mut schemas = boon::Schemas::new();
    let mut compiler = boon::Compiler::new();
    compiler
        .add_resource("urn:sarif", schema)
        .expect("a resource");
    let index = compiler
        .compile("urn:sarif", &mut schemas)
        .expect("compiles");
    if let Err(e) = schemas.validate(&sarif, index) {
        panic!("the SARIF does not validate: {e:#}\n{sarif:#}");
    }
    let results = sarif["runs"][0]["results"].as_array().expect("results");
    assert!(
        results
            .iter()
            .any(|r| r["ruleId"].as_str().is_some_and(|id| id.starts_with("MC"))),
        "{results:#?}"
    );
}

/// SIGTERM mid-suite: the reports asked for are written with the scenarios finished so far
/// (`interrupted`, the others in `unfinished`), the stuck scenario's server is killed, the
/// baseline is left alone, and the exit code is 2 (nothing failed, the suite did not
/// complete), never a signal.
#[test]
fn sigterm_writes_the_suite_report_of_the_scenarios_finished() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let marker = format!("scenario-sigterm-{}", std::process::id());
    std::fs::write(
        dir.path().join("a-quick.toml"),
        small_fixture_scenario("quick", &[]),
    )
    .expect("written");
    // Reads its input and never answers initialize: still starting when the signal comes.
    std::fs::write(
        dir.path().join("b-stuck.toml"),
        format!(
            "name = \"stuck\"\ntimeout_ms = 60000\n\n[server]\nstdio = [\"sh\", \"-c\", \"cat > /dev/null; : {marker}\"]\n\n[[step]]\nprobes = true\n"
        ),
    )
    .expect("written");
    let baseline = dir.path().join("baseline.toml");
    let report = dir.path().join("out/report.json");
    let stderr = dir.path().join("stderr");
    let mut child = Command::new(mcp_chaos())
        .args(["scenario", "-j", "2"])
        .arg(dir.path().join("a-quick.toml"))
        .arg(dir.path().join("b-stuck.toml"))
        .arg("--baseline")
        .arg(&baseline)
        .arg("--update-baseline")
        .arg("--report-json")
        .arg(&report)
        .arg("--markdown")
        .arg(dir.path().join("out/summary.md"))
        .arg("--html")
        .arg(dir.path().join("out/report.html"))
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&stderr).expect("the stderr file"))
        .spawn()
        .expect("mcp-chaos starts");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !std::fs::read_to_string(&stderr)
        .unwrap_or_default()
        .contains("PASS quick")
    {
        assert!(std::time::Instant::now() < deadline, "quick never passed");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(
        mcp_chaos_tests::process_running(&marker),
        "the stuck server runs"
    );
    let kill = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(kill.success());
    let status = child.wait().expect("mcp-chaos exits");
    let err = std::fs::read_to_string(&stderr).unwrap_or_default();
    assert_eq!(status.code(), Some(2), "{err}");
    let suite: Value =
        serde_json::from_str(&std::fs::read_to_string(&report).expect("a suite report"))
            .expect("JSON");
    assert_eq!(suite["interrupted"], true, "{suite:#}");
    assert_eq!(
        suite["unfinished"],
        serde_json::json!(["stuck"]),
        "{suite:#}"
    );
    let names: Vec<&str> = suite["scenarios"]
        .as_array()
        .map(|s| s.iter().filter_map(|s| s["name"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(names, ["quick"], "{suite:#}");
    // The Markdown and HTML say it was interrupted and which scenario did not finish.
    let markdown =
        std::fs::read_to_string(dir.path().join("out/summary.md")).expect("a Markdown summary");
    assert!(
        markdown.contains("**Interrupted**") && markdown.contains("not finished: `stuck`"),
        "{markdown}"
    );
    let html = std::fs::read_to_string(dir.path().join("out/report.html")).expect("an HTML page");
    assert!(
        html.contains("<strong>Interrupted</strong>")
            && html.contains("not finished: <code>stuck</code>"),
        "{html}"
    );
    assert!(
        !baseline.exists(),
        "an interrupted suite must not write the baseline"
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while mcp_chaos_tests::process_running(&marker) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(
        !mcp_chaos_tests::process_running(&marker),
        "the stuck server outlived the suite"
    );
}
