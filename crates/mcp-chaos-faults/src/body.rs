//! Response bodies that can dribble, stream huge payloads, or cut the connection.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};
use tokio::sync::mpsc;
use tokio::time::Sleep;

/// The smallest huge body: the JSON framing `{"data":"` + `"}` plus one filler byte.
pub(crate) const HUGE_MIN_BYTES: u64 = 12;
const HUGE_HEAD: &[u8] = b"{\"data\":\"";
const HUGE_TAIL: &[u8] = b"\"}";
const FILLER_LEN: usize = 64 * 1024;
static FILLER: [u8; FILLER_LEN] = [b'x'; FILLER_LEN];

/// What the connection driver must do to the socket.
pub(crate) enum ConnAction {
    /// Abort with a TCP RST once pending bytes are flushed.
    Reset,
    /// Close with FIN once pending bytes are flushed.
    Close,
    /// After the response is written and the connection upgraded, run this job (the
    /// CONNECT tunnel) inside the connection task.
    Then(Pin<Box<dyn Future<Output = ()> + Send>>),
}

impl std::fmt::Debug for ConnAction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ConnAction::Reset => "Reset",
            ConnAction::Close => "Close",
            ConnAction::Then(_) => "Then(..)",
        })
    }
}

/// Sender half used by services and bodies to ask the connection driver for an action.
pub(crate) type ConnControl = mpsc::UnboundedSender<ConnAction>;

/// Error type of [`FaultBody`]; it never actually errors.
pub(crate) type BodyError = Box<dyn std::error::Error + Send + Sync>;

/// A response body.
#[derive(Debug)]
pub(crate) enum FaultBody {
    /// A complete body, sent at once.
    Full(Option<Bytes>),
    /// A body sent `chunk` bytes at a time with `interval` between chunks.
    Dribble {
        data: Bytes,
        chunk: usize,
        interval: Duration,
        sleep: Option<Pin<Box<Sleep>>>,
        started: bool,
    },
    /// `{"data":"xxxx…"}` of exactly `total` bytes, generated on the fly.
    Huge { total: u64, sent: u64 },
    /// Send `data`, then ask the connection driver for `action` and never finish.
    Cut {
        data: Option<Bytes>,
        action: Option<ConnAction>,
        control: ConnControl,
    },
}

impl FaultBody {
    pub(crate) fn full(data: impl Into<Bytes>) -> FaultBody {
        FaultBody::Full(Some(data.into()))
    }

    pub(crate) fn empty() -> FaultBody {
        FaultBody::Full(None)
    }

    pub(crate) fn dribble(data: Bytes, chunk: usize, interval: Duration) -> FaultBody {
        FaultBody::Dribble {
            data,
            chunk: chunk.max(1),
            interval,
            sleep: None,
            started: false,
        }
    }

    pub(crate) fn huge(total: u64) -> FaultBody {
        FaultBody::Huge {
            total: total.max(HUGE_MIN_BYTES),
            sent: 0,
        }
    }

    pub(crate) fn cut(data: Bytes, action: ConnAction, control: ConnControl) -> FaultBody {
        FaultBody::Cut {
            data: (!data.is_empty()).then_some(data),
            action: Some(action),
            control,
        }
    }
}

fn huge_chunk(total: u64, sent: u64) -> Option<Bytes> {
    let head = HUGE_HEAD.len() as u64;
    let tail_start = total - HUGE_TAIL.len() as u64;
    if sent >= total {
        None
    } else if sent < head {
        Some(Bytes::from_static(HUGE_HEAD))
    } else if sent < tail_start {
        let n = (tail_start - sent).min(FILLER_LEN as u64) as usize;
        Some(Bytes::from_static(&FILLER[..n]))
    } else {
        Some(Bytes::from_static(HUGE_TAIL))
    }
}

impl Body for FaultBody {
    type Data = Bytes;
    type Error = BodyError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BodyError>>> {
        match self.get_mut() {
            FaultBody::Full(data) => Poll::Ready(data.take().map(|d| Ok(Frame::data(d)))),
            FaultBody::Dribble {
                data,
                chunk,
                interval,
                sleep,
                started,
            } => loop {
                if data.is_empty() {
                    return Poll::Ready(None);
                }
                if let Some(s) = sleep {
                    match s.as_mut().poll(cx) {
                        Poll::Ready(()) => *sleep = None,
                        Poll::Pending => return Poll::Pending,
                    }
                } else if *started {
                    *sleep = Some(Box::pin(tokio::time::sleep(*interval)));
                    continue;
                }
                *started = true;
                let n = (*chunk).min(data.len());
                return Poll::Ready(Some(Ok(Frame::data(data.split_to(n)))));
            },
            FaultBody::Huge { total, sent } => match huge_chunk(*total, *sent) {
                Some(c) => {
                    *sent += c.len() as u64;
                    Poll::Ready(Some(Ok(Frame::data(c))))
                }
                None => Poll::Ready(None),
            },
            FaultBody::Cut {
                data,
                action,
                control,
            } => {
                if let Some(d) = data.take() {
                    return Poll::Ready(Some(Ok(Frame::data(d))));
                }
                if let Some(a) = action.take() {
                    // The driver acts after hyper has flushed what it already holds.
                    let _ = control.send(a);
                }
                Poll::Pending
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            FaultBody::Full(d) => d.is_none(),
            FaultBody::Dribble { data, .. } => data.is_empty(),
            FaultBody::Huge { total, sent } => sent >= total,
            FaultBody::Cut { .. } => false,
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            FaultBody::Full(d) => SizeHint::with_exact(d.as_ref().map_or(0, |d| d.len() as u64)),
            FaultBody::Dribble { data, .. } => SizeHint::with_exact(data.len() as u64),
            FaultBody::Huge { total, sent } => SizeHint::with_exact(total.saturating_sub(*sent)),
            // The response carries an explicit Content-Length that the body never reaches.
            FaultBody::Cut { .. } => SizeHint::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    #[tokio::test]
    async fn huge_body_is_exact_valid_json() {
        for total in [HUGE_MIN_BYTES, 13, 100, FILLER_LEN as u64 * 2 + 5] {
            let bytes = FaultBody::huge(total)
                .collect()
                .await
                .expect("collect")
                .to_bytes();
            assert_eq!(bytes.len() as u64, total);
            let v: serde_json::Value = serde_json::from_slice(&bytes).expect("json");
            assert!(v["data"].is_string());
        }
    }

    #[tokio::test(start_paused = true)]
    async fn dribble_sends_chunks_with_pauses() {
        let start = tokio::time::Instant::now();
        let mut body = FaultBody::dribble(
            Bytes::from_static(b"abcdefg"),
            3,
            Duration::from_millis(100),
        );
        let mut chunks = Vec::new();
        while let Some(frame) = body.frame().await {
            let data = frame.expect("frame").into_data().expect("data");
            chunks.push((data, start.elapsed().as_millis()));
        }
        let got: Vec<_> = chunks.iter().map(|(d, _)| d.as_ref().to_vec()).collect();
        assert_eq!(got, [b"abc".to_vec(), b"def".to_vec(), b"g".to_vec()]);
        assert_eq!(chunks[0].1, 0);
        assert!(chunks[2].1 >= 200);
    }
}
