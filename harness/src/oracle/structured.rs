//! `structured-content-schema` (MC205): when a tool declares `outputSchema`, a result that is
//! not an error carries `structuredContent` that validates against it (`server/tools` §Output
//! Schema, 2025-06-18 on: servers MUST provide structured results that conform to the schema).
//! With `isError: true` the spec is silent (modelcontextprotocol#569): an invalid payload there
//! is only a warning. An `outputSchema` that does not compile is a warning.

use super::{Context, finding, is_error_result};
use crate::finding::{Finding, STRUCTURED_CONTENT_SCHEMA, Severity};
use crate::session::Exchange;

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
