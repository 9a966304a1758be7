//! Binding rules, reconfiguration and shutdown.

mod common;

use std::io::ErrorKind;
use std::net::SocketAddr;
use std::time::Duration;

use common::{client, spawn_echo};
use mcp_chaos_faults::{Error, FakeUpstream, Fault, ForwardProxy, TcpProxy, Toxic};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const GUARD: Duration = Duration::from_secs(5);

#[tokio::test]
async fn non_loopback_addresses_are_refused_before_binding() {
    for addr in [
        "0.0.0.0:0",
        "192.168.1.10:0",
        "10.0.0.1:8080",
        "[::]:0",
        "[fe80::1]:0",
    ] {
        let addr: SocketAddr = addr.parse().expect("addr");
        let err = FakeUpstream::bind(addr).await.expect_err("refused");
        assert!(
            matches!(err, Error::NonLoopbackBind { addr: a } if a == addr),
            "{err}"
        );
        assert!(err.to_string().contains("loopback"));
        let err = ForwardProxy::builder()
            .bind(addr)
            .start()
            .await
            .expect_err("refused");
        assert!(matches!(err, Error::NonLoopbackBind { .. }), "{err}");
    }
    // Any 127.0.0.0/8 address is fine.
    let upstream = FakeUpstream::bind("127.0.0.2:0".parse().expect("addr"))
        .await
        .expect("127.0.0.2 is loopback");
    assert_eq!(upstream.addr().ip().to_string(), "127.0.0.2");
}

async fn assert_port_closed(addr: SocketAddr) {
    // Shutdown has already returned, so the listener is gone; allow the kernel a moment.
    let deadline = tokio::time::Instant::now() + GUARD;
    loop {
        match TcpStream::connect(addr).await {
            Err(e) if e.kind() == ErrorKind::ConnectionRefused => return,
            _ if tokio::time::Instant::now() > deadline => panic!("{addr} still accepts"),
            _ => tokio::time::sleep(Duration::from_millis(20)).await,
        }
    }
}

/// Opens a raw connection and sends a request that the hang fault will never answer.
async fn hung_request(addr: SocketAddr) -> TcpStream {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    stream
        .write_all(b"GET /hang HTTP/1.1\r\nhost: test\r\n\r\n")
        .await
        .expect("write");
    stream
}

/// The connection ends (EOF or error) within the guard time.
async fn assert_released(mut stream: TcpStream) {
    let mut buf = [0u8; 256];
    let read = tokio::time::timeout(GUARD, stream.read(&mut buf))
        .await
        .expect("hung connection was released");
    assert!(matches!(read, Ok(0) | Err(_)), "{read:?}");
}

#[tokio::test]
async fn shutdown_closes_the_port_and_releases_hung_connections() {
    let upstream = FakeUpstream::builder()
        .fault(Fault::hang())
        .start()
        .await
        .expect("start");
    let addr = upstream.addr();
    let mark = upstream.journal().mark();
    let stream = hung_request(addr).await;
    assert_eq!(
        upstream.journal().wait_for(mark, 1, GUARD).await.len(),
        1,
        "the request is hanging"
    );
    tokio::time::timeout(GUARD, upstream.shutdown())
        .await
        .expect("shutdown finishes");
    assert_released(stream).await;
    assert_port_closed(addr).await;
}

#[tokio::test]
async fn dropping_also_stops_everything() {
    let upstream = FakeUpstream::builder()
        .fault(Fault::hang())
        .start()
        .await
        .expect("start");
    let addr = upstream.addr();
    let mark = upstream.journal().mark();
    let journal = upstream.journal().clone();
    let stream = hung_request(addr).await;
    journal.wait_for(mark, 1, GUARD).await;
    drop(upstream);
    assert_released(stream).await;
    assert_port_closed(addr).await;
}

#[tokio::test]
async fn a_client_that_gives_up_releases_its_hung_connection() {
    let upstream = FakeUpstream::builder()
        .fault(Fault::hang())
        .start()
        .await
        .expect("start");
    let mark = upstream.journal().mark();
    let mut stream = hung_request(upstream.addr()).await;
    upstream.journal().wait_for(mark, 1, GUARD).await;
    // The client stops sending (FIN); the server notices and closes its side instead of
    // holding the connection until shutdown.
    stream.shutdown().await.expect("half-close");
    assert_released(stream).await;
    // The server is still fine.
    upstream.set_fault(Fault::ok_default());
    let r = client()
        .get(upstream.url_for("/after"))
        .send()
        .await
        .expect("response");
    assert_eq!(r.status(), 200);
}

#[tokio::test]
async fn proxies_shut_down_too() {
    let proxy = ForwardProxy::builder()
        .fault(Fault::hang())
        .start()
        .await
        .expect("proxy");
    let addr = proxy.addr();
    let mark = proxy.journal().mark();
    let stream = hung_request(addr).await;
    assert_eq!(proxy.journal().wait_for(mark, 1, GUARD).await.len(), 1);
    tokio::time::timeout(GUARD, proxy.shutdown())
        .await
        .expect("shutdown finishes");
    assert_released(stream).await;
    assert_port_closed(addr).await;

    let (echo, echo_task) = spawn_echo().await;
    let tcp = TcpProxy::builder(echo)
        .toxic(Toxic::timeout_forever())
        .start()
        .await
        .expect("tcp proxy");
    let addr = tcp.addr();
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    stream.write_all(b"x").await.expect("write");
    tokio::time::timeout(GUARD, tcp.shutdown())
        .await
        .expect("shutdown finishes");
    assert_released(stream).await;
    assert_port_closed(addr).await;
    echo_task.abort();
}

#[tokio::test]
async fn faults_can_change_without_changing_the_port() {
    let upstream = FakeUpstream::builder().start().await.expect("start");
    let client = client();
    let url = upstream.url_for("/x");
    for (fault, status) in [
        (Fault::not_found(), 404),
        (Fault::unavailable(), 503),
        (Fault::ok_default(), 200),
    ] {
        upstream.set_fault(fault);
        let r = client.get(&url).send().await.expect("response");
        assert_eq!(r.status().as_u16(), status);
    }
    upstream.clear_rules();
    let r = client.get(&url).send().await.expect("response");
    assert_eq!(r.status(), 200);
    assert_eq!(upstream.journal().entries()[3].rule_index, None);
}
