//! The GitHub Action (`action.yml` at the repository root, its step script
//! `ci/action/run.sh`):
//! - its metadata is valid as GitHub's metadata syntax for composite actions has it: the known
//!   top-level keys, every input described with a string default, every output with a value,
//!   every step either `run` (with a `shell`) or `uses` of a pinned `owner/repo@ref`, unique
//!   step ids; every `inputs.X` and `steps.ID` an expression names exists (a step only reads
//!   the outputs of steps before it); every input is used; the `INPUT_*` variables the steps
//!   set are exactly those the script reads;
//! - its steps run against the fixture: the `run` steps of action.yml, their `${{ }}`
//!   expressions evaluated as GitHub would (inputs with their defaults, earlier steps' outputs
//!   from `$GITHUB_OUTPUT`), run with `bash --noprofile --norc -eo pipefail` as a composite
//!   `shell: bash` step is; the `uses` steps (cache, SARIF upload, artifact upload) are
//!   GitHub's own and are not run. They write every report (JUnit read back, SARIF valid, the
//!   Markdown in the job summary, the HTML page), and the verdict step fails on findings
//!   unless `fail-on-findings: false`; over HTTP with a bearer token from a secret, the token
//!   is in no report.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use mcp_chaos_tests::{fixture, fixture_command, mcp_chaos};

fn repo() -> PathBuf {
    mcp_chaos_tests::repo_root()
}

/// action.yml, read as YAML.
fn action() -> Value {
    let text = std::fs::read_to_string(repo().join("action.yml")).expect("action.yml");
    yaml_serde::from_str(&text).expect("action.yml is YAML")
}

fn steps(action: &Value) -> &[Value] {
    action["runs"]["steps"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// The contexts an expression names: `("inputs", NAME)` and `("steps", ID)`.
fn references(expr: &str) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    for context in ["inputs", "steps"] {
        let needle = format!("{context}.");
        let mut rest = expr;
        while let Some(at) = rest.find(&needle) {
            let before = rest[..at].chars().next_back();
            let after = &rest[at + needle.len()..];
            let name: String = after
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
                .collect();
            if !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_') {
                out.push((context, name.clone()));
            }
            rest = &after[name.len()..];
        }
    }
    out
}

/// Every `${{ }}` expression in `text`.
fn expressions(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("${{") {
        let after = &rest[at + 3..];
        let end = after.find("}}").expect("a closed ${{ }} expression");
        out.push(after[..end].trim());
        rest = &after[end + 2..];
    }
    out
}

/// Every string in `v`, with where it is.
fn strings<'a>(v: &'a Value, at: &str, out: &mut Vec<(String, &'a str)>) {
    match v {
        Value::String(s) => out.push((at.to_owned(), s)),
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                strings(x, &format!("{at}[{i}]"), out);
            }
        }
        Value::Object(o) => {
            for (k, x) in o {
                strings(x, &format!("{at}.{k}"), out);
            }
        }
        _ => {}
    }
}

fn is_id(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

#[test]
fn action_yml_is_valid_metadata_for_a_composite_action() {
    let action = action();
    let top = action.as_object().expect("a mapping");
    for key in top.keys() {
        assert!(
            [
                "name",
                "author",
                "description",
                "inputs",
                "outputs",
                "runs",
                "branding"
            ]
            .contains(&key.as_str()),
            "unknown top-level key {key}"
        );
    }
    for key in ["name", "description"] {
        assert!(
            action[key].as_str().is_some_and(|s| !s.trim().is_empty()),
            "{key}"
        );
    }
    assert_eq!(action["runs"]["using"], "composite");

    let inputs = action["inputs"].as_object().expect("inputs");
    for (name, input) in inputs {
        assert!(is_id(name), "input name {name}");
        for key in input.as_object().expect("an input is a mapping").keys() {
            assert!(
                ["description", "required", "default", "deprecationMessage"]
                    .contains(&key.as_str()),
                "input {name}: unknown key {key}"
            );
        }
        assert!(input["description"].is_string(), "input {name}");
        assert!(
            input["default"].is_string(),
            "input {name}: a string default"
        );
    }
    let outputs = action["outputs"].as_object().expect("outputs");
    for (name, output) in outputs {
        assert!(is_id(name), "output name {name}");
        assert!(output["description"].is_string(), "output {name}");
        assert!(
            output["value"].is_string(),
            "output {name}: composite outputs need a value"
        );
    }

    let steps = steps(&action);
    assert!(!steps.is_empty());
    let mut ids: Vec<&str> = Vec::new();
    let mut used_inputs: Vec<String> = Vec::new();
    let mut set_vars: Vec<String> = Vec::new();
    let mut check = |at: &str, text: &str, ids_before: &[&str], bare: bool| {
        let exprs = if bare { vec![text] } else { expressions(text) };
        for expr in exprs {
            for (context, name) in references(expr) {
                match context {
                    "inputs" => {
                        assert!(inputs.contains_key(&name), "{at}: no input {name}");
                        used_inputs.push(name);
                    }
                    _ => assert!(
                        ids_before.contains(&name.as_str()),
                        "{at}: no step {name} before it"
                    ),
                }
            }
        }
    };
    for (i, step) in steps.iter().enumerate() {
        let at = format!("step {i} ({})", step["name"].as_str().unwrap_or("?"));
        let map = step.as_object().expect("a step is a mapping");
        for key in map.keys() {
            assert!(
                [
                    "name",
                    "id",
                    "if",
                    "run",
                    "shell",
                    "uses",
                    "with",
                    "env",
                    "working-directory",
                    "continue-on-error"
                ]
                .contains(&key.as_str()),
                "{at}: unknown key {key}"
            );
        }
        match (step["run"].as_str(), step["uses"].as_str()) {
            (Some(_), None) => assert!(step["shell"].is_string(), "{at}: run needs a shell"),
            (None, Some(uses)) => {
                let (repo, version) = uses.split_once('@').expect("uses owner/repo@ref");
                assert!(repo.contains('/') && !version.is_empty(), "{at}: {uses}");
                assert!(step.get("shell").is_none() && step.get("env").is_none());
            }
            _ => panic!("{at}: exactly one of run and uses"),
        }
        let mut texts = Vec::new();
        strings(step, "", &mut texts);
        for (path, text) in texts {
            check(&format!("{at}{path}"), text, &ids, path == ".if");
        }
        if let Some(env) = step["env"].as_object() {
            set_vars.extend(env.keys().cloned());
        }
        if let Some(id) = step["id"].as_str() {
            assert!(is_id(id), "{at}: id {id}");
            assert!(!ids.contains(&id), "{at}: id {id} twice");
            ids.push(id);
        }
    }
    let mut output_texts = Vec::new();
    strings(&action["outputs"], "outputs", &mut output_texts);
    for (path, text) in output_texts {
        check(&path, text, &ids, false);
    }
    for name in inputs.keys() {
        assert!(used_inputs.contains(name), "input {name} is never used");
    }

    // The INPUT_* variables the steps set are those the script reads, and the other way round.
    let script = std::fs::read_to_string(repo().join("ci/action/run.sh")).expect("run.sh");
    let mut read: Vec<String> = script
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| w.starts_with("INPUT_") && w.len() > "INPUT_".len())
        .map(str::to_owned)
        .collect();
    read.sort();
    read.dedup();
    let mut set: Vec<String> = set_vars
        .into_iter()
        .filter(|v| v.starts_with("INPUT_"))
        .collect();
    set.sort();
    set.dedup();
    assert_eq!(set, read, "INPUT_* set by action.yml vs read by run.sh");
}

/// The composite action's `run` steps, run as GitHub runs them (see the module
/// documentation), in `workspace`.
struct ActionRun {
    inputs: BTreeMap<String, String>,
    outputs: BTreeMap<String, BTreeMap<String, String>>,
    env: Vec<(String, String)>,
    workspace: PathBuf,
    summary: PathBuf,
    /// The verdict step's exit code, and every run step's output.
    verdict: Option<i32>,
    log: String,
}

impl ActionRun {
    /// The inputs: `given` over the defaults of action.yml.
    fn new(workspace: &Path, given: &[(&str, &str)], env: &[(&str, &str)]) -> ActionRun {
        let action = action();
        let mut inputs: BTreeMap<String, String> = action["inputs"]
            .as_object()
            .expect("inputs")
            .iter()
            .map(|(k, v)| (k.clone(), v["default"].as_str().unwrap_or("").to_owned()))
            .collect();
        for (k, v) in given {
            assert!(inputs.contains_key(*k), "no input {k}");
            inputs.insert((*k).to_owned(), (*v).to_owned());
        }
        ActionRun {
            inputs,
            outputs: BTreeMap::new(),
            env: env
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            workspace: workspace.to_owned(),
            summary: workspace.join("step-summary.md"),
            verdict: None,
            log: String::new(),
        }
    }

    /// The value of one expression (`inputs.X`, `steps.ID.outputs.NAME`), or of the bare `if`
    /// conditions the run steps use (`inputs.X == ''`).
    fn eval(&self, expr: &str) -> String {
        if let Some((lhs, rhs)) = expr.split_once("==") {
            return (self.eval(lhs.trim()) == rhs.trim().trim_matches('\'')).to_string();
        }
        if let Some(name) = expr.strip_prefix("inputs.") {
            return self.inputs[name].clone();
        }
        if let Some(rest) = expr.strip_prefix("steps.") {
            let (id, name) = rest.split_once(".outputs.").expect("steps.ID.outputs.NAME");
            return self
                .outputs
                .get(id)
                .and_then(|o| o.get(name))
                .cloned()
                .unwrap_or_default();
        }
        panic!("an expression this test cannot evaluate: {expr}");
    }

    fn expand(&self, text: &str) -> String {
        let mut out = String::new();
        let mut rest = text;
        while let Some(at) = rest.find("${{") {
            out.push_str(&rest[..at]);
            let after = &rest[at + 3..];
            let end = after.find("}}").expect("closed");
            out.push_str(&self.eval(after[..end].trim()));
            rest = &after[end + 2..];
        }
        out.push_str(rest);
        out
    }

    /// Runs every `run` step in order; stops at the first that fails (as GitHub does: the
    /// later steps of this action have no `always()`), recording the verdict step's code.
    fn run(mut self) -> ActionRun {
        let action = action();
        for step in steps(&action) {
            let Some(script) = step["run"].as_str() else {
                continue;
            };
            if let Some(cond) = step["if"].as_str()
                && self.eval(cond) != "true"
            {
                continue;
            }
            assert_eq!(step["shell"], "bash");
            let output = self
                .workspace
                .join(format!("output-{}", self.outputs.len()));
            std::fs::write(&output, "").expect("GITHUB_OUTPUT");
            let dir = self
                .workspace
                .join(self.expand(step["working-directory"].as_str().unwrap_or(".")));
            let mut cmd = Command::new("bash");
            cmd.args(["--noprofile", "--norc", "-eo", "pipefail", "-c"])
                .arg(self.expand(script))
                .current_dir(&dir)
                .env("GITHUB_ACTION_PATH", repo())
                .env("GITHUB_WORKSPACE", &self.workspace)
                .env("GITHUB_OUTPUT", &output)
                .env("GITHUB_STEP_SUMMARY", &self.summary)
                .env("GITHUB_PATH", self.workspace.join("github-path"))
                .env("HOME", &self.workspace)
                .envs(self.env.iter().map(|(k, v)| (k, v)));
            for (k, v) in step["env"].as_object().into_iter().flatten() {
                cmd.env(k, self.expand(v.as_str().expect("a string env value")));
            }
            let out = cmd.output().expect("bash runs");
            let code = out.status.code().unwrap_or(-1);
            let _ = write!(
                self.log,
                "== {} (exit {code})\n{}{}",
                step["name"].as_str().unwrap_or("?"),
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            let written: BTreeMap<String, String> = std::fs::read_to_string(&output)
                .expect("GITHUB_OUTPUT")
                .lines()
                .filter_map(|l| l.split_once('='))
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect();
            if let Some(id) = step["id"].as_str() {
                self.outputs.insert(id.to_owned(), written);
            }
            if step["name"] == "Verdict" {
                self.verdict = Some(code);
            }
            if code != 0 {
                break;
            }
        }
        self
    }

    fn out(&self, name: &str) -> &str {
        self.outputs
            .get("run")
            .and_then(|o| o.get(name))
            .map_or("", String::as_str)
    }

    fn read(&self, output: &str) -> String {
        let path = self.out(output);
        assert!(!path.is_empty(), "no {output} output:\n{}", self.log);
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}\n{}", self.log))
    }
}

fn assert_valid_sarif(sarif: &Value) {
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
    if let Err(e) = schemas.validate(sarif, index) {
        panic!("the SARIF does not validate: {e:#}");
    }
}

/// Quick campaign settings for the fixture.
const QUICK: &str =
    "--protocol-version 2025-11-25 --cases 4 --skip-chaos --skip-version-probe --timeout-ms 3000";

/// The action against the stdio fixture with a flaw: the reports are written (JUnit read back
/// with a failure, SARIF valid with a result, the Markdown appended to the job summary, the
/// HTML page), the outputs name them, and the verdict fails the step with exit 1; with
/// `fail-on-findings: false` it passes. The install step takes the `mcp-chaos` input as is.
#[test]
fn the_action_runs_against_the_fixture_and_writes_every_report() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    std::fs::create_dir(dir.path().join("server")).expect("a folder");
    let bin = mcp_chaos().display().to_string();
    let stdio = fixture_command(&["wrong-error-codes"]);
    let inputs = [
        ("mcp-chaos", bin.as_str()),
        ("stdio", stdio.as_str()),
        ("args", QUICK),
        ("working-directory", "server"),
        ("report-dir", "out/mcp-chaos"),
    ];
    let run = ActionRun::new(dir.path(), &inputs, &[]).run();
    assert_eq!(run.verdict, Some(1), "{}", run.log);
    assert_eq!(run.out("exit-code"), "1", "{}", run.log);
    assert_eq!(
        Path::new(run.out("report-dir")),
        std::fs::canonicalize(dir.path().join("server/out/mcp-chaos")).expect("the report dir")
    );
    assert_eq!(run.outputs["install"]["bin"], bin);

    let junit = junit_parser::from_reader(std::io::Cursor::new(run.read("junit")))
        .expect("junit-parser reads it");
    assert!(junit.failures > 0, "{junit:?}");
    let sarif: Value = serde_json::from_str(&run.read("sarif")).expect("SARIF is JSON");
    assert_valid_sarif(&sarif);
    let results = sarif["runs"][0]["results"].as_array().expect("results");
    assert!(!results.is_empty(), "{sarif:#}");
    let report: Value = serde_json::from_str(&run.read("report-json")).expect("JSON");
    assert!(
        report["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .any(|f| f["invariant"] == "wrong-error-code"),
        "{report:#}"
    );
    let summary = std::fs::read_to_string(&run.summary).expect("the job summary");
    assert_eq!(summary, run.read("markdown"));
    assert!(summary.contains("FAILED"), "{summary}");
    assert!(
        run.read("html")
            .contains("<table id=\"tool-fault-matrix\">")
    );

    let lenient = [inputs.as_slice(), &[("fail-on-findings", "false")]].concat();
    let run = ActionRun::new(dir.path(), &lenient, &[]).run();
    assert_eq!(run.verdict, Some(0), "{}", run.log);
    assert_eq!(run.out("exit-code"), "1", "{}", run.log);
}

/// The action against the fixture over Streamable HTTP, requiring a bearer token given as a
/// secret in the step's environment and named in `headers`: the campaign runs (exit 0 on the
/// correct fixture) and the token is in no report nor in the job summary. Without the header,
/// exit 2 fails the step even with `fail-on-findings: false`, and the reports are written.
#[test]
fn the_action_tests_an_http_server_with_a_token_from_a_secret() {
    const TOKEN: &str = "action-e2e-tok-5d1e0b7c93aa";
    let dir = tempfile::tempdir().expect("a temporary directory");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port");
    let url = format!("http://127.0.0.1:{port}/mcp");
    let start = format!("{} --http 127.0.0.1:{port}", fixture().display());
    let bin = mcp_chaos().display().to_string();
    let base = [
        ("mcp-chaos", bin.as_str()),
        ("http", url.as_str()),
        ("start", start.as_str()),
        ("args", QUICK),
    ];
    let env = [("FIXTURE_BEARER_TOKEN", TOKEN), ("MCP_TOKEN", TOKEN)];
    let with_header = [
        base.as_slice(),
        &[("headers", "\n  Authorization: Bearer ${MCP_TOKEN}  \n")],
    ]
    .concat();
    let run = ActionRun::new(dir.path(), &with_header, &env).run();
    assert_eq!(run.out("exit-code"), "0", "{}", run.log);
    assert_eq!(run.verdict, Some(0), "{}", run.log);
    for output in ["report-json", "junit", "sarif", "markdown", "html"] {
        assert!(!run.read(output).contains(TOKEN), "the token in {output}");
    }
    let summary = std::fs::read_to_string(&run.summary).expect("the job summary");
    assert!(summary.contains("PASSED") && !summary.contains(TOKEN));
    assert!(!run.log.contains(TOKEN), "{}", run.log);

    let lenient = [base.as_slice(), &[("fail-on-findings", "false")]].concat();
    let run = ActionRun::new(dir.path(), &lenient, &env).run();
    assert_eq!(run.out("exit-code"), "2", "{}", run.log);
    assert_eq!(run.verdict, Some(2), "{}", run.log);
    assert!(run.read("junit").contains("401"), "{}", run.read("junit"));
}

/// The cache key names the OS, the architecture and a hash of the sources, and is stable.
#[test]
fn the_cache_key_is_stable() {
    let key = || {
        let out = Command::new("bash")
            .arg(repo().join("ci/action/run.sh"))
            .arg("key")
            .env_remove("GITHUB_OUTPUT")
            .output()
            .expect("bash runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    };
    let first = key();
    assert!(first.starts_with("key=mcp-chaos-Linux-"), "{first}");
    assert_eq!(first, key());
}

/// With `scenario`, the action runs `mcp-chaos scenario` on the files given and writes the
/// same reports (a flaw scenario whose expected finding is reported passes; a server input
/// beside it is refused). Without the `mcp-chaos` input, the key step runs and the install
/// step takes the build the cache restored into `~/.mcp-chaos-action` (as on a cache hit; a
/// miss runs `cargo install`, a release build too slow for this test).
#[test]
fn the_action_runs_scenario_files_with_the_cached_build() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    // HOME is the workspace in ActionRun: the cache's folder, as actions/cache restores it.
    let cached = dir.path().join(".mcp-chaos-action/bin");
    std::fs::create_dir_all(&cached).expect("a folder");
    std::os::unix::fs::symlink(mcp_chaos(), cached.join("mcp-chaos")).expect("a symlink");
    let root = repo().display().to_string();
    let reports = dir.path().join("reports");
    let inputs = [
        ("scenario", "scenarios/fixture/flaws/echo-version.toml"),
        ("working-directory", root.as_str()),
        ("report-dir", reports.to_str().expect("a UTF-8 path")),
    ];
    let run = ActionRun::new(dir.path(), &inputs, &[]).run();
    assert!(
        run.outputs["key"]["key"].starts_with("mcp-chaos-Linux-"),
        "{}",
        run.log
    );
    assert_eq!(
        Path::new(&run.outputs["install"]["bin"]),
        cached.join("mcp-chaos"),
        "{}",
        run.log
    );
    assert!(run.log.contains("cached build"), "{}", run.log);
    assert_eq!(run.out("exit-code"), "0", "{}", run.log);
    assert_eq!(run.verdict, Some(0), "{}", run.log);
    let junit = junit_parser::from_reader(std::io::Cursor::new(run.read("junit")))
        .expect("junit-parser reads it");
    assert_eq!(junit.failures + junit.errors, 0, "{junit:?}");
    assert!(run.read("html").contains("<section>"));

    let both = [inputs.as_slice(), &[("stdio", "true")]].concat();
    let run = ActionRun::new(dir.path(), &both, &[]).run();
    assert_eq!(run.verdict, None, "{}", run.log);
    assert!(
        run.log.contains("give scenario, or a server"),
        "{}",
        run.log
    );
}
