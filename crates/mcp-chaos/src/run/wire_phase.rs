//! The wire phase (`--wire-cases N`): frames nobody wrote down, sent to the live server. Each
//! case is one frame drawn by [`crate::fuzz::Request::live`] (the generator of the cargo-fuzz
//! targets) for the negotiated protocol version from bytes derived from the run's seed and the
//! case number, so a run is reproduced by its seed. The frame is judged by what a correct
//! server owes it ([`crate::oracle::wire_answer`]) and followed by the liveness check (a ping:
//! `server-died`, `not-alive`, `server-wedged`).
//!
//! A frame that kills the server, leaves it not answering, or gets a wrong answer (a violation)
//! is first sent alone to a fresh server; when it fails again there (otherwise the finding
//! says it fails only after the frames before it), it is shrunk to the smallest frame that
//! still does the same: first over its JSON structure
//! (a container replaced by one of its descendants, members and elements dropped, strings
//! shortened), then over its bytes (ranges deleted, halving their length; a frame that is JSON
//! stays JSON), each candidate sent
//! to the server (restarted when the previous one killed it) and kept when it fails the same
//! way. Bytes that are not UTF-8 survive the structure phase (they are carried through the
//! JSON as private-use characters). Shrinking stops after [`SHRINK_STEPS`] candidates or
//! [`SHRINK_TIME`], and the finding says which bound it hit. The finding shows the shrunk
//! frame with `\xNN` for bytes that are not UTF-8; with `--replays DIR` a replay file carries
//! its exact bytes (base64) for `mcp-chaos replay`.
//!
//! Under `--budget-ms`, no frame and no shrinking candidate starts once the run's budget is
//! spent; the summary's `budget_cut` then says `wire phase: N of M run` (or `wire phase:
//! shrinking: cut short`).
//!
//! After the phase the server is restarted when a frame may have changed the session's state
//! (a second `initialize`, `logging/setLevel`, `resources/subscribe`), so that the later phases
//! meet the session they expect.
//!
//! Frames are skipped (and the next case drawn) when they could not be judged fairly: over
//! stdio a frame holding a raw line break (two frames to the server), an `initialize` request
//! (the order of the lifecycle is the lifecycle invariant's), a `subscriptions/listen`
//! (its stream may stay open), a `tools/call` of a listed tool the tool selection leaves
//! out (or any listed tool when tool calls are off), and an integer id beyond 2^53 - 1 (see
//! `MAX_SAFE_ID`; drawn ids are folded into that range, so only the odd ids 2^64 - 1 and
//! -2^63 are skipped).

pub use mcp_chaos_model::report::WireSummary;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::Campaign;
use crate::finding::{Finding, NOT_ALIVE, SERVER_DIED, Severity};
use crate::fuzz::{Call, Message, Request};
use crate::oracle::{self, wire_answer::Expected};
use crate::protocol::ProtocolVersion;
use crate::session::{Exchange, Expect, Probe};
use crate::wire::{IdNumber, RequestId};

/// Frames sent by default (`--wire-cases`): about 2 s against a fast server, and enough that
/// invalid UTF-8 in a string value and nesting past 64 levels each come up with any seed.
pub const DEFAULT_WIRE_CASES: usize = 160;
/// Most candidates sent while shrinking one frame.
pub const SHRINK_STEPS: usize = 200;
/// Longest time spent shrinking one frame.
pub const SHRINK_TIME: Duration = Duration::from_secs(20);
/// Most frames shrunk in one campaign (one per way of failing and kind of frame).
pub const MAX_SHRINKS: usize = 4;
/// How long a fenced wire frame keeps listening after its fence is answered, in ms.
const WIRE_GRACE_MS: u64 = 25;
/// Added to the small integer ids the generator draws (0 to 1000), so that they never meet
/// the ids of mcp-chaos's own requests (counted from 1).
const ID_BASE: i64 = 1 << 40;
/// The largest integer id every JSON parser reads exactly (2^53 - 1, the IEEE 754 double's
/// integer range, RFC 8259 §6): the wire phase keeps integer ids within it, since a server on
/// a parser that reads larger ones approximately is limited by JSON interoperability, not in
/// breach of MCP.
const MAX_SAFE_ID: u64 = (1 << 53) - 1;
/// Seed bytes each case is drawn from.
const CASE_BYTES: usize = 1024;
/// Deepest frame the structure phase parses (the generator nests at most 601 levels).
const SHRINK_DEPTH: usize = 2048;
/// Most nodes the structure phase enumerates per round.
const SHRINK_NODES: usize = 4096;

/// The bytes case `case` of a run seeded `seed` is drawn from (splitmix64).
pub fn case_bytes(seed: u64, case: usize) -> Vec<u8> {
    let mut state = seed ^ (case as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x5749_5245;
    let mut out = Vec::with_capacity(CASE_BYTES);
    while out.len() < CASE_BYTES {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        out.extend_from_slice(&z.to_le_bytes());
    }
    out
}

/// Case `case` of a run seeded `seed` under `version`: the frame drawn, with its small
/// integer ids moved past mcp-chaos's own (see `ID_BASE`).
pub fn draw(seed: u64, case: usize, version: ProtocolVersion) -> Option<Request> {
    let bytes = case_bytes(seed, case);
    let mut u = arbitrary::Unstructured::new(&bytes);
    let mut request = Request::live(&mut u, version).ok()?;
    let relabel = |call: &mut Call| {
        call.id = match call.id.take() {
            Some(RequestId::Number(IdNumber::Signed(n))) if (0..=1000).contains(&n) => {
                Some(RequestId::from(ID_BASE + (case as i64) * 8192 + n))
            }
            Some(RequestId::Number(IdNumber::Signed(n))) if n.unsigned_abs() > MAX_SAFE_ID => {
                Some(RequestId::from(n % (MAX_SAFE_ID as i64)))
            }
            Some(RequestId::Number(IdNumber::Unsigned(n))) if n > MAX_SAFE_ID => {
                Some(RequestId::from((n % MAX_SAFE_ID) as i64))
            }
            other => other,
        };
    };
    match &mut request.message {
        Message::One(call) => relabel(call),
        Message::Batch(calls) => calls.iter_mut().for_each(relabel),
    }
    Some(request)
}

/// How a frame failed: what the shrinker keeps reproducing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// The server exited (`server-died`).
    Died,
    /// The server stopped answering the liveness ping (`not-alive`).
    NotAlive,
    /// The answer broke a rule (the invariant's code).
    Answer(String),
}

impl Failure {
    /// The invariant code of the finding this failure shows as.
    fn code(&self) -> &str {
        match self {
            Failure::Died => SERVER_DIED.code,
            Failure::NotAlive => NOT_ALIVE.code,
            Failure::Answer(code) => code,
        }
    }

    fn describe(&self) -> &'static str {
        match self {
            Failure::Died => "killed the server",
            Failure::NotAlive => "left the server not answering",
            Failure::Answer(_) => "got a wrong answer",
        }
    }
}

/// The request ids the wire phase sent to the current server process (MCP: "The request ID
/// MUST NOT have been previously used by the requestor within the same session"), forgotten
/// when the server is restarted.
#[derive(Debug, Default)]
struct SessionIds {
    /// Each id as JSON text.
    used: std::collections::HashSet<String>,
    /// The restart count they were sent under.
    restarts: u32,
}

impl SessionIds {
    /// Forgets the ids when the server was restarted since.
    fn sync(&mut self, restarts: u32) {
        if restarts != self.restarts {
            self.used.clear();
            self.restarts = restarts;
        }
    }

    /// Whether a request id of `frame` was sent to this server already.
    fn reused(&self, frame: &[u8]) -> bool {
        frame_ids(frame).iter().any(|id| self.used.contains(id))
    }
}

/// The request ids of a frame (and of its batch elements), as JSON text, when it is JSON
/// (read lossily where not UTF-8, and past serde_json's 128 levels: a server whose parser
/// reads a deep frame has seen its id, which must then not be reused).
fn frame_ids(frame: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(frame);
    let parsed = serde_json::from_str::<Value>(&text)
        .ok()
        .or_else(|| crate::wire::parse_to_depth(&text, SHRINK_DEPTH).ok());
    let Some(value) = parsed else {
        return Vec::new();
    };
    let id = |v: &Value| {
        v.get("id")
            .filter(|id| id.is_string() || id.is_number())
            .map(ToString::to_string)
    };
    match &value {
        Value::Array(items) => items.iter().filter_map(id).collect(),
        other => id(other).into_iter().collect(),
    }
}

/// One frame sent and judged.
struct Outcome {
    exchange: Exchange,
    findings: Vec<Finding>,
    /// How it failed, each with the group of its finding (what it is shrunk once per).
    failures: Vec<(Failure, String)>,
}

/// Why shrinking stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bound {
    /// No smaller candidate failed the same way.
    Minimal,
    /// [`SHRINK_STEPS`] candidates were sent.
    Steps,
    /// [`SHRINK_TIME`] ran out.
    Time,
    /// The server could not be restarted (or the campaign gave up).
    Gone,
    /// The run's budget (`--budget-ms`) was spent.
    Budget,
    /// The frame itself, sent first to a fresh server, did not fail again: the failure
    /// depends on the frames before it, and shrinking the frame alone cannot keep it.
    NotAlone,
}

impl Bound {
    fn describe(self) -> String {
        match self {
            Bound::Minimal => "no smaller frame fails the same way".into(),
            Bound::Steps => format!("stopped at the bound of {SHRINK_STEPS} candidates"),
            Bound::Time => format!(
                "stopped at the bound of {} s of shrinking",
                SHRINK_TIME.as_secs()
            ),
            Bound::Gone => "stopped: the server could not be restarted".into(),
            Bound::Budget => "stopped: the run's budget (--budget-ms) was spent".into(),
            Bound::NotAlone => "not shrunk: sent alone to a fresh server it did not fail again, so it fails only after the frames before it in the session".into(),
        }
    }
}

impl Campaign<'_> {
    /// Runs the wire phase: `cases` frames (see the module docs).
    pub(super) async fn wire_phase(&mut self, cases: usize) {
        if cases == 0 || self.gave_up || self.cut_by_budget("wire phase", 0, cases) {
            return;
        }
        let started = Instant::now();
        let mut summary = WireSummary::default();
        let mut shrunk: Vec<String> = Vec::new();
        let mut ids = SessionIds::default();
        // Kinds of frame that already killed or wedged the server: later frames of the kind
        // are skipped (each would only cost a restart, and restarts are bounded).
        let mut fatal: std::collections::HashSet<String> = std::collections::HashSet::new();
        let http = matches!(self.server, super::ServerSpec::Http(_));
        let selected: Vec<String> = self.plan.calls.iter().map(|(n, _)| n.clone()).collect();
        // Every tool the server listed: the selected ones (`plan.tools`) and the ones the
        // tool selection left out, which no frame may call.
        let listed: Vec<String> = self
            .plan
            .tools
            .iter()
            .filter_map(|t| t.get("name").and_then(Value::as_str).map(str::to_owned))
            .chain(self.summary.skipped_tools.iter().map(|s| s.tool.clone()))
            .collect();
        let calls_allowed = self.config.tool_calls;
        let mut case = 0;
        let mut sent = 0;
        // Whether a frame may have changed the session's state (a second initialize, a log
        // level, a subscription): the server is then restarted for the phases after this one.
        let mut dirty = false;
        while sent < cases && case < cases * 2 && !self.gave_up {
            if self.cut_by_budget("wire phase", sent, cases) {
                break;
            }
            case += 1;
            let version = self.context().version;
            let Some(mut request) = draw(self.config.seed, case, version) else {
                summary.skipped += 1;
                continue;
            };
            ids.sync(self.summary.restarts);
            unique_ids(&mut request, case, &ids.used);
            let (bytes, expected) = request.to_bytes_with_expected();
            let excluded = |name: &str| {
                listed.iter().any(|l| l == name)
                    && (!calls_allowed || !selected.iter().any(|s| s == name))
            };
            if (!http && bytes.iter().any(|b| *b == b'\n' || *b == b'\r'))
                || beyond_safe_id(&bytes)
                || ids.reused(&bytes)
                || calls(&request.message).any(|c| {
                    // The lifecycle (initialize once, first) is the lifecycle invariant's.
                    (c.method == crate::fuzz::Method::Initialize && c.id.is_some())
                        || c.method == crate::fuzz::Method::SubscriptionsListen
                        || (c.method == crate::fuzz::Method::ToolsCall
                            && c.params
                                .as_ref()
                                .and_then(|p| p.get("name"))
                                .and_then(Value::as_str)
                                .is_some_and(excluded))
                })
            {
                summary.skipped += 1;
                continue;
            }
            let what = request.describe();
            let failed_method = calls(&request.message).any(|c| {
                super::method_key_of(c.method.as_str(), c.params.as_ref())
                    .is_some_and(|k| self.failed_methods.contains(&k))
            });
            if failed_method || fatal.contains(crate::session::wire_kind(&what)) {
                summary.skipped += 1;
                continue;
            }
            sent += 1;
            summary.frames += 1;
            dirty |= calls(&request.message).any(|c| {
                matches!(
                    c.method,
                    crate::fuzz::Method::Initialize
                        | crate::fuzz::Method::LoggingSetLevel
                        | crate::fuzz::Method::ResourcesSubscribe
                        | crate::fuzz::Method::Initialized
                )
            });
            let label = format!("wire frame {case} ({what})");
            self.shared.emit(&super::Event::Step { label: &label });
            let probe = Probe::Wire {
                case,
                what: what.clone(),
                expected,
                phase: "generated",
            };
            let Some(mut outcome) = self.wire_case(probe, &bytes, true, &mut ids).await else {
                break;
            };
            for (failure, _) in &outcome.failures {
                if matches!(failure, Failure::Died | Failure::NotAlive) {
                    fatal.insert(crate::session::wire_kind(&what).to_owned());
                }
            }
            let first = outcome
                .failures
                .iter()
                .find(|(_, group)| !shrunk.contains(group))
                .cloned();
            if let Some((failure, group)) = first
                && shrunk.len() < MAX_SHRINKS
            {
                shrunk.push(group.clone());
                summary.shrunk += 1;
                let (steps, bound, best) = self
                    .wire_shrink(case, &what, &bytes, &failure, &group, &mut ids)
                    .await;
                summary.shrink_steps += steps as u64;
                self.wire_annotate(&mut outcome, &failure, &bytes, &best, steps, bound);
            }
            self.add(outcome.findings);
        }
        let grace = crate::session::ClientConfig::new(
            ProtocolVersion::LATEST_WITH_INITIALIZE,
            self.config.timeout,
        )
        .grace;
        if let Some(session) = self.session.as_mut() {
            session.set_grace(grace);
        }
        if dirty && self.session.is_some() && !self.gave_up {
            self.fresh_restart("a wire frame may have changed the session's state")
                .await;
        }
        summary.elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.summary.wire = Some(summary);
    }

    /// Sends one frame, then the liveness ping, and judges both. `main`: a case of the phase
    /// (a server that failed is restarted as after any probe, counted against
    /// `--max-restarts` and checked for a wedge); otherwise a shrinking candidate (restarted
    /// fresh, not counted). `None` when no server could be started.
    async fn wire_case(
        &mut self,
        probe: Probe,
        bytes: &[u8],
        main: bool,
        ids: &mut SessionIds,
    ) -> Option<Outcome> {
        ids.sync(self.summary.restarts);
        // A candidate reusing an id this server has seen goes to a fresh server.
        if !main
            && ids.reused(bytes)
            && let Some(old) = self.session.take()
        {
            old.shutdown().await;
        }
        if self.session.is_none() {
            let ok = if main {
                self.restart("no server running").await
            } else {
                self.fresh_restart("shrinking a wire frame").await
            };
            if !ok {
                return None;
            }
            ids.sync(self.summary.restarts);
        }
        ids.used.extend(frame_ids(bytes));
        let session = self.session.as_mut()?;
        session.set_grace(Duration::from_millis(WIRE_GRACE_MS));
        let Probe::Wire { expected, .. } = &probe else {
            return None;
        };
        let expect = match expected {
            Expected::Response(id) => Expect::Response {
                id: id.clone(),
                or_null: true,
                fence: true,
            },
            _ => Expect::Fenced,
        };
        let http = session.transport_mut().http().is_some();
        let mut frame = bytes.to_vec();
        if !http {
            frame.push(b'\n');
        }
        let mut exchange = session.send(probe, frame, expect).await;
        let mut ping = session.liveness().await;
        adopt_late_answers(&mut exchange, &mut ping);
        let stderr = session.stderr_tail();
        self.count(&exchange);
        self.count(&ping);
        let ctx = self.context();
        let mut findings = oracle::judge(&ctx, &exchange);
        let alive = oracle::liveness::check(&ctx, &exchange, &ping, &stderr);
        let failed = !alive.is_empty();
        findings.extend(alive);
        findings.extend(oracle::judge(&ctx, &ping));
        let kind = match &exchange.probe {
            Probe::Wire { what, .. } => crate::session::wire_kind(what).to_owned(),
            _ => String::new(),
        };
        // One finding per way of failing and kind of frame (every frame with invalid UTF-8
        // that kills the server is the same finding), under a probe label that does not
        // change with the case number (baselines key on it).
        let judged = findings.len();
        for f in &mut findings {
            if f.group.as_deref().is_some_and(|g| g.starts_with("wire|")) {
                f.group = Some(format!("{}|{kind}", f.group.as_deref().unwrap_or_default()));
            } else if f.code == SERVER_DIED.code || f.code == NOT_ALIVE.code {
                f.group = Some(format!("wire|{}|{kind}", f.code));
            }
        }
        for f in findings.iter_mut().take(judged) {
            if f.probe == exchange.probe.label() {
                f.probe = format!("wire frame ({kind})");
            }
        }
        let mut failures: Vec<(Failure, String)> = Vec::new();
        for f in &mut findings {
            let failure = if f.code == SERVER_DIED.code {
                Failure::Died
            } else if f.code == NOT_ALIVE.code {
                Failure::NotAlive
            } else if f.severity == Severity::Violation
                && f.group.as_deref().is_some_and(|g| g.starts_with("wire|"))
            {
                Failure::Answer(f.code.clone())
            } else {
                continue;
            };
            let group = f.group.clone().unwrap_or_default();
            if !failures.iter().any(|(x, _)| *x == failure) {
                failures.push((failure, group));
            }
        }
        if failed {
            let reason = format!("server failed after {}", exchange.probe.label());
            if main {
                self.restart_after_failure(&reason, &exchange, &ping).await;
            } else if let Some(old) = self.session.take() {
                old.shutdown().await;
            }
        }
        Some(Outcome {
            exchange,
            findings,
            failures,
        })
    }

    /// Whether `bytes` fails as `failure` again, with a finding of the same `group` (the same
    /// way of failing for the same kind of frame; sent as a shrinking candidate).
    async fn wire_reproduces(
        &mut self,
        case: usize,
        what: &str,
        bytes: &[u8],
        failure: &Failure,
        group: &str,
        ids: &mut SessionIds,
    ) -> Option<bool> {
        let version = self.context().version;
        let probe = Probe::Wire {
            case,
            what: what.to_owned(),
            expected: Expected::of_candidate(bytes, version),
            phase: "shrunk",
        };
        let outcome = self.wire_case(probe, bytes, false, ids).await?;
        Some(
            outcome
                .failures
                .iter()
                .any(|(f, g)| f == failure && g == group),
        )
    }

    /// Shrinks `bytes`, which failed as `failure`: returns the candidates sent, why it
    /// stopped, and the smallest frame that still fails so.
    async fn wire_shrink(
        &mut self,
        case: usize,
        what: &str,
        bytes: &[u8],
        failure: &Failure,
        group: &str,
        ids: &mut SessionIds,
    ) -> (usize, Bound, Vec<u8>) {
        let started = Instant::now();
        let mut steps = 0;
        let mut best = bytes.to_vec();
        let mut bound = Bound::Minimal;
        let mut tried: std::collections::HashSet<u64> = std::collections::HashSet::new();
        tried.insert(digest(bytes));
        macro_rules! try_candidate {
            ($candidate:expr) => {{
                if !tried.insert(digest($candidate)) {
                    false
                } else if self.gave_up {
                    bound = Bound::Gone;
                    false
                } else if steps >= SHRINK_STEPS {
                    bound = Bound::Steps;
                    false
                } else if started.elapsed() >= SHRINK_TIME {
                    bound = Bound::Time;
                    false
                } else if self.cut_by_budget("wire phase: shrinking", 0, 0) {
                    bound = Bound::Budget;
                    false
                } else {
                    steps += 1;
                    match self
                        .wire_reproduces(case, what, $candidate, failure, group, ids)
                        .await
                    {
                        Some(yes) => yes,
                        None => {
                            bound = Bound::Gone;
                            false
                        }
                    }
                }
            }};
        }
        // The frame itself first, on a fresh server: a failure it does not reproduce alone
        // depends on the session before it, and no smaller frame would keep it.
        if let Some(old) = self.session.take() {
            old.shutdown().await;
        }
        steps += 1;
        match self
            .wire_reproduces(case, what, bytes, failure, group, ids)
            .await
        {
            Some(true) => {}
            Some(false) => return (steps, Bound::NotAlone, best),
            None => return (steps, Bound::Gone, best),
        }
        // Structure: over the JSON value, with bytes that are not UTF-8 carried along.
        if let Some(mut value) = decode(&best) {
            let normal = encode(&value);
            let mut usable = normal == best;
            if !usable && try_candidate!(&normal) {
                best = normal;
                usable = true;
            }
            'rounds: while usable && bound == Bound::Minimal {
                for edit in edits(&value) {
                    let Some(candidate) = apply(&value, &edit) else {
                        continue;
                    };
                    let frame = encode(&candidate);
                    if frame.len() >= best.len() {
                        continue;
                    }
                    if try_candidate!(&frame) {
                        value = candidate;
                        best = frame;
                        continue 'rounds;
                    }
                    if bound != Bound::Minimal {
                        break 'rounds;
                    }
                }
                break;
            }
        }
        // Bytes: delete ranges, halving their length. A frame that is JSON (apart from bytes
        // that are not UTF-8) stays JSON: what a server fails on is then still a message.
        let json = decode(&best).is_some();
        let mut chunk = best.len() / 2;
        while chunk >= 1 && bound == Bound::Minimal {
            let mut at = 0;
            while at < best.len() && bound == Bound::Minimal {
                let end = (at + chunk).min(best.len());
                let mut candidate = best[..at].to_vec();
                candidate.extend_from_slice(&best[end..]);
                if json && decode(&candidate).is_none() {
                    at += chunk;
                    continue;
                }
                if try_candidate!(&candidate) {
                    best = candidate;
                } else {
                    at += chunk;
                }
            }
            chunk /= 2;
        }
        (steps, bound, best)
    }

    /// Puts the shrunk frame into the findings that show `failure`, and writes their replay
    /// files (with `--replays DIR`).
    fn wire_annotate(
        &mut self,
        outcome: &mut Outcome,
        failure: &Failure,
        original: &[u8],
        best: &[u8],
        steps: usize,
        bound: Bound,
    ) {
        let version = self.context().version;
        let shown = oracle::wire_answer::escaped(best, oracle::EXCERPT_BYTES);
        for f in outcome
            .findings
            .iter_mut()
            .filter(|f| f.code == failure.code())
        {
            if bound == Bound::NotAlone {
                f.message = format!(
                    "{} The frame {}; {}.",
                    f.message.trim_end(),
                    failure.describe(),
                    bound.describe(),
                );
                // A replay of the frame alone would not reproduce it: no replay file.
                continue;
            }
            f.message = format!(
                "{} The frame {}; shrunk in {steps} steps ({}) from {} to {} bytes: {shown}",
                f.message.trim_end(),
                failure.describe(),
                bound.describe(),
                original.len(),
                best.len(),
            );
            f.request = Some(shown.clone());
            if let Some(dir) = &self.config.replays
                && let Ok(path) =
                    super::replay::write_wire(dir, self.config, version, best, &outcome.exchange, f)
            {
                f.replay = Some(path.display().to_string());
            }
        }
    }
}

/// Moves the responses that reached the liveness `ping` but answer the wire frame (any
/// response but the ping's own) back into the frame's `exchange`, marking it answered when one
/// carries the id it awaited: a server may answer a frame after the fence ping that closed its
/// window (server-everything sends its -32601 errors a tick later than its ping results).
fn adopt_late_answers(exchange: &mut Exchange, ping: &mut Exchange) {
    use crate::session::{Outcome as Wait, ReceivedItem};
    use crate::wire::Message;
    let Expect::Response { id: ping_id, .. } = &ping.expect else {
        return;
    };
    let ping_answer = match ping.outcome {
        Wait::Answered { index } => Some(index),
        _ => None,
    };
    let late = |i: usize, item: &ReceivedItem| match item {
        ReceivedItem::Frame(f) => match &f.message {
            Ok(Message::Response(r)) => Some(i) != ping_answer && r.id().id() != Some(ping_id),
            Ok(Message::Batch(_)) => true,
            _ => false,
        },
        _ => false,
    };
    let moved: Vec<usize> = ping
        .received
        .iter()
        .enumerate()
        .filter(|(i, r)| late(*i, &r.item))
        .map(|(i, _)| i)
        .collect();
    if moved.is_empty() {
        return;
    }
    let awaited = match &exchange.expect {
        Expect::Response { id, .. } => Some(id.clone()),
        Expect::Fenced => None,
    };
    let offset_ms = u64::try_from(exchange.elapsed.as_millis()).unwrap_or(u64::MAX);
    for &i in &moved {
        let mut item = ping.received[i].clone();
        item.at_ms = item.at_ms.saturating_add(offset_ms);
        let answers = matches!(&item.item, ReceivedItem::Frame(f)
            if matches!(&f.message, Ok(Message::Response(r))
                if awaited.is_some() && r.id().id() == awaited.as_ref()));
        exchange.received.push(item);
        if answers && matches!(exchange.outcome, Wait::NoAnswer) {
            exchange.outcome = Wait::Answered {
                index: exchange.received.len() - 1,
            };
        }
    }
    // Removed back to front, keeping the ping's own answer index right.
    for &i in moved.iter().rev() {
        ping.received.remove(i);
        if i < ping.preceding {
            ping.preceding -= 1;
        }
        if let Wait::Answered { index } = &mut ping.outcome
            && i < *index
        {
            *index -= 1;
        }
    }
}

/// Gives every call of `request` whose id `used` holds (sent to this server already) a fresh
/// one: a number [`ID_BASE`] + `case` * 8192 + its index * 1024 + 1023, a string with
/// `-case-index` appended.
fn unique_ids(request: &mut Request, case: usize, used: &std::collections::HashSet<String>) {
    let calls: Vec<&mut Call> = match &mut request.message {
        Message::One(call) => vec![call],
        Message::Batch(calls) => calls.iter_mut().collect(),
    };
    for (i, call) in calls.into_iter().enumerate() {
        let Some(id) = &call.id else { continue };
        if !used.contains(&id.to_value().to_string()) {
            continue;
        }
        call.id = Some(match id {
            RequestId::String(s) => RequestId::String(format!("{s}-{case}-{i}")),
            RequestId::Number(_) => {
                RequestId::from(ID_BASE + (case as i64) * 8192 + (i as i64) * 1024 + 1023)
            }
        });
    }
}

/// Whether the frame's id (or a batch element's) is an integer beyond [`MAX_SAFE_ID`]: the
/// odd ids 2^64 - 1 and -2^63 (see [`MAX_SAFE_ID`] for why they are not judged).
fn beyond_safe_id(frame: &[u8]) -> bool {
    let Ok(value) = serde_json::from_slice::<Value>(frame) else {
        return false;
    };
    let unsafe_id = |v: &Value| {
        v.get("id").and_then(Value::as_number).is_some_and(|n| {
            n.as_u64().is_some_and(|u| u > MAX_SAFE_ID)
                || n.as_i64().is_some_and(|i| i.unsigned_abs() > MAX_SAFE_ID)
        })
    };
    match &value {
        Value::Array(items) => items.iter().any(unsafe_id),
        other => unsafe_id(other),
    }
}

/// A hash of a candidate frame (to send each one once).
fn digest(bytes: &[u8]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::hash::DefaultHasher::new();
    bytes.hash(&mut h);
    h.finish()
}

/// The calls of a message.
fn calls(message: &Message) -> Box<dyn Iterator<Item = &Call> + '_> {
    match message {
        Message::One(c) => Box::new(std::iter::once(c)),
        Message::Batch(cs) => Box::new(cs.iter()),
    }
}

/// The first private-use character standing for a byte that is not UTF-8 (U+F0000 + byte).
const BYTE_CHAR: u32 = 0xF_0000;

/// `frame` as a JSON value, each byte that is not UTF-8 turned into the private-use character
/// U+F0000 + byte; `None` when it is not JSON that way (or already holds such characters).
fn decode(frame: &[u8]) -> Option<Value> {
    let mut text = String::new();
    let mut rest = frame;
    loop {
        match std::str::from_utf8(rest) {
            Ok(s) => {
                text.push_str(s);
                break;
            }
            Err(e) => {
                let (good, bad) = rest.split_at(e.valid_up_to());
                text.push_str(std::str::from_utf8(good).ok()?);
                let n = e.error_len().unwrap_or(bad.len()).max(1).min(bad.len());
                for b in &bad[..n] {
                    text.push(char::from_u32(BYTE_CHAR + u32::from(*b))?);
                }
                rest = &bad[n..];
            }
        }
    }
    if std::str::from_utf8(frame).is_ok()
        && text
            .chars()
            .any(|c| (BYTE_CHAR..BYTE_CHAR + 256).contains(&u32::from(c)))
    {
        return None;
    }
    crate::wire::parse_to_depth(&text, SHRINK_DEPTH).ok()
}

/// The compact JSON of `value` with each private-use byte character back as its byte.
fn encode(value: &Value) -> Vec<u8> {
    let text = serde_json::to_string(value).unwrap_or_default();
    let mut out = Vec::with_capacity(text.len());
    for c in text.chars() {
        let code = u32::from(c);
        if (BYTE_CHAR..BYTE_CHAR + 256).contains(&code) {
            out.push((code - BYTE_CHAR) as u8);
        } else {
            let mut buf = [0u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        }
    }
    out
}

/// One step into a JSON value: a member's key or an element's index.
#[derive(Debug, Clone)]
enum Seg {
    Key(String),
    Index(usize),
}

/// A simplification of the value at a path.
#[derive(Debug, Clone)]
enum Edit {
    /// Replace the node with its descendant this many levels down its first-child chain.
    Hoist(Vec<Seg>, usize),
    /// Replace the node with one of its children.
    Child(Vec<Seg>, Seg),
    /// Remove a member or element of the node.
    Remove(Vec<Seg>, Seg),
    /// Keep the characters `[from, to)` of a string.
    Cut(Vec<Seg>, usize, usize),
}

fn same_seg(a: &Seg, b: &Seg) -> bool {
    match (a, b) {
        (Seg::Key(x), Seg::Key(y)) => x == y,
        (Seg::Index(x), Seg::Index(y)) => x == y,
        _ => false,
    }
}

fn child<'a>(v: &'a Value, seg: &Seg) -> Option<&'a Value> {
    match (v, seg) {
        (Value::Object(m), Seg::Key(k)) => m.get(k),
        (Value::Array(a), Seg::Index(i)) => a.get(*i),
        _ => None,
    }
}

fn children(v: &Value) -> Vec<Seg> {
    match v {
        Value::Object(m) => m.keys().cloned().map(Seg::Key).collect(),
        Value::Array(a) => (0..a.len()).map(Seg::Index).collect(),
        _ => Vec::new(),
    }
}

fn at<'a>(v: &'a Value, path: &[Seg]) -> Option<&'a Value> {
    path.iter().try_fold(v, |v, s| child(v, s))
}

fn at_mut<'a>(v: &'a mut Value, path: &[Seg]) -> Option<&'a mut Value> {
    let mut v = v;
    for seg in path {
        v = match (v, seg) {
            (Value::Object(m), Seg::Key(k)) => m.get_mut(k)?,
            (Value::Array(a), Seg::Index(i)) => a.get_mut(*i)?,
            _ => return None,
        };
    }
    Some(v)
}

/// How many containers follow one another down `v`'s first-child chain (`v` included).
fn chain(v: &Value) -> usize {
    let mut n = 0;
    let mut v = v;
    loop {
        let next = match v {
            Value::Object(m) => m.values().next(),
            Value::Array(a) => a.first(),
            _ => None,
        };
        match next {
            Some(c) => {
                n += 1;
                v = c;
            }
            None => return n,
        }
    }
}

/// The simplifications of `value` to try, biggest first: hoists (halving a nesting chain, a
/// child in place of its parent; node by node in preorder), removals, then string cuts.
fn edits(value: &Value) -> Vec<Edit> {
    let mut nodes: Vec<Vec<Seg>> = Vec::new();
    let mut stack = vec![Vec::new()];
    while let Some(path) = stack.pop() {
        if nodes.len() >= SHRINK_NODES {
            break;
        }
        if let Some(v) = at(value, &path) {
            for seg in children(v).into_iter().rev() {
                let mut p = path.clone();
                p.push(seg);
                stack.push(p);
            }
        }
        nodes.push(path);
    }
    // Per node, in preorder: its hoists (halving a nesting chain), then each child in its
    // place; after every node's, the removals, then the string cuts.
    let mut hoists = Vec::new();
    let mut removals = Vec::new();
    let mut cuts = Vec::new();
    for path in &nodes {
        let Some(v) = at(value, path) else { continue };
        // Hoists at the top of a first-child chain only: lower down they cut the same levels.
        let top = path.is_empty()
            || path.last().is_some_and(|last| {
                at(value, &path[..path.len() - 1])
                    .map(children)
                    .and_then(|c| c.first().cloned())
                    .is_none_or(|first| !same_seg(&first, last))
            });
        let depth = chain(v);
        if top && depth >= 2 {
            let mut k = depth / 2;
            while k >= 1 {
                hoists.push(Edit::Hoist(path.clone(), k));
                k /= 2;
            }
        }
        let kids = children(v);
        let only = kids.len() == 1;
        for seg in kids {
            hoists.push(Edit::Child(path.clone(), seg.clone()));
            if !only {
                removals.push(Edit::Remove(path.clone(), seg));
            }
        }
        if let Value::String(s) = v {
            let n = s.chars().count();
            let mut size = n / 2;
            if n > 0 {
                cuts.push(Edit::Cut(path.clone(), 0, 0));
            }
            while size >= 1 {
                let mut from = 0;
                while from < n {
                    // Keep everything but [from, from + size).
                    cuts.push(Edit::Cut(path.clone(), from, (from + size).min(n)));
                    from += size;
                }
                size /= 2;
            }
        }
    }
    hoists.into_iter().chain(removals).chain(cuts).collect()
}

/// `value` with `edit` applied, if it applies.
fn apply(value: &Value, edit: &Edit) -> Option<Value> {
    let mut out = value.clone();
    match edit {
        Edit::Hoist(path, k) => {
            let mut node = at(value, path)?;
            for _ in 0..*k {
                node = match node {
                    Value::Object(m) => m.values().next()?,
                    Value::Array(a) => a.first()?,
                    _ => return None,
                };
            }
            *at_mut(&mut out, path)? = node.clone();
        }
        Edit::Child(path, seg) => {
            let c = child(at(value, path)?, seg)?.clone();
            *at_mut(&mut out, path)? = c;
        }
        Edit::Remove(path, seg) => match (at_mut(&mut out, path)?, seg) {
            (Value::Object(m), Seg::Key(k)) => {
                m.shift_remove(k)?;
            }
            (Value::Array(a), Seg::Index(i)) if *i < a.len() => {
                a.remove(*i);
            }
            _ => return None,
        },
        Edit::Cut(path, from, to) => {
            let Value::String(s) = at_mut(&mut out, path)? else {
                return None;
            };
            let kept: String = if from == to {
                String::new()
            } else {
                s.chars()
                    .enumerate()
                    .filter(|(i, _)| *i < *from || *i >= *to)
                    .map(|(_, c)| c)
                    .collect()
            };
            *s = kept;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A frame nested past serde_json's 128 levels still has its id recorded: a server that
    /// read it has seen the id, and a later frame reusing it would be a reused request id
    /// (as mcp-server-fetch showed, which then answers nothing).
    #[test]
    fn ids_of_frames_nested_past_128_levels_are_recorded() {
        let mut params = String::from("1");
        for _ in 0..300 {
            params = format!("[{params}]");
        }
        let frame = format!(r#"{{"jsonrpc":"2.0","id":"abc","method":"ping","params":{params}}}"#);
        assert_eq!(frame_ids(frame.as_bytes()), [r#""abc""#]);
        assert_eq!(frame_ids(br#"[{"id":-1},{"id":2}]"#), ["-1", "2"]);
    }

    #[test]
    fn bytes_that_are_not_utf8_survive_decode_and_encode() {
        let frame = b"{\"a\":\"x\xffy\",\"b\":[1,2]}";
        let value = decode(frame).expect("JSON apart from the byte");
        assert_eq!(encode(&value), frame.to_vec());
        assert!(decode(b"{\"a\":").is_none());
    }

    #[test]
    fn hoisting_halves_a_nesting_chain() {
        let deep =
            crate::wire::parse_to_depth(&format!("{}1{}", "[".repeat(100), "]".repeat(100)), 200)
                .unwrap();
        let edits = edits(&deep);
        let Some(Edit::Hoist(path, k)) = edits.first() else {
            panic!("{:?}", edits.first());
        };
        assert!(path.is_empty());
        assert_eq!(*k, 50);
        let hoisted = apply(&deep, &edits[0]).unwrap();
        assert_eq!(crate::wire::json_depth(&encode(&hoisted), 1000), 50);
    }

    #[test]
    fn the_same_seed_draws_the_same_frames() {
        for case in 1..50 {
            let a = draw(7, case, ProtocolVersion::V2025_11_25).map(|r| r.to_bytes());
            let b = draw(7, case, ProtocolVersion::V2025_11_25).map(|r| r.to_bytes());
            assert_eq!(a, b);
        }
        assert_ne!(
            draw(7, 1, ProtocolVersion::V2025_11_25).map(|r| r.to_bytes()),
            draw(8, 1, ProtocolVersion::V2025_11_25).map(|r| r.to_bytes())
        );
    }

    /// The structure phase alone, with "nests deeper than 64" as the failure: a generated
    /// frame of several hundred levels comes down to 65 levels of its nesting in a few dozen
    /// candidates.
    #[test]
    fn structure_shrinking_halves_deep_nesting_down_to_the_bound() {
        let mut shrunk = 0;
        for case in 1..400 {
            let Some(r) = draw(1, case, ProtocolVersion::V2026_07_28) else {
                continue;
            };
            let bytes = r.to_bytes();
            if !matches!(r.near_miss, Some(crate::fuzz::NearMiss::DeepNesting { .. }))
                || crate::wire::json_depth(&bytes, 10_000) <= 64
            {
                continue;
            }
            let mut value = decode(&bytes).expect("a generated frame is JSON");
            assert_eq!(encode(&value), bytes);
            let (mut steps, mut tried) = (0, std::collections::HashSet::new());
            'rounds: loop {
                for edit in edits(&value) {
                    let Some(c) = apply(&value, &edit) else {
                        continue;
                    };
                    let f = encode(&c);
                    if f.len() >= encode(&value).len() || !tried.insert(digest(&f)) {
                        continue;
                    }
                    steps += 1;
                    if crate::wire::json_depth(&f, 10_000) > 64 {
                        value = c;
                        continue 'rounds;
                    }
                }
                break;
            }
            let end = encode(&value);
            assert_eq!(crate::wire::json_depth(&end, 10_000), 65, "case {case}");
            assert!(steps < 60, "case {case}: {steps} steps");
            shrunk += 1;
            if shrunk == 5 {
                break;
            }
        }
        assert_eq!(shrunk, 5);
    }
}
