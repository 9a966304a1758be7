//! The `mcp-chaos` command-line tool; see `mcp-chaos --help`.

fn main() {
    std::process::exit(mcp_chaos::cli::main());
}
