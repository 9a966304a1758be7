//! Raw bytes into `mcp_chaos::wire::parse`: it never panics, classification survives
//! re-serialisation, and every error names its reason (see `mcp_chaos_fuzz::check_parser`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mcp_chaos_fuzz::check_parser(data));
