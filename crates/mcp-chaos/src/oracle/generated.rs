//! Invariants of calls with generated arguments (`server/tools` §Error Handling, per version):
//! - `valid-args-rejected` (MC301, violation): schema-valid arguments answered with -32602, or
//!   with an `isError` result whose text blames the arguments (validation vocabulary such as
//!   "invalid arguments", "validation error", "is a required property"). Text about the tool's
//!   *output* ("Output validation error: outputSchema defined but no structured output
//!   returned", the SDKs' check of a result against the tool's `outputSchema`) blames the
//!   tool, not the arguments: that is `structured-content-schema`'s ([`super::structured`]).
//! - `invalid-args-accepted` (MC302, warning): arguments that break exactly one constraint
//!   answered with a success.
//! - `invalid-args-wrong-channel` (MC303): from 2025-11-25 (SEP-1303) an input validation
//!   failure belongs in an `isError` result, so a JSON-RPC error is a warning; up to 2025-06-18
//!   either channel is accepted, but a protocol error should carry -32602.
//! - `unactionable-error` (MC203, warning): the error for invalid arguments does not name the
//!   argument (unless it names another argument of the call: then the call failed for another
//!   reason first).
//!
//! A tool that requires task augmentation (`execution.taskSupport: "required"`) refuses a plain
//! call whatever its arguments, so its answers say nothing about argument handling: skipped.

use std::sync::LazyLock;

use regex::Regex;

use super::{Context, finding, is_error_result, result_text};
use crate::finding::{
    Finding, INVALID_ARGS_ACCEPTED, INVALID_ARGS_WRONG_CHANNEL, Severity, UNACTIONABLE_ERROR,
    VALID_ARGS_REJECTED,
};
use crate::protocol::InputValidationChannel;
use crate::session::{Exchange, Probe};
use crate::wire::INVALID_PARAMS;

static BLAMES_ARGUMENTS: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b(?:invalid (?:tool )?(?:arguments?|params|parameters?|input)|input validation|validation (?:error|failed)|failed to validate|schema validation|does not match (?:the )?(?:input )?schema|is not of type|is a required property|field required|missing required (?:argument|parameter|property|field))\b",
    )
    .ok()
});

/// Operating-system errors whose text reads "invalid argument" (`EINVAL`, errno 22): a
/// failure of what the tool did with the arguments, not a verdict on them.
static OS_INVALID_ARGUMENT: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"(?i)EINVAL:?\s*invalid argument|\[Errno 22\]\s*invalid argument|invalid argument \(os error 22\)").ok()
});

/// Whether an error text blames the arguments (validation vocabulary; an OS `EINVAL`
/// message does not count, and neither does what the text says of the tool's output: from
/// the first mention of the output, `outputSchema` or structured content to the end of the
/// line).
pub fn blames_arguments(text: &str) -> bool {
    let text = match OS_INVALID_ARGUMENT.as_ref() {
        Some(os) => os.replace_all(text, ""),
        None => text.into(),
    };
    let text = super::structured::without_output_text(&text);
    BLAMES_ARGUMENTS.as_ref().is_some_and(|r| r.is_match(&text))
}

/// Judges a call with generated arguments.
pub fn check(ctx: &Context<'_>, ex: &Exchange) -> Vec<Finding> {
    let Probe::Generated {
        tool,
        violation,
        arguments,
        ..
    } = &ex.probe
    else {
        return Vec::new();
    };
    if ctx.tools.get(tool).is_some_and(|t| t.task_required) {
        return Vec::new();
    }
    let Some(response) = ex.response() else {
        return Vec::new();
    };
    let error = response.error();
    let result = response.result();
    let mut out = Vec::new();
    match violation {
        None => {
            let rejected = match (error, result) {
                // An SDK that reports the tool's output failing its outputSchema with -32602
                // blames the tool, not the arguments: structured-content-schema reports it.
                (Some(e), _)
                    if e.code == INVALID_PARAMS
                        && !super::structured::reports_output_validation(e.message) =>
                {
                    Some(format!("JSON-RPC error -32602 ({:?})", e.message))
                }
                (None, Some(r)) if is_error_result(r) && blames_arguments(&result_text(r)) => {
                    Some("an isError result that blames the arguments".to_owned())
                }
                _ => None,
            };
            if let Some(how) = rejected {
                let mut f = finding(
                    &VALID_ARGS_REJECTED,
                    Severity::Violation,
                    ctx,
                    ex,
                    format!(
                        "{tool} rejected arguments that satisfy its inputSchema, with {how}; the schema does not say what the tool checks"
                    ),
                );
                f.group = Some(format!("{tool}|rejected"));
                out.push(f);
            }
        }
        Some(v) => {
            let at = if v.pointer.is_empty() {
                "/"
            } else {
                &v.pointer
            };
            let what = format!("{} at {at:?} ({})", v.keyword, v.description);
            if result.is_some_and(|r| !is_error_result(r)) {
                let mut f = finding(
                    &INVALID_ARGS_ACCEPTED,
                    Severity::Warning,
                    ctx,
                    ex,
                    format!("{tool} accepted arguments that break its inputSchema: {what}"),
                );
                f.group = Some(format!("{tool}|{}", v.keyword));
                out.push(f);
            }
            // Arguments that are not an object fail the CallToolRequest schema itself: that is a
            // malformed request, which is a protocol error in every version.
            let malformed_request = v.pointer.is_empty() && v.keyword == "type";
            if let Some(e) = error.filter(|_| !malformed_request) {
                let (severity, message) = match ctx.version.rules().input_validation {
                    InputValidationChannel::ToolResult => (
                        Some(Severity::Warning),
                        format!(
                            "{tool} answered arguments that break its inputSchema ({what}) with JSON-RPC error {}; from 2025-11-25 input validation errors are tool execution errors (isError: true) the model can read",
                            e.code
                        ),
                    ),
                    InputValidationChannel::Either if e.code != INVALID_PARAMS => (
                        Some(Severity::Warning),
                        format!(
                            "{tool} answered arguments that break its inputSchema ({what}) with JSON-RPC error {}; a protocol error for invalid arguments should be -32602",
                            e.code
                        ),
                    ),
                    InputValidationChannel::Either => (None, String::new()),
                };
                if let Some(severity) = severity {
                    let mut f = finding(&INVALID_ARGS_WRONG_CHANNEL, severity, ctx, ex, message);
                    f.group = Some(format!("{tool}|channel"));
                    out.push(f);
                }
            }
            // The error should name the argument it rejects.
            let text = match (error, result) {
                (Some(e), _) => format!(
                    "{} {}",
                    e.message,
                    e.data.map(ToString::to_string).unwrap_or_default()
                ),
                (None, Some(r)) if is_error_result(r) => result_text(r),
                _ => String::new(),
            };
            let names = argument_names(v);
            // Raw exception text is judged (once) by `actionable`, with what it lacks.
            if !text.trim().is_empty()
                && !super::actionable::is_raw_answer(ex)
                && !names.is_empty()
                && !names.iter().any(|n| text.contains(n.as_str()))
                && !names_another_argument(&text, arguments, &names)
            {
                let mut f = finding(
                    &UNACTIONABLE_ERROR,
                    Severity::Warning,
                    ctx,
                    ex,
                    format!(
                        "{tool} rejected arguments that break {} without naming the argument ({}); the model cannot tell what to fix",
                        v.keyword,
                        names.join(" or ")
                    ),
                );
                f.group = Some(format!("{tool}|unnamed"));
                out.push(f);
            }
        }
    }
    out
}

/// Whether `text` names a top-level argument other than `names`, by its name or by its string
/// value (3 characters or more): the call then failed on that argument first (a path that does
/// not exist, say), and its message is about it.
fn names_another_argument(text: &str, arguments: &serde_json::Value, names: &[String]) -> bool {
    let Some(map) = arguments.as_object() else {
        return false;
    };
    map.iter()
        .filter(|(k, _)| !names.iter().any(|n| n == *k))
        .any(|(k, v)| {
            (k.len() >= 3 && text.contains(k.as_str()))
                || v.as_str().is_some_and(|s| s.len() >= 3 && text.contains(s))
        })
}

/// The argument names a good error message for `v` would mention: the last segment of the
/// pointer, or for a constraint on the arguments object (a missing required property, an
/// extra property) the names quoted in the description.
pub fn argument_names(v: &crate::generate::Violation) -> Vec<String> {
    if let Some(last) = v.pointer.rsplit('/').next().filter(|s| !s.is_empty()) {
        // Array indices name nothing useful; use the enclosing property.
        if last.chars().all(|c| c.is_ascii_digit()) {
            return v
                .pointer
                .split('/')
                .rev()
                .find(|s| !s.is_empty() && !s.chars().all(|c| c.is_ascii_digit()))
                .map(|s| vec![unescape(s)])
                .unwrap_or_default();
        }
        return vec![unescape(last)];
    }
    v.description
        .split('"')
        .skip(1)
        .step_by(2)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

fn unescape(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

/// This invariant as the oracle's [`judge`](super::judge) runs it on every exchange
/// ([`check`]), with the catalog entries it reports.
pub struct Rule;

impl super::Check for Rule {
    fn name(&self) -> &'static str {
        "generated"
    }

    fn invariants(&self) -> &'static [crate::finding::Invariant] {
        &[
            crate::finding::INVALID_ARGS_ACCEPTED,
            crate::finding::INVALID_ARGS_WRONG_CHANNEL,
            crate::finding::UNACTIONABLE_ERROR,
            crate::finding::VALID_ARGS_REJECTED,
        ]
    }

    fn check(&self, ctx: &super::Context<'_>, ex: &crate::session::Exchange) -> Vec<Finding> {
        check(ctx, ex)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::Violation;

    #[test]
    fn validation_vocabulary() {
        assert!(blames_arguments(
            "Invalid arguments for tool echo: expected string"
        ));
        assert!(blames_arguments(
            "1 validation error for get_current_timeArguments"
        ));
        assert!(blames_arguments("'city' is a required property"));
        assert!(!blames_arguments("No weather data for city xyz"));
        assert!(!blames_arguments("Invalid timezone: 'Mars/Base'"));
        // What the OS says of an impossible operation is not argument validation.
        assert!(!blames_arguments(
            "EINVAL: invalid argument, rename '/srv/a' -> '/srv/a/c'"
        ));
        assert!(!blames_arguments("[Errno 22] Invalid argument: 'x'"));
        assert!(blames_arguments("invalid argument: path must be absolute"));
        // What the SDKs say when the tool's own result fails its outputSchema is about the
        // output, whatever validation words it uses.
        for output in [
            "Output validation error: outputSchema defined but no structured output returned",
            "Output validation error: 'sum' is a required property",
            "MCP error -32602: Output validation error: Tool add has an output schema but no structured content was provided",
            "Output validation error: Invalid structured content for tool add: expected number, received string",
        ] {
            assert!(!blames_arguments(output), "{output}");
        }
        assert!(blames_arguments(
            "MCP error -32602: Input validation error: Invalid arguments for tool add: expected number"
        ));
        // Blame of the arguments before the output is mentioned still counts.
        assert!(blames_arguments(
            "Invalid arguments: b must be at most 1000 (the outputSchema is unchanged)"
        ));
    }

    #[test]
    fn an_error_about_another_argument_is_not_unactionable() {
        let args = serde_json::json!({"repo_path": ".qzk.yhv", "context_lines": true});
        let names = vec!["context_lines".to_owned()];
        assert!(names_another_argument(
            "Error executing tool git_diff: /tmp/repo/.qzk.yhv",
            &args,
            &names
        ));
        assert!(names_another_argument(
            "repo_path is not a git repository",
            &args,
            &names
        ));
        assert!(!names_another_argument("Error: failed", &args, &names));
    }

    #[test]
    fn names_of_the_argument() {
        let v = |pointer: &str, description: &str| Violation {
            keyword: "x".into(),
            pointer: pointer.into(),
            description: description.into(),
        };
        assert_eq!(argument_names(&v("/city", "")), ["city"]);
        assert_eq!(argument_names(&v("/tags/3", "")), ["tags"]);
        assert_eq!(
            argument_names(&v("", "missing required property \"city\"")),
            ["city"]
        );
    }
}
