//! `pagination-cursor` (MC703): list cursors end, and invalid ones are refused
//! (`server/utilities/pagination`):
//! - a `nextCursor` equal to the cursor of the page it came with, or of an earlier page of the
//!   same listing, makes the list endless for a client that follows cursors (a violation: the
//!   client hangs; mcp-chaos stops there);
//! - an invalid cursor SHOULD get -32602: another error code is a warning, and so is a result
//!   from a server that paginates that list (one that never gives a `nextCursor` may ignore a
//!   cursor it never issued).

use serde_json::Value;

use super::feature_shape::{Answer, answer, describe_code, probe, short};
use super::{Context, finding};
use crate::finding::{Finding, PAGINATION_CURSOR, Severity};
use crate::session::{Exchange, FeatureProbe};
use crate::wire::INVALID_PARAMS;

/// Judges a list page (for a cursor loop) and an invalid-cursor request.
pub fn check(ctx: &Context<'_>, ex: &Exchange) -> Vec<Finding> {
    let (severity, message) = match (probe(ex), answer(ex)) {
        (
            Some(FeatureProbe::ListPage {
                method,
                page,
                cursor,
                earlier,
            }),
            Some(Answer::Result(result)),
        ) => {
            let Some(next) = result.get("nextCursor").and_then(Value::as_str) else {
                return Vec::new();
            };
            let back = if cursor.as_deref() == Some(next) {
                format!("page {page} itself")
            } else if let Some(at) = earlier.iter().position(|c| c == next) {
                format!("page {}", at + 2)
            } else {
                return Vec::new();
            };
            (
                Severity::Violation,
                format!(
                    "{method} page {page} has a nextCursor that leads back to {back}: the list never ends, so a client that follows nextCursor loops forever"
                ),
            )
        }
        (
            Some(FeatureProbe::InvalidCursor {
                method,
                cursor,
                paginated,
            }),
            Some(answer),
        ) => match answer {
            Answer::Error(INVALID_PARAMS, _) => return Vec::new(),
            Answer::Error(code, message) => (
                Severity::Warning,
                format!(
                    "{method} with the invalid cursor {cursor:?} was answered with error {} ({:?}); invalid cursors SHOULD get -32602 (invalid params)",
                    describe_code(code),
                    short(message)
                ),
            ),
            Answer::Result(_) if *paginated => (
                Severity::Warning,
                format!(
                    "{method} with the invalid cursor {cursor:?}, which the server never issued, was answered with a result; invalid cursors SHOULD get -32602 (invalid params)"
                ),
            ),
            Answer::Result(_) => return Vec::new(),
        },
        _ => return Vec::new(),
    };
    vec![finding(&PAGINATION_CURSOR, severity, ctx, ex, message)]
}

/// This invariant as the oracle's [`judge`](super::judge) runs it on every exchange
/// ([`check`]), with the catalog entries it reports.
pub struct Rule;

impl super::Check for Rule {
    fn name(&self) -> &'static str {
        "pagination"
    }

    fn invariants(&self) -> &'static [crate::finding::Invariant] {
        &[crate::finding::PAGINATION_CURSOR]
    }

    fn check(&self, ctx: &super::Context<'_>, ex: &crate::session::Exchange) -> Vec<Finding> {
        check(ctx, ex)
    }
}
