//! What a run has done so far, shared between the run and the thread that answers SIGINT and
//! SIGTERM, so that a report can be written whatever happens: a run that could not start
//! (exit 2), a run interrupted at any point (even while its task is busy generating values),
//! and a run that completed.
//!
//! [`LiveRun`] is fed the run's [`Event`]s (findings as found, redacted; counters; the last
//! exchanges as excerpts) and builds a [`Report`] from them at any time
//! ([`LiveRun::not_started`], [`LiveRun::interrupted`]). Its memory is bounded: the findings
//! (distinct, as the report keeps them), the summary, and the last [`EXCHANGES_KEPT`]
//! exchanges, each frame of them kept as at most twice [`EXCERPT_BYTES`] bytes (and quoted as
//! at most [`EXCERPT_BYTES`]).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

pub use mcp_chaos_model::report::{ErrorReport, ExchangeExcerpt, RunOutcome, STDERR_TAIL_BYTES};

use super::{Event, Report, RunConfig, RunError, Summary, empty_report};
use crate::finding::{Finding, Severity};
use crate::session::{Exchange, Outcome, Probe, ReceivedItem};

/// How many of the last exchanges a report of a run that ended early quotes.
pub const EXCHANGES_KEPT: usize = 8;

/// The longest excerpt of one frame in [`ExchangeExcerpt`], in bytes.
pub const EXCERPT_BYTES: usize = 2_000;

/// The most frames received quoted per exchange in [`ExchangeExcerpt`].
const FRAMES_KEPT: usize = 4;

/// The excerpt of `ex` quoted in a report of a run that ended early, with `secrets` redacted.
pub fn excerpt(ex: &Exchange, secrets: &[String]) -> ExchangeExcerpt {
    Kept::of(ex, secrets.len()).excerpt(secrets)
}

/// One of the last exchanges, as [`LiveRun`] keeps it until a report quotes it: what the
/// excerpt is made of, copied (a frame of at most [`KEPT_WHOLE`] bytes) rather than formatted,
/// since nearly every exchange kept is dropped unquoted [`EXCHANGES_KEPT`] exchanges later.
#[derive(Debug)]
struct Kept {
    probe: String,
    sent: KeptText,
    received: Vec<KeptText>,
    outcome: Outcome,
    timeout_ms: u64,
    elapsed_ms: u64,
    /// How many of the run's secrets were known when it was kept: the excerpt is redacted
    /// with those first, as it would have been then.
    secrets: usize,
}

/// The largest frame [`Kept`] copies whole; a larger one is excerpted at once.
const KEPT_WHOLE: usize = 2 * EXCERPT_BYTES;

/// A frame's bytes, or its text already made (a large frame, or an event that is not a frame).
#[derive(Debug)]
enum KeptText {
    Bytes(Vec<u8>),
    Text(String),
}

impl KeptText {
    fn frame(bytes: &[u8]) -> KeptText {
        if bytes.len() <= KEPT_WHOLE {
            KeptText::Bytes(bytes.to_vec())
        } else {
            KeptText::Text(crate::wire::excerpt(bytes, EXCERPT_BYTES))
        }
    }

    fn text(&self) -> String {
        match self {
            KeptText::Bytes(bytes) => crate::wire::excerpt(bytes, EXCERPT_BYTES),
            KeptText::Text(text) => text.clone(),
        }
    }
}

impl Kept {
    /// What `ex` is quoted from, with the first `secrets` of the run's secrets to redact.
    fn of(ex: &Exchange, secrets: usize) -> Kept {
        let sent = ex.sent.strip_suffix(b"\n").unwrap_or(&ex.sent);
        let received = ex.received[ex.preceding.min(ex.received.len())..]
            .iter()
            .take(FRAMES_KEPT)
            .map(|r| match &r.item {
                ReceivedItem::Frame(f) => KeptText::frame(&f.raw),
                ReceivedItem::Oversize { len, head, what } => KeptText::Text(format!(
                    "[{what} of {len} bytes, over the size limit: {}]",
                    crate::wire::excerpt(head, 200)
                )),
                ReceivedItem::Flood(flood) => KeptText::Text(format!(
                    "[a flood began: {} messages in {} ms]",
                    flood.count, flood.elapsed_ms
                )),
                ReceivedItem::Dropped(dropped) => {
                    KeptText::Text(format!("[counted, not kept: {dropped:?}]"))
                }
                ReceivedItem::Noise { lines, bytes } => KeptText::Text(format!(
                    "[{lines} lines ({bytes} bytes) that are not protocol messages]"
                )),
                ReceivedItem::Closed => KeptText::Text("[the server closed its output]".to_owned()),
                ReceivedItem::Exited(status) => {
                    KeptText::Text(format!("[the server exited: {status}]"))
                }
                ReceivedItem::Http(info) => KeptText::Text(format!("[HTTP {info:?}]")),
            })
            .collect();
        Kept {
            probe: ex.probe.label(),
            sent: KeptText::frame(sent),
            received,
            outcome: ex.outcome.clone(),
            timeout_ms: ex.timeout_ms,
            elapsed_ms: u64::try_from(ex.elapsed.as_millis()).unwrap_or(u64::MAX),
            secrets,
        }
    }

    /// The excerpt, redacted with the secrets known when it was kept (`all[..self.secrets]`).
    fn excerpt(&self, all: &[String]) -> ExchangeExcerpt {
        let secrets = &all[..self.secrets.min(all.len())];
        let redact = |s: String| crate::oracle::leaks::redact(&s, secrets);
        let outcome = match &self.outcome {
            Outcome::Answered { .. } => "answered".to_owned(),
            Outcome::Fenced => "fenced".to_owned(),
            Outcome::NoAnswer => format!("no answer within {} ms", self.timeout_ms),
            Outcome::Abandoned => "abandoned".to_owned(),
            Outcome::Gone(Some(status)) => format!("gone ({status})"),
            Outcome::Gone(None) => "gone (closed its output)".to_owned(),
            Outcome::SendFailed(e) => format!("send failed: {e}"),
        };
        ExchangeExcerpt {
            probe: self.probe.clone(),
            sent: redact(self.sent.text()),
            received: self.received.iter().map(|r| redact(r.text())).collect(),
            outcome,
            elapsed_ms: self.elapsed_ms,
        }
    }
}

/// The state of a run so far. Cheap to clone (a shared handle).
#[derive(Debug, Clone)]
pub struct LiveRun {
    inner: Arc<Mutex<State>>,
}

#[derive(Debug)]
struct State {
    /// The report as of now (its summary's violations, warnings and duration filled in by
    /// [`LiveRun::report`]).
    report: Report,
    /// Values redacted from everything quoted.
    secrets: Vec<String>,
    exchanges: VecDeque<Kept>,
    stderr_tail: String,
    started: Instant,
    /// Whether the run's end was claimed (by the run completing, or by a signal).
    ended: bool,
}

impl LiveRun {
    /// The state of a run of `config` that has not started yet.
    pub fn new(config: &RunConfig) -> LiveRun {
        LiveRun {
            inner: Arc::new(Mutex::new(State {
                report: empty_report(config),
                secrets: config
                    .secrets
                    .iter()
                    .map(|(_, v)| v.clone())
                    .chain(config.server.redactions())
                    .collect(),
                exchanges: VecDeque::new(),
                stderr_tail: String::new(),
                started: Instant::now(),
                ended: false,
            })),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes in one event of the run.
    pub fn observe(&self, event: &Event<'_>) {
        let mut s = self.state();
        match event {
            Event::Initialized { negotiated } => {
                s.report.server.server_info = negotiated.server_info.clone();
                s.report.server.protocol_version = if s.report.server.protocol_version.is_empty()
                    || s.report.server.protocol_version == negotiated.answered
                {
                    negotiated.answered.clone()
                } else if s
                    .report
                    .server
                    .protocol_version
                    .split(", ")
                    .any(|v| v == negotiated.answered)
                {
                    s.report.server.protocol_version.clone()
                } else {
                    format!(
                        "{}, {}",
                        s.report.server.protocol_version, negotiated.answered
                    )
                };
            }
            Event::Planned { tools, .. } => {
                s.report.summary.tools = s.report.summary.tools.max(*tools as u64);
            }
            Event::Exchange { exchange } => {
                s.report.summary.exchanges += 1;
                if matches!(
                    exchange.probe,
                    Probe::ToolCall { .. } | Probe::Generated { .. } | Probe::UnknownTool { .. }
                ) {
                    s.report.summary.tool_calls += 1;
                }
                let kept = Kept::of(exchange, s.secrets.len());
                if s.exchanges.len() == EXCHANGES_KEPT {
                    s.exchanges.pop_front();
                }
                s.exchanges.push_back(kept);
            }
            Event::Finding { finding } => {
                for value in &finding.redact {
                    if !s.secrets.contains(value) {
                        s.secrets.push(value.clone());
                    }
                }
                let mut finding = (*finding).clone();
                finding.redact.clear();
                s.report.findings.push(finding);
            }
            Event::ToolGenerated { phase } => s.report.summary.generated.push((*phase).clone()),
            Event::Restarted { fresh, .. } => {
                s.report.summary.restarts += 1;
                s.report.summary.fresh_restarts += u32::from(*fresh);
            }
            Event::StartFailed { stderr_tail } => {
                s.stderr_tail = tail(&crate::oracle::leaks::redact(stderr_tail, &s.secrets));
            }
            Event::Tools { skipped, .. } => {
                s.report.summary.skipped_tools = skipped.to_vec();
            }
            Event::Starting { .. }
            | Event::SecondServer { .. }
            | Event::GeneratedBudgetSpent { .. }
            | Event::Step { .. }
            | Event::FaultPhase { .. }
            | Event::FaultProperties { .. }
            | Event::VersionSkipped { .. } => {}
        }
    }

    /// Claims the end of the run: `true` for the first caller (the run completing, or the
    /// signal thread), `false` for every later one, which must then leave the report and the
    /// exit to the first.
    pub fn claim_end(&self) -> bool {
        let mut s = self.state();
        !std::mem::replace(&mut s.ended, true)
    }

    /// Whether the run's end was claimed ([`LiveRun::claim_end`]): events after it are the
    /// run's own shutdown (a server killed by the signal handler) and must not be journaled.
    pub fn ended(&self) -> bool {
        self.state().ended
    }

    /// The findings so far.
    pub fn findings(&self) -> Vec<Finding> {
        self.state().report.findings.clone()
    }

    fn report(&self, outcome: RunOutcome, error: ErrorReport) -> Report {
        let s = self.state();
        let mut report = s.report.clone();
        report.summary = Summary {
            duration_ms: u64::try_from(s.started.elapsed().as_millis()).unwrap_or(u64::MAX),
            ..report.summary
        };
        report.summary.violations = report
            .findings
            .iter()
            .filter(|f| f.severity == Severity::Violation)
            .count() as u64;
        report.summary.warnings = report.findings.len() as u64 - report.summary.violations;
        report.outcome = outcome;
        report.interrupted = outcome == RunOutcome::Interrupted;
        // What was quoted before a finding uncovered a value to redact is redacted now.
        let redact = |text: &str| crate::oracle::leaks::redact(text, &s.secrets);
        report.error = Some(ErrorReport {
            message: redact(&error.message),
            stderr_tail: redact(&error.stderr_tail),
            ..error
        });
        report.exchanges = s
            .exchanges
            .iter()
            .map(|kept| kept.excerpt(&s.secrets))
            .map(|e| ExchangeExcerpt {
                probe: redact(&e.probe),
                sent: redact(&e.sent),
                received: e.received.iter().map(|r| redact(r)).collect(),
                outcome: e.outcome.clone(),
                elapsed_ms: e.elapsed_ms,
            })
            .collect();
        report
    }

    /// The report of a run that could not be carried out (exit 2): what was found before
    /// (`--protocol-version all` may have tested other versions), the error, the server's
    /// output tail and the last exchanges.
    pub fn not_started(&self, error: &RunError) -> Report {
        let secrets = self.state().secrets.clone();
        let mut stderr_tail = self.state().stderr_tail.clone();
        if let RunError::Start(
            crate::transport::StartError::Exited { log, .. }
            | crate::transport::StartError::PortTimeout { log, .. },
        ) = error
            && stderr_tail.is_empty()
        {
            stderr_tail = tail(&crate::oracle::leaks::redact(log, &secrets));
        }
        let kind = match error {
            RunError::Start(_) => "start",
            RunError::Init(_) | RunError::Unsupported => "initialize",
            RunError::Injectors(_) => "injectors",
        };
        self.report(
            RunOutcome::NotStarted,
            ErrorReport {
                kind,
                message: crate::oracle::leaks::redact(&error.to_string(), &secrets),
                stderr_tail,
            },
        )
    }

    /// The report of a run stopped by `signal` (e.g. `SIGTERM`): the findings so far,
    /// marked interrupted.
    pub fn interrupted(&self, signal: &str) -> Report {
        let stderr_tail = self.state().stderr_tail.clone();
        self.report(
            RunOutcome::Interrupted,
            ErrorReport {
                kind: "interrupted",
                message: format!(
                    "interrupted by {signal}; the findings are those found until then, and the \
                     server's process tree is killed"
                ),
                stderr_tail,
            },
        )
    }

    /// The server's output tail recorded when a start failed (empty if none).
    pub fn stderr_tail(&self) -> String {
        self.state().stderr_tail.clone()
    }

    /// The exit code of an interrupted run: 1 when a finding so far is a violation, else 2
    /// (the run did not complete).
    pub fn interrupted_exit_code(&self) -> i32 {
        if self
            .state()
            .report
            .findings
            .iter()
            .any(|f| f.severity == Severity::Violation)
        {
            1
        } else {
            2
        }
    }
}

/// The last [`STDERR_TAIL_BYTES`] bytes of `text` (on a character boundary).
fn tail(text: &str) -> String {
    if text.len() <= STDERR_TAIL_BYTES {
        return text.to_owned();
    }
    let mut start = text.len() - STDERR_TAIL_BYTES;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    format!("[…]{}", &text[start..])
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::finding::{Finding, NO_RESPONSE, WRONG_ERROR_CODE};
    use crate::protocol::ProtocolVersion;
    use crate::session::{Expect, Received};
    use crate::transport::{Frame, StdioConfig};
    use crate::wire::RequestId;

    fn config() -> RunConfig {
        let mut c = RunConfig::new(
            super::super::ServerSpec::Stdio(StdioConfig::new("srv", Vec::<String>::new())),
            super::super::VersionChoice::Auto,
        );
        c.secrets = vec![("API_KEY".into(), "s3cret-value".into())];
        c
    }

    fn exchange(sent: &str, received: &[&str]) -> Exchange {
        Exchange {
            probe: Probe::ToolsList,
            sent: format!("{sent}\n").into_bytes(),
            expect: Expect::Response {
                id: RequestId::from(1),
                or_null: false,
                fence: false,
            },
            received: received
                .iter()
                .map(|r| Received {
                    at_ms: 1,
                    item: ReceivedItem::Frame(Frame::new(r.as_bytes().to_vec())),
                })
                .collect(),
            preceding: 0,
            outcome: Outcome::NoAnswer,
            elapsed: Duration::from_millis(5),
            timeout_ms: 5,
            fault: None,
        }
    }

    fn finding(severity: Severity, message: &str) -> Finding {
        let invariant = if severity == Severity::Violation {
            &WRONG_ERROR_CODE
        } else {
            &NO_RESPONSE
        };
        Finding::new(invariant, severity, ProtocolVersion::V2025_11_25, message)
    }

    #[test]
    fn an_interrupted_report_holds_the_findings_so_far_and_is_marked() {
        let live = LiveRun::new(&config());
        let warning = finding(Severity::Warning, "slow");
        live.observe(&Event::Finding { finding: &warning });
        live.observe(&Event::Exchange {
            exchange: &exchange("{}", &[]),
        });
        assert_eq!(
            live.interrupted_exit_code(),
            2,
            "a warning only: incomplete"
        );
        let report = live.interrupted("SIGTERM");
        assert!(report.interrupted);
        assert_eq!(report.outcome, RunOutcome::Interrupted);
        assert_eq!(report.findings.len(), 1);
        assert_eq!((report.summary.warnings, report.summary.violations), (1, 0));
        assert_eq!(report.summary.exchanges, 1);
        let error = report.error.expect("an error");
        assert_eq!(error.kind, "interrupted");
        assert!(error.message.contains("SIGTERM"), "{}", error.message);

        let violation = finding(Severity::Violation, "-32603");
        live.observe(&Event::Finding {
            finding: &violation,
        });
        assert_eq!(live.interrupted_exit_code(), 1, "a violation so far");
        assert_eq!(live.interrupted("SIGINT").summary.violations, 1);
    }

    #[test]
    fn a_run_that_could_not_start_reports_the_error_the_tail_and_the_exchanges() {
        let live = LiveRun::new(&config());
        live.observe(&Event::Exchange {
            exchange: &exchange(r#"{"method":"initialize"}"#, &["garbage s3cret-value"]),
        });
        live.observe(&Event::StartFailed {
            stderr_tail: "Traceback: key s3cret-value",
        });
        let error = RunError::Init(crate::session::InitError::BadResult("no result".into()));
        let report = live.not_started(&error);
        assert_eq!(report.outcome, RunOutcome::NotStarted);
        assert!(!report.interrupted);
        let e = report.error.expect("an error");
        assert_eq!(e.kind, "initialize");
        assert_eq!(e.stderr_tail, "Traceback: key [REDACTED]");
        assert_eq!(report.exchanges.len(), 1);
        assert_eq!(report.exchanges[0].sent, r#"{"method":"initialize"}"#);
        assert_eq!(report.exchanges[0].received, ["garbage [REDACTED]"]);
        assert_eq!(report.exchanges[0].outcome, "no answer within 5 ms");
    }

    #[test]
    fn exchanges_are_bounded_and_redacted_with_what_findings_uncover_later() {
        let live = LiveRun::new(&config());
        for i in 0..20 {
            live.observe(&Event::Exchange {
                exchange: &exchange(&format!("{{\"n\":{i}}}"), &["token=tok-abcdef"]),
            });
        }
        let mut leak = finding(Severity::Violation, "leaked a token");
        leak.redact = vec!["tok-abcdef".into()];
        live.observe(&Event::Finding { finding: &leak });
        let report = live.interrupted("SIGTERM");
        assert_eq!(report.exchanges.len(), EXCHANGES_KEPT);
        assert_eq!(
            report.exchanges[0].sent, r#"{"n":12}"#,
            "the last ones kept"
        );
        assert!(
            report
                .exchanges
                .iter()
                .all(|e| e.received == ["token=[REDACTED]"]),
            "{:?}",
            report.exchanges
        );
        assert!(report.findings[0].redact.is_empty());
    }

    #[test]
    fn the_end_is_claimed_once() {
        let live = LiveRun::new(&config());
        assert!(!live.ended());
        assert!(live.claim_end());
        assert!(live.ended());
        assert!(!live.clone().claim_end());
    }
}
