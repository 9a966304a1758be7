//! The scenario file format (TOML), its loading and validation.
//!
//! A scenario names one server, how to start it (with an optional sandbox of temporary files
//! and a fake upstream), the steps to play against it in order, and what must hold. Unknown
//! keys are rejected with an error naming the file, the line and the key; the JSON Schema of
//! the format ([`json_schema`], committed as `scenarios/scenario.schema.json`) lets editors
//! validate files as they are written (Taplo / Even Better TOML read a
//! `#:schema ./scenario.schema.json` first line).
//!
//! ```toml
//! name = "fixture-weather"
//! description = "The fixture's weather tool under upstream faults."
//! seed = 7
//!
//! [server]
//! stdio = ["{mcp-chaos}", "fixture"]     # program and arguments; {mcp-chaos} is this binary
//! protocol_version = "2025-11-25"        # or "auto" (the default)
//!
//! [upstream]
//! env = ["UPSTREAM_URL"]                 # a fake upstream's base URL goes in this variable
//!
//! [[step]]
//! call = { tool = "weather", arguments = { city = "Paris" } }
//! fault = "not-found"                    # the upstream answers 404 for this call
//! expect = { is_error = true, channel = "result", content_matches = "(?i)not found" }
//!
//! [[step]]
//! call = { tool = "forecast", arguments = { city = "Oslo" } }
//! fault = { fault = "unavailable", only = "first" }   # only the call's first request fails
//!
//! [[step]]
//! generate = { tool = "add", valid = 32, invalid = 16 }
//!
//! [[known]]
//! invariant = "unactionable-error"
//! reason = "upstream issue #12: the 5xx text is generic; accepted until it is fixed"
//! ```
//!
//! Substitutions, in `stdio`, `start`, `http`, `env` and `headers` values, `cwd` and sandbox `setup`
//! commands: `{mcp-chaos}` (the running mcp-chaos binary), `{sandbox}` (the scenario's
//! temporary directory), `{port}` (a free loopback port picked for this scenario),
//! `{scenario_dir}` (the absolute path of the folder of the scenario file), and `${NAME}` (an environment variable
//! of mcp-chaos; an unset one is an error naming it).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use toml::Spanned;

use crate::finding;

/// A scenario file, as written.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "mcp-chaos scenario")]
pub struct ScenarioFile {
    /// The scenario's name in reports and baselines (default: the file name without `.toml`).
    /// Names are unique within a suite.
    #[serde(default)]
    pub name: Option<String>,
    /// What the scenario shows, for readers.
    #[serde(default)]
    pub description: Option<String>,
    /// The seed of canaries, probabilistic fault schedules and generated values (default 0):
    /// a scenario is reproducible run to run.
    #[serde(default)]
    pub seed: u64,
    /// Deadline per request, in ms (default 10 000).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// How many times a server that died is restarted before the scenario gives up
    /// (default 10).
    #[serde(default)]
    pub max_restarts: Option<u32>,
    /// Random valid cases per tool in `generate` steps and `campaign` steps, unless the step
    /// says otherwise (default 64; invalid cases default to half).
    #[serde(default)]
    pub cases: Option<usize>,
    /// Time budget of the generated phase per tool, in ms (default 5 000).
    #[serde(default)]
    pub tool_budget_ms: Option<u64>,
    /// Frames the wire phase sends in `wire` and `campaign` steps (default 160, as
    /// `mcp-chaos run --wire-cases`; 0 turns the phase off).
    #[serde(default)]
    pub wire_cases: Option<usize>,
    /// Most `tools/call` requests outstanding at once in the generated phase (`--in-flight`;
    /// default 1, one call at a time, each followed by a ping).
    #[serde(default)]
    pub in_flight: Option<usize>,
    /// Call only the listed tools matching these names or globs (`*`, `?`) in `campaign`
    /// steps and in `generate`/`faults` steps without a `tool` (a step naming its tool is
    /// played as written). Default: every tool.
    #[serde(default)]
    pub tools: Vec<String>,
    /// Never call the tools matching these names or globs in campaign phases, e.g.
    /// `["delete_*", "send_email"]`.
    #[serde(default)]
    pub skip_tools: Vec<String>,
    /// In campaign phases, call only tools annotated `readOnlyHint: true`. Default false.
    #[serde(default)]
    pub read_only: bool,
    /// Run this scenario alone, never beside another (for servers that hold a fixed port or a
    /// shared resource). Default false.
    #[serde(default)]
    pub exclusive: bool,
    /// `[server]`: how to start (stdio) or reach (HTTP) the server under test. Required.
    pub server: ServerSection,
    /// Temporary files and folders made before the server starts, removed after.
    #[serde(default)]
    pub sandbox: Option<SandboxSection>,
    /// `[upstream]`: the fault-injecting fake upstream and the secrets handed to the server
    /// (default: none; `call` faults and `faults` steps need it).
    #[serde(default)]
    pub upstream: Option<UpstreamSection>,
    /// The `[[step]]` tables, played in file order, each with its source span.
    #[serde(default, rename = "step")]
    #[schemars(with = "Vec<StepSpec>")]
    pub steps: Vec<Spanned<StepSpec>>,
    /// Scenario-wide expectations: invariants that must be reported, or must hold, over the
    /// whole scenario.
    #[serde(default)]
    #[schemars(with = "Vec<InvariantExpect>")]
    pub expect: Vec<Spanned<InvariantExpect>>,
    /// Findings accepted for now, each with a reason: reported, but they do not fail the
    /// scenario.
    #[serde(default)]
    #[schemars(with = "Vec<Known>")]
    pub known: Vec<Spanned<Known>>,
}

/// `[server]`: how to start and reach the server.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ServerSection {
    /// A stdio server: the program and its arguments, e.g. `["npx", "-y", "pkg"]`.
    #[serde(default)]
    pub stdio: Option<Vec<String>>,
    /// A Streamable HTTP server: its MCP endpoint, e.g. `"http://127.0.0.1:{port}/mcp"`.
    /// Loopback hosts only.
    #[serde(default)]
    pub http: Option<String>,
    /// For `http`: the command that starts the server (program and arguments); mcp-chaos
    /// waits for the port, and kills the process tree at the end.
    #[serde(default)]
    pub start: Option<Vec<String>>,
    /// For `http` with `start`: how long to wait for the port, in ms (default 10 000).
    #[serde(default)]
    pub start_timeout_ms: Option<u64>,
    /// Environment variables for the server process (added to the inherited environment, or
    /// to the minimal one with `clean_env`).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Start the server with an empty environment but for `PATH`, `HOME`, `LANG` and the like,
    /// plus `env`. Default false.
    #[serde(default)]
    pub clean_env: bool,
    /// Point every proxy variable at a closed loopback port (so a server that fetches cannot
    /// leave the machine) unless a fake upstream proxy is asked for. Default true.
    #[serde(default = "yes")]
    pub no_egress: bool,
    /// The server's working directory (default: the current one).
    #[serde(default)]
    pub cwd: Option<String>,
    /// `auto` (default: the newest version both sides speak) or a protocol version such as
    /// `2025-11-25`.
    #[serde(default)]
    pub protocol_version: Option<String>,
    /// Largest frame accepted from the server, in bytes (default 16 MiB).
    #[serde(default)]
    pub max_frame_bytes: Option<usize>,
    /// For `http`: headers sent on every request, e.g.
    /// `{ Authorization = "Bearer ${MCP_TOKEN}" }`. Put credentials in environment variables
    /// (`${NAME}`, expanded at start; an unset one fails the scenario naming it), not in the
    /// file. Values are redacted from every report.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
}

fn yes() -> bool {
    true
}

/// `[sandbox]`: a temporary folder made for the scenario (`{sandbox}`), removed after it.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SandboxSection {
    /// Folders to create, relative to the sandbox.
    #[serde(default)]
    pub dirs: Vec<String>,
    /// Files to create, relative path → content (parent folders are created).
    #[serde(default)]
    pub files: BTreeMap<String, String>,
    /// Commands run in the sandbox, in order, before the server starts (e.g.
    /// `["git", "init", "-q"]`); each must exit 0 within 60 s.
    #[serde(default)]
    pub setup: Vec<Vec<String>>,
}

/// `[upstream]`: the fake upstream that fault injection goes through.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpstreamSection {
    /// Environment variables that receive the fake upstream's base URL.
    #[serde(default)]
    pub env: Vec<String>,
    /// Start the fault-injecting forward proxy and set the proxy variables for the server.
    #[serde(default)]
    pub proxy: bool,
    /// Point URL-typed tool arguments at the fake upstream.
    #[serde(default)]
    pub url_args: bool,
    /// The fault profiles of `faults` and `campaign` steps that name none (default: the whole
    /// catalog; see `mcp-chaos run --help`, `--faults`).
    #[serde(default)]
    pub faults: Option<Vec<String>>,
    /// Secrets handed to the server in its environment, name → value: the value must never
    /// reach anything the model reads.
    #[serde(default)]
    pub secrets: BTreeMap<String, String>,
}

/// One `[[step]]`: exactly one action key (`call`, `read`, `prompt`, `generate`, `faults`,
/// `probes`, `baseline`, `chaos`, `version_probe`, `wire`, `campaign`), with what must hold
/// after it.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StepSpec {
    /// A label for reports (default: one made from the action).
    #[serde(default)]
    pub name: Option<String>,
    /// Call one tool (`tools/call`), optionally under `fault`.
    #[serde(default)]
    pub call: Option<CallSpec>,
    /// With `call`: the upstream fault in effect during the call (needs `[upstream]`): a fault
    /// profile such as `not-found`, `rate-limited=30`, `hang` (every upstream request of the
    /// call gets it), or a table that scopes it: `{ fault = "unavailable", path =
    /// "/robots.txt" }` (only requests to that path; the others answer 200), `only =
    /// "first"`, `nth = 2`, `probability = 0.3` (with an optional `seed`), a path with one of
    /// those.
    #[serde(default)]
    pub fault: Option<mcp_chaos_faults::ScopedFault>,
    /// Read one resource (`resources/read`).
    #[serde(default)]
    pub read: Option<ReadSpec>,
    /// Get one prompt (`prompts/get`).
    #[serde(default)]
    pub prompt: Option<PromptSpec>,
    /// The generated phase for one tool or all.
    #[serde(default)]
    pub generate: Option<GenerateSpec>,
    /// Call a tool (or every tool that reached the upstream in its baseline call) under each
    /// of a list of upstream faults.
    #[serde(default)]
    pub faults: Option<FaultsSpec>,
    /// The protocol probes (malformed frames, unknown method and tool, notifications, batch,
    /// HTTP-level probes). `true` to run.
    #[serde(default)]
    pub probes: Option<bool>,
    /// Call every listed tool once with small valid arguments. `true` to run.
    #[serde(default)]
    pub baseline: Option<bool>,
    /// The transport-chaos probes (concurrency, duplicate ids, framing, ping, cancel and
    /// disconnect during a call, large requests). `true` to run.
    #[serde(default)]
    pub chaos: Option<bool>,
    /// Probe version negotiation with a version no release has. `true` to run.
    #[serde(default)]
    pub version_probe: Option<bool>,
    /// The wire phase: the scenario's `wire_cases` frames drawn by the generator of
    /// `mcp_chaos::fuzz` (valid messages and near-misses: invalid UTF-8, deep nesting,
    /// duplicate keys, odd ids, truncation, huge strings), each judged by the answer it is
    /// owed and followed by a liveness ping; failing frames are shrunk. `true` to run.
    #[serde(default)]
    pub wire: Option<bool>,
    /// The whole campaign of `mcp-chaos run`, with its phases switchable.
    #[serde(default)]
    pub campaign: Option<CampaignSpec>,
    /// What must hold after the step.
    #[serde(default)]
    pub expect: Option<StepExpect>,
}

/// `call = { tool = "...", arguments = {...} }`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CallSpec {
    /// The name of the tool to call, as `tools/list` gives it.
    pub tool: String,
    /// Its arguments (default: a small valid value generated from its `inputSchema`).
    #[serde(default)]
    pub arguments: Option<Value>,
}

/// `read = { uri = "..." }`: `resources/read` of one URI (`${NAME}` and the other
/// substitutions apply).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadSpec {
    /// The URI to read, after substitution.
    pub uri: String,
}

/// `prompt = { name = "...", arguments = { ... } }`: `prompts/get` of one prompt.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PromptSpec {
    /// The prompt's name, as `prompts/list` gives it.
    pub name: String,
    /// Its arguments, a string per argument name (default: none).
    #[serde(default)]
    pub arguments: Option<BTreeMap<String, String>>,
}

/// `generate = { tool = "...", valid = 64, invalid = 32 }`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GenerateSpec {
    /// The tool (default: every listed tool).
    #[serde(default)]
    pub tool: Option<String>,
    /// Random valid cases, after the boundary and hostile ones (default: the scenario's
    /// `cases`).
    #[serde(default)]
    pub valid: Option<usize>,
    /// Random invalid cases (default: half of `valid`).
    #[serde(default)]
    pub invalid: Option<usize>,
}

/// `faults = { tool = "...", faults = ["not-found", "rate-limited=30", { fault = "hang", nth = 2 }] }`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FaultsSpec {
    /// The tool (default: every tool whose baseline call reached the fake upstream).
    #[serde(default)]
    pub tool: Option<String>,
    /// The faults, one call each: fault profiles, or scoped faults as in a `call` step's
    /// `fault` (default: `[upstream] faults`, else the whole catalog).
    #[serde(default)]
    pub faults: Option<Vec<mcp_chaos_faults::ScopedFault>>,
}

/// `campaign = {}`: every phase of `mcp-chaos run`, each on unless switched off.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CampaignSpec {
    /// Protocol probes (default true).
    #[serde(default = "yes")]
    pub probes: bool,
    /// Tool calls: baseline, generated and fault phases (default true).
    #[serde(default = "yes")]
    pub tool_calls: bool,
    /// The generated phase (default true).
    #[serde(default = "yes")]
    pub generated: bool,
    /// Transport chaos (default true).
    #[serde(default = "yes")]
    pub chaos: bool,
    /// The version-negotiation probe (default true).
    #[serde(default = "yes")]
    pub version_probe: bool,
    /// Over a Streamable HTTP session: end it with DELETE, then check its id is refused with
    /// 404 (default true).
    #[serde(default = "yes")]
    pub end_session: bool,
    /// The wire phase (default true; it sends the scenario's `wire_cases` frames).
    #[serde(default = "yes")]
    pub wire: bool,
    /// The features phase: resources, prompts, completion, logging and capability gating, for
    /// what the server advertises (default true).
    #[serde(default = "yes")]
    pub features: bool,
}

/// Which channel a tool call's answer came on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Channel {
    /// A JSON-RPC result (a `CallToolResult`, `isError` true or false).
    Result,
    /// A JSON-RPC error (a protocol error).
    Error,
}

/// `expect = {...}` of a step. The outcome keys apply to `call` steps (`channel`,
/// `error_code` and `content_matches` to `read` and `prompt` steps too, where the text is the
/// resource contents' or the prompt messages' text); `reported` and `holds` to every step.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StepExpect {
    /// The answer is a JSON-RPC result (`result`) or a JSON-RPC error (`error`).
    #[serde(default)]
    pub channel: Option<Channel>,
    /// The `CallToolResult`'s `isError` (absent counts as false). Implies `channel = "result"`.
    #[serde(default)]
    pub is_error: Option<bool>,
    /// The JSON-RPC error's code, e.g. -32602. Implies `channel = "error"`.
    #[serde(default)]
    pub error_code: Option<i64>,
    /// A regular expression (Rust `regex` syntax; `(?i)` for case-insensitive) that the text
    /// the model reads must match: the result's text content, or the error's message.
    #[serde(default)]
    pub content_matches: Option<String>,
    /// Values `structuredContent` must hold, by path: a JSON pointer (`/items/0/name`) or a
    /// dotted path (`items.0.name`).
    #[serde(default)]
    pub structured_content: BTreeMap<String, Value>,
    /// Invariants (names or codes) that this step must report: the scenario exists to show
    /// them (their findings do not fail it).
    #[serde(default)]
    pub reported: Vec<String>,
    /// Invariants (names or codes) this step must not report, even where the baseline or
    /// `[[known]]` would accept them.
    #[serde(default)]
    pub holds: Vec<String>,
}

/// `[[expect]]`: invariants over the whole scenario.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InvariantExpect {
    /// Invariants (names or codes) the scenario must report (their findings do not fail it).
    #[serde(default)]
    pub reported: Vec<String>,
    /// Invariants (names or codes) that must not be reported anywhere in the scenario.
    #[serde(default)]
    pub holds: Vec<String>,
}

/// `[[known]]`: a finding accepted for now.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Known {
    /// The invariant accepted, by name (`wrong-error-code`) or code (`MC102`).
    pub invariant: String,
    /// Only findings on this tool (default: any).
    #[serde(default)]
    pub tool: Option<String>,
    /// Only findings whose probe label contains this text (default: any).
    #[serde(default)]
    pub probe: Option<String>,
    /// Why it is accepted (a verdict, an upstream issue link). Required.
    pub reason: String,
}

/// What one step does, validated.
#[derive(Debug, Clone)]
pub enum Action {
    /// `call`, optionally under a fault.
    Call {
        /// The name of the tool to call.
        tool: String,
        /// Its arguments (`None`: the planned small valid value).
        arguments: Option<Value>,
        /// The upstream fault during the call, and the requests it hits.
        fault: Option<mcp_chaos_faults::ScopedFault>,
    },
    /// `read`: `resources/read` of a URI.
    Read {
        /// The URI to read, as written in the step.
        uri: String,
    },
    /// `prompt`: `prompts/get` of a prompt.
    Prompt {
        /// The name of the prompt to get.
        name: String,
        /// Its arguments (an object of strings; empty when none were given).
        arguments: Value,
    },
    /// `generate`: the generated phase (boundary, hostile, random valid and invalid cases).
    Generate {
        /// The tool to generate cases for (`None`: every listed tool).
        tool: Option<String>,
        /// Valid cases (`None`: the scenario's default).
        valid: Option<usize>,
        /// Invalid cases (`None`: half of valid).
        invalid: Option<usize>,
    },
    /// `faults`: calls under each of a list of upstream faults.
    Faults {
        /// The tool (`None`: every tool that reached the upstream).
        tool: Option<String>,
        /// The faults (`None`: the scenario's default list, on every request).
        faults: Option<Vec<mcp_chaos_faults::ScopedFault>>,
    },
    /// `probes = true`: the protocol probes.
    Probes,
    /// `baseline = true`: one small valid call per listed tool.
    Baseline,
    /// `chaos = true`: the transport-chaos probes.
    Chaos,
    /// `version_probe = true`: the version-negotiation probe.
    VersionProbe,
    /// `wire = true`: the wire phase (`wire_cases` generated frames).
    Wire,
    /// `campaign = {...}`: the whole `mcp-chaos run` campaign, phases as switched.
    Campaign(CampaignSpec),
}

/// One `[[step]]` after validation: exactly one [`Action`], its label and expectations.
#[derive(Debug, Clone)]
pub struct Step {
    /// Its label in reports: the step's `name`, else one made from the action (e.g.
    /// `call weather under not-found`).
    pub label: String,
    /// The 1-based line of its `[[step]]` in the file.
    pub line: usize,
    /// The step's one action.
    pub action: Action,
    /// What must hold after it.
    pub expect: StepExpect,
    /// `expect.content_matches`, compiled (`None` when the step sets none).
    pub content_regex: Option<regex::Regex>,
}

/// A loaded, validated scenario, as [`load`] and [`parse`] return it.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// The file it came from.
    pub path: PathBuf,
    /// Its name in reports and baselines: `name`, else the file name without `.toml`.
    pub name: String,
    /// The file as written.
    pub file: ScenarioFile,
    /// Its `[[step]]` tables, validated, in file order.
    pub steps: Vec<Step>,
    /// The default fault list (`[upstream] faults`, else the catalog).
    pub faults: Vec<mcp_chaos_faults::Fault>,
    /// 1-based lines of the `[[expect]]` tables.
    pub expect_lines: Vec<usize>,
    /// 1-based lines of the `[[known]]` tables.
    pub known_lines: Vec<usize>,
}

/// A scenario file that could not be loaded: the message names the file, the line and the
/// key (or what is wrong).
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct LoadError(pub String);

/// The 1-based line of byte offset `at` in `text`.
pub fn line_of(text: &str, at: usize) -> usize {
    text.as_bytes()[..at.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// The 1-based column (in characters) of byte offset `at` in `text`.
pub fn column_of(text: &str, at: usize) -> usize {
    let at = at.min(text.len());
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    text.get(start..at).map_or(1, |s| s.chars().count() + 1)
}

/// Reads and validates the scenario at `path`.
///
/// # Errors
///
/// [`LoadError`] if the file cannot be read, or any error of [`parse`]. Errors name the file
/// and line: TOML syntax, unknown keys, wrong types, a step without exactly one action, an
/// unknown invariant or fault name, a bad regular expression, `call`-only expectations on
/// another step, `[server]` without exactly one of `stdio`/`http`.
pub fn load(path: &Path) -> Result<Scenario, LoadError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| LoadError(format!("{}: cannot read: {e}", path.display())))?;
    parse(path, &text)
}

/// Parses and validates scenario `text` (read from `path`, which names it in errors).
///
/// # Errors
///
/// [`LoadError`], as `path:line[:column]: message`, on invalid TOML or a scenario that fails
/// validation (see [`load`]).
pub fn parse(path: &Path, text: &str) -> Result<Scenario, LoadError> {
    let shown = path.display();
    let file: ScenarioFile = toml::from_str(text).map_err(|e| {
        let line = e
            .span()
            .map(|s| format!(":{}:{}", line_of(text, s.start), column_of(text, s.start)))
            .unwrap_or_default();
        LoadError(format!(
            "{shown}{line}: {}",
            e.message().trim_end().replace('\n', " ")
        ))
    })?;
    let err = |line: usize, msg: String| LoadError(format!("{shown}:{line}: {msg}"));
    let name = file.name.clone().unwrap_or_else(|| {
        path.file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "scenario".into())
    });
    let server_line = text
        .lines()
        .position(|l| l.trim_start().starts_with("[server]"))
        .map_or(1, |i| i + 1);
    let s = &file.server;
    match (&s.stdio, &s.http) {
        (Some(_), Some(_)) => {
            return Err(err(
                server_line,
                "[server] has both `stdio` and `http`; give one".into(),
            ));
        }
        (None, None) => {
            return Err(err(
                server_line,
                "[server] needs `stdio = [program, args...]` or `http = \"URL\"`".into(),
            ));
        }
        (Some(cmd), None) if cmd.is_empty() => {
            return Err(err(server_line, "[server] `stdio` is empty".into()));
        }
        (Some(_), None) if !s.headers.is_empty() => {
            return Err(err(
                server_line,
                "[server] `headers` go with `http` (a stdio server gets `env`)".into(),
            ));
        }
        (Some(_), None) if s.start.is_some() => {
            return Err(err(
                server_line,
                "[server] `start` goes with `http` (a stdio server is started by `stdio`)".into(),
            ));
        }
        _ => {}
    }
    for name in s.headers.keys() {
        crate::auth::check_name(name)
            .map_err(|e| err(server_line, format!("[server] headers: {e}")))?;
    }
    if let Some(v) = &s.protocol_version
        && v != "auto"
        && v.parse::<crate::protocol::ProtocolVersion>().is_err()
    {
        return Err(err(
            server_line,
            format!(
                "[server] protocol_version {v:?} is not \"auto\" or a known version ({})",
                crate::protocol::ProtocolVersion::ALL
                    .map(|v| v.to_string())
                    .join(", ")
            ),
        ));
    }
    let upstream = file.upstream.clone().unwrap_or_default();
    let faults = match &upstream.faults {
        None => mcp_chaos_faults::Fault::catalog(),
        Some(list) => parse_faults(list).map_err(|e| err(1, format!("[upstream] faults: {e}")))?,
    };
    let has_upstream = !upstream.env.is_empty() || upstream.proxy || upstream.url_args;
    let mut steps = Vec::new();
    for (i, spanned) in file.steps.iter().enumerate() {
        let line = line_of(text, spanned.span().start);
        let spec = spanned.get_ref();
        let at = |msg: String| err(line, format!("step {}: {msg}", i + 1));
        let mut validated = step(spec, has_upstream).map_err(at)?;
        validated.line = line;
        steps.push(validated);
    }
    let mut expect_lines = Vec::new();
    for e in &file.expect {
        let line = line_of(text, e.span().start);
        expect_lines.push(line);
        for inv in e.get_ref().reported.iter().chain(&e.get_ref().holds) {
            check_invariant(inv).map_err(|m| err(line, format!("[[expect]]: {m}")))?;
        }
    }
    let mut known_lines = Vec::new();
    for k in &file.known {
        let line = line_of(text, k.span().start);
        known_lines.push(line);
        check_invariant(&k.get_ref().invariant)
            .map_err(|m| err(line, format!("[[known]]: {m}")))?;
        if k.get_ref().reason.trim().is_empty() {
            return Err(err(
                line,
                "[[known]]: `reason` is empty; say why it is accepted".into(),
            ));
        }
    }
    Ok(Scenario {
        path: path.to_owned(),
        name,
        file,
        steps,
        faults,
        expect_lines,
        known_lines,
    })
}

fn parse_faults(list: &[String]) -> Result<Vec<mcp_chaos_faults::Fault>, String> {
    list.iter()
        .map(|f| {
            f.parse::<mcp_chaos_faults::Fault>()
                .map_err(|e| e.to_string())
        })
        .collect()
}

fn check_invariant(name: &str) -> Result<(), String> {
    finding::lookup(name)
        .map(|_| ())
        .ok_or_else(|| format!("unknown invariant {name:?} (see `mcp-chaos explain` for the list)"))
}

fn step(spec: &StepSpec, has_upstream: bool) -> Result<Step, String> {
    let mut actions = Vec::new();
    if let Some(call) = &spec.call {
        let fault = spec.fault.clone();
        if fault.is_some() && !has_upstream {
            return Err(
                "`fault` needs a fake upstream: add [upstream] with `env`, `proxy` or `url_args`"
                    .into(),
            );
        }
        actions.push((
            "call",
            Action::Call {
                tool: call.tool.clone(),
                arguments: call.arguments.clone(),
                fault,
            },
        ));
    } else if spec.fault.is_some() {
        return Err("`fault` goes with `call` (use `faults = {...}` for a list)".into());
    }
    if let Some(g) = &spec.generate {
        actions.push((
            "generate",
            Action::Generate {
                tool: g.tool.clone(),
                valid: g.valid,
                invalid: g.invalid,
            },
        ));
    }
    if let Some(f) = &spec.faults {
        if !has_upstream {
            return Err(
                "`faults` needs a fake upstream: add [upstream] with `env`, `proxy` or `url_args`"
                    .into(),
            );
        }
        let faults = f.faults.clone();
        actions.push((
            "faults",
            Action::Faults {
                tool: f.tool.clone(),
                faults,
            },
        ));
    }
    for (key, flag, action) in [
        ("probes", spec.probes, Action::Probes),
        ("baseline", spec.baseline, Action::Baseline),
        ("chaos", spec.chaos, Action::Chaos),
        ("version_probe", spec.version_probe, Action::VersionProbe),
        ("wire", spec.wire, Action::Wire),
    ] {
        match flag {
            Some(true) => actions.push((key, action)),
            Some(false) => return Err(format!("`{key} = false` does nothing; remove the step")),
            None => {}
        }
    }
    if let Some(c) = &spec.campaign {
        actions.push(("campaign", Action::Campaign(c.clone())));
    }
    if let Some(r) = &spec.read {
        actions.push(("read", Action::Read { uri: r.uri.clone() }));
    }
    if let Some(p) = &spec.prompt {
        let arguments = Value::Object(
            p.arguments
                .iter()
                .flatten()
                .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                .collect(),
        );
        actions.push((
            "prompt",
            Action::Prompt {
                name: p.name.clone(),
                arguments,
            },
        ));
    }
    let action = match actions.len() {
        1 => actions.remove(0),
        0 => {
            return Err("no action: give one of call, read, prompt, generate, faults, probes, baseline, chaos, version_probe, wire, campaign".into());
        }
        _ => {
            let keys: Vec<_> = actions.iter().map(|(k, _)| format!("`{k}`")).collect();
            return Err(format!(
                "one action per step, found {}; split them into several [[step]]s",
                keys.join(" and ")
            ));
        }
    };
    let expect = spec.expect.clone().unwrap_or_default();
    let is_call = matches!(action.1, Action::Call { .. });
    let is_feature = matches!(action.1, Action::Read { .. } | Action::Prompt { .. });
    let call_keys = expect.is_error.is_some() || !expect.structured_content.is_empty();
    let outcome_keys =
        expect.channel.is_some() || expect.error_code.is_some() || expect.content_matches.is_some();
    if call_keys && !is_call {
        return Err(format!(
            "expect: is_error and structured_content apply to `call` steps, not `{}`",
            action.0
        ));
    }
    if outcome_keys && !is_call && !is_feature {
        return Err(format!(
            "expect: channel, error_code and content_matches apply to `call`, `read` and `prompt` steps, not `{}`",
            action.0
        ));
    }
    match (expect.channel, expect.is_error, expect.error_code) {
        (Some(Channel::Error), Some(_), _) => {
            return Err("expect: `is_error` is about a result, but `channel = \"error\"`".into());
        }
        (Some(Channel::Result), _, Some(_)) => {
            return Err(
                "expect: `error_code` is about an error, but `channel = \"result\"`".into(),
            );
        }
        (_, Some(_), Some(_)) => {
            return Err("expect: `is_error` and `error_code` cannot both hold".into());
        }
        _ => {}
    }
    for inv in expect.reported.iter().chain(&expect.holds) {
        check_invariant(inv).map_err(|m| format!("expect: {m}"))?;
    }
    let content_regex = expect
        .content_matches
        .as_deref()
        .map(|re| {
            regex::Regex::new(re)
                .map_err(|e| format!("expect: content_matches is not a regular expression: {e}"))
        })
        .transpose()?;
    let label = spec.name.clone().unwrap_or_else(|| label(&action.1));
    Ok(Step {
        label,
        line: 0,
        action: action.1,
        expect,
        content_regex,
    })
}

/// The default label of an action, e.g. `call weather under not-found`.
fn label(action: &Action) -> String {
    match action {
        Action::Call { tool, fault, .. } => match fault {
            Some(f) if f.scope().is_every_request() => {
                format!("call {tool} under {}", f.fault().name())
            }
            Some(f) => format!("call {tool} under {} on {}", f.fault().name(), f.scope()),
            None => format!("call {tool}"),
        },
        Action::Generate {
            tool,
            valid,
            invalid,
        } => {
            let what = tool.as_deref().unwrap_or("every tool");
            match (valid, invalid) {
                (Some(v), Some(i)) => format!("generate {what} ({v} valid, {i} invalid)"),
                (Some(v), None) => format!("generate {what} ({v} valid)"),
                _ => format!("generate {what}"),
            }
        }
        Action::Faults { tool, faults } => {
            let what = tool.as_deref().unwrap_or("every upstream tool");
            match faults {
                Some(f) => format!("faults on {what} ({} profiles)", f.len()),
                None => format!("faults on {what}"),
            }
        }
        Action::Probes => "protocol probes".into(),
        Action::Baseline => "baseline calls".into(),
        Action::Chaos => "transport chaos".into(),
        Action::VersionProbe => "version negotiation".into(),
        Action::Wire => "wire phase".into(),
        Action::Campaign(_) => "campaign".into(),
        Action::Read { uri } => format!("read {uri}"),
        Action::Prompt { name, .. } => format!("prompt {name}"),
    }
}

/// The JSON Schema of the scenario format (draft 2020-12), generated from these types.
pub fn json_schema() -> Value {
    serde_json::to_value(schemars::schema_for!(ScenarioFile)).unwrap_or(Value::Null)
}

/// Scenario files under `paths`, sorted: a file is taken as given; a folder is searched
/// recursively for `*.toml` files other than `baseline.toml` (the baseline's conventional
/// name).
///
/// # Errors
///
/// [`LoadError`] if a path is neither a file nor a folder (e.g. does not exist), or a folder
/// cannot be read.
pub fn discover(paths: &[PathBuf]) -> Result<Vec<PathBuf>, LoadError> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            walk(p, &mut out)
                .map_err(|e| LoadError(format!("{}: cannot read folder: {e}", p.display())))?;
        } else if p.is_file() {
            out.push(p.clone());
        } else {
            return Err(LoadError(format!(
                "{}: no such file or folder",
                p.display()
            )));
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            walk(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "toml")
            && path.file_name().is_some_and(|n| n != "baseline.toml")
        {
            out.push(path);
        }
    }
    Ok(())
}

/// The slice of `items` that shard `i` of `n` (1-based) runs: every item whose index is
/// `i - 1` modulo `n`. Over `i = 1..=n` the shards cover every item exactly once.
pub fn shard<T>(items: Vec<T>, i: u32, n: u32) -> Vec<T> {
    items
        .into_iter()
        .enumerate()
        .filter(|(k, _)| n > 0 && (*k as u64) % u64::from(n) == u64::from(i.saturating_sub(1)))
        .map(|(_, t)| t)
        .collect()
}

#[cfg(test)]
mod tests {
    use mcp_chaos_faults::{Fault, Scope, ScopedFault};

    use super::*;

    fn scenario(steps: &str) -> Result<Scenario, LoadError> {
        let text = format!(
            "name = \"s\"\n[server]\nstdio = [\"true\"]\n[upstream]\nenv = [\"UPSTREAM_URL\"]\n{steps}"
        );
        parse(Path::new("s.toml"), &text)
    }

    fn call_fault(step: &Step) -> Option<&ScopedFault> {
        match &step.action {
            Action::Call { fault, .. } => fault.as_ref(),
            _ => None,
        }
    }

    #[test]
    fn a_call_fault_is_a_profile_or_a_scoped_table() {
        let s = scenario(
            r#"
[[step]]
call = { tool = "forecast" }
fault = "rate-limited=30"

[[step]]
call = { tool = "forecast" }
fault = { path = "/robots.txt", fault = "unavailable" }

[[step]]
call = { tool = "forecast" }
fault = { fault = "not-found", only = "first" }

[[step]]
call = { tool = "forecast" }
fault = { fault = "hang", nth = 2, path = "/data" }

[[step]]
call = { tool = "forecast" }
fault = { fault = "bad-gateway", probability = 0.3, seed = 9 }

[[step]]
faults = { faults = ["gone", { fault = "reset", only = "first" }] }
"#,
        )
        .expect("valid");
        let faults: Vec<Option<&ScopedFault>> = s.steps.iter().map(call_fault).collect();
        assert_eq!(
            faults[..5],
            [
                Some(&ScopedFault::every(Fault::rate_limit(30))),
                Some(&Fault::Unavailable.scoped(Scope::every().on_path("/robots.txt"))),
                Some(&Fault::NotFound.scoped(Scope::first())),
                Some(&Fault::Hang.scoped(Scope::nth(2).on_path("/data"))),
                Some(&Fault::BadGateway.scoped(Scope::probability_seeded(0.3, 9))),
            ]
        );
        let labels: Vec<&str> = s.steps.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(labels[0], "call forecast under rate-limited");
        assert_eq!(
            labels[2],
            "call forecast under not-found on the first request only"
        );
        match &s.steps[5].action {
            Action::Faults {
                faults: Some(list), ..
            } => assert_eq!(
                list,
                &[
                    ScopedFault::every(Fault::Gone),
                    Fault::Reset.scoped(Scope::first())
                ]
            ),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_bad_fault_table_names_the_line_column_and_key() {
        let bad = [
            (
                "fault = { fault = \"unavailable\", pth = \"/x\" }",
                "s.toml:8:34: unknown field `pth`",
            ),
            (
                "fault = { fault = \"unavailable\", only = \"last\" }",
                "unknown variant `last`",
            ),
            (
                "fault = { fault = \"hang\", only = \"first\", nth = 2 }",
                "s.toml:8:9: `only`, `nth` and `probability` exclude each other",
            ),
            (
                "fault = { fault = \"hang\", seed = 2 }",
                "`seed` goes with `probability`",
            ),
            (
                "fault = { fault = \"hang\", probability = 1.5 }",
                "from 0 to 1",
            ),
            (
                "fault = { fault = \"hang\", path = \"data\" }",
                "must start with '/'",
            ),
            ("fault = { fault = \"teapot\" }", "unknown fault name"),
            ("fault = \"teapot\"", "s.toml:8:9: invalid fault \"teapot\""),
            ("fault = 3", "a fault profile such as"),
        ];
        for (line, wanted) in bad {
            let err = scenario(&format!("[[step]]\ncall = {{ tool = \"x\" }}\n{line}\n"))
                .expect_err(line)
                .to_string();
            assert!(err.contains(wanted), "{line}: {err}");
        }
        // A scoped fault still needs a fake upstream.
        let text = "name = \"s\"\n[server]\nstdio = [\"true\"]\n[[step]]\ncall = { tool = \"x\" }\nfault = { fault = \"hang\", only = \"first\" }\n";
        let err = parse(Path::new("s.toml"), text)
            .expect_err("no upstream")
            .to_string();
        assert!(err.contains("needs a fake upstream"), "{err}");
    }

    #[test]
    fn columns_count_characters() {
        let text = "ab\ncdé f";
        assert_eq!((line_of(text, 0), column_of(text, 0)), (1, 1));
        assert_eq!((line_of(text, 3), column_of(text, 3)), (2, 1));
        assert_eq!((line_of(text, 7), column_of(text, 7)), (2, 4));
    }
}
