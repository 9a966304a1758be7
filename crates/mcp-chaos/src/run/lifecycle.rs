//! The lifecycle-order phase (`basic/lifecycle` §Initialization, handshake versions): on one
//! fresh server process, requests out of the handshake's order, judged by
//! `served-before-initialize` (MC115, [`crate::oracle::lifecycle`]) and checked for the server
//! surviving them:
//!
//! 1. `tools/list` before `initialize` (a result is MC115; an error or no answer is fine);
//! 2. `initialize` (a server that refuses it after step 1 ends the phase without a finding:
//!    the client broke the order first);
//! 3. `tools/list` between the `initialize` response and `notifications/initialized`
//!    (served or refused, both fine);
//! 4. `notifications/initialized`;
//! 5. a second `initialize` (a fresh result or an error, both fine: the spec says nothing);
//! 6. a liveness `ping`.
//!
//! Each request is fenced with a `ping` (allowed before `initialize` too), so a server that
//! ignores it costs a grace period, not a deadline. A server that exits, or stops answering,
//! after one of them is reported (`server-died`, `not-alive`) as a warning: the spec lets a
//! server end a session (`basic/lifecycle` §Shutdown) and the client broke the order on
//! purpose. Only over stdio: over Streamable HTTP a request before `initialize` is a POST
//! without a session id, which the `HTTP no session id` probe judges (and which a stateless
//! HTTP server rightly serves); and not under 2026-07-28, which has no handshake, except for a
//! server that also speaks `initialize` (a dual-era server selects the era from how the
//! client opens): there the cases run under the newest handshake version, and the first is
//! judged only once the server has accepted `initialize`. Cost: one server start and six
//! small exchanges.

use serde_json::{Value, json};

use super::{Campaign, Event, ServerSpec};
use crate::finding::{Finding, SERVER_DIED, Severity};
use crate::oracle;
use crate::protocol::ProtocolVersion;
use crate::session::{ClientConfig, Exchange, Expect, LifecycleState, Outcome, Probe, Session};
use crate::transport::ExitKind;
use crate::wire;

impl Campaign<'_> {
    /// Runs the lifecycle-order cases on a fresh process (see the module docs). Shuts the
    /// campaign's session down first, as the version probe does (the next step restarts it).
    /// In a 2026-07-28 campaign they run under the newest handshake version, for a server that
    /// speaks both eras (judged only if it then accepts `initialize`); not under `--protocol-
    /// version all`, whose handshake campaigns run them.
    pub(super) async fn lifecycle_phase(&mut self) {
        let stateless = !self.context().version.rules().handshake;
        if self.gave_up
            || !matches!(self.server, ServerSpec::Stdio(_))
            || (stateless && self.only_if_supported)
        {
            return;
        }
        let version = if stateless {
            ProtocolVersion::LATEST_WITH_INITIALIZE
        } else {
            self.context().version
        };
        self.shared.emit(&Event::Step {
            label: "lifecycle order",
        });
        if let Some(old) = self.session.take() {
            old.shutdown().await;
        }
        let Ok(transport) = self.server.start().await else {
            return;
        };
        // In the campaign's place while the cases run, so that they are judged under its
        // version.
        self.session = Some(Session::new(
            transport,
            ClientConfig::new(version, self.config.timeout),
        ));
        self.lifecycle_cases(version, stateless).await;
        if let Some(session) = self.session.take() {
            session.shutdown().await;
        }
    }

    async fn lifecycle_cases(&mut self, version: ProtocolVersion, stateless: bool) {
        let Some(early) = self
            .out_of_order(LifecycleState::BeforeInitialize, "tools/list", None)
            .await
        else {
            return;
        };
        let exited = self.exited(&early);
        let init = match (&exited, self.session.as_mut()) {
            (None, Some(session)) => Some(session.initialize_with(version.as_str()).await),
            _ => None,
        };
        let initialized = init
            .as_ref()
            .is_some_and(|i| i.response().and_then(|r| r.result()).is_some());
        // In a 2026-07-28 campaign only a server that speaks the handshake era too is judged
        // by it (a stateless-only one owes -32602 to a request without `_meta`: the
        // missing-_meta probe's).
        if stateless && !initialized {
            self.count(&early);
        } else {
            self.record(&early);
        }
        if let Some(status) = exited {
            // Not in a 2026-07-28 campaign: which era the server speaks is then unknown.
            if !stateless {
                self.lifecycle_died(&early, &status);
            }
            return;
        }
        let Some(init) = init else { return };
        if stateless && !initialized {
            // A stateless-only server refusing initialize: nothing of the handshake era to judge.
            return self.count(&init);
        }
        self.record(&init);
        // An exit noticed only now, before initialize was answered, follows the early request.
        if let Some(status) = self.exited(&init) {
            let blamed = if init.response().is_some() {
                &init
            } else {
                &early
            };
            return self.lifecycle_died(blamed, &status);
        }
        // Refused (or unanswered) after a request out of order: not judged, nothing to go on.
        if !initialized {
            return;
        }
        let Some(between) = self
            .out_of_order(LifecycleState::BeforeInitialized, "tools/list", None)
            .await
        else {
            return;
        };
        self.record(&between);
        if let Some(status) = self.exited(&between) {
            return self.lifecycle_died(&between, &status);
        }
        let Some(session) = self.session.as_mut() else {
            return;
        };
        let notified = session
            .notify(Probe::Initialized, "notifications/initialized", None)
            .await;
        self.record(&notified);
        let params = json!({
            "protocolVersion": version.as_str(),
            "capabilities": Session::client_capabilities(version),
            "clientInfo": {"name": crate::session::CLIENT_NAME, "version": env!("CARGO_PKG_VERSION")},
        });
        let Some(again) = self
            .out_of_order(LifecycleState::Reinitialize, "initialize", Some(params))
            .await
        else {
            return;
        };
        self.record(&again);
        let Some(session) = self.session.as_mut() else {
            return;
        };
        let ping = session.liveness().await;
        let stderr = session.stderr_tail();
        self.record(&ping);
        let findings = oracle::liveness::check(&self.context(), &again, &ping, &stderr)
            .into_iter()
            .map(provoked)
            .collect();
        self.add(findings);
    }

    /// Sends `method` with `params` in `state` on the current session, fenced by a `ping`; an
    /// unanswered request is forgotten, so that a late answer does not land in the next
    /// exchange.
    async fn out_of_order(
        &mut self,
        state: LifecycleState,
        method: &str,
        params: Option<Value>,
    ) -> Option<Exchange> {
        let session = self.session.as_mut()?;
        let id = session.next_id();
        let frame = wire::to_line(&wire::request(&id, method, params));
        let probe = Probe::Lifecycle {
            state,
            method: method.to_owned(),
        };
        let expect = Expect::Response {
            id: id.clone(),
            or_null: false,
            fence: true,
        };
        let ex = session.send(probe, frame, expect).await;
        if matches!(ex.outcome, Outcome::NoAnswer) {
            session.forget(id);
        }
        Some(ex)
    }

    /// How the server process ended, if it did during or after `ex`.
    fn exited(&self, ex: &Exchange) -> Option<ExitKind> {
        ex.exited()
            .cloned()
            .or_else(|| self.session.as_ref().and_then(Session::has_exited))
    }

    /// Records a `server-died` warning: the server exited (`status`) after `previous`.
    fn lifecycle_died(&mut self, previous: &Exchange, status: &ExitKind) {
        let stderr = self
            .session
            .as_ref()
            .map(Session::stderr_tail)
            .unwrap_or_default();
        let tail: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
        let tail = tail[tail.len().saturating_sub(6)..].join(" | ");
        let note = if tail.is_empty() {
            String::new()
        } else {
            format!("; its output ends with: {tail}")
        };
        let finding = oracle::finding(
            &SERVER_DIED,
            Severity::Violation,
            &self.context(),
            previous,
            format!(
                "the server exited ({status}) after {}{note}",
                previous.probe.label()
            ),
        );
        self.add(vec![provoked(finding)]);
    }
}

/// `f` as a warning that says why: the lifecycle order was broken on purpose.
fn provoked(mut f: Finding) -> Finding {
    f.severity = Severity::Warning;
    f.message.push_str(
        " (a warning: the client broke the lifecycle order on purpose, and the spec leaves the \
         server's reaction open; a server should still refuse such a request rather than end \
         the session)",
    );
    f
}
