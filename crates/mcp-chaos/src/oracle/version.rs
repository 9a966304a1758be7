//! `initialize-version` (MC110): the `protocolVersion` answered to `initialize` is one the
//! server speaks (`basic/lifecycle` §Version Negotiation: echo the requested version if
//! supported, otherwise answer with another supported version).
//!
//! What can be proven from outside: a server that echoes a version string no MCP release has
//! claims to speak a protocol that does not exist. An error answer to an unsupported version
//! is not reported: the spec's own Error Handling example answers one with -32602.

use serde_json::Value;

use super::{Context, finding};
use crate::finding::{Finding, INITIALIZE_VERSION, Severity};
use crate::session::{Exchange, Probe};

/// Judges the version-negotiation probe (an `initialize` with a bogus version).
pub fn check(ctx: &Context<'_>, ex: &Exchange) -> Vec<Finding> {
    let Probe::VersionNegotiation { requested } = &ex.probe else {
        return Vec::new();
    };
    if !ctx.version.rules().handshake {
        return stateless(ctx, ex, requested);
    }
    let Some(result) = ex.response().and_then(|r| r.result()) else {
        return Vec::new();
    };
    match result.get("protocolVersion").and_then(Value::as_str) {
        Some(answered) if answered == requested => vec![finding(
            &INITIALIZE_VERSION,
            Severity::Violation,
            ctx,
            ex,
            format!(
                "initialize asked for {requested:?}, a version no MCP release has, and the \
                 server echoed it back; it MUST answer with a version it supports"
            ),
        )],
        _ => Vec::new(),
    }
}

/// 2026-07-28 (`basic/versioning` §Protocol Version Negotiation): a request for a version the
/// server does not serve MUST get `UnsupportedProtocolVersionError` (-32022) with
/// `data.supported` and `data.requested`.
fn stateless(ctx: &Context<'_>, ex: &Exchange, requested: &str) -> Vec<Finding> {
    let Some(response) = ex.response() else {
        return Vec::new();
    };
    let problem = match response.error() {
        None => Some(format!(
            "a request for the unsupported version {requested:?} was served as if supported"
        )),
        Some(e) if e.code != -32022 => Some(format!(
            "a request for the unsupported version {requested:?} got error {} instead of -32022",
            e.code
        )),
        Some(e) => {
            let data = e.data;
            let supported = data
                .and_then(|d| d.get("supported"))
                .is_some_and(Value::is_array);
            let echoed = data
                .and_then(|d| d.get("requested"))
                .and_then(Value::as_str)
                == Some(requested);
            (!supported || !echoed).then(|| {
                "the -32022 error lacks data.supported (an array) or data.requested".to_owned()
            })
        }
    };
    problem
        .map(|p| {
            vec![
                finding(
                    &INITIALIZE_VERSION,
                    Severity::Violation,
                    ctx,
                    ex,
                    format!("{p}; an unsupported version MUST get -32022 with data.supported and data.requested"),
                )
                .with_spec_page("basic/versioning"),
            ]
        })
        .unwrap_or_default()
}

/// This invariant as the oracle's [`judge`](super::judge) runs it on every exchange
/// ([`check`]), with the catalog entries it reports.
pub struct Rule;

impl super::Check for Rule {
    fn name(&self) -> &'static str {
        "version"
    }

    fn invariants(&self) -> &'static [crate::finding::Invariant] {
        &[crate::finding::INITIALIZE_VERSION]
    }

    fn check(&self, ctx: &super::Context<'_>, ex: &crate::session::Exchange) -> Vec<Finding> {
        check(ctx, ex)
    }
}
