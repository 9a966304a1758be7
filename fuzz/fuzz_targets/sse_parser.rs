//! Raw bytes as a `text/event-stream` body into `mcp_chaos::sse::Reader`, the reader the
//! Streamable HTTP transport uses: it never panics, the events and anomalies do not depend on
//! how the body is chunked, and every anomaly names its reason (see `mcp_chaos_fuzz::check_sse`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mcp_chaos_fuzz::check_sse(data));
