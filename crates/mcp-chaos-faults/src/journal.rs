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
    /// Which of its rule's matched requests this was, from 1 (`Some(2)`: the second request
    /// the rule matched since it was installed); `None` if no rule matched. This is the count
    /// the rule's [`Schedule`](crate::Schedule) decided on.
    pub rule_match: Option<u64>,
    /// Whether the matched rule's schedule fired, so that the rule's fault was served; `false`
    /// when the rule served its healthy response or no rule matched. (A fired `delay` is not
    /// a [`failure`](JournalEntry::failure), and an unmatched request may still fail when the
    /// server's unmatched response is a failure.)
    pub faulted: bool,
    /// What was actually served (the healthy response when the schedule did not fire).
    pub fault: Fault,
    /// Whether the client experiences the response as a failure
    /// ([`Fault::is_failure`] of [`fault`](JournalEntry::fault)).
    pub failure: bool,
    /// Extra facts, e.g. why a pass-through was refused or which origin answered.
    pub note: Option<String>,
}

impl JournalEntry {
    /// What the client got, in a few words: the HTTP status and the fault's name when there
    /// was a status (`"503 unavailable"`, `"200 ok"`, `"200 truncated-body"`), else the
    /// fault's name and what it means (`"hang (no response)"`, `"reset (connection reset)"`,
    /// `"close-before-headers (connection closed)"`).
    pub fn outcome(&self) -> String {
        let name = self.fault.name();
        match (self.fault.http_status(), &self.fault) {
            (Some(status), _) => format!("{status} {name}"),
            (None, Fault::Hang) => format!("{name} (no response)"),
            (None, Fault::Reset) => format!("{name} (connection reset)"),
            (None, Fault::CloseBeforeHeaders) => format!("{name} (connection closed)"),
            (None, _) => name.to_owned(),
        }
    }

    /// The request path without the query (`/v1/items` of `/v1/items?page=2`): what a
    /// path-scoped fault ([`Scope::on_path`](crate::Scope::on_path)) is compared with. For a
    /// `CONNECT`, the `host:port` authority.
    pub fn path(&self) -> &str {
        match self.target.split_once('?') {
            Some((path, _)) => path,
            None => &self.target,
        }
    }

    /// The value of a recorded header (case-insensitive name).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Tells what each request in `entries` got, in order, as one clause a finding can quote:
///
/// `the first request (GET /robots.txt) got 503 unavailable, the second (GET /data?id=1) 200 ok`
///
/// Requests are counted from the first entry given (pass [`Journal::since`] a mark taken
/// before the tool call), `CONNECT` targets are shown as recorded, and a fault served by a
/// named rule says so (`… got 503 unavailable from rule "robots"`). Returns `"no request"`
/// for an empty slice.
pub fn describe_requests(entries: &[JournalEntry]) -> String {
    if entries.is_empty() {
        return "no request".to_owned();
    }
    let clauses: Vec<String> = entries
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let which = if i == 0 {
                format!("the {} request", ordinal(1))
            } else {
                format!("the {}", ordinal(i as u64 + 1))
            };
            let verb = if i == 0 { "got " } else { "" };
            let by = match (&e.rule_name, e.faulted) {
                (Some(name), true) => format!(" from rule {name:?}"),
                _ => String::new(),
            };
            format!(
                "{which} ({} {}) {verb}{}{by}",
                e.method,
                e.target,
                e.outcome()
            )
        })
        .collect();
    clauses.join(", ")
}

/// `first`, `second`, … `tenth`, then `11th`, `12th`, `21st`, ….
pub(crate) fn ordinal(n: u64) -> String {
    const WORDS: [&str; 10] = [
        "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth",
        "tenth",
    ];
    if (1..=10).contains(&n) {
        return WORDS[(n - 1) as usize].to_owned();
    }
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
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
            rule_match: None,
            faulted: false,
            fault: Fault::NotFound,
            failure: true,
            note: None,
        }
    }

    #[test]
    fn describe_requests_tells_what_each_request_got() {
        let mut robots = entry("GET");
        robots.target = "/robots.txt".into();
        robots.fault = Fault::Unavailable;
        robots.rule_index = Some(0);
        robots.rule_name = Some("robots".into());
        robots.rule_match = Some(1);
        robots.faulted = true;
        let mut data = entry("GET");
        data.target = "/data?id=1".into();
        data.fault = Fault::ok_default();
        let mut hung = entry("POST");
        hung.target = "/slow".into();
        hung.fault = Fault::Hang;
        assert_eq!(
            describe_requests(&[robots, data, hung]),
            "the first request (GET /robots.txt) got 503 unavailable from rule \"robots\", \
             the second (GET /data?id=1) 200 ok, the third (POST /slow) hang (no response)"
        );
        assert_eq!(describe_requests(&[]), "no request");
        let mut query = entry("GET");
        query.target = "/data?id=1&x=?".into();
        assert_eq!(query.path(), "/data");
        assert_eq!(entry("GET").path(), "/");
        let words: Vec<String> = [1, 2, 10, 11, 12, 13, 21, 22, 23, 101, 111]
            .map(ordinal)
            .into();
        assert_eq!(
            words,
            [
                "first", "second", "tenth", "11th", "12th", "13th", "21st", "22nd", "23rd",
                "101st", "111th"
            ]
        );
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
