//! The fixture MCP server as its own binary: `mcp-chaos-fixture [--flaw NAME]...` serves the
//! bundled fixture over stdio (see `mcp_chaos::fixture`). With no flag it is a correct server.

use mcp_chaos::fixture::{self, Flaw};

fn main() {
    let mut flaws = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let name = match arg.strip_prefix("--flaw=") {
            Some(name) => name.to_owned(),
            None if arg == "--flaw" => args.next().unwrap_or_default(),
            None => {
                eprintln!("usage: mcp-chaos-fixture [--flaw NAME]...");
                std::process::exit(3);
            }
        };
        match name.parse::<Flaw>() {
            Ok(flaw) => flaws.push(flaw),
            Err(e) => {
                eprintln!("mcp-chaos-fixture: {e}");
                std::process::exit(3);
            }
        }
    }
    std::process::exit(fixture::serve_stdio(&flaws));
}
