//! Every scope of a [`ScopedFault`], observed from a real HTTP client on loopback: which
//! requests get the fault, the seeded probability's determinism, and what the journal says
//! about each request.

mod common;

use common::client;
use mcp_chaos_faults::{FakeUpstream, Fault, ForwardProxy, Scope, ScopedFault, describe_requests};

/// The status of each GET of `paths` (in order), after installing `scoped` on a fresh plan.
async fn statuses(upstream: &FakeUpstream, scoped: &ScopedFault, paths: &[&str]) -> Vec<u16> {
    upstream.set_scoped(scoped);
    let client = client();
    let mut out = Vec::new();
    for path in paths {
        let response = client
            .get(upstream.url_for(path))
            .send()
            .await
            .expect("response");
        out.push(response.status().as_u16());
    }
    out
}

async fn upstream(seed: u64) -> FakeUpstream {
    FakeUpstream::builder()
        .seed(seed)
        .start()
        .await
        .expect("start")
}

const CALL: [&str; 5] = [
    "/robots.txt",
    "/data?page=1",
    "/data?page=2",
    "/robots.txt",
    "/data",
];

#[tokio::test]
async fn every_request() {
    let u = upstream(1).await;
    let every = ScopedFault::every(Fault::unavailable());
    assert_eq!(statuses(&u, &every, &CALL).await, [503; 5]);
}

#[tokio::test]
async fn the_first_request_only_counted_from_the_install() {
    let u = upstream(1).await;
    let first = Fault::not_found().scoped(Scope::first());
    assert_eq!(statuses(&u, &first, &CALL).await, [404, 200, 200, 200, 200]);
    // Installing again (before the next tool call) starts the count again.
    assert_eq!(statuses(&u, &first, &CALL[1..3]).await, [404, 200]);
}

#[tokio::test]
async fn the_nth_request_only() {
    let u = upstream(1).await;
    let third = Fault::rate_limit(7).scoped(Scope::nth(3));
    assert_eq!(statuses(&u, &third, &CALL).await, [200, 200, 429, 200, 200]);
    let entry = &u.journal().entries()[2];
    assert_eq!(entry.fault, Fault::rate_limit(7));
}

#[tokio::test]
async fn one_path_fails_while_the_others_answer_200() {
    let u = upstream(1).await;
    let robots = Fault::unavailable().scoped(Scope::every().on_path("/robots.txt"));
    assert_eq!(
        statuses(&u, &robots, &CALL).await,
        [503, 200, 200, 503, 200]
    );
    // The query is not part of the path; a longer path is another path.
    let data = Fault::gone().scoped(Scope::every().on_path("/data"));
    assert_eq!(
        statuses(&u, &data, &["/data?x=1", "/data/1", "/data"]).await,
        [410, 200, 410]
    );
}

#[tokio::test]
async fn path_and_first_hits_the_first_request_to_that_path() {
    let u = upstream(1).await;
    let first_data = Fault::server_error().scoped(Scope::first().on_path("/data"));
    assert_eq!(
        statuses(&u, &first_data, &CALL).await,
        [200, 500, 200, 200, 200],
        "the first request to /data (whatever its query) is the second of the call"
    );
    let second_data = Fault::bad_gateway().scoped(Scope::nth(2).on_path("/robots.txt"));
    assert_eq!(
        statuses(&u, &second_data, &CALL).await,
        [200, 200, 200, 502, 200]
    );
}

#[tokio::test]
async fn the_seeded_probability_replays_whatever_the_server_seed() {
    let paths = ["/x"; 40];
    let scoped = Fault::unavailable().scoped(Scope::probability_seeded(0.5, 99));
    let a = statuses(&upstream(1).await, &scoped, &paths).await;
    let b = statuses(&upstream(2).await, &scoped, &paths).await;
    assert_eq!(a, b, "the scope's own seed decides, not the server's");
    assert!(a.contains(&503) && a.contains(&200), "{a:?}");
    let other = Fault::unavailable().scoped(Scope::probability_seeded(0.5, 100));
    assert_ne!(a, statuses(&upstream(1).await, &other, &paths).await);
    // Installing again replays the same sequence.
    let u = upstream(3).await;
    assert_eq!(statuses(&u, &scoped, &paths).await, a);
    assert_eq!(statuses(&u, &scoped, &paths).await, a);

    // Without its own seed, the server's seed decides: reproducible per server seed.
    let unseeded = Fault::unavailable().scoped(Scope::probability(0.5));
    let s1 = statuses(&upstream(7).await, &unseeded, &paths).await;
    assert_eq!(s1, statuses(&upstream(7).await, &unseeded, &paths).await);
    assert_ne!(s1, statuses(&upstream(8).await, &unseeded, &paths).await);

    // With a path, only the requests to it draw.
    let mixed: Vec<&str> = (0..40)
        .map(|i| if i % 2 == 0 { "/x" } else { "/y" })
        .collect();
    let on_x = Fault::unavailable().scoped(Scope::probability_seeded(0.5, 99).on_path("/x"));
    let got = statuses(&upstream(1).await, &on_x, &mixed).await;
    let x: Vec<u16> = got.iter().step_by(2).copied().collect();
    assert_eq!(x, a[..20], "the same draws, on the requests to /x only");
    assert!(got.iter().skip(1).step_by(2).all(|s| *s == 200));
}

#[tokio::test]
async fn the_journal_says_which_rule_hit_which_request() {
    let u = upstream(1).await;
    let robots = Fault::unavailable().scoped(Scope::first().on_path("/robots.txt"));
    let mark = u.journal().mark();
    statuses(&u, &robots, &["/robots.txt", "/data?id=1", "/robots.txt"]).await;
    let calls = u.journal().since(mark);
    let seen: Vec<(Option<usize>, Option<u64>, bool, &str)> = calls
        .iter()
        .map(|e| (e.rule_index, e.rule_match, e.faulted, e.fault.name()))
        .collect();
    assert_eq!(
        seen,
        [
            (Some(0), Some(1), true, "unavailable"),
            (None, None, false, "ok"),
            (Some(0), Some(2), false, "ok"),
        ]
    );
    assert_eq!(
        describe_requests(&calls),
        "the first request (GET /robots.txt) got 503 unavailable, the second (GET /data?id=1) \
         200 ok, the third (GET /robots.txt) 200 ok"
    );

    // A fault that is not a failure still fired.
    let delay = Fault::delay(1).scoped(Scope::first());
    let mark = u.journal().mark();
    statuses(&u, &delay, &["/a", "/b"]).await;
    let calls = u.journal().since(mark);
    assert!(calls[0].faulted && !calls[0].failure);
    assert!(!calls[1].faulted);
}

#[tokio::test]
async fn the_forward_proxy_scopes_by_the_proxied_path() {
    let proxy = ForwardProxy::builder()
        .seed(1)
        .healthy(Fault::ok_default())
        .start()
        .await
        .expect("start");
    proxy.set_scoped(&Fault::not_found().scoped(Scope::first().on_path("/robots.txt")));
    let client = reqwest::Client::builder()
        .proxy(reqwest::Proxy::http(proxy.proxy_url()).expect("a proxy URL"))
        .build()
        .expect("a client");
    let mut got = Vec::new();
    for path in ["/data", "/robots.txt", "/robots.txt"] {
        let r = client
            .get(format!("http://127.0.0.1:9{path}"))
            .send()
            .await
            .expect("response");
        got.push(r.status().as_u16());
    }
    assert_eq!(got, [200, 404, 200]);
}
