//! `served-before-initialize` (MC115): a request sent on a fresh connection before
//! `initialize` is not served as if the session were initialized (`basic/lifecycle`
//! §Initialization, 2024-11-05 … 2025-11-25: "The initialization phase MUST be the first
//! interaction between client and server"; "The client SHOULD NOT send requests other than
//! pings before the server has responded to the `initialize` request").
//!
//! The spec does not say how the server must react to such a request, so a normal result is
//! a warning; a JSON-RPC error or no answer at all is fine, and `ping` is never judged (it is
//! allowed before `initialize`). Two more lifecycle-order cases share the fresh connection
//! and are judged by nothing here: `tools/list` between the `initialize` response and
//! `notifications/initialized` (the spec only limits what the *server* sends before that
//! notification) and a second `initialize` (the spec says nothing of one; an error or a fresh
//! result are both accepted). 2026-07-28 has no handshake: nothing is judged there.

use serde_json::Value;

use super::{Context, finding};
use crate::finding::{Finding, SERVED_BEFORE_INITIALIZE, Severity};
use crate::session::{Exchange, LifecycleState, Probe};

/// Judges a [`Probe::Lifecycle`] exchange; any other probe yields nothing.
pub fn check(ctx: &Context<'_>, ex: &Exchange) -> Vec<Finding> {
    let Probe::Lifecycle {
        state: LifecycleState::BeforeInitialize,
        method,
    } = &ex.probe
    else {
        return Vec::new();
    };
    if !ctx.version.rules().handshake || method == "ping" {
        return Vec::new();
    }
    let Some(result) = ex.response().and_then(|r| r.result()) else {
        return Vec::new();
    };
    let what = match result.get("tools").and_then(Value::as_array) {
        Some(tools) if method == "tools/list" => {
            format!("a tools/list result with {} tools", tools.len())
        }
        _ => "a normal result".to_owned(),
    };
    vec![finding(
        &SERVED_BEFORE_INITIALIZE,
        Severity::Warning,
        ctx,
        ex,
        format!(
            "{method} sent on a fresh connection before initialize was answered with {what}, as \
             if the session were initialized; the initialization phase MUST be the first \
             interaction, and until initialize has been answered only ping is expected, so \
             refuse other requests with a JSON-RPC error (the spec leaves the reaction open: \
             a warning)"
        ),
    )]
}

/// This invariant as the oracle's [`judge`](super::judge) runs it on every exchange
/// ([`check`]), with the catalog entries it reports.
pub struct Rule;

impl super::Check for Rule {
    fn name(&self) -> &'static str {
        "lifecycle"
    }

    fn invariants(&self) -> &'static [crate::finding::Invariant] {
        &[crate::finding::SERVED_BEFORE_INITIALIZE]
    }

    fn check(&self, ctx: &super::Context<'_>, ex: &crate::session::Exchange) -> Vec<Finding> {
        check(ctx, ex)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::json;

    use super::*;
    use crate::observed::Frame;
    use crate::protocol::ProtocolVersion;
    use crate::session::{Expect, Outcome, Received, ReceivedItem};
    use crate::wire::{self, RequestId};

    fn exchange(state: LifecycleState, method: &str, answer: Option<Value>) -> Exchange {
        let id = RequestId::from(1);
        let received: Vec<Received> = answer
            .into_iter()
            .map(|a| Received {
                at_ms: 1,
                item: ReceivedItem::Frame(Frame::new(serde_json::to_vec(&a).unwrap())),
            })
            .collect();
        Exchange {
            probe: Probe::Lifecycle {
                state,
                method: method.into(),
            },
            sent: wire::to_line(&wire::request(&id, method, None)),
            expect: Expect::Response {
                id,
                or_null: false,
                fence: true,
            },
            outcome: if received.is_empty() {
                Outcome::NoAnswer
            } else {
                Outcome::Answered { index: 0 }
            },
            received,
            preceding: 0,
            elapsed: Duration::from_millis(1),
            timeout_ms: 1000,
            fault: None,
        }
    }

    fn served() -> Value {
        wire::success(&RequestId::from(1), json!({"tools": [{"name": "echo"}]}))
    }

    fn refused() -> Value {
        wire::error(
            Some(&RequestId::from(1)),
            wire::INVALID_REQUEST,
            "not initialized",
            None,
        )
    }

    fn judged(version: ProtocolVersion, ex: &Exchange) -> Vec<Finding> {
        check(&Context::bare(version), ex)
    }

    #[test]
    fn a_result_before_initialize_is_a_warning_in_every_handshake_version() {
        let ex = exchange(
            LifecycleState::BeforeInitialize,
            "tools/list",
            Some(served()),
        );
        for version in ProtocolVersion::ALL
            .into_iter()
            .filter(|v| v.rules().handshake)
        {
            let found = judged(version, &ex);
            assert_eq!(found.len(), 1, "{version}");
            let f = &found[0];
            assert_eq!(f.code, "MC115");
            assert_eq!(f.severity, Severity::Warning);
            assert!(
                f.message
                    .contains("tools/list sent on a fresh connection before initialize")
            );
            assert!(f.message.contains("1 tools"), "{}", f.message);
            assert_eq!(
                f.spec,
                format!(
                    "https://modelcontextprotocol.io/specification/{version}/basic/lifecycle#initialization"
                )
            );
        }
    }

    #[test]
    fn an_error_or_no_answer_before_initialize_is_fine() {
        for answer in [Some(refused()), None] {
            let ex = exchange(LifecycleState::BeforeInitialize, "tools/list", answer);
            assert!(judged(ProtocolVersion::V2025_11_25, &ex).is_empty());
        }
    }

    #[test]
    fn ping_later_states_and_the_stateless_version_are_not_judged() {
        let pong = wire::success(&RequestId::from(1), json!({}));
        let ping = exchange(LifecycleState::BeforeInitialize, "ping", Some(pong));
        assert!(judged(ProtocolVersion::V2025_11_25, &ping).is_empty());
        for state in [
            LifecycleState::BeforeInitialized,
            LifecycleState::Reinitialize,
        ] {
            let ex = exchange(state, "tools/list", Some(served()));
            assert!(judged(ProtocolVersion::V2025_11_25, &ex).is_empty());
        }
        let ex = exchange(
            LifecycleState::BeforeInitialize,
            "tools/list",
            Some(served()),
        );
        assert!(judged(ProtocolVersion::V2026_07_28, &ex).is_empty());
    }

    /// The whole oracle: nothing else (no-response in particular) judges a lifecycle case.
    #[test]
    fn no_other_invariant_judges_a_lifecycle_case() {
        let ctx = Context::bare(ProtocolVersion::V2025_11_25);
        for state in [
            LifecycleState::BeforeInitialize,
            LifecycleState::BeforeInitialized,
            LifecycleState::Reinitialize,
        ] {
            let silent = exchange(state, "tools/list", None);
            assert!(super::super::judge(&ctx, &silent).is_empty(), "{state:?}");
        }
    }
}
