//! Raw bytes as one frame to the bundled fixture server, judged like `mcp_request`. With
//! `MCP_CHAOS_FUZZ_FLAW=panic-in-handler` it measures how long a byte-level fuzzer takes to
//! reach a bug that `mcp_request_flawed` finds in seconds.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    mcp_chaos_fuzz::run_bytes(mcp_chaos_fuzz::flaws_from_env(), data)
});
