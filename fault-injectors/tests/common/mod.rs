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
