//! `prompt-argument-errors` (MC704): `prompts/get` of an unknown prompt or without a required
//! argument, and `completion/complete` whose `ref/prompt` names no prompt, SHOULD get -32602
//! (`server/prompts` §Error Handling, `server/utilities/completion` §Error Handling; servers
//! SHOULD validate prompt arguments before processing). Another error code, or a result, is a
//! warning.

use super::feature_shape::{Answer, answer, describe_code, probe, short};
use super::{Context, finding};
use crate::finding::{Finding, PROMPT_ARGUMENT_ERRORS, Severity};
use crate::session::{Exchange, FeatureProbe};
use crate::wire::INVALID_PARAMS;

/// Judges the answers to invalid prompt requests.
pub fn check(ctx: &Context<'_>, ex: &Exchange) -> Vec<Finding> {
    let (what, page) = match probe(ex) {
        Some(FeatureProbe::UnknownPrompt { name }) => (
            format!("prompts/get of the unknown prompt {name:?}"),
            "server/prompts#error-handling",
        ),
        Some(FeatureProbe::PromptMissingArgument { name, argument, .. }) => (
            format!("prompts/get of {name} without its required argument {argument:?}"),
            "server/prompts#error-handling",
        ),
        Some(FeatureProbe::CompleteUnknownPrompt { name }) => (
            format!("completion/complete for the unknown prompt {name:?}"),
            "server/utilities/completion#error-handling",
        ),
        _ => return Vec::new(),
    };
    let message = match answer(ex) {
        Some(Answer::Error(INVALID_PARAMS, _)) | None => return Vec::new(),
        Some(Answer::Error(code, message)) => format!(
            "{what} was answered with error {} ({:?}); it SHOULD be -32602 (invalid params)",
            describe_code(code),
            short(message)
        ),
        Some(Answer::Result(_)) => format!(
            "{what} was answered with a result; it SHOULD be the error -32602 (invalid params)"
        ),
    };
    vec![finding(&PROMPT_ARGUMENT_ERRORS, Severity::Warning, ctx, ex, message).with_spec_page(page)]
}

/// This invariant as the oracle's [`judge`](super::judge) runs it on every exchange
/// ([`check`]), with the catalog entries it reports.
pub struct Rule;

impl super::Check for Rule {
    fn name(&self) -> &'static str {
        "prompt_errors"
    }

    fn invariants(&self) -> &'static [crate::finding::Invariant] {
        &[crate::finding::PROMPT_ARGUMENT_ERRORS]
    }

    fn check(&self, ctx: &super::Context<'_>, ex: &crate::session::Exchange) -> Vec<Finding> {
        check(ctx, ex)
    }
}
