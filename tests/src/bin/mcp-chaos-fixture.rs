//! The fixture MCP server as its own binary: `mcp-chaos-fixture [--flaw NAME]... [--http ADDR]`
//! serves the bundled fixture over stdio, or over Streamable HTTP at `http://ADDR/mcp` (a
//! loopback address such as `127.0.0.1:0`; it prints `listening on http://IP:PORT/mcp` to
//! stderr once bound). See `mcp_chaos::fixture`. With no flaw it is a correct server.

use mcp_chaos::fixture::{self, Flaw};

const USAGE: &str = "usage: mcp-chaos-fixture [--flaw NAME]... [--http ADDR]";

fn main() {
    let mut flaws = Vec::new();
    let mut http = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if let Some(addr) = arg.strip_prefix("--http=") {
            http = Some(addr.to_owned());
            continue;
        }
        if arg == "--http" {
            match args.next() {
                Some(addr) => http = Some(addr),
                None => {
                    eprintln!("{USAGE}");
                    std::process::exit(3);
                }
            }
            continue;
        }
        let name = match arg.strip_prefix("--flaw=") {
            Some(name) => name.to_owned(),
            None if arg == "--flaw" => args.next().unwrap_or_default(),
            None => {
                eprintln!("{USAGE}");
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
    let code = match http {
        Some(addr) => fixture::serve_http(&flaws, &addr),
        None => fixture::serve_stdio(&flaws),
    };
    std::process::exit(code);
}
