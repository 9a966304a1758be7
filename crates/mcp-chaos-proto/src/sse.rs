//! A strict, incremental reader of `text/event-stream` bodies (the WHATWG HTML "Server-sent
//! events" interpretation rules), part of the wire layer: the Streamable HTTP transport reads
//! server responses through it.
//!
//! It follows the standard's rules for what a client does (line endings CRLF, LF or CR; `:`
//! comments; `field: value` with one leading space stripped; `data` lines joined by `\n`; an
//! event dispatched on a blank line; `retry` only when all digits) and, unlike a lenient client
//! library, it also reports what a conforming client silently loses: an event still open when
//! the stream ends (the standard discards it, so the message in it never arrives), invalid
//! UTF-8, and an `id` containing NUL. Total: never panics on any input (a `cargo fuzz` target).

use std::fmt;

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Event {
    /// The `event` field (empty: the default type, `message`).
    pub event: String,
    /// The `data` lines joined by `\n`.
    pub data: String,
    /// The last `id` seen so far in the stream (the event's id, or an earlier one carried over).
    pub id: Option<String>,
    /// The `retry` field of this event, in ms.
    pub retry: Option<u64>,
}

/// Something a conforming client would silently drop or misread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Anomaly {
    /// The stream ended inside an event (data received after the last blank line): the standard
    /// discards it, so a client never sees that message. Carries the pending data.
    UnterminatedEvent(String),
    /// Bytes that are not UTF-8 (the stream MUST be UTF-8); they were replaced.
    InvalidUtf8,
    /// An `id` field containing NUL, which the standard ignores.
    NulInId,
}

impl fmt::Display for Anomaly {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Anomaly::UnterminatedEvent(data) => write!(
                f,
                "the stream ended inside an event ({} bytes of data after the last blank line), which a client discards",
                data.len()
            ),
            Anomaly::InvalidUtf8 => f.write_str("the stream is not valid UTF-8"),
            Anomaly::NulInId => f.write_str("an id field contains NUL and is ignored"),
        }
    }
}

/// The incremental reader: feed chunks with [`Reader::push`], end with [`Reader::finish`].
#[derive(Debug, Default)]
pub struct Reader {
    pending: Vec<u8>,
    /// Whether the previous chunk ended with a CR (a following LF belongs to it).
    after_cr: bool,
    started: bool,
    data: Option<String>,
    event: String,
    last_id: Option<String>,
    retry: Option<u64>,
    anomalies: Vec<Anomaly>,
    events: usize,
}

impl Reader {
    /// A reader at the start of a stream.
    pub fn new() -> Reader {
        Reader::default()
    }

    /// Feeds bytes; returns the events completed by them. Chunk boundaries do not matter: any
    /// split of a stream (empty chunks included) yields the same events.
    pub fn push(&mut self, mut chunk: &[u8]) -> Vec<Event> {
        let mut out = Vec::new();
        if chunk.is_empty() {
            // Keep `after_cr`: the LF of a CRLF may still come in the next chunk.
            return out;
        }
        if self.after_cr && chunk.first() == Some(&b'\n') {
            chunk = &chunk[1..];
        }
        self.after_cr = false;
        let mut start = 0;
        let mut i = 0;
        while i < chunk.len() {
            let b = chunk[i];
            if b == b'\n' || b == b'\r' {
                self.pending.extend_from_slice(&chunk[start..i]);
                let line = std::mem::take(&mut self.pending);
                if let Some(event) = self.line(&line) {
                    out.push(event);
                }
                if b == b'\r' {
                    if i + 1 < chunk.len() {
                        if chunk[i + 1] == b'\n' {
                            i += 1;
                        }
                    } else {
                        self.after_cr = true;
                    }
                }
                start = i + 1;
            }
            i += 1;
        }
        self.pending.extend_from_slice(&chunk[start..]);
        out
    }

    /// Ends the stream; returns what went wrong in it. An event still open is not dispatched.
    pub fn finish(mut self) -> Vec<Anomaly> {
        if !self.pending.is_empty() {
            let line = std::mem::take(&mut self.pending);
            // A last line without its terminator still counts as a line; without the blank
            // line after it, its event is never dispatched.
            let _ = self.line(&line);
        }
        if let Some(data) = self.data.take() {
            self.anomalies.push(Anomaly::UnterminatedEvent(data));
        }
        self.anomalies
    }

    /// How many events were dispatched.
    pub fn events(&self) -> usize {
        self.events
    }

    /// Bytes held for the event in progress (its unterminated line, its data and its type so
    /// far): what a caller bounds to keep one event from growing without limit.
    pub fn buffered(&self) -> usize {
        self.pending.len() + self.data.as_ref().map_or(0, String::len) + self.event.len()
    }

    fn line(&mut self, raw: &[u8]) -> Option<Event> {
        let mut raw = raw;
        if !self.started {
            self.started = true;
            raw = raw.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(raw);
        }
        let line = match std::str::from_utf8(raw) {
            Ok(s) => s.to_owned(),
            Err(_) => {
                if !self.anomalies.contains(&Anomaly::InvalidUtf8) {
                    self.anomalies.push(Anomaly::InvalidUtf8);
                }
                String::from_utf8_lossy(raw).into_owned()
            }
        };
        if line.is_empty() {
            return self.dispatch();
        }
        if line.starts_with(':') {
            return None;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line.as_str(), ""),
        };
        match field {
            "event" => self.event = value.to_owned(),
            "data" => match self.data.as_mut() {
                Some(data) => {
                    data.push('\n');
                    data.push_str(value);
                }
                None => self.data = Some(value.to_owned()),
            },
            "id" => {
                if value.contains('\0') {
                    self.anomalies.push(Anomaly::NulInId);
                } else {
                    self.last_id = Some(value.to_owned());
                }
            }
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                self.retry = value.parse().ok();
            }
            _ => {}
        }
        None
    }

    fn dispatch(&mut self) -> Option<Event> {
        let data = self.data.take();
        let event = std::mem::take(&mut self.event);
        let retry = self.retry.take();
        match data {
            Some(data) => {
                self.events += 1;
                Some(Event {
                    event,
                    data,
                    id: self.last_id.clone(),
                    retry,
                })
            }
            None => {
                // A blank line after only `id`/`retry` fields dispatches nothing (the standard
                // needs a data buffer); keep the retry for the next event.
                self.retry = retry;
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(chunks: &[&[u8]]) -> (Vec<Event>, Vec<Anomaly>) {
        let mut r = Reader::new();
        let mut events = Vec::new();
        for c in chunks {
            events.extend(r.push(c));
        }
        (events, r.finish())
    }

    #[test]
    fn priming_event_then_message() {
        let (events, anomalies) =
            read(&[b"id: p1\ndata: \n\nevent: message\nid: e2\ndata: {\"a\":1}\n\n"]);
        assert!(anomalies.is_empty());
        assert_eq!(events.len(), 2);
        assert_eq!(events[0].data, "");
        assert_eq!(events[0].id.as_deref(), Some("p1"));
        assert_eq!(events[1].data, "{\"a\":1}");
        assert_eq!(events[1].event, "message");
    }

    #[test]
    fn line_endings_comments_multiline_and_split_chunks() {
        let (events, anomalies) = read(&[
            b": hi\r\ndata: a\r",
            b"\ndata:b\r\rretry: 1500\ndata: c\n",
            b"\n",
        ]);
        assert!(anomalies.is_empty(), "{anomalies:?}");
        assert_eq!(events.len(), 2);
        assert_eq!(events[0].data, "a\nb");
        assert_eq!(events[1].data, "c");
        assert_eq!(events[1].retry, Some(1500));
    }

    /// Found by the `sse_parser` fuzz target (minimised input `data\r\n`): an empty chunk
    /// between the CR and the LF of a CRLF made the LF a second line ending, so a blank line
    /// that was never sent dispatched the event.
    #[test]
    fn empty_chunk_between_cr_and_lf_changes_nothing() {
        let whole = read(&[b"data\r\n"]);
        assert!(whole.0.is_empty());
        assert_eq!(whole.1, [Anomaly::UnterminatedEvent(String::new())]);
        assert_eq!(read(&[b"data\r", b"", b"\n"]), whole);
        let (events, _) = read(&[b"data: {\"a\":\r", b"", b"\ndata: 1}\r", b"", b"\n\r\n"]);
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].data, "{\"a\":\n1}");
    }

    #[test]
    fn buffered_counts_the_event_in_progress() {
        let mut r = Reader::new();
        assert!(r.push(b"event: message\ndata: 12345").is_empty());
        assert_eq!(r.buffered(), "message".len() + "data: 12345".len());
        assert!(r.push(b"\ndata: 678").is_empty());
        assert_eq!(
            r.buffered(),
            "12345".len() + "data: 678".len() + "message".len()
        );
        assert_eq!(r.push(b"\n\n").len(), 1);
        assert_eq!(r.buffered(), 0);
    }

    #[test]
    fn unterminated_event_and_bad_bytes_are_reported() {
        let (events, anomalies) = read(&[b"data: {\"jsonrpc\""]);
        assert!(events.is_empty());
        assert!(matches!(anomalies[0], Anomaly::UnterminatedEvent(_)));
        let (_, anomalies) = read(&[b"data: \xff\n\n"]);
        assert_eq!(anomalies, [Anomaly::InvalidUtf8]);
        // A stream that ends right after a complete event is fine.
        let (events, anomalies) = read(&[b"data: x\n\n"]);
        assert_eq!((events.len(), anomalies.len()), (1, 0));
    }
}
