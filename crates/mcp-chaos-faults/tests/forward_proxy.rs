//! The forward proxy: absolute-form requests and CONNECT tunnels.

mod common;

use std::io::ErrorKind;
use std::time::Duration;

use common::{chain, read_body, read_head, spawn_echo};
use mcp_chaos_faults::{
    DEFAULT_OK_BODY, FakeUpstream, Fault, ForwardProxy, Rule,
    matchers::{host, method, path_prefix},
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

fn proxied_client(proxy: &ForwardProxy) -> reqwest::Client {
    reqwest::Client::builder()
        .proxy(reqwest::Proxy::http(proxy.proxy_url()).expect("proxy url"))
        .timeout(Duration::from_secs(10))
        .build()
        .expect("client")
}

#[tokio::test]
async fn absolute_form_requests_get_the_faults() {
    let proxy = ForwardProxy::builder()
        .seed(9)
        .rule(
            Rule::given(host("api.weather.test"))
                .and(path_prefix("/v1/forecast"))
                .respond_with(Fault::unavailable()),
        )
        .rule(Rule::given(host("api.weather.test")).respond_with(Fault::not_found()))
        .rule(Rule::given(host("reset.test")).respond_with(Fault::reset()))
        .rule(Rule::given(host("trunc.test")).respond_with(Fault::truncate_body(0.5)))
        .start()
        .await
        .expect("start");
    let client = proxied_client(&proxy);

    let r = client
        .get("http://api.weather.test/v1/forecast?city=Oslo")
        .send()
        .await
        .expect("response");
    assert_eq!(r.status(), 503);
    let body = r.text().await.expect("body");
    assert_eq!(proxy.canaries().find_in(&body).len(), 7);

    let r = client
        .get("http://api.weather.test/v1/other")
        .send()
        .await
        .expect("response");
    assert_eq!(r.status(), 404);

    let err = client
        .get("http://reset.test/")
        .send()
        .await
        .expect_err("reset");
    assert!(chain(&err).contains("reset"), "{}", chain(&err));

    let r = client
        .get("http://trunc.test/data")
        .send()
        .await
        .expect("response");
    assert_eq!(r.status(), 200);
    let (got, err) = read_body(r).await;
    assert!(err.is_some());
    assert_eq!(
        got,
        &DEFAULT_OK_BODY.as_bytes()[..DEFAULT_OK_BODY.len() / 2]
    );

    let entries = proxy.journal().entries();
    let summary: Vec<(Option<&str>, &str, &str)> = entries
        .iter()
        .map(|e| (e.host.as_deref(), e.target.as_str(), e.fault.name()))
        .collect();
    assert_eq!(
        summary,
        [
            (
                Some("api.weather.test"),
                "/v1/forecast?city=Oslo",
                "unavailable"
            ),
            (Some("api.weather.test"), "/v1/other", "not-found"),
            (Some("reset.test"), "/", "reset"),
            (Some("trunc.test"), "/data", "truncated-body"),
        ]
    );
}

#[tokio::test]
async fn pass_through_reaches_loopback_origins_only() {
    let origin = FakeUpstream::builder()
        .healthy(Fault::ok(r#"{"from":"origin"}"#))
        .start()
        .await
        .expect("origin");
    let proxy = ForwardProxy::builder().start().await.expect("proxy");
    let client = proxied_client(&proxy);

    // A loopback origin: forwarded, answered by the origin.
    let r = client
        .post(origin.url_for("/hello?x=1"))
        .header("x-api-key", "k")
        .body("payload")
        .send()
        .await
        .expect("response");
    assert_eq!(r.status(), 200);
    assert_eq!(r.text().await.expect("body"), r#"{"from":"origin"}"#);
    let at_origin = origin.journal().entries();
    assert_eq!(at_origin.len(), 1);
    assert_eq!(at_origin[0].method, "POST");
    assert_eq!(at_origin[0].target, "/hello?x=1");
    assert_eq!(at_origin[0].body_bytes, 7);
    assert_eq!(at_origin[0].header("x-api-key"), Some("k"));
    let at_proxy = proxy.journal().entries();
    assert_eq!(at_proxy[0].fault, Fault::PassThrough);
    assert!(!at_proxy[0].failure);
    assert!(
        at_proxy[0]
            .note
            .as_deref()
            .is_some_and(|n| n.contains("passed through"))
    );

    // Anything else is refused with 502 and never contacted (not even resolved).
    let r = client
        .get("http://example.com/secret")
        .send()
        .await
        .expect("response");
    assert_eq!(r.status(), 502);
    let refused = &proxy.journal().entries()[1];
    assert_eq!(refused.host.as_deref(), Some("example.com"));
    assert_eq!(refused.fault, Fault::BadGateway);
    assert!(refused.failure);
    assert!(
        refused
            .note
            .as_deref()
            .is_some_and(|n| n.contains("not a loopback")),
        "{:?}",
        refused.note
    );
}

#[tokio::test]
async fn delay_then_pass_through() {
    let origin = FakeUpstream::builder().start().await.expect("origin");
    let proxy = ForwardProxy::builder()
        .fault(Fault::delay(200))
        .start()
        .await
        .expect("proxy");
    let started = std::time::Instant::now();
    let r = proxied_client(&proxy)
        .get(origin.url_for("/slow"))
        .send()
        .await
        .expect("response");
    assert_eq!(r.status(), 200);
    assert_eq!(r.text().await.expect("body"), DEFAULT_OK_BODY);
    assert!(started.elapsed() >= Duration::from_millis(200));
    assert_eq!(origin.journal().len(), 1);
}

async fn connect(proxy: &ForwardProxy, authority: &str) -> TcpStream {
    let mut stream = TcpStream::connect(proxy.addr()).await.expect("connect");
    let request = format!("CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n\r\n");
    stream
        .write_all(request.as_bytes())
        .await
        .expect("send CONNECT");
    stream
}

#[tokio::test]
async fn connect_can_be_refused() {
    let proxy = ForwardProxy::builder()
        .rule(Rule::given(host("forbidden.test")).respond_with(Fault::status(403).expect("403")))
        .rule(Rule::given(host("badgw.test")).respond_with(Fault::status(502).expect("502")))
        .rule(Rule::given(host("body.test")).respond_with(Fault::malformed_json()))
        .start()
        .await
        .expect("proxy");
    for (authority, status) in [
        ("forbidden.test:443", "403"),
        ("badgw.test:443", "502"),
        ("body.test:443", "502"),
        // No rule: healthy means tunnel, and non-loopback targets are refused.
        ("example.com:443", "502"),
    ] {
        let mut stream = connect(&proxy, authority).await;
        let head = read_head(&mut stream, Duration::from_secs(5))
            .await
            .expect("response head");
        assert!(
            head.starts_with(&format!("HTTP/1.1 {status}")),
            "{authority}: {head}"
        );
    }
    let entries = proxy.journal().entries();
    assert_eq!(entries.len(), 4);
    assert!(entries.iter().all(|e| e.method == "CONNECT" && e.failure));
    assert_eq!(entries[0].target, "forbidden.test:443");
    assert_eq!(entries[0].host.as_deref(), Some("forbidden.test"));
    assert_eq!(entries[0].fault, Fault::Forbidden);
    assert!(
        entries[2]
            .note
            .as_deref()
            .is_some_and(|n| n.contains("cannot be applied"))
    );
    assert!(
        entries[3]
            .note
            .as_deref()
            .is_some_and(|n| n.contains("not a loopback"))
    );
}

#[tokio::test]
async fn connect_can_be_reset() {
    let proxy = ForwardProxy::builder()
        .rule(Rule::given(method("CONNECT")).respond_with(Fault::reset()))
        .start()
        .await
        .expect("proxy");
    let mut stream = connect(&proxy, "api.example.test:443").await;
    let mut buf = [0u8; 64];
    let result = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut buf))
        .await
        .expect("no hang");
    let err = result.expect_err("connection reset");
    assert_eq!(err.kind(), ErrorKind::ConnectionReset);
    assert_eq!(proxy.journal().entries()[0].fault, Fault::Reset);
}

#[tokio::test]
async fn connect_can_hang() {
    let proxy = ForwardProxy::builder()
        .fault(Fault::hang())
        .start()
        .await
        .expect("proxy");
    let mut stream = connect(&proxy, "api.example.test:443").await;
    let err = read_head(&mut stream, Duration::from_millis(300))
        .await
        .expect_err("no answer");
    assert_eq!(err.kind(), ErrorKind::TimedOut);
    assert_eq!(proxy.journal().entries()[0].fault, Fault::Hang);
}

#[tokio::test]
async fn connect_tunnels_to_loopback_targets() {
    let (echo, echo_task) = spawn_echo().await;
    let proxy = ForwardProxy::builder().start().await.expect("proxy");
    let mut stream = connect(&proxy, &echo.to_string()).await;
    let head = read_head(&mut stream, Duration::from_secs(5))
        .await
        .expect("head");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    stream
        .write_all(b"ping through the tunnel")
        .await
        .expect("write");
    let mut buf = vec![0u8; 23];
    tokio::time::timeout(Duration::from_secs(5), stream.read_exact(&mut buf))
        .await
        .expect("no hang")
        .expect("echo");
    assert_eq!(&buf, b"ping through the tunnel");
    let entry = &proxy.journal().entries()[0];
    assert_eq!(entry.fault, Fault::PassThrough);
    assert!(!entry.failure);
    assert!(
        entry
            .note
            .as_deref()
            .is_some_and(|n| n.contains("tunnel to"))
    );
    echo_task.abort();
}

#[tokio::test]
async fn env_vars_point_every_proxy_variable_here() {
    let proxy = ForwardProxy::builder().start().await.expect("proxy");
    let vars = proxy.env_vars();
    let url = proxy.proxy_url();
    for name in [
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
    ] {
        assert!(vars.contains(&(name, url.clone())), "{name}");
    }
    assert!(vars.contains(&("NO_PROXY", String::new())));
    assert!(vars.contains(&("no_proxy", String::new())));
    assert_eq!(vars.len(), 8);
    assert!(url.starts_with("http://127.0.0.1:"));
}
