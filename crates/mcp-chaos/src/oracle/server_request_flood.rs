//! `server-request-flood` (MC113): a server does not flood the client with server-to-client
//! requests. A request to the client needs a reason: sampling is nested inside other server
//! features (`client/sampling` §User Interaction Model) and clients SHOULD rate-limit it
//! (§Security Considerations); servers SHOULD cache root information (`client/roots`
//! §Implementation Guidelines) rather than ask for it again and again; excessive pinging
//! should be avoided (`basic/utilities/ping` §Implementation Considerations). A flood is a
//! warning.
//!
//! The session measures the rate (see [`crate::session::flood`]: at least 200 requests in a
//! 2 s window, and 20 per request mcp-chaos sent in it), answers the first 200 of a window as
//! usual and leaves the rest unanswered (a rate limit, with counts), and records the first flooded
//! window as a [`crate::session::ReceivedItem::Flood`]; this oracle words it.

use super::notification_flood::{floods, methods};
use super::{Context, finding, safe_excerpt};
use crate::finding::{Finding, SERVER_REQUEST_FLOOD, Severity};
use crate::session::Exchange;
use crate::session::flood::{FLOOD_WINDOW, FloodKind, REQUEST_FLOOD};

/// Judges an exchange: one warning per server-to-client request flood recorded in it.
pub fn check(ctx: &Context<'_>, ex: &Exchange) -> Vec<Finding> {
    floods(ex, FloodKind::ServerRequests)
        .map(|flood| {
            let method = flood.top_method();
            let (rule, page) = match method {
                "roots/list" => (
                    "servers SHOULD cache root information instead of asking again",
                    "client/roots#implementation-guidelines",
                ),
                "ping" => (
                    "excessive pinging should be avoided",
                    "basic/utilities/ping#implementation-considerations",
                ),
                "elicitation/create" => (
                    "each elicitation asks the user something, and needs a reason",
                    "client/elicitation",
                ),
                _ => (
                    "sampling runs inside other server features, and clients SHOULD rate-limit it",
                    "client/sampling#security-considerations",
                ),
            };
            let mut f = finding(
                &SERVER_REQUEST_FLOOD,
                Severity::Warning,
                ctx,
                ex,
                format!(
                    "the server flooded the client with requests: {} in {} ms (about {}/s; {}), \
                     while mcp-chaos sent {} request(s); {rule}. mcp-chaos counts a flood from \
                     {REQUEST_FLOOD} requests in {} s; it answers that many per window and \
                     leaves the rest unanswered (counted in the summary)",
                    flood.count,
                    flood.elapsed_ms,
                    flood.per_second(),
                    methods(flood),
                    flood.client_requests,
                    FLOOD_WINDOW.as_secs(),
                ),
            )
            .with_spec_page(page);
            f.response = Some(safe_excerpt(&flood.sample));
            f.group = Some(method.to_owned());
            f
        })
        .collect()
}

/// This invariant as the oracle's [`judge`](super::judge) runs it on every exchange
/// ([`check`]), with the catalog entries it reports.
pub struct Rule;

impl super::Check for Rule {
    fn name(&self) -> &'static str {
        "server_request_flood"
    }

    fn invariants(&self) -> &'static [crate::finding::Invariant] {
        &[crate::finding::SERVER_REQUEST_FLOOD]
    }

    fn check(&self, ctx: &super::Context<'_>, ex: &crate::session::Exchange) -> Vec<Finding> {
        check(ctx, ex)
    }
}
