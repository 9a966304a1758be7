//! Ending a server's session. Gracefully, the way the spec asks (stdio: close stdin, wait for
//! the exit, then SIGTERM and SIGKILL), where the server is in a normal state: the first such
//! shutdown of a stdio server is judged by `stdin-eof-ignored`, and once a server did not exit
//! when its stdin closed, every later session of the campaign is killed at once instead of
//! waited for again. At once (SIGKILL) where waiting buys nothing: a restart after a failure, a
//! call given up on, a wedged server.

use super::Campaign;
use crate::oracle;
use crate::session::Session;

impl Campaign<'_> {
    /// Ends the current session gracefully ([`Campaign::retire`]) and starts a fresh server
    /// (a restart that does not count against `--max-restarts`): for a phase whose findings
    /// should not depend on the state earlier phases left behind. Returns whether a server is
    /// running afterwards.
    pub(super) async fn renew(&mut self, reason: &str) -> bool {
        if let Some(old) = self.session.take() {
            self.retire(old).await;
        }
        self.fresh_restart(reason).await
    }

    /// Ends `session` gracefully (see the module docs); over stdio, judges how the server took
    /// its stdin closing, unless an earlier session of the campaign already ignored it (then it
    /// is killed at once).
    pub(super) async fn retire(&mut self, session: Session) {
        if self.shared.eof_ignored() {
            session.kill().await;
            return;
        }
        let grace = session.is_stdio().then(|| session.eof_grace()).flatten();
        let Some(grace) = grace else {
            session.shutdown().await;
            return;
        };
        let stderr = session.stderr_tail();
        let outcome = session.shutdown().await;
        if let Some(f) = oracle::stdin_eof::check(&self.context(), &outcome, grace, &stderr)
            && self.shared.set_eof_ignored()
        {
            self.add(vec![f]);
        }
    }
}
