//! `unactionable-error` (MC203, warning): an error result tells the model what failed and
//! whether trying again can help (`server/tools` §Error Handling: tool execution errors carry
//! "actionable feedback" so the model can self-correct).
//! - An `isError` result with no text, or only generic text ("Error: failed").
//! - Under a retryable upstream fault (429, 502-504, timeouts, resets): text that does not say
//!   the call can be retried.
//! - Under a permanent one (401, 403, 404, 410): text that invites a retry.
//! - Raw exception text ([`super::raw_error`]: an interpreter's, a runtime's or the operating
//!   system's message, or a bare exception class, key or path as the whole message) in an
//!   `isError` result or in the JSON-RPC error of a `tools/call`: the message says what is
//!   missing of what a model needs (the operation, the argument or resource, the reason, the
//!   constraint or state, the next action, whether a retry can help). The JSON-RPC errors of
//!   the features phase (`resources/read`, `prompts/get`, `completion/complete`, ...) are
//!   judged for raw exception text too.
//! - A `resources/read` or `prompts/get` that met an upstream fault and answered with a
//!   JSON-RPC error (its right channel: these results have no `isError`): the error message
//!   is judged as an `isError` text is under a fault (stock text only; no word of a retry
//!   under a retryable fault; an invitation to retry under a permanent one).

use std::sync::LazyLock;

use regex::Regex;

use super::business_failure::describe;
use super::raw_error::{self, RawText};
use super::{Context, finding, is_error_result, result_text};
use crate::finding::{Finding, Severity, UNACTIONABLE_ERROR};
use crate::session::{Exchange, Retry};

static RETRY: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:retry|retrying|retried|try again|try later|later|temporar(?:y|ily)|transient|wait(?:ing)?|retry-after|in \d+ ?(?:s|sec|secs|seconds|minutes?|ms))\b").ok()
});
static NEGATED_RETRY: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"(?i)(?:\b(?:not|no|never|don't|do not|won't|will not|cannot|can't|without)\b[\w\s,]{0,24}\b(?:retry|retrying|try again)\b)|(?:\b(?:retry|retrying|trying again)\b[\w\s,]{0,24}\b(?:will not|won't|not help|no use|pointless|useless)\b)").ok()
});

/// The rubric `mcp-chaos explain MC203` prints: the five things a recoverable error message
/// tells the model, and what this invariant flags, with good and bad examples.
pub const RUBRIC: &str = "\
What a model needs from an error to act on it (each is checked where the call tells what it
should be; a message need not use these words):
  1. the operation that failed           \"Fetching record 7 from the records service failed\"
  2. which argument, resource or handle   \"record_id 7\", \"the file notes/a.txt\"
  3. the concrete reason                  \"the service answered 404: no such record\"
  4. the constraint or the current state  \"record_id must be 1-1000\", \"the session expired\"
  5. the next action, and whether a retry can help
                                          \"check the id; retrying will not help\",
                                          \"rate limited: retry after 30 s\"

Flagged (a warning each):
  - no text, or stock text only           \"Error: failed\", \"An error occurred\"
  - raw exception text: what an interpreter, a runtime or the OS wrote for a programmer, or
    a bare exception class, key or path as the whole message
      bad:  'NoneType' object has no attribute 'get'
      bad:  Cannot read properties of undefined (reading 'id')
      bad:  [Errno 2] No such file or directory: 'a.py'
      bad:  Error executing tool git_status: /srv/repo
      bad:  Error executing tool lookup: KeyError('id')
      good: No file a.py in the repository /srv/repo; list files with git_ls_files first.
  - invalid arguments rejected without naming the argument
      bad:  Invalid input          good: limit must be an integer from 1 to 100 (got \"ten\")
  - under a retryable upstream fault (429, 502-504, timeout, reset): no word that a retry
    can help;  under a permanent one (401, 403, 404, 410): an invitation to retry
      bad:  Upstream error 503     good: The service is unavailable (503); retry in a few seconds.
      bad:  Not found, try again   good: No record 7 (404); check the id, retrying will not help.
Not flagged: validation dumps that name the argument and the constraint (pydantic's
\"1 validation error for ...\", zod's issue arrays); stack traces and internal paths inside a
message are leaked-internals (MC204).";

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

/// Whether `text` names one of the call's top-level arguments, by its name or by its string
/// value (3 characters or more).
fn names_an_argument(text: &str, arguments: Option<&serde_json::Value>) -> bool {
    arguments
        .and_then(serde_json::Value::as_object)
        .is_some_and(|map| {
            map.iter().any(|(k, v)| {
                (k.len() >= 3 && text.contains(k.as_str()))
                    || v.as_str().is_some_and(|s| s.len() >= 3 && text.contains(s))
            })
        })
}

/// Words that point the model at a next step: a corrected format, a valid range or set, a
/// retry, another tool.
static NEXT_ACTION: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:use|try|check|retry|must be|should be|expected|expects|valid (?:values?|range|formats?)|one of|instead|such as|e\.g\.|for example|call \w+ first|list \w+ first)\b").ok()
});

/// A path or URL in the text: the resource the failure concerns is named.
static NAMES_A_RESOURCE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"(?:^|[\s'\x22(:])(?:/[^\s/'\x22]+){1,}|\b[a-z][a-z0-9+.-]*://\S+").ok()
});

/// The finding's message for raw exception text `raw` in `place` (e.g. "an isError result"),
/// naming what of the rubric ([`RUBRIC`]) the text does not tell the model.
fn raw_message(tool: &str, place: &str, raw: &RawText, ex: &Exchange, text: &str) -> String {
    let arguments = ex.probe.arguments();
    let mut missing = Vec::new();
    if arguments
        .and_then(serde_json::Value::as_object)
        .is_some_and(|m| !m.is_empty())
        && !names_an_argument(text, arguments)
        && !NAMES_A_RESOURCE.as_ref().is_some_and(|r| r.is_match(text))
    {
        missing.push("which argument or resource it concerns");
    }
    if let Some(fault) = ex.fault.as_ref().filter(|f| f.met()) {
        match fault.retry {
            Retry::Retryable if !says_retry(text) => {
                missing.push("that a retry can help (and when)");
            }
            Retry::Permanent if !says_retry(text) => missing.push("that a retry cannot help"),
            _ => {}
        }
    }
    if !NEXT_ACTION.as_ref().is_some_and(|r| r.is_match(text)) {
        missing.push("what to do next");
    }
    let lacks = if missing.is_empty() {
        String::new()
    } else {
        format!("; nor does it say {}", missing.join(", "))
    };
    let why = match raw.rule {
        "errno-code" | "python-errno" => {
            "the errno code and system call are the operating system's words for a programmer; say in words what is missing or wrong"
        }
        "bare-path" => "a path alone does not say what failed at it, or why",
        "bare-exception-class" | "bare-key" | "exception-repr" => {
            "an exception's class or key alone does not say what failed, or why"
        }
        _ => "it says what broke inside the server, not what failed for the model",
    };
    format!(
        "{tool} answered with raw exception text in {place} ({}: {:?}): {why}{lacks}",
        raw.label, raw.excerpt
    )
}

/// The raw-exception finding for `ex`, if its `tools/call` answer (an `isError` result or a
/// JSON-RPC error) carries raw exception text.
fn raw_finding(ctx: &Context<'_>, ex: &Exchange, tool: &str) -> Option<Finding> {
    let response = ex.response()?;
    let (place, text) = match (response.error(), response.result()) {
        (Some(e), _) => ("a JSON-RPC error", e.message.to_owned()),
        (None, Some(r)) if is_error_result(r) => ("an isError result", result_text(r)),
        _ => return None,
    };
    let raw = raw_error::raw_text(&text)?;
    let mut f = finding(
        &UNACTIONABLE_ERROR,
        Severity::Warning,
        ctx,
        ex,
        raw_message(tool, place, &raw, ex, &text),
    );
    f.group = Some(format!("{tool}|raw|{}", raw.rule));
    Some(f)
}

/// Whether the answer to `ex` is a JSON-RPC error or an `isError` result whose text is raw
/// exception text (judged here, so that other checks of the same text can stand aside).
pub fn is_raw_answer(ex: &Exchange) -> bool {
    ex.response()
        .is_some_and(|r| match (r.error(), r.result()) {
            (Some(e), _) => raw_error::raw_text(e.message).is_some(),
            (None, Some(res)) => {
                is_error_result(res) && raw_error::raw_text(&result_text(res)).is_some()
            }
            _ => false,
        })
}

/// The finding for the JSON-RPC error of a `resources/read` or `prompts/get` that met an
/// upstream fault, if its message does not say what failed or misleads about a retry.
fn feature_fault_error(
    ctx: &Context<'_>,
    ex: &Exchange,
    feature: &crate::session::FeatureProbe,
) -> Option<Finding> {
    use crate::session::FeatureProbe;
    let what = match feature {
        FeatureProbe::Read { uri, .. } => format!("resources/read {uri}"),
        FeatureProbe::GetPrompt { name, .. } => format!("prompts/get {name}"),
        _ => return None,
    };
    let fault = ex.fault.as_ref().filter(|f| f.met())?;
    let error = ex.response()?.error()?;
    let text = error.message;
    let message = if is_generic(text) {
        format!(
            "{what} met the upstream fault {} and answered with JSON-RPC error {} whose message \
             is only {:?}, which does not say what failed",
            describe(fault),
            error.code,
            text.trim()
        )
    } else {
        match fault.retry {
            Retry::Retryable if !says_retry(text) => format!(
                "{what} met the retryable upstream fault {} but its JSON-RPC error message does \
                 not say the request can be retried (or when)",
                describe(fault)
            ),
            Retry::Permanent if says_retry(text) => format!(
                "{what} met the permanent upstream fault {} but its JSON-RPC error message \
                 invites a retry, which cannot help",
                describe(fault)
            ),
            _ => return None,
        }
    };
    Some(finding(
        &UNACTIONABLE_ERROR,
        Severity::Warning,
        ctx,
        ex,
        message,
    ))
}

/// Judges every `isError` tool result, and the JSON-RPC error of every `tools/call`, the model
/// reads.
pub fn check(ctx: &Context<'_>, ex: &Exchange) -> Vec<Finding> {
    if let crate::session::Probe::Feature(feature) = &ex.probe {
        if let Some(f) = raw_finding(ctx, ex, feature.method()) {
            return vec![f];
        }
        return feature_fault_error(ctx, ex, feature).into_iter().collect();
    }
    let Some(tool) = ex.probe.called_tool() else {
        return Vec::new();
    };
    if let Some(f) = raw_finding(ctx, ex, tool) {
        return vec![f];
    }
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

/// This invariant as the oracle's [`judge`](super::judge) runs it on every exchange
/// ([`check`]), with the catalog entries it reports.
pub struct Rule;

impl super::Check for Rule {
    fn name(&self) -> &'static str {
        "actionable"
    }

    fn invariants(&self) -> &'static [crate::finding::Invariant] {
        &[crate::finding::UNACTIONABLE_ERROR]
    }

    fn check(&self, ctx: &super::Context<'_>, ex: &crate::session::Exchange) -> Vec<Finding> {
        check(ctx, ex)
    }
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
