//! `log-level-errors` (MC705): a server that advertises `logging` accepts `logging/setLevel`
//! with each of the eight syslog levels (an error is a warning: the client cannot set a level
//! the spec defines), and answers any other level with -32602 (SHOULD, `server/utilities/
//! logging` §Error Handling; another code, or a result, is a warning). Handshake versions only:
//! 2026-07-28 has no `logging/setLevel` ([`crate::protocol::Rules::set_level`]).
//!
//! In 2026-07-28 the level is per request (`_meta["io.modelcontextprotocol/logLevel"]`), and
//! "the server MUST NOT emit `notifications/message` for a request that does not include
//! this field" (`server/utilities/logging` §Per-request log level; changelog major change 5,
//! SEP-2575): a log notification received during an exchange whose request did not carry the
//! field is a violation. mcp-chaos's requests never carry it, so under that version any log
//! notification is one.

use super::feature_shape::{Answer, answer, describe_code, probe, short};
use super::{Context, finding};
use crate::finding::{Finding, LOG_LEVEL_ERRORS, Severity};
use crate::session::{Exchange, FeatureProbe};
use crate::wire::INVALID_PARAMS;

/// Judges the answers to `logging/setLevel`.
pub fn check(ctx: &Context<'_>, ex: &Exchange) -> Vec<Finding> {
    if !ctx.version.rules().set_level {
        return unrequested_logs(ctx, ex);
    }
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

/// The `_meta` key of the per-request log level (2026-07-28).
pub const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";

/// 2026-07-28: a `notifications/message` received during an exchange whose request did not
/// set [`META_LOG_LEVEL`].
fn unrequested_logs(ctx: &Context<'_>, ex: &Exchange) -> Vec<Finding> {
    if String::from_utf8_lossy(&ex.sent).contains(META_LOG_LEVEL) {
        return Vec::new();
    }
    let logged = ex.frames().into_iter().any(|(_, frame)| {
        matches!(&frame.message, Ok(crate::wire::Message::Notification(n)) if n.method() == "notifications/message")
    });
    if !logged {
        return Vec::new();
    }
    let mut f = finding(
        &LOG_LEVEL_ERRORS,
        Severity::Violation,
        ctx,
        ex,
        format!(
            "the server sent notifications/message during {}, whose request did not include _meta[{META_LOG_LEVEL:?}]; in {} the server MUST NOT emit log notifications for such a request (the level is per request; logging/setLevel is gone)",
            ex.probe.label(),
            ctx.version
        ),
    )
    .with_spec_page("server/utilities/logging#per-request-log-level");
    f.group = Some("unrequested-log".into());
    vec![f]
}

/// This invariant as the oracle's [`judge`](super::judge) runs it on every exchange
/// ([`check`]), with the catalog entries it reports.
pub struct Rule;

impl super::Check for Rule {
    fn name(&self) -> &'static str {
        "log_level"
    }

    fn invariants(&self) -> &'static [crate::finding::Invariant] {
        &[crate::finding::LOG_LEVEL_ERRORS]
    }

    fn check(&self, ctx: &super::Context<'_>, ex: &crate::session::Exchange) -> Vec<Finding> {
        check(ctx, ex)
    }
}
