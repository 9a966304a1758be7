//! The command line's arguments (clap), one struct per command, and their `--help` texts.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use mcp_chaos::run::{self, VersionChoice};
use mcp_chaos::transport::{DEFAULT_MAX_FRAME_BYTES, DEFAULT_TIMEOUT_MS};
use mcp_chaos_fixture::Flaw;
use mcp_chaos_model::exit;

/// `mcp-chaos run --help`'s closing section: the exit codes ([`exit::RUN`]), then the rest.
pub(crate) fn after_help() -> String {
    exit::section(exit::RUN) + "\n" + AFTER_HELP
}

pub(crate) const AFTER_HELP: &str = "\
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
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
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
pub(crate) struct RunArgs {
    /// The server's command line, run as a child process speaking MCP over stdio, e.g.
    /// "node build/index.js" (split like a shell would, without running one). Install the
    /// server first: launchers that download at start (`npx -y`) are slow and, with
    /// --no-egress, cut off.
    #[arg(long, value_name = "COMMAND")]
    pub(crate) stdio: Option<String>,

    /// The server's Streamable HTTP endpoint, e.g. http://127.0.0.1:3001/mcp. Loopback only,
    /// unless --allow-remote.
    #[arg(long, value_name = "URL")]
    pub(crate) http: Option<String>,

    /// With --http: a command that starts the server; mcp-chaos waits for the URL's port to
    /// open and kills the command's process tree at the end. --env, --cwd and --clean-env
    /// apply to it.
    #[arg(long, value_name = "COMMAND", requires = "http")]
    pub(crate) start: Option<String>,

    /// With --start: how long to wait for the port to open, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 10_000, requires = "start")]
    pub(crate) start_timeout_ms: u64,

    /// With --http: allow a URL whose host is not loopback.
    #[arg(long, requires = "http")]
    pub(crate) allow_remote: bool,

    /// With --http: a header sent on every request (repeatable), e.g.
    /// --header "Authorization: Bearer ${MCP_TOKEN}" or --header "X-Api-Key: ${API_KEY}".
    /// ${NAME} is read from mcp-chaos's environment at start (an unset one is an error); put
    /// the value in a variable, not on the command line, which shells and CI logs keep. Values
    /// are redacted from every report, log and line printed (the name may show). A server
    /// that answers the handshake 401 or 403 is exit 2, with its WWW-Authenticate challenge.
    #[arg(long = "header", value_name = "NAME: VALUE", requires = "http")]
    pub(crate) headers: Vec<mcp_chaos::auth::HeaderArg>,

    #[command(flatten)]
    pub(crate) common: CommonArgs,
}

#[derive(Debug, Args)]
pub(crate) struct ReplayArgs {
    /// The replay file (written by `run --replays DIR`).
    pub(crate) file: PathBuf,
    /// Start the server with this command instead of the one saved in the file.
    #[arg(long, value_name = "COMMAND")]
    pub(crate) stdio: Option<String>,
    /// For an HTTP server: a header sent on every request (repeatable), as `run --header`
    /// (${NAME} read from the environment). The file keeps the run's headers by name, with
    /// their ${NAME} templates but never a value written literally: such a header must be
    /// given again here. One given here replaces the saved one of its name.
    #[arg(long = "header", value_name = "NAME: VALUE", conflicts_with = "stdio")]
    pub(crate) headers: Vec<mcp_chaos::auth::HeaderArg>,
    /// Deadline for each request, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = DEFAULT_TIMEOUT_MS)]
    pub(crate) timeout_ms: u64,
}

/// `mcp-chaos scenario --help`'s closing section: the format, examples, then the exit codes
/// ([`exit::SCENARIO`]) and what an interruption writes.
pub(crate) fn scenario_after_help() -> String {
    let (head, tail) = SCENARIO_HELP
        .split_once("On SIGINT")
        .unwrap_or((SCENARIO_HELP, ""));
    format!("{head}{}On SIGINT{tail}", exit::section(exit::SCENARIO))
}

pub(crate) const SCENARIO_HELP: &str = "\
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
pub(crate) struct ScenarioArgs {
    /// Scenario files, or folders searched recursively for *.toml (baseline.toml excepted).
    #[arg(value_name = "PATH", required_unless_present = "schema")]
    pub(crate) paths: Vec<PathBuf>,
    /// Scenarios run at once (default: the number of CPUs). Scenarios with
    /// `exclusive = true` run alone.
    #[arg(long, short = 'j', value_name = "N")]
    pub(crate) jobs: Option<usize>,
    /// Run only shard I of N (1-based): every Nth scenario of the sorted list, starting at
    /// the Ith. The N shards together run every scenario exactly once.
    #[arg(long, value_name = "I/N", value_parser = parse_shard)]
    pub(crate) shard: Option<(u32, u32)>,
    /// Findings accepted for now (TOML; see --update-baseline): reported, but they do not
    /// fail the run. Baseline entries no longer found are listed as fixed.
    #[arg(long, value_name = "FILE")]
    pub(crate) baseline: Option<PathBuf>,
    /// Rewrite the --baseline file from this run (entries of scenarios that did not run, as
    /// in other shards, are kept). New entries get a reason to fill in. Exit 0 unless a
    /// scenario could not run.
    #[arg(long, requires = "baseline")]
    pub(crate) update_baseline: bool,
    /// Write the suite report as JSON.
    #[arg(long, value_name = "PATH")]
    pub(crate) report_json: Option<PathBuf>,
    /// Write a JUnit XML report: a test suite per scenario, a test case per step.
    #[arg(long, value_name = "PATH")]
    pub(crate) junit: Option<PathBuf>,
    /// Write a SARIF 2.1.0 report (GitHub code scanning and other SARIF viewers): a result
    /// per finding, rule ids = invariant codes; accepted findings carry suppressions.
    #[arg(long, value_name = "PATH")]
    pub(crate) sarif: Option<PathBuf>,
    /// In the SARIF report, only the findings that fail the run (GitHub code scanning ignores
    /// suppressions, so accepted findings would show as open alerts).
    #[arg(long, requires = "sarif")]
    pub(crate) sarif_new_only: bool,
    /// Write a Markdown summary (e.g. to $GITHUB_STEP_SUMMARY).
    #[arg(long, value_name = "PATH")]
    pub(crate) markdown: Option<PathBuf>,
    /// Write one self-contained HTML page for the suite (fetches nothing): per scenario, the
    /// verdict, tool × fault and tool × invariant matrices, timing and every finding.
    #[arg(long, value_name = "PATH")]
    pub(crate) html: Option<PathBuf>,
    /// Write replay files of generated findings under DIR/SCENARIO/.
    #[arg(long, value_name = "DIR")]
    pub(crate) replays: Option<PathBuf>,
    /// List the scenarios that would run (after --shard) and exit.
    #[arg(long)]
    pub(crate) list: bool,
    /// Print the JSON Schema of the scenario format and exit.
    #[arg(long)]
    pub(crate) schema: bool,
    /// No progress on stderr.
    #[arg(long, short)]
    pub(crate) quiet: bool,
}

pub(crate) fn parse_shard(s: &str) -> Result<(u32, u32), String> {
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
pub(crate) struct GenArgs {
    /// A file holding a JSON Schema (e.g. a tool's inputSchema); `-` reads stdin.
    pub(crate) schema: PathBuf,
    /// How many values to print.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub(crate) count: usize,
    /// The seed (the same seed prints the same values).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub(crate) seed: u64,
    /// Print values that break exactly one constraint, as
    /// {"value": ..., "violates": {"keyword": ..., "pointer": ...}}.
    #[arg(long)]
    pub(crate) invalid: bool,
    /// Also print the deterministic boundary cases first (valid and invalid edges).
    #[arg(long)]
    pub(crate) boundary: bool,
    /// Where URL-typed values point (a loopback URL).
    #[arg(long, value_name = "URL")]
    pub(crate) url_base: Option<String>,
}

#[derive(Debug, Args)]
pub(crate) struct DemoArgs {
    /// The run's seed (default: random); the summary prints it and the command to rerun.
    #[arg(long, value_name = "N", env = "MCP_CHAOS_SEED")]
    pub(crate) seed: Option<u64>,
    #[command(flatten)]
    pub(crate) output: OutputArgs,
}

#[derive(Debug, Clone, Args)]
pub(crate) struct OutputArgs {
    /// Write the report as JSON to this file, whatever happens (exit 2, SIGINT, SIGTERM), and
    /// journal each finding as it is found beside it, in PATH-without-extension.findings.jsonl.
    #[arg(long, value_name = "PATH")]
    pub(crate) report_json: Option<PathBuf>,
    /// Write a JUnit XML report (CI test views): a test case per tool called and one,
    /// `server`, for the protocol findings; a violation fails its test case. The writer of
    /// `mcp-chaos scenario --junit`.
    #[arg(long, value_name = "PATH")]
    pub(crate) junit: Option<PathBuf>,
    /// Write a SARIF 2.1.0 report (GitHub code scanning): a result per finding, rule ids =
    /// invariant codes, located at the --stdio command's entry file when it names one.
    #[arg(long, value_name = "PATH")]
    pub(crate) sarif: Option<PathBuf>,
    /// Write a Markdown summary (e.g. --markdown "$GITHUB_STEP_SUMMARY").
    #[arg(long, value_name = "PATH")]
    pub(crate) markdown: Option<PathBuf>,
    /// Write one self-contained HTML page (opens from disk, fetches nothing): the verdict, a
    /// tool × fault and a tool × invariant matrix, timing, every finding with its request,
    /// response, fault, spec link and rerun command.
    #[arg(long, value_name = "PATH")]
    pub(crate) html: Option<PathBuf>,
    /// Print only the final summary (no progress).
    #[arg(long, short)]
    pub(crate) quiet: bool,
    /// Write every frame sent and received into this folder, one file each (sent/NNNNNN.json,
    /// received/NNNNNN.json, transcript.jsonl): a transcript, and a seed corpus for fuzzing.
    #[arg(long, value_name = "DIR")]
    pub(crate) record: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub(crate) struct CommonArgs {
    /// An environment variable for the server (repeatable), e.g. --env API_KEY=test.
    #[arg(long = "env", value_name = "KEY=VALUE", value_parser = parse_env)]
    pub(crate) env: Vec<(String, String)>,

    /// Start the server with an empty environment (keeping only PATH, HOME, LANG, LC_ALL,
    /// TMPDIR and TZ) plus the --env variables, instead of inheriting mcp-chaos's. Use it in CI
    /// so that no secret of the CI job can reach the server, and from there the report.
    #[arg(long)]
    pub(crate) clean_env: bool,

    /// The server's working directory.
    #[arg(long, value_name = "DIR")]
    pub(crate) cwd: Option<PathBuf>,

    /// The protocol version: `auto` (the newest both sides speak: 2026-07-28 if the server
    /// answers server/discover, else what it answers to initialize 2025-11-25), `all` (one
    /// campaign per version the server speaks, reported per version), or one of 2024-11-05,
    /// 2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28. Findings are judged by the version the
    /// server negotiated.
    #[arg(long, value_name = "VERSION", default_value = "auto")]
    pub(crate) protocol_version: VersionChoice,

    /// Deadline for each request, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = DEFAULT_TIMEOUT_MS, env = "MCP_CHAOS_TIMEOUT_MS")]
    pub(crate) timeout_ms: u64,

    /// Largest frame accepted from the server, in bytes: a stdout line, an HTTP body, one SSE
    /// event and one SSE response stream in total. Judged as bytes arrive; a larger one is cut
    /// and reported (oversize-frame).
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_FRAME_BYTES, env = "MCP_CHAOS_MAX_FRAME_BYTES")]
    pub(crate) max_frame_bytes: usize,

    /// Cut the server off from the network: point HTTP_PROXY, HTTPS_PROXY and ALL_PROXY at a
    /// closed loopback port (NO_PROXY keeps loopback reachable).
    #[arg(long)]
    pub(crate) no_egress: bool,

    /// Skip the protocol probes (malformed frames, unknown method, notifications, batches, and
    /// the lifecycle-order cases on a fresh process).
    #[arg(long)]
    pub(crate) skip_probes: bool,

    /// Skip calling the server's tools.
    #[arg(long)]
    pub(crate) skip_tool_calls: bool,

    /// Skip the version-negotiation probe (which starts the server once more).
    #[arg(long)]
    pub(crate) skip_version_probe: bool,

    /// The server features beyond tools the features phase exercises, comma-separated:
    /// resources, prompts, completions, logging; or all (the default) or none. Each runs only
    /// where the server advertises it; one it does not advertise gets one request, which must
    /// be answered -32601.
    #[arg(long, value_name = "LIST", value_parser = mcp_chaos::run::features::FeatureSelection::parse, default_value = "all")]
    pub(crate) features: mcp_chaos::run::features::FeatureSelection,

    /// Leave resources and resource templates out of the features phase.
    #[arg(long)]
    pub(crate) skip_resources: bool,

    /// Leave prompts out of the features phase.
    #[arg(long)]
    pub(crate) skip_prompts: bool,

    /// Skip the transport-chaos probes (concurrent and duplicate-id requests, pipelined and
    /// split writes, ping during a slow call, cancellation, disconnect, large requests).
    #[arg(long)]
    pub(crate) skip_chaos: bool,

    /// Start a fake upstream on 127.0.0.1 and pass its base URL to the server in this
    /// environment variable (repeatable). Each tool that calls it is then called once per
    /// fault profile (--faults).
    #[arg(long, value_name = "NAME")]
    pub(crate) upstream_env: Vec<String>,

    /// Start a fault-injecting forward proxy and point the server's HTTP_PROXY, HTTPS_PROXY and
    /// ALL_PROXY at it (for servers whose HTTP client honours them).
    #[arg(long)]
    pub(crate) proxy: bool,

    /// Point URL-typed tool arguments (format uri/url, or named like a URL) at the fake
    /// upstream, so that fetch-like tools meet the faults.
    #[arg(long)]
    pub(crate) url_args: bool,

    /// The upstream fault profiles to run, comma-separated (default: all). Names: ok,
    /// not-found, gone, rate-limited, server-error-500, bad-gateway, unavailable,
    /// gateway-timeout, delay, hang, reset, reset-mid-body, close-before-headers,
    /// truncated-body, malformed-json, wrong-content-type, slow-body, huge-body; parameters as
    /// in delay=500 or slow-body=16:100.
    #[arg(long, value_name = "LIST", value_parser = parse_faults)]
    pub(crate) faults: Option<FaultList>,

    /// A secret handed to the server in its environment (repeatable). Its value must never
    /// appear in anything the server returns; it is redacted from every report.
    #[arg(long = "secret-env", value_name = "NAME=VALUE", value_parser = parse_env)]
    pub(crate) secret_env: Vec<(String, String)>,

    /// The run's seed (canaries, schedules, generated values); the summary prints it with the
    /// exact command that reruns the run. Default: random.
    #[arg(long, value_name = "N", env = "MCP_CHAOS_SEED")]
    pub(crate) seed: Option<u64>,

    /// Random valid cases per tool in the generated phase (and half as many invalid ones),
    /// after the boundary cases.
    #[arg(long, value_name = "N", default_value_t = 64, env = "MCP_CHAOS_CASES")]
    pub(crate) cases: usize,

    /// Frames the wire phase sends: messages of the negotiated version and near-misses of
    /// them (invalid UTF-8, deep nesting, duplicate keys, odd ids, truncation, huge strings)
    /// drawn from the seed by the generator of the cargo-fuzz targets, each judged by the
    /// answer JSON-RPC owes it and followed by a liveness ping; a frame that kills, wedges or
    /// gets a wrong answer is shrunk to a minimal one (see `mcp-chaos explain wire-answer`).
    /// 0 turns the phase off.
    #[arg(
        long,
        value_name = "N",
        default_value_t = mcp_chaos::run::wire_phase::DEFAULT_WIRE_CASES,
        env = "MCP_CHAOS_WIRE_CASES"
    )]
    pub(crate) wire_cases: usize,
    /// With a fake upstream: drawn cases per tool that reached it in the fault property
    /// phase, after the one-per-profile sweep. Each case calls the tool with arguments that
    /// reached the upstream under a fault and a scope drawn together (every request, the
    /// first only, the n-th, one request path failing while the others answer 200, a seeded
    /// probability); the first failing case of a tool is shrunk over both the arguments and
    /// the fault. 0 skips the phase. See `mcp-chaos explain fault-properties`.
    #[arg(long, value_name = "N", default_value_t = mcp_chaos::run::fault_props::FAULT_CASES)]
    pub(crate) fault_cases: usize,

    /// Time budget of the generated phase per tool, in milliseconds: no case starts after it,
    /// and a call still reporting progress when it runs out is given up on, not judged (with
    /// --in-flight over 1 the tool's baseline call too). A silent call still gets
    /// --timeout-ms before it counts as unanswered. A tool's generated phase thus ends within
    /// this budget plus one timeout, shrinking aside.
    #[arg(
        long,
        value_name = "MS",
        default_value_t = mcp_chaos::run::generated::DEFAULT_TOOL_BUDGET_MS,
        env = "MCP_CHAOS_TOOL_BUDGET_MS"
    )]
    pub(crate) tool_budget_ms: u64,

    /// Time budget of the whole generated phase, in milliseconds. Each tool gets at most its
    /// fair share of what is left (left / tools left, capped by --tool-budget-ms), so a
    /// server with thousands of tools has every tool covered by a few cases instead of the
    /// first ones by all of theirs; tools not reached when it is spent are listed as skipped
    /// (report: summary.generated[].skipped).
    #[arg(long, value_name = "MS", default_value_t = 120_000)]
    pub(crate) generated_budget_ms: u64,

    /// Time budget of the whole run, in milliseconds: it bounds the time to a verdict. No
    /// phase, probe or case starts once it is spent (the call in flight still gets its
    /// deadline); the generated phase uses at most three quarters of what is left when it
    /// starts. What it cut is printed under the summary (report: summary.budget_cut). No
    /// budget by default.
    #[arg(long, value_name = "MS", env = "MCP_CHAOS_BUDGET_MS")]
    pub(crate) budget_ms: Option<u64>,

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
        default_value_t = mcp_chaos::run::scheduler::DEFAULT_IN_FLIGHT,
        env = "MCP_CHAOS_IN_FLIGHT"
    )]
    pub(crate) in_flight: usize,

    /// Skip the generated phase (schema-driven valid and invalid arguments).
    #[arg(long)]
    pub(crate) skip_generated: bool,

    /// Call only the tools matching these names or globs (comma-separated, repeatable; `*`
    /// any run of characters, `?` one), e.g. --tools 'get_*,search'. The others are never
    /// called, not even with invalid arguments.
    #[arg(long, value_name = "GLOB,...", value_parser = parse_globs)]
    pub(crate) tools: Vec<GlobList>,

    /// Never call the tools matching these names or globs (comma-separated, repeatable),
    /// e.g. --skip-tools 'delete_*,send_email'. Applied after --tools.
    #[arg(long, value_name = "GLOB,...", value_parser = parse_globs)]
    pub(crate) skip_tools: Vec<GlobList>,

    /// Call only tools annotated readOnlyHint: true (a tool without annotations is left out).
    /// Annotations are the server's own hints: still run against a test instance. Tools
    /// annotated destructiveHint: true are listed on stderr before any tool is called.
    #[arg(long)]
    pub(crate) read_only: bool,

    /// Write a replay file for each finding of the generated phase into this folder (re-run
    /// one with `mcp-chaos replay FILE`).
    #[arg(long, value_name = "DIR")]
    pub(crate) replays: Option<PathBuf>,

    /// How many times a server that died is restarted before the run stops.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 10,
        env = "MCP_CHAOS_MAX_RESTARTS"
    )]
    pub(crate) max_restarts: u32,

    #[command(flatten)]
    pub(crate) output: OutputArgs,
}

/// A comma-separated list of tool globs (`--tools`, `--skip-tools`).
#[derive(Debug, Clone)]
pub(crate) struct GlobList(pub(crate) Vec<String>);

pub(crate) fn parse_globs(s: &str) -> Result<GlobList, String> {
    run::select::parse_globs(s).map(GlobList)
}

/// A comma-separated list of fault profiles (`--faults`).
#[derive(Debug, Clone)]
pub(crate) struct FaultList(pub(crate) Vec<mcp_chaos_faults::Fault>);

pub(crate) fn parse_faults(s: &str) -> Result<FaultList, String> {
    mcp_chaos_faults::Fault::parse_list(s)
        .map(FaultList)
        .map_err(|e| e.to_string())
}

/// A seed from the clock, for runs without `--seed`.
pub(crate) fn random_seed() -> u64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    (now.as_nanos() as u64) ^ u64::from(std::process::id()).rotate_left(32)
}

pub(crate) fn parse_env(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok((k.to_owned(), v.to_owned())),
        _ => Err(format!("expected KEY=VALUE, got {s:?}")),
    }
}
