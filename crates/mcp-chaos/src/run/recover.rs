//! What the campaign does after the server failed a liveness check: restart it, and tell a
//! server that recovers (it crashed once, one probe hung it, it was slow once) from one that is
//! wedged (a fresh restart answers the handshake and then stalls the same way at once), which
//! ends the campaign with one `server-wedged` finding instead of a deadline per remaining
//! probe. Also: `tools/list` checked like every probe, so that a server dying on it is blamed
//! on it, and listed again after the restart.

use serde_json::Value;

use super::Campaign;
use crate::finding::Finding;
use crate::oracle;
use crate::session::{Exchange, Outcome, Probe};

/// A wedge found during the campaign, reported when the phases are over (the count of
/// skipped probes is known only then).
#[derive(Debug, Default)]
pub(super) struct WedgeState {
    /// The `server-wedged` finding, its message still without the skipped count.
    pub(super) finding: Option<Finding>,
    /// Probes planned when the tools were listed ([`super::Event::Planned`]'s `steps`).
    pub(super) planned: usize,
    /// Probes started so far ([`Campaign::step`] calls).
    pub(super) started: usize,
    /// The `notifications/initialized` exchange of the latest handshake, when its fence (a
    /// liveness ping, over stdio) stalled: that ping already tells a wedged fresh server.
    stalled_handshake: Option<Exchange>,
}

impl WedgeState {
    /// Keeps the handshake's `notifications/initialized` exchange if its fence stalled.
    pub(super) fn note_handshake(&mut self, exchanges: &[Exchange]) {
        self.stalled_handshake = exchanges
            .iter()
            .find(|e| matches!(e.probe, Probe::Initialized))
            .filter(|e| oracle::wedged::stall(e).is_some())
            .cloned();
    }
}

impl Campaign<'_> {
    /// Restarts the server after `previous` and the liveness ping after it (`ping`) failed.
    /// When the ping stalled without the server exiting ([`oracle::wedged::stall`]), the fresh
    /// server's first ping (the fence of its `notifications/initialized` over stdio, else one
    /// liveness ping right after the handshake) decides: if that stalls the same way, the
    /// server is wedged; the finding is kept for [`Campaign::report_wedge`], the server is
    /// shut down and the campaign gives up. Returns whether a server is running afterwards.
    pub(super) async fn restart_after_failure(
        &mut self,
        reason: &str,
        previous: &Exchange,
        ping: &Exchange,
    ) -> bool {
        if !matches!(previous.probe, Probe::Wire { .. })
            && let Some(key) = super::method_key(&previous.sent)
        {
            self.failed_methods.insert(key);
        }
        if !self.restart(reason).await {
            return false;
        }
        if oracle::wedged::stall(ping).is_none() {
            return true;
        }
        let fresh = match self.wedge.stalled_handshake.take() {
            Some(fenced) => fenced,
            None => {
                let Some(session) = self.session.as_mut() else {
                    return false;
                };
                let ping = session.liveness().await;
                self.record(&ping);
                ping
            }
        };
        let Some(finding) = oracle::wedged::check(&self.context(), previous, ping, &fresh) else {
            return true;
        };
        self.wedge.finding = Some(finding);
        self.gave_up = true;
        if let Some(old) = self.session.take() {
            old.kill().await;
        }
        false
    }

    /// Records the `server-wedged` finding, if the server wedged, with how many of the
    /// planned probes were skipped. Idempotent.
    pub(super) fn report_wedge(&mut self) {
        if let Some(f) = self.wedge.finding.take() {
            let planned = self.wedge.planned;
            let skipped = planned.saturating_sub(self.wedge.started);
            self.add(vec![oracle::wedged::with_skipped(f, skipped, planned)]);
        }
    }

    /// Lists the tools, recording the pages. When the last page was not answered (no
    /// response, or the server died on it), the server's liveness is checked after it like
    /// after any probe: a crash is then blamed on `tools/list`, a wedge is found, and a
    /// restarted server is asked for its tools once more (a server that died on the first
    /// `tools/list` only still gets its tools tested).
    pub(super) async fn list_tools_checked(&mut self) -> Vec<Value> {
        let mut tools = Vec::new();
        for _ in 0..2 {
            let Some(session) = self.session.as_mut() else {
                break;
            };
            let (pages, listed) = session.list_tools().await;
            for page in &pages {
                self.record(page);
            }
            tools = listed;
            let Some(last) = pages.last() else {
                break;
            };
            if matches!(last.outcome, Outcome::Answered { .. }) {
                break;
            }
            let restarts = self.summary.restarts;
            self.check_liveness(last).await;
            if self.summary.restarts == restarts || self.gave_up {
                break;
            }
        }
        tools
    }
}
