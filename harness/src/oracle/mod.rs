//! The oracle: pure functions from an [`Exchange`] (plus context) to [`Finding`]s. No I/O; one
//! file per invariant; every rule that depends on the protocol version asks the rule table
//! ([`crate::protocol::Rules`]).
//!
//! [`judge`] runs every per-exchange invariant; [`liveness::check`] judges the liveness probe
//! that follows each probe, naming the probe that preceded it.

pub mod error_codes;
pub mod liveness;
pub mod no_response;
pub mod notification_reply;
pub mod response_id;
pub mod response_shape;
pub mod stdout;
pub mod unknown_tool;
pub mod version;

use crate::finding::{Finding, Invariant, Severity};
use crate::protocol::ProtocolVersion;
use crate::session::Exchange;

/// Longest excerpt of a frame put into a finding, in bytes.
pub const EXCERPT_BYTES: usize = 600;

/// What the oracle knows besides the exchange.
#[derive(Debug, Clone, Copy)]
pub struct Context {
    /// The protocol version the exchange is judged under.
    pub version: ProtocolVersion,
}

/// Runs every per-exchange invariant on `ex`.
pub fn judge(ctx: &Context, ex: &Exchange) -> Vec<Finding> {
    let mut findings = Vec::new();
    findings.extend(stdout::check(ctx, ex));
    findings.extend(response_shape::check(ctx, ex));
    findings.extend(response_id::check(ctx, ex));
    findings.extend(no_response::check(ctx, ex));
    findings.extend(notification_reply::check(ctx, ex));
    findings.extend(error_codes::check(ctx, ex));
    findings.extend(unknown_tool::check(ctx, ex));
    findings.extend(version::check(ctx, ex));
    findings
}

/// A finding about `ex`: fills in the tool, the probe label and the request and response
/// excerpts.
pub fn finding(
    invariant: &Invariant,
    severity: Severity,
    ctx: &Context,
    ex: &Exchange,
    message: impl Into<String>,
) -> Finding {
    let mut f = Finding::new(invariant, severity, ctx.version, message);
    f.tool = ex.probe.tool().map(str::to_owned);
    f.probe = ex.probe.label();
    f.request = Some(ex.request_excerpt(EXCERPT_BYTES));
    f.response = ex.response_excerpt(EXCERPT_BYTES);
    f
}
