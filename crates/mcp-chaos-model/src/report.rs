//! The report of a run, the shape of `mcp-chaos run --report-json` (published as
//! `schemas/report.schema.json`, generated from these types by [`report_json_schema`]): the
//! server, the run's totals per phase, the findings, and how the run ended.

use serde::Serialize;
use serde_json::Value;

use crate::finding::{Finding, Severity};

/// How many reaching argument values and upstream request paths a report keeps per tool
/// ([`ToolReach`]) and per resource or prompt ([`FeatureReach`]).
pub const REACH_KEPT: usize = 8;

/// The server as the report describes it.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ServerReport {
    /// The command line that started it, as given (stdio servers; absent for HTTP).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// The MCP endpoint URL, e.g. `http://127.0.0.1:3001/mcp` (HTTP servers; absent for
    /// stdio).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The server's `serverInfo` as answered (an MCP `Implementation`: `{"name", "version",
    /// ...}`); `null` when it sent none.
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
    /// `tools/call` requests made (a count).
    pub tool_calls: u64,
    /// Tools the server listed in `tools/list` (a count, over every page).
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
    pub skipped_tools: Vec<Skipped>,
    /// The generated phase, per tool in the order run (left out of the JSON when the phase
    /// did not run).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub generated: Vec<ToolGenerated>,
    /// Unsolicited messages counted but not kept, and server-to-client requests left
    /// unanswered (rate limit, or write queue full), over the run (a flood); left out of the
    /// JSON when nothing was dropped.
    #[serde(default, skip_serializing_if = "Dropped::is_empty")]
    pub dropped: Dropped,
    /// The wire phase's totals (left out of the JSON when it did not run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wire: Option<WireSummary>,
    /// The features phase's requests per feature and what the server listed; left out of the
    /// JSON when the phase sent nothing.
    #[serde(default, skip_serializing_if = "FeatureCounts::is_empty")]
    pub features: FeatureCounts,
    /// With a fake upstream: per tool, whether any of its calls (every phase) reached the
    /// upstream, how many calls tried, and the smallest arguments that reached it (what the
    /// fault phases use); left out of the JSON without a fake upstream.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub upstream: Vec<ToolReach>,
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
    pub outcome: RunOutcome,
    /// Whether SIGINT or SIGTERM stopped the run before it completed (`outcome` is then
    /// `interrupted`).
    pub interrupted: bool,
    /// Why the run did not complete, when it did not: `{"kind", "message", "stderr_tail"}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorReport>,
    /// When the run did not complete: the last exchanges (at most 8), as excerpts
    /// `{"probe", "sent", "received", "outcome", "elapsed_ms"}`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exchanges: Vec<ExchangeExcerpt>,
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
    /// The report of a run that tested nothing (yet): no findings, zero totals, outcome
    /// `completed`; `command` or `url` names the server, `rerun` is the command line that
    /// runs it again.
    pub fn empty(
        seed: u64,
        command: Option<String>,
        url: Option<String>,
        rerun: Option<String>,
    ) -> Report {
        Report {
            mcp_chaos_version: env!("CARGO_PKG_VERSION").to_owned(),
            seed,
            server: ServerReport {
                command,
                url,
                server_info: Value::Null,
                protocol_version: String::new(),
            },
            summary: Summary::default(),
            findings: Vec::new(),
            versions: Vec::new(),
            outcome: RunOutcome::Completed,
            interrupted: false,
            error: None,
            exchanges: Vec::new(),
            rerun,
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

/// A tool left out, and why (in the report's `summary.skipped_tools`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Skipped {
    /// The tool's name.
    pub tool: String,
    /// Why: `"not in --tools"`, `"--skip-tools"`, or `"not readOnlyHint: true"`.
    pub reason: &'static str,
}

/// What an exchange did not keep or answer, by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Dropped {
    /// Notifications counted but not kept (over the number an exchange keeps).
    pub notifications: u64,
    /// Server-to-client requests counted but not kept.
    pub requests: u64,
    /// Server-to-client requests left unanswered because of the rate limit.
    pub throttled: u64,
    /// Replies to server-to-client requests dropped because the write queue was full.
    pub unanswered: u64,
}

impl Dropped {
    /// Whether nothing was dropped.
    pub fn is_empty(&self) -> bool {
        *self == Dropped::default()
    }

    /// Adds `other`'s counts to these.
    pub fn add(&mut self, other: &Dropped) {
        self.notifications += other.notifications;
        self.requests += other.requests;
        self.throttled += other.throttled;
        self.unanswered += other.unanswered;
    }
}

/// The wire phase's totals, in the report's summary (left out when the phase did not run).
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct WireSummary {
    /// Frames sent (shrinking candidates not included).
    pub frames: u64,
    /// Cases drawn but not sent (see the module docs).
    pub skipped: u64,
    /// Frames that failed and were shrunk.
    pub shrunk: u64,
    /// Candidates sent while shrinking.
    pub shrink_steps: u64,
    /// Wall time of the phase, in ms (shrinking and restarts included).
    pub elapsed_ms: u64,
}

impl WireSummary {
    /// Adds another campaign's totals.
    pub fn add(&mut self, other: &WireSummary) {
        self.frames += other.frames;
        self.skipped += other.skipped;
        self.shrunk += other.shrunk;
        self.shrink_steps += other.shrink_steps;
        self.elapsed_ms += other.elapsed_ms;
    }
}

/// One `resources/read` or `prompts/get` target's upstream reach (with a fake upstream), in
/// `summary.features.upstream`: whether its handler calls the upstream, and how many requests
/// ran under a fault.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct FeatureReach {
    /// `resources/read` or `prompts/get`.
    pub method: &'static str,
    /// The URI read, or the prompt's name.
    pub target: String,
    /// The template the URI was expanded from, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<String>,
    /// The prompt's arguments of the first request that reached the upstream (what the fault
    /// requests send); left out for resources and when none reached.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Value>,
    /// Whether any of its requests made an upstream request.
    pub reached: bool,
    /// Requests of it made while the fake upstream listened (healthy and under faults).
    pub requests_tried: u64,
    /// How many of them made at least one upstream request.
    pub requests_reached: u64,
    /// Requests of it sent under a fault profile.
    pub faults: u64,
    /// The upstream request paths (without the query) its requests made, in the order first
    /// seen, at most [`REACH_KEPT`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<String>,
}

/// Requests of the features phase, per feature, in the report's summary (`summary.features`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct FeatureCounts {
    /// Requests about resources and templates: list pages, reads, invalid cursors.
    pub resources: u64,
    /// Requests about prompts: list pages, gets.
    pub prompts: u64,
    /// `completion/complete` requests sent (a count).
    pub completions: u64,
    /// `logging/setLevel` requests sent (a count).
    pub logging: u64,
    /// Requests of methods behind capabilities the server did not advertise.
    pub gating: u64,
    /// Resources the server listed (all pages).
    pub resources_listed: u64,
    /// Resource templates the server listed.
    pub templates_listed: u64,
    /// Prompts the server listed.
    pub prompts_listed: u64,
    /// With a fake upstream: per `resources/read` URI and `prompts/get` prompt requested,
    /// whether its handler reached the upstream (see [`FeatureReach`]); left out of the JSON
    /// without a fake upstream or when the phase read and got nothing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub upstream: Vec<FeatureReach>,
}

impl FeatureCounts {
    /// Whether the phase sent nothing.
    pub fn is_empty(&self) -> bool {
        self.sent() == 0
    }

    /// Requests the phase sent, over every feature.
    pub fn sent(&self) -> u64 {
        self.resources + self.prompts + self.completions + self.logging + self.gating
    }

    /// Adds `other`'s counts (another version's campaign).
    pub fn add(&mut self, other: &FeatureCounts) {
        self.resources += other.resources;
        self.prompts += other.prompts;
        self.completions += other.completions;
        self.logging += other.logging;
        self.gating += other.gating;
        self.resources_listed = self.resources_listed.max(other.resources_listed);
        self.templates_listed = self.templates_listed.max(other.templates_listed);
        self.prompts_listed = self.prompts_listed.max(other.prompts_listed);
        self.upstream.extend(other.upstream.iter().cloned());
    }
}

/// One tool's reach, in the report's summary (`summary.upstream`).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct ToolReach {
    /// The tool's name, as `tools/list` gives it.
    pub tool: String,
    /// Whether any of its calls made an upstream request.
    pub reached: bool,
    /// `tools/call` requests of the tool made while the fake upstream listened (every phase).
    pub calls_tried: u64,
    /// How many of them made at least one upstream request.
    pub calls_reached: u64,
    /// The smallest arguments (by serialized size) of a call that reached the upstream: what
    /// the fault phases call the tool with. Left out of the JSON when none did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Value>,
    /// The upstream request paths (without the query) its calls made, in the order first
    /// seen, at most [`REACH_KEPT`]; the fault properties scope faults to them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<String>,
    /// The smallest distinct arguments that reached the upstream, smallest first, at most
    /// [`REACH_KEPT`] (what the fault properties draw from).
    #[serde(skip)]
    pub reaching: Vec<Value>,
}

/// The longest server output tail in [`ErrorReport::stderr_tail`], in bytes.
pub const STDERR_TAIL_BYTES: usize = 4_096;

/// How a run ended: the report's `outcome`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum RunOutcome {
    /// Every phase ran (exit 0 or 1).
    Completed,
    /// The server could not be started or did not complete initialization (exit 2).
    NotStarted,
    /// SIGINT or SIGTERM stopped the run; the findings are those found so far (exit 1 when
    /// one is a violation, else 2).
    Interrupted,
}

/// Why a run did not complete: the report's `error`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ErrorReport {
    /// `start` (the server could not be started: no spawn, an early exit, no port),
    /// `initialize` (no usable answer to `initialize` or `server/discover`), `injectors`
    /// (the fault injectors could not start) or `interrupted` (SIGINT or SIGTERM).
    pub kind: &'static str,
    /// What happened, as the terminal says it.
    pub message: String,
    /// The end of the server's output (stderr, and stdout when the transport does not read
    /// it), at most [`STDERR_TAIL_BYTES`] bytes; empty when there was none.
    pub stderr_tail: String,
}

/// One exchange, quoted in the report of a run that ended early (`exchanges`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ExchangeExcerpt {
    /// The probe, e.g. `initialize 2025-11-25`.
    pub probe: String,
    /// The frame sent (excerpt).
    pub sent: String,
    /// Frames and events received while it was open (excerpts, at most 4).
    pub received: Vec<String>,
    /// How the wait ended: `answered`, `no answer`, `gone`, ... .
    pub outcome: String,
    /// Time from send to outcome, in ms.
    pub elapsed_ms: u64,
}
