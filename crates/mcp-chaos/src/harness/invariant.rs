//! Invariants of your own, checked beside the built-in ones on every call a [`Harness`]
//! makes.
//!
//! [`Harness`]: super::Harness

use serde_json::Value;

use mcp_chaos_faults::{JournalEntry, ScopedFault};

use crate::finding::{Finding, Severity};
use crate::protocol::ProtocolVersion;
use crate::session::Exchange;

/// The `code` of every finding a user [`Invariant`] reports (its `invariant` field is the
/// invariant's [`name`](Invariant::name)).
pub const USER_CODE: &str = "USER";

/// An invariant of your own: a rule about one tool call that mcp-chaos does not know, such as
/// "a missing record is reported with its id" or "`search` never returns more than 10 hits".
///
/// Register it with [`HarnessBuilder::invariant`](super::HarnessBuilder::invariant); every
/// check ([`Harness::check_tool`](super::Harness::check_tool),
/// [`check_invalid`](super::Harness::check_invalid),
/// [`check_tool_under`](super::Harness::check_tool_under)) runs it on the call's
/// [`ExchangeView`] after the built-in invariants, and a `Some(message)` becomes a
/// [`Finding`] with code [`USER_CODE`], `invariant` = [`name`](Invariant::name), your
/// severity and message, and the call's tool, request and response excerpts and fault.
///
/// ```
/// use mcp_chaos::finding::Severity;
/// use mcp_chaos::harness::{ExchangeView, Invariant};
///
/// /// A failed call says which city it was about.
/// struct NamesTheCity;
///
/// impl Invariant for NamesTheCity {
///     fn name(&self) -> &str {
///         "error-names-the-city"
///     }
///     fn severity(&self) -> Severity {
///         Severity::Warning
///     }
///     fn check(&self, call: &ExchangeView<'_>) -> Option<String> {
///         let city = call.arguments()["city"].as_str()?;
///         (call.is_error_result() && !call.text().contains(city))
///             .then(|| format!("the error does not name the city {city:?}"))
///     }
/// }
/// ```
pub trait Invariant: Send + Sync {
    /// A stable kebab-case name, e.g. `error-names-the-city`: the finding's `invariant`.
    fn name(&self) -> &str;

    /// How bad a breach is: a [`Severity::Violation`] fails a test that asserts no
    /// violations, a [`Severity::Warning`] is reported only.
    fn severity(&self) -> Severity;

    /// `None` when the call keeps the invariant, or what went wrong, in one sentence (the
    /// finding's `message`). Called once per check, also for a call that got no answer
    /// ([`ExchangeView::answered`] is then `false`).
    fn check(&self, call: &ExchangeView<'_>) -> Option<String>;
}

/// One `tools/call` as a user [`Invariant`] sees it: the tool, the arguments sent, the answer
/// (a `CallToolResult` or a JSON-RPC error object, as JSON), and the upstream fault in effect
/// with the upstream requests the call made. A stable view: it does not expose the harness's
/// internal exchange record.
#[derive(Debug, Clone, Copy)]
pub struct ExchangeView<'a> {
    pub(super) tool: &'a str,
    pub(super) arguments: &'a Value,
    pub(super) version: ProtocolVersion,
    pub(super) exchange: &'a Exchange,
    pub(super) fault: Option<&'a ScopedFault>,
    pub(super) upstream: &'a [JournalEntry],
}

impl<'a> ExchangeView<'a> {
    /// The tool called.
    pub fn tool(&self) -> &'a str {
        self.tool
    }

    /// The `arguments` sent (a JSON object, or whatever an invalid case sent).
    pub fn arguments(&self) -> &'a Value {
        self.arguments
    }

    /// The protocol version negotiated.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.version
    }

    /// Whether a JSON-RPC response answered the call before its deadline.
    pub fn answered(&self) -> bool {
        self.exchange.response().is_some()
    }

    /// The `result` member of a success response: the `CallToolResult`
    /// (`{"content": [...], "isError"?: bool, "structuredContent"?: {...}}`).
    pub fn result(&self) -> Option<&'a Value> {
        self.exchange
            .response()
            .and_then(crate::wire::Response::result)
    }

    /// The `error` member of an error response (`{"code": int, "message": str, "data"?: any}`).
    pub fn error(&self) -> Option<&'a Value> {
        self.exchange
            .response()
            .filter(|r| r.is_error())
            .and_then(|r| r.raw().get("error"))
    }

    /// Whether the answer is a `CallToolResult` with `isError: true` (a tool execution error).
    pub fn is_error_result(&self) -> bool {
        self.result().is_some_and(crate::oracle::is_error_result)
    }

    /// The text the model reads: the result's text blocks and embedded text resources joined
    /// by newlines (empty without a result).
    pub fn text(&self) -> String {
        self.result()
            .map(crate::oracle::result_text)
            .unwrap_or_default()
    }

    /// The result's `structuredContent`, if any.
    pub fn structured_content(&self) -> Option<&'a Value> {
        self.result().and_then(|r| r.get("structuredContent"))
    }

    /// How long the call took, in ms (until its answer, or its deadline).
    pub fn elapsed_ms(&self) -> u64 {
        u64::try_from(self.exchange.elapsed.as_millis()).unwrap_or(u64::MAX)
    }

    /// The fault the fake upstream served during the call: the one given to
    /// [`check_tool_under`](super::Harness::check_tool_under), the healthy upstream for other
    /// checks of a harness with a fake upstream, `None` without one.
    pub fn fault(&self) -> Option<&'a ScopedFault> {
        self.fault
    }

    /// The requests the call made to the fake upstream (and proxy), in order, each with the
    /// fault it was served ([`JournalEntry::fault`]); empty without a fake upstream.
    pub fn upstream_requests(&self) -> &'a [JournalEntry] {
        self.upstream
    }
}

/// Runs `invariants` on `view`; each breach becomes a finding.
pub(super) fn check_all(
    invariants: &[std::sync::Arc<dyn Invariant>],
    view: &ExchangeView<'_>,
) -> Vec<Finding> {
    invariants
        .iter()
        .filter_map(|inv| {
            let message = inv.check(view)?;
            Some(Finding {
                code: USER_CODE.to_owned(),
                invariant: inv.name().to_owned(),
                severity: inv.severity(),
                protocol_version: view.version.as_str().to_owned(),
                tool: Some(view.tool.to_owned()),
                message,
                spec: String::new(),
                request: Some(crate::oracle::safe_excerpt(&view.exchange.sent)),
                response: view
                    .exchange
                    .answer_frame()
                    .map(|frame| crate::oracle::safe_excerpt(&frame.raw)),
                fault: view
                    .exchange
                    .fault
                    .as_ref()
                    .map(crate::session::FaultContext::to_value),
                probe: view.exchange.probe.label(),
                replay: None,
                occurrences: 1,
                redact: Vec::new(),
                group: None,
            })
        })
        .collect()
}
