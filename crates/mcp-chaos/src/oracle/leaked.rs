//! `leaked-internals` (MC204): nothing the model reads carries the server's internals. Scans,
//! with [`super::leaks`], every text a client passes on: tool results (text blocks, embedded
//! text resources, `structuredContent`), the results of the features beyond tools (resource
//! contents, prompt messages, completion values), JSON-RPC error `message` and `data`, and log
//! notifications (`notifications/message`, whose content MUST NOT contain secrets or internal
//! details: `server/utilities/logging` §Security).
//!
//! Canaries, secrets and credentials are leaks wherever they appear. Stack traces, paths, SQL
//! and internal addresses are judged only where the server reports a failure or logs (error
//! results, JSON-RPC errors, log notifications): in a successful result they are most often
//! the data the tool exists to return (a file listing, the query a database tool ran).

use serde_json::Value;

use super::leaks::{self, Leak, LeakKind};
use super::{Context, finding, result_text};
use crate::finding::{Finding, LEAKED_INTERNALS, Severity};
use crate::session::Exchange;
use crate::wire::Message;

/// The texts of an exchange the model or user reads: where each came from (for the message),
/// whether it reports a failure or is a log, and the text.
fn texts(ex: &Exchange) -> Vec<(&'static str, bool, String)> {
    let mut out = Vec::new();
    for (_, frame) in ex.frames() {
        match &frame.message {
            Ok(Message::Response(r)) => {
                if let Some(error) = r.error() {
                    out.push(("the error message", true, error.message.to_owned()));
                    if let Some(data) = error.data {
                        out.push(("the error data", true, flatten(data)));
                    }
                } else if let Some(result) = r.result()
                    && result.get("content").is_some()
                {
                    let failed = super::is_error_result(result);
                    let place = if failed {
                        "the error result"
                    } else {
                        "the tool result"
                    };
                    out.push((place, failed, result_text(result)));
                    if let Some(sc) = result.get("structuredContent") {
                        out.push(("structuredContent", failed, flatten(sc)));
                    }
                } else if let Some(result) = r.result()
                    && let Some((place, text)) = super::feature_shape::texts(result)
                {
                    // Resource contents, prompt messages, completion values: data.
                    out.push((place, false, text));
                }
            }
            Ok(Message::Notification(n)) if n.method() == "notifications/message" => {
                if let Some(data) = n.params().and_then(|p| p.get("data")) {
                    out.push(("a log notification", true, flatten(data)));
                }
            }
            _ => {}
        }
    }
    out
}

/// All string values of a JSON value, one per line (strings as they are, not JSON-escaped).
fn flatten(value: &Value) -> String {
    let mut out = Vec::new();
    fn walk<'v>(v: &'v Value, out: &mut Vec<&'v str>) {
        match v {
            Value::String(s) => out.push(s),
            Value::Array(items) => items.iter().for_each(|i| walk(i, out)),
            Value::Object(map) => map.values().for_each(|i| walk(i, out)),
            _ => {}
        }
    }
    walk(value, &mut out);
    out.join("\n")
}

/// Judges an exchange. The finding lists, in [`Finding::redact`], the matched secrets and
/// credentials that must be redacted from the whole report.
pub fn check(ctx: &Context<'_>, ex: &Exchange) -> Vec<Finding> {
    let exact: Vec<(LeakKind, &str)> = ctx.exact.iter().map(|(k, s)| (*k, s.as_str())).collect();
    let sent = String::from_utf8_lossy(&ex.sent);
    // Under a fault that only bent the shape of a 200 body, a text carrying the fake
    // upstream's body (recognised by its canaries) is passed-through content, not the
    // server's internals.
    let pass_through_allowed = ex
        .fault
        .as_ref()
        .is_some_and(|f| f.met() && !f.met_definitely());
    let canaries: Vec<&str> = ctx
        .exact
        .iter()
        .filter(|(k, _)| *k == LeakKind::Canary)
        .map(|(_, s)| s.as_str())
        .collect();
    let mut found: Vec<(&'static str, Leak)> = Vec::new();
    for (place, failure_or_log, text) in texts(ex) {
        if pass_through_allowed && canaries.iter().any(|c| text.contains(c)) {
            continue;
        }
        for leak in leaks::scan(&text, &sent, &exact) {
            let anywhere = matches!(
                leak.kind,
                LeakKind::Canary | LeakKind::Secret | LeakKind::Credential
            );
            if !anywhere && !failure_or_log {
                continue;
            }
            if !found.iter().any(|(_, l)| l.rule == leak.rule) {
                found.push((place, leak));
            }
        }
    }
    if found.is_empty() {
        return Vec::new();
    }
    let redact: Vec<String> = found
        .iter()
        .filter(|(_, l)| matches!(l.kind, LeakKind::Secret | LeakKind::Credential))
        .map(|(_, l)| l.matched.clone())
        .collect();
    // "the tool result: the upstream's raw error response (canary), stack trace, internal
    // path [rules: python-traceback, source-path]; first: …".
    let mut places: Vec<&str> = Vec::new();
    let mut families: Vec<&str> = Vec::new();
    let mut rules: Vec<&str> = Vec::new();
    for (place, l) in &found {
        if !places.contains(place) {
            places.push(place);
        }
        let family = match l.kind {
            LeakKind::Canary => "the upstream's raw error response (canary)",
            LeakKind::Secret => "a secret given to the server",
            other => other.name(),
        };
        if !families.contains(&family) {
            families.push(family);
        }
        if !matches!(l.kind, LeakKind::Canary | LeakKind::Secret) {
            rules.push(&l.rule);
        }
    }
    let (_, first) = &found[0];
    let detail = format!(
        "{}: {}{}; first{}: {}",
        places.join(", "),
        families.join(", "),
        if rules.is_empty() {
            String::new()
        } else {
            format!(" [rules: {}]", rules.join(", "))
        },
        if first.decoded {
            ", after decoding"
        } else {
            ""
        },
        first.excerpt
    );
    let mut f = finding(
        &LEAKED_INTERNALS,
        Severity::Violation,
        ctx,
        ex,
        format!("the server exposed internals to the model in {detail}"),
    );
    if let Some(response) = f.response.take() {
        f.response = Some(leaks::redact(&response, &redact));
    }
    f.redact = redact;
    let mut rules: Vec<&str> = found.iter().map(|(_, l)| l.rule.as_str()).collect();
    rules.sort_unstable();
    f.group = Some(format!(
        "{}|{}",
        ex.probe.tool().unwrap_or(""),
        rules.join(",")
    ));
    vec![f]
}

/// This invariant as the oracle's [`judge`](super::judge) runs it on every exchange
/// ([`check`]), with the catalog entries it reports.
pub struct Rule;

impl super::Check for Rule {
    fn name(&self) -> &'static str {
        "leaked"
    }

    fn invariants(&self) -> &'static [crate::finding::Invariant] {
        &[crate::finding::LEAKED_INTERNALS]
    }

    fn check(&self, ctx: &super::Context<'_>, ex: &crate::session::Exchange) -> Vec<Finding> {
        check(ctx, ex)
    }
}
