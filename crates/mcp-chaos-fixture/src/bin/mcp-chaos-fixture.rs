//! The fixture MCP server as its own binary: `mcp-chaos-fixture [--flaw NAME]... [--http ADDR]`
//! serves the bundled fixture over stdio, or over Streamable HTTP at `http://ADDR/mcp` (a
//! loopback address such as `127.0.0.1:0`; it prints `listening on http://IP:PORT/mcp` to
//! stderr once bound). See the `mcp_chaos_fixture` crate. With no flaw it is a correct server.

use clap::Parser;
use mcp_chaos_fixture::{self as fixture, Flaw};

/// The bundled fixture MCP server: correct by default, with flaws planted on request.
#[derive(Debug, Parser)]
#[command(name = "mcp-chaos-fixture", max_term_width = 100)]
struct Args {
    /// A flaw to plant (repeatable); `mcp-chaos explain` lists the invariant each one breaks.
    #[arg(long = "flaw", value_name = "NAME", value_parser = parse_flaw)]
    flaws: Vec<Flaw>,
    /// Serve Streamable HTTP at http://ADDR/mcp (a loopback address such as 127.0.0.1:0)
    /// instead of stdio.
    #[arg(long, value_name = "ADDR")]
    http: Option<String>,
}

fn parse_flaw(name: &str) -> Result<Flaw, String> {
    name.parse::<Flaw>().map_err(|e| e.to_string())
}

fn main() {
    let args = match Args::try_parse() {
        Ok(args) => args,
        Err(e) if e.use_stderr() => {
            let _ = e.print();
            std::process::exit(3);
        }
        Err(e) => {
            // --help, --version.
            let _ = e.print();
            std::process::exit(0);
        }
    };
    let code = match args.http {
        Some(addr) => fixture::serve_http(&args.flaws, &addr),
        None => fixture::serve_stdio(&args.flaws),
    };
    std::process::exit(code);
}
