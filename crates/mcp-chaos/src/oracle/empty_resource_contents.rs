//! `empty-resource-contents` (MC702): `resources/read` of a URI the server did not list (and
//! no listed template matches) never succeeds with an empty `contents` array. 2026-07-28:
//! servers MUST NOT return one for a non-existent resource (`server/resources` §Error
//! Handling), a violation; earlier versions ask for a JSON-RPC error (a warning: the empty
//! success is as ambiguous there, but no sentence forbids it).

use serde_json::Value;

use super::feature_shape::{Answer, answer, probe};
use super::{Context, finding};
use crate::finding::{EMPTY_RESOURCE_CONTENTS, Finding, Severity};
use crate::session::{Exchange, FeatureProbe};

/// Judges the answer to a `resources/read` of an unknown URI.
pub fn check(ctx: &Context<'_>, ex: &Exchange) -> Vec<Finding> {
    let Some(FeatureProbe::ReadUnknown { uri }) = probe(ex) else {
        return Vec::new();
    };
    let Some(Answer::Result(result)) = answer(ex) else {
        return Vec::new();
    };
    if !result
        .get("contents")
        .and_then(Value::as_array)
        .is_some_and(Vec::is_empty)
    {
        return Vec::new();
    }
    let (severity, rule) = if ctx.version.rules().handshake {
        (
            Severity::Warning,
            "a missing resource should be the JSON-RPC error -32002 (resource not found); an empty success reads as a resource with no content",
        )
    } else {
        (
            Severity::Violation,
            "servers MUST NOT return an empty contents array for a non-existent resource (it MUST be -32602)",
        )
    };
    vec![finding(
        &EMPTY_RESOURCE_CONTENTS,
        severity,
        ctx,
        ex,
        format!(
            "resources/read of the unknown URI {uri} succeeded with an empty contents array: {rule}"
        ),
    )]
}

/// This invariant as the oracle's [`judge`](super::judge) runs it on every exchange
/// ([`check`]), with the catalog entries it reports.
pub struct Rule;

impl super::Check for Rule {
    fn name(&self) -> &'static str {
        "empty_resource_contents"
    }

    fn invariants(&self) -> &'static [crate::finding::Invariant] {
        &[crate::finding::EMPTY_RESOURCE_CONTENTS]
    }

    fn check(&self, ctx: &super::Context<'_>, ex: &crate::session::Exchange) -> Vec<Finding> {
        check(ctx, ex)
    }
}
