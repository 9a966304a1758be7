//! The campaign loop: start the server, initialize, list tools, run the protocol probes and the
//! tool calls, check liveness after every probe (restarting a server that died), and emit a
//! typed [`Event`] for everything that happens. Reporters consume the events; [`run`] returns
//! the final [`Report`].

pub mod args;
mod budget;
mod chaos;
pub mod driver;
pub mod fault_props;
pub mod faults;
pub mod features;
pub mod generated;
mod ladder;
mod lifecycle;
pub mod live;
pub mod reach;
mod recover;
pub mod replay;
mod retire;
pub mod scheduler;
pub mod select;
mod shared;
pub mod wire_phase;

use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Value, json};

use crate::finding::{Finding, Severity};
use crate::oracle::{self, Context, LeakKind, ToolTable};
use crate::protocol::ProtocolVersion;
use crate::session::{ClientConfig, Exchange, Expect, InitError, Negotiated, Probe, Session};
use crate::transport::{
    HttpConfig, HttpTransport, StartError, StdioConfig, StdioTransport, Transport,
};
use crate::wire::{self, RequestId};

/// The version string used to probe version negotiation; no MCP release has it.
pub const BOGUS_VERSION: &str = "1999-01-01";
/// The tool name used for the unknown-tool probe.
pub const UNKNOWN_TOOL: &str = "mcp_chaos_no_such_tool";
/// The method used for the unknown-method probe.
pub const UNKNOWN_METHOD: &str = "mcp-chaos/no-such-method";

/// The proxy variables `--no-egress` (and a scenario's `no_egress = true`) add to the server's
/// environment, as `(name, value)` pairs: every proxy variable, upper and lower case, points at
/// the closed discard port on loopback (`http://127.0.0.1:9`); `NO_PROXY` lets loopback through.
pub fn no_egress_env() -> Vec<(String, String)> {
    let closed = "http://127.0.0.1:9".to_owned();
    let mut env = Vec::new();
    for key in ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"] {
        env.push((key.to_owned(), closed.clone()));
        env.push((key.to_ascii_lowercase(), closed.clone()));
    }
    let loopback = "localhost,127.0.0.1,::1".to_owned();
    env.push(("NO_PROXY".into(), loopback.clone()));
    env.push(("no_proxy".into(), loopback));
    env
}

/// What the command line (`--env`, `--no-egress`, `--clean-env`, `--cwd`,
/// `--max-frame-bytes`) and a scenario's `[server]` table both say about a process they
/// start (the server, or an HTTP server's start command): applied in one place, in one order.
#[derive(Debug, Clone, Default)]
pub struct ProcessOptions {
    /// Add the proxy variables of [`no_egress_env`] first (so that `env` may override one).
    pub no_egress: bool,
    /// Variables added to the environment, in order, as `(name, value)`.
    pub env: Vec<(String, String)>,
    /// Start from an empty environment, keeping only the variables the transport keeps
    /// ([`crate::transport::stdio::KEPT_ENV`]), plus `env`.
    pub clean_env: bool,
    /// The working directory (default: mcp-chaos's own).
    pub cwd: Option<std::path::PathBuf>,
    /// Largest frame accepted from the server, in bytes.
    pub max_frame_bytes: usize,
}

impl ProcessOptions {
    /// `process` with these options applied (its program and arguments untouched).
    pub fn apply(&self, mut process: StdioConfig) -> StdioConfig {
        if self.no_egress {
            process.env.extend(no_egress_env());
        }
        process.env.extend(self.env.iter().cloned());
        process.clean_env = self.clean_env;
        process.cwd.clone_from(&self.cwd);
        process.max_frame_bytes = self.max_frame_bytes;
        process
    }
}

/// How to reach the server under test.
#[derive(Debug, Clone)]
pub enum ServerSpec {
    /// A child process over stdio.
    Stdio(StdioConfig),
    /// A Streamable HTTP endpoint, optionally started by a command.
    Http(HttpConfig),
}

impl ServerSpec {
    /// `(command, url)` for the report.
    pub fn identity(&self) -> (Option<String>, Option<String>) {
        match self {
            ServerSpec::Stdio(c) => (Some(c.display()), None),
            ServerSpec::Http(c) => (
                c.start.as_ref().map(StdioConfig::display),
                Some(c.url.clone()),
            ),
        }
    }

    /// The command line (or URL), for reports.
    pub fn describe(&self) -> String {
        match self {
            ServerSpec::Stdio(c) => c.display(),
            ServerSpec::Http(c) => match &c.start {
                Some(start) => format!("{} (started with {})", c.url, start.display()),
                None => c.url.clone(),
            },
        }
    }

    /// What every report redacts for this server: the values of its extra HTTP headers
    /// (`--header`, see [`crate::auth::redactions`]).
    pub fn redactions(&self) -> Vec<String> {
        match self {
            ServerSpec::Http(c) => crate::auth::redactions(&c.headers),
            ServerSpec::Stdio(_) => Vec::new(),
        }
    }

    /// The environment of the process mcp-chaos starts, if it starts one.
    pub fn env_mut(&mut self) -> Option<&mut Vec<(String, String)>> {
        match self {
            ServerSpec::Stdio(c) => Some(&mut c.env),
            ServerSpec::Http(c) => c.start.as_mut().map(|s| &mut s.env),
        }
    }

    /// Starts a fresh server (process, or connection) and returns its transport.
    ///
    /// # Errors
    /// [`StartError`] when the command line or URL is unusable, the program cannot be spawned,
    /// or a server started for HTTP exits or does not open its port in time.
    pub async fn start(&self) -> Result<Transport, StartError> {
        match self {
            ServerSpec::Stdio(c) => Ok(Transport::Stdio(StdioTransport::spawn(c.clone())?)),
            ServerSpec::Http(c) => Ok(Transport::Http(HttpTransport::connect(c.clone()).await?)),
        }
    }
}

/// Which protocol version(s) a run uses (`--protocol-version`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VersionChoice {
    /// The newest version both sides speak: `server/discover` for 2026-07-28 first, then
    /// `initialize` with 2025-11-25 (the server answers the version it speaks).
    Auto,
    /// One campaign per version the server supports, reported per version.
    All,
    /// Exactly this version (`--protocol-version 2025-11-25`, for example).
    Exactly(ProtocolVersion),
}

impl std::str::FromStr for VersionChoice {
    type Err = crate::protocol::UnknownVersion;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "auto" => Ok(VersionChoice::Auto),
            "all" => Ok(VersionChoice::All),
            other => other.parse().map(VersionChoice::Exactly),
        }
    }
}

/// What a run does: the server under test, the protocol version(s), which phases run, and
/// their deadlines, budgets and limits.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// How to reach the server under test: a stdio command or a Streamable HTTP endpoint.
    pub server: ServerSpec,
    /// The protocol version(s) to use.
    pub version: VersionChoice,
    /// Deadline per request: how long each request waits for its response.
    pub timeout: Duration,
    /// Run the protocol probes (malformed frames, unknown method, notifications, ...) and the
    /// lifecycle-order cases on a fresh process.
    pub protocol_probes: bool,
    /// Call the selected tools (`tools/call`): the baseline calls, and the generated and fault
    /// phases.
    pub tool_calls: bool,
    /// Probe version negotiation with a bogus version (needs one extra server start).
    pub version_probe: bool,
    /// Run the transport-chaos probes (concurrency, cancellation, disconnects, large frames).
    pub transport_chaos: bool,
    /// Run the generated phase (boundary, valid and invalid arguments for every tool).
    pub generated: bool,
    /// Random valid cases per tool in the generated phase (half as many invalid ones).
    pub cases: usize,
    /// Time budget of the generated phase per tool.
    pub tool_budget: Duration,
    /// Time budget of the whole generated phase: each tool gets at most its fair share of
    /// what is left (`left / tools left`, capped by `tool_budget`), and the tools not reached
    /// when it is spent are listed as skipped in [`Summary::generated`].
    pub generated_budget: Duration,
    /// Where replay files of generated findings are written, if anywhere.
    pub replays: Option<std::path::PathBuf>,
    /// How many times a server that died is restarted before the run gives up.
    pub max_restarts: u32,
    /// The URL given to URL-typed tool arguments (when no fake upstream takes them).
    pub url: String,
    /// Upstream fault injection; inactive by default.
    pub faults: faults::FaultPlan,
    /// Drawn (arguments, fault, scope) cases per tool that reached the upstream, in the fault
    /// property phase after the one-per-profile sweep (0: no property phase); see
    /// [`fault_props`].
    pub fault_cases: usize,
    /// Secrets handed to the server in its environment (`NAME`, `VALUE`): the value must never
    /// appear in anything the server returns.
    pub secrets: Vec<(String, String)>,
    /// The run's seed (canaries, probabilistic schedules, generated values).
    pub seed: u64,
    /// Which listed tools are called (`--tools`, `--skip-tools`, `--read-only`).
    pub selection: select::ToolSelection,
    /// Which server features beyond tools the features phase exercises (`--features`,
    /// `--skip-resources`, `--skip-prompts`); [`features::FeatureSelection::NONE`] skips it.
    pub features: features::FeatureSelection,
    /// The command line that reruns this run exactly (its seed included, secrets redacted),
    /// for the summary and the reports; `None` when the run has none (a library run).
    pub rerun: Option<String>,
    /// Frames the wire phase sends (`--wire-cases`; 0: no wire phase), see [`wire_phase`].
    pub wire_cases: usize,
    /// The run's budget (`--budget-ms`), if any: it bounds the time to a verdict (see
    /// [`budget`]); what it cut is listed in [`Summary::budget_cut`]. With
    /// [`VersionChoice::All`] it covers every version's campaign together.
    pub budget: Option<Duration>,
    /// Most `tools/call` requests outstanding at once in the generated phase (`--in-flight`,
    /// default [`scheduler::DEFAULT_IN_FLIGHT`]); 1 runs one call at a time, each followed by a
    /// liveness ping. Under a fake upstream the phase always runs one call at a time.
    pub in_flight: usize,
}

impl RunConfig {
    /// A config with every probe on, for `server` under `version`, with a 10 s timeout.
    pub fn new(server: ServerSpec, version: VersionChoice) -> RunConfig {
        RunConfig {
            server,
            version,
            timeout: Duration::from_millis(crate::transport::DEFAULT_TIMEOUT_MS),
            protocol_probes: true,
            tool_calls: true,
            version_probe: true,
            transport_chaos: true,
            generated: true,
            cases: 64,
            tool_budget: Duration::from_millis(generated::DEFAULT_TOOL_BUDGET_MS),
            generated_budget: Duration::from_secs(120),
            replays: None,
            max_restarts: 10,
            url: args::CLOSED_LOOPBACK_URL.to_owned(),
            faults: faults::FaultPlan {
                upstream_env: Vec::new(),
                proxy: false,
                url_args: false,
                faults: mcp_chaos_faults::Fault::catalog(),
            },
            fault_cases: fault_props::FAULT_CASES,
            secrets: Vec::new(),
            seed: 0,
            selection: select::ToolSelection::default(),
            features: features::FeatureSelection::ALL,
            rerun: None,
            wire_cases: wire_phase::DEFAULT_WIRE_CASES,
            budget: None,
            in_flight: scheduler::DEFAULT_IN_FLIGHT,
        }
    }
}

/// Something that happened during a run, in order.
#[derive(Debug)]
pub enum Event<'a> {
    /// A server process is being started.
    Starting {
        /// Its command line or URL.
        server: &'a str,
    },
    /// The handshake succeeded.
    Initialized {
        /// The requested and answered protocol versions, and the server's `serverInfo` and
        /// `capabilities`.
        negotiated: &'a Negotiated,
    },
    /// The tools were listed and selected (before any is called).
    Tools {
        /// The tools left out by the selection, and why.
        skipped: &'a [select::Skipped],
        /// Globs of `--tools`/`--skip-tools` that match no listed tool.
        unmatched: &'a [String],
        /// The selected tools annotated `destructiveHint: true`: they will be called.
        destructive: &'a [String],
    },
    /// The tools were listed; `steps` more probes are planned.
    Planned {
        /// Number of tools the server listed.
        tools: usize,
        /// Number of probes planned.
        steps: usize,
    },
    /// A probe starts.
    Step {
        /// The probe's short human label, e.g. `unknown method` or `tools/call echo`.
        label: &'a str,
    },
    /// An exchange finished.
    Exchange {
        /// The request or notification sent, the frames that answered it and its timing.
        exchange: &'a Exchange,
    },
    /// A finding (each distinct one once), redacted; its `redact` holds every value to
    /// redact found so far in the run (secrets, credentials a finding uncovered).
    Finding {
        /// The finding, its message and evidence already redacted.
        finding: &'a Finding,
    },
    /// The fault phase starts for a tool (`faults` profiles), or is skipped because none of
    /// the tool's calls so far (baseline and generated) made an upstream request.
    FaultPhase {
        /// The tool's name.
        tool: &'a str,
        /// How many fault profiles will run (0 when skipped).
        faults: usize,
        /// How many calls of the tool were made before, in every phase (those that tried to
        /// reach the upstream, when skipped).
        tried: u64,
    },
    /// The fault property phase starts for a tool that reached the upstream: up to `cases`
    /// drawn (arguments, fault, scope) cases.
    FaultProperties {
        /// The tool's name.
        tool: &'a str,
        /// How many cases are drawn at most.
        cases: usize,
    },
    /// The generated phase of one tool ended (all its cases ran, or its time budget ran out,
    /// or a call missed its deadline); the same record goes into [`Summary::generated`].
    ToolGenerated {
        /// The tool's calls, wall time (ms), and why it stopped early or was skipped.
        phase: &'a ToolGenerated,
    },
    /// The generated phase's budget (`--generated-budget-ms`) was spent: `covered` tools were
    /// generated for, the `skipped` others are listed in [`Summary::generated`] as skipped.
    GeneratedBudgetSpent {
        /// Tools whose generated phase ran.
        covered: usize,
        /// Tools not reached (no generated case ran for them).
        skipped: usize,
        /// The budget, in ms.
        budget_ms: u64,
    },
    /// `--protocol-version all` skipped a version the server does not speak.
    VersionSkipped {
        /// The protocol version skipped, e.g. `2025-03-26`.
        version: ProtocolVersion,
    },
    /// The server was restarted: after dying or hanging, or onto a fresh process though it
    /// did not fail (`fresh`).
    Restarted {
        /// What led to it, for the terminal line (for example "no server running" or "server
        /// failed after a request of 1048576 bytes").
        reason: &'a str,
        /// A restart onto a fresh server that did not fail: a call given up on may still be
        /// running, a wire frame may have changed the session's state, or a phase starts on
        /// a fresh server. Not counted against `--max-restarts`.
        fresh: bool,
    },
    /// A second server process is started for the tool calls, beside the other phases, or
    /// could not be (see `--in-flight`).
    SecondServer {
        /// What happens, for the terminal line.
        message: &'a str,
    },
    /// A start of the server failed (it did not answer the handshake usably); its output
    /// tail, for the report of a run that could not start.
    StartFailed {
        /// The end of the server's stderr (and stdout when not read as protocol).
        stderr_tail: &'a str,
    },
}

/// Why a run could not be carried out (exit code 2).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The server could not be started.
    #[error(transparent)]
    Start(#[from] StartError),
    /// The server did not complete the handshake.
    #[error("{0}")]
    Init(#[from] InitError),
    /// The fault injectors could not start.
    #[error(transparent)]
    Injectors(#[from] faults::InjectorError),
    /// The server does not speak the version asked for (only reported internally by
    /// `--protocol-version all`, which then skips that version).
    #[error("the server does not speak the requested protocol version")]
    Unsupported,
}

/// The server as the report describes it.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ServerReport {
    /// The command line (stdio servers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// The URL (HTTP servers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The server's `serverInfo`.
    pub server_info: Value,
    /// The protocol version the server answered.
    pub protocol_version: String,
}

/// Run totals (`summary` in `--report-json`): counts of exchanges, calls, tools and findings,
/// wall time in ms, restarts, and per-phase records.
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct Summary {
    /// Exchanges made (every frame sent and its wait, liveness pings included).
    pub exchanges: u64,
    /// `tools/call` requests made.
    pub tool_calls: u64,
    /// Tools the server listed.
    pub tools: u64,
    /// Distinct findings of severity `violation`.
    pub violations: u64,
    /// Distinct findings of severity `warning` (the findings that are not violations).
    pub warnings: u64,
    /// Wall time of the run, in ms.
    pub duration_ms: u64,
    /// Times the server was restarted, for any reason.
    pub restarts: u32,
    /// Of [`Summary::restarts`], those onto a fresh server though it did not fail (a call
    /// given up on, a wire frame that may have changed the session's state, a phase that
    /// starts fresh); the others followed a failure (the server died, hung or could not be
    /// written to).
    pub fresh_restarts: u32,
    /// The listed tools the selection left out (`--tools`, `--skip-tools`, `--read-only`),
    /// each with why; left out of the JSON when none was.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped_tools: Vec<select::Skipped>,
    /// The generated phase, per tool in the order run (left out of the JSON when the phase
    /// did not run).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub generated: Vec<ToolGenerated>,
    /// Unsolicited messages counted but not kept, and server-to-client requests left
    /// unanswered (rate limit, or write queue full), over the run (a flood: see [`crate::session::flood`]); left out of the
    /// JSON when nothing was dropped.
    #[serde(
        default,
        skip_serializing_if = "crate::session::flood::Dropped::is_empty"
    )]
    pub dropped: crate::session::flood::Dropped,
    /// The wire phase's totals (left out of the JSON when it did not run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wire: Option<wire_phase::WireSummary>,
    /// The features phase's requests per feature and what the server listed; left out of the
    /// JSON when the phase sent nothing.
    #[serde(default, skip_serializing_if = "features::FeatureCounts::is_empty")]
    pub features: features::FeatureCounts,
    /// With a fake upstream: per tool, whether any of its calls (every phase) reached the
    /// upstream, how many calls tried, and the smallest arguments that reached it (what the
    /// fault phases use); left out of the JSON without a fake upstream.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub upstream: Vec<reach::ToolReach>,
    /// What the run's budget (`--budget-ms`) cut, one line each (`"transport chaos: not
    /// run"`, `"protocol probes: 12 of 40 run"`, `"generated phase: 3 of 16 tools not
    /// reached"`); left out of the JSON when nothing was cut.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub budget_cut: Vec<String>,
}

/// One tool's generated phase, in the report's summary.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ToolGenerated {
    /// The tool's name.
    pub tool: String,
    /// `tools/call` requests made with generated arguments (shrinking included).
    pub calls: u64,
    /// Wall time of the tool's generated phase, in ms (shrinking and restarts included).
    pub elapsed_ms: u64,
    /// Why it ended before its last case: `"time budget"` (`--tool-budget-ms` ran out, or
    /// the tool's share of `--generated-budget-ms`) or `"deadline missed"` (a call went
    /// unanswered; the tool's other cases were skipped).
    pub cut: Option<&'static str>,
    /// Why no argument was generated for the tool at all (its `inputSchema` is over a
    /// generation budget or has no instance, or the generated phase's budget was spent before
    /// its turn); `calls` is then 0. Left out of the JSON when the tool was generated for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    /// The generation budgets that limited the tool's cases (an `enum` sampled, invalid-case
    /// sites sampled, ...), one sentence each; left out of the JSON when none did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub limits: Vec<String>,
}

/// The result of a run: the shape of `--report-json`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Report {
    /// The version of mcp-chaos that made the report (its crate version, e.g. `0.1.0`).
    pub mcp_chaos_version: String,
    /// The run's seed: pass it back with `--seed` to replay the run.
    pub seed: u64,
    /// The server tested: `{"command"?, "url"?, "server_info", "protocol_version"}`.
    pub server: ServerReport,
    /// Run totals: exchanges, calls, findings per severity, wall time (ms), restarts, and
    /// per-phase records (see [`Summary`]).
    pub summary: Summary,
    /// Distinct findings, in the order found.
    pub findings: Vec<Finding>,
    /// With `--protocol-version all`: the summary of each version's campaign.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub versions: Vec<VersionSummary>,
    /// How the run ended: `completed`, `not-started` (exit 2) or `interrupted` (SIGINT or
    /// SIGTERM: the findings are those found until then).
    pub outcome: live::RunOutcome,
    /// Whether SIGINT or SIGTERM stopped the run before it completed (`outcome` is then
    /// `interrupted`).
    pub interrupted: bool,
    /// Why the run did not complete, when it did not: `{"kind", "message", "stderr_tail"}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<live::ErrorReport>,
    /// When the run did not complete: the last exchanges (at most 8), as excerpts
    /// `{"probe", "sent", "received", "outcome", "elapsed_ms"}`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exchanges: Vec<live::ExchangeExcerpt>,
    /// The command that reruns this run exactly (`mcp-chaos run ... --seed N`), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rerun: Option<String>,
}

/// The JSON Schema (draft 2020-12) of `--report-json`'s report ([`Report`]), generated from
/// these types; committed as `schemas/report.schema.json`, which a test keeps current and
/// holds real reports against.
pub fn report_json_schema() -> Value {
    serde_json::to_value(schemars::schema_for!(Report)).unwrap_or(Value::Null)
}

/// One version's campaign in a `--protocol-version all` run.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct VersionSummary {
    /// The protocol version of this campaign, e.g. `2025-11-25`.
    pub protocol_version: String,
    /// The campaign's totals, as a single-version report's `summary` holds them.
    pub summary: Summary,
}

impl VersionSummary {
    /// The summary of a single-version report.
    pub fn of(report: &Report) -> VersionSummary {
        VersionSummary {
            protocol_version: report.server.protocol_version.clone(),
            summary: report.summary.clone(),
        }
    }
}

impl Report {
    /// A report of a run that tested nothing.
    pub fn empty(config: &RunConfig) -> Report {
        let (command, url) = config.server.identity();
        Report {
            mcp_chaos_version: env!("CARGO_PKG_VERSION").to_owned(),
            seed: config.seed,
            server: ServerReport {
                command,
                url,
                server_info: Value::Null,
                protocol_version: String::new(),
            },
            summary: Summary::default(),
            findings: Vec::new(),
            versions: Vec::new(),
            outcome: live::RunOutcome::Completed,
            interrupted: false,
            error: None,
            exchanges: Vec::new(),
            rerun: config.rerun.clone(),
        }
    }

    /// Adds another version's campaign to this report: its findings, its summary in
    /// `versions`, and its totals.
    pub fn absorb(&mut self, other: Report) {
        self.versions.push(VersionSummary::of(&other));
        let (a, b) = (&mut self.summary, &other.summary);
        a.exchanges += b.exchanges;
        a.tool_calls += b.tool_calls;
        a.violations += b.violations;
        a.warnings += b.warnings;
        a.duration_ms += b.duration_ms;
        a.restarts += b.restarts;
        a.fresh_restarts += b.fresh_restarts;
        a.generated.extend(b.generated.iter().cloned());
        a.upstream.extend(b.upstream.iter().cloned());
        a.dropped.add(&b.dropped);
        if let Some(w) = &b.wire {
            a.wire.get_or_insert_with(Default::default).add(w);
        }
        a.features.add(&b.features);
        a.tools = a.tools.max(b.tools);
        self.server.protocol_version = format!(
            "{}, {}",
            self.server.protocol_version, other.server.protocol_version
        );
        self.findings.extend(other.findings);
    }

    /// Whether any finding is a violation (exit code 1).
    pub fn has_violations(&self) -> bool {
        self.findings
            .iter()
            .any(|f| f.severity == Severity::Violation)
    }
}

/// One probe of the campaign.
#[derive(Debug, Clone)]
pub enum Step {
    /// `ping`, judged for its result shape.
    Ping,
    /// A request for a method that does not exist.
    UnknownMethod,
    /// A frame that is not JSON.
    ParseError,
    /// JSON that is not a valid request.
    InvalidRequest(InvalidRequest),
    /// A notification.
    Notification {
        /// The notification's method, e.g. `notifications/cancelled`.
        method: &'static str,
        /// Whether MCP defines the method (`false` for a made-up one).
        known: bool,
    },
    /// `tools/call` of an unknown tool.
    UnknownTool,
    /// `tools/call` with params that fail the `CallToolRequest` schema.
    InvalidCallParams(InvalidCallParams),
    /// A batch of two pings.
    Batch,
    /// An HTTP-level probe (Streamable HTTP only).
    Http(crate::session::HttpProbe),
    /// A 2026-07-28 request without the `_meta` fields.
    MissingMeta,
    /// `tools/call` of a listed tool.
    CallTool {
        /// The tool's name, as listed.
        tool: String,
        /// The `arguments` object sent.
        arguments: Value,
    },
}

impl Step {
    /// A short human label, e.g. `unknown method`, `tools/call echo`.
    pub fn label(&self) -> String {
        match self {
            Step::Ping => "ping".into(),
            Step::UnknownMethod => "unknown method".into(),
            Step::ParseError => "malformed JSON".into(),
            Step::InvalidRequest(kind) => format!("invalid request ({})", kind.describe()),
            Step::Notification { method, .. } => format!("notification {method}"),
            Step::UnknownTool => "unknown tool".into(),
            Step::InvalidCallParams(kind) => format!("tools/call ({})", kind.describe()),
            Step::Batch => "batch".into(),
            Step::Http(what) => format!("HTTP {}", what.label()),
            Step::MissingMeta => "request without _meta".into(),
            Step::CallTool { tool, .. } => format!("tools/call {tool}"),
        }
    }
}

/// Ways to make a request invalid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InvalidRequest {
    /// No `jsonrpc` member.
    NoJsonrpc,
    /// `jsonrpc: "1.0"`.
    WrongJsonrpc,
    /// `id: null`.
    NullId,
    /// No `method` member.
    NoMethod,
    /// `method` is a number.
    MethodNotString,
    /// A JSON number instead of an object.
    NotAnObject,
}

impl InvalidRequest {
    /// Every kind.
    pub const ALL: [InvalidRequest; 6] = [
        InvalidRequest::NoJsonrpc,
        InvalidRequest::WrongJsonrpc,
        InvalidRequest::NullId,
        InvalidRequest::NoMethod,
        InvalidRequest::MethodNotString,
        InvalidRequest::NotAnObject,
    ];

    fn describe(self) -> &'static str {
        match self {
            InvalidRequest::NoJsonrpc => "no jsonrpc member",
            InvalidRequest::WrongJsonrpc => "jsonrpc is \"1.0\"",
            InvalidRequest::NullId => "id is null",
            InvalidRequest::NoMethod => "no method member",
            InvalidRequest::MethodNotString => "method is a number",
            InvalidRequest::NotAnObject => "a JSON number, not an object",
        }
    }

    /// The frame, and the id it carries if one can be read.
    fn frame(self, id: RequestId) -> (Value, Option<RequestId>) {
        let idv = id.to_value();
        match self {
            InvalidRequest::NoJsonrpc => (json!({"id": idv, "method": "ping"}), Some(id)),
            InvalidRequest::WrongJsonrpc => (
                json!({"jsonrpc": "1.0", "id": idv, "method": "ping"}),
                Some(id),
            ),
            InvalidRequest::NullId => (
                json!({"jsonrpc": "2.0", "id": null, "method": "ping"}),
                None,
            ),
            InvalidRequest::NoMethod => (json!({"jsonrpc": "2.0", "id": idv}), Some(id)),
            InvalidRequest::MethodNotString => {
                (json!({"jsonrpc": "2.0", "id": idv, "method": 42}), Some(id))
            }
            InvalidRequest::NotAnObject => (json!(42), None),
        }
    }
}

/// Ways to make `tools/call` params fail the `CallToolRequest` schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InvalidCallParams {
    /// `arguments` is a string.
    ArgumentsString,
    /// `arguments` is an array.
    ArgumentsArray,
    /// No `name`.
    NoName,
    /// No `params` at all.
    NoParams,
}

impl InvalidCallParams {
    /// Every kind.
    pub const ALL: [InvalidCallParams; 4] = [
        InvalidCallParams::ArgumentsString,
        InvalidCallParams::ArgumentsArray,
        InvalidCallParams::NoName,
        InvalidCallParams::NoParams,
    ];

    fn describe(self) -> &'static str {
        match self {
            InvalidCallParams::ArgumentsString => "arguments is a string",
            InvalidCallParams::ArgumentsArray => "arguments is an array",
            InvalidCallParams::NoName => "no name",
            InvalidCallParams::NoParams => "no params",
        }
    }

    fn params(self, tool: &str) -> Option<Value> {
        match self {
            InvalidCallParams::ArgumentsString => {
                Some(json!({"name": tool, "arguments": "not an object"}))
            }
            InvalidCallParams::ArgumentsArray => Some(json!({"name": tool, "arguments": [1, 2]})),
            InvalidCallParams::NoName => Some(json!({"arguments": {}})),
            InvalidCallParams::NoParams => None,
        }
    }
}

/// The protocol probes, in the order they run, for the negotiated `version`, over HTTP or not,
/// with or without an HTTP session.
pub fn protocol_steps(version: ProtocolVersion, http: bool, session: bool) -> Vec<Step> {
    use crate::session::HttpProbe;
    let mut steps = vec![Step::Ping, Step::UnknownMethod, Step::ParseError];
    if !version.rules().handshake {
        steps.push(Step::MissingMeta);
    }
    if http {
        steps.push(Step::Http(HttpProbe::ForeignOrigin));
        if version.rules().http_version_header {
            steps.push(Step::Http(HttpProbe::BadVersionHeader));
        }
        if session {
            steps.push(Step::Http(HttpProbe::UnknownSession));
            steps.push(Step::Http(HttpProbe::NoSession));
        }
        steps.push(Step::Http(HttpProbe::Get));
        if !version.rules().handshake {
            steps.push(Step::Http(HttpProbe::MissingMethodHeader));
        }
    }
    steps.extend(InvalidRequest::ALL.into_iter().map(Step::InvalidRequest));
    steps.push(Step::Notification {
        method: "notifications/mcp-chaos-unknown",
        known: false,
    });
    steps.push(Step::Notification {
        method: "notifications/cancelled",
        known: true,
    });
    steps.push(Step::UnknownTool);
    steps.extend(
        InvalidCallParams::ALL
            .into_iter()
            .map(Step::InvalidCallParams),
    );
    steps.push(Step::Batch);
    steps
}

/// Executes one step on `session` and returns its exchange.
pub async fn execute(session: &mut Session, step: &Step, first_tool: Option<&str>) -> Exchange {
    match step {
        // `ping` is gone in 2026-07-28: there it is an unknown method (HTTP 404 + -32601).
        Step::Ping if session.stateless() => {
            let probe = Probe::UnknownMethod {
                method: "ping".into(),
            };
            session.request(probe, "ping", None).await
        }
        Step::Ping => session.request(Probe::Liveness, "ping", None).await,
        Step::Http(what) => match session.http_probe(*what).await {
            Some(ex) => ex,
            None => session.liveness().await,
        },
        Step::MissingMeta => {
            let id = session.next_id();
            let frame = wire::to_line(&wire::request(&id, "tools/list", None));
            let expect = Expect::Response {
                id,
                or_null: true,
                fence: true,
            };
            session.send(Probe::MissingMeta, frame, expect).await
        }
        Step::UnknownMethod => {
            session
                .request(
                    Probe::UnknownMethod {
                        method: UNKNOWN_METHOD.into(),
                    },
                    UNKNOWN_METHOD,
                    None,
                )
                .await
        }
        Step::ParseError => {
            let id = session.next_id();
            let frame = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\n");
            session
                .send(Probe::ParseError, frame.into_bytes(), Expect::Fenced)
                .await
        }
        Step::InvalidRequest(kind) => {
            let id = session.next_id();
            let (frame, readable) = kind.frame(id);
            let expect = match &readable {
                Some(id) => Expect::Response {
                    id: id.clone(),
                    or_null: true,
                    fence: true,
                },
                None => Expect::Fenced,
            };
            let probe = Probe::InvalidRequest {
                what: kind.describe(),
                id: readable,
            };
            session.send(probe, wire::to_line(&frame), expect).await
        }
        Step::Notification { method, known } => {
            let params = (*method == "notifications/cancelled")
                .then(|| json!({"requestId": "mcp-chaos-never-sent", "reason": "mcp-chaos probe"}));
            let probe = Probe::Notification {
                method: (*method).to_owned(),
                known: *known,
            };
            session.notify(probe, method, params).await
        }
        Step::UnknownTool => {
            let probe = Probe::UnknownTool {
                name: UNKNOWN_TOOL.into(),
            };
            session.call_tool(probe, UNKNOWN_TOOL, &json!({})).await
        }
        Step::InvalidCallParams(kind) => {
            let probe = Probe::InvalidCallParams {
                what: kind.describe(),
            };
            let tool = first_tool.unwrap_or(UNKNOWN_TOOL);
            session
                .request(probe, "tools/call", kind.params(tool))
                .await
        }
        Step::Batch => {
            let (a, b) = (session.next_id(), session.next_id());
            let frame = json!([
                wire::request(&a, "ping", None),
                wire::request(&b, "ping", None)
            ]);
            let defined = session.version().rules().batches;
            let probe = Probe::Batch {
                ids: vec![a, b],
                defined,
            };
            session
                .send(probe, wire::to_line(&frame), Expect::Fenced)
                .await
        }
        Step::CallTool { tool, arguments } => {
            let probe = Probe::ToolCall {
                tool: tool.clone(),
                arguments: arguments.clone(),
            };
            session.call_tool(probe, tool, arguments).await
        }
    }
}

/// Runs a campaign against the server in `config`, reporting events to `on_event`. With
/// [`VersionChoice::All`], one campaign per version the server supports; the report then
/// holds every finding (each tagged with its version) and a summary per version.
///
/// Errors (exit code 2) only when the server cannot be started or initialized at the start;
/// a server that dies later is a finding, and is restarted up to `max_restarts` times.
pub async fn run(
    config: &RunConfig,
    on_event: &mut dyn FnMut(&Event<'_>),
) -> Result<Report, RunError> {
    if config.version != VersionChoice::All {
        return run_one(config, on_event, false)
            .await
            .map(|r| r.unwrap_or_else(|| Report::empty(config)));
    }
    let mut merged: Option<Report> = None;
    let mut first_error = None;
    let started = Instant::now();
    for version in ProtocolVersion::ALL {
        let mut one = config.clone();
        one.version = VersionChoice::Exactly(version);
        one.budget = config.budget.map(|b| b.saturating_sub(started.elapsed()));
        match run_one(&one, on_event, true).await {
            Ok(Some(report)) => {
                merged = Some(match merged {
                    None => {
                        let mut r = report.clone();
                        r.versions = vec![VersionSummary::of(&report)];
                        r
                    }
                    Some(mut all) => {
                        all.absorb(report);
                        all
                    }
                });
            }
            Ok(None) => (on_event)(&Event::VersionSkipped { version }),
            // A server that has never started will not start for another version either: one
            // start timeout, not one per version.
            Err(e @ RunError::Start(_)) if merged.is_none() => return Err(e),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    match (merged, first_error) {
        (Some(report), _) => Ok(report),
        (None, Some(e)) => Err(e),
        (None, None) => Ok(Report::empty(config)),
    }
}

/// One campaign. With `only_if_supported`, a server that negotiates another version than the
/// one asked for is not tested (`Ok(None)`).
async fn run_one(
    config: &RunConfig,
    on_event: &mut dyn FnMut(&Event<'_>),
    only_if_supported: bool,
) -> Result<Option<Report>, RunError> {
    let mut campaign = Campaign::new(config, on_event, only_if_supported).await?;
    let result = campaign.run().await;
    campaign.close().await;
    match result {
        Err(RunError::Unsupported) => Ok(None),
        Err(e) => Err(e),
        Ok(()) => Ok(Some(campaign.finish())),
    }
}

impl<'a> Campaign<'a> {
    /// A campaign on `config`'s server, with its fault injectors started (nothing else yet).
    async fn new(
        config: &'a RunConfig,
        on_event: &'a mut dyn FnMut(&Event<'_>),
        only_if_supported: bool,
    ) -> Result<Campaign<'a>, RunError> {
        let injectors = if config.faults.is_active() {
            Some(faults::Injectors::start(&config.faults, config.seed).await?)
        } else {
            None
        };
        let mut server = config.server.clone();
        if let Some(env) = server.env_mut() {
            if let Some(inj) = &injectors {
                env.extend(inj.env(&config.faults));
            }
            env.extend(config.secrets.iter().cloned());
        }
        let mut exact: Vec<(LeakKind, String)> = config
            .secrets
            .iter()
            .map(|(_, v)| (LeakKind::Secret, v.clone()))
            .collect();
        if let Some(inj) = &injectors {
            exact.extend(inj.canaries().into_iter().map(|c| (LeakKind::Canary, c)));
        }
        Ok(Campaign {
            config,
            server,
            shared: std::rc::Rc::new(shared::Shared::new(
                on_event,
                config
                    .secrets
                    .iter()
                    .map(|(_, v)| v.clone())
                    .chain(config.server.redactions())
                    .collect(),
            )),
            session: None,
            version: match config.version {
                VersionChoice::Exactly(v) => Some(v),
                _ => None,
            },
            only_if_supported,
            server_stream: false,
            negotiated: None,
            tools: std::rc::Rc::default(),
            plan: std::rc::Rc::default(),
            exact,
            injectors,
            summary: Summary::default(),
            started: Instant::now(),
            gave_up: false,
            called: std::collections::HashSet::new(),
            tool_deadline: None,
            wedge: recover::WedgeState::default(),
            reach: reach::ReachTable::default(),
            sent_seq: 0,
            failed_methods: std::collections::HashSet::new(),
        })
    }

    /// Shuts the server and the fault injectors down.
    async fn close(&mut self) {
        if let Some(session) = self.session.take() {
            self.retire(session).await;
        }
        if let Some(inj) = self.injectors.take() {
            inj.shutdown().await;
        }
    }
}

/// A started session: the session, what it negotiated, the handshake's exchanges.
type Started = (Session, Negotiated, Vec<Exchange>);

/// Which phases of a campaign run (each on in [`RunConfig::new`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Phases {
    /// The protocol probes, the lifecycle-order cases, and the HTTP session's DELETE at the end.
    pub probes: bool,
    /// Tool calls: the baseline calls, and the generated and fault phases.
    pub tool_calls: bool,
    /// The generated phase (with `tool_calls`).
    pub generated: bool,
    /// Transport chaos: concurrency, cancellation, disconnects and large frames.
    pub chaos: bool,
    /// The version-negotiation probe: a bogus version, on one extra server start.
    pub version_probe: bool,
    /// Over an HTTP session, end it with DELETE and check that its id is then refused (404).
    pub end_session: bool,
    /// The wire phase (`RunConfig::wire_cases` frames).
    pub wire: bool,
    /// The features phase (resources, prompts, completion, logging, capability gating), for
    /// the features [`RunConfig::features`] selects.
    pub features: bool,
}

impl Phases {
    /// The phases `config` enables.
    pub fn of(config: &RunConfig) -> Phases {
        Phases {
            probes: config.protocol_probes,
            tool_calls: config.tool_calls,
            generated: config.generated,
            chaos: config.transport_chaos,
            version_probe: config.version_probe,
            end_session: config.protocol_probes,
            wire: config.wire_cases > 0,
            features: config.features.any(),
        }
    }
}

/// What a campaign will do, decided once the tools are listed.
#[derive(Debug, Clone, Default)]
struct Plan {
    /// The tools as listed.
    tools: Vec<Value>,
    /// The protocol probes for the negotiated version and transport.
    probes: Vec<Step>,
    /// One call per listed tool: its name and a small valid argument value.
    calls: Vec<(String, Value)>,
    /// Per tool: name, `inputSchema`, and the URL base for URL-typed arguments.
    generated_tools: Vec<(String, Value, String)>,
    /// Whether the server keeps an HTTP session (`Mcp-Session-Id`).
    http_session: bool,
}

impl Plan {
    fn first_tool(&self) -> Option<String> {
        self.calls.first().map(|(name, _)| name.clone())
    }

    fn first_call(&self) -> Option<(String, Value)> {
        self.calls.first().cloned()
    }

    fn arguments(&self, tool: &str) -> Option<&Value> {
        self.calls
            .iter()
            .find(|(name, _)| name == tool)
            .map(|(_, args)| args)
    }
}

struct Campaign<'a> {
    config: &'a RunConfig,
    server: ServerSpec,
    /// The listener and the findings, shared with a side campaign (see [`shared`]).
    shared: std::rc::Rc<shared::Shared<'a>>,
    session: Option<Session>,
    /// The version asked for in every (re)start, once decided.
    version: Option<ProtocolVersion>,
    only_if_supported: bool,
    /// Whether new sessions open the HTTP standalone stream (after the GET probe).
    server_stream: bool,
    negotiated: Option<Negotiated>,
    /// The tools' output schemas, compiled; shared with a side campaign.
    tools: std::rc::Rc<ToolTable>,
    /// The probes and calls planned; shared with a side campaign (large for thousands of
    /// tools).
    plan: std::rc::Rc<Plan>,
    exact: Vec<(LeakKind, String)>,
    injectors: Option<faults::Injectors>,
    summary: Summary,
    started: Instant,
    gave_up: bool,
    /// Every tool call made so far, as [`call_key`]s: the generated phase skips a case whose
    /// arguments were already sent to the same tool (as Hypothesis skips duplicate examples).
    called: std::collections::HashSet<u64>,
    /// When the current tool's generated phase runs out of time (`--tool-budget-ms` after it
    /// started): progress extends a generated call's deadline no further than this.
    tool_deadline: Option<Instant>,
    /// Whether the server wedged, and the counts its finding reports.
    wedge: recover::WedgeState,
    /// Which tools reached the fake upstream, learned from every call (see [`reach`]).
    reach: reach::ReachTable,
    /// How many generated cases the scheduler has sent (their order, see [`scheduler`]).
    sent_seq: u64,
    /// The requests whose well-formed form the server already failed on (died or stopped
    /// answering after it), as [`method_key`]s: the wire phase skips frames calling them,
    /// whose failure would be the method's, not the frame's (each would cost a restart and a
    /// shrink that only rediscovers it).
    failed_methods: std::collections::HashSet<String>,
}

/// The key of a request in [`Campaign::failed_methods`]: its method, and for `tools/call` the
/// tool's name too (`"tools/call echo"`); `None` for a frame that is not one JSON-RPC request
/// or notification with a string method.
fn method_key(frame: &[u8]) -> Option<String> {
    let value: Value = serde_json::from_slice(frame).ok()?;
    method_key_of(value.get("method")?.as_str()?, value.get("params"))
}

/// [`method_key`] of a request with `method` and `params`: `None` for a `tools/call` without
/// a string `params.name`.
fn method_key_of(method: &str, params: Option<&Value>) -> Option<String> {
    if method == "tools/call" {
        let name = params?.get("name")?.as_str()?;
        Some(format!("tools/call {name}"))
    } else {
        Some(method.to_owned())
    }
}

/// A key for a `tools/call` of `tool` with `arguments` (a hash of both; the arguments as
/// serialised, so `{"a":1,"b":2}` and `{"b":2,"a":1}` are different calls).
fn call_key(tool: &str, arguments: &Value) -> u64 {
    use std::hash::{Hash, Hasher};
    /// Feeds the serialised arguments to the hasher as they are written (no string built).
    struct Feed<'a>(&'a mut std::hash::DefaultHasher);
    impl std::io::Write for Feed<'_> {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.write(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut h = std::hash::DefaultHasher::new();
    tool.hash(&mut h);
    // Serialising a `Value` cannot fail, and neither can this writer.
    let _ = serde_json::to_writer(Feed(&mut h), arguments);
    h.finish()
}

impl<'a> Campaign<'a> {
    /// The first planned tool that reached the fake upstream, with the smallest arguments that
    /// did (the slow-upstream transport-chaos probes use it).
    fn first_upstream_call(&self) -> Option<(String, Value)> {
        self.plan.calls.iter().find_map(|(name, _)| {
            self.reach
                .arguments(name)
                .map(|args| (name.clone(), args.clone()))
        })
    }

    /// Notes, for the reach table, a call of `tool` with `arguments` that caused `entries`.
    fn note_reach(
        &mut self,
        tool: &str,
        arguments: &Value,
        entries: &[mcp_chaos_faults::JournalEntry],
    ) {
        let paths: Vec<&str> = entries
            .iter()
            .map(mcp_chaos_faults::JournalEntry::path)
            .collect();
        self.reach.note(tool, arguments, &paths);
    }

    /// Whether `tool` was already called with exactly these `arguments` in this campaign.
    fn already_called(&self, tool: &str, arguments: &Value) -> bool {
        self.called.contains(&call_key(tool, arguments))
    }

    fn context(&self) -> Context<'_> {
        Context {
            version: self.session.as_ref().map_or(
                self.version
                    .unwrap_or(ProtocolVersion::LATEST_WITH_INITIALIZE),
                Session::version,
            ),
            tools: &self.tools,
            exact: &self.exact,
            capabilities: self.negotiated.as_ref().map(|n| &n.capabilities),
        }
    }

    async fn run(&mut self) -> Result<(), RunError> {
        self.prepare().await?;
        self.phases(Phases::of(self.config)).await;
        Ok(())
    }

    /// The phases `phases` enables, in order, after [`Campaign::prepare`]: the protocol probes
    /// and the wire phase, the tool calls (baseline, generated, under faults), the features,
    /// transport chaos, the end of the HTTP session, the lifecycle cases and the version probe.
    /// The tool calls run on a second server beside the others where that changes no finding
    /// (see [`Campaign::side_for_tool_calls`]), so that a slow tool holds no other phase up.
    async fn phases(&mut self, phases: Phases) {
        let config = self.config;
        let config = RunConfig {
            protocol_probes: phases.probes,
            tool_calls: phases.tool_calls,
            generated: phases.generated,
            transport_chaos: phases.chaos,
            version_probe: phases.version_probe,
            ..config.clone()
        };
        let calls = usize::from(config.tool_calls) * self.plan.calls.len();
        let steps = usize::from(config.protocol_probes) * self.plan.probes.len()
            + calls
            + usize::from(config.version_probe);
        self.wedge.planned = steps;
        self.shared.emit(&Event::Planned {
            tools: self.plan.tools.len(),
            steps,
        });
        let side = if config.tool_calls && config.generated && !self.gave_up {
            self.side_for_tool_calls()
        } else {
            None
        };
        match side {
            Some(mut side) => {
                self.wedge.planned -= calls;
                side.wedge.planned = calls;
                // The second server starts while the first runs the protocol probes.
                let (started, ()) = futures::join!(
                    async {
                        let started = side.start_session().await.is_ok();
                        if started {
                            side.tool_call_phases(&config).await;
                        }
                        // Its server ends beside the other phases too (a server that ignores
                        // its stdin closing costs the grace there, not after them).
                        side.report_wedge();
                        side.close().await;
                        started
                    },
                    async {
                        self.protocol_phases(&config, phases).await;
                        self.later_phases(&config, phases).await;
                    }
                );
                self.absorb(side);
                if !started {
                    self.shared.emit(&Event::SecondServer {
                        message: "the second server did not start; the tool calls run last, on this one",
                    });
                    self.wedge.planned += calls;
                    self.tool_call_phases(&config).await;
                }
            }
            None => {
                self.protocol_phases(&config, phases).await;
                self.tool_call_phases(&config).await;
                self.later_phases(&config, phases).await;
            }
        }
        self.report_wedge();
    }

    /// The protocol probes and the wire phase; then the HTTP server stream is listened to.
    async fn protocol_phases(&mut self, config: &RunConfig, phases: Phases) {
        if config.protocol_probes {
            self.probe_phase().await;
        }
        if phases.wire && !self.gave_up {
            self.wire_phase(config.wire_cases).await;
        }
        self.listen_to_server_stream();
    }

    /// The tool calls: the baseline call of every tool, the generated cases (the baseline
    /// calls among them when the scheduler runs), and under a fake upstream the fault phases.
    async fn tool_call_phases(&mut self, config: &RunConfig) {
        if !config.tool_calls {
            return;
        }
        if config.generated && !self.gave_up {
            let plan = std::rc::Rc::clone(&self.plan);
            self.generated_phase(
                &plan.generated_tools,
                config.cases,
                config.cases.div_ceil(2),
                true,
            )
            .await;
        } else {
            self.baseline_phase().await;
        }
        if self.injectors.is_some() {
            let tools: Vec<String> = self.reach.reached_tools();
            let faults: Vec<_> = config
                .faults
                .faults
                .iter()
                .cloned()
                .map(mcp_chaos_faults::ScopedFault::every)
                .collect();
            self.fault_phase(&tools, &faults).await;
            let profiles = config.faults.faults.clone();
            self.fault_property_phase(&tools, &profiles, config.fault_cases)
                .await;
        }
    }

    /// The features phase, transport chaos, the end of the HTTP session, the lifecycle cases
    /// and the version probe.
    async fn later_phases(&mut self, config: &RunConfig, phases: Phases) {
        if phases.features && !self.gave_up {
            self.features_phase(config.features).await;
        }
        if config.transport_chaos && !self.gave_up {
            let (call, slow) = if config.tool_calls {
                (self.plan.first_call(), self.first_upstream_call())
            } else {
                (None, None)
            };
            self.transport_chaos(call, slow).await;
        }
        if phases.end_session {
            self.end_http_session().await;
        }
        if config.protocol_probes && !self.cut_by_budget("lifecycle cases", 0, 1) {
            self.lifecycle_phase().await;
        }
        if config.version_probe && !self.gave_up && !self.cut_by_budget("version probe", 0, 1) {
            self.version_probe().await;
        }
    }

    /// A campaign for the tool calls on a second server process of the same command (not yet
    /// started), run beside the other phases; `None` (they then run in turn, on this
    /// campaign's server) unless that changes no finding: a stdio server (a session is its own
    /// process: the other phases' restarts and hostile frames never reach it), the case
    /// scheduler on (`--in-flight` over 1), and no fake upstream (its journal is read per call,
    /// and would mix both servers' requests). Should the second process not start, the tool
    /// calls run last, on this campaign's server.
    fn side_for_tool_calls(&mut self) -> Option<Campaign<'a>> {
        if !self.schedules_cases() || !matches!(self.server, ServerSpec::Stdio(_)) {
            return None;
        }
        self.shared.emit(&Event::SecondServer {
            message: "the tool calls run on a second server process, beside the other phases",
        });
        Some(self.fork())
    }

    /// A campaign on the same server command, version, tools and plan, recording into the same
    /// findings, with no server running yet and counts of its own (see [`Campaign::absorb`]).
    fn fork(&self) -> Campaign<'a> {
        Campaign {
            config: self.config,
            server: self.server.clone(),
            shared: std::rc::Rc::clone(&self.shared),
            session: None,
            version: self.version,
            only_if_supported: false,
            server_stream: self.server_stream,
            negotiated: self.negotiated.clone(),
            tools: std::rc::Rc::clone(&self.tools),
            plan: std::rc::Rc::clone(&self.plan),
            exact: self.exact.clone(),
            injectors: None,
            summary: Summary::default(),
            started: self.started,
            gave_up: false,
            called: std::collections::HashSet::new(),
            tool_deadline: None,
            wedge: recover::WedgeState::default(),
            reach: reach::ReachTable::default(),
            sent_seq: 0,
            failed_methods: std::collections::HashSet::new(),
        }
    }

    /// Adds a forked campaign's counts to this one's (its findings are already recorded).
    fn absorb(&mut self, side: Campaign<'a>) {
        let (a, b) = (&mut self.summary, side.summary);
        a.exchanges += b.exchanges;
        a.tool_calls += b.tool_calls;
        a.restarts += b.restarts;
        a.fresh_restarts += b.fresh_restarts;
        a.generated.extend(b.generated);
        a.dropped.add(&b.dropped);
        for line in b.budget_cut {
            if !a.budget_cut.contains(&line) {
                a.budget_cut.push(line);
            }
        }
        self.called.extend(side.called);
        self.failed_methods.extend(side.failed_methods);
    }

    /// Starts the server, performs the handshake, lists the tools and plans the probes and
    /// the calls (one small valid argument value per tool).
    async fn prepare(&mut self) -> Result<(), RunError> {
        let config = self.config;
        self.start_session().await?;
        let tools = self.list_tools_checked().await;
        self.tools = std::rc::Rc::new(ToolTable::new(&tools, self.context().version));
        let listed = tools.len();
        let unmatched = config.selection.unmatched(&tools);
        let (tools, skipped) = config.selection.split(tools);
        self.shared.emit(&Event::Tools {
            skipped: &skipped,
            unmatched: &unmatched,
            destructive: &select::destructive(&tools),
        });
        self.summary.skipped_tools = skipped;
        let version = self.context().version;
        let (http, http_session) = match self.session.as_mut() {
            Some(session) => {
                let http = session.transport_mut().http();
                let has_session = http.as_ref().is_some_and(|h| h.session_id().is_some());
                (http.is_some(), has_session)
            }
            None => (false, false),
        };
        let mut plan = Plan {
            probes: protocol_steps(version, http, http_session),
            http_session: http && http_session,
            ..Plan::default()
        };
        for tool in &tools {
            let Some(name) = tool.get("name").and_then(Value::as_str) else {
                continue;
            };
            let schema = tool.get("inputSchema").cloned().unwrap_or(json!({}));
            let url = match &self.injectors {
                Some(inj) if config.faults.url_args => inj.url_for(name),
                _ => config.url.clone(),
            };
            // One small valid value from the generator; the simple builder when the
            // generator cannot serve this schema (it is then reported in the generated phase).
            let arguments = crate::generate::Generator::new(
                &generated::schema_for(&schema, version),
                &crate::generate::GenOptions::with_url_base(url.clone()),
            )
            .and_then(|g| g.example())
            .unwrap_or_else(|_| args::simple_arguments(&schema, &url));
            plan.calls.push((name.to_owned(), arguments));
            plan.generated_tools.push((name.to_owned(), schema, url));
        }
        plan.tools = tools;
        self.summary.tools = listed as u64;
        self.plan = std::rc::Rc::new(plan);
        Ok(())
    }

    /// The protocol probes (malformed frames, unknown method and tool, notifications, batch,
    /// HTTP-level probes), each followed by a liveness check.
    async fn probe_phase(&mut self) {
        let mut steps = self.plan.probes.clone();
        if self.server_stream {
            // The GET probe needs a server without a standalone stream open (a second one may
            // rightly be refused with 409); a scenario that opened one skips it.
            steps.retain(|s| !matches!(s, Step::Http(crate::session::HttpProbe::Get)));
        }
        let first_tool = self.plan.first_tool();
        for (i, step) in steps.iter().enumerate() {
            if self.gave_up || self.cut_by_budget("protocol probes", i, steps.len()) {
                break;
            }
            self.step(step, first_tool.as_deref(), None).await;
        }
    }

    /// From here on, listen on the server's standalone stream too (after the GET probe,
    /// which must meet the server without a stream already open).
    /// Idempotent.
    fn listen_to_server_stream(&mut self) {
        if self.server_stream {
            return;
        }
        self.server_stream = true;
        if let Some(session) = self.session.as_mut() {
            session.open_server_stream();
        }
    }

    /// Calls every listed tool once with its planned arguments (under a fake upstream, each
    /// call's upstream requests go into the reach table, as every call's do).
    async fn baseline_phase(&mut self) {
        let plan = std::rc::Rc::clone(&self.plan);
        let total = plan.calls.len();
        for (i, (tool, arguments)) in plan.calls.iter().enumerate() {
            if self.gave_up || self.cut_by_budget("baseline calls", i, total) {
                break;
            }
            self.call(tool, arguments.clone(), None).await;
        }
    }

    /// Calls `tool` with `arguments` (under `fault` when given, else a healthy upstream) and
    /// checks liveness after it.
    async fn call(
        &mut self,
        tool: &str,
        arguments: Value,
        fault: Option<&mcp_chaos_faults::ScopedFault>,
    ) -> Option<Exchange> {
        let step = Step::CallTool {
            tool: tool.to_owned(),
            arguments,
        };
        let first_tool = self.plan.first_tool();
        let healthy = mcp_chaos_faults::ScopedFault::healthy();
        if let (Some(inj), Some(fault)) = (&self.injectors, fault) {
            inj.install(fault);
        }
        let ex = self
            .step(
                &step,
                first_tool.as_deref(),
                Some(fault.unwrap_or(&healthy)),
            )
            .await;
        if let (Some(inj), Some(_)) = (&self.injectors, fault) {
            inj.heal();
        }
        ex
    }

    /// Calls each of `tools` once under each of `faults`, with the smallest arguments that
    /// reached the upstream (the planned ones for a tool that never did).
    async fn fault_phase(&mut self, tools: &[String], faults: &[mcp_chaos_faults::ScopedFault]) {
        let plan = std::rc::Rc::clone(&self.plan);
        for (tool, planned) in &plan.calls {
            let uses = tools.contains(tool);
            let n = if uses { faults.len() } else { 0 };
            let tried = self.reach.tried(tool);
            self.shared.emit(&Event::FaultPhase {
                tool,
                faults: n,
                tried,
            });
            if !uses {
                continue;
            }
            let arguments = self.reach.arguments(tool).unwrap_or(planned).clone();
            for fault in faults {
                if self.gave_up || self.cut_by_budget("fault phase", 0, 0) {
                    break;
                }
                self.call(tool, arguments.clone(), Some(fault)).await;
            }
        }
    }

    /// Over a Streamable HTTP session: DELETE the session, then use its id again (which must
    /// get 404). Last, because it ends the session (so no liveness ping follows them).
    async fn end_http_session(&mut self) {
        if !self.plan.http_session || self.gave_up {
            return;
        }
        for what in [
            crate::session::HttpProbe::Delete,
            crate::session::HttpProbe::DeletedSession,
        ] {
            self.shared.emit(&Event::Step {
                label: &format!("HTTP {}", what.label()),
            });
            let ex = match self.session.as_mut() {
                Some(session) => session.http_probe(what).await,
                None => None,
            };
            let Some(ex) = ex else { break };
            self.record(&ex);
            // Only a session that really ended can be checked for 404.
            let ended = ex
                .http()
                .and_then(|h| h.status)
                .is_some_and(|s| (200..300).contains(&s));
            if !ended {
                break;
            }
        }
        if let Some(old) = self.session.take() {
            self.retire(old).await;
        }
    }

    /// Starts a server process (or connection) and performs the handshake; records its
    /// exchanges. Under [`VersionChoice::Auto`] the first start decides the version:
    /// `server/discover` for 2026-07-28, and if the server does not speak it, a fresh start
    /// with `initialize` for 2025-11-25 (the server answers with the version it speaks). A
    /// server that cannot be started at all (it does not spawn, exits or never opens its port)
    /// is not started a second time: the error comes after one start timeout.
    async fn start_session(&mut self) -> Result<(), RunError> {
        if self.version.is_none() {
            let stateless = ProtocolVersion::V2026_07_28;
            match self.try_start(stateless).await {
                Ok(session) => {
                    self.version = Some(stateless);
                    return self.adopt(session);
                }
                Err(e @ RunError::Start(_)) => return Err(e),
                Err(_) => {}
            }
            self.version = Some(ProtocolVersion::LATEST_WITH_INITIALIZE);
        }
        let version = self
            .version
            .unwrap_or(ProtocolVersion::LATEST_WITH_INITIALIZE);
        let session = self.try_start(version).await?;
        if self.only_if_supported && session.1.version != version {
            session.0.kill().await;
            return Err(RunError::Unsupported);
        }
        self.adopt(session)
    }

    async fn try_start(&mut self, version: ProtocolVersion) -> Result<Started, RunError> {
        let describe = self.server.describe();
        self.shared.emit(&Event::Starting { server: &describe });
        let transport = self.server.start().await?;
        let mut session = Session::new(transport, ClientConfig::new(version, self.config.timeout));
        match session.initialize().await {
            Ok((exchanges, negotiated)) => Ok((session, negotiated, exchanges)),
            Err(e) => {
                // Counted and reported: the report of a run that cannot start quotes them,
                // with the server's output. Only the HTTP-level invariants judge them (a
                // redirect, a wrong status or content type is what it is whether or not the
                // handshake completed); what a server owes after initialize is not judged.
                for ex in session.take_failed_handshake() {
                    let findings = oracle::http::check(&self.context(), &ex);
                    self.add(findings);
                    self.count(&ex);
                }
                let stderr_tail = session.stderr_tail();
                self.shared.emit(&Event::StartFailed {
                    stderr_tail: &stderr_tail,
                });
                session.kill().await;
                Err(e.into())
            }
        }
    }

    fn adopt(&mut self, started: Started) -> Result<(), RunError> {
        let (mut session, negotiated, exchanges) = started;
        if self.server_stream {
            session.open_server_stream();
        }
        self.session = Some(session);
        for ex in &exchanges {
            self.record(ex);
        }
        self.wedge.note_handshake(&exchanges);
        self.shared.emit(&Event::Initialized {
            negotiated: &negotiated,
        });
        self.negotiated = Some(negotiated);
        Ok(())
    }

    /// Judges an exchange and records its findings.
    fn record(&mut self, ex: &Exchange) {
        self.count(ex);
        let findings = oracle::judge(&self.context(), ex);
        self.add(findings);
    }

    /// Counts an exchange in the summary and reports it, without judging it.
    fn count(&mut self, ex: &Exchange) {
        self.summary.exchanges += 1;
        for r in &ex.received {
            if let crate::session::ReceivedItem::Dropped(d) = &r.item {
                self.summary.dropped.add(d);
            }
        }
        if let Probe::ToolCall { tool, arguments }
        | Probe::Generated {
            tool, arguments, ..
        } = &ex.probe
        {
            self.called.insert(call_key(tool, arguments));
        }
        if matches!(
            ex.probe,
            Probe::ToolCall { .. } | Probe::Generated { .. } | Probe::UnknownTool { .. }
        ) {
            self.summary.tool_calls += 1;
        }
        self.shared.emit(&Event::Exchange { exchange: ex });
    }

    /// Records `findings` (see [`shared::Shared::add`]).
    fn add(&self, findings: Vec<Finding>) {
        self.shared.add(findings);
    }

    /// Runs one step (under `fault`, when a fake upstream is serving one), judges it, checks
    /// liveness after it, and returns its exchange.
    async fn step(
        &mut self,
        step: &Step,
        first_tool: Option<&str>,
        fault: Option<&mcp_chaos_faults::ScopedFault>,
    ) -> Option<Exchange> {
        let label = match fault {
            Some(f) if !f.scope().is_every_request() => {
                format!(
                    "{} under {} on {}",
                    step.label(),
                    f.fault().name(),
                    f.scope()
                )
            }
            Some(f)
                if f.fault().is_failure()
                    || f.fault().kind() != mcp_chaos_faults::FaultKind::Ok =>
            {
                format!("{} under {}", step.label(), f.fault().name())
            }
            _ => step.label(),
        };
        self.shared.emit(&Event::Step { label: &label });
        self.wedge.started += 1;
        if self.session.is_none() && !self.restart("no server running").await {
            return None;
        }
        let marks = self.injectors.as_ref().map(faults::Injectors::mark);
        let session = self.session.as_mut()?;
        let mut ex = execute(session, step, first_tool).await;
        if let (Some(inj), Some(marks)) = (&self.injectors, &marks) {
            let entries = inj.since(marks);
            if let Some(fault) = fault {
                ex.fault = Some(faults::context(fault, &entries));
            }
            if let Step::CallTool { tool, arguments } = step {
                self.note_reach(tool, arguments, &entries);
            }
        }
        self.record(&ex);
        self.check_liveness(&ex).await;
        Some(ex)
    }

    /// Pings after `previous`; on failure, records the finding and restarts the server.
    async fn check_liveness(&mut self, previous: &Exchange) {
        let Some(session) = self.session.as_mut() else {
            return;
        };
        let ping = session.liveness().await;
        let stderr = session.stderr_tail();
        self.record(&ping);
        let findings = oracle::liveness::check(&self.context(), previous, &ping, &stderr);
        if findings.is_empty() {
            return;
        }
        self.add(findings);
        let reason = format!("server failed after {}", previous.probe.label());
        self.restart_after_failure(&reason, previous, &ping).await;
    }

    /// Restarts a live server whose call missed its deadline: it may still be running that
    /// call (a loop, a progress stream), which would slow or muddle every later case (and
    /// starts the fresh server of [`Campaign::renew`]). Not counted against `max_restarts`
    /// (the server did not fail).
    async fn fresh_restart(&mut self, reason: &str) -> bool {
        self.restart_counted(reason, false).await
    }

    async fn restart(&mut self, reason: &str) -> bool {
        self.restart_counted(reason, true).await
    }

    async fn restart_counted(&mut self, reason: &str, counted: bool) -> bool {
        // A restart follows a failure, a call given up on or a probe that ended the session:
        // nothing is gained by waiting for the old server to exit on its own.
        if let Some(old) = self.session.take() {
            old.kill().await;
        }
        // A campaign that gave up (too many restarts, a wedged server) starts nothing more.
        if self.gave_up {
            return false;
        }
        if counted
            && self.summary.restarts - self.summary.fresh_restarts >= self.config.max_restarts
        {
            self.gave_up = true;
            return false;
        }
        self.summary.restarts += 1;
        if !counted {
            self.summary.fresh_restarts += 1;
        }
        self.shared.emit(&Event::Restarted {
            reason,
            fresh: !counted,
        });
        match self.start_session().await {
            Ok(()) => true,
            Err(_) => {
                self.gave_up = true;
                false
            }
        }
    }

    /// Probes version negotiation with a version no release has: under a handshake version,
    /// `initialize` on a fresh process; under 2026-07-28, a `server/discover` whose `_meta`
    /// carries it (which MUST get -32022).
    async fn version_probe(&mut self) {
        self.shared.emit(&Event::Step {
            label: "version negotiation",
        });
        let version = self.context().version;
        if !version.rules().handshake {
            let Some(session) = self.session.as_mut() else {
                return;
            };
            let id = session.next_id();
            let params = json!({"_meta": {
                crate::session::META_PROTOCOL_VERSION: BOGUS_VERSION,
                crate::session::META_CLIENT_CAPABILITIES: Session::client_capabilities(version),
            }});
            let frame = wire::to_line(&wire::request(&id, "server/discover", Some(params)));
            let probe = Probe::VersionNegotiation {
                requested: BOGUS_VERSION.into(),
            };
            let expect = Expect::Response {
                id,
                or_null: false,
                fence: false,
            };
            // Over HTTP the header must name the same version as `_meta`, or the answer is a
            // header mismatch (-32020) instead of an unsupported version (-32022).
            let header = vec![(
                "mcp-protocol-version".to_owned(),
                Some(BOGUS_VERSION.to_owned()),
            )];
            let ex = session
                .send_with_headers(probe, frame, expect, header)
                .await;
            self.record(&ex);
            self.check_liveness(&ex).await;
            return;
        }
        if let Some(old) = self.session.take() {
            self.retire(old).await;
        }
        let Ok(transport) = self.server.start().await else {
            return;
        };
        let mut session = Session::new(transport, ClientConfig::new(version, self.config.timeout));
        let ex = session.initialize_with(BOGUS_VERSION).await;
        self.session = Some(session);
        self.record(&ex);
        if let Some(session) = self.session.take() {
            self.retire(session).await;
        }
    }

    fn finish(mut self) -> Report {
        self.report_wedge();
        let findings = self.shared.take_redacted();
        self.summary.duration_ms = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(0);
        self.summary.violations = findings
            .iter()
            .filter(|f| f.severity == Severity::Violation)
            .count() as u64;
        self.summary.warnings = findings.len() as u64 - self.summary.violations;
        if self.config.faults.is_active() {
            self.summary.upstream = self.reach.tools().to_vec();
        }
        let (command, url) = self.config.server.identity();
        Report {
            mcp_chaos_version: env!("CARGO_PKG_VERSION").to_owned(),
            seed: self.config.seed,
            server: ServerReport {
                command,
                url,
                server_info: self
                    .negotiated
                    .as_ref()
                    .map_or(Value::Null, |n| n.server_info.clone()),
                protocol_version: self
                    .negotiated
                    .as_ref()
                    .map_or_else(String::new, |n| n.answered.clone()),
            },
            summary: self.summary,
            findings,
            versions: Vec::new(),
            outcome: live::RunOutcome::Completed,
            interrupted: false,
            error: None,
            exchanges: Vec::new(),
            rerun: self.config.rerun.clone(),
        }
    }
}

/// `f` with `secrets` redacted from its message, request and response.
fn redacted(f: &Finding, secrets: &[String]) -> Finding {
    let mut f = f.clone();
    f.message = oracle::leaks::redact(&f.message, secrets);
    for field in [&mut f.request, &mut f.response] {
        if let Some(text) = field.as_mut() {
            *text = oracle::leaks::redact(text, secrets);
        }
    }
    f
}
