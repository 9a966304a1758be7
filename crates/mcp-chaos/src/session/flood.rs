//! Floods of unsolicited messages: how the session measures the rate of the server's
//! notifications and server-to-client requests, when it calls that rate a flood, and how it
//! keeps its own memory and time bounded whatever the server sends.
//!
//! - **Recording is bounded per exchange.** An exchange keeps at most
//!   [`KEPT_PER_EXCHANGE`] unsolicited messages (notifications and server-to-client
//!   requests); the rest are counted, by kind, in one [`Dropped`] item at its end.
//! - **Rates are measured in windows** of [`FLOOD_WINDOW`] (tumbling: counts restart when a
//!   window is over). Progress notifications count per request: only the busiest
//!   `progressToken`'s count toward a flood, so that several calls in flight at once, each
//!   reporting progress at a modest rate, are not taken for one flooding call. A window is a flood when the server sent at least the threshold
//!   ([`NOTIFICATION_FLOOD`] notifications, [`REQUEST_FLOOD`] requests) *and* that many times
//!   more than the requests mcp-chaos itself sent in the window ([`NOTIFICATIONS_PER_REQUEST`],
//!   [`REQUESTS_PER_REQUEST`]), so that a server which logs or samples for every call of a
//!   fast campaign is not called a flooder. The first flooded window of a session becomes one
//!   [`Flood`] item (judged by `notification-flood` and `server-request-flood`).
//! - **Server-to-client requests are throttled**: in a window, the first [`REQUEST_FLOOD`]
//!   requests are answered as usual; later ones are left unanswered and counted (answering a
//!   flood only feeds it: against a server that sends requests in a loop, leaving them
//!   unanswered made the campaign three times faster than refusing each with an error).
//!   Replies are queued without waiting; when the write queue is full a reply is dropped and
//!   counted.
//!
//! A real server that logs a few lines or asks for `roots/list` once at start is far below
//! every threshold: 2 000 notifications or 200 requests in 2 s, each at 100 (notifications)
//! or 20 (requests) times the client's own request rate.

pub use mcp_chaos_model::report::Dropped;
use std::time::{Duration, Instant};

use serde::Serialize;

/// The length of a measuring window.
pub const FLOOD_WINDOW: Duration = Duration::from_secs(2);
/// Notifications in one window from which a flood is possible.
pub const NOTIFICATION_FLOOD: u64 = 2_000;
/// Server-to-client requests in one window from which a flood is possible; also how many are
/// answered normally per window.
pub const REQUEST_FLOOD: u64 = 200;
/// A notification flood also needs this many notifications per request mcp-chaos sent in the
/// window (plus one).
pub const NOTIFICATIONS_PER_REQUEST: u64 = 100;
/// A request flood also needs this many server requests per request mcp-chaos sent in the
/// window (plus one).
pub const REQUESTS_PER_REQUEST: u64 = 20;
/// Unsolicited messages (notifications, server-to-client requests) kept in one exchange; the
/// rest are counted in a [`Dropped`] item.
pub const KEPT_PER_EXCHANGE: usize = 256;
/// Distinct method names counted per window; others are counted as `(other)`.
const METHODS_KEPT: usize = 8;
/// Bytes of a flooding message kept as a sample.
const SAMPLE_BYTES: usize = 600;
/// Distinct progress tokens counted per window.
const TOKENS_KEPT: usize = 64;

/// Which kind of unsolicited message flooded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FloodKind {
    /// Notifications (any method; `notifications/message` is the logging one).
    Notifications,
    /// Server-to-client requests (`sampling/createMessage`, `roots/list`, `elicitation/create`,
    /// `ping`, or any other method).
    ServerRequests,
}

/// A flooded window, as measured: recorded once per session and kind, in the exchange during
/// which the threshold was crossed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Flood {
    /// What flooded: notifications, or server-to-client requests.
    pub kind: FloodKind,
    /// Messages of that kind in the window when the threshold was crossed.
    pub count: u64,
    /// How long the window had run then, in ms (at most [`FLOOD_WINDOW`]).
    pub elapsed_ms: u64,
    /// Requests mcp-chaos sent in the window.
    pub client_requests: u64,
    /// Messages per method in the window, most frequent first.
    pub methods: Vec<(String, u64)>,
    /// The first bytes of the message that crossed the threshold.
    pub sample: Vec<u8>,
    /// The `progressToken` (as JSON text) of the request whose progress notifications made
    /// most of the flood, when progress did; the flood is that request's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
}

impl Flood {
    /// The method with the most messages in the window.
    pub fn top_method(&self) -> &str {
        self.methods.first().map_or("", |(m, _)| m.as_str())
    }

    /// The rate in the window, in messages per second.
    pub fn per_second(&self) -> u64 {
        self.count * 1000 / self.elapsed_ms.max(1)
    }
}

/// One kind's counts in the current window.
#[derive(Debug)]
struct Window {
    start: Instant,
    count: u64,
    methods: Vec<(String, u64)>,
    /// Progress notifications in the window, in all and per `progressToken` (JSON text;
    /// at most [`TOKENS_KEPT`], later tokens counted together as `(other)`).
    progress: u64,
    tokens: Vec<(String, u64)>,
}

impl Window {
    fn new(now: Instant) -> Window {
        Window {
            start: now,
            count: 0,
            methods: Vec::new(),
            progress: 0,
            tokens: Vec::new(),
        }
    }

    /// Counts a progress notification of request `token`.
    fn add_progress(&mut self, token: &str) {
        self.progress += 1;
        if let Some((_, n)) = self.tokens.iter_mut().find(|(t, _)| t == token) {
            *n += 1;
        } else if self.tokens.len() < TOKENS_KEPT {
            self.tokens.push((token.to_owned(), 1));
        } else if let Some((_, n)) = self.tokens.iter_mut().find(|(t, _)| t == "(other)") {
            *n += 1;
        } else if let Some(last) = self.tokens.last_mut() {
            *last = ("(other)".to_owned(), last.1 + 1);
        }
    }

    /// The busiest progress token and its count.
    fn top_token(&self) -> Option<&(String, u64)> {
        self.tokens.iter().max_by_key(|(_, n)| *n)
    }

    /// What counts toward a flood: every message but progress, plus the busiest request's
    /// progress.
    fn flood_count(&self) -> u64 {
        self.count - self.progress + self.top_token().map_or(0, |(_, n)| *n)
    }

    fn add(&mut self, method: &str) {
        self.count += 1;
        if let Some((_, n)) = self.methods.iter_mut().find(|(m, _)| m == method) {
            *n += 1;
        } else if self.methods.len() < METHODS_KEPT {
            self.methods.push((method.to_owned(), 1));
        } else if let Some((_, n)) = self.methods.iter_mut().find(|(m, _)| m == "(other)") {
            *n += 1;
        } else if let Some(last) = self.methods.last_mut() {
            // The table is full of named methods: fold the last one into `(other)`.
            *last = ("(other)".to_owned(), last.1 + 1);
        }
    }
}

/// What to do with a server-to-client request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// Answer it as usual (roots, sampling, elicitation, ping).
    Normally,
    /// Leave it unanswered (counted): the window's budget of answers is spent.
    Throttle,
}

/// The session's rate meter (see the module docs). Pure bookkeeping: the caller passes the
/// time, so that it is testable.
#[derive(Debug)]
pub struct FloodMeter {
    notifications: Window,
    requests: Window,
    client: Window,
    notification_flood: bool,
    request_flood: bool,
    /// What the current exchange dropped.
    dropped: Dropped,
    /// Unsolicited messages kept by the current exchange.
    kept: usize,
    /// Totals over the session.
    totals: Dropped,
}

impl FloodMeter {
    /// A meter whose first windows start at `now`.
    pub fn new(now: Instant) -> FloodMeter {
        FloodMeter {
            notifications: Window::new(now),
            requests: Window::new(now),
            client: Window::new(now),
            notification_flood: false,
            request_flood: false,
            dropped: Dropped::default(),
            kept: 0,
            totals: Dropped::default(),
        }
    }

    fn roll(&mut self, now: Instant) {
        for w in [
            &mut self.notifications,
            &mut self.requests,
            &mut self.client,
        ] {
            if now.duration_since(w.start) >= FLOOD_WINDOW {
                *w = Window::new(now);
            }
        }
    }

    /// Counts a request (or any frame) mcp-chaos sent.
    pub fn client_sent(&mut self, now: Instant) {
        self.roll(now);
        self.client.count += 1;
    }

    /// Starts a new exchange: its keep budget is full again.
    pub fn start_exchange(&mut self) {
        self.kept = 0;
        self.dropped = Dropped::default();
    }

    /// Gives the next request of a batch (several in flight at once) a full keep budget, as a
    /// request of its own exchange has: the messages kept in a batch are at most
    /// [`KEPT_PER_EXCHANGE`] per request sent, so that a long batch does not start dropping
    /// the progress notifications its calls' deadlines depend on.
    pub fn renew_keep(&mut self) {
        self.kept = 0;
    }

    /// Ends the exchange: what it dropped, if anything.
    pub fn end_exchange(&mut self) -> Option<Dropped> {
        let dropped = std::mem::take(&mut self.dropped);
        self.kept = 0;
        (!dropped.is_empty()).then_some(dropped)
    }

    /// What the whole session dropped or throttled so far.
    pub fn totals(&self) -> Dropped {
        self.totals
    }

    /// Whether the current exchange may keep one more unsolicited message; counts it as
    /// dropped otherwise.
    fn keep(&mut self, kind: FloodKind) -> bool {
        if self.kept < KEPT_PER_EXCHANGE {
            self.kept += 1;
            return true;
        }
        match kind {
            FloodKind::Notifications => {
                self.dropped.notifications += 1;
                self.totals.notifications += 1;
            }
            FloodKind::ServerRequests => {
                self.dropped.requests += 1;
                self.totals.requests += 1;
            }
        }
        false
    }

    /// Counts a notification of `method` (raw frame `raw`; `progress_token`, as JSON text,
    /// for `notifications/progress`) at `now`. Returns whether the exchange keeps it, and the
    /// [`Flood`] when this notification made the session's first flooded window.
    pub fn notification(
        &mut self,
        method: &str,
        progress_token: Option<&str>,
        raw: &[u8],
        now: Instant,
    ) -> (bool, Option<Flood>) {
        self.roll(now);
        self.notifications.add(method);
        if method == "notifications/progress" {
            self.notifications
                .add_progress(progress_token.unwrap_or(""));
        }
        let flood = (!self.notification_flood
            && crossed(
                &self.notifications,
                &self.client,
                NOTIFICATION_FLOOD,
                NOTIFICATIONS_PER_REQUEST,
            ))
        .then(|| {
            self.notification_flood = true;
            flood(
                FloodKind::Notifications,
                &self.notifications,
                &self.client,
                raw,
                now,
            )
        });
        (self.keep(FloodKind::Notifications), flood)
    }

    /// Counts a server-to-client request of `method` at `now`. Returns how to answer it,
    /// whether the exchange keeps it, and the [`Flood`] when it made the session's first
    /// flooded window.
    pub fn request(
        &mut self,
        method: &str,
        raw: &[u8],
        now: Instant,
    ) -> (Answer, bool, Option<Flood>) {
        self.roll(now);
        self.requests.add(method);
        let flood = (!self.request_flood
            && crossed(
                &self.requests,
                &self.client,
                REQUEST_FLOOD,
                REQUESTS_PER_REQUEST,
            ))
        .then(|| {
            self.request_flood = true;
            flood(
                FloodKind::ServerRequests,
                &self.requests,
                &self.client,
                raw,
                now,
            )
        });
        let answer = if self.requests.count > REQUEST_FLOOD {
            self.dropped.throttled += 1;
            self.totals.throttled += 1;
            Answer::Throttle
        } else {
            Answer::Normally
        };
        (answer, self.keep(FloodKind::ServerRequests), flood)
    }

    /// Whether the current window is a notification flood (the session then lets the
    /// transport drop the flood's lines unparsed).
    pub fn notifications_flooded(&self) -> bool {
        crossed(
            &self.notifications,
            &self.client,
            NOTIFICATION_FLOOD,
            NOTIFICATIONS_PER_REQUEST,
        )
    }

    /// Counts a message the exchange kept as dropped after all (a [`Flood`] item took its
    /// place).
    pub fn unkeep(&mut self, kind: FloodKind) {
        self.kept = self.kept.saturating_sub(1);
        match kind {
            FloodKind::Notifications => {
                self.dropped.notifications += 1;
                self.totals.notifications += 1;
            }
            FloodKind::ServerRequests => {
                self.dropped.requests += 1;
                self.totals.requests += 1;
            }
        }
    }

    /// Counts `n` notifications the transport dropped unparsed (see [`line_prefix`]).
    pub fn skipped(&mut self, n: u64) {
        self.dropped.notifications += n;
        self.totals.notifications += n;
    }

    /// Counts a reply that could not be queued.
    pub fn unanswered(&mut self) {
        self.dropped.unanswered += 1;
        self.totals.unanswered += 1;
    }
}

/// The bytes a flooding notification line starts with, up to and including its method string
/// (`{"jsonrpc":"2.0","method":"notifications/message"`): once a flood is recognised, the
/// stdio reader drops lines with this start unparsed (and counts them). `None` unless the
/// line is an object whose members before the method are not an `id` (so that a request or
/// response can never match).
pub fn line_prefix(raw: &[u8], method: &str) -> Option<Vec<u8>> {
    let quoted = serde_json::to_vec(method).ok()?;
    let at = raw
        .windows(quoted.len())
        .position(|w| w == quoted.as_slice())?;
    let prefix = &raw[..at + quoted.len()];
    let head = &prefix[..at];
    let has = |needle: &[u8]| head.windows(needle.len()).any(|w| w == needle);
    (prefix.first() == Some(&b'{') && has(b"\"method\"") && !has(b"\"id\"") && at < 200)
        .then(|| prefix.to_vec())
}

fn crossed(w: &Window, client: &Window, threshold: u64, per_request: u64) -> bool {
    let count = w.flood_count();
    count >= threshold && count >= per_request.saturating_mul(client.count + 1)
}

fn flood(kind: FloodKind, w: &Window, client: &Window, raw: &[u8], now: Instant) -> Flood {
    let mut methods = w.methods.clone();
    methods.sort_by_key(|m| std::cmp::Reverse(m.1));
    let progress_led = w.progress * 2 > w.count;
    Flood {
        kind,
        count: w.flood_count(),
        elapsed_ms: u64::try_from(now.duration_since(w.start).as_millis()).unwrap_or(u64::MAX),
        client_requests: client.count,
        methods,
        sample: raw[..raw.len().min(SAMPLE_BYTES)].to_vec(),
        token: progress_led
            .then(|| w.top_token().map(|(t, _)| t.clone()))
            .flatten(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &[u8] = br#"{"jsonrpc":"2.0","method":"notifications/message","params":{}}"#;

    #[test]
    fn a_flood_is_reported_once_and_recording_stays_bounded() {
        let t0 = Instant::now();
        let mut m = FloodMeter::new(t0);
        m.start_exchange();
        let mut floods = Vec::new();
        let mut kept = 0;
        for i in 0..100_000u64 {
            // 100 000 notifications in one second.
            let now = t0 + Duration::from_micros(i * 10);
            let (keep, flood) = m.notification("notifications/message", None, LOG, now);
            kept += usize::from(keep);
            floods.extend(flood);
        }
        assert_eq!(kept, KEPT_PER_EXCHANGE);
        assert_eq!(floods.len(), 1, "{floods:?}");
        let f = &floods[0];
        assert_eq!(f.kind, FloodKind::Notifications);
        assert_eq!(f.count, NOTIFICATION_FLOOD);
        assert_eq!(f.top_method(), "notifications/message");
        assert!(f.per_second() >= 50_000, "{}", f.per_second());
        let dropped = m.end_exchange().expect("drops counted");
        assert_eq!(dropped.notifications, 100_000 - KEPT_PER_EXCHANGE as u64);
        assert_eq!(m.totals().notifications, dropped.notifications);
        // The next exchange keeps its own budget.
        m.start_exchange();
        let (keep, flood) =
            m.notification("notifications/message", None, LOG, t0 + FLOOD_WINDOW * 3);
        assert!(keep && flood.is_none());
        assert_eq!(m.end_exchange(), None);
    }

    #[test]
    fn a_few_logs_and_one_roots_list_are_no_flood() {
        let t0 = Instant::now();
        let mut m = FloodMeter::new(t0);
        m.start_exchange();
        let (answer, keep, flood) = m.request("roots/list", b"{}", t0);
        assert_eq!((answer, keep, flood), (Answer::Normally, true, None));
        for i in 0..50u64 {
            let (keep, flood) = m.notification(
                "notifications/message",
                None,
                LOG,
                t0 + Duration::from_millis(i),
            );
            assert!(keep && flood.is_none());
        }
        assert_eq!(m.end_exchange(), None);
    }

    #[test]
    fn logging_in_proportion_to_a_fast_campaign_is_no_flood() {
        // 60 notifications per client request, 100 requests a second for 10 s: 12 000
        // notifications per window, but under the per-request ratio.
        let t0 = Instant::now();
        let mut m = FloodMeter::new(t0);
        for r in 0..1000u64 {
            let at = t0 + Duration::from_millis(r * 10);
            m.start_exchange();
            m.client_sent(at);
            for _ in 0..60 {
                let (_, flood) = m.notification("notifications/message", None, LOG, at);
                assert!(flood.is_none(), "request {r}");
            }
            m.end_exchange();
        }
    }

    #[test]
    fn requests_over_the_budget_are_throttled_and_a_flood_is_reported() {
        let t0 = Instant::now();
        let mut m = FloodMeter::new(t0);
        m.start_exchange();
        let mut answers = (0, 0);
        let mut floods = Vec::new();
        for i in 0..1000u64 {
            let method = if i % 2 == 0 {
                "sampling/createMessage"
            } else {
                "roots/list"
            };
            let (answer, _, flood) = m.request(method, b"{}", t0 + Duration::from_micros(i * 100));
            match answer {
                Answer::Normally => answers.0 += 1,
                Answer::Throttle => answers.1 += 1,
            }
            floods.extend(flood);
        }
        assert_eq!(answers, (REQUEST_FLOOD, 1000 - REQUEST_FLOOD));
        assert_eq!(floods.len(), 1);
        assert_eq!(floods[0].kind, FloodKind::ServerRequests);
        assert_eq!(floods[0].methods.len(), 2);
        let dropped = m.end_exchange().expect("drops");
        assert_eq!(dropped.throttled, 1000 - REQUEST_FLOOD);
        assert_eq!(dropped.requests, 1000 - KEPT_PER_EXCHANGE as u64);
        // A new window answers normally again.
        m.start_exchange();
        let (answer, _, flood) = m.request("roots/list", b"{}", t0 + FLOOD_WINDOW * 2);
        assert_eq!((answer, flood), (Answer::Normally, None));
    }

    #[test]
    fn the_skip_prefix_never_matches_a_request_or_response() {
        assert_eq!(
            line_prefix(LOG, "notifications/message").as_deref(),
            Some(&br#"{"jsonrpc":"2.0","method":"notifications/message""#[..])
        );
        let request = br#"{"jsonrpc":"2.0","id":1,"method":"notifications/message"}"#;
        assert_eq!(line_prefix(request, "notifications/message"), None);
        let late = br#"{"jsonrpc":"2.0","result":{"m":"notifications/message"}}"#;
        assert_eq!(line_prefix(late, "notifications/message"), None);
    }

    #[test]
    fn progress_counts_per_request() {
        const PROGRESS: &[u8] =
            br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{}}"#;
        let t0 = Instant::now();
        // Two calls in flight, each reporting 1 200 progress notifications in the window:
        // 2 400 in all, but no one request floods.
        let mut m = FloodMeter::new(t0);
        for i in 0..2_400u64 {
            let token = if i % 2 == 0 { "\"a\"" } else { "\"b\"" };
            let at = t0 + Duration::from_micros(i * 500);
            let (_, flood) = m.notification("notifications/progress", Some(token), PROGRESS, at);
            assert!(flood.is_none(), "no flood at {i}");
        }
        // One call reporting 2 000: a flood, and that request's.
        let mut m = FloodMeter::new(t0);
        let mut found = None;
        for i in 0..2_000u64 {
            let at = t0 + Duration::from_micros(i * 500);
            let (_, flood) = m.notification("notifications/progress", Some("\"a\""), PROGRESS, at);
            found = found.or(flood);
        }
        let flood = found.expect("a flood");
        assert_eq!(flood.count, 2_000);
        assert_eq!(flood.token.as_deref(), Some("\"a\""));
    }

    #[test]
    fn method_counts_stay_bounded() {
        let t0 = Instant::now();
        let mut m = FloodMeter::new(t0);
        for i in 0..10_000 {
            m.notification(&format!("notifications/x{i}"), None, LOG, t0);
        }
        assert!(m.notifications.methods.len() <= METHODS_KEPT);
        let total: u64 = m.notifications.methods.iter().map(|(_, n)| n).sum();
        assert_eq!(total, 10_000);
    }
}
