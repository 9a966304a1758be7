//! Unit tests of invariants on hand-built exchanges, for the distinctions the end-to-end
//! fixtures do not reach.

use std::time::Duration;

use serde_json::{Value, json};

use super::{Context, judge};
use crate::observed::Frame;
use crate::protocol::ProtocolVersion;
use crate::session::{
    Exchange, Expect, FaultContext, Outcome, Probe, Received, ReceivedItem, Retry, UpstreamHit,
};
use crate::wire::{self, RequestId};

fn call(result: Value, fault: Option<FaultContext>) -> Exchange {
    let id = RequestId::from(7);
    let sent = wire::to_line(&wire::request(
        &id,
        "tools/call",
        Some(json!({"name": "t", "arguments": {"q": "x"}})),
    ));
    let answer = serde_json::to_vec(&wire::success(&id, result)).unwrap();
    Exchange {
        probe: Probe::ToolCall {
            tool: "t".into(),
            arguments: json!({"q": "x"}),
        },
        sent,
        expect: Expect::Response {
            id,
            or_null: false,
            fence: false,
        },
        received: vec![Received {
            at_ms: 1,
            item: ReceivedItem::Frame(Frame::new(answer)),
        }],
        preceding: 0,
        outcome: Outcome::Answered { index: 0 },
        elapsed: Duration::from_millis(1),
        timeout_ms: 1000,
        fault,
    }
}

fn fault(name: &str, status: Option<u16>, definite: bool) -> FaultContext {
    FaultContext {
        name: name.into(),
        status,
        failure: true,
        retry: Retry::Indeterminate,
        hangs: false,
        expectation: String::new(),
        upstream_requests: vec![UpstreamHit {
            method: "GET".into(),
            target: "/x".into(),
            served: name.into(),
            failure: true,
            definite,
        }],
        scope: None,
        attribution: None,
    }
}

fn names(ex: &Exchange) -> Vec<String> {
    judge(&Context::bare(ProtocolVersion::V2025_11_25), ex)
        .into_iter()
        .map(|f| f.invariant)
        .collect()
}

/// A path in a successful result is data; in an error result it is a leak.
#[test]
fn paths_leak_only_from_failures() {
    let text = "see /home/deploy/app/config.toml";
    let ok = call(json!({"content": [{"type": "text", "text": text}]}), None);
    assert!(names(&ok).is_empty(), "{:?}", names(&ok));
    let err = call(
        json!({"content": [{"type": "text", "text": text}], "isError": true}),
        None,
    );
    assert_eq!(names(&err), ["leaked-internals"]);
    // A credential is a leak anywhere.
    let key = call(
        json!({"content": [{"type": "text", "text": "AKIAIOSFODNN7EXAMPLE"}]}),
        None,
    );
    assert_eq!(names(&key), ["leaked-internals"]);
}

/// Only a definite upstream failure can be masked: a 200 with an odd body may be passed
/// through by a fetch-like tool.
#[test]
fn masking_needs_a_definite_failure() {
    let success = json!({"content": [{"type": "text", "text": "here it is"}]});
    let definite = call(success.clone(), Some(fault("unavailable", Some(503), true)));
    assert_eq!(names(&definite), ["error-masked-as-success"]);
    let odd_body = call(success, Some(fault("malformed-json", Some(200), false)));
    assert!(names(&odd_body).is_empty(), "{:?}", names(&odd_body));
}

/// Under a fault on the first request only, a server that recovered (its last request was
/// answered) and returns the page is not masking, even when the page mentions errors; an empty
/// success after a failed first request still is.
#[test]
fn a_recovered_call_is_judged_by_whether_its_success_is_empty() {
    let mut partial = fault("not-found", Some(404), true);
    partial.upstream_requests.push(UpstreamHit {
        method: "GET".into(),
        target: "/page".into(),
        served: "ok".into(),
        failure: false,
        definite: false,
    });
    partial.scope = Some("the first request only".into());
    partial.attribution =
        Some("the first request (GET /x) got 404 not-found, the second (GET /page) 200 ok".into());
    let page = json!({"content": [{"type": "text", "text": "Content type application/json cannot be simplified to markdown: {\"status\": \"ok\"}"}]});
    let ex = call(page.clone(), Some(partial.clone()));
    assert!(names(&ex).is_empty(), "{:?}", names(&ex));
    let blank = call(json!({"content": []}), Some(partial.clone()));
    let findings = judge(&Context::bare(ProtocolVersion::V2025_11_25), &blank);
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert_eq!(findings[0].severity, crate::finding::Severity::Violation);
    assert!(
        findings[0].message.contains(
            "not-found (404) on the first request only [the first request (GET /x) got 404"
        ),
        "{}",
        findings[0].message
    );
    // When the last request failed, the same text is a warning, as before.
    let failed_last = call(page, Some(fault("not-found", Some(404), true)));
    assert_eq!(names(&failed_last), ["error-masked-as-success"]);
}

/// A 200 whose body breaks off fails only a client that reads the body: a status check that
/// reports the 200 is no masking, but an empty success under it is suspicious (a warning).
#[test]
fn a_body_that_breaks_off_is_judged_by_the_result_only() {
    let status = json!({"content": [{"type": "text", "text": "http://127.0.0.1/x answered 200"}]});
    let ex = call(status, Some(fault("truncated-body", Some(200), false)));
    assert!(names(&ex).is_empty(), "{:?}", names(&ex));
    let blank = call(
        json!({"content": [{"type": "text", "text": " "}]}),
        Some(fault("reset-mid-body", Some(200), false)),
    );
    let findings = judge(&Context::bare(ProtocolVersion::V2025_11_25), &blank);
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert_eq!(findings[0].invariant, "error-masked-as-success");
    assert_eq!(findings[0].severity, crate::finding::Severity::Warning);
}

/// An error result under a fault is judged for its wording, not for masking.
#[test]
fn a_specific_error_under_a_fault_is_clean() {
    let ex = call(
        json!({"content": [{"type": "text", "text": "The service failed with 500; retry later."}], "isError": true}),
        Some(fault("server-error-500", Some(500), true)),
    );
    assert!(names(&ex).is_empty(), "{:?}", names(&ex));
}

/// A tool that requires task augmentation refuses a plain call whatever its arguments: its
/// answers to generated arguments are not judged for argument handling.
#[test]
fn task_required_tools_are_not_judged_on_generated_arguments() {
    let refusal = json!({"content": [{"type": "text", "text": "Tool t requires task augmentation"}], "isError": true});
    let mut ex = call(refusal, None);
    ex.probe = Probe::Generated {
        tool: "t".into(),
        arguments: json!({}),
        violation: Some(crate::generate::Violation {
            keyword: "required".into(),
            pointer: String::new(),
            description: "missing required property \"city\"".into(),
        }),
        phase: "random",
    };
    let judged = |execution: Value| {
        let tool = json!({"name": "t", "inputSchema": {"type": "object"}, "execution": execution});
        let tools = super::ToolTable::new(&[tool], ProtocolVersion::V2025_11_25);
        let ctx = Context {
            version: ProtocolVersion::V2025_11_25,
            tools: &tools,
            exact: &[],
            capabilities: None,
        };
        judge(&ctx, &ex)
            .into_iter()
            .map(|f| f.invariant)
            .collect::<Vec<_>>()
    };
    assert_eq!(judged(json!({})), ["unactionable-error"]);
    assert!(judged(json!({"taskSupport": "required"})).is_empty());
}

/// Raw exception text in an `isError` result or in the JSON-RPC error of a `tools/call` is
/// `unactionable-error`, with what it does not tell the model; a message that says what failed
/// and what to do is clean, and so is raw-looking text in a successful result.
#[test]
fn raw_exception_text_is_unactionable_and_says_what_it_lacks() {
    let ctx = Context::bare(ProtocolVersion::V2025_11_25);
    let error_result =
        |text: &str| json!({"content": [{"type": "text", "text": text}], "isError": true});
    let findings = judge(
        &ctx,
        &call(
            error_result("'NoneType' object has no attribute 'get'"),
            None,
        ),
    );
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert_eq!(findings[0].invariant, "unactionable-error");
    let m = &findings[0].message;
    assert!(m.contains("raw exception text in an isError result"), "{m}");
    assert!(m.contains("a Python AttributeError"), "{m}");
    assert!(m.contains("which argument or resource"), "{m}");
    assert!(m.contains("what to do next"), "{m}");

    // Under a retryable fault, the missing retry advice is named too.
    let mut retryable = fault("rate-limited", Some(429), true);
    retryable.retry = Retry::Retryable;
    let findings = judge(
        &ctx,
        &call(
            error_result("Error executing tool t: ReadError('')"),
            Some(retryable),
        ),
    );
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert!(
        findings[0].message.contains("that a retry can help"),
        "{}",
        findings[0].message
    );

    // The JSON-RPC error of a tools/call is read too.
    let mut ex = call(json!({}), None);
    let answer = serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": 7, "error": {"code": -32603, "message": "Cannot read properties of undefined (reading 'id')"}})).unwrap();
    ex.received = vec![Received {
        at_ms: 1,
        item: ReceivedItem::Frame(Frame::new(answer)),
    }];
    let invariants: Vec<String> = judge(&ctx, &ex).into_iter().map(|f| f.invariant).collect();
    assert!(
        invariants.contains(&"unactionable-error".to_owned()),
        "{invariants:?}"
    );

    // A raw errno text that carries the path names its resource, but no next action.
    let findings = judge(
        &ctx,
        &call(
            error_result("ENOENT: no such file or directory, open '/srv/a/b.txt'"),
            None,
        ),
    );
    assert_eq!(findings.len(), 1, "{findings:?}");
    let m = &findings[0].message;
    assert!(
        m.contains("errno code") && !m.contains("which argument or resource"),
        "{m}"
    );
    assert!(m.contains("what to do next"), "{m}");

    // Clean: an actionable message, and raw-looking text in a success.
    assert!(
        judge(
            &ctx,
            &call(
                error_result("No record for q=x (404); check the id, retrying will not help."),
                None
            )
        )
        .is_empty()
    );
    let success =
        json!({"content": [{"type": "text", "text": "'NoneType' object has no attribute 'get'"}]});
    assert!(judge(&ctx, &call(success, None)).is_empty());
}

fn flooded(kind: crate::session::flood::FloodKind, method: &str) -> Exchange {
    let mut ex = call(json!({"content": [{"type": "text", "text": "ok"}]}), None);
    ex.received.push(Received {
        at_ms: 2,
        item: ReceivedItem::Flood(crate::session::flood::Flood {
            kind,
            count: 2_000,
            elapsed_ms: 100,
            client_requests: 3,
            methods: vec![(method.into(), 2_000)],
            sample: format!(r#"{{"jsonrpc":"2.0","method":"{method}"}}"#).into_bytes(),
            token: None,
        }),
    });
    ex
}

fn flood_names(findings: &[crate::finding::Finding]) -> Vec<&str> {
    findings.iter().map(|f| f.invariant.as_str()).collect()
}

#[test]
fn a_recorded_notification_flood_is_a_warning_citing_the_logging_page() {
    use crate::session::flood::FloodKind;
    let ctx = Context::bare(ProtocolVersion::LATEST_WITH_INITIALIZE);
    let findings = judge(
        &ctx,
        &flooded(FloodKind::Notifications, "notifications/message"),
    );
    assert_eq!(flood_names(&findings), ["notification-flood"]);
    let f = &findings[0];
    assert_eq!(f.severity, crate::finding::Severity::Warning);
    assert!(
        f.spec
            .ends_with("server/utilities/logging#implementation-considerations"),
        "{}",
        f.spec
    );
    assert!(
        f.message.contains("2000 in 100 ms")
            && f.message.contains("SHOULD rate-limit log messages"),
        "{}",
        f.message
    );
    // The same exchange without the flood item: nothing.
    let clean = call(json!({"content": [{"type": "text", "text": "ok"}]}), None);
    assert!(judge(&ctx, &clean).is_empty());
}

#[test]
fn a_recorded_request_flood_is_a_warning_naming_the_rule_of_its_method() {
    use crate::session::flood::FloodKind;
    let ctx = Context::bare(ProtocolVersion::LATEST_WITH_INITIALIZE);
    let findings = judge(&ctx, &flooded(FloodKind::ServerRequests, "roots/list"));
    assert_eq!(flood_names(&findings), ["server-request-flood"]);
    assert!(
        findings[0]
            .spec
            .ends_with("client/roots#implementation-guidelines")
    );
    assert!(
        findings[0].message.contains("cache root information"),
        "{}",
        findings[0].message
    );
    let findings = judge(
        &ctx,
        &flooded(FloodKind::ServerRequests, "sampling/createMessage"),
    );
    assert!(
        findings[0]
            .spec
            .ends_with("client/sampling#security-considerations")
    );
}

/// A generated call with schema-valid arguments to a tool `add` that declares an
/// `outputSchema`, answered with `answer` (a result or an error), judged.
fn valid_call_to_a_tool_with_output_schema(answer: Value) -> Vec<crate::finding::Finding> {
    let id = RequestId::from(9);
    let arguments = json!({"a": 1, "b": 2000});
    let sent = wire::to_line(&wire::request(
        &id,
        "tools/call",
        Some(json!({"name": "add", "arguments": arguments})),
    ));
    let frame = if answer.get("code").is_some() {
        wire::error(
            Some(&id),
            answer["code"].as_i64().unwrap_or_default(),
            answer["message"].as_str().unwrap_or_default(),
            None,
        )
    } else {
        wire::success(&id, answer)
    };
    let mut ex = call(json!({}), None);
    ex.probe = Probe::Generated {
        tool: "add".into(),
        arguments,
        violation: None,
        phase: "random",
    };
    ex.sent = sent;
    ex.expect = Expect::Response {
        id,
        or_null: false,
        fence: false,
    };
    ex.received = vec![Received {
        at_ms: 1,
        item: ReceivedItem::Frame(Frame::new(serde_json::to_vec(&frame).unwrap())),
    }];
    let tool = json!({
        "name": "add",
        "inputSchema": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}},
        "outputSchema": {"type": "object", "properties": {"sum": {"type": "number"}}, "required": ["sum"]}
    });
    let tools = super::ToolTable::new(&[tool], ProtocolVersion::V2025_11_25);
    let ctx = Context {
        tools: &tools,
        ..Context::bare(ProtocolVersion::V2025_11_25)
    };
    judge(&ctx, &ex)
}

/// An SDK's "Output validation error" for schema-valid arguments blames the tool's output, not
/// the arguments: one `structured-content-schema` warning, never `valid-args-rejected`; a text
/// that blames the arguments still is `valid-args-rejected`, and nothing else.
#[test]
fn output_validation_errors_are_the_outputs_fault_not_the_arguments() {
    let error_result =
        |text: &str| json!({"content": [{"type": "text", "text": text}], "isError": true});
    for answer in [
        error_result(
            "Output validation error: outputSchema defined but no structured output returned",
        ),
        error_result(
            "MCP error -32602: Output validation error: Tool add has an output schema but no structured content was provided",
        ),
        error_result("Output validation error: 'sum' is a required property"),
        json!({"code": -32602, "message": "Output validation error: Tool add has an output schema but no structured content was provided"}),
    ] {
        let findings = valid_call_to_a_tool_with_output_schema(answer.clone());
        let names: Vec<&str> = findings.iter().map(|f| f.invariant.as_str()).collect();
        assert_eq!(
            names,
            ["structured-content-schema"],
            "{answer}: {findings:?}"
        );
        assert_eq!(findings[0].severity, crate::finding::Severity::Warning);
        assert!(
            findings[0].message.contains("its own output validation"),
            "{}",
            findings[0].message
        );
    }
    for answer in [
        error_result("Invalid arguments: b must be at most 1000."),
        json!({"code": -32602, "message": "Invalid params: b must be at most 1000"}),
    ] {
        let findings = valid_call_to_a_tool_with_output_schema(answer.clone());
        let names: Vec<&str> = findings.iter().map(|f| f.invariant.as_str()).collect();
        assert_eq!(names, ["valid-args-rejected"], "{answer}: {findings:?}");
    }
}

/// A wire-phase `ping` request nested `depth` levels deep in its params, left unanswered (the
/// fence ping after it was answered).
fn unanswered_wire_ping(depth: usize) -> Exchange {
    let mut params = json!({ "x": 1 });
    for _ in 0..depth {
        params = json!({ "a": params });
    }
    let id = RequestId::from(9);
    let sent = wire::to_line(&wire::request(&id, "ping", Some(params)));
    Exchange {
        probe: Probe::Wire {
            case: 1,
            what: "ping with deep nesting".into(),
            expected: super::wire_answer::Expected::Response(id.clone()),
            phase: "generated",
        },
        sent,
        expect: Expect::Response {
            id,
            or_null: true,
            fence: true,
        },
        received: Vec::new(),
        preceding: 0,
        outcome: Outcome::Fenced,
        elapsed: Duration::from_millis(1),
        timeout_ms: 1000,
        fault: None,
    }
}

/// A request left unanswered is a violation, but one nested past
/// [`super::wire_answer::DEEP_NESTING`] levels is a warning: a parser may refuse a frame on
/// depth (RFC 8259 §9), and the spec does not say what such a frame is owed.
#[test]
fn an_unanswered_request_nested_very_deep_is_a_warning() {
    let ctx = Context::bare(ProtocolVersion::V2025_11_25);
    let severities = |depth: usize| -> Vec<(String, crate::finding::Severity)> {
        judge(&ctx, &unanswered_wire_ping(depth))
            .into_iter()
            .map(|f| (f.invariant, f.severity))
            .collect()
    };
    assert_eq!(
        severities(3),
        [(
            "no-response".to_owned(),
            crate::finding::Severity::Violation
        )]
    );
    let deep = judge(&ctx, &unanswered_wire_ping(200));
    assert_eq!(deep.len(), 1, "{deep:?}");
    assert_eq!(deep[0].invariant, "no-response");
    assert_eq!(deep[0].severity, crate::finding::Severity::Warning);
    assert!(deep[0].message.contains("RFC 8259"), "{}", deep[0].message);
}

/// A request with a member JSON-RPC 2.0 does not define, dropped or rejected with an error of
/// id null, is a warning (a strict parser may read it as an invalid request); the same
/// answer to a plain request is a violation.
#[test]
fn a_request_with_an_undefined_member_read_strictly_is_a_warning() {
    let ctx = Context::bare(ProtocolVersion::V2025_11_25);
    let rejected = |what: &str| {
        let mut ex = unanswered_wire_ping(0);
        if let Probe::Wire { what: w, .. } = &mut ex.probe {
            *w = what.to_owned();
        }
        let answer = serde_json::to_vec(&json!({
            "jsonrpc": "2.0", "id": null,
            "error": {"code": -32700, "message": "Parse error"}
        }))
        .unwrap();
        ex.received = vec![Received {
            at_ms: 1,
            item: ReceivedItem::Frame(Frame::new(answer)),
        }];
        judge(&ctx, &ex)
            .into_iter()
            .map(|f| (f.invariant, f.severity))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        rejected("ping with an unknown member"),
        [(
            "response-id-mismatch".to_owned(),
            crate::finding::Severity::Warning
        )]
    );
    assert_eq!(
        rejected("a valid ping"),
        [(
            "response-id-mismatch".to_owned(),
            crate::finding::Severity::Violation
        )]
    );
    let mut dropped = unanswered_wire_ping(0);
    if let Probe::Wire { what, .. } = &mut dropped.probe {
        *what = "ping with an unknown member".into();
    }
    let f = judge(&ctx, &dropped);
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].severity, crate::finding::Severity::Warning);
    assert!(
        f[0].probe.starts_with("wire frames dropped"),
        "{}",
        f[0].probe
    );
}

/// A request whose `params._meta` is not an object is invalid under MCP: dropping it is a
/// warning (as for other invalid requests), serving it is no fault.
#[test]
fn a_request_with_a_meta_that_is_not_an_object_is_an_invalid_request() {
    let ctx = Context::bare(ProtocolVersion::V2025_11_25);
    let id = RequestId::from(9);
    let mut ex = unanswered_wire_ping(0);
    ex.sent = wire::to_line(&wire::request(&id, "ping", Some(json!({"_meta": 2.5}))));
    if let Probe::Wire { what, .. } = &mut ex.probe {
        *what = "ping with a params member of another type".into();
    }
    let dropped = judge(&ctx, &ex);
    assert_eq!(dropped.len(), 1, "{dropped:?}");
    assert_eq!(dropped[0].severity, crate::finding::Severity::Warning);
    let answer = serde_json::to_vec(&wire::success(&id, json!({}))).unwrap();
    ex.received = vec![Received {
        at_ms: 1,
        item: ReceivedItem::Frame(Frame::new(answer)),
    }];
    ex.outcome = Outcome::Answered { index: 0 };
    assert!(judge(&ctx, &ex).is_empty(), "{:?}", judge(&ctx, &ex));
}

/// A batch answered without an error for its invalid element: a violation where the version
/// defines batches (2025-03-26), a warning where it does not (2025-11-25), since the spec then
/// owes a batch nothing in particular.
#[test]
fn an_incomplete_batch_answer_is_a_warning_where_batches_are_undefined() {
    let judged = |version: ProtocolVersion| {
        let ctx = Context::bare(version);
        let mut ex = unanswered_wire_ping(0);
        let id = RequestId::from(1);
        ex.sent = br#"["",{"jsonrpc":"2.0","id":1,"method":"ping"}]"#.to_vec();
        ex.sent.push(b'\n');
        if let Probe::Wire { expected, .. } = &mut ex.probe {
            *expected = super::wire_answer::Expected::Batch {
                items: vec![
                    super::wire_answer::Expected::Error(None),
                    super::wire_answer::Expected::Response(id.clone()),
                ],
                may_reject: !version.rules().batches,
            };
        }
        let answer =
            serde_json::to_vec(&json!([{"jsonrpc": "2.0", "id": 1, "result": {}}])).unwrap();
        ex.received = vec![Received {
            at_ms: 1,
            item: ReceivedItem::Frame(Frame::new(answer)),
        }];
        judge(&ctx, &ex)
            .into_iter()
            .map(|f| (f.invariant, f.severity))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        judged(ProtocolVersion::V2025_03_26),
        [(
            "wire-answer".to_owned(),
            crate::finding::Severity::Violation
        )]
    );
    assert_eq!(
        judged(ProtocolVersion::V2025_11_25),
        [("wire-answer".to_owned(), crate::finding::Severity::Warning)]
    );
}

/// A notification that also carries `result` or `error` is owed nothing (read by its
/// `method`) or one error with id null (read strictly as an invalid request); the same frame
/// with an id is owed an error with that id. Dropping the id-less one is no finding.
#[test]
fn a_notification_with_response_members_may_be_dropped_or_rejected() {
    use super::wire_answer::Expected;
    let v = ProtocolVersion::V2025_11_25;
    for member in [r#""result":{}"#, r#""error":{"code":1,"message":"m"}"#] {
        let frame = format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":"t","progress":1}},{member}}}"#
        );
        let expected = Expected::of_frame(frame.as_bytes(), v);
        assert!(expected.accepts_nothing(), "{member}: {expected}");
        let null_error = br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"x"}}"#;
        assert!(expected.check(&[null_error]).is_ok(), "{member}");
        let success = br#"{"jsonrpc":"2.0","id":null,"result":{}}"#;
        assert!(expected.check(&[success]).is_err(), "{member}");

        // As a batch element beside a request: the batch answer holds the request's
        // response, with or without an error of id null for the element.
        let batch = format!(r#"[{frame},{{"jsonrpc":"2.0","id":7,"method":"ping"}}]"#);
        let expected = Expected::of_frame(batch.as_bytes(), v);
        let pong = r#"{"jsonrpc":"2.0","id":7,"result":{}}"#;
        let null = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"x"}}"#;
        for answer in [format!("[{pong}]"), format!("[{pong},{null}]")] {
            assert!(
                expected.check(&[answer.as_bytes()]).is_ok(),
                "{member}: {answer}"
            );
        }
        let twice = format!("[{pong},{null},{null}]");
        assert!(expected.check(&[twice.as_bytes()]).is_err(), "{member}");

        let with_id = format!(r#"{{"jsonrpc":"2.0","id":5,"method":"ping",{member}}}"#);
        let owed = Expected::of_frame(with_id.as_bytes(), v);
        assert_eq!(owed, Expected::Error(Some(RequestId::from(5))), "{member}");
        assert!(!owed.accepts_nothing(), "{member}");
    }
}

/// The excerpt of a kept frame start reads as the excerpt of the whole frame: the same text,
/// scrubbed, and the whole frame's size.
#[test]
fn the_excerpt_of_a_kept_start_is_the_excerpt_of_the_whole_frame() {
    let frame = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"token":"ghp_{}","pad":"{}"}}}}"#,
        "a".repeat(36),
        "x".repeat(10_000)
    );
    let kept = &frame.as_bytes()[..super::KEPT_BYTES];
    let whole = super::safe_excerpt(frame.as_bytes());
    assert_eq!(super::safe_excerpt_of(kept, frame.len()), whole);
    assert!(whole.ends_with(" bytes)"), "cut: {whole}");
    assert!(!whole.contains(&"a".repeat(36)), "scrubbed: {whole}");
    // A frame kept whole is quoted as before.
    let small = br#"{"jsonrpc":"2.0","id":1}"#;
    assert_eq!(
        super::safe_excerpt_of(small, small.len()),
        super::safe_excerpt(small)
    );
}

/// Every oracle module with a per-exchange `check` is in [`super::CHECKS`], once (under its
/// file's name): a new
/// invariant's check cannot be written and then forgotten by `judge`.
#[test]
fn every_per_exchange_check_is_judged_once() {
    let names: Vec<&str> = super::CHECKS.iter().map(|c| c.name()).collect();
    let mut unique = names.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), names.len(), "{names:?}");
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/oracle");
    let mut found = 0;
    for entry in std::fs::read_dir(&dir).expect("the oracle folder") {
        let path = entry.expect("an entry").path();
        let code = std::fs::read_to_string(&path).unwrap_or_default();
        if code.lines().any(|l| {
            l.starts_with("pub fn check(ctx: &Context<'_>, ex: &Exchange) -> Vec<Finding>")
        }) {
            let stem = path
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or_default();
            assert!(
                names.contains(&stem),
                "{stem} has a check that judge does not run"
            );
            found += 1;
        }
    }
    assert_eq!(found, names.len(), "{names:?}");
}

/// Every catalog entry is judged somewhere: declared by a per-exchange check or listed as
/// judged across exchanges, and no entry both ways; an entry left out of both is seen.
#[test]
fn every_catalog_entry_is_judged_by_a_check_or_across_exchanges() {
    let by_checks: Vec<&str> = super::CHECKS
        .iter()
        .flat_map(|c| c.invariants().iter().map(|i| i.code))
        .collect();
    let across: Vec<&str> = super::ACROSS_EXCHANGES.iter().map(|i| i.code).collect();
    let unjudged = |catalog: &[crate::finding::Invariant]| -> Vec<&'static str> {
        catalog
            .iter()
            .map(|i| i.code)
            .filter(|c| !by_checks.contains(c) && !across.contains(c))
            .collect()
    };
    assert_eq!(unjudged(crate::finding::CATALOG), Vec::<&str>::new());
    for code in &across {
        assert!(!by_checks.contains(code), "{code} is both");
    }
    let mut planted = crate::finding::CATALOG.to_vec();
    planted.push(crate::finding::Invariant {
        code: "MC999",
        ..crate::finding::CATALOG[0]
    });
    assert_eq!(unjudged(&planted), vec!["MC999"]);
}
