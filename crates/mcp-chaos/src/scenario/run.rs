//! Running scenarios: sandbox, server, steps, expectations, classification of findings.
//!
//! Each scenario gets its own server (a fresh process, or a fresh HTTP server on its own
//! port), its own fake upstream and its own sandbox, so scenarios run side by side
//! (`--jobs`); `exclusive = true` ones run alone, after the others. A scenario whose server
//! cannot be started, or whose sandbox cannot be made, ends with
//! [`ScenarioStatus::Error`] (exit code 2) and the others still run.
//!
//! Every finding is classified ([`FindingStatus`]): `expected` when an expectation asks for
//! its invariant (`reported = [...]`), `known` when a `[[known]]` entry accepts it, `baseline`
//! when the baseline file lists its fingerprint for this scenario, else `new`, which fails the
//! scenario. Failed expectations are findings of `expectation-failed` (MC601).

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use futures::StreamExt as _;
use serde_json::Value;

use super::baseline::{Baseline, fingerprint};
use super::format::{Action, Channel, Scenario, Step};
pub use super::outcome::SuiteEvent;
use super::outcome::{
    FindingStatus, ScenarioFinding, ScenarioReport, ScenarioStatus, StepReport, SuiteReport,
};
use crate::finding::{self, Finding, Severity};
use crate::run::driver::Driver;
use crate::run::{Event, Phases, RunConfig, ServerSpec, VersionChoice};
use crate::session::Exchange;
use crate::transport::{HttpConfig, StdioConfig};

/// How a suite runs.
#[derive(Debug, Clone)]
pub struct SuiteOptions {
    /// Scenarios run at once (at least 1).
    pub jobs: usize,
    /// `(i, n)`: this run is shard `i` of `n` (already applied to the list; for the report).
    pub shard: Option<(u32, u32)>,
    /// The baseline the findings are classified against.
    pub baseline: Baseline,
    /// Where the baseline came from, for the report.
    pub baseline_path: Option<PathBuf>,
    /// Where replay files of generated findings go (`None`: not written).
    pub replays: Option<PathBuf>,
    /// The program `{mcp-chaos}` stands for.
    pub self_exe: PathBuf,
}

/// Runs `scenarios` (already sharded) and returns the suite's report, scenarios in the
/// order given. `on_event` sees every [`SuiteEvent`].
pub async fn run_suite(
    scenarios: &[Scenario],
    options: &SuiteOptions,
    on_event: &(dyn Fn(&SuiteEvent<'_>) + Sync),
) -> SuiteReport {
    let started = Instant::now();
    let (alone, together): (Vec<_>, Vec<_>) = scenarios
        .iter()
        .enumerate()
        .partition(|(_, s)| s.file.exclusive);
    let mut reports: Vec<Option<ScenarioReport>> = vec![None; scenarios.len()];
    let mut stream = futures::stream::iter(
        together
            .into_iter()
            .map(|(i, s)| async move { (i, run_scenario(s, options, on_event).await) }),
    )
    .buffer_unordered(options.jobs.max(1));
    while let Some((i, report)) = stream.next().await {
        reports[i] = Some(report);
    }
    for (i, s) in alone {
        reports[i] = Some(run_scenario(s, options, on_event).await);
    }
    SuiteReport {
        mcp_chaos_version: env!("CARGO_PKG_VERSION").to_owned(),
        shard: options.shard,
        baseline: options.baseline_path.clone(),
        scenarios: reports.into_iter().flatten().collect(),
        duration_ms: millis(started.elapsed()),
        interrupted: false,
        unfinished: Vec::new(),
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// Runs one scenario: starts its server, plays its steps in order, and returns its report
/// (status [`ScenarioStatus::Error`] when it could not be carried out). `on_event` sees
/// [`SuiteEvent::Started`] first and [`SuiteEvent::Finished`] last.
pub async fn run_scenario(
    scenario: &Scenario,
    options: &SuiteOptions,
    on_event: &(dyn Fn(&SuiteEvent<'_>) + Sync),
) -> ScenarioReport {
    let name = scenario.name.as_str();
    on_event(&SuiteEvent::Started {
        name,
        steps: scenario.steps.len(),
    });
    let started = Instant::now();
    let report = match prepare(scenario, options).await {
        Err(message) => error_report(scenario, message, started, options),
        Ok(prepared) => {
            let report = play(scenario, &prepared, options, on_event, started).await;
            drop(prepared);
            report
        }
    };
    on_event(&SuiteEvent::Finished { report: &report });
    report
}

fn error_report(
    scenario: &Scenario,
    message: String,
    started: Instant,
    options: &SuiteOptions,
) -> ScenarioReport {
    let status = ScenarioStatus::Error(message);
    ScenarioReport {
        name: scenario.name.clone(),
        file: scenario.path.clone(),
        exit_code: status.exit_code(),
        status,
        server: None,
        seed: scenario.file.seed,
        steps: Vec::new(),
        findings: Vec::new(),
        fixed: options.baseline.entries_of(&scenario.name),
        duration_ms: millis(started.elapsed()),
    }
}

/// What a scenario needs before its server starts: its sandbox (removed on drop) and config.
struct Prepared {
    config: RunConfig,
    subst: Subst,
    _sandbox: Option<tempfile::TempDir>,
}

/// Makes the sandbox, picks the port, substitutes, and builds the run config.
async fn prepare(scenario: &Scenario, options: &SuiteOptions) -> Result<Prepared, String> {
    let file = &scenario.file;
    let mentions_sandbox = file.sandbox.is_some() || raw_mentions(scenario, "{sandbox}");
    let sandbox = if mentions_sandbox {
        Some(
            tempfile::Builder::new()
                .prefix("mcp-chaos-sandbox-")
                .tempdir()
                .map_err(|e| format!("cannot create the sandbox folder: {e}"))?,
        )
    } else {
        None
    };
    let port = if raw_mentions(scenario, "{port}") {
        Some(free_port().map_err(|e| format!("cannot pick a free loopback port: {e}"))?)
    } else {
        None
    };
    let subst = Subst {
        exe: options.self_exe.to_string_lossy().into_owned(),
        sandbox: sandbox
            .as_ref()
            .map(|d| d.path().to_string_lossy().into_owned()),
        port,
        scenario_dir: scenario_dir(&scenario.path),
    };
    if let (Some(dir), Some(spec)) = (&sandbox, &file.sandbox) {
        make_sandbox(dir.path(), spec, &subst).await?;
    }
    let config = config(scenario, &subst, options)?;
    for step in &scenario.steps {
        if let Action::Call {
            arguments: Some(args),
            ..
        }
        | Action::Prompt {
            arguments: args, ..
        } = &step.action
        {
            subst
                .json(args)
                .map_err(|e| format!("step {:?} (line {}): {e}", step.label, step.line))?;
        }
        if let Action::Read { uri } = &step.action {
            subst
                .apply(uri)
                .map_err(|e| format!("step {:?} (line {}): {e}", step.label, step.line))?;
        }
    }
    Ok(Prepared {
        config,
        subst,
        _sandbox: sandbox,
    })
}

/// The absolute folder of the scenario file (servers may run in another working directory).
fn scenario_dir(path: &Path) -> String {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::canonicalize(dir)
        .unwrap_or_else(|_| dir.to_owned())
        .to_string_lossy()
        .into_owned()
}

/// Whether any string the server section or sandbox setup uses contains `needle`.
fn raw_mentions(scenario: &Scenario, needle: &str) -> bool {
    let s = &scenario.file.server;
    let mut all: Vec<&String> = Vec::new();
    all.extend(s.stdio.iter().flatten());
    all.extend(s.http.iter());
    all.extend(s.start.iter().flatten());
    all.extend(s.env.values());
    all.extend(s.headers.values());
    all.extend(s.cwd.iter());
    if let Some(sb) = &scenario.file.sandbox {
        all.extend(sb.setup.iter().flatten());
    }
    all.iter().any(|v| v.contains(needle))
        || scenario.steps.iter().any(|s| match &s.action {
            Action::Call {
                arguments: Some(args),
                ..
            } => args.to_string().contains(needle),
            _ => false,
        })
}

fn free_port() -> std::io::Result<u16> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(listener.local_addr()?.port())
}

/// The values substitutions stand for.
struct Subst {
    exe: String,
    sandbox: Option<String>,
    port: Option<u16>,
    scenario_dir: String,
}

impl Subst {
    /// `text` with `{mcp-chaos}`, `{sandbox}`, `{port}`, `{scenario_dir}` and `${NAME}`
    /// replaced. Errors on an unset variable.
    fn apply(&self, text: &str) -> Result<String, String> {
        let mut out = text.replace("{mcp-chaos}", &self.exe);
        if let Some(sb) = &self.sandbox {
            out = out.replace("{sandbox}", sb);
        }
        if let Some(port) = self.port {
            out = out.replace("{port}", &port.to_string());
        }
        out = out.replace("{scenario_dir}", &self.scenario_dir);
        let mut result = String::with_capacity(out.len());
        let mut rest = out.as_str();
        while let Some(at) = rest.find("${") {
            result.push_str(&rest[..at]);
            let after = &rest[at + 2..];
            let Some(end) = after.find('}') else {
                return Err(format!("unterminated ${{ in {text:?}"));
            };
            let name = &after[..end];
            let value = std::env::var(name).map_err(|_| {
                format!("{text:?} uses ${{{name}}}, but the environment variable {name} is not set")
            })?;
            result.push_str(&value);
            rest = &after[end + 1..];
        }
        result.push_str(rest);
        Ok(result)
    }

    fn all(&self, items: &[String]) -> Result<Vec<String>, String> {
        items.iter().map(|s| self.apply(s)).collect()
    }

    /// `value` with every string substituted (keys stay as written).
    fn json(&self, value: &Value) -> Result<Value, String> {
        Ok(match value {
            Value::String(s) => Value::String(self.apply(s)?),
            Value::Array(items) => Value::Array(
                items
                    .iter()
                    .map(|v| self.json(v))
                    .collect::<Result<_, _>>()?,
            ),
            Value::Object(map) => {
                let mut out = serde_json::Map::new();
                for (k, v) in map {
                    out.insert(k.clone(), self.json(v)?);
                }
                Value::Object(out)
            }
            other => other.clone(),
        })
    }
}

async fn make_sandbox(
    dir: &Path,
    spec: &super::format::SandboxSection,
    subst: &Subst,
) -> Result<(), String> {
    let inside = |rel: &str| -> Result<PathBuf, String> {
        let rel = Path::new(rel);
        if rel.is_absolute()
            || rel
                .components()
                .any(|c| matches!(c, std::path::Component::ParentDir))
        {
            return Err(format!(
                "sandbox path {} must be relative and stay inside the sandbox",
                rel.display()
            ));
        }
        Ok(dir.join(rel))
    };
    for d in &spec.dirs {
        let path = inside(d)?;
        std::fs::create_dir_all(&path)
            .map_err(|e| format!("sandbox: cannot create {}: {e}", path.display()))?;
    }
    for (rel, content) in &spec.files {
        let path = inside(rel)?;
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("sandbox: cannot create {}: {e}", parent.display()))?;
        }
        std::fs::write(&path, content)
            .map_err(|e| format!("sandbox: cannot write {}: {e}", path.display()))?;
    }
    for command in &spec.setup {
        let words = subst.all(command)?;
        let Some((program, args)) = words.split_first() else {
            return Err("sandbox setup: an empty command".into());
        };
        let shown = words.join(" ");
        let child = tokio::process::Command::new(program)
            .args(args)
            .current_dir(dir)
            .stdin(std::process::Stdio::null())
            .kill_on_drop(true)
            .output();
        let output = match tokio::time::timeout(Duration::from_secs(60), child).await {
            Err(_) => {
                return Err(format!(
                    "sandbox setup `{shown}` did not finish within 60 s"
                ));
            }
            Ok(Err(e)) => return Err(format!("sandbox setup `{shown}` could not run: {e}")),
            Ok(Ok(o)) => o,
        };
        if !output.status.success() {
            return Err(format!(
                "sandbox setup `{shown}` failed ({}): {}",
                output.status,
                String::from_utf8_lossy(&output.stderr).trim()
            ));
        }
    }
    Ok(())
}

fn config(scenario: &Scenario, subst: &Subst, options: &SuiteOptions) -> Result<RunConfig, String> {
    let file = &scenario.file;
    let s = &file.server;
    let upstream = file.upstream.clone().unwrap_or_default();
    let max_frame = s
        .max_frame_bytes
        .unwrap_or(crate::transport::DEFAULT_MAX_FRAME_BYTES);
    let process_options = crate::run::ProcessOptions {
        // Under a forward proxy the proxy variables are the proxy's own.
        no_egress: s.no_egress && !upstream.proxy,
        env: s
            .env
            .iter()
            .map(|(k, v)| Ok((k.clone(), subst.apply(v)?)))
            .collect::<Result<_, String>>()?,
        clean_env: s.clean_env,
        cwd: s
            .cwd
            .as_deref()
            .map(|d| subst.apply(d))
            .transpose()?
            .map(PathBuf::from),
        max_frame_bytes: max_frame,
    };
    let process = |words: &[String]| -> Result<StdioConfig, String> {
        let words = subst.all(words)?;
        let Some((program, args)) = words.split_first() else {
            return Err("[server]: an empty command".into());
        };
        Ok(process_options.apply(StdioConfig::new(program.clone(), args.to_vec())))
    };
    let server = match (&s.stdio, &s.http) {
        (Some(words), _) => ServerSpec::Stdio(process(words)?),
        (None, Some(url)) => {
            let url = subst.apply(url)?;
            crate::transport::http::loopback_url(&url, false)
                .map_err(|e| format!("[server] http {url:?}: {e}"))?;
            let mut c = HttpConfig::new(url);
            c.start = s.start.as_deref().map(process).transpose()?;
            if let Some(ms) = s.start_timeout_ms {
                c.start_timeout = Duration::from_millis(ms);
            }
            c.max_frame_bytes = max_frame;
            for (name, template) in &s.headers {
                let value = subst.apply(template)?;
                if reqwest::header::HeaderValue::from_str(&value).is_err() {
                    return Err(format!(
                        "[server] headers.{name}: the value (after substitution) holds characters an HTTP header cannot carry"
                    ));
                }
                c.headers.push((name.clone(), value));
            }
            ServerSpec::Http(c)
        }
        (None, None) => return Err("[server] needs `stdio` or `http`".into()),
    };
    let version = match s.protocol_version.as_deref() {
        None | Some("auto") => VersionChoice::Auto,
        Some(v) => v
            .parse()
            .map(VersionChoice::Exactly)
            .map_err(|_| format!("[server] protocol_version {v:?} is unknown"))?,
    };
    let mut config = RunConfig::new(server, version);
    if let Some(ms) = file.timeout_ms {
        config.timeout = Duration::from_millis(ms.max(1));
    }
    if let Some(n) = file.max_restarts {
        config.max_restarts = n;
    }
    if let Some(n) = file.cases {
        config.cases = n;
    }
    if let Some(ms) = file.tool_budget_ms {
        config.tool_budget = Duration::from_millis(ms);
    }
    if let Some(n) = file.wire_cases {
        config.wire_cases = n;
    }
    if let Some(k) = file.in_flight {
        config.in_flight = k.max(1);
    }
    config.seed = file.seed;
    config.selection = crate::run::select::ToolSelection {
        tools: file.tools.clone(),
        skip: file.skip_tools.clone(),
        read_only: file.read_only,
    };
    config.replays = options
        .replays
        .as_ref()
        .map(|dir| dir.join(sanitize(&scenario.name)));
    config.faults.upstream_env = upstream.env.clone();
    config.faults.proxy = upstream.proxy;
    config.faults.url_args = upstream.url_args;
    config.faults.faults = scenario.faults.clone();
    for (k, v) in &upstream.secrets {
        config.secrets.push((k.clone(), subst.apply(v)?));
    }
    Ok(config)
}

fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// What a step produced, before classification.
struct Played {
    label: String,
    line: usize,
    exchanges: u64,
    duration_ms: u64,
    findings: Vec<usize>,
}

async fn play(
    scenario: &Scenario,
    prepared: &Prepared,
    options: &SuiteOptions,
    on_event: &(dyn Fn(&SuiteEvent<'_>) + Sync),
    started: Instant,
) -> ScenarioReport {
    let name = scenario.name.as_str();
    let forward = Mutex::new(());
    let mut on_run = |event: &Event<'_>| {
        let _serial = forward.lock();
        on_event(&SuiteEvent::Run { name, event });
    };
    let config = &prepared.config;
    let mut driver = match Driver::start(config, &mut on_run).await {
        Ok(d) => d,
        Err(e) => {
            return error_report(
                scenario,
                format!("the server could not be started: {e}"),
                started,
                options,
            );
        }
    };
    let mut played = Vec::new();
    for step in &scenario.steps {
        on_event(&SuiteEvent::Step {
            name,
            label: &step.label,
        });
        let t = Instant::now();
        let mark = driver.mark();
        let exchange = perform(&mut driver, scenario, step, prepared).await;
        let produced = driver.findings_since(mark);
        let failures = check_step(&driver, step, exchange.as_ref(), &produced);
        driver.add(failures);
        played.push(Played {
            label: step.label.clone(),
            line: step.line,
            exchanges: driver.exchanges_since(mark),
            duration_ms: millis(t.elapsed()),
            findings: driver.findings_since(mark),
        });
    }
    let whole: Vec<usize> = (0..driver.findings().len()).collect();
    let scenario_failures = check_scenario(&driver, scenario, &whole);
    let tail_mark = driver.mark();
    driver.add(scenario_failures);
    let tail = driver.findings_since(tail_mark);
    let report = driver.finish().await;
    classify(scenario, options, report, played, &tail, started)
}

/// Plays one step; returns the exchange of a `call` step.
async fn perform(
    driver: &mut Driver<'_>,
    scenario: &Scenario,
    step: &Step,
    prepared: &Prepared,
) -> Option<Exchange> {
    let config = &prepared.config;
    match &step.action {
        Action::Call {
            tool,
            arguments,
            fault,
        } => {
            // Substitution errors were caught when the scenario was prepared.
            let arguments = arguments
                .as_ref()
                .map(|a| prepared.subst.json(a).unwrap_or_else(|_| a.clone()));
            driver.call(tool, arguments, fault.as_ref()).await
        }
        Action::Read { uri } => {
            let uri = prepared.subst.apply(uri).unwrap_or_else(|_| uri.clone());
            driver.read(&uri).await
        }
        Action::Prompt { name, arguments } => {
            let arguments = prepared
                .subst
                .json(arguments)
                .unwrap_or_else(|_| arguments.clone());
            driver.prompt(name, arguments).await
        }
        Action::Generate {
            tool,
            valid,
            invalid,
        } => {
            let valid = valid.unwrap_or(config.cases);
            let invalid = invalid.unwrap_or(valid.div_ceil(2));
            driver.generate(tool.as_deref(), valid, invalid).await;
            None
        }
        Action::Faults { tool, faults } => {
            let faults = faults.clone().unwrap_or_else(|| {
                scenario
                    .faults
                    .iter()
                    .cloned()
                    .map(mcp_chaos_faults::ScopedFault::every)
                    .collect()
            });
            driver.faults(tool.as_deref(), &faults).await;
            None
        }
        Action::Probes => {
            driver.probes().await;
            None
        }
        Action::Baseline => {
            driver.baseline().await;
            None
        }
        Action::Chaos => {
            driver.chaos().await;
            None
        }
        Action::VersionProbe => {
            driver.version_probe().await;
            None
        }
        Action::Wire => {
            driver.wire().await;
            None
        }
        Action::Campaign(c) => {
            driver
                .campaign(Phases {
                    probes: c.probes,
                    tool_calls: c.tool_calls,
                    generated: c.generated,
                    chaos: c.chaos,
                    version_probe: c.version_probe,
                    end_session: c.end_session,
                    wire: c.wire,
                    features: c.features,
                })
                .await;
            None
        }
    }
}

/// The `expectation-failed` findings of a step: its outcome expectations against the call's
/// exchange, and its `reported` / `holds` lists against the findings it produced.
fn check_step(
    driver: &Driver<'_>,
    step: &Step,
    exchange: Option<&Exchange>,
    produced: &[usize],
) -> Vec<Finding> {
    let mut failures = Vec::new();
    let at = format!("step {:?} (line {})", step.label, step.line);
    let fail = |ex: Option<&Exchange>, msg: String| {
        let mut f = match ex {
            Some(ex) => driver.finding_about(
                &finding::EXPECTATION_FAILED,
                Severity::Violation,
                ex,
                format!("{at}: {msg}"),
            ),
            None => driver.finding(
                &finding::EXPECTATION_FAILED,
                Severity::Violation,
                format!("{at}: {msg}"),
            ),
        };
        f.probe = format!("step {}", step.label);
        if let Action::Call { tool, .. } = &step.action {
            f.tool = Some(tool.clone());
        }
        f
    };
    if matches!(
        step.action,
        Action::Call { .. } | Action::Read { .. } | Action::Prompt { .. }
    ) {
        for msg in outcome_mismatches(step, exchange) {
            failures.push(fail(exchange, msg));
        }
    }
    let findings = driver.findings();
    let codes: Vec<&str> = produced
        .iter()
        .map(|&i| findings[i].code.as_str())
        .collect();
    for inv in &step.expect.reported {
        if let Some(inv) = finding::lookup(inv)
            && !codes.contains(&inv.code)
        {
            failures.push(fail(
                None,
                format!(
                    "expected `{}` ({}) to be reported by this step; it was not",
                    inv.name, inv.code
                ),
            ));
        }
    }
    for inv in &step.expect.holds {
        if let Some(inv) = finding::lookup(inv) {
            for &i in produced {
                if findings[i].code == inv.code {
                    failures.push(fail(
                        None,
                        format!(
                            "`{}` ({}) must hold in this step, but was reported: {}",
                            inv.name, inv.code, findings[i].message
                        ),
                    ));
                }
            }
        }
    }
    failures
}

/// What a `call` step's answer got wrong, one message per expectation.
fn outcome_mismatches(step: &Step, exchange: Option<&Exchange>) -> Vec<String> {
    let e = &step.expect;
    let wants_outcome = e.channel.is_some()
        || e.is_error.is_some()
        || e.error_code.is_some()
        || step.content_regex.is_some()
        || !e.structured_content.is_empty();
    if !wants_outcome {
        return Vec::new();
    }
    let Some(response) = exchange.and_then(Exchange::response) else {
        let why = match exchange {
            None => "no server was running".to_owned(),
            Some(ex) => format!("no response ({:?})", ex.outcome),
        };
        return vec![format!("expected an answer to check, got {why}")];
    };
    let mut out = Vec::new();
    let channel = if response.is_error() {
        Channel::Error
    } else {
        Channel::Result
    };
    let shown = |c: Channel| match c {
        Channel::Error => "a JSON-RPC error",
        Channel::Result => "a result",
    };
    let wanted_channel = e.channel.or(if e.is_error.is_some() {
        Some(Channel::Result)
    } else if e.error_code.is_some() {
        Some(Channel::Error)
    } else {
        None
    });
    if let Some(want) = wanted_channel
        && want != channel
    {
        let detail = match response.error() {
            Some(err) => format!(
                " (code {}: {})",
                err.code,
                crate::wire::excerpt(err.message.as_bytes(), 200)
            ),
            None => String::new(),
        };
        out.push(format!(
            "expected {}, got {}{detail}",
            shown(want),
            shown(channel)
        ));
        return out;
    }
    let text = match (response.result(), response.error()) {
        (Some(result), _) if matches!(step.action, Action::Call { .. }) => {
            crate::oracle::result_text(result)
        }
        (Some(result), _) => crate::oracle::feature_shape::texts(result)
            .map(|(_, text)| text)
            .unwrap_or_default(),
        (None, Some(err)) => err.message.to_owned(),
        _ => String::new(),
    };
    if let (Some(want), Some(result)) = (e.is_error, response.result()) {
        let got = crate::oracle::is_error_result(result);
        if got != want {
            out.push(format!(
                "expected isError: {want}, got isError: {got} with text {:?}",
                crate::wire::excerpt(text.as_bytes(), 200)
            ));
        }
    }
    if let (Some(want), Some(err)) = (e.error_code, response.error())
        && err.code != want
    {
        out.push(format!(
            "expected error code {want}, got {} ({})",
            err.code,
            crate::wire::excerpt(err.message.as_bytes(), 200)
        ));
    }
    if let Some(re) = &step.content_regex
        && !re.is_match(&text)
    {
        out.push(format!(
            "expected the text to match /{}/, got {:?}",
            re.as_str(),
            crate::wire::excerpt(text.as_bytes(), 300)
        ));
    }
    if !e.structured_content.is_empty() {
        let sc = response.result().and_then(|r| r.get("structuredContent"));
        for (path, want) in &e.structured_content {
            let got = sc.and_then(|v| v.pointer(&pointer(path)));
            if !got.is_some_and(|g| same_json(g, want)) {
                out.push(format!(
                    "expected structuredContent {path} = {want}, got {}",
                    got.map_or_else(|| "nothing".to_owned(), Value::to_string)
                ));
            }
        }
    }
    out
}

/// JSON equality with numbers compared by value (`5` equals `5.0`), as JSON Schema's `const`
/// compares them.
fn same_json(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x == y,
            _ => x.as_f64() == y.as_f64(),
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same_json(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_json(v, w)))
        }
        _ => a == b,
    }
}

/// A JSON pointer from a pointer or a dotted path (`a.b.0` → `/a/b/0`).
fn pointer(path: &str) -> String {
    if path.starts_with('/') || path.is_empty() {
        return path.to_owned();
    }
    path.split('.')
        .map(|seg| format!("/{}", seg.replace('~', "~0").replace('/', "~1")))
        .collect()
}

/// The `expectation-failed` findings of the scenario-wide `[[expect]]` tables.
fn check_scenario(driver: &Driver<'_>, scenario: &Scenario, all: &[usize]) -> Vec<Finding> {
    let findings = driver.findings();
    let mut failures = Vec::new();
    for (e, line) in scenario.file.expect.iter().zip(&scenario.expect_lines) {
        let e = e.get_ref();
        for inv in &e.reported {
            if let Some(inv) = finding::lookup(inv)
                && !all.iter().any(|&i| findings[i].code == inv.code)
            {
                let mut f = driver.finding(
                    &finding::EXPECTATION_FAILED,
                    Severity::Violation,
                    format!(
                        "[[expect]] (line {line}): expected `{}` ({}) to be reported; it was not",
                        inv.name, inv.code
                    ),
                );
                f.probe = format!("expect reported {}", inv.name);
                failures.push(f);
            }
        }
        for inv in &e.holds {
            if let Some(inv) = finding::lookup(inv) {
                for &i in all {
                    if findings[i].code == inv.code {
                        let mut f = driver.finding(
                            &finding::EXPECTATION_FAILED,
                            Severity::Violation,
                            format!(
                                "[[expect]] (line {line}): `{}` ({}) must hold, but was reported: {}",
                                inv.name, inv.code, findings[i].message
                            ),
                        );
                        f.probe = format!("expect holds {}", inv.name);
                        f.tool.clone_from(&findings[i].tool);
                        failures.push(f);
                    }
                }
            }
        }
    }
    failures
}

/// Classifies the findings of a finished scenario and builds its report.
fn classify(
    scenario: &Scenario,
    options: &SuiteOptions,
    report: crate::run::Report,
    played: Vec<Played>,
    scenario_level: &[usize],
    started: Instant,
) -> ScenarioReport {
    let mut first_line: BTreeMap<usize, usize> = BTreeMap::new();
    let mut expected_in: BTreeMap<usize, HashSet<&'static str>> = BTreeMap::new();
    for (step, p) in scenario.steps.iter().zip(&played) {
        let codes: HashSet<&'static str> = step
            .expect
            .reported
            .iter()
            .filter_map(|i| finding::lookup(i).map(|inv| inv.code))
            .collect();
        for &i in &p.findings {
            first_line.entry(i).or_insert(p.line);
            expected_in
                .entry(i)
                .or_default()
                .extend(codes.iter().copied());
        }
    }
    let scenario_expected: HashSet<&'static str> = scenario
        .file
        .expect
        .iter()
        .flat_map(|e| e.get_ref().reported.iter())
        .filter_map(|i| finding::lookup(i).map(|inv| inv.code))
        .collect();
    let expect_line = scenario.expect_lines.first().copied().unwrap_or(1);
    let baseline = options.baseline.entries_of(&scenario.name);
    let mut matched: HashSet<String> = HashSet::new();
    let mut findings = Vec::new();
    for (i, f) in report.findings.into_iter().enumerate() {
        let fp = fingerprint(&f);
        let is_expectation = f.code == finding::EXPECTATION_FAILED.code;
        let expected = !is_expectation
            && (scenario_expected.contains(f.code.as_str())
                || expected_in
                    .get(&i)
                    .is_some_and(|codes| codes.contains(f.code.as_str())));
        let known = scenario.file.known.iter().find_map(|k| {
            let k = k.get_ref();
            let inv = finding::lookup(&k.invariant)?;
            let ok = !is_expectation
                && inv.code == f.code
                && k.tool.as_ref().is_none_or(|t| f.tool.as_ref() == Some(t))
                && k.probe
                    .as_ref()
                    .is_none_or(|p| f.probe.contains(p.as_str()));
            ok.then(|| k.reason.clone())
        });
        let in_baseline = baseline.iter().find(|b| b.fingerprint == fp);
        if let Some(b) = in_baseline {
            matched.insert(b.fingerprint.clone());
        }
        let status = if expected {
            FindingStatus::Expected
        } else if let Some(reason) = known {
            FindingStatus::Known(reason)
        } else if let Some(b) = in_baseline {
            FindingStatus::Baseline(b.reason.clone())
        } else {
            FindingStatus::New
        };
        let line = if scenario_level.contains(&i) {
            expect_line
        } else {
            first_line.get(&i).copied().unwrap_or(1)
        };
        let replay_command = Some(match &f.replay {
            Some(file) => format!("mcp-chaos replay {file}"),
            None => format!("mcp-chaos scenario {}", scenario.path.display()),
        });
        findings.push(ScenarioFinding {
            finding: f,
            fingerprint: fp,
            status,
            line,
            replay_command,
        });
    }
    let steps: Vec<StepReport> = played
        .into_iter()
        .map(|p| StepReport {
            passed: p.findings.iter().all(|&i| !findings[i].status.fails()),
            label: p.label,
            line: p.line,
            exchanges: p.exchanges,
            duration_ms: p.duration_ms,
            findings: p.findings,
        })
        .collect();
    let failed = findings.iter().any(|f| f.status.fails());
    let status = if failed {
        ScenarioStatus::Failed
    } else {
        ScenarioStatus::Passed
    };
    let fixed = super::baseline::fixed(baseline, &matched);
    ScenarioReport {
        name: scenario.name.clone(),
        file: scenario.path.clone(),
        exit_code: status.exit_code(),
        status,
        server: Some(report.server),
        seed: report.seed,
        steps,
        findings,
        fixed,
        duration_ms: millis(started.elapsed()),
    }
}
