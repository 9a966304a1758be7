//! `mcp-chaos fixture`: the bundled fixture server (`mcp_chaos_fixture`) served on stdio, or
//! over Streamable HTTP with `--http ADDR`; `--list-flaws` lists the flaws that can be planted.

use mcp_chaos_fixture::{self as fixture, Flaw};
use mcp_chaos_model::exit;

use crate::error::Outcome;

/// Serves the fixture with `flaws` planted until its client goes away (its exit code), or
/// lists every flaw with the invariant it breaks.
pub(crate) fn fixture(flaws: &[Flaw], list_flaws: bool, http: Option<&str>) -> Outcome {
    if list_flaws {
        for f in Flaw::ALL.iter().copied() {
            println!("{:<24} {:<34} {}", f.name(), f.invariant(), f.description());
        }
        return Ok(exit::SUCCESS);
    }
    Ok(match http {
        Some(addr) => fixture::serve_http(flaws, addr),
        None => fixture::serve_stdio(flaws),
    })
}
