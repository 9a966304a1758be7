//! `unactionable-error` (MC203, warning): an error result tells the model what failed and
//! whether trying again can help (`server/tools` §Error Handling: tool execution errors carry
//! "actionable feedback" so the model can self-correct).
//! - An `isError` result with no text, or only generic text ("Error: failed").
//! - Under a retryable upstream fault (429, 502-504, timeouts, resets): text that does not say
//!   the call can be retried.
//! - Under a permanent one (401, 403, 404, 410): text that invites a retry.

use std::sync::LazyLock;

use regex::Regex;

use super::business_failure::describe;
use super::{Context, finding, is_error_result, result_text};
use crate::finding::{Finding, Severity, UNACTIONABLE_ERROR};
use crate::session::{Exchange, Retry};

static RETRY: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:retry|retrying|retried|try again|try later|later|temporar(?:y|ily)|transient|wait(?:ing)?|retry-after|in \d+ ?(?:s|sec|secs|seconds|minutes?|ms))\b").ok()
});
static NEGATED_RETRY: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"(?i)(?:\b(?:not|no|never|don't|do not|won't|will not|cannot|can't|without)\b[\w\s,]{0,24}\b(?:retry|retrying|try again)\b)|(?:\b(?:retry|retrying|trying again)\b[\w\s,]{0,24}\b(?:will not|won't|not help|no use|pointless|useless)\b)").ok()
});

/// Whether `text` says the operation can be tried again.
pub fn says_retry(text: &str) -> bool {
    RETRY.as_ref().is_some_and(|r| r.is_match(text))
        && !NEGATED_RETRY.as_ref().is_some_and(|r| r.is_match(text))
}

/// Whether `text` says only that something failed: empty after removing filler, or one of the
/// stock phrases.
pub fn is_generic(text: &str) -> bool {
    let normalized: String = text
        .to_lowercase()
        .chars()
        .map(|c| if c.is_alphanumeric() { c } else { ' ' })
        .collect();
    let words: Vec<&str> = normalized.split_whitespace().collect();
    let joined = words.join(" ");
    const STOCK: &[&str] = &[
        "error",
        "failed",
        "error failed",
        "failure",
        "internal error",
        "internal server error",
        "an error occurred",
        "error occurred",
        "an unexpected error occurred",
        "unexpected error",
        "something went wrong",
        "unknown error",
        "request failed",
        "tool failed",
        "operation failed",
        "tool execution failed",
        "exception",
        "oops",
        "error executing tool",
    ];
    words.len() <= 1 || STOCK.contains(&joined.as_str())
}

/// Judges every `isError` tool result.
pub fn check(ctx: &Context<'_>, ex: &Exchange) -> Vec<Finding> {
    let Some(tool) = ex.probe.called_tool() else {
        return Vec::new();
    };
    let Some(result) = ex.response().and_then(|r| r.result()) else {
        return Vec::new();
    };
    if !is_error_result(result) {
        return Vec::new();
    }
    let text = result_text(result);
    let message = if text.trim().is_empty() {
        format!("{tool} returned isError: true with no text; the model cannot tell what failed")
    } else if is_generic(&text) {
        format!(
            "{tool} returned isError: true with only {:?}, which does not say what failed",
            text.trim()
        )
    } else if let Some(fault) = ex.fault.as_ref().filter(|f| f.met()) {
        match fault.retry {
            Retry::Retryable if !says_retry(&text) => format!(
                "{tool} met the retryable upstream fault {} but its error text does not say the \
                 call can be retried (or when)",
                describe(fault)
            ),
            Retry::Permanent if says_retry(&text) => format!(
                "{tool} met the permanent upstream fault {} but its error text invites a retry, \
                 which cannot help",
                describe(fault)
            ),
            _ => return Vec::new(),
        }
    } else {
        return Vec::new();
    };
    vec![finding(
        &UNACTIONABLE_ERROR,
        Severity::Warning,
        ctx,
        ex,
        message,
    )]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_wording_and_negation() {
        assert!(says_retry("Rate limited; retry in 30 seconds."));
        assert!(says_retry(
            "The service is temporarily unavailable, try again later."
        ));
        assert!(!says_retry("Record 7 does not exist."));
        assert!(!says_retry("No record 7; retrying will not help."));
        assert!(!says_retry("Do not retry: the id is unknown."));
    }

    #[test]
    fn generic_texts() {
        assert!(is_generic("Error: failed"));
        assert!(is_generic("Internal error."));
        assert!(is_generic("error"));
        assert!(!is_generic("Upstream answered 404: no record with id 7."));
        assert!(!is_generic(
            "Error executing tool fetch: Failed to fetch http://x - status code 404"
        ));
    }
}
