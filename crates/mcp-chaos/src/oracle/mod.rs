//! The oracle: pure functions from an [`Exchange`] (plus context) to [`Finding`]s. No I/O; one
//! file per invariant; every rule that depends on the protocol version asks the rule table
//! ([`crate::protocol::Rules`]).
//!
//! [`judge`] runs every per-exchange invariant; [`liveness::check`] judges the liveness probe
//! that follows each probe, naming the probe that preceded it.

pub mod actionable;
pub mod business_failure;
pub mod capability_gating;
pub mod chaos;
pub mod concurrency;
pub mod concurrent_dropped;
mod content;
pub mod deadline;
pub mod empty_resource_contents;
pub mod error_codes;
pub mod feature_shape;
pub mod generated;
pub mod http;
pub mod leaked;
pub mod leaks;
pub mod lifecycle;
pub mod liveness;
pub mod log_level;
pub mod masking;
pub mod no_response;
pub mod notification_flood;
pub mod notification_reply;
pub mod pagination;
pub mod prompt_errors;
pub mod raw_error;
pub mod resource_not_found;
pub mod response_id;
pub mod response_shape;
pub mod server_request_flood;
pub mod stdin_eof;
pub mod stdout;
pub mod structured;
pub mod unknown_tool;
pub mod version;
pub mod wedged;
pub mod wire_answer;

#[cfg(test)]
mod feature_tests;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

use serde_json::Value;

use crate::finding::{Finding, Invariant, Severity};
use crate::protocol::ProtocolVersion;
use crate::session::Exchange;

pub use leaks::LeakKind;

/// Longest excerpt of a frame put into a finding, in bytes.
pub const EXCERPT_BYTES: usize = 600;

/// What the oracle knows besides the exchange.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// The protocol version the exchange is judged under.
    pub version: ProtocolVersion,
    /// The server's tools, with their compiled output schemas.
    pub tools: &'a ToolTable,
    /// Exact strings that must never reach the model: the fake upstream's canaries and the
    /// secrets given to the server.
    pub exact: &'a [(LeakKind, String)],
    /// The server's advertised `capabilities` (the `InitializeResult`'s, or `server/discover`'s
    /// under 2026-07-28), or `None` when not known, in which case every capability counts as
    /// advertised. Probes of a capability the server did not advertise owe -32601
    /// ([`error_codes::gating_capability`]).
    pub capabilities: Option<&'a Value>,
}

static NO_TOOLS: LazyLock<ToolTable> = LazyLock::new(ToolTable::default);

impl Context<'static> {
    /// A context with no tools and nothing exact to look for.
    pub fn bare(version: ProtocolVersion) -> Context<'static> {
        Context {
            version,
            tools: &NO_TOOLS,
            exact: &[],
            capabilities: None,
        }
    }
}

/// A listed tool, as the oracle needs it (not its `inputSchema`, which no invariant reads:
/// the schemas of a server with thousands of tools take tens of MiB, and the campaign's plan
/// holds them already).
#[derive(Debug, Clone)]
pub struct ToolInfo {
    /// The tool's `outputSchema`, where the version has it and the tool declares one.
    pub output_schema: Option<Value>,
    /// The compiled output schema, or why it does not compile.
    pub output_validator: Option<Result<Arc<jsonschema::Validator>, String>>,
    /// The tool declares `execution.taskSupport: "required"` (2025-11-25 tasks): a plain
    /// `tools/call` without task augmentation is refused whatever its arguments.
    pub task_required: bool,
}

/// The tools of a server by name, with output schemas compiled once.
#[derive(Debug, Clone, Default)]
pub struct ToolTable {
    tools: HashMap<String, ToolInfo>,
}

impl ToolTable {
    /// Builds the table from the `tools` of `tools/list`, compiling each `outputSchema` in the
    /// dialect `version` gives a schema without `$schema`.
    pub fn new(tools: &[Value], version: ProtocolVersion) -> ToolTable {
        let mut table = HashMap::new();
        for tool in tools {
            let Some(name) = tool.get("name").and_then(Value::as_str) else {
                continue;
            };
            let output_schema = tool
                .get("outputSchema")
                .filter(|_| version.rules().structured_content)
                .cloned();
            let output_validator = output_schema.as_ref().map(|schema| {
                crate::schema::compile(schema, version.rules().schema_dialect).map(Arc::new)
            });
            table.insert(
                name.to_owned(),
                ToolInfo {
                    output_schema,
                    output_validator,
                    task_required: tool
                        .pointer("/execution/taskSupport")
                        .and_then(Value::as_str)
                        == Some("required"),
                },
            );
        }
        ToolTable { tools: table }
    }

    /// The tool called `name`.
    pub fn get(&self, name: &str) -> Option<&ToolInfo> {
        self.tools.get(name)
    }
}

/// The rubric an invariant judges text by, for `mcp-chaos explain` (printed as written), if
/// it has one: `unactionable-error` (MC203).
pub fn rubric(code: &str) -> Option<&'static str> {
    (code == crate::finding::UNACTIONABLE_ERROR.code).then_some(actionable::RUBRIC)
}

/// One invariant the oracle judges on every exchange: a module of its own (its spec
/// reference, its [`Check::check`], its tests), in the small shape [`judge`] runs. A check
/// makes findings of one exchange under the run's context (none when the exchange holds
/// nothing it judges); it reports only the catalog entries it names in
/// [`Check::invariants`] (`judge` asserts so in debug builds). Invariants judged across
/// exchanges (liveness after a probe, stdin EOF at shutdown, concurrency in the scheduler)
/// are called where their evidence is, not through this trait ([`ACROSS_EXCHANGES`]).
pub trait Check: Sync {
    /// The module's name, its file under `oracle/` (`error_codes`).
    fn name(&self) -> &'static str;
    /// The catalog entries (`MCxxx`) this check can report.
    fn invariants(&self) -> &'static [Invariant];
    /// The findings of `ex` under `ctx`.
    fn check(&self, ctx: &Context<'_>, ex: &Exchange) -> Vec<Finding>;
}

/// Every per-exchange check [`judge`] runs, in the order their findings come out.
pub static CHECKS: &[&dyn Check] = &[
    &stdout::Rule,
    &response_shape::Rule,
    &response_id::Rule,
    &no_response::Rule,
    &notification_reply::Rule,
    &notification_flood::Rule,
    &server_request_flood::Rule,
    &error_codes::Rule,
    &unknown_tool::Rule,
    &version::Rule,
    &lifecycle::Rule,
    &business_failure::Rule,
    &masking::Rule,
    &actionable::Rule,
    &leaked::Rule,
    &structured::Rule,
    &deadline::Rule,
    &http::Rule,
    &chaos::Rule,
    &generated::Rule,
    &wire_answer::Rule,
    &resource_not_found::Rule,
    &empty_resource_contents::Rule,
    &pagination::Rule,
    &prompt_errors::Rule,
    &log_level::Rule,
    &capability_gating::Rule,
];

/// The catalog entries judged across exchanges rather than by a [`Check`]: by the liveness
/// probe after each probe, at shutdown, by the scheduler, the wire and transport phases, the
/// generator and the scenario engine. With the entries of [`CHECKS`], they are the catalog.
pub const ACROSS_EXCHANGES: &[Invariant] = &[
    crate::finding::NOT_ALIVE,
    crate::finding::SERVER_DIED,
    crate::finding::SERVER_WEDGED,
    crate::finding::CRASH_ON_INPUT,
    crate::finding::STDIN_EOF_IGNORED,
    crate::finding::CONCURRENT_REQUESTS_MIXED,
    crate::finding::CONCURRENT_REQUESTS_DROPPED,
    crate::finding::UNSATISFIABLE_INPUT_SCHEMA,
    crate::finding::EXPECTATION_FAILED,
];

/// Runs every per-exchange check of [`CHECKS`] on `ex`.
pub fn judge(ctx: &Context<'_>, ex: &Exchange) -> Vec<Finding> {
    let mut out = Vec::new();
    for check in CHECKS {
        let found = check.check(ctx, ex);
        debug_assert!(
            found
                .iter()
                .all(|f| check.invariants().iter().any(|i| i.code == f.code)),
            "{} reported an invariant it does not declare",
            check.name()
        );
        out.extend(found);
    }
    out
}

/// The text a `CallToolResult` shows the model: its text blocks and embedded text resources,
/// joined by newlines.
pub fn result_text(result: &Value) -> String {
    let mut parts = Vec::new();
    for block in result
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(text) = block.get("text").and_then(Value::as_str) {
            parts.push(text);
        }
        if let Some(text) = block
            .get("resource")
            .and_then(|r| r.get("text"))
            .and_then(Value::as_str)
        {
            parts.push(text);
        }
    }
    parts.join("\n")
}

/// Whether a `CallToolResult` says `isError: true`.
pub fn is_error_result(result: &Value) -> bool {
    result.get("isError").and_then(Value::as_bool) == Some(true)
}

/// A frame as text for a report: credential-shaped strings scrubbed from the whole text
/// first (so none survives half cut), then cut to [`EXCERPT_BYTES`].
pub fn safe_excerpt(raw: &[u8]) -> String {
    safe_excerpt_of(raw, raw.len())
}

/// [`safe_excerpt`] of a frame of `total` bytes of which only the start (`raw`, at least
/// [`KEPT_BYTES`] of it) was kept: the same text, and the size of the whole frame.
pub fn safe_excerpt_of(raw: &[u8], total: usize) -> String {
    let scrubbed = leaks::scrub(&String::from_utf8_lossy(raw));
    // Scrubbing changes the length of the part kept only; the rest counts as it was.
    let total = scrubbed.len() + total.saturating_sub(raw.len());
    crate::wire::excerpt_of(scrubbed.as_bytes(), EXCERPT_BYTES, total)
}

/// The bytes of a frame worth keeping for a later [`safe_excerpt_of`]: four excerpts' worth,
/// so that a credential-shaped string running past the excerpt's end is still scrubbed whole.
pub const KEPT_BYTES: usize = 4 * EXCERPT_BYTES;

/// A finding about `ex`: fills in the tool, the probe label and the request and response
/// excerpts.
pub fn finding(
    invariant: &Invariant,
    severity: Severity,
    ctx: &Context<'_>,
    ex: &Exchange,
    message: impl Into<String>,
) -> Finding {
    let mut f = Finding::new(invariant, severity, ctx.version, message);
    f.tool = ex.probe.tool().map(str::to_owned);
    f.probe = ex.probe.label();
    f.request = Some(safe_excerpt(&ex.sent));
    f.response = ex.answer_frame().map(|frame| safe_excerpt(&frame.raw));
    f.fault = ex
        .fault
        .as_ref()
        .map(crate::session::FaultContext::to_value);
    f
}
