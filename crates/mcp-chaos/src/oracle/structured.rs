//! `structured-content-schema` (MC205): when a tool declares `outputSchema`, a result that is
//! not an error carries `structuredContent` that validates against it (`server/tools` §Output
//! Schema, 2025-06-18 on: servers MUST provide structured results that conform to the schema).
//! With `isError: true` the spec is silent (modelcontextprotocol#569): an invalid payload there
//! is only a warning. An `outputSchema` that does not compile is a warning.
//!
//! An SDK that checks a tool's result against its `outputSchema` before sending it turns a
//! failure into an error the model reads: an `isError` result (or, in older TypeScript SDKs, a
//! JSON-RPC -32602) saying "Output validation error: outputSchema defined but no structured
//! output returned" (Python) or "Output validation error: Tool X has an output schema but no
//! structured content was provided" (TypeScript). The server itself says its tool produced a
//! result that breaks its `outputSchema`; since what reached the wire is an error, it is a
//! warning, and it is reported here only: such text blames the tool, not the arguments, so it
//! is never `valid-args-rejected` ([`super::generated`]).

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;

use super::{Context, finding, is_error_result, result_text};
use crate::finding::{Finding, STRUCTURED_CONTENT_SCHEMA, Severity};
use crate::session::Exchange;

/// Text about a tool's output: from a mention of output validation, the output schema or
/// structured content/output to the end of its line.
static ABOUT_OUTPUT: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:output (?:validation|schema)|outputSchema|structured ?(?:output|content))\b[^\n]*").ok()
});

/// An SDK's report that the tool's result failed its `outputSchema` (the Python and TypeScript
/// SDKs' "Output validation error: …", and the like).
static OUTPUT_VALIDATION_FAILED: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"(?i)\boutput validation (?:error|failed)|\b(?:failed to validate|does not (?:match|conform to)|doesn't (?:match|conform to)) (?:the |its )?(?:tool's )?output ?schema\b|\bno structured ?(?:output|content) (?:was )?(?:returned|provided)|\binvalid structured ?(?:output|content)\b").ok()
});

/// `text` without what it says about the tool's output (see `ABOUT_OUTPUT`): what remains
/// is what it may say about the arguments.
pub fn without_output_text(text: &str) -> Cow<'_, str> {
    match ABOUT_OUTPUT.as_ref() {
        Some(r) => r.replace_all(text, ""),
        None => Cow::Borrowed(text),
    }
}

/// Whether `text` reports that the tool's result failed its `outputSchema`.
pub fn reports_output_validation(text: &str) -> bool {
    OUTPUT_VALIDATION_FAILED
        .as_ref()
        .is_some_and(|r| r.is_match(text))
}

/// The finding for an answer in which the server reports that its own result failed the
/// tool's `outputSchema`: an `isError` result or a JSON-RPC error saying so.
fn self_reported(ctx: &Context<'_>, ex: &Exchange, tool: &str) -> Option<Finding> {
    let response = ex.response()?;
    let (place, text) = match (response.error(), response.result()) {
        (Some(e), _) => (format!("JSON-RPC error {}", e.code), e.message.to_owned()),
        (None, Some(r)) if is_error_result(r) => ("an isError result".to_owned(), result_text(r)),
        _ => return None,
    };
    if !reports_output_validation(&text) {
        return None;
    }
    let mut f = finding(
        &STRUCTURED_CONTENT_SCHEMA,
        Severity::Warning,
        ctx,
        ex,
        format!(
            "{tool} declares an outputSchema, and its own output validation reported that the result for these arguments breaks it ({place}: {:?}); the model gets an error instead of the structured result",
            crate::wire::excerpt(text.as_bytes(), 200)
        ),
    );
    f.group = Some(format!("{tool}|output-validation"));
    Some(f)
}

/// Judges a tool call's result against the tool's `outputSchema`.
pub fn check(ctx: &Context<'_>, ex: &Exchange) -> Vec<Finding> {
    let Some(tool) = ex.probe.called_tool() else {
        return Vec::new();
    };
    let Some(validator) = ctx
        .tools
        .get(tool)
        .and_then(|t| t.output_validator.as_ref())
    else {
        return Vec::new();
    };
    if let Some(f) = self_reported(ctx, ex, tool) {
        return vec![f];
    }
    let Some(result) = ex.response().and_then(|r| r.result()) else {
        return Vec::new();
    };
    let validator = match validator {
        Ok(v) => v,
        Err(e) => {
            return vec![finding(
                &STRUCTURED_CONTENT_SCHEMA,
                Severity::Warning,
                ctx,
                ex,
                format!("the outputSchema of {tool} is not a valid JSON Schema: {e}"),
            )];
        }
    };
    let is_error = is_error_result(result);
    let (severity, message) = match result.get("structuredContent") {
        None if is_error => return Vec::new(),
        None => (
            Severity::Violation,
            format!(
                "{tool} declares an outputSchema but its successful result has no structuredContent"
            ),
        ),
        Some(content) => {
            let errors = crate::schema::errors(validator, content, 3);
            if errors.is_empty() {
                return Vec::new();
            }
            let severity = if is_error {
                Severity::Warning
            } else {
                Severity::Violation
            };
            (
                severity,
                format!(
                    "the structuredContent of {tool}{} does not validate against its outputSchema: {}",
                    if is_error { " (an isError result)" } else { "" },
                    errors.join("; ")
                ),
            )
        }
    };
    vec![finding(
        &STRUCTURED_CONTENT_SCHEMA,
        severity,
        ctx,
        ex,
        message,
    )]
}

/// This invariant as the oracle's [`judge`](super::judge) runs it on every exchange
/// ([`check`]), with the catalog entries it reports.
pub struct Rule;

impl super::Check for Rule {
    fn name(&self) -> &'static str {
        "structured"
    }

    fn invariants(&self) -> &'static [crate::finding::Invariant] {
        &[crate::finding::STRUCTURED_CONTENT_SCHEMA]
    }

    fn check(&self, ctx: &super::Context<'_>, ex: &crate::session::Exchange) -> Vec<Finding> {
        check(ctx, ex)
    }
}
