//! `capability-gating` (MC706): a request of a method behind a server capability the server did
//! not advertise (`resources/list` without `resources`, `prompts/list` without `prompts`,
//! `completion/complete` without `completions`, `logging/setLevel` without `logging`) is a
//! method the server does not implement: -32601 (the 2026-07-28 schema's `MethodNotFoundError`
//! names this case; the completion page lists -32601 "Capability not supported"). No sentence
//! makes it a MUST, so another error code is a warning; so is a result that serves the feature
//! after all (a non-empty list, a completion, an accepted level): servers that support a
//! feature MUST declare its capability. An empty list is not judged (an SDK's default
//! handler).
//!
//! Conversely, a server that advertises `resources.subscribe: true` (up to 2025-11-25) offers
//! `resources/subscribe` and `resources/unsubscribe`: either answered with an error for a
//! resource it listed is a warning (`server/resources` §Subscriptions: the capability says
//! clients can subscribe; no sentence makes the result a MUST).

use serde_json::Value;

use super::feature_shape::{Answer, answer, describe_code, probe, short};
use super::{Context, finding};
use crate::finding::{CAPABILITY_GATING, Finding, Severity};
use crate::session::{Exchange, FeatureProbe};
use crate::wire::METHOD_NOT_FOUND;

/// Judges the answer to a request of an unadvertised feature.
pub fn check(ctx: &Context<'_>, ex: &Exchange) -> Vec<Finding> {
    if let Some(FeatureProbe::Subscribe {
        uri, listed: true, ..
    }) = probe(ex)
    {
        let Some(Answer::Error(code, message)) = answer(ex) else {
            return Vec::new();
        };
        let method = probe(ex).map_or("resources/subscribe", FeatureProbe::method);
        let text = format!(
            "{method} of the listed resource {uri} was answered with error {} ({:?}) by a server that advertises resources.subscribe: true; a client subscribing to a resource it listed is owed a result",
            describe_code(code),
            short(message)
        );
        return vec![
            finding(&CAPABILITY_GATING, Severity::Warning, ctx, ex, text)
                .with_spec_page("server/resources#subscriptions"),
        ];
    }
    let Some(FeatureProbe::Gated { method, capability }) = probe(ex) else {
        return Vec::new();
    };
    let message = match answer(ex) {
        Some(Answer::Error(METHOD_NOT_FOUND, _)) | None => return Vec::new(),
        Some(Answer::Error(code, message)) => format!(
            "{method} was answered with error {} ({:?}) by a server that did not advertise the {capability:?} capability; a method it does not offer is -32601 (method not found)",
            describe_code(code),
            short(message)
        ),
        Some(Answer::Result(result)) => {
            let empty_list = ["resources", "prompts"].iter().any(|k| {
                result
                    .get(*k)
                    .and_then(Value::as_array)
                    .is_some_and(Vec::is_empty)
            });
            if empty_list {
                return Vec::new();
            }
            format!(
                "{method} was served by a server that did not advertise the {capability:?} capability; servers that support a feature MUST declare its capability, and one that does not offer it answers -32601"
            )
        }
    };
    let page = if ctx.version.rules().handshake {
        "basic/lifecycle#capability-negotiation"
    } else {
        "schema#methodnotfounderror"
    };
    vec![finding(&CAPABILITY_GATING, Severity::Warning, ctx, ex, message).with_spec_page(page)]
}

/// This invariant as the oracle's [`judge`](super::judge) runs it on every exchange
/// ([`check`]), with the catalog entries it reports.
pub struct Rule;

impl super::Check for Rule {
    fn name(&self) -> &'static str {
        "capability_gating"
    }

    fn invariants(&self) -> &'static [crate::finding::Invariant] {
        &[crate::finding::CAPABILITY_GATING]
    }

    fn check(&self, ctx: &super::Context<'_>, ex: &crate::session::Exchange) -> Vec<Finding> {
        check(ctx, ex)
    }
}
