//! The journal's contents and the canaries, observed through real requests.

mod common;

use std::time::Duration;

use common::{client, client_with_timeout, headers_text, read_body};
use mcp_chaos_faults::{
    FakeUpstream, Fault, Rule, Schedule,
    matchers::{header, method, path_prefix},
};

#[tokio::test]
async fn journal_records_requests_rules_and_faults() {
    let upstream = FakeUpstream::builder()
        .seed(3)
        .journal_header("X-Trace-Me")
        .rule(
            Rule::given(method("POST"))
                .and(path_prefix("/v1/items"))
                .and(header("x-api-key", "secret-1"))
                .respond_with(Fault::gone())
                .named("items-gone"),
        )
        .rule(
            Rule::given(path_prefix("/v1/"))
                .respond_with(Fault::not_found())
                .schedule(Schedule::every_nth(2)),
        )
        .start()
        .await
        .expect("start");
    let client = client();

    let r = client
        .post(upstream.url_for("/v1/items?dry_run=true"))
        .header("x-api-key", "secret-1")
        .header("authorization", "Bearer t0k")
        .header("x-trace-me", "yes")
        .header("x-not-recorded", "no")
        .body(vec![b'a'; 1234])
        .send()
        .await
        .expect("response");
    assert_eq!(r.status(), 410);
    let mark = upstream.journal().mark();
    for path in ["/v1/a", "/v1/b", "/other"] {
        client
            .get(upstream.url_for(path))
            .send()
            .await
            .expect("response");
    }

    let entries = upstream.journal().entries();
    assert_eq!(entries.len(), 4);
    let seqs: Vec<u64> = entries.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, [0, 1, 2, 3]);
    assert!(entries.windows(2).all(|w| w[0].at_ms <= w[1].at_ms));

    let post = &entries[0];
    assert_eq!(post.method, "POST");
    assert_eq!(post.target, "/v1/items?dry_run=true");
    assert_eq!(post.host.as_deref(), Some("127.0.0.1"));
    assert_eq!(post.body_bytes, 1234);
    assert_eq!(post.rule_index, Some(0));
    assert_eq!(post.rule_name.as_deref(), Some("items-gone"));
    assert_eq!(post.fault, Fault::Gone);
    assert!(post.failure);
    assert_eq!(post.header("x-api-key"), Some("secret-1"));
    assert_eq!(post.header("authorization"), Some("Bearer t0k"));
    assert_eq!(post.header("x-trace-me"), Some("yes"));
    assert_eq!(post.header("x-not-recorded"), None);

    // every_nth(2) on the second rule: first healthy, second not-found.
    let since = upstream.journal().since(mark);
    let summary: Vec<(&str, Option<usize>, &str, bool)> = since
        .iter()
        .map(|e| (e.target.as_str(), e.rule_index, e.fault.name(), e.failure))
        .collect();
    assert_eq!(
        summary,
        [
            ("/v1/a", Some(1), "ok", false),
            ("/v1/b", Some(1), "not-found", true),
            ("/other", None, "ok", false),
        ]
    );

    let drained = upstream.journal().drain();
    assert_eq!(drained.len(), 4);
    assert!(upstream.journal().is_empty());
    assert_eq!(upstream.journal().total_recorded(), 4);
}

#[tokio::test]
async fn a_hanging_request_is_journaled_while_it_hangs() {
    let upstream = FakeUpstream::builder()
        .fault(Fault::hang())
        .start()
        .await
        .expect("start");
    let mark = upstream.journal().mark();
    let url = upstream.url_for("/stuck");
    let call = tokio::spawn(async move {
        client_with_timeout(Duration::from_secs(3))
            .get(url)
            .send()
            .await
    });
    let entries = upstream
        .journal()
        .wait_for(mark, 1, Duration::from_secs(3))
        .await;
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].fault, Fault::Hang);
    call.abort();
}

/// Requests `fault` and returns (headers, body); body is empty when the transfer fails.
async fn fetch(upstream: &FakeUpstream) -> (String, String) {
    let response = client()
        .get(upstream.url_for("/c"))
        .send()
        .await
        .expect("response");
    let headers = headers_text(response.headers());
    let (body, _) = read_body(response).await;
    (headers, String::from_utf8_lossy(&body).into_owned())
}

#[tokio::test]
async fn canaries_are_in_failure_responses_and_never_in_healthy_ones() {
    let upstream = FakeUpstream::builder()
        .seed(5)
        .start()
        .await
        .expect("start");
    let canaries = upstream.canaries().clone();
    let header_canaries = [
        canaries.api_key(),
        canaries.hostname(),
        canaries.private_ip(),
        canaries.source_path(),
        canaries.sql(),
        canaries.java_frame(),
    ];
    for fault in [
        Fault::not_found(),
        Fault::gone(),
        Fault::rate_limit(1),
        Fault::status(500).expect("500"),
        Fault::status(502).expect("502"),
        Fault::status(503).expect("503"),
        Fault::status(504).expect("504"),
        Fault::malformed_json(),
        Fault::wrong_content_type(),
        Fault::truncate_body(0.5),
        Fault::reset_mid_body(0.5),
        Fault::huge_body(2048),
    ] {
        upstream.set_fault(fault.clone());
        let (headers, body) = fetch(&upstream).await;
        for c in header_canaries {
            assert!(headers.contains(c), "{fault}: header canary {c}");
        }
        if fault.http_status() != Some(200)
            || matches!(fault.name(), "malformed-json" | "wrong-content-type")
        {
            assert_eq!(canaries.find_in(&body).len(), 7, "{fault}: body canaries");
        }
    }
    for fault in [
        Fault::ok_default(),
        Fault::delay(1),
        Fault::slow_body(64, 1),
    ] {
        upstream.set_fault(fault.clone());
        let (headers, body) = fetch(&upstream).await;
        assert!(!canaries.leaked_in(&headers), "{fault}: headers clean");
        assert!(!canaries.leaked_in(&body), "{fault}: body clean");
        assert!(!body.is_empty());
    }
}

#[tokio::test]
async fn canaries_are_unique_per_run_and_replay_from_the_seed() {
    let a = FakeUpstream::builder().start().await.expect("start");
    let b = FakeUpstream::builder().start().await.expect("start");
    assert_ne!(a.seed(), b.seed());
    for (x, y) in a.canaries().strings().iter().zip(b.canaries().strings()) {
        assert_ne!(*x, y);
    }
    let replay = FakeUpstream::builder()
        .seed(a.seed())
        .start()
        .await
        .expect("start");
    assert_eq!(replay.canaries(), a.canaries());
}
