//! The journal: every request a fault injector received and what it served.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::watch;

use crate::fault::Fault;

/// Headers recorded in [`JournalEntry::headers`] unless the builder adds more.
pub const DEFAULT_JOURNAL_HEADERS: &[&str] = &[
    "host",
    "user-agent",
    "content-type",
    "accept",
    "authorization",
    "x-api-key",
    "idempotency-key",
    "x-request-id",
    "traceparent",
    "proxy-authorization",
];

/// How many entries a journal keeps by default before dropping the oldest.
pub const DEFAULT_JOURNAL_CAPACITY: usize = 100_000;

/// One request received by a fault injector.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct JournalEntry {
    /// Position in the journal, from 0, never reused (also not after [`Journal::drain`]).
    pub seq: u64,
    /// When the request's head arrived, in milliseconds since the server started.
    pub at_ms: u64,
    /// HTTP method, e.g. `"GET"` or `"CONNECT"`.
    pub method: String,
    /// Target host without port: the host of an absolute-form (proxy) request, the
    /// authority of a `CONNECT`, or the `Host` header; `None` if there was none.
    pub host: Option<String>,
    /// Path and query (`/v1/items?page=2`); for `CONNECT`, the `host:port` authority.
    pub target: String,
    /// The request headers of interest (see [`DEFAULT_JOURNAL_HEADERS`]) that were
    /// present: lower-case names, values decoded lossily as UTF-8, ordered as the list
    /// of recorded headers (repeated headers keep their relative order). Values are
    /// recorded verbatim, credentials included: they are the harness's own test secrets.
    pub headers: Vec<(String, String)>,
    /// Size of the request body, in bytes.
    pub body_bytes: u64,
    /// Index of the rule that matched, in plan order; `None` if no rule matched.
    pub rule_index: Option<usize>,
    /// Name of the matched rule, if it has one.
    pub rule_name: Option<String>,
    /// What was actually served (the healthy response when the schedule did not fire).
    pub fault: Fault,
    /// Whether the client experiences the response as a failure
    /// ([`Fault::is_failure`] of [`fault`](JournalEntry::fault)).
    pub failure: bool,
    /// Extra facts, e.g. why a pass-through was refused or which origin answered.
    pub note: Option<String>,
}

impl JournalEntry {
    /// The value of a recorded header (case-insensitive name).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// A position in a journal; [`Journal::since`] returns what was recorded after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct JournalMark(u64);

impl JournalMark {
    /// The sequence number the next entry will get.
    pub fn seq(self) -> u64 {
        self.0
    }
}

#[derive(Debug)]
struct Inner {
    entries: Mutex<Entries>,
    recorded: watch::Sender<u64>,
}

#[derive(Debug)]
struct Entries {
    queue: VecDeque<JournalEntry>,
    next_seq: u64,
    capacity: usize,
}

/// A shared, cheaply clonable handle on a fault injector's request log.
///
/// Entries are recorded as soon as a request's body has been read and its fault decided,
/// *before* the fault is served, so a request that hangs is already in the journal.
/// A harness takes a [`mark`](Journal::mark) before a tool call and reads
/// [`since`](Journal::since) afterwards to see exactly which upstream requests the call
/// caused.
///
/// The journal keeps at most its capacity (default [`DEFAULT_JOURNAL_CAPACITY`]) of
/// entries, dropping the oldest.
#[derive(Debug, Clone)]
pub struct Journal {
    inner: Arc<Inner>,
}

impl Journal {
    pub(crate) fn new(capacity: usize) -> Journal {
        Journal {
            inner: Arc::new(Inner {
                entries: Mutex::new(Entries {
                    queue: VecDeque::new(),
                    next_seq: 0,
                    capacity: capacity.max(1),
                }),
                recorded: watch::Sender::new(0),
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Entries> {
        self.inner
            .entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Records an entry, assigning its `seq`.
    pub(crate) fn record(&self, mut entry: JournalEntry) -> u64 {
        let seq = {
            let mut e = self.lock();
            let seq = e.next_seq;
            e.next_seq += 1;
            entry.seq = seq;
            if e.queue.len() >= e.capacity {
                e.queue.pop_front();
            }
            e.queue.push_back(entry);
            seq
        };
        self.inner.recorded.send_replace(seq + 1);
        seq
    }

    /// A mark at the current end of the journal.
    pub fn mark(&self) -> JournalMark {
        JournalMark(self.lock().next_seq)
    }

    /// A copy of every retained entry, oldest first.
    pub fn entries(&self) -> Vec<JournalEntry> {
        self.lock().queue.iter().cloned().collect()
    }

    /// A copy of the retained entries recorded at or after `mark`, oldest first.
    pub fn since(&self, mark: JournalMark) -> Vec<JournalEntry> {
        self.lock()
            .queue
            .iter()
            .filter(|e| e.seq >= mark.0)
            .cloned()
            .collect()
    }

    /// Removes and returns every retained entry. Sequence numbers keep counting.
    pub fn drain(&self) -> Vec<JournalEntry> {
        self.lock().queue.drain(..).collect()
    }

    /// Number of retained entries.
    pub fn len(&self) -> usize {
        self.lock().queue.len()
    }

    /// Whether no entries are retained.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Total number of requests ever recorded, including drained and dropped ones.
    pub fn total_recorded(&self) -> u64 {
        self.lock().next_seq
    }

    /// Waits until at least `count` entries have been recorded since `mark`, or until
    /// `timeout` passes, and returns the entries since `mark` (possibly fewer than
    /// `count` on timeout).
    pub async fn wait_for(
        &self,
        mark: JournalMark,
        count: usize,
        timeout: Duration,
    ) -> Vec<JournalEntry> {
        let target = mark.0.saturating_add(count as u64);
        let mut rx = self.inner.recorded.subscribe();
        let _ = tokio::time::timeout(timeout, rx.wait_for(|n| *n >= target)).await;
        self.since(mark)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(method: &str) -> JournalEntry {
        JournalEntry {
            seq: 0,
            at_ms: 0,
            method: method.to_owned(),
            host: None,
            target: "/".to_owned(),
            headers: vec![("x-api-key".to_owned(), "k".to_owned())],
            body_bytes: 0,
            rule_index: None,
            rule_name: None,
            fault: Fault::NotFound,
            failure: true,
            note: None,
        }
    }

    #[tokio::test]
    async fn marks_since_drain_and_capacity() {
        let j = Journal::new(3);
        j.record(entry("A"));
        let m = j.mark();
        assert_eq!(m.seq(), 1);
        j.record(entry("B"));
        j.record(entry("C"));
        let since: Vec<_> = j.since(m).into_iter().map(|e| e.method).collect();
        assert_eq!(since, ["B", "C"]);
        j.record(entry("D"));
        let all: Vec<_> = j.entries().into_iter().map(|e| (e.seq, e.method)).collect();
        assert_eq!(
            all,
            [
                (1, "B".to_owned()),
                (2, "C".to_owned()),
                (3, "D".to_owned())
            ]
        );
        assert_eq!(j.entries()[0].header("X-API-KEY"), Some("k"));
        assert_eq!(j.drain().len(), 3);
        assert!(j.is_empty());
        assert_eq!(j.total_recorded(), 4);
        let m = j.mark();
        let j2 = j.clone();
        let waiter = tokio::spawn(async move { j2.wait_for(m, 2, Duration::from_secs(5)).await });
        j.record(entry("E"));
        j.record(entry("F"));
        let got = waiter.await.expect("join");
        assert_eq!(got.len(), 2);
        assert_eq!(got[1].seq, 5);
        let none = j.wait_for(j.mark(), 1, Duration::from_millis(10)).await;
        assert!(none.is_empty());
    }
}
