//! The server the benchmarks talk to: the bench binary itself, started again as the bundled
//! fixture server (`mcp_chaos_fixture`), so that a bench needs no other binary.

use mcp_chaos::transport::StdioConfig;

/// Set to `stdio` or to an HTTP address (`127.0.0.1:0`) in the environment of a bench
/// process started from [`fixture`]: it then serves the correct fixture instead of benching.
pub const SERVE: &str = "MCP_CHAOS_BENCH_SERVE_FIXTURE";

/// Called first in a bench's `main`: when this process was started from [`fixture`], serves
/// the fixture (over stdio, or over Streamable HTTP at the address given) and exits with its
/// exit code.
pub fn serve_if_asked() {
    if let Some(how) = std::env::var_os(SERVE) {
        let code = match how.to_str() {
            Some("stdio") => mcp_chaos_fixture::serve_stdio(&[]),
            Some(addr) => mcp_chaos_fixture::serve_http(&[], addr),
            None => 3,
        };
        std::process::exit(code);
    }
}

/// This bench binary's path (the program that serves the fixture with [`SERVE`] set).
pub fn program() -> String {
    std::env::current_exe()
        .expect("the bench binary has a path")
        .to_string_lossy()
        .into_owned()
}

/// The process config that starts the correct fixture: over stdio (`how` = `stdio`) or over
/// Streamable HTTP at the address `how` (it prints `listening on http://IP:PORT/mcp`).
pub fn fixture(how: &str) -> StdioConfig {
    let mut config = StdioConfig::new(program(), Vec::new());
    config.env.push((SERVE.to_owned(), how.to_owned()));
    config
}
