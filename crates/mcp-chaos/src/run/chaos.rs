//! Transport chaos (both transports): what happens when requests overlap, are cancelled,
//! are interrupted by a disconnect, arrive pipelined or in pieces, or grow large. Failures are
//! judged by `unresponsive-during-call`, `response-after-cancel`, and the invariants every
//! exchange meets (`no-response`, `response-id-mismatch`, `server-died`, `not-alive`).
//!
//! The probes that need a slow tool call (ping during a call, cancellation, disconnect) run
//! when a tool calls the fake upstream: the upstream is then made to answer after
//! [`SLOW_CALL_MS`].

use std::time::Duration;

use serde_json::{Value, json};

use super::ladder::{Ladder, STDIO_KNOWN_LIMITS};
use super::{Campaign, Event};
use crate::session::{Action, Exchange, Outcome, Outgoing, Probe, Received, ReceivedItem};
use crate::transport::{ExitKind, Transport};
use crate::wire;

/// How long the fake upstream takes to answer during the slow-call probes, in ms.
pub const SLOW_CALL_MS: u64 = 2_500;
/// How soon a ping sent during a tool call must be answered, in ms.
pub const PING_BUDGET_MS: u64 = 1_000;
/// How many requests the concurrency probe keeps in flight.
pub const CONCURRENT: usize = 8;

impl Campaign<'_> {
    /// Runs the transport-chaos probes. `call` is a tool and arguments for ordinary calls;
    /// `slow` one that calls the fake upstream (and can therefore be slowed down).
    pub(super) async fn transport_chaos(
        &mut self,
        call: Option<(String, Value)>,
        slow: Option<(String, Value)>,
    ) {
        // On a fresh server: what the earlier phases left running (a server's own timers and
        // subscriptions, a half-read frame) must not decide how it takes a large request, and
        // the session they used ends gracefully, so that its shutdown is judged
        // (`stdin-eof-ignored`) in the state a client would leave it in.
        if self.gave_up || self.cut_by_budget("transport chaos", 0, 1) {
            return;
        }
        if !self.renew("transport chaos starts on a fresh server").await {
            return;
        }
        self.concurrent(call.as_ref()).await;
        self.duplicate_ids().await;
        self.framing().await;
        if let Some((tool, args)) = &slow {
            if let Some(inj) = &self.injectors {
                inj.set_fault(&mcp_chaos_faults::Fault::delay(SLOW_CALL_MS));
            }
            self.ping_during_call(tool, args).await;
            self.cancel_during_call(tool, args).await;
            self.disconnect_during_call(tool, args).await;
            if let Some(inj) = &self.injectors {
                inj.heal();
            }
        }
        self.large_requests().await;
    }

    fn announce(&mut self, label: &str) -> bool {
        if self.cut_by_budget("transport chaos", 0, 0) {
            return false;
        }
        self.shared.emit(&Event::Step { label });
        !self.gave_up
    }

    async fn ensure_session(&mut self) -> bool {
        self.session.is_some() || self.restart("no server running").await
    }

    /// Records the exchanges of a group and checks liveness once after them.
    async fn finish_group(&mut self, exchanges: &[Exchange]) {
        for ex in exchanges {
            self.record(ex);
        }
        if let Some(last) = exchanges.last() {
            self.check_liveness(last).await;
        }
    }

    async fn concurrent(&mut self, call: Option<&(String, Value)>) {
        // A server found mixing up requests in flight (concurrent-requests-mixed) is driven
        // one request at a time from then on: what concurrency would show is reported.
        let mixed = crate::finding::CONCURRENT_REQUESTS_MIXED.code;
        if self.shared.has_code(mixed) {
            return;
        }
        if !self.announce("concurrent requests") || !self.ensure_session().await {
            return;
        }
        let Some(session) = self.session.as_mut() else {
            return;
        };
        let frames: Vec<Outgoing> = (0..CONCURRENT)
            .map(|_| {
                let id = session.next_id();
                let bytes = match call {
                    Some((tool, args)) => session.call_frame(&id, tool, args),
                    None => session.liveness_frame(&id, None),
                };
                Outgoing::new(
                    Probe::Concurrent { n: CONCURRENT },
                    bytes,
                    vec![id],
                    Duration::ZERO,
                )
            })
            .collect();
        let window = session.config().timeout;
        let exchanges = session.send_many(frames, window).await;
        self.finish_group(&exchanges).await;
    }

    async fn duplicate_ids(&mut self) {
        if !self.announce("duplicate request ids") || !self.ensure_session().await {
            return;
        }
        let Some(session) = self.session.as_mut() else {
            return;
        };
        let id = session.next_id();
        let frames = (0..2)
            .map(|i| {
                Outgoing::new(
                    Probe::DuplicateId,
                    session.liveness_frame(&id, None),
                    if i == 0 { vec![id.clone()] } else { Vec::new() },
                    Duration::ZERO,
                )
            })
            .collect();
        let exchanges = session.send_many(frames, Duration::from_secs(2)).await;
        // Answers to the reused id that have not come yet are no answers to anything else.
        let got = exchanges
            .iter()
            .flat_map(|ex| ex.frames())
            .filter(|(_, f)| {
                matches!(&f.message, Ok(crate::wire::Message::Response(r)) if r.id().id() == Some(&id))
            })
            .count();
        // (send_many already forgot the first answer if it never came.)
        let first_missing = usize::from(got == 0);
        for _ in 0..2usize.saturating_sub(got + first_missing) {
            session.forget(id.clone());
        }
        self.finish_group(&exchanges).await;
    }

    /// Pipelined requests in one write, and one request written in pieces (stdio framing).
    async fn framing(&mut self) {
        let stdio = matches!(
            self.session.as_mut().map(|s| s.transport_mut()),
            Some(Transport::Stdio(_))
        );
        if !stdio || !self.announce("pipelined and split writes") || !self.ensure_session().await {
            return;
        }
        let Some(session) = self.session.as_mut() else {
            return;
        };
        let ids: Vec<_> = (0..3).map(|_| session.next_id()).collect();
        let mut bytes = Vec::new();
        for id in &ids {
            bytes.extend(session.liveness_frame(id, None));
        }
        let piece_id = session.next_id();
        let mut pieces = Outgoing::new(
            Probe::SplitWrites,
            session.liveness_frame(&piece_id, None),
            vec![piece_id],
            Duration::ZERO,
        );
        pieces.action = Action::SendInPieces;
        let frames = vec![
            Outgoing::new(Probe::Pipelined, bytes, ids, Duration::ZERO),
            pieces,
        ];
        let window = session.config().timeout;
        let exchanges = session.send_many(frames, window).await;
        self.finish_group(&exchanges).await;
    }

    async fn ping_during_call(&mut self, tool: &str, args: &Value) {
        if !self.announce("ping during a slow tool call") || !self.ensure_session().await {
            return;
        }
        let Some(session) = self.session.as_mut() else {
            return;
        };
        let call_id = session.next_id();
        let ping_id = session.next_id();
        let delay = Duration::from_millis(100);
        let frames = vec![
            Outgoing::new(
                call_probe(tool, args),
                session.call_frame(&call_id, tool, args),
                vec![call_id],
                Duration::ZERO,
            ),
            Outgoing::new(
                Probe::PingDuringCall {
                    tool: tool.to_owned(),
                    budget_ms: PING_BUDGET_MS,
                    call_answered_ms: None,
                },
                session.liveness_frame(&ping_id, None),
                vec![ping_id],
                delay,
            ),
        ];
        let window = Duration::from_millis(SLOW_CALL_MS) + session.config().timeout;
        let mut exchanges = session.send_many(frames, window).await;
        // When did the call end, seen from the ping's send?
        let call_done = answer_ms(&exchanges[0]);
        if let Probe::PingDuringCall {
            call_answered_ms, ..
        } = &mut exchanges[1].probe
        {
            *call_answered_ms = call_done.map(|ms| ms.saturating_sub(100));
        }
        self.finish_group(&exchanges).await;
    }

    async fn cancel_during_call(&mut self, tool: &str, args: &Value) {
        if !self.announce("cancel a slow tool call") || !self.ensure_session().await {
            return;
        }
        let Some(session) = self.session.as_mut() else {
            return;
        };
        let call_id = session.next_id();
        let stream_cancel = session.stateless() && session.transport_mut().per_request();
        let mut frames = vec![Outgoing::new(
            Probe::CancelledCall {
                tool: tool.to_owned(),
            },
            session.call_frame(&call_id, tool, args),
            vec![call_id.clone()],
            Duration::ZERO,
        )];
        if stream_cancel {
            // 2026-07-28 over HTTP: closing the response stream is the cancellation.
            let mut drop = Outgoing::new(
                Probe::Cancel,
                b"(connection closed)".to_vec(),
                Vec::new(),
                Duration::from_millis(100),
            );
            drop.action = Action::Disconnect;
            frames.push(drop);
        } else {
            let cancel = wire::to_line(&wire::notification(
                "notifications/cancelled",
                Some(
                    json!({"requestId": call_id.to_value(), "reason": "mcp-chaos cancellation probe"}),
                ),
            ));
            frames.push(Outgoing::new(
                Probe::Cancel,
                cancel,
                Vec::new(),
                Duration::from_millis(100),
            ));
        }
        let window = Duration::from_millis(SLOW_CALL_MS + 1_000);
        let exchanges = session.send_many(frames, window).await;
        self.finish_group(&exchanges).await;
    }

    async fn disconnect_during_call(&mut self, tool: &str, args: &Value) {
        if !self.announce("disconnect during a slow tool call") || !self.ensure_session().await {
            return;
        }
        let Some(session) = self.session.as_mut() else {
            return;
        };
        let stdio = matches!(session.transport_mut(), Transport::Stdio(_));
        let call_id = session.next_id();
        let mut disconnect = Outgoing::new(
            Probe::Disconnected {
                tool: tool.to_owned(),
            },
            b"(disconnect)".to_vec(),
            Vec::new(),
            Duration::from_millis(100),
        );
        disconnect.action = Action::Disconnect;
        let frames = vec![
            Outgoing::new(
                Probe::Disconnected {
                    tool: tool.to_owned(),
                },
                session.call_frame(&call_id, tool, args),
                vec![call_id],
                Duration::ZERO,
            ),
            disconnect,
        ];
        let window = if stdio {
            // Closing stdin ends a stdio session: wait for the server to exit.
            Duration::from_millis(3_000)
        } else {
            Duration::from_millis(500)
        };
        let mut exchanges = session.send_many(frames, window).await;
        if stdio {
            // The server should exit promptly and cleanly; the next session is a new process.
            let status = match session.transport_mut() {
                Transport::Stdio(_) => session.has_exited(),
                Transport::Http(_) => None,
            };
            if let Some(status) = status {
                exchanges[1].received.push(Received {
                    at_ms: 0,
                    item: ReceivedItem::Exited(status),
                });
            }
            exchanges[1].outcome = Outcome::Fenced;
            for ex in &exchanges {
                self.record(ex);
            }
            if let Some(old) = self.session.take() {
                let stderr = old.stderr_tail();
                let status = old.has_exited();
                self.retire(old).await;
                self.judge_stdio_disconnect(&exchanges[1], status, &stderr);
            }
            self.restart("the disconnect probe closed the server's input")
                .await;
        } else {
            self.finish_group(&exchanges).await;
        }
    }

    /// A stdio server whose input closes while a call runs should exit cleanly; a crash
    /// (non-zero status, a signal) is reported as `server-died` (a warning: the spec only asks
    /// servers to exit promptly on EOF).
    fn judge_stdio_disconnect(&mut self, ex: &Exchange, status: Option<ExitKind>, stderr: &str) {
        let crashed = match &status {
            Some(ExitKind::Code(0)) | None => false,
            Some(_) => true,
        };
        if !crashed {
            return;
        }
        let ctx = self.context();
        let tail: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
        let tail = tail[tail.len().saturating_sub(4)..].join(" | ");
        let how = status.map_or_else(String::new, |s| s.to_string());
        let f = crate::oracle::finding(
            &crate::finding::SERVER_DIED,
            crate::finding::Severity::Warning,
            &ctx,
            ex,
            format!(
                "when its input closed during a tool call the server crashed ({how}) instead of exiting cleanly{}",
                if tail.is_empty() {
                    String::new()
                } else {
                    format!("; its stderr ends with: {tail}")
                }
            ),
        );
        self.add(vec![f]);
    }

    /// Requests growing from 64 KiB to 16 MiB, each followed by a liveness probe, sized by a
    /// [`Ladder`]: doubling, with a size just over each known SDK limit (stdio), then
    /// narrowed down between the largest size survived and the smallest not survived. One
    /// finding names the smallest size that broke the server (and the largest it survived).
    async fn large_requests(&mut self) {
        let known = match self.server {
            super::ServerSpec::Stdio(_) => STDIO_KNOWN_LIMITS,
            super::ServerSpec::Http(_) => &[],
        };
        let mut ladder = Ladder::new(known);
        let mut findings = Vec::new();
        while let Some(size) = ladder.next() {
            match self.large_one(size).await {
                Large::Survived => ladder.record(size, true),
                Large::Failed(f) => {
                    ladder.record(size, false);
                    // The findings of the smallest size that broke the server.
                    if ladder.failed() == Some(size) {
                        findings = f;
                    }
                }
                Large::NotRun => break,
            }
        }
        let good = ladder.survived();
        for f in &mut findings {
            if good > 0 {
                f.message = format!("{} (it survived {good} bytes)", f.message);
            }
            f.group = Some("large-request".into());
        }
        self.add(findings);
    }

    /// Sends one request of `bytes` bytes (newline included), then checks liveness; returns
    /// the liveness findings (not yet recorded) when the server did not survive it, after
    /// restarting it.
    async fn large_one(&mut self, bytes: usize) -> Large {
        if !self.announce(&format!("request of {bytes} bytes")) || !self.ensure_session().await {
            return Large::NotRun;
        }
        let Some(session) = self.session.as_mut() else {
            return Large::NotRun;
        };
        let id = session.next_id();
        let frame = session.liveness_frame(&id, Some(json!({"_meta": {PADDING_KEY: ""}})));
        let pad = bytes.saturating_sub(frame.len());
        let frame = padded(frame, pad);
        let window = session.config().timeout;
        let exchanges = session
            .send_many(
                vec![Outgoing::new(
                    Probe::LargeRequest { bytes: frame.len() },
                    frame,
                    vec![id],
                    Duration::ZERO,
                )],
                window,
            )
            .await;
        let ping = session.liveness().await;
        let stderr = session.stderr_tail();
        for ex in &exchanges {
            self.record(ex);
        }
        self.record(&ping);
        let findings =
            crate::oracle::liveness::check(&self.context(), &exchanges[0], &ping, &stderr);
        if findings.is_empty() {
            return Large::Survived;
        }
        self.restart(&format!("server failed after a request of {bytes} bytes"))
            .await;
        Large::Failed(findings)
    }
}

/// How one request of the large-request probe went.
enum Large {
    /// The liveness probe after it found the server alive.
    Survived,
    /// It did not (the liveness findings, not yet recorded).
    Failed(Vec<crate::finding::Finding>),
    /// It was not sent: the run's budget is spent, the campaign gave up, or no server could
    /// be started.
    NotRun,
}

fn call_probe(tool: &str, args: &Value) -> Probe {
    Probe::ToolCall {
        tool: tool.to_owned(),
        arguments: args.clone(),
    }
}

/// When the exchange's answer arrived, in ms after its send.
fn answer_ms(ex: &Exchange) -> Option<u64> {
    match ex.outcome {
        Outcome::Answered { index } => ex.received.get(index).map(|r| r.at_ms),
        _ => None,
    }
}

/// The `_meta` member that carries a large request's padding.
const PADDING_KEY: &str = "mcp-chaos/padding";

/// `frame` (a serialized request whose `_meta` holds `PADDING_KEY: ""`) with `pad` bytes of
/// `x` written into that empty string, built in one allocation of the final size: a 16 MiB
/// request costs 16 MiB, not a padding `String`, a `Value` and a doubling serializer buffer.
/// A frame without the key is returned unchanged.
fn padded(frame: Vec<u8>, pad: usize) -> Vec<u8> {
    let marker = format!("\"{PADDING_KEY}\":\"\"");
    let Some(at) = frame
        .windows(marker.len())
        .position(|w| w == marker.as_bytes())
    else {
        return frame;
    };
    let split = at + marker.len() - 1;
    let mut out = Vec::with_capacity(frame.len() + pad);
    out.extend_from_slice(&frame[..split]);
    out.resize(split + pad, b'x');
    out.extend_from_slice(&frame[split..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_padded_frame_is_the_same_request_with_the_padding_written_in() {
        let id = crate::wire::RequestId::from(7);
        let frame = crate::wire::to_line(&crate::wire::request(
            &id,
            "ping",
            Some(json!({"_meta": {PADDING_KEY: ""}})),
        ));
        let big = padded(frame.clone(), 1000);
        assert_eq!(big.len(), frame.len() + 1000);
        assert_eq!(big.capacity(), big.len());
        let value: serde_json::Value = serde_json::from_slice(&big).unwrap();
        assert_eq!(value["params"]["_meta"][PADDING_KEY], "x".repeat(1000));
        assert_eq!(value["method"], "ping");
        assert!(big.ends_with(b"\n"));
        let plain = crate::wire::to_line(&crate::wire::request(&id, "ping", None));
        assert_eq!(padded(plain.clone(), 1000), plain);
    }
}
