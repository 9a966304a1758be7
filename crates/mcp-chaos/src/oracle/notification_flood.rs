//! `notification-flood` (MC112): a server does not flood the client with notifications.
//! `server/utilities/logging` §Implementation Considerations: servers SHOULD rate-limit log
//! messages (`notifications/message`); `basic/utilities/progress`: progress notifications
//! SHOULD be rate-limited. A flood of any other notification breaks no written rule but no
//! client can keep up with it either; every flood is a warning.
//!
//! The session measures the rate (see [`crate::session::flood`] for the thresholds: at least
//! 2 000 notifications in a 2 s window, and 100 per request mcp-chaos sent in it) and records
//! the first flooded window as a [`ReceivedItem::Flood`]; this oracle words it. While the flood
//! lasts (until a 2 s window brings fewer than 1 000), the stdio reader drops the flood's lines
//! unparsed, so they are counted in the summary's `dropped` but not judged by other invariants
//! (`leaked-internals` sees the log lines kept before and after).

use super::{Context, finding, safe_excerpt};
use crate::finding::{Finding, NOTIFICATION_FLOOD, Severity};
use crate::session::flood::{
    FLOOD_WINDOW, Flood, FloodKind, KEPT_PER_EXCHANGE, NOTIFICATION_FLOOD as THRESHOLD,
};
use crate::session::{Exchange, ReceivedItem};

/// The floods of notifications recorded in `ex`.
pub fn floods(ex: &Exchange, kind: FloodKind) -> impl Iterator<Item = &Flood> {
    ex.received.iter().filter_map(move |r| match &r.item {
        ReceivedItem::Flood(f) if f.kind == kind => Some(f),
        _ => None,
    })
}

/// Judges an exchange: one warning per notification flood recorded in it.
pub fn check(ctx: &Context<'_>, ex: &Exchange) -> Vec<Finding> {
    floods(ex, FloodKind::Notifications)
        .map(|flood| {
            let method = flood.top_method();
            let (rule, page) = match method {
                "notifications/message" => (
                    "servers SHOULD rate-limit log messages",
                    "server/utilities/logging#implementation-considerations",
                ),
                "notifications/progress" => (
                    "progress notifications SHOULD be rate-limited",
                    "basic/utilities/progress#implementation-notes",
                ),
                _ => (
                    "no client can keep up with a flood",
                    "server/utilities/logging#implementation-considerations",
                ),
            };
            let mut f = finding(
                &NOTIFICATION_FLOOD,
                Severity::Warning,
                ctx,
                ex,
                format!(
                    "the server flooded the client with notifications: {} in {} ms (about {}/s; {}), \
                     while mcp-chaos sent {} request(s); {rule}. mcp-chaos counts a flood from \
                     {THRESHOLD} notifications in {} s; it kept reading, kept at most \
                     {KEPT_PER_EXCHANGE} per exchange and, while the flood lasts, counts and \
                     drops its lines unparsed",
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

/// `notifications/message ×1980, notifications/progress ×20`.
pub fn methods(flood: &Flood) -> String {
    flood
        .methods
        .iter()
        .map(|(m, n)| format!("{m} ×{n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// This invariant as the oracle's [`judge`](super::judge) runs it on every exchange
/// ([`check`]), with the catalog entries it reports.
pub struct Rule;

impl super::Check for Rule {
    fn name(&self) -> &'static str {
        "notification_flood"
    }

    fn invariants(&self) -> &'static [crate::finding::Invariant] {
        &[crate::finding::NOTIFICATION_FLOOD]
    }

    fn check(&self, ctx: &super::Context<'_>, ex: &crate::session::Exchange) -> Vec<Finding> {
        check(ctx, ex)
    }
}
