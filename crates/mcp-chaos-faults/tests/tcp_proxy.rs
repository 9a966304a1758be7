//! The TCP proxy's toxics, observed on a raw TcpStream against a loopback echo upstream.

mod common;

use std::io::ErrorKind;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use common::spawn_echo;
use mcp_chaos_faults::{Direction, Error, TcpProxy, Toxic};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const GUARD: Duration = Duration::from_secs(5);

async fn proxy_with(toxics: &[(Direction, Toxic)]) -> (TcpProxy, tokio::task::JoinHandle<()>) {
    let (echo, task) = spawn_echo().await;
    let mut builder = TcpProxy::builder(echo).seed(1);
    for (direction, toxic) in toxics {
        builder = builder.toxic_on(*direction, toxic.clone());
    }
    (builder.start().await.expect("proxy"), task)
}

async fn open(proxy: &TcpProxy) -> TcpStream {
    TcpStream::connect(proxy.addr()).await.expect("connect")
}

/// Reads exactly `n` bytes, returning how many reads it took.
async fn read_n(stream: &mut TcpStream, n: usize) -> (Vec<u8>, usize) {
    let mut got = Vec::new();
    let mut reads = 0;
    let mut buf = [0u8; 4096];
    while got.len() < n {
        let k = tokio::time::timeout(GUARD, stream.read(&mut buf))
            .await
            .expect("no hang")
            .expect("read");
        assert!(k > 0, "unexpected EOF after {} bytes", got.len());
        got.extend_from_slice(&buf[..k]);
        reads += 1;
    }
    (got, reads)
}

/// Reads until EOF or error; returns the bytes and the error (if any).
async fn read_to_end(stream: &mut TcpStream) -> (Vec<u8>, Option<std::io::Error>) {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match tokio::time::timeout(GUARD, stream.read(&mut buf))
            .await
            .expect("no hang")
        {
            Ok(0) => return (got, None),
            Ok(k) => got.extend_from_slice(&buf[..k]),
            Err(e) => return (got, Some(e)),
        }
    }
}

#[tokio::test]
async fn without_toxics_bytes_flow_both_ways() {
    let (proxy, echo) = proxy_with(&[]).await;
    let mut s = open(&proxy).await;
    s.write_all(b"hello").await.expect("write");
    assert_eq!(read_n(&mut s, 5).await.0, b"hello");
    // Half-close propagates: the echo upstream sees EOF and closes, and so do we.
    s.shutdown().await.expect("shutdown");
    let (rest, err) = read_to_end(&mut s).await;
    assert!(rest.is_empty() && err.is_none(), "{rest:?} {err:?}");
    assert_eq!(proxy.connections(), 1);
    echo.abort();
}

#[tokio::test]
async fn latency_delays_every_chunk() {
    let (proxy, echo) = proxy_with(&[(Direction::Downstream, Toxic::latency(200))]).await;
    let mut s = open(&proxy).await;
    let started = Instant::now();
    s.write_all(b"ping").await.expect("write");
    assert_eq!(read_n(&mut s, 4).await.0, b"ping");
    assert!(started.elapsed() >= Duration::from_millis(200));
    echo.abort();
}

#[tokio::test]
async fn latency_with_jitter_still_delays() {
    let (proxy, echo) = proxy_with(&[
        (Direction::Upstream, Toxic::latency_with_jitter(100, 50)),
        (Direction::Downstream, Toxic::latency_with_jitter(100, 50)),
    ])
    .await;
    let mut s = open(&proxy).await;
    let started = Instant::now();
    s.write_all(b"x").await.expect("write");
    read_n(&mut s, 1).await;
    assert!(started.elapsed() >= Duration::from_millis(100));
    echo.abort();
}

#[tokio::test]
async fn bandwidth_limits_throughput() {
    let (proxy, echo) = proxy_with(&[(Direction::Downstream, Toxic::bandwidth(10_000))]).await;
    let mut s = open(&proxy).await;
    let payload = vec![7u8; 3_000];
    let started = Instant::now();
    s.write_all(&payload).await.expect("write");
    assert_eq!(read_n(&mut s, payload.len()).await.0, payload);
    // 3000 bytes at 10 kB/s take 300 ms.
    assert!(
        started.elapsed() >= Duration::from_millis(250),
        "{:?}",
        started.elapsed()
    );
    echo.abort();
}

#[tokio::test]
async fn reset_peer_resets_the_client() {
    let (proxy, echo) = proxy_with(&[(Direction::Downstream, Toxic::reset_peer(100))]).await;
    let mut s = open(&proxy).await;
    let started = Instant::now();
    s.write_all(b"abc").await.expect("write");
    assert_eq!(read_n(&mut s, 3).await.0, b"abc");
    let (_, err) = read_to_end(&mut s).await;
    assert_eq!(
        err.expect("connection reset").kind(),
        ErrorKind::ConnectionReset
    );
    assert!(started.elapsed() >= Duration::from_millis(100));
    echo.abort();
}

#[tokio::test]
async fn timeout_swallows_data_then_closes() {
    let (proxy, echo) = proxy_with(&[(Direction::Downstream, Toxic::timeout(300))]).await;
    let mut s = open(&proxy).await;
    let started = Instant::now();
    s.write_all(b"anyone there?").await.expect("write");
    let mut buf = [0u8; 64];
    assert!(
        tokio::time::timeout(Duration::from_millis(100), s.read(&mut buf))
            .await
            .is_err(),
        "no data must arrive"
    );
    let (got, _) = read_to_end(&mut s).await;
    assert!(got.is_empty());
    assert!(started.elapsed() >= Duration::from_millis(300));
    echo.abort();
}

#[tokio::test]
async fn timeout_forever_keeps_the_connection_silent() {
    let (proxy, echo) = proxy_with(&[(Direction::Downstream, Toxic::timeout_forever())]).await;
    let mut s = open(&proxy).await;
    s.write_all(b"hello?").await.expect("write");
    let mut buf = [0u8; 64];
    assert!(
        tokio::time::timeout(Duration::from_millis(300), s.read(&mut buf))
            .await
            .is_err(),
        "silent, not closed"
    );
    s.write_all(b"still open").await.expect("still writable");
    drop(s);
    tokio::time::timeout(GUARD, proxy.shutdown())
        .await
        .expect("shutdown releases the silent connection");
    echo.abort();
}

#[tokio::test]
async fn slicer_splits_data_into_delayed_pieces() {
    let (proxy, echo) = proxy_with(&[(Direction::Downstream, Toxic::slicer(5, 150))]).await;
    let mut s = open(&proxy).await;
    let started = Instant::now();
    s.write_all(b"abcdefghijklmno").await.expect("write");
    let (got, reads) = read_n(&mut s, 15).await;
    assert_eq!(got, b"abcdefghijklmno");
    // Three pieces, two pauses of 150 ms.
    assert!(started.elapsed() >= Duration::from_millis(300));
    assert!(reads >= 2, "pieces arrived separately ({reads} reads)");
    echo.abort();
}

#[tokio::test]
async fn limit_data_closes_after_n_bytes() {
    let (proxy, echo) = proxy_with(&[(Direction::Downstream, Toxic::limit_data(10))]).await;
    let mut s = open(&proxy).await;
    s.write_all(&[b'z'; 30]).await.expect("write");
    let (got, _) = read_to_end(&mut s).await;
    assert_eq!(got, [b'z'; 10]);
    echo.abort();
}

#[tokio::test]
async fn upstream_direction_toxics_act_on_requests() {
    let (proxy, echo) = proxy_with(&[(Direction::Upstream, Toxic::limit_data(5))]).await;
    let mut s = open(&proxy).await;
    s.write_all(b"0123456789").await.expect("write");
    let (got, _) = read_to_end(&mut s).await;
    assert!(
        b"01234".starts_with(&got),
        "at most the first 5 bytes reached the upstream: {got:?}"
    );
    echo.abort();
}

#[tokio::test]
async fn set_toxics_applies_to_new_connections() {
    let (proxy, echo) = proxy_with(&[(Direction::Downstream, Toxic::limit_data(1))]).await;
    proxy.set_toxics([Toxic::latency(150)], []);
    let mut s = open(&proxy).await;
    let started = Instant::now();
    s.write_all(b"abc").await.expect("write");
    assert_eq!(read_n(&mut s, 3).await.0, b"abc");
    assert!(started.elapsed() >= Duration::from_millis(150));
    proxy.clear_toxics();
    let mut s = open(&proxy).await;
    s.write_all(b"abc").await.expect("write");
    assert_eq!(read_n(&mut s, 3).await.0, b"abc");
    assert_eq!(proxy.connections(), 2);
    echo.abort();
}

#[tokio::test]
async fn an_unreachable_upstream_resets_the_client() {
    // Bind and drop a listener to get a loopback port nobody listens on.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    let proxy = TcpProxy::builder(SocketAddr::from(([127, 0, 0, 1], port)))
        .start()
        .await
        .expect("proxy");
    let mut s = open(&proxy).await;
    let (got, err) = read_to_end(&mut s).await;
    assert!(got.is_empty());
    assert_eq!(err.map(|e| e.kind()), Some(ErrorKind::ConnectionReset));
}

#[tokio::test]
async fn only_loopback_upstreams_and_binds_are_accepted() {
    let err = TcpProxy::builder("10.1.2.3:80".parse().expect("addr"))
        .start()
        .await
        .expect_err("non-loopback upstream");
    assert!(matches!(err, Error::NonLoopbackUpstream { .. }), "{err}");
    let err = TcpProxy::builder("127.0.0.1:80".parse().expect("addr"))
        .bind("0.0.0.0:0".parse().expect("addr"))
        .start()
        .await
        .expect_err("non-loopback bind");
    assert!(matches!(err, Error::NonLoopbackBind { .. }), "{err}");
}

#[test]
fn toxic_names_match_toxiproxy() {
    let names: Vec<&str> = [
        Toxic::latency(1),
        Toxic::bandwidth(1),
        Toxic::reset_peer(1),
        Toxic::timeout(1),
        Toxic::slicer(1, 1),
        Toxic::limit_data(1),
    ]
    .iter()
    .map(Toxic::name)
    .collect();
    assert_eq!(
        names,
        [
            "latency",
            "bandwidth",
            "reset_peer",
            "timeout",
            "slicer",
            "limit_data"
        ]
    );
}
