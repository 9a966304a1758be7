//! Every fault, observed from a real HTTP client (reqwest) on loopback.

mod common;

use std::time::{Duration, Instant};

use common::{chain, client, client_with_timeout, headers_text, read_body, upstream_with};
use mcp_chaos_faults::{DEFAULT_OK_BODY, FakeUpstream, Fault, Rule};

async fn get(url: &str) -> reqwest::Response {
    client().get(url).send().await.expect("response")
}

/// Asserts a status fault: the code, a JSON error body with a message, canaries in body
/// and headers, and a journal entry marked as a failure.
async fn assert_status_fault(fault: Fault, code: u16, name: &str) -> reqwest::header::HeaderMap {
    let upstream = upstream_with(fault).await;
    let response = get(&upstream.url_for("/v1/things/42")).await;
    assert_eq!(response.status().as_u16(), code, "{name}");
    assert_eq!(
        response.headers()["content-type"],
        "application/json",
        "{name}"
    );
    let header_map = response.headers().clone();
    let headers = headers_text(&header_map);
    let canaries = upstream.canaries().clone();
    let body = response.text().await.expect("body");
    let json: serde_json::Value = serde_json::from_str(&body).expect("error body is JSON");
    assert_eq!(json["error"]["status"], code, "{name}");
    assert!(
        json["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty())
    );
    assert_eq!(
        canaries.find_in(&body).len(),
        7,
        "{name}: all canaries in body"
    );
    for c in [
        canaries.api_key(),
        canaries.hostname(),
        canaries.private_ip(),
        canaries.source_path(),
        canaries.sql(),
        canaries.java_frame(),
    ] {
        assert!(headers.contains(c), "{name}: {c} in headers");
    }
    let entries = upstream.journal().entries();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].fault.name(), name);
    assert!(entries[0].failure);
    header_map
}

#[tokio::test]
async fn ok_serves_the_canned_body_without_canaries() {
    let upstream = FakeUpstream::builder()
        .seed(1)
        .rule(Rule::any().respond_with(Fault::ok(r#"{"answer":42}"#)))
        .start()
        .await
        .expect("start");
    let response = get(&upstream.url_for("/custom")).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "application/json");
    let headers = headers_text(response.headers());
    assert_eq!(response.text().await.expect("body"), r#"{"answer":42}"#);
    assert!(!upstream.canaries().leaked_in(&headers));

    // The default healthy body for unmatched requests / no rules.
    let plain = FakeUpstream::builder().start().await.expect("start");
    let response = get(&plain.url_for("/anything")).await;
    assert_eq!(response.status(), 200);
    let body = response.text().await.expect("body");
    assert_eq!(body, DEFAULT_OK_BODY);
    assert!(!plain.canaries().leaked_in(&body));
    let entry = &plain.journal().entries()[0];
    assert_eq!(entry.fault.name(), "ok");
    assert!(!entry.failure);
    assert_eq!(entry.rule_index, None);
}

#[tokio::test]
async fn not_found_and_gone_are_json_errors_with_canaries() {
    assert_status_fault(Fault::not_found(), 404, "not-found").await;
    assert_status_fault(Fault::gone(), 410, "gone").await;
}

#[tokio::test]
async fn unauthorized_and_forbidden() {
    let r = assert_status_fault(Fault::status(401).expect("401"), 401, "unauthorized").await;
    assert!(r.contains_key("www-authenticate"));
    assert_status_fault(Fault::status(403).expect("403"), 403, "forbidden").await;
}

#[tokio::test]
async fn rate_limited_has_retry_after() {
    let r = assert_status_fault(Fault::rate_limit(7), 429, "rate-limited").await;
    assert_eq!(r["retry-after"], "7");
}

#[tokio::test]
async fn server_errors_500_502_503_504() {
    for (code, name) in [
        (500, "server-error-500"),
        (502, "bad-gateway"),
        (503, "unavailable"),
        (504, "gateway-timeout"),
    ] {
        let fault = Fault::status(code).expect("status");
        assert_eq!(fault.name(), name);
        assert_status_fault(fault, code, name).await;
    }
}

#[tokio::test]
async fn delay_then_healthy_response() {
    let upstream = upstream_with(Fault::delay(300)).await;
    let started = Instant::now();
    let response = get(&upstream.url_for("/slow")).await;
    let status = response.status();
    let body = response.text().await.expect("body");
    assert!(started.elapsed() >= Duration::from_millis(300));
    assert_eq!(status, 200);
    assert_eq!(body, DEFAULT_OK_BODY);
    let entry = &upstream.journal().entries()[0];
    assert_eq!(entry.fault, Fault::delay(300));
    assert!(!entry.failure);
}

#[tokio::test]
async fn hang_makes_the_client_time_out() {
    let upstream = upstream_with(Fault::hang()).await;
    let started = Instant::now();
    let err = client_with_timeout(Duration::from_millis(300))
        .get(upstream.url_for("/hang"))
        .send()
        .await
        .expect_err("must not answer");
    assert!(err.is_timeout(), "{}", chain(&err));
    assert!(started.elapsed() >= Duration::from_millis(300));
    // The request was journaled before the server started hanging.
    let entries = upstream.journal().entries();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].fault, Fault::Hang);
    assert!(entries[0].failure);
    // Hung connections do not keep the server alive.
    tokio::time::timeout(Duration::from_secs(5), upstream.shutdown())
        .await
        .expect("shutdown does not wait for hung requests");
}

#[tokio::test]
async fn reset_before_headers() {
    let upstream = upstream_with(Fault::reset()).await;
    let err = client()
        .get(upstream.url_for("/reset"))
        .send()
        .await
        .expect_err("reset");
    let text = chain(&err);
    assert!(!err.is_timeout(), "{text}");
    assert!(
        text.contains("reset"),
        "expected a connection reset: {text}"
    );
}

#[tokio::test]
async fn reset_mid_body_after_partial_bytes() {
    let upstream = upstream_with(Fault::reset_mid_body(0.5)).await;
    let response = get(&upstream.url_for("/partial")).await;
    assert_eq!(response.status(), 200);
    let full = DEFAULT_OK_BODY.len();
    assert_eq!(response.content_length(), Some(full as u64));
    let (got, err) = read_body(response).await;
    let err = err.expect("the body must fail");
    let text = chain(&err);
    assert!(err.is_body() || err.is_decode(), "{text}");
    assert!(
        text.contains("reset"),
        "expected a connection reset: {text}"
    );
    // The client got the headers and exactly the first half of the body before the RST.
    assert_eq!(got, &DEFAULT_OK_BODY.as_bytes()[..full / 2]);
}

#[tokio::test]
async fn close_before_headers() {
    let upstream = upstream_with(Fault::close_before_headers()).await;
    let err = client()
        .get(upstream.url_for("/close"))
        .send()
        .await
        .expect_err("closed");
    let text = chain(&err);
    assert!(!err.is_timeout(), "{text}");
    assert!(
        text.contains("closed") || text.contains("incomplete"),
        "expected an early close: {text}"
    );
}

#[tokio::test]
async fn truncated_body_sends_a_prefix_then_closes() {
    let upstream = upstream_with(Fault::truncate_body(0.5)).await;
    let response = get(&upstream.url_for("/truncated")).await;
    assert_eq!(response.status(), 200);
    let full = DEFAULT_OK_BODY.len();
    assert_eq!(response.content_length(), Some(full as u64));
    let headers = headers_text(response.headers());
    assert!(headers.contains(upstream.canaries().hostname()));
    let (got, err) = read_body(response).await;
    let err = err.expect("the body must fail");
    assert!(err.is_body() || err.is_decode(), "{}", chain(&err));
    assert_eq!(got, &DEFAULT_OK_BODY.as_bytes()[..full / 2]);
    let entry = &upstream.journal().entries()[0];
    assert_eq!(entry.fault.name(), "truncated-body");
    assert!(entry.failure);
}

#[tokio::test]
async fn malformed_json_is_not_json() {
    let upstream = upstream_with(Fault::malformed_json()).await;
    let response = get(&upstream.url_for("/json")).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "application/json");
    let body = response.bytes().await.expect("body");
    assert!(serde_json::from_slice::<serde_json::Value>(&body).is_err());
    let text = String::from_utf8_lossy(&body);
    assert_eq!(upstream.canaries().find_in(&text).len(), 7);
}

#[tokio::test]
async fn wrong_content_type_is_an_html_page() {
    let upstream = upstream_with(Fault::wrong_content_type()).await;
    let response = get(&upstream.url_for("/json")).await;
    assert_eq!(response.status(), 200);
    let content_type = response.headers()["content-type"]
        .to_str()
        .expect("ascii")
        .to_owned();
    assert!(content_type.starts_with("text/html"), "{content_type}");
    let body = response.text().await.expect("body");
    assert!(body.contains("<html>"));
    assert!(serde_json::from_str::<serde_json::Value>(&body).is_err());
    assert_eq!(upstream.canaries().find_in(&body).len(), 7);
}

#[tokio::test]
async fn slow_body_dribbles_the_healthy_body() {
    let body = "0123456789abcdefghijklmnopqrstuvwxyz0123";
    let upstream = FakeUpstream::builder()
        .rule(
            Rule::any()
                .respond_with(Fault::slow_body(10, 100))
                .otherwise(Fault::ok(body)),
        )
        .start()
        .await
        .expect("start");
    let started = Instant::now();
    let response = get(&upstream.url_for("/slow")).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.content_length(), Some(body.len() as u64));
    let (got, err) = read_body(response).await;
    assert!(err.is_none());
    // Four chunks, three pauses of 100 ms.
    assert!(started.elapsed() >= Duration::from_millis(300));
    assert_eq!(got, body.as_bytes());
    assert!(!upstream.canaries().leaked_in(body));
    assert!(!upstream.journal().entries()[0].failure);
}

#[tokio::test]
async fn huge_body_is_streamed_json_of_the_exact_size() {
    let size: u64 = 4 * 1024 * 1024 + 3;
    let upstream = upstream_with(Fault::huge_body(size)).await;
    let response = get(&upstream.url_for("/huge")).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.content_length(), Some(size));
    assert!(headers_text(response.headers()).contains(upstream.canaries().api_key()));
    let (got, err) = read_body(response).await;
    assert!(err.is_none());
    assert_eq!(got.len() as u64, size);
    let json: serde_json::Value = serde_json::from_slice(&got).expect("valid JSON");
    assert!(json["data"].is_string());
    assert!(upstream.journal().entries()[0].failure);
}

#[tokio::test]
async fn pass_through_on_a_fake_upstream_is_refused_with_502() {
    let upstream = upstream_with(Fault::pass_through()).await;
    let response = get(&upstream.url_for("/x")).await;
    assert_eq!(response.status(), 502);
    let entry = &upstream.journal().entries()[0];
    assert_eq!(entry.fault, Fault::BadGateway);
    assert!(entry.failure);
    assert!(entry.note.as_deref().is_some_and(|n| n.contains("refused")));
}

#[tokio::test]
async fn the_catalog_runs_end_to_end() {
    // Every standard profile answers (or fails) promptly enough for a 2 s client,
    // except hang and the default 16 MiB / slow bodies, which are exercised above.
    for fault in Fault::catalog() {
        if matches!(fault.name(), "hang" | "slow-body" | "huge-body" | "delay") {
            continue;
        }
        let upstream = upstream_with(fault.clone()).await;
        let result = client_with_timeout(Duration::from_secs(5))
            .get(upstream.url_for("/catalog"))
            .send()
            .await;
        let failed = match result {
            Err(_) => true,
            Ok(r) => {
                let status = r.status();
                let (body, err) = read_body(r).await;
                err.is_some()
                    || !status.is_success()
                    || serde_json::from_slice::<serde_json::Value>(&body).is_err()
            }
        };
        assert_eq!(failed, fault.is_failure(), "{fault}");
        let entries = upstream.journal().entries();
        assert_eq!(entries.len(), 1, "{fault}");
        assert_eq!(entries[0].fault, fault);
    }
}
