//! `resource-not-found` (MC701): `resources/read` of a URI the server did not list (and no
//! listed template matches) is answered with the version's resource-not-found error
//! (`server/resources` §Error Handling):
//! - up to 2025-11-25, servers SHOULD answer -32002: another error code is a warning;
//! - in 2026-07-28, servers MUST answer -32602 and MUST NOT emit the retired -32002
//!   (`basic/index` §Error Codes): any other code is a violation;
//! - a result with contents for such a URI claims a resource the server never offered (a
//!   warning; an empty `contents` is `empty-resource-contents`).
//! - `resources/subscribe` of such a URI (where `resources.subscribe` is advertised, up to
//!   2025-11-25) answered with an error is judged by the same codes (§Error Handling covers
//!   every resource request). A success is not judged: no sentence says a subscription needs
//!   the resource to exist yet (server-everything accepts one, to report it when it appears).

use super::feature_shape::{Answer, answer, describe_code, probe, short};
use super::{Context, finding};
use crate::finding::{Finding, RESOURCE_NOT_FOUND, Severity};
use crate::session::{Exchange, FeatureProbe};
use crate::wire::INVALID_PARAMS;

/// -32002, resource not found (up to 2025-11-25).
pub const NOT_FOUND: i64 = -32002;

/// Judges the answer to a `resources/read` of an unknown URI.
pub fn check(ctx: &Context<'_>, ex: &Exchange) -> Vec<Finding> {
    if let Some(FeatureProbe::Subscribe {
        uri, listed: false, ..
    }) = probe(ex)
    {
        return subscribe_unknown(ctx, ex, uri);
    }
    let Some(FeatureProbe::ReadUnknown { uri }) = probe(ex) else {
        return Vec::new();
    };
    let stateless = !ctx.version.rules().handshake;
    let (severity, message) = match answer(ex) {
        Some(Answer::Error(code, _)) if stateless && code == INVALID_PARAMS => return Vec::new(),
        Some(Answer::Error(code, _)) if !stateless && code == NOT_FOUND => return Vec::new(),
        Some(Answer::Error(NOT_FOUND, _)) => (
            Severity::Violation,
            format!(
                "resources/read of the unknown URI {uri} was answered with -32002, which {} servers MUST NOT emit (it is retired): a missing resource MUST be -32602 (invalid params)",
                ctx.version
            ),
        ),
        Some(Answer::Error(code, message)) if stateless => (
            Severity::Violation,
            format!(
                "resources/read of the unknown URI {uri} was answered with error {} ({:?}); in {} a missing resource MUST be -32602 (invalid params)",
                describe_code(code),
                short(message),
                ctx.version
            ),
        ),
        Some(Answer::Error(code, message)) => (
            Severity::Warning,
            format!(
                "resources/read of the unknown URI {uri} was answered with error {} ({:?}); up to 2025-11-25 servers SHOULD answer -32002 (resource not found){}",
                describe_code(code),
                short(message),
                if code == INVALID_PARAMS {
                    " (-32602 is what 2026-07-28 requires, SEP-2164; under this version it is the code for invalid params)"
                } else {
                    ""
                }
            ),
        ),
        Some(Answer::Result(result))
            if result
                .get("contents")
                .and_then(serde_json::Value::as_array)
                .is_some_and(|c| !c.is_empty()) =>
        {
            (
                Severity::Warning,
                format!(
                    "resources/read of {uri}, a URI the server never listed and no template of it matches, was answered with contents; a missing resource should be the error {}",
                    if stateless { "-32602" } else { "-32002" }
                ),
            )
        }
        _ => return Vec::new(),
    };
    vec![finding(&RESOURCE_NOT_FOUND, severity, ctx, ex, message)]
}

/// `resources/subscribe` of a URI the server never listed (handshake versions only).
fn subscribe_unknown(ctx: &Context<'_>, ex: &Exchange, uri: &str) -> Vec<Finding> {
    let message = match answer(ex) {
        Some(Answer::Error(NOT_FOUND, _) | Answer::Result(_)) | None => return Vec::new(),
        Some(Answer::Error(code, message)) => format!(
            "resources/subscribe of the unknown URI {uri} was answered with error {} ({:?}); servers SHOULD answer -32002 (resource not found)",
            describe_code(code),
            short(message)
        ),
    };
    vec![finding(
        &RESOURCE_NOT_FOUND,
        Severity::Warning,
        ctx,
        ex,
        message,
    )]
}

/// This invariant as the oracle's [`judge`](super::judge) runs it on every exchange
/// ([`check`]), with the catalog entries it reports.
pub struct Rule;

impl super::Check for Rule {
    fn name(&self) -> &'static str {
        "resource_not_found"
    }

    fn invariants(&self) -> &'static [crate::finding::Invariant] {
        &[crate::finding::RESOURCE_NOT_FOUND]
    }

    fn check(&self, ctx: &super::Context<'_>, ex: &crate::session::Exchange) -> Vec<Finding> {
        check(ctx, ex)
    }
}
