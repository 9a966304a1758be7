//! `log-level-errors` (MC705): a server that advertises `logging` accepts `logging/setLevel`
//! with each of the eight syslog levels (an error is a warning: the client cannot set a level
//! the spec defines), and answers any other level with -32602 (SHOULD, `server/utilities/
//! logging` §Error Handling; another code, or a result, is a warning). Handshake versions only:
//! 2026-07-28 has no `logging/setLevel`.

use super::feature_shape::{Answer, answer, describe_code, probe, short};
use super::{Context, finding};
use crate::finding::{Finding, LOG_LEVEL_ERRORS, Severity};
use crate::session::{Exchange, FeatureProbe};
use crate::wire::INVALID_PARAMS;

/// Judges the answers to `logging/setLevel`.
pub fn check(ctx: &Context<'_>, ex: &Exchange) -> Vec<Finding> {
    let message = match (probe(ex), answer(ex)) {
        (Some(FeatureProbe::SetLevel { level }), Some(Answer::Error(code, message))) => format!(
            "logging/setLevel {level:?}, one of the eight levels, was refused with error {} ({:?}) by a server that advertises logging",
            describe_code(code),
            short(message)
        ),
        (Some(FeatureProbe::InvalidLevel { level }), Some(answer)) => match answer {
            Answer::Error(INVALID_PARAMS, _) => return Vec::new(),
            Answer::Error(code, message) => format!(
                "logging/setLevel with the invalid level {level:?} was answered with error {} ({:?}); it SHOULD be -32602 (invalid params)",
                describe_code(code),
                short(message)
            ),
            Answer::Result(_) => format!(
                "logging/setLevel with the invalid level {level:?} was accepted; it SHOULD be the error -32602 (invalid params)"
            ),
        },
        _ => return Vec::new(),
    };
    vec![finding(
        &LOG_LEVEL_ERRORS,
        Severity::Warning,
        ctx,
        ex,
        message,
    )]
}
