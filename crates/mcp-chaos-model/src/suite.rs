//! What a scenario suite run produced (`mcp-chaos scenario --report-json`, published as
//! `schemas/suite-report.schema.json`): the input of every suite reporter (terminal summary,
//! `--report-json`, `--junit`, `--sarif`, `--markdown`).
//!
//! Shape: a [`SuiteReport`] holds one [`ScenarioReport`] per scenario file run, each with its
//! [`StepReport`]s (one per `[[step]]`, in file order) and the [`ScenarioFinding`]s the
//! scenario's server produced, each classified against the scenario's `known` list and the
//! baseline ([`FindingStatus`]). Failed expectations are findings too (invariant
//! `expectation-failed`, code `MC601`), so they can be baselined like any other.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::exit;
use crate::finding::Finding;
use crate::report::ServerReport;

/// The JSON Schema (draft 2020-12) of `mcp-chaos scenario --report-json`'s suite report
/// ([`SuiteReport`]), generated from these types; committed as
/// `schemas/suite-report.schema.json`, which a test keeps current and holds real reports
/// against.
pub fn suite_report_json_schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(SuiteReport)).unwrap_or(serde_json::Value::Null)
}

/// A whole `mcp-chaos scenario` run.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct SuiteReport {
    /// The version of mcp-chaos that produced the report (its crate version).
    pub mcp_chaos_version: String,
    /// `(i, n)` when the run was one shard (`--shard i/n`, 1-based).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<(u32, u32)>,
    /// The baseline file the findings were classified against, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<PathBuf>,
    /// The scenarios, in the order of their files (sorted paths), whatever order they ran in.
    pub scenarios: Vec<ScenarioReport>,
    /// Wall time of the whole run, in ms.
    pub duration_ms: u64,
    /// Whether SIGINT or SIGTERM stopped the suite: `scenarios` then holds the scenarios that
    /// had finished, and `unfinished` the others.
    pub interrupted: bool,
    /// With `interrupted`: the scenarios that had not finished (they are not reported).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unfinished: Vec<String>,
}

impl SuiteReport {
    /// The exit code CI reads: 2 when any scenario could not be carried out (its server did
    /// not start, its sandbox could not be made), else 1 when any scenario failed, else 0;
    /// an interrupted suite that had found no failure did not complete: 2.
    pub fn exit_code(&self) -> i32 {
        let code = self
            .scenarios
            .iter()
            .map(|s| s.status.exit_code())
            .max()
            .unwrap_or(0);
        if self.interrupted && code == exit::SUCCESS {
            exit::SERVER_START
        } else {
            code
        }
    }
}

/// How a scenario ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase", tag = "status", content = "error")]
pub enum ScenarioStatus {
    /// Every expectation held and every finding was known, baselined or expected (exit 0).
    Passed,
    /// A new finding, or an expectation that did not hold (exit 1).
    Failed,
    /// The scenario could not be carried out; the message says why (exit 2).
    Error(String),
}

impl ScenarioStatus {
    /// 0, 1 or 2, as [`SuiteReport::exit_code`] reads it.
    pub fn exit_code(&self) -> i32 {
        match self {
            ScenarioStatus::Passed => exit::SUCCESS,
            ScenarioStatus::Failed => exit::VIOLATIONS,
            ScenarioStatus::Error(_) => exit::SERVER_START,
        }
    }
}

/// One scenario file's run.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ScenarioReport {
    /// The scenario's name (its `name`, or the file stem).
    pub name: String,
    /// The scenario file, as given on the command line (relative paths stay relative, so SARIF
    /// locations resolve against the repository root).
    pub file: PathBuf,
    /// Its outcome, flattened into this object: `"status"` (`passed`, `failed`, `error`)
    /// and, for `error`, `"error"` (the message).
    #[serde(flatten)]
    pub status: ScenarioStatus,
    /// The exit code of this scenario alone (see [`ScenarioStatus::exit_code`]).
    pub exit_code: i32,
    /// The server as negotiated, when it started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<ServerReport>,
    /// The run's seed (replay it with the same scenario file).
    pub seed: u64,
    /// One per `[[step]]`, in file order. Steps after a fatal error are absent.
    pub steps: Vec<StepReport>,
    /// Every distinct finding, in the order found.
    pub findings: Vec<ScenarioFinding>,
    /// Baseline entries of this scenario that were not seen this time (fixed, or not
    /// reached), the `intermittent` ones aside.
    pub fixed: Vec<BaselineEntry>,
    /// Wall time, in ms.
    pub duration_ms: u64,
}

/// One `[[step]]` of a scenario.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct StepReport {
    /// A short label, e.g. `call get_record under 404`, `generate add (64 valid, 32 invalid)`.
    pub label: String,
    /// The 1-based line of the step in the scenario file.
    pub line: usize,
    /// Exchanges made by the step (tool calls, probes, liveness pings).
    pub exchanges: u64,
    /// Wall time, in ms.
    pub duration_ms: u64,
    /// Indices into [`ScenarioReport::findings`] of the findings this step produced (a finding
    /// seen again in a later step is listed there too).
    pub findings: Vec<usize>,
    /// Whether the step passed: its expectations held and none of its findings is new.
    pub passed: bool,
}

/// A finding of a scenario, with how it was classified.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ScenarioFinding {
    /// The finding, as `mcp-chaos run` reports it.
    #[serde(flatten)]
    pub finding: Finding,
    /// A stable hash of what the finding is about (code, severity, tool, probe, fault): the
    /// same on every run of the same scenario, whatever the message's details.
    pub fingerprint: String,
    /// How it counts toward the scenario's outcome: `{"kind": "new" | "known" | "baseline" |
    /// "expected", "reason"?}` (a reason for `known` and `baseline`).
    pub status: FindingStatus,
    /// The 1-based line of the step that first produced it.
    pub line: usize,
    /// A command that replays the finding, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay_command: Option<String>,
}

/// How a finding counts toward the scenario's outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase", tag = "kind", content = "reason")]
pub enum FindingStatus {
    /// Neither known, baselined nor expected: fails the scenario.
    New,
    /// Listed in the scenario's `[[known]]`, with its reason.
    Known(String),
    /// In the baseline file, with its reason.
    Baseline(String),
    /// Asked for by an expectation (`reported = [...]`): the scenario exists to show it.
    Expected,
}

impl FindingStatus {
    /// Whether this finding fails the scenario.
    pub fn fails(&self) -> bool {
        matches!(self, FindingStatus::New)
    }
}

/// One accepted finding in a baseline file (`--baseline`), keyed by scenario and fingerprint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BaselineEntry {
    /// The name of the scenario the finding belongs to (`ScenarioReport::name`).
    pub scenario: String,
    /// The invariant's code, e.g. `MC102`.
    pub code: String,
    /// The invariant's name, e.g. `wrong-error-code` (for readers; the code is what matches).
    pub invariant: String,
    /// The tool concerned, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The probe that produced it (for readers).
    pub probe: String,
    /// The finding's [`ScenarioFinding::fingerprint`]: with `scenario`, what matches.
    pub fingerprint: String,
    /// Why the finding is accepted for now (a verdict, an upstream issue link).
    pub reason: String,
    /// The finding is true but reported in some runs only (it depends on timing or on the
    /// state the generated cases leave behind): a run that does not report it does not list
    /// it as fixed, and `--update-baseline` keeps it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub intermittent: bool,
}
