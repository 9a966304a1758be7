//! The `mcp-chaos` command line.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

use crate::finding;
use crate::fixture::{self, Flaw};
use crate::protocol::ProtocolVersion;
use crate::report;
use crate::run::{self, RunConfig, ServerSpec, VersionChoice};
use crate::transport::{DEFAULT_MAX_FRAME_BYTES, DEFAULT_TIMEOUT_MS, StdioConfig};

pub use mcp_chaos_model::exit;

/// `mcp-chaos run --help`'s closing section: the exit codes ([`exit::RUN`]), then the rest.
fn after_help() -> String {
    exit::section(exit::RUN) + "\n" + AFTER_HELP
}

const AFTER_HELP: &str = "\
The report is written whatever happens. --report-json PATH is written on exit 2 too
(\"outcome\": \"not-started\", an \"error\" with the server's output tail, the exchanges
attempted), and on SIGINT or SIGTERM at any point of the run (\"interrupted\": true, the
findings so far) before the server's process tree is killed. Beside it,
PATH-without-extension.findings.jsonl (report.json -> report.findings.jsonl) gets one JSON
line per finding as it is found, so even SIGKILL loses nothing already found. --junit,
--sarif, --markdown and --html are written in the same cases, from the same report: a run
that did not start is an error test case, an interrupted one fails if it found a violation.

The summary ends with the seed and the exact command that reruns the run (`--seed N`). Numeric
knobs can come from the environment (a flag wins): MCP_CHAOS_SEED, MCP_CHAOS_CASES,
MCP_CHAOS_TIMEOUT_MS, MCP_CHAOS_TOOL_BUDGET_MS, MCP_CHAOS_MAX_RESTARTS, MCP_CHAOS_MAX_FRAME_BYTES.

Examples:
  mcp-chaos demo
  mcp-chaos run --stdio \"node ./build/index.js\" --report-json report.json
  mcp-chaos run --stdio \"node build/index.js\" --junit out/junit.xml --sarif out/results.sarif
  mcp-chaos run --stdio \"node build/index.js\" --markdown \"$GITHUB_STEP_SUMMARY\"
  mcp-chaos run --stdio \"./venv/bin/mcp-server-time\" --protocol-version 2025-06-18
  mcp-chaos run --stdio \"node build/index.js\" --seed 1234   # the seed a summary printed
  MCP_CHAOS_CASES=500 MCP_CHAOS_TIMEOUT_MS=30000 mcp-chaos run --stdio \"node build/index.js\"
  mcp-chaos run --http http://127.0.0.1:3001/mcp --header 'Authorization: Bearer ${MCP_TOKEN}'
  mcp-chaos run --stdio \"node build/index.js\" --skip-tools 'delete_*,send_*'
  mcp-chaos run --stdio \"node build/index.js\" --tools 'get_*,search' --read-only
  mcp-chaos explain MC102";

/// Property-based fuzz and chaos testing for MCP servers: drives a server with valid and
/// invalid requests and reports every place it fails badly.
#[derive(Debug, Parser)]
#[command(name = "mcp-chaos", version, after_help = after_help(), max_term_width = 100)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run a campaign against a server and report the findings.
    #[command(after_help = after_help())]
    Run(Box<RunArgs>),
    /// Run a campaign against the bundled fixture server with a few flaws planted.
    Demo(DemoArgs),
    /// Re-run a finding saved with --replays and say whether it still fails (exit 1 if it
    /// does, 0 if it is fixed, 2 if the server cannot be started).
    Replay(ReplayArgs),
    /// Run scenario files (or every *.toml under folders, but baseline.toml) for CI: each
    /// starts its server, plays its [[step]]s and checks its expectations; findings not
    /// accepted by the scenario or the baseline fail it. Exit code: 0 all passed, 1 a
    /// scenario failed, 2 a scenario's server could not be started (the others still run),
    /// 3 a scenario or baseline file is malformed (nothing runs).
    #[command(after_help = scenario_after_help())]
    Scenario(ScenarioArgs),
    /// Print arguments generated from a JSON Schema (a tool's inputSchema), one JSON value per
    /// line: what the schema admits (or, with --invalid, values breaking one constraint each).
    Gen(GenArgs),
    /// Explain an invariant (by code or name), or list them all.
    Explain {
        /// An invariant code (MC102) or name (wrong-error-code); omit to list every invariant.
        code: Option<String>,
    },
    /// Serve the bundled fixture MCP server on stdio (used by the demo and the tests).
    #[command(hide = true)]
    Fixture {
        /// A flaw to plant (repeatable); see `mcp-chaos fixture --list-flaws`.
        #[arg(long = "flaw", value_name = "NAME")]
        flaws: Vec<Flaw>,
        /// List the flaws and exit.
        #[arg(long)]
        list_flaws: bool,
        /// Serve Streamable HTTP at http://ADDR/mcp instead of stdio (a loopback address, e.g.
        /// 127.0.0.1:0; prints "listening on http://IP:PORT/mcp" to stderr once bound). With
        /// FIXTURE_BEARER_TOKEN set, every request needs "Authorization: Bearer <its value>"
        /// (else 401 with a WWW-Authenticate challenge naming its resource metadata).
        #[arg(long, value_name = "ADDR")]
        http: Option<String>,
    },
}

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("server").required(true).args(["stdio", "http"])))]
struct RunArgs {
    /// The server's command line, run as a child process speaking MCP over stdio, e.g.
    /// "node build/index.js" (split like a shell would, without running one). Install the
    /// server first: launchers that download at start (`npx -y`) are slow and, with
    /// --no-egress, cut off.
    #[arg(long, value_name = "COMMAND")]
    stdio: Option<String>,

    /// The server's Streamable HTTP endpoint, e.g. http://127.0.0.1:3001/mcp. Loopback only,
    /// unless --allow-remote.
    #[arg(long, value_name = "URL")]
    http: Option<String>,

    /// With --http: a command that starts the server; mcp-chaos waits for the URL's port to
    /// open and kills the command's process tree at the end. --env, --cwd and --clean-env
    /// apply to it.
    #[arg(long, value_name = "COMMAND", requires = "http")]
    start: Option<String>,

    /// With --start: how long to wait for the port to open, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 10_000, requires = "start")]
    start_timeout_ms: u64,

    /// With --http: allow a URL whose host is not loopback.
    #[arg(long, requires = "http")]
    allow_remote: bool,

    /// With --http: a header sent on every request (repeatable), e.g.
    /// --header "Authorization: Bearer ${MCP_TOKEN}" or --header "X-Api-Key: ${API_KEY}".
    /// ${NAME} is read from mcp-chaos's environment at start (an unset one is an error); put
    /// the value in a variable, not on the command line, which shells and CI logs keep. Values
    /// are redacted from every report, log and line printed (the name may show). A server
    /// that answers the handshake 401 or 403 is exit 2, with its WWW-Authenticate challenge.
    #[arg(long = "header", value_name = "NAME: VALUE", requires = "http")]
    headers: Vec<crate::auth::HeaderArg>,

    #[command(flatten)]
    common: CommonArgs,
}

#[derive(Debug, Args)]
struct ReplayArgs {
    /// The replay file (written by `run --replays DIR`).
    file: PathBuf,
    /// Start the server with this command instead of the one saved in the file.
    #[arg(long, value_name = "COMMAND")]
    stdio: Option<String>,
    /// For an HTTP server: a header sent on every request (repeatable), as `run --header`
    /// (${NAME} read from the environment). The file keeps the run's headers by name, with
    /// their ${NAME} templates but never a value written literally: such a header must be
    /// given again here. One given here replaces the saved one of its name.
    #[arg(long = "header", value_name = "NAME: VALUE", conflicts_with = "stdio")]
    headers: Vec<crate::auth::HeaderArg>,
    /// Deadline for each request, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = DEFAULT_TIMEOUT_MS)]
    timeout_ms: u64,
}

/// `mcp-chaos scenario --help`'s closing section: the format, examples, then the exit codes
/// ([`exit::SCENARIO`]) and what an interruption writes.
fn scenario_after_help() -> String {
    let (head, tail) = SCENARIO_HELP
        .split_once("On SIGINT")
        .unwrap_or((SCENARIO_HELP, ""));
    format!("{head}{}On SIGINT{tail}", exit::section(exit::SCENARIO))
}

const SCENARIO_HELP: &str = "\
Scenario files are TOML; see scenarios/README.md, and `--schema` for the JSON Schema of the
format (editors validate with it). A minimal one:

  [server]
  stdio = [\"npx\", \"-y\", \"@modelcontextprotocol/server-everything\"]

  [[step]]
  call = { tool = \"echo\", arguments = { message = \"hi\" } }
  expect = { is_error = false, content_matches = \"hi\" }

  [[step]]
  campaign = {}

Examples:
  mcp-chaos scenario scenarios/ --baseline scenarios/baseline.toml
  mcp-chaos scenario scenarios/ --shard 1/2 --junit out/junit.xml --sarif out/results.sarif
  mcp-chaos scenario scenarios/fixture --update-baseline --baseline scenarios/baseline.toml

On SIGINT or SIGTERM the reports asked for are written with the scenarios finished so far
(\"interrupted\": true, the others listed in \"unfinished\"; the baseline is not updated),
every server's process tree is killed, and the exit code is 1 if a finished scenario
failed, else 2.";

#[derive(Debug, Args)]
struct ScenarioArgs {
    /// Scenario files, or folders searched recursively for *.toml (baseline.toml excepted).
    #[arg(value_name = "PATH", required_unless_present = "schema")]
    paths: Vec<PathBuf>,
    /// Scenarios run at once (default: the number of CPUs). Scenarios with
    /// `exclusive = true` run alone.
    #[arg(long, short = 'j', value_name = "N")]
    jobs: Option<usize>,
    /// Run only shard I of N (1-based): every Nth scenario of the sorted list, starting at
    /// the Ith. The N shards together run every scenario exactly once.
    #[arg(long, value_name = "I/N", value_parser = parse_shard)]
    shard: Option<(u32, u32)>,
    /// Findings accepted for now (TOML; see --update-baseline): reported, but they do not
    /// fail the run. Baseline entries no longer found are listed as fixed.
    #[arg(long, value_name = "FILE")]
    baseline: Option<PathBuf>,
    /// Rewrite the --baseline file from this run (entries of scenarios that did not run, as
    /// in other shards, are kept). New entries get a reason to fill in. Exit 0 unless a
    /// scenario could not run.
    #[arg(long, requires = "baseline")]
    update_baseline: bool,
    /// Write the suite report as JSON.
    #[arg(long, value_name = "PATH")]
    report_json: Option<PathBuf>,
    /// Write a JUnit XML report: a test suite per scenario, a test case per step.
    #[arg(long, value_name = "PATH")]
    junit: Option<PathBuf>,
    /// Write a SARIF 2.1.0 report (GitHub code scanning and other SARIF viewers): a result
    /// per finding, rule ids = invariant codes; accepted findings carry suppressions.
    #[arg(long, value_name = "PATH")]
    sarif: Option<PathBuf>,
    /// In the SARIF report, only the findings that fail the run (GitHub code scanning ignores
    /// suppressions, so accepted findings would show as open alerts).
    #[arg(long, requires = "sarif")]
    sarif_new_only: bool,
    /// Write a Markdown summary (e.g. to $GITHUB_STEP_SUMMARY).
    #[arg(long, value_name = "PATH")]
    markdown: Option<PathBuf>,
    /// Write one self-contained HTML page for the suite (fetches nothing): per scenario, the
    /// verdict, tool × fault and tool × invariant matrices, timing and every finding.
    #[arg(long, value_name = "PATH")]
    html: Option<PathBuf>,
    /// Write replay files of generated findings under DIR/SCENARIO/.
    #[arg(long, value_name = "DIR")]
    replays: Option<PathBuf>,
    /// List the scenarios that would run (after --shard) and exit.
    #[arg(long)]
    list: bool,
    /// Print the JSON Schema of the scenario format and exit.
    #[arg(long)]
    schema: bool,
    /// No progress on stderr.
    #[arg(long, short)]
    quiet: bool,
}

fn parse_shard(s: &str) -> Result<(u32, u32), String> {
    let bad = || format!("expected I/N with 1 <= I <= N, e.g. 1/2; got {s:?}");
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let (i, n): (u32, u32) = (
        i.trim().parse().map_err(|_| bad())?,
        n.trim().parse().map_err(|_| bad())?,
    );
    if i == 0 || n == 0 || i > n {
        return Err(bad());
    }
    Ok((i, n))
}

#[derive(Debug, Args)]
struct GenArgs {
    /// A file holding a JSON Schema (e.g. a tool's inputSchema); `-` reads stdin.
    schema: PathBuf,
    /// How many values to print.
    #[arg(long, value_name = "N", default_value_t = 10)]
    count: usize,
    /// The seed (the same seed prints the same values).
    #[arg(long, value_name = "N", default_value_t = 0)]
    seed: u64,
    /// Print values that break exactly one constraint, as
    /// {"value": ..., "violates": {"keyword": ..., "pointer": ...}}.
    #[arg(long)]
    invalid: bool,
    /// Also print the deterministic boundary cases first (valid and invalid edges).
    #[arg(long)]
    boundary: bool,
    /// Where URL-typed values point (a loopback URL).
    #[arg(long, value_name = "URL")]
    url_base: Option<String>,
}

#[derive(Debug, Args)]
struct DemoArgs {
    /// The run's seed (default: random); the summary prints it and the command to rerun.
    #[arg(long, value_name = "N", env = "MCP_CHAOS_SEED")]
    seed: Option<u64>,
    #[command(flatten)]
    output: OutputArgs,
}

#[derive(Debug, Clone, Args)]
struct OutputArgs {
    /// Write the report as JSON to this file, whatever happens (exit 2, SIGINT, SIGTERM), and
    /// journal each finding as it is found beside it, in PATH-without-extension.findings.jsonl.
    #[arg(long, value_name = "PATH")]
    report_json: Option<PathBuf>,
    /// Write a JUnit XML report (CI test views): a test case per tool called and one,
    /// `server`, for the protocol findings; a violation fails its test case. The writer of
    /// `mcp-chaos scenario --junit`.
    #[arg(long, value_name = "PATH")]
    junit: Option<PathBuf>,
    /// Write a SARIF 2.1.0 report (GitHub code scanning): a result per finding, rule ids =
    /// invariant codes, located at the --stdio command's entry file when it names one.
    #[arg(long, value_name = "PATH")]
    sarif: Option<PathBuf>,
    /// Write a Markdown summary (e.g. --markdown "$GITHUB_STEP_SUMMARY").
    #[arg(long, value_name = "PATH")]
    markdown: Option<PathBuf>,
    /// Write one self-contained HTML page (opens from disk, fetches nothing): the verdict, a
    /// tool × fault and a tool × invariant matrix, timing, every finding with its request,
    /// response, fault, spec link and rerun command.
    #[arg(long, value_name = "PATH")]
    html: Option<PathBuf>,
    /// Print only the final summary (no progress).
    #[arg(long, short)]
    quiet: bool,
    /// Write every frame sent and received into this folder, one file each (sent/NNNNNN.json,
    /// received/NNNNNN.json, transcript.jsonl): a transcript, and a seed corpus for fuzzing.
    #[arg(long, value_name = "DIR")]
    record: Option<PathBuf>,
}

#[derive(Debug, Args)]
struct CommonArgs {
    /// An environment variable for the server (repeatable), e.g. --env API_KEY=test.
    #[arg(long = "env", value_name = "KEY=VALUE", value_parser = parse_env)]
    env: Vec<(String, String)>,

    /// Start the server with an empty environment (keeping only PATH, HOME, LANG, LC_ALL,
    /// TMPDIR and TZ) plus the --env variables, instead of inheriting mcp-chaos's. Use it in CI
    /// so that no secret of the CI job can reach the server, and from there the report.
    #[arg(long)]
    clean_env: bool,

    /// The server's working directory.
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,

    /// The protocol version: `auto` (the newest both sides speak: 2026-07-28 if the server
    /// answers server/discover, else what it answers to initialize 2025-11-25), `all` (one
    /// campaign per version the server speaks, reported per version), or one of 2024-11-05,
    /// 2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28. Findings are judged by the version the
    /// server negotiated.
    #[arg(long, value_name = "VERSION", default_value = "auto")]
    protocol_version: VersionChoice,

    /// Deadline for each request, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = DEFAULT_TIMEOUT_MS, env = "MCP_CHAOS_TIMEOUT_MS")]
    timeout_ms: u64,

    /// Largest frame accepted from the server, in bytes: a stdout line, an HTTP body, one SSE
    /// event and one SSE response stream in total. Judged as bytes arrive; a larger one is cut
    /// and reported (oversize-frame).
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_FRAME_BYTES, env = "MCP_CHAOS_MAX_FRAME_BYTES")]
    max_frame_bytes: usize,

    /// Cut the server off from the network: point HTTP_PROXY, HTTPS_PROXY and ALL_PROXY at a
    /// closed loopback port (NO_PROXY keeps loopback reachable).
    #[arg(long)]
    no_egress: bool,

    /// Skip the protocol probes (malformed frames, unknown method, notifications, batches, and
    /// the lifecycle-order cases on a fresh process).
    #[arg(long)]
    skip_probes: bool,

    /// Skip calling the server's tools.
    #[arg(long)]
    skip_tool_calls: bool,

    /// Skip the version-negotiation probe (which starts the server once more).
    #[arg(long)]
    skip_version_probe: bool,

    /// The server features beyond tools the features phase exercises, comma-separated:
    /// resources, prompts, completions, logging; or all (the default) or none. Each runs only
    /// where the server advertises it; one it does not advertise gets one request, which must
    /// be answered -32601.
    #[arg(long, value_name = "LIST", value_parser = crate::run::features::FeatureSelection::parse, default_value = "all")]
    features: crate::run::features::FeatureSelection,

    /// Leave resources and resource templates out of the features phase.
    #[arg(long)]
    skip_resources: bool,

    /// Leave prompts out of the features phase.
    #[arg(long)]
    skip_prompts: bool,

    /// Skip the transport-chaos probes (concurrent and duplicate-id requests, pipelined and
    /// split writes, ping during a slow call, cancellation, disconnect, large requests).
    #[arg(long)]
    skip_chaos: bool,

    /// Start a fake upstream on 127.0.0.1 and pass its base URL to the server in this
    /// environment variable (repeatable). Each tool that calls it is then called once per
    /// fault profile (--faults).
    #[arg(long, value_name = "NAME")]
    upstream_env: Vec<String>,

    /// Start a fault-injecting forward proxy and point the server's HTTP_PROXY, HTTPS_PROXY and
    /// ALL_PROXY at it (for servers whose HTTP client honours them).
    #[arg(long)]
    proxy: bool,

    /// Point URL-typed tool arguments (format uri/url, or named like a URL) at the fake
    /// upstream, so that fetch-like tools meet the faults.
    #[arg(long)]
    url_args: bool,

    /// The upstream fault profiles to run, comma-separated (default: all). Names: ok,
    /// not-found, gone, rate-limited, server-error-500, bad-gateway, unavailable,
    /// gateway-timeout, delay, hang, reset, reset-mid-body, close-before-headers,
    /// truncated-body, malformed-json, wrong-content-type, slow-body, huge-body; parameters as
    /// in delay=500 or slow-body=16:100.
    #[arg(long, value_name = "LIST", value_parser = parse_faults)]
    faults: Option<FaultList>,

    /// A secret handed to the server in its environment (repeatable). Its value must never
    /// appear in anything the server returns; it is redacted from every report.
    #[arg(long = "secret-env", value_name = "NAME=VALUE", value_parser = parse_env)]
    secret_env: Vec<(String, String)>,

    /// The run's seed (canaries, schedules, generated values); the summary prints it with the
    /// exact command that reruns the run. Default: random.
    #[arg(long, value_name = "N", env = "MCP_CHAOS_SEED")]
    seed: Option<u64>,

    /// Random valid cases per tool in the generated phase (and half as many invalid ones),
    /// after the boundary cases.
    #[arg(long, value_name = "N", default_value_t = 64, env = "MCP_CHAOS_CASES")]
    cases: usize,

    /// Frames the wire phase sends: messages of the negotiated version and near-misses of
    /// them (invalid UTF-8, deep nesting, duplicate keys, odd ids, truncation, huge strings)
    /// drawn from the seed by the generator of the cargo-fuzz targets, each judged by the
    /// answer JSON-RPC owes it and followed by a liveness ping; a frame that kills, wedges or
    /// gets a wrong answer is shrunk to a minimal one (see `mcp-chaos explain wire-answer`).
    /// 0 turns the phase off.
    #[arg(
        long,
        value_name = "N",
        default_value_t = crate::run::wire_phase::DEFAULT_WIRE_CASES,
        env = "MCP_CHAOS_WIRE_CASES"
    )]
    wire_cases: usize,
    /// With a fake upstream: drawn cases per tool that reached it in the fault property
    /// phase, after the one-per-profile sweep. Each case calls the tool with arguments that
    /// reached the upstream under a fault and a scope drawn together (every request, the
    /// first only, the n-th, one request path failing while the others answer 200, a seeded
    /// probability); the first failing case of a tool is shrunk over both the arguments and
    /// the fault. 0 skips the phase. See `mcp-chaos explain fault-properties`.
    #[arg(long, value_name = "N", default_value_t = crate::run::fault_props::FAULT_CASES)]
    fault_cases: usize,

    /// Time budget of the generated phase per tool, in milliseconds: no case starts after it,
    /// and a call still reporting progress when it runs out is given up on, not judged (with
    /// --in-flight over 1 the tool's baseline call too). A silent call still gets
    /// --timeout-ms before it counts as unanswered. A tool's generated phase thus ends within
    /// this budget plus one timeout, shrinking aside.
    #[arg(
        long,
        value_name = "MS",
        default_value_t = crate::run::generated::DEFAULT_TOOL_BUDGET_MS,
        env = "MCP_CHAOS_TOOL_BUDGET_MS"
    )]
    tool_budget_ms: u64,

    /// Time budget of the whole generated phase, in milliseconds. Each tool gets at most its
    /// fair share of what is left (left / tools left, capped by --tool-budget-ms), so a
    /// server with thousands of tools has every tool covered by a few cases instead of the
    /// first ones by all of theirs; tools not reached when it is spent are listed as skipped
    /// (report: summary.generated[].skipped).
    #[arg(long, value_name = "MS", default_value_t = 120_000)]
    generated_budget_ms: u64,

    /// Time budget of the whole run, in milliseconds: it bounds the time to a verdict. No
    /// phase, probe or case starts once it is spent (the call in flight still gets its
    /// deadline); the generated phase uses at most three quarters of what is left when it
    /// starts. What it cut is printed under the summary (report: summary.budget_cut). No
    /// budget by default.
    #[arg(long, value_name = "MS", env = "MCP_CHAOS_BUDGET_MS")]
    budget_ms: Option<u64>,

    /// Most tools/call requests outstanding at once in the generated phase, across tools (a
    /// tool takes at most half of them while another has cases to send, a slow one only
    /// one), with one liveness ping per 32 cases (or 64 KiB of requests) or after anything
    /// odd; when the server dies or stops answering, the cases since the last good ping are
    /// replayed one at a time to name the one that did it, and a call left unanswered among
    /// others runs again alone before it is judged. Above 1, the tool calls of a stdio server
    /// run on a second server process, beside the other phases (a slow tool holds none of them
    /// up). 1: every phase on one server, one call at a time, each followed by a ping. Under a
    /// fake upstream (--upstream-env, --proxy, --url-args) the phase runs one call at a time.
    #[arg(
        long,
        value_name = "K",
        default_value_t = crate::run::scheduler::DEFAULT_IN_FLIGHT,
        env = "MCP_CHAOS_IN_FLIGHT"
    )]
    in_flight: usize,

    /// Skip the generated phase (schema-driven valid and invalid arguments).
    #[arg(long)]
    skip_generated: bool,

    /// Call only the tools matching these names or globs (comma-separated, repeatable; `*`
    /// any run of characters, `?` one), e.g. --tools 'get_*,search'. The others are never
    /// called, not even with invalid arguments.
    #[arg(long, value_name = "GLOB,...", value_parser = parse_globs)]
    tools: Vec<GlobList>,

    /// Never call the tools matching these names or globs (comma-separated, repeatable),
    /// e.g. --skip-tools 'delete_*,send_email'. Applied after --tools.
    #[arg(long, value_name = "GLOB,...", value_parser = parse_globs)]
    skip_tools: Vec<GlobList>,

    /// Call only tools annotated readOnlyHint: true (a tool without annotations is left out).
    /// Annotations are the server's own hints: still run against a test instance. Tools
    /// annotated destructiveHint: true are listed on stderr before any tool is called.
    #[arg(long)]
    read_only: bool,

    /// Write a replay file for each finding of the generated phase into this folder (re-run
    /// one with `mcp-chaos replay FILE`).
    #[arg(long, value_name = "DIR")]
    replays: Option<PathBuf>,

    /// How many times a server that died is restarted before the run stops.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 10,
        env = "MCP_CHAOS_MAX_RESTARTS"
    )]
    max_restarts: u32,

    #[command(flatten)]
    output: OutputArgs,
}

/// A comma-separated list of tool globs (`--tools`, `--skip-tools`).
#[derive(Debug, Clone)]
struct GlobList(Vec<String>);

fn parse_globs(s: &str) -> Result<GlobList, String> {
    run::select::parse_globs(s).map(GlobList)
}

/// A comma-separated list of fault profiles (`--faults`).
#[derive(Debug, Clone)]
struct FaultList(Vec<mcp_chaos_faults::Fault>);

fn parse_faults(s: &str) -> Result<FaultList, String> {
    mcp_chaos_faults::Fault::parse_list(s)
        .map(FaultList)
        .map_err(|e| e.to_string())
}

/// A seed from the clock, for runs without `--seed`.
pub fn random_seed() -> u64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    (now.as_nanos() as u64) ^ u64::from(std::process::id()).rotate_left(32)
}

fn parse_env(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok((k.to_owned(), v.to_owned())),
        _ => Err(format!("expected KEY=VALUE, got {s:?}")),
    }
}

/// Parses the command line and runs; returns the process exit code.
pub fn main() -> i32 {
    use clap::{CommandFactory, FromArgMatches};
    let parsed = Cli::command()
        .try_get_matches()
        .and_then(|m| Cli::from_arg_matches(&m).map(|cli| (cli, m)));
    let (cli, matches) = match parsed {
        Ok(parsed) => parsed,
        Err(e) => {
            let _ = e.print();
            return match e.kind() {
                clap::error::ErrorKind::DisplayHelp
                | clap::error::ErrorKind::DisplayVersion
                | clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => exit::SUCCESS,
                _ => exit::USAGE,
            };
        }
    };
    match cli.command {
        Command::Fixture {
            flaws,
            list_flaws,
            http,
        } => {
            if list_flaws {
                for f in Flaw::ALL.iter().copied() {
                    println!("{:<24} {:<34} {}", f.name(), f.invariant(), f.description());
                }
                return exit::SUCCESS;
            }
            match http {
                Some(addr) => fixture::serve_http(&flaws, &addr),
                None => fixture::serve_stdio(&flaws),
            }
        }
        Command::Explain { code } => explain(code.as_deref()),
        Command::Replay(args) => replay(&args),
        Command::Gen(args) => gen_values(&args),
        Command::Scenario(args) => scenario(&args),
        Command::Run(args) => {
            let server = match server_spec(&args) {
                Ok(c) => c,
                Err(e) => {
                    eprintln!("mcp-chaos: {e}");
                    return exit::USAGE;
                }
            };
            let output = &args.common.output;
            let mut config = run_config(server, &args.common);
            if let Some(run) = matches.subcommand_matches("run") {
                let mut secrets = config.server.redactions();
                secrets.extend(config.secrets.iter().map(|(_, v)| v.clone()));
                config.rerun = Some(rerun_command(run, ENV_KNOBS, config.seed, &secrets));
            }
            block_on_run(&config, output)
        }
        Command::Demo(args) => {
            let exe = match std::env::current_exe() {
                Ok(exe) => exe,
                Err(e) => {
                    eprintln!("mcp-chaos: cannot locate the mcp-chaos binary for the demo: {e}");
                    return exit::INTERNAL;
                }
            };
            let mut words = vec!["fixture".to_owned()];
            for flaw in DEMO_FLAWS {
                words.push("--flaw".into());
                words.push(flaw.name().into());
            }
            let mut server = StdioConfig::new(exe.to_string_lossy(), words);
            server
                .env
                .push(("FIXTURE_UPSTREAM_TIMEOUT_MS".into(), "1000".into()));
            if !args.output.quiet {
                eprintln!(
                    "mcp-chaos demo: running the bundled fixture server with the flaws {}",
                    DEMO_FLAWS
                        .iter()
                        .map(|f| f.name())
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
            let mut config = RunConfig::new(
                ServerSpec::Stdio(server),
                VersionChoice::Exactly(ProtocolVersion::LATEST_WITH_INITIALIZE),
            );
            config.timeout = Duration::from_millis(5_000);
            config.faults.upstream_env = vec!["UPSTREAM_URL".into()];
            config.faults.faults = [
                "not-found",
                "rate-limited",
                "unavailable",
                "hang",
                "malformed-json",
            ]
            .iter()
            .filter_map(|f| f.parse().ok())
            .collect();
            config.seed = args.seed.unwrap_or_else(random_seed);
            if let Some(demo) = matches.subcommand_matches("demo") {
                config.rerun = Some(rerun_command(demo, &[], config.seed, &[]));
            }
            block_on_run(&config, &args.output)
        }
    }
}

/// The numeric knobs read from the environment: (argument id, flag).
const ENV_KNOBS: &[(&str, &str)] = &[
    ("cases", "--cases"),
    ("wire_cases", "--wire-cases"),
    ("timeout_ms", "--timeout-ms"),
    ("tool_budget_ms", "--tool-budget-ms"),
    ("max_restarts", "--max-restarts"),
    ("max_frame_bytes", "--max-frame-bytes"),
];

/// The command line that reruns this `run` exactly: the arguments as given, without any
/// `--seed`, plus the `knobs` (argument id, flag; ids of `matches`' command) that came from
/// the environment as flags, plus `--seed SEED`;
/// quoted for a POSIX shell, with every string of `secrets` redacted.
fn rerun_command(
    matches: &clap::ArgMatches,
    knobs: &[(&str, &str)],
    seed: u64,
    secrets: &[String],
) -> String {
    let mut words: Vec<String> = Vec::new();
    let mut args = std::env::args();
    words.extend(args.next());
    let mut skip_next = false;
    for arg in args {
        if skip_next {
            skip_next = false;
        } else if arg == "--seed" {
            skip_next = true;
        } else if !arg.starts_with("--seed=") {
            words.push(arg);
        }
    }
    for (id, flag) in knobs {
        if matches.value_source(id) == Some(clap::parser::ValueSource::EnvVariable)
            && let Some(value) = matches.get_raw(id).and_then(|mut v| v.next())
        {
            words.push((*flag).to_owned());
            words.push(value.to_string_lossy().into_owned());
        }
    }
    words.push("--seed".into());
    words.push(seed.to_string());
    crate::oracle::leaks::redact(&shell_words::join(&words), secrets)
}

/// The flaws `mcp-chaos demo` plants.
pub const DEMO_FLAWS: &[Flaw] = &[
    Flaw::StdoutNoise,
    Flaw::WrongErrorCodes,
    Flaw::UnknownToolResult,
    Flaw::ReplyToNotification,
    Flaw::CrashOnMalformed,
    Flaw::EchoUpstreamBody,
    Flaw::EmptySuccessOn5xx,
    Flaw::GenericError,
];

fn server_spec(args: &RunArgs) -> Result<ServerSpec, Box<dyn std::error::Error>> {
    let common = &args.common;
    let options = crate::run::ProcessOptions {
        no_egress: common.no_egress,
        env: common.env.clone(),
        clean_env: common.clean_env,
        cwd: common.cwd.clone(),
        max_frame_bytes: common.max_frame_bytes,
    };
    let process = |line: &str| -> Result<StdioConfig, crate::transport::StartError> {
        Ok(options.apply(StdioConfig::from_command_line(line)?))
    };
    match (&args.stdio, &args.http) {
        (Some(line), _) => Ok(ServerSpec::Stdio(process(line)?)),
        (None, Some(url)) => {
            crate::transport::http::loopback_url(url, args.allow_remote).map_err(|reason| {
                crate::transport::StartError::BadUrl {
                    url: url.clone(),
                    reason,
                }
            })?;
            let mut c = crate::transport::HttpConfig::new(url.clone());
            c.start = args.start.as_deref().map(process).transpose()?;
            c.start_timeout = Duration::from_millis(args.start_timeout_ms);
            c.max_frame_bytes = common.max_frame_bytes;
            c.allow_remote = args.allow_remote;
            c.headers = args
                .headers
                .iter()
                .map(|h| h.resolve(&|name| std::env::var(name).ok()))
                .collect::<Result<_, String>>()?;
            c.header_templates = args
                .headers
                .iter()
                .map(|h| (h.name.clone(), h.template.clone()))
                .collect();
            Ok(ServerSpec::Http(c))
        }
        (None, None) => Err(Box::new(crate::transport::StartError::BadCommand {
            command: String::new(),
            reason: "give --stdio COMMAND or --http URL".into(),
        })),
    }
}

fn run_config(server: ServerSpec, args: &CommonArgs) -> RunConfig {
    let mut config = RunConfig::new(server, args.protocol_version);
    config.timeout = Duration::from_millis(args.timeout_ms.max(1));
    config.protocol_probes = !args.skip_probes;
    config.tool_calls = !args.skip_tool_calls;
    config.version_probe = !args.skip_version_probe;
    config.features = args.features;
    config.features.resources &= !args.skip_resources;
    config.features.prompts &= !args.skip_prompts;
    config.transport_chaos = !args.skip_chaos;
    config.generated = !args.skip_generated;
    config.cases = args.cases;
    config.wire_cases = args.wire_cases;
    config.fault_cases = args.fault_cases;
    config.tool_budget = Duration::from_millis(args.tool_budget_ms);
    config.generated_budget = Duration::from_millis(args.generated_budget_ms);
    config.budget = args.budget_ms.map(Duration::from_millis);
    config.in_flight = args.in_flight.max(1);
    config.replays.clone_from(&args.replays);
    config.max_restarts = args.max_restarts;
    config.faults.upstream_env.clone_from(&args.upstream_env);
    config.faults.proxy = args.proxy;
    config.faults.url_args = args.url_args;
    if let Some(FaultList(faults)) = &args.faults {
        config.faults.faults.clone_from(faults);
    }
    config.secrets.clone_from(&args.secret_env);
    config.selection = run::select::ToolSelection {
        tools: args.tools.iter().flat_map(|g| g.0.clone()).collect(),
        skip: args.skip_tools.iter().flat_map(|g| g.0.clone()).collect(),
        read_only: args.read_only,
    };
    config.seed = args.seed.unwrap_or_else(random_seed);
    config
}

fn block_on_run(config: &RunConfig, output: &OutputArgs) -> i32 {
    let report_json = output.report_json.as_deref();
    let quiet = output.quiet;
    let mut recorder = match output.record.as_deref().map(report::record::Recorder::new) {
        None => None,
        Some(Ok(r)) => Some(r),
        Some(Err(e)) => {
            eprintln!("mcp-chaos: cannot record into the --record folder: {e}");
            return exit::INTERNAL;
        }
    };
    let journal_path = report_json.map(report::journal::path_for);
    let mut journal = match journal_path
        .as_deref()
        .map(report::journal::Journal::create)
    {
        None => None,
        Some(Ok(j)) => Some(j),
        Some(Err(e)) => {
            eprintln!(
                "mcp-chaos: cannot create the findings journal {}: {e}",
                journal_path
                    .as_deref()
                    .unwrap_or(std::path::Path::new(""))
                    .display()
            );
            return exit::INTERNAL;
        }
    };
    let live = run::live::LiveRun::new(config);
    if let Err(e) = write_report_on_signal(&live, output) {
        eprintln!("mcp-chaos: cannot handle SIGINT and SIGTERM: {e}");
        return exit::INTERNAL;
    }
    let Some(runtime) = run_runtime(config) else {
        return exit::INTERNAL;
    };
    runtime.block_on(async {
        let mut progress = report::terminal::Progress::new(quiet);
        let mut on_event = |e: &run::Event<'_>| {
            if live.ended() {
                // The signal handler has the report: what follows is the run's own end.
                return;
            }
            live.observe(e);
            if let Some(j) = journal.as_mut() {
                j.event(e);
            }
            progress.event(e);
            if let Some(r) = recorder.as_mut() {
                r.event(e);
            }
        };
        let outcome = run::run(config, &mut on_event).await;
        progress.finish();
        if !live.claim_end() {
            // A signal came first: its handler writes the report and exits the process.
            std::future::pending::<()>().await;
        }
        if let Some(r) = recorder.take()
            && let Err(e) = r.finish()
        {
            eprintln!("mcp-chaos: recording failed: {e}");
            return exit::INTERNAL;
        }
        if let Some(j) = journal.take()
            && let Err(e) = j.finish()
        {
            eprintln!("mcp-chaos: writing the findings journal failed: {e}");
            return exit::INTERNAL;
        }
        let (report, code) = match outcome {
            Err(e) => {
                eprintln!("mcp-chaos: {e}");
                (live.not_started(&e), exit::SERVER_START)
            }
            Ok(report) if report.has_violations() => (report, exit::VIOLATIONS),
            Ok(report) => (report, exit::SUCCESS),
        };
        let code = finish_report(&report, report_json, quiet, code);
        // Whatever happened (exit 2 included), as --report-json.
        if code != exit::INTERNAL
            && let Err(e) = write_file_reports(&report, output)
        {
            eprintln!("mcp-chaos: {e}");
            return exit::INTERNAL;
        }
        code
    })
}

/// Writes `--junit`, `--sarif`, `--markdown` and `--html` (each when asked) with the writers of
/// `mcp-chaos scenario`, over the run's suite model ([`report::of_run`]). Errors name the file.
fn write_file_reports(report: &run::Report, output: &OutputArgs) -> Result<(), String> {
    type Writer =
        fn(&crate::scenario::outcome::SuiteReport, &std::path::Path) -> std::io::Result<()>;
    let writers: [(&Option<PathBuf>, Writer); 4] = [
        (&output.junit, report::junit::write_junit),
        (&output.sarif, report::sarif::write_sarif),
        (&output.markdown, report::markdown::write_markdown),
        (&output.html, report::html::write_html),
    ];
    if writers.iter().all(|(path, _)| path.is_none()) {
        return Ok(());
    }
    let suite = report::of_run::suite(report);
    for (path, write) in writers {
        if let Some(path) = path {
            write(&suite, path).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            if !output.quiet {
                eprintln!("mcp-chaos: report written to {}", path.display());
            }
        }
    }
    Ok(())
}

/// Prints the terminal summary of `report` and writes it to `report_json`, if given; returns
/// `code`, or [`exit::INTERNAL`] when the report cannot be written.
fn finish_report(
    report: &run::Report,
    report_json: Option<&std::path::Path>,
    quiet: bool,
    code: i32,
) -> i32 {
    print!(
        "{}",
        report::terminal::render(report, std::io::stdout().is_terminal())
    );
    let _ = std::io::Write::flush(&mut std::io::stdout());
    if let Some(path) = report_json {
        if let Err(e) = report::json::write(report, path) {
            eprintln!("mcp-chaos: cannot write {}: {e}", path.display());
            return exit::INTERNAL;
        }
        if !quiet {
            eprintln!("mcp-chaos: report written to {}", path.display());
        }
    }
    code
}

/// On SIGINT or SIGTERM, at any point of the run and whatever its task is doing: writes the
/// partial report (the findings so far, `"interrupted": true`) as JSON and as every file report
/// asked for (`--junit`, `--sarif`, `--markdown`, `--html`), kills every server's process
/// tree, and exits with 1 (a violation was found) or 2 (the run did not complete).
fn write_report_on_signal(live: &run::live::LiveRun, output: &OutputArgs) -> std::io::Result<()> {
    let live = live.clone();
    let output = output.clone();
    crate::interrupt::on_signal(move |signal| {
        if !live.claim_end() {
            // The run had ended: its own report is being written.
            return;
        }
        eprintln!("\nmcp-chaos: {signal}: writing the report of the run so far");
        let report = live.interrupted(signal);
        let mut code = finish_report(
            &report,
            output.report_json.as_deref(),
            output.quiet,
            live.interrupted_exit_code(),
        );
        if let Err(e) = write_file_reports(&report, &output) {
            eprintln!("mcp-chaos: {e}");
            code = exit::INTERNAL;
        }
        crate::transport::process::kill_every_group();
        eprintln!("mcp-chaos: interrupted by {signal}; the server's process tree was killed");
        std::process::exit(code);
    })
}

fn replay(args: &ReplayArgs) -> i32 {
    let file = match run::replay::read(&args.file) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("mcp-chaos: {e}");
            return exit::USAGE;
        }
    };
    let env = |name: &str| std::env::var(name).ok();
    let server = match args.stdio.as_deref().map(StdioConfig::from_command_line) {
        None => {
            let given = match args
                .headers
                .iter()
                .map(|h| h.resolve(&env))
                .collect::<Result<Vec<_>, String>>()
            {
                Ok(given) => given,
                Err(e) => {
                    eprintln!("mcp-chaos: {e}");
                    return exit::USAGE;
                }
            };
            match file.server.spec_with(&env, &given) {
                Ok(spec) => spec,
                Err(e) => {
                    eprintln!("mcp-chaos: {}: {e}", args.file.display());
                    return exit::USAGE;
                }
            }
        }
        Some(Ok(c)) => ServerSpec::Stdio(c),
        Some(Err(e)) => {
            eprintln!("mcp-chaos: {e}");
            return exit::USAGE;
        }
    };
    let secrets = server.redactions();
    let redact = |s: &str| crate::oracle::leaks::redact(s, &secrets);
    let Some(runtime) = runtime() else {
        return exit::INTERNAL;
    };
    println!(
        "replaying {} {} on {} (protocol {}): tools/call {} {}{}",
        file.expect.code,
        file.expect.invariant,
        file.server.spec().describe(),
        file.protocol_version,
        file.tool,
        file.arguments,
        file.upstream
            .as_ref()
            .map(|u| format!(" under the upstream fault {}", u.fault))
            .unwrap_or_default()
    );
    let timeout = Duration::from_millis(args.timeout_ms.max(1));
    match runtime.block_on(run::replay::replay(&file, Some(server), timeout)) {
        Err(e) => {
            eprintln!("mcp-chaos: {}", redact(&e));
            exit::SERVER_START
        }
        Ok(outcome) if outcome.reproduced => {
            for f in outcome
                .findings
                .iter()
                .filter(|f| f.code == file.expect.code)
            {
                println!(
                    "STILL FAILS: {} {}: {}",
                    f.code,
                    f.invariant,
                    redact(&f.message)
                );
            }
            exit::VIOLATIONS
        }
        Ok(outcome) => {
            println!("FIXED: {} no longer reproduces", file.expect.code);
            for f in &outcome.findings {
                println!(
                    "  (other finding: {} {}: {})",
                    f.code,
                    f.invariant,
                    redact(&f.message)
                );
            }
            exit::SUCCESS
        }
    }
}

fn gen_values(args: &GenArgs) -> i32 {
    use proptest::strategy::{Strategy, ValueTree};
    use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
    let text = if args.schema.as_os_str() == "-" {
        let mut s = String::new();
        if let Err(e) = std::io::Read::read_to_string(&mut std::io::stdin(), &mut s) {
            eprintln!("mcp-chaos: cannot read stdin: {e}");
            return exit::USAGE;
        }
        s
    } else {
        match std::fs::read_to_string(&args.schema) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("mcp-chaos: {}: {e}", args.schema.display());
                return exit::USAGE;
            }
        }
    };
    let schema: serde_json::Value = match serde_json::from_str(&text) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("mcp-chaos: {}: not JSON: {e}", args.schema.display());
            return exit::USAGE;
        }
    };
    let opts = match &args.url_base {
        Some(base) => crate::generate::GenOptions::with_url_base(base.clone()),
        None => crate::generate::GenOptions::default(),
    };
    let generator = match crate::generate::Generator::new(&schema, &opts) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("mcp-chaos: {}: {e}", args.schema.display());
            return exit::VIOLATIONS;
        }
    };
    for note in generator.notes() {
        eprintln!(
            "mcp-chaos: note: {} at {}: {}",
            note.keyword, note.pointer, note.message
        );
    }
    let mut out = std::io::stdout().lock();
    let mut print = |line: serde_json::Value| {
        use std::io::Write;
        writeln!(out, "{line}").is_ok()
    };
    if args.boundary
        && let Ok(cases) = generator.boundary()
    {
        for case in cases {
            let line = match case {
                crate::generate::Case::Valid { value, .. } if !args.invalid => value,
                crate::generate::Case::Invalid { value, violation } if args.invalid => {
                    serde_json::json!({"value": value, "violates": violation})
                }
                _ => continue,
            };
            if !print(line) {
                return exit::SUCCESS;
            }
        }
    }
    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(
            RngAlgorithm::ChaCha,
            &run::generated::tool_seed(args.seed, "gen"),
        ),
    );
    let result = if args.invalid {
        generator.invalid().map(|s| {
            for _ in 0..args.count {
                let Ok(tree) = s.new_tree(&mut runner) else {
                    break;
                };
                let (value, violation) = tree.current();
                if !print(serde_json::json!({"value": value, "violates": violation})) {
                    break;
                }
            }
        })
    } else {
        generator.valid().map(|s| {
            for _ in 0..args.count {
                let Ok(tree) = s.new_tree(&mut runner) else {
                    break;
                };
                if !print(tree.current()) {
                    break;
                }
            }
        })
    };
    match result {
        Ok(()) => exit::SUCCESS,
        Err(e) => {
            eprintln!("mcp-chaos: {e}");
            exit::VIOLATIONS
        }
    }
}

fn scenario(args: &ScenarioArgs) -> i32 {
    use crate::scenario::{baseline::Baseline, format, run as suite};
    if args.schema {
        match serde_json::to_string_pretty(&format::json_schema()) {
            Ok(text) => {
                println!("{text}");
                return exit::SUCCESS;
            }
            Err(e) => {
                eprintln!("mcp-chaos: {e}");
                return exit::INTERNAL;
            }
        }
    }
    let files = match format::discover(&args.paths) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("mcp-chaos: {e}");
            return exit::USAGE;
        }
    };
    let files = match args.shard {
        Some((i, n)) => format::shard(files, i, n),
        None => files,
    };
    let mut scenarios = Vec::new();
    let mut errors = Vec::new();
    for f in &files {
        match format::load(f) {
            Ok(s) => scenarios.push(s),
            Err(e) => errors.push(e.to_string()),
        }
    }
    let mut names: Vec<(&str, &PathBuf)> = Vec::new();
    for s in &scenarios {
        if let Some((_, other)) = names.iter().find(|(n, _)| *n == s.name) {
            errors.push(format!(
                "{}: scenario name {:?} is already used by {}; names key the baseline, so they must be unique",
                s.path.display(),
                s.name,
                other.display()
            ));
        }
        names.push((&s.name, &s.path));
    }
    if !errors.is_empty() {
        for e in &errors {
            eprintln!("mcp-chaos: {e}");
        }
        return exit::USAGE;
    }
    if args.list {
        for s in &scenarios {
            println!("{}\t{}", s.name, s.path.display());
        }
        return exit::SUCCESS;
    }
    if scenarios.is_empty() {
        eprintln!("mcp-chaos: no scenario files found (an empty shard is not an error)");
        return exit::SUCCESS;
    }
    let baseline = match args.baseline.as_deref().map(Baseline::load).transpose() {
        Ok(b) => b.unwrap_or_default(),
        Err(e) => {
            eprintln!("mcp-chaos: {e}");
            return exit::USAGE;
        }
    };
    let self_exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("mcp-chaos"));
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    let options = suite::SuiteOptions {
        jobs,
        shard: args.shard,
        baseline: baseline.clone(),
        baseline_path: args.baseline.clone(),
        replays: args.replays.clone(),
        self_exe,
    };
    let Some(runtime) = runtime() else {
        return exit::INTERNAL;
    };
    let progress = report::suite::SuiteProgress::new(scenarios.len(), args.quiet);
    let outputs = SuiteOutputs {
        report_json: args.report_json.clone(),
        junit: args.junit.clone(),
        sarif: args.sarif.clone(),
        markdown: args.markdown.clone(),
        html: args.html.clone(),
        sarif_options: report::sarif::SarifOptions {
            accepted: !args.sarif_new_only,
            ..report::sarif::SarifOptions::default()
        },
    };
    let finished = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let ended = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    if let Err(e) = write_suite_report_on_signal(
        &scenarios,
        &finished,
        &ended,
        outputs.clone(),
        options.shard,
        options.baseline_path.clone(),
    ) {
        eprintln!("mcp-chaos: cannot handle SIGINT and SIGTERM: {e}");
        return exit::INTERNAL;
    }
    let on_event = |e: &suite::SuiteEvent<'_>| {
        progress.event(e);
        if let suite::SuiteEvent::Finished { report } = e
            && let Ok(mut done) = finished.lock()
        {
            done.push((*report).clone());
        }
    };
    let report = runtime.block_on(suite::run_suite(&scenarios, &options, &on_event));
    if ended.swap(true, std::sync::atomic::Ordering::SeqCst) {
        // A signal came first: its handler writes the reports and exits the process.
        loop {
            std::thread::park();
        }
    }
    print!("{}", report::suite::render(&report));
    if let Err(code) = outputs.write(&report) {
        return code;
    }
    if args.update_baseline
        && let Some(path) = &args.baseline
    {
        let updated = baseline.updated(&report);
        if let Err(e) = updated.save(path) {
            eprintln!("mcp-chaos: cannot write {}: {e}", path.display());
            return exit::INTERNAL;
        }
        eprintln!(
            "mcp-chaos: baseline {} updated: {} entries",
            path.display(),
            updated.entries.len()
        );
        return if report.exit_code() == 2 {
            exit::SERVER_START
        } else {
            exit::SUCCESS
        };
    }
    report.exit_code()
}

/// The report files of `mcp-chaos scenario` (`--report-json`, `--junit`, `--sarif`,
/// `--markdown`, `--html`).
#[derive(Debug, Clone)]
struct SuiteOutputs {
    report_json: Option<PathBuf>,
    junit: Option<PathBuf>,
    sarif: Option<PathBuf>,
    markdown: Option<PathBuf>,
    html: Option<PathBuf>,
    sarif_options: report::sarif::SarifOptions,
}

impl SuiteOutputs {
    /// Writes every report asked for; `Err(exit::INTERNAL)` (said on stderr) when one cannot
    /// be written.
    fn write(&self, report: &crate::scenario::outcome::SuiteReport) -> Result<(), i32> {
        type Writer<'a> = &'a dyn Fn(&std::path::Path) -> std::io::Result<()>;
        let writers: [(&Option<PathBuf>, Writer<'_>); 5] = [
            (&self.report_json, &|path| {
                serde_json::to_vec_pretty(report)
                    .map_err(std::io::Error::other)
                    .and_then(|bytes| std::fs::write(path, bytes))
            }),
            (&self.junit, &|path| {
                report::junit::write_junit(report, path)
            }),
            (&self.sarif, &|path| {
                report::sarif::write_sarif_with(report, self.sarif_options, path)
            }),
            (&self.markdown, &|path| {
                report::markdown::write_markdown(report, path)
            }),
            (&self.html, &|path| report::html::write_html(report, path)),
        ];
        for (path, write) in writers {
            if let Some(path) = path {
                if let Some(parent) = path.parent()
                    && !parent.as_os_str().is_empty()
                    && let Err(e) = std::fs::create_dir_all(parent)
                {
                    eprintln!("mcp-chaos: cannot create {}: {e}", parent.display());
                    return Err(exit::INTERNAL);
                }
                if let Err(e) = write(path) {
                    eprintln!("mcp-chaos: cannot write {}: {e}", path.display());
                    return Err(exit::INTERNAL);
                }
            }
        }
        Ok(())
    }
}

/// On SIGINT or SIGTERM during `mcp-chaos scenario`: writes the suite's reports with the
/// scenarios finished so far (`"interrupted": true`, the others in `unfinished`; the baseline
/// is not updated), kills every server's process tree and exits with 1 (a scenario failed)
/// or 2 (the suite did not complete).
fn write_suite_report_on_signal(
    scenarios: &[crate::scenario::format::Scenario],
    finished: &std::sync::Arc<std::sync::Mutex<Vec<crate::scenario::outcome::ScenarioReport>>>,
    ended: &std::sync::Arc<std::sync::atomic::AtomicBool>,
    outputs: SuiteOutputs,
    shard: Option<(u32, u32)>,
    baseline: Option<PathBuf>,
) -> std::io::Result<()> {
    let names: Vec<String> = scenarios.iter().map(|s| s.name.clone()).collect();
    let finished = std::sync::Arc::clone(finished);
    let ended = std::sync::Arc::clone(ended);
    let started = std::time::Instant::now();
    crate::interrupt::on_signal(move |signal| {
        if ended.swap(true, std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        eprintln!("\nmcp-chaos: {signal}: writing the reports of the scenarios finished so far");
        let mut done = finished
            .lock()
            .map(|d| d.clone())
            .unwrap_or_else(|p| p.into_inner().clone());
        done.sort_by_key(|r| names.iter().position(|n| *n == r.name));
        let unfinished = names
            .iter()
            .filter(|n| !done.iter().any(|r| r.name == **n))
            .cloned()
            .collect();
        let report = crate::scenario::outcome::SuiteReport {
            mcp_chaos_version: env!("CARGO_PKG_VERSION").to_owned(),
            shard,
            baseline,
            scenarios: done,
            duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            interrupted: true,
            unfinished,
        };
        print!("{}", report::suite::render(&report));
        let _ = std::io::Write::flush(&mut std::io::stdout());
        let code = match outputs.write(&report) {
            Ok(()) => report.exit_code(),
            Err(code) => code,
        };
        crate::transport::process::kill_every_group();
        eprintln!("mcp-chaos: interrupted by {signal}; every server's process tree was killed");
        std::process::exit(code);
    })
}

/// Topics `mcp-chaos explain` describes besides the invariants: (name, text).
const EXPLAIN_TOPICS: &[(&str, &str)] = &[
    ("upstream", run::reach::EXPLAIN),
    ("fault-properties", run::fault_props::EXPLAIN),
];

fn explain(code: Option<&str>) -> i32 {
    if let Some((name, text)) = code.and_then(|c| EXPLAIN_TOPICS.iter().find(|(n, _)| *n == c)) {
        println!("{name}\n\n{}", textwrap(text, 90));
        return exit::SUCCESS;
    }
    match code {
        None => {
            for inv in finding::CATALOG {
                println!("{}  {:<34} {}", inv.code, inv.name, inv.summary);
            }
            let topics: Vec<&str> = EXPLAIN_TOPICS.iter().map(|(n, _)| *n).collect();
            println!(
                "\nRun `mcp-chaos explain CODE` for details, or `mcp-chaos explain TOPIC` for {}.",
                topics.join(", ")
            );
            exit::SUCCESS
        }
        Some(code) => match finding::lookup(code) {
            Some(inv) => {
                println!("{} {}\n", inv.code, inv.name);
                println!("{}\n", inv.summary);
                println!("{}\n", textwrap(inv.explain, 90));
                if let Some(rubric) = crate::oracle::rubric(inv.code) {
                    println!("{rubric}\n");
                }
                let spec = if inv.spec_page.starts_with("http") {
                    inv.spec_page.to_owned()
                } else {
                    ProtocolVersion::LATEST_WITH_INITIALIZE.spec(inv.spec_page)
                };
                println!("Spec: {spec}");
                exit::SUCCESS
            }
            None => {
                eprintln!("mcp-chaos: no invariant {code:?}; run `mcp-chaos explain` to list them");
                exit::USAGE
            }
        },
    }
}

fn textwrap(text: &str, width: usize) -> String {
    let mut out = String::new();
    let mut line = 0;
    for word in text.split_whitespace() {
        if line > 0 && line + 1 + word.len() > width {
            out.push('\n');
            line = 0;
        } else if line > 0 {
            out.push(' ');
            line += 1;
        }
        out.push_str(word);
        line += word.len();
    }
    out
}

/// The async runtime of a command: two worker threads (the campaign is I/O-bound; its
/// transport readers and writers are tasks). `None`, with the reason on stderr, when it
/// cannot start.
fn runtime() -> Option<tokio::runtime::Runtime> {
    match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => Some(rt),
        Err(e) => {
            eprintln!("mcp-chaos: cannot start the async runtime: {e}");
            None
        }
    }
}

/// The async runtime of a run without fault injectors: one thread, which the campaign shares
/// with its transport's reader and writer tasks, so that handing a frame between them costs
/// no thread wake-up (a fast tool's generated phase spends about a quarter less CPU per call,
/// and answers come in without the hop from a worker). A run with a fake upstream or proxy
/// keeps [`runtime`]: the injectors' servers then answer the server under test on threads of
/// their own, whatever the campaign is busy with. `None`, with the reason on stderr, when it
/// cannot start.
fn run_runtime(config: &RunConfig) -> Option<tokio::runtime::Runtime> {
    if config.faults.is_active() {
        return runtime();
    }
    match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => Some(rt),
        Err(e) => {
            eprintln!("mcp-chaos: cannot start the async runtime: {e}");
            None
        }
    }
}
