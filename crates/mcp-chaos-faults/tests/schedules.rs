//! Every schedule, observed from a real HTTP client on loopback.

mod common;

use std::time::Duration;

use common::client;
use mcp_chaos_faults::{FakeUpstream, Fault, Rule, Schedule};

async fn upstream(fault: Fault, schedule: Schedule, seed: u64) -> FakeUpstream {
    FakeUpstream::builder()
        .seed(seed)
        .rule(Rule::any().respond_with(fault).schedule(schedule))
        .start()
        .await
        .expect("start")
}

async fn statuses(upstream: &FakeUpstream, n: usize) -> Vec<u16> {
    let client = client();
    let mut out = Vec::new();
    for i in 0..n {
        let response = client
            .get(upstream.url_for(&format!("/r/{i}")))
            .send()
            .await
            .expect("response");
        out.push(response.status().as_u16());
    }
    out
}

#[tokio::test]
async fn always() {
    let u = upstream(Fault::unavailable(), Schedule::always(), 1).await;
    assert_eq!(statuses(&u, 3).await, [503, 503, 503]);
}

#[tokio::test]
async fn first_n_then_the_otherwise_fault() {
    let u = FakeUpstream::builder()
        .rule(
            Rule::any()
                .respond_with(Fault::unavailable())
                .schedule(Schedule::first_n(2))
                .otherwise(Fault::not_found()),
        )
        .start()
        .await
        .expect("start");
    assert_eq!(statuses(&u, 4).await, [503, 503, 404, 404]);
    let failures: Vec<bool> = u.journal().entries().iter().map(|e| e.failure).collect();
    assert_eq!(failures, [true, true, true, true]);

    // Without `otherwise`, the healthy response follows.
    let u = upstream(Fault::unavailable(), Schedule::first_n(2), 1).await;
    assert_eq!(statuses(&u, 4).await, [503, 503, 200, 200]);
    // Replacing the rules restarts the schedule.
    u.set_rules([Rule::any()
        .respond_with(Fault::gone())
        .schedule(Schedule::first_n(1))]);
    assert_eq!(statuses(&u, 2).await, [410, 200]);
}

#[tokio::test]
async fn every_nth() {
    let u = upstream(Fault::status(502).expect("502"), Schedule::every_nth(3), 1).await;
    assert_eq!(statuses(&u, 7).await, [200, 200, 502, 200, 200, 502, 200]);
}

#[tokio::test]
async fn probability_is_reproducible_from_the_seed() {
    async fn run(seed: u64) -> Vec<u16> {
        let u = upstream(Fault::unavailable(), Schedule::probability(0.5), seed).await;
        statuses(&u, 32).await
    }
    let a = run(11).await;
    assert_eq!(a, run(11).await, "same seed, same sequence");
    assert_ne!(a, run(12).await, "different seed, different sequence");
    assert!(a.contains(&503) && a.contains(&200), "{a:?}");

    // An explicit seed overrides the server's.
    let b = upstream(
        Fault::unavailable(),
        Schedule::probability_seeded(0.5, 99),
        1,
    )
    .await;
    let c = upstream(
        Fault::unavailable(),
        Schedule::probability_seeded(0.5, 99),
        2,
    )
    .await;
    assert_eq!(statuses(&b, 16).await, statuses(&c, 16).await);
}

#[tokio::test]
async fn outage_is_healthy_then_failing_then_healthy() {
    let (after, length) = (300u64, 600u64);
    let u = upstream(
        Fault::unavailable(),
        Schedule::outage(Duration::from_millis(after), Duration::from_millis(length)),
        1,
    )
    .await;
    let client = client();
    loop {
        let r = client.get(u.url_for("/o")).send().await.expect("response");
        let failed = r.status() == 503;
        let entries = u.journal().entries();
        let last = entries.last().expect("journaled");
        assert_eq!(failed, last.failure);
        if last.at_ms >= after + length + 100 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(40)).await;
    }
    let entries = u.journal().entries();
    for e in &entries {
        let in_window = e.at_ms >= after && e.at_ms < after + length;
        assert_eq!(e.failure, in_window, "request at {} ms", e.at_ms);
    }
    assert!(entries.iter().any(|e| e.failure), "saw the outage");
    assert!(
        entries.last().is_some_and(|e| !e.failure),
        "saw the recovery"
    );
}

#[tokio::test]
async fn quota_answers_429_with_retry_after_once_used_up() {
    let u = upstream(
        Fault::rate_limit(0),
        Schedule::quota(2, Duration::from_secs(30)),
        1,
    )
    .await;
    let client = client();
    let mut seen = Vec::new();
    for _ in 0..4 {
        let r = client.get(u.url_for("/q")).send().await.expect("response");
        let retry_after = r
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        seen.push((r.status().as_u16(), retry_after));
    }
    assert_eq!(seen[0], (200, None));
    assert_eq!(seen[1], (200, None));
    for (status, retry_after) in &seen[2..] {
        assert_eq!(*status, 429);
        let secs = retry_after.expect("Retry-After");
        assert!((1..=30).contains(&secs), "{secs}");
    }
    let entries = u.journal().entries();
    assert!(
        matches!(entries[2].fault, Fault::RateLimited { retry_after_secs } if retry_after_secs >= 1)
    );
}

#[tokio::test]
async fn quota_refills_in_the_next_window() {
    let window = 300u64;
    let u = upstream(
        Fault::rate_limit(0),
        Schedule::quota(1, Duration::from_millis(window)),
        1,
    )
    .await;
    let client = client();
    loop {
        for _ in 0..2 {
            client.get(u.url_for("/q")).send().await.expect("response");
        }
        let entries = u.journal().entries();
        let windows: std::collections::BTreeSet<u64> =
            entries.iter().map(|e| e.at_ms / window).collect();
        if windows.len() >= 3 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Within each window exactly the first request is healthy.
    let entries = u.journal().entries();
    let mut current = None;
    for e in &entries {
        let w = e.at_ms / window;
        let first_in_window = current != Some(w);
        current = Some(w);
        assert_eq!(e.failure, !first_in_window, "request at {} ms", e.at_ms);
    }
    assert!(entries.iter().any(|e| e.failure));
    assert!(entries.iter().filter(|e| !e.failure).count() >= 3);
}
