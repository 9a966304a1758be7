//! Requests in flight without waiting, for the case scheduler (`--in-flight`): frames go out
//! with [`Session::submit`], and whatever comes back is pulled one item at a time with
//! [`Session::pull`] (server-to-client requests answered on the way, stale responses dropped,
//! as in every exchange). The caller routes responses by id and builds the exchanges.

use std::time::Instant;

use super::{Received, ReceivedItem, Session};
use crate::transport::TransportEvent;

impl Session {
    /// Starts a batch of submitted requests: the flood meter counts from here.
    pub fn begin_batch(&mut self) {
        self.flood.start_exchange();
    }

    /// Ends a batch: what the flood meter dropped during it, as one item to record in one of
    /// the batch's exchanges (`started` is that exchange's start).
    pub fn end_batch(&mut self, started: Instant) -> Option<Received> {
        let mut received = Vec::new();
        self.close_recording(started, &mut received);
        received.pop()
    }

    /// Writes `bytes` (one request frame) without waiting for its answer; the request gets its
    /// own budget of unsolicited messages kept (see [`super::flood::FloodMeter::renew_keep`]). Returns the HTTP
    /// exchange number of the request over HTTP (its status and headers arrive later as a
    /// [`ReceivedItem::Http`] with that `post`), `None` over stdio; an error when the frame
    /// could not be written (the server is most likely gone).
    pub async fn submit(&mut self, bytes: &[u8]) -> Result<Option<u64>, String> {
        self.flood.client_sent(Instant::now());
        self.flood.renew_keep();
        let post = self
            .transport
            .send_with(bytes, self.config.timeout, Vec::new())
            .await
            .map(|receipt| receipt.post)
            .map_err(|e| e.to_string())?;
        // The frame is queued for the transport's writer task: let it run now, so that the
        // server gets the request while the caller goes on judging the answers already in
        // (on the one thread of the runtime, the writer would otherwise wait for the
        // caller's next wait, and the server would sit idle meanwhile).
        tokio::task::yield_now().await;
        Ok(post)
    }

    /// The next thing received before `until`, answering server-to-client requests on the
    /// way; `None` when nothing comes in time or nothing more can come.
    pub async fn pull(&mut self, until: Instant) -> Option<ReceivedItem> {
        loop {
            let event = if Instant::now() < until {
                self.transport.recv(until).await
            } else {
                self.transport.try_recv()
            }?;
            if let TransportEvent::Closed { .. } = &event {
                self.stdout_closed = true;
            }
            if let Some(item) = self.absorb(event).await {
                return Some(item);
            }
        }
    }

    /// Whether the server's stdout is closed (stdio): nothing more can be answered.
    pub fn output_closed(&self) -> bool {
        self.stdout_closed
    }
}
