//! Several frames in flight at once, for transport chaos: a ping while a tool call runs, a
//! cancellation, concurrent and duplicate-id requests, pipelined and split writes, a disconnect.
//!
//! [`Session::send_many`] sends [`Outgoing`] frames in order (each after its delay), keeps
//! reading the whole time, attributes every response to the frame whose id it answers, and
//! stops when every awaited id is answered or the window closes. Each frame becomes its own
//! [`Exchange`], with arrival times measured from its own send.

use std::time::{Duration, Instant};

use super::{Exchange, Expect, Outcome, Probe, Received, ReceivedItem, Session};
use crate::transport::{Transport, TransportEvent};
use crate::wire::{Message, RequestId};

/// One frame to send in a [`Session::send_many`] batch.
#[derive(Debug, Clone)]
pub struct Outgoing {
    /// Why it is sent.
    pub probe: Probe,
    /// The bytes (newline included for stdio).
    pub bytes: Vec<u8>,
    /// The ids whose responses it awaits (none for a notification).
    pub ids: Vec<RequestId>,
    /// How long to wait (reading all the while) before sending it.
    pub delay: Duration,
    /// What to do instead of (or besides) writing the bytes.
    pub action: Action,
}

/// How an [`Outgoing`] goes out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Write the bytes normally.
    Send,
    /// Write the bytes a few at a time with short pauses (stdio framing edge case).
    SendInPieces,
    /// Write nothing; close the server's input (stdio) or drop every HTTP request in flight.
    Disconnect,
}

impl Outgoing {
    /// A frame sent as is, `delay` after the previous one.
    pub fn new(probe: Probe, bytes: Vec<u8>, ids: Vec<RequestId>, delay: Duration) -> Outgoing {
        Outgoing {
            probe,
            bytes,
            ids,
            delay,
            action: Action::Send,
        }
    }
}

impl Session {
    /// Sends `frames` (see the module docs) and waits until every awaited id is answered or
    /// can no longer be (its frame's write failed, or over HTTP its POST's exchange ended),
    /// the server is gone, or `window` (from the first send) passes. Returns one exchange per
    /// frame, in order; a frame whose ids were all answered is `Answered` (its first answer),
    /// one with ids left unanswered is `NoAnswer`, a notification is `Fenced`.
    pub async fn send_many(
        &mut self,
        mut frames: Vec<Outgoing>,
        window: Duration,
    ) -> Vec<Exchange> {
        let started = Instant::now();
        let deadline = started + window;
        let timeout_ms = u64::try_from(self.config.timeout.as_millis()).unwrap_or(u64::MAX);
        let mut sent_at: Vec<Option<Instant>> = vec![None; frames.len()];
        let mut received: Vec<Vec<Received>> = vec![Vec::new(); frames.len()];
        let mut answered: Vec<Vec<(RequestId, usize)>> = vec![Vec::new(); frames.len()];
        let mut failed: Vec<Option<String>> = vec![None; frames.len()];
        // The frames sent whole, shared with the transport's writer instead of copied into it
        // (a large request is 16 MiB); each goes back into its exchange.
        let mut shared: Vec<Option<bytes::Bytes>> = vec![None; frames.len()];
        // Over HTTP, each frame's POST, and whether its exchange ended (status and body read):
        // nothing more can answer it then (a 413, a 202, a stream closed without the answer).
        let mut posts: Vec<Option<u64>> = vec![None; frames.len()];
        let mut ended = vec![false; frames.len()];
        let mut gone = false;
        // A server whose exit was seen before the batch cannot answer it: what is queued is
        // read without waiting (at most a queue's worth), then the batch ends.
        let exited_before = self.exit_seen;
        let mut drained = 0usize;
        let mut next = 0;
        let mut next_at = started + frames.first().map_or(Duration::ZERO, |f| f.delay);
        self.flood.start_exchange();
        loop {
            let all_sent = next >= frames.len();
            // A frame that could not be written, or whose HTTP exchange ended, awaits nothing.
            let all_answered = all_sent
                && (0..frames.len()).all(|i| {
                    failed[i].is_some()
                        || ended[i]
                        || frames[i]
                            .ids
                            .iter()
                            .all(|id| answered[i].iter().any(|(got, _)| got == id))
                });
            if all_answered || gone || Instant::now() >= deadline {
                break;
            }
            if !all_sent && Instant::now() >= next_at {
                let frame = &mut frames[next];
                sent_at[next] = Some(Instant::now());
                self.flood.client_sent(Instant::now());
                let emitted = if frame.action == Action::Send {
                    let bytes = bytes::Bytes::from(std::mem::take(&mut frame.bytes));
                    let timeout = self.config.timeout;
                    let sent = self
                        .transport
                        .send_shared(bytes.clone(), timeout)
                        .await
                        .map(|r| r.post)
                        .map_err(|e| e.to_string());
                    shared[next] = Some(bytes);
                    sent
                } else {
                    self.emit(frame).await
                };
                match emitted {
                    Ok(post) => posts[next] = post,
                    Err(e) => failed[next] = Some(e),
                }
                next += 1;
                if let Some(f) = frames.get(next) {
                    next_at = Instant::now() + f.delay;
                }
                continue;
            }
            let until = if all_sent {
                deadline
            } else {
                next_at.min(deadline)
            };
            let event = if exited_before {
                drained += 1;
                if drained <= super::LEFTOVERS_MAX {
                    self.transport.try_recv()
                } else {
                    None
                }
            } else {
                self.transport.recv(until).await
            };
            let Some(event) = event else {
                if exited_before || self.transport.has_exited().is_some() {
                    gone = true;
                }
                continue;
            };
            if let TransportEvent::Http(info) = &event {
                if let Some(i) = posts.iter().position(|p| *p == Some(info.post)) {
                    ended[i] = true;
                }
                continue;
            }
            let Some(item) = self.absorb(event).await else {
                continue;
            };
            if matches!(item, ReceivedItem::Exited(_)) {
                gone = true;
            }
            // Which frame does it belong to? The one awaiting its id (or the same value with
            // another JSON type, a classic server bug judged by response-id-mismatch);
            // otherwise the last one sent.
            let owner = match &item {
                ReceivedItem::Frame(f) => match &f.message {
                    Ok(Message::Response(r)) => r.id().id().and_then(|id| {
                        frames
                            .iter()
                            .position(|fr| fr.ids.contains(id))
                            .or_else(|| {
                                let text = id.to_string();
                                let text = text.trim_matches('"');
                                frames.iter().position(|fr| {
                                    fr.ids
                                        .iter()
                                        .any(|own| own.to_string().trim_matches('"') == text)
                                })
                            })
                    }),
                    _ => None,
                },
                _ => None,
            }
            .unwrap_or(next.saturating_sub(1));
            let at = sent_at[owner].unwrap_or(started);
            let index = received[owner].len();
            if let ReceivedItem::Frame(f) = &item
                && let Ok(Message::Response(r)) = &f.message
                && let Some(id) = r.id().id()
                && frames[owner].ids.contains(id)
            {
                answered[owner].push((id.clone(), index));
            }
            received[owner].push(Received {
                at_ms: u64::try_from(at.elapsed().as_millis()).unwrap_or(u64::MAX),
                item,
            });
        }
        self.stderr_settled().await;
        // What the batch dropped is recorded with the last frame sent.
        if let Some(last) = received.get_mut(next.saturating_sub(1)) {
            let at = sent_at[next.saturating_sub(1)].unwrap_or(started);
            self.close_recording(at, last);
        }
        frames
            .into_iter()
            .enumerate()
            .map(|(i, frame)| {
                let outcome = match (&failed[i], answered[i].first()) {
                    (Some(e), _) => Outcome::SendFailed(e.clone()),
                    (None, Some((_, index))) => Outcome::Answered { index: *index },
                    (None, None) if gone => Outcome::Gone(self.transport.has_exited()),
                    (None, None) if frame.ids.is_empty() => Outcome::Fenced,
                    (None, None) => Outcome::NoAnswer,
                };
                for id in &frame.ids {
                    if !answered[i].iter().any(|(got, _)| got == id) {
                        self.forget(id.clone());
                    }
                }
                let expect = match frame.ids.first() {
                    Some(id) => Expect::Response {
                        id: id.clone(),
                        or_null: false,
                        fence: false,
                    },
                    None => Expect::Fenced,
                };
                // Without a copy once the writer is done with it (it wrote the frame, or gave
                // up on the server).
                let sent = shared[i].take().map_or(frame.bytes, Vec::from);
                Exchange {
                    probe: frame.probe,
                    sent,
                    expect,
                    received: std::mem::take(&mut received[i]),
                    preceding: 0,
                    outcome,
                    elapsed: sent_at[i].map_or(Duration::ZERO, |t| t.elapsed()),
                    timeout_ms,
                    fault: None,
                }
            })
            .collect()
    }

    /// Writes one frame as its action says; its POST's number over HTTP.
    async fn emit(&mut self, frame: &Outgoing) -> Result<Option<u64>, String> {
        let timeout = self.config.timeout;
        match frame.action {
            // (`send_many` sends these itself, sharing the frame with the transport.)
            Action::Send => self
                .transport
                .send(&frame.bytes, timeout)
                .await
                .map(|r| r.post)
                .map_err(|e| e.to_string()),
            Action::SendInPieces if self.transport.per_request() => self
                .transport
                .send(&frame.bytes, timeout)
                .await
                .map(|r| r.post)
                .map_err(|e| e.to_string()),
            Action::SendInPieces => {
                for piece in frame.bytes.chunks(7) {
                    self.transport
                        .send(piece, timeout)
                        .await
                        .map_err(|e| e.to_string())?;
                    tokio::time::sleep(Duration::from_millis(3)).await;
                }
                Ok(None)
            }
            Action::Disconnect => {
                match &mut self.transport {
                    Transport::Stdio(t) => t.close_stdin(),
                    Transport::Http(t) => t.abandon_requests(),
                }
                Ok(None)
            }
        }
    }
}
