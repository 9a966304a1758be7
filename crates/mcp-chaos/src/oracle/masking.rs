//! `error-masked-as-success` (MC202): a failed operation never comes back as a success.
//! - Every upstream request of the call failed and the result's `isError` is not true:
//!   violation (the `CallToolResult` schema: a missing `isError` "is assumed to be false (the
//!   call was successful)").
//! - The call met a definite failure and the result is a success whose content is empty or
//!   blank: violation.
//! - The call met a definite failure, its last upstream request failed too, and the success's
//!   text reads like a failure: warning. (When a later request succeeded, the server recovered,
//!   by a retry or a fallback after a failed `robots.txt` or metadata request, and its text
//!   may well quote a page that mentions errors.)
//! - The call met only a 2xx whose body was unusable or broke off (malformed JSON, wrong
//!   content type, huge, truncated, reset mid-body) and the success is blank: warning (a tool
//!   that needs only the status may rightly succeed; one that passes the page on may rightly
//!   return it).
//!
//! A server that retried and then succeeded is fine: the journal shows a request that did not
//! fail.
//!
//! `resources/read` and `prompts/get` under a fault (their handlers call the upstream): their
//! results have no `isError`, so an upstream failure is reported as a JSON-RPC error
//! (`server/resources` §Error Handling: "Internal errors: -32603"; `server/prompts` §Error
//! Handling). A success under a definite failure whose `contents` (or `messages`) is empty or
//! blank is masking: a violation (the reader takes it for a resource with no content, or a
//! prompt with nothing to say). A non-empty success whose text reads like a failure, after
//! the last upstream request failed, is a warning. A non-empty success otherwise is not
//! judged: a server may serve a cached or a static fallback.

use std::sync::LazyLock;

use regex::Regex;

use super::business_failure::describe;
use super::{Context, finding, is_error_result, result_text};
use crate::finding::{ERROR_MASKED_AS_SUCCESS, Finding, Severity};
use crate::session::{Exchange, FeatureProbe, Probe};

static FAILURE_WORDS: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b(?:error|errors|failed|failure|fails|exception|unable to|could not|couldn't|cannot|not found|unavailable|timed? ?out|refused|denied)\b|\b(?:status(?: code)?|HTTP)\s*[45]\d\d\b",
    )
    .ok()
});

/// Whether `text` reads like a failure report.
pub fn reads_like_failure(text: &str) -> bool {
    FAILURE_WORDS.as_ref().is_some_and(|r| r.is_match(text))
}

/// Whether a `CallToolResult` carries a content item that is not text (an image, audio, an
/// embedded resource or a resource link).
fn has_non_text_content(result: &serde_json::Value) -> bool {
    result
        .get("content")
        .and_then(serde_json::Value::as_array)
        .is_some_and(|items| {
            items
                .iter()
                .any(|c| c.get("type").and_then(serde_json::Value::as_str) != Some("text"))
        })
}

/// The text a `ReadResourceResult` (`contents`) or `GetPromptResult` (`messages`) shows,
/// and whether it holds any content at all (a blob, an image, a resource is content).
fn feature_text(result: &serde_json::Value, key: &str) -> (String, bool) {
    let items = result
        .get(key)
        .and_then(serde_json::Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    let mut text = Vec::new();
    let mut other = false;
    for item in items {
        let block = if key == "messages" {
            item.get("content").unwrap_or(item)
        } else {
            item
        };
        match block.get("text").and_then(serde_json::Value::as_str) {
            Some(t) => text.push(t.to_owned()),
            None => other = true,
        }
    }
    (text.join("\n"), other)
}

/// Judges a `resources/read` or `prompts/get` that ran under an upstream fault.
fn check_feature(
    ctx: &Context<'_>,
    ex: &Exchange,
    feature: &FeatureProbe,
    fault: &crate::session::FaultContext,
) -> Vec<Finding> {
    let (what, key, reader) = match feature {
        FeatureProbe::Read { uri, .. } => (
            format!("resources/read {uri}"),
            "contents",
            "a resource with no content",
        ),
        FeatureProbe::GetPrompt { name, .. } => (
            format!("prompts/get {name}"),
            "messages",
            "a prompt with nothing to say",
        ),
        _ => return Vec::new(),
    };
    if !fault.met() {
        return Vec::new();
    }
    let Some(result) = ex.response().and_then(|r| r.result()) else {
        return Vec::new();
    };
    let (text, other) = feature_text(result, key);
    let blank = text.trim().is_empty() && !other;
    let definite = fault.met_definitely();
    let recovered = fault.upstream_requests.last().is_some_and(|h| !h.failure);
    let (severity, message) = if blank && definite {
        (
            Severity::Violation,
            format!(
                "{what} met the upstream fault {} and succeeded with an empty {key}; the reader \
                 takes it for {reader}. Its result has no isError: an upstream failure is a \
                 JSON-RPC error (-32603, or resource not found) whose message says what failed",
                describe(fault)
            ),
        )
    } else if definite && !recovered && !blank && reads_like_failure(&text) {
        (
            Severity::Warning,
            format!(
                "{what} met the upstream fault {} and succeeded with {key} whose text reads like \
                 a failure; the reader takes the failure report for the content. An upstream \
                 failure is a JSON-RPC error",
                describe(fault)
            ),
        )
    } else {
        return Vec::new();
    };
    vec![finding(
        &ERROR_MASKED_AS_SUCCESS,
        severity,
        ctx,
        ex,
        message,
    )]
}

/// Judges a tool call (or a `resources/read` or `prompts/get`) that ran under an upstream
/// fault.
pub fn check(ctx: &Context<'_>, ex: &Exchange) -> Vec<Finding> {
    if let (Probe::Feature(feature), Some(fault)) = (&ex.probe, &ex.fault) {
        return check_feature(ctx, ex, feature, fault);
    }
    let (Probe::ToolCall { tool, .. }, Some(fault)) = (&ex.probe, &ex.fault) else {
        return Vec::new();
    };
    // A 200 with an odd body may rightly be passed through (a fetch tool's job, whatever the
    // page says), and a 200 whose body breaks off fails only a client that reads the body (a
    // tool that needs only the status may rightly succeed): only a definite failure can be
    // masked for sure; under the others only an empty success is suspicious (a warning).
    if !fault.met() {
        return Vec::new();
    }
    let definite = fault.met_definitely();
    let Some(result) = ex.response().and_then(|r| r.result()) else {
        return Vec::new();
    };
    if is_error_result(result) {
        return Vec::new();
    }
    let text = result_text(result);
    // Under a fault on some requests only (a scoped fault), a later request may have answered.
    let recovered = fault.upstream_requests.last().is_some_and(|h| !h.failure);
    // A resource, a resource link, an image or audio is content, whatever its text.
    let blank = text.trim().is_empty()
        && result.get("structuredContent").is_none()
        && !has_non_text_content(result);
    let (severity, message) = if fault.all_failed() {
        let n = fault.upstream_requests.len();
        (
            Severity::Violation,
            format!(
                "every upstream request of {tool} failed ({n} request(s), fault {}), yet the \
                 result does not set isError: true{}",
                describe(fault),
                if blank {
                    " and its content is empty"
                } else {
                    ""
                }
            ),
        )
    } else if blank && definite {
        (
            Severity::Violation,
            format!(
                "{tool} met the upstream fault {} and returned an empty success; the model will \
                 read it as 'no data'",
                describe(fault)
            ),
        )
    } else if blank
        && fault
            .upstream_requests
            .iter()
            .any(|h| h.failure && !h.definite)
        && !definite
    {
        (
            Severity::Warning,
            format!(
                "{tool} met the upstream fault {} (a 2xx whose body broke off or could not be \
                 used) and returned an empty success; if it needed the body, the model will \
                 read it as 'no data'",
                describe(fault)
            ),
        )
    } else if definite && !recovered && reads_like_failure(&text) {
        (
            Severity::Warning,
            format!(
                "{tool} met the upstream fault {} and returned a success (isError not true) \
                 whose text reads like a failure",
                describe(fault)
            ),
        )
    } else {
        return Vec::new();
    };
    vec![finding(
        &ERROR_MASKED_AS_SUCCESS,
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
        "masking"
    }

    fn invariants(&self) -> &'static [crate::finding::Invariant] {
        &[crate::finding::ERROR_MASKED_AS_SUCCESS]
    }

    fn check(&self, ctx: &super::Context<'_>, ex: &crate::session::Exchange) -> Vec<Finding> {
        check(ctx, ex)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resource_link_is_not_blank() {
        let link = serde_json::json!({"content": [{"type": "resource_link", "uri": "demo://x.gz", "name": "x.gz"}]});
        assert!(has_non_text_content(&link));
        let empty = serde_json::json!({"content": [{"type": "text", "text": " "}]});
        assert!(!has_non_text_content(&empty));
        assert!(!has_non_text_content(&serde_json::json!({"content": []})));
    }

    #[test]
    fn failure_wording() {
        assert!(reads_like_failure("Error: upstream failed"));
        assert!(reads_like_failure("request returned status code 503"));
        assert!(!reads_like_failure("Sunny, 21°C in Paris"));
        assert!(!reads_like_failure("All 12 records loaded"));
        assert!(!reads_like_failure("http://127.0.0.1/x answered 200"));
    }
}
