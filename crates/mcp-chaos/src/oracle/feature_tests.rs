//! Unit tests of the feature invariants (MC701-MC706) on hand-built exchanges: each finding
//! at the severity the spec's words give it under each era, and silence on the right answer.

use std::time::Duration;

use serde_json::{Value, json};

use super::{Context, judge};
use crate::finding::Severity;
use crate::observed::Frame;
use crate::protocol::ProtocolVersion;
use crate::session::{Exchange, Expect, FeatureProbe, Outcome, Probe, Received, ReceivedItem};
use crate::wire::{self, RequestId};

/// `probe` answered with `answer` (a result, or `Err((code, message))`).
fn exchange(probe: FeatureProbe, answer: Result<Value, (i64, &str)>) -> Exchange {
    let id = RequestId::from(3);
    let sent = wire::to_line(&wire::request(&id, probe.method(), Some(json!({}))));
    let reply = match answer {
        Ok(result) => wire::success(&id, result),
        Err((code, message)) => wire::error(Some(&id), code, message, None),
    };
    Exchange {
        probe: Probe::Feature(probe),
        sent,
        expect: Expect::Response {
            id,
            or_null: false,
            fence: false,
        },
        received: vec![Received {
            at_ms: 1,
            item: ReceivedItem::Frame(Frame::new(serde_json::to_vec(&reply).unwrap_or_default())),
        }],
        preceding: 0,
        outcome: Outcome::Answered { index: 0 },
        elapsed: Duration::from_millis(1),
        timeout_ms: 1000,
        fault: None,
    }
}

/// `(invariant, severity)` of every finding on `ex` under `version`.
fn found(ex: &Exchange, version: ProtocolVersion) -> Vec<(String, Severity)> {
    judge(&Context::bare(version), ex)
        .into_iter()
        .map(|f| (f.invariant, f.severity))
        .collect()
}

const OLD: ProtocolVersion = ProtocolVersion::V2025_11_25;
const NEW: ProtocolVersion = ProtocolVersion::V2026_07_28;

fn unknown() -> FeatureProbe {
    FeatureProbe::ReadUnknown {
        uri: "mcp-chaos-unknown:///x".into(),
    }
}

fn w(name: &str) -> Vec<(String, Severity)> {
    vec![(name.to_owned(), Severity::Warning)]
}

fn v(name: &str) -> Vec<(String, Severity)> {
    vec![(name.to_owned(), Severity::Violation)]
}

fn with_result_type(mut result: Value) -> Value {
    result["resultType"] = json!("complete");
    result
}

#[test]
fn resource_not_found_code_per_era() {
    let nf = "Resource not found: mcp-chaos-unknown:///x";
    assert!(found(&exchange(unknown(), Err((-32002, nf))), OLD).is_empty());
    assert_eq!(
        found(&exchange(unknown(), Err((-32602, nf))), OLD),
        w("resource-not-found")
    );
    assert_eq!(
        found(&exchange(unknown(), Err((-32603, nf))), OLD),
        w("resource-not-found")
    );
    assert!(found(&exchange(unknown(), Err((-32602, nf))), NEW).is_empty());
    assert_eq!(
        found(&exchange(unknown(), Err((-32002, nf))), NEW),
        v("resource-not-found")
    );
    assert_eq!(
        found(&exchange(unknown(), Err((-32603, nf))), NEW),
        v("resource-not-found")
    );
    // Contents for a URI nobody listed: a warning either way.
    let hit = json!({"contents": [{"uri": "mcp-chaos-unknown:///x", "text": "?"}]});
    assert_eq!(
        found(&exchange(unknown(), Ok(hit)), OLD),
        w("resource-not-found")
    );
}

#[test]
fn empty_contents_for_an_unknown_resource() {
    let empty = json!({"contents": []});
    assert_eq!(
        found(&exchange(unknown(), Ok(empty.clone())), OLD),
        w("empty-resource-contents")
    );
    let empty = with_result_type(json!({"contents": [], "ttlMs": 0, "cacheScope": "public"}));
    assert_eq!(
        found(&exchange(unknown(), Ok(empty.clone())), NEW),
        v("empty-resource-contents")
    );
    // A listed resource may be empty.
    let listed = FeatureProbe::Read {
        uri: "a:b".into(),
        template: None,
    };
    assert!(found(&exchange(listed, Ok(json!({"contents": []}))), OLD).is_empty());
}

#[test]
fn cursor_loops_and_invalid_cursors() {
    let page = |cursor: Option<&str>, earlier: &[&str]| FeatureProbe::ListPage {
        method: "prompts/list",
        page: earlier.len() + 1 + usize::from(cursor.is_some()),
        cursor: cursor.map(str::to_owned),
        earlier: earlier.iter().map(|s| (*s).to_owned()).collect(),
    };
    let next = |c: &str| json!({"prompts": [], "nextCursor": c});
    assert!(found(&exchange(page(None, &[]), Ok(next("a"))), OLD).is_empty());
    assert!(found(&exchange(page(Some("a"), &[]), Ok(next("b"))), OLD).is_empty());
    assert_eq!(
        found(&exchange(page(Some("a"), &[]), Ok(next("a"))), OLD),
        v("pagination-cursor")
    );
    assert_eq!(
        found(&exchange(page(Some("b"), &["a"]), Ok(next("a"))), OLD),
        v("pagination-cursor")
    );
    let invalid = |paginated| FeatureProbe::InvalidCursor {
        method: "prompts/list",
        cursor: "bogus".into(),
        paginated,
    };
    assert!(found(&exchange(invalid(true), Err((-32602, "bad cursor"))), OLD).is_empty());
    assert_eq!(
        found(&exchange(invalid(true), Err((-32603, "boom"))), OLD),
        w("pagination-cursor")
    );
    assert_eq!(
        found(&exchange(invalid(true), Ok(json!({"prompts": []}))), OLD),
        w("pagination-cursor")
    );
    // A server that never paginates may ignore a cursor it never issued.
    assert!(found(&exchange(invalid(false), Ok(json!({"prompts": []}))), OLD).is_empty());
}

#[test]
fn prompt_errors_log_levels_and_gating() {
    let missing = FeatureProbe::PromptMissingArgument {
        name: "p".into(),
        argument: "a".into(),
        arguments: json!({}),
    };
    assert!(found(&exchange(missing.clone(), Err((-32602, "p needs a"))), OLD).is_empty());
    assert_eq!(
        found(&exchange(missing.clone(), Err((-32603, "boom"))), OLD),
        w("prompt-argument-errors")
    );
    let rendered =
        json!({"messages": [{"role": "user", "content": {"type": "text", "text": "x"}}]});
    assert_eq!(
        found(&exchange(missing, Ok(rendered)), OLD),
        w("prompt-argument-errors")
    );
    let unknown = FeatureProbe::CompleteUnknownPrompt {
        name: "nope".into(),
    };
    assert_eq!(
        found(
            &exchange(unknown, Ok(json!({"completion": {"values": []}}))),
            OLD
        ),
        w("prompt-argument-errors")
    );
    let invalid = FeatureProbe::InvalidLevel { level: "loud" };
    assert!(found(&exchange(invalid.clone(), Err((-32602, "level"))), OLD).is_empty());
    assert_eq!(
        found(&exchange(invalid, Ok(json!({}))), OLD),
        w("log-level-errors")
    );
    let valid = FeatureProbe::SetLevel { level: "info" };
    assert!(found(&exchange(valid.clone(), Ok(json!({}))), OLD).is_empty());
    assert_eq!(
        found(&exchange(valid, Err((-32603, "no"))), OLD),
        w("log-level-errors")
    );
    let gated = FeatureProbe::Gated {
        method: "prompts/list",
        capability: "prompts",
    };
    assert!(
        found(
            &exchange(gated.clone(), Err((-32601, "Method not found"))),
            OLD
        )
        .is_empty()
    );
    assert!(found(&exchange(gated.clone(), Ok(json!({"prompts": []}))), OLD).is_empty());
    assert_eq!(
        found(&exchange(gated.clone(), Err((-32603, "boom"))), OLD),
        w("capability-gating")
    );
    assert_eq!(
        found(
            &exchange(gated, Ok(json!({"prompts": [{"name": "p"}]}))),
            OLD
        ),
        w("capability-gating")
    );
}

#[test]
fn feature_results_are_shaped_and_scanned_for_leaks() {
    let read = FeatureProbe::Read {
        uri: "a:b".into(),
        template: None,
    };
    let bad_blob = json!({"contents": [{"uri": "a:b", "blob": "%%%"}]});
    assert_eq!(
        found(&exchange(read.clone(), Ok(bad_blob)), OLD),
        v("malformed-response")
    );
    let key = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD";
    let leak = json!({"contents": [{"uri": "a:b", "text": format!("api_key={key}")}]});
    let names: Vec<String> = found(&exchange(read.clone(), Ok(leak)), OLD)
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert_eq!(names, ["leaked-internals"]);
    // A stack trace in a resource's contents is data (a log file, say); in an error it leaks.
    let trace =
        "Traceback (most recent call last):\n  File \"/srv/app/main.py\", line 3, in <module>";
    assert!(
        found(
            &exchange(
                read.clone(),
                Ok(json!({"contents": [{"uri": "a:b", "text": trace}]}))
            ),
            OLD
        )
        .is_empty()
    );
    let names: Vec<String> = found(&exchange(read, Err((-32603, trace))), OLD)
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert!(names.contains(&"leaked-internals".to_owned()), "{names:?}");
}

/// `probe` answered with `answer` while every upstream request met `name` (HTTP `status`).
fn under_fault(
    probe: FeatureProbe,
    answer: Result<Value, (i64, &str)>,
    name: &str,
    status: Option<u16>,
    retry: crate::session::Retry,
) -> Exchange {
    let mut ex = exchange(probe, answer);
    ex.fault = Some(crate::session::FaultContext {
        name: name.into(),
        status,
        failure: true,
        retry,
        hangs: false,
        expectation: String::new(),
        upstream_requests: vec![crate::session::UpstreamHit {
            method: "GET".into(),
            target: "/weather?city=1".into(),
            served: name.into(),
            failure: true,
            definite: true,
        }],
        scope: None,
        attribution: None,
    });
    ex
}

fn forecast() -> FeatureProbe {
    FeatureProbe::Read {
        uri: "weather://forecast/1".into(),
        template: Some("weather://forecast/{city}".into()),
    }
}

/// Under an upstream fault, a `resources/read` or `prompts/get` owes a JSON-RPC error (no
/// `isError` exists): an empty success is masking, an actionable error is clean, a stock or
/// retry-silent one is unactionable.
#[test]
fn feature_reads_under_a_fault() {
    use crate::session::Retry;
    let empty = json!({"contents": []});
    assert_eq!(
        found(
            &under_fault(
                forecast(),
                Ok(empty),
                "unavailable",
                Some(503),
                Retry::Retryable
            ),
            OLD
        ),
        v("error-masked-as-success")
    );
    let prompt = FeatureProbe::GetPrompt {
        name: "weather_report".into(),
        arguments: json!({"city": "x"}),
        hostile: false,
    };
    let blank = json!({"messages": [{"role": "user", "content": {"type": "text", "text": " "}}]});
    assert_eq!(
        found(
            &under_fault(
                prompt.clone(),
                Ok(blank),
                "not-found",
                Some(404),
                Retry::Permanent
            ),
            OLD
        ),
        v("error-masked-as-success")
    );
    let good = "Could not read weather://forecast/1: the weather service failed with 503; this is usually temporary, so retry in a few seconds.";
    assert!(
        found(
            &under_fault(
                forecast(),
                Err((-32603, good)),
                "unavailable",
                Some(503),
                Retry::Retryable
            ),
            OLD
        )
        .is_empty()
    );
    let silent = "Could not read weather://forecast/1: the weather service failed with 503.";
    assert_eq!(
        found(
            &under_fault(
                forecast(),
                Err((-32603, silent)),
                "unavailable",
                Some(503),
                Retry::Retryable
            ),
            OLD
        ),
        w("unactionable-error")
    );
    assert_eq!(
        found(
            &under_fault(
                prompt,
                Err((-32603, "Internal error")),
                "not-found",
                Some(404),
                Retry::Permanent
            ),
            OLD
        ),
        w("unactionable-error")
    );
    // Content served under the fault (a cache, a static fallback) is not judged, unless it
    // reads like the failure.
    let cached = json!({"contents": [{"uri": "weather://forecast/1", "text": "{\"temp\": 21}"}]});
    assert!(
        found(
            &under_fault(
                forecast(),
                Ok(cached),
                "unavailable",
                Some(503),
                Retry::Retryable
            ),
            OLD
        )
        .is_empty()
    );
    let failure = json!({"contents": [{"uri": "weather://forecast/1", "text": "Error: upstream returned HTTP 503"}]});
    assert_eq!(
        found(
            &under_fault(
                forecast(),
                Ok(failure),
                "unavailable",
                Some(503),
                Retry::Retryable
            ),
            OLD
        ),
        w("error-masked-as-success")
    );
}

/// `resources/subscribe` (handshake versions, `resources.subscribe` advertised): a listed
/// resource owes a result, an unknown URI -32002.
#[test]
fn subscriptions_owe_a_result_for_listed_resources_and_an_error_for_unknown_ones() {
    let listed = |unsubscribe| FeatureProbe::Subscribe {
        uri: "mcp-chaos://fixture/readme".into(),
        unsubscribe,
        listed: true,
    };
    let unknown = FeatureProbe::Subscribe {
        uri: "mcp-chaos-unknown:///x".into(),
        unsubscribe: false,
        listed: false,
    };
    assert!(found(&exchange(listed(false), Ok(json!({}))), OLD).is_empty());
    assert_eq!(
        found(
            &exchange(listed(true), Err((-32601, "Method not found"))),
            OLD
        ),
        w("capability-gating")
    );
    let nf = "Resource not found: mcp-chaos-unknown:///x";
    assert!(found(&exchange(unknown.clone(), Err((-32002, nf))), OLD).is_empty());
    assert_eq!(
        found(&exchange(unknown.clone(), Err((-32603, nf))), OLD),
        w("resource-not-found")
    );
    // A subscription to a resource that does not exist yet may rightly be accepted.
    assert!(found(&exchange(unknown, Ok(json!({}))), OLD).is_empty());
}

/// 2026-07-28: a log notification for a request without `_meta` logLevel is a violation;
/// under a handshake version it is not judged by this rule.
#[test]
fn logs_without_a_per_request_level_in_2026_07_28() {
    let mut ex = exchange(
        FeatureProbe::GetPrompt {
            name: "greeting".into(),
            arguments: json!({}),
            hostile: false,
        },
        Ok(with_result_type(json!({"messages": []}))),
    );
    let log = json!({"jsonrpc": "2.0", "method": "notifications/message",
        "params": {"level": "info", "data": "rendered prompt greeting"}});
    ex.received.insert(
        0,
        Received {
            at_ms: 0,
            item: ReceivedItem::Frame(Frame::new(serde_json::to_vec(&log).unwrap_or_default())),
        },
    );
    ex.outcome = Outcome::Answered { index: 1 };
    assert!(
        found(&ex, NEW).contains(&("log-level-errors".to_owned(), Severity::Violation)),
        "{:?}",
        found(&ex, NEW)
    );
    assert!(!found(&ex, OLD).iter().any(|(n, _)| n == "log-level-errors"));
}
