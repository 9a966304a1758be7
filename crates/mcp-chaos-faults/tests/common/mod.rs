//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::error::Error as StdError;
use std::time::Duration;

use mcp_chaos_faults::{FakeUpstream, Fault, Rule};

/// A direct client (never a proxy from the environment) with a generous overall timeout.
pub fn client() -> reqwest::Client {
    client_with_timeout(Duration::from_secs(10))
}

/// A direct client whose requests time out after `timeout`.
pub fn client_with_timeout(timeout: Duration) -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .timeout(timeout)
        .build()
        .expect("client")
}

/// A fake upstream with seed 7 serving `fault` on every request.
pub async fn upstream_with(fault: Fault) -> FakeUpstream {
    FakeUpstream::builder()
        .seed(7)
        .rule(Rule::any().respond_with(fault))
        .start()
        .await
        .expect("start upstream")
}

/// The error and all its sources, joined, lower-cased: for asserting on the cause.
pub fn chain(err: &(dyn StdError + 'static)) -> String {
    let mut out = err.to_string();
    let mut source = err.source();
    while let Some(s) = source {
        out.push_str(" <- ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    out.to_lowercase()
}

/// Reads a response body chunk by chunk until it ends or fails; returns the bytes
/// received and the error, if any.
pub async fn read_body(mut response: reqwest::Response) -> (Vec<u8>, Option<reqwest::Error>) {
    let mut got = Vec::new();
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => got.extend_from_slice(&chunk),
            Ok(None) => return (got, None),
            Err(e) => return (got, Some(e)),
        }
    }
}

/// The response headers flattened into one string, for canary searches.
pub fn headers_text(headers: &reqwest::header::HeaderMap) -> String {
    headers
        .iter()
        .map(|(k, v)| format!("{k}: {}\n", String::from_utf8_lossy(v.as_bytes())))
        .collect()
}

/// A loopback echo server: every connection gets back what it sends, until it closes.
/// The task ends when the returned handle is aborted or dropped with the runtime.
pub async fn spawn_echo() -> (std::net::SocketAddr, tokio::task::JoinHandle<()>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind echo");
    let addr = listener.local_addr().expect("addr");
    let task = tokio::spawn(async move {
        let mut conns = tokio::task::JoinSet::new();
        while let Ok((mut stream, _)) = listener.accept().await {
            conns.spawn(async move {
                let mut buf = [0u8; 4096];
                loop {
                    match stream.read(&mut buf).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => {
                            if stream.write_all(&buf[..n]).await.is_err() {
                                break;
                            }
                        }
                    }
                }
            });
        }
    });
    (addr, task)
}

/// Reads from `stream` until the end of an HTTP response head (`\r\n\r\n`), EOF, or an
/// error; gives up after `timeout`.
pub async fn read_head(
    stream: &mut tokio::net::TcpStream,
    timeout: Duration,
) -> Result<String, std::io::Error> {
    use tokio::io::AsyncReadExt;
    let mut head = Vec::new();
    let read = async {
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            if stream.read(&mut byte).await? == 0 {
                break;
            }
            head.push(byte[0]);
        }
        Ok::<_, std::io::Error>(())
    };
    match tokio::time::timeout(timeout, read).await {
        Ok(result) => result.map(|()| String::from_utf8_lossy(&head).into_owned()),
        Err(_) => Err(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            "read_head timed out",
        )),
    }
}
