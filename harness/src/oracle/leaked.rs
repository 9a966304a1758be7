//! `leaked-internals` (MC204): nothing the model reads carries the server's internals. Scans,
//! with [`super::leaks`], every text a client passes on: tool results (text blocks, embedded
//! text resources, `structuredContent`), JSON-RPC error `message` and `data`, and log
//! notifications (`notifications/message`, whose content MUST NOT contain secrets or internal
//! details: `server/utilities/logging` §Security).

use serde_json::Value;

use super::leaks::{self, Leak, LeakKind};
use super::{Context, finding, result_text};
use crate::finding::{Finding, LEAKED_INTERNALS, Severity};
use crate::session::Exchange;
use crate::wire::Message;

/// Where a text came from, for the message.
fn texts(ex: &Exchange) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    for (_, frame) in ex.frames() {
        match &frame.message {
            Ok(Message::Response(r)) => {
                if let Some(error) = r.error() {
                    out.push(("the error message", error.message.to_owned()));
                    if let Some(data) = error.data {
                        out.push(("the error data", flatten(data)));
                    }
                } else if let Some(result) = r.result()
                    && result.get("content").is_some()
                {
                    out.push(("the tool result", result_text(result)));
                    if let Some(sc) = result.get("structuredContent") {
                        out.push(("structuredContent", flatten(sc)));
                    }
                }
            }
            Ok(Message::Notification(n)) if n.method() == "notifications/message" => {
                if let Some(data) = n.params().and_then(|p| p.get("data")) {
                    out.push(("a log notification", flatten(data)));
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
    let mut found: Vec<(&'static str, Leak)> = Vec::new();
    for (place, text) in texts(ex) {
        for leak in leaks::scan(&text, &sent, &exact) {
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
    let detail: Vec<String> = found
        .iter()
        .take(4)
        .map(|(place, l)| {
            format!(
                "{} ({}) in {place}{}: {}",
                l.kind.name(),
                l.rule,
                if l.decoded { ", after decoding" } else { "" },
                l.excerpt
            )
        })
        .collect();
    let mut f = finding(
        &LEAKED_INTERNALS,
        Severity::Violation,
        ctx,
        ex,
        format!("the server exposed internals to the model: {}", detail.join("; ")),
    );
    if let Some(response) = f.response.take() {
        f.response = Some(leaks::redact(&response, &redact));
    }
    f.redact = redact;
    vec![f]
}
