//! The case scheduler of the generated phase (`--in-flight K`): the cases of every tool run
//! on one session with up to K `tools/call` requests outstanding at once, so that a slow tool
//! never stalls the others (each tool keeps at most half the slots while another has cases to
//! send, and gets them all once it is the last). Responses are matched to
//! their requests by id; each call is still one [`Exchange`], judged on its own.
//!
//! Liveness is checked on a cadence, not after every call: after [`CADENCE`] cases, and at
//! once after an anomaly (a call unanswered, the server gone, a write failed, a violation),
//! the outstanding calls are drained and one liveness ping is sent. When that ping fails,
//! the window of cases since the last good ping is replayed one case at a time on a fresh
//! server (each followed by its own ping, as in the serial phase), so that the finding still
//! names exactly one case, shrunk. Violations are shrunk one call at a time after the drain.
//!
//! Under a fake upstream (fault injection) the serial phase runs instead: which calls reached
//! the upstream is then known per call only when one call runs at a time.

use std::collections::{HashSet, VecDeque};
use std::time::{Duration, Instant};

use proptest::strategy::{BoxedStrategy, Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use serde_json::Value;

use super::generated::{
    BOUNDARY_CASES, CaseOutcome, GEN_SETUP_TIME, HostileVariants, schema_for, tool_seed,
};
use super::{Campaign, Event, ToolGenerated, call_key};
use crate::finding::{Finding, Severity};
use crate::generate::{Case, GenOptions, Generator, Violation};
use crate::oracle;
use crate::session::{Exchange, Expect, Outcome, Probe, Received, ReceivedItem};
use crate::wire::{Message, RequestId, ResponseId};

/// Requests outstanding at once by default (`--in-flight`).
pub const DEFAULT_IN_FLIGHT: usize = 8;
/// Cases between two liveness checks when nothing went wrong.
pub const CADENCE: usize = 32;
/// Request bytes of the window's cases at which the liveness check comes before
/// [`CADENCE`] cases: each finished case of the window is kept with its value tree (for
/// shrinking, should the check fail), and a large schema's tree takes hundreds of times its
/// frame (one tool of 1 000 required properties: frames of about 6 KiB, and 32 cases of the
/// window about 75 MiB; with this bound, about 11 cases).
pub const WINDOW_BYTES: usize = 64 * 1024;
/// Answered calls remembered to recognise a second answer with the same id.
const RECENT: usize = 512;
/// The lane number of a liveness ping in flight.
const PING: usize = usize::MAX;
/// A call that takes this long makes its tool slow: one call of it at a time from then on.
pub const SLOW_CALL: Duration = Duration::from_millis(1_000);
/// The phase of a lane's first case when the scheduler also makes the baseline calls: the
/// tool's call with its planned arguments, sent and judged as the baseline phase's
/// (`tools/call NAME`, the same finding fingerprints), within the tool's time budget like
/// its other cases (a baseline call still reporting progress when the budget runs out is
/// given up on, not judged; a silent one gets the whole timeout), and no replay file.
const BASELINE: &str = "baseline";

/// A random case's value tree, kept for shrinking.
enum Tree {
    Valid(Box<dyn ValueTree<Value = Value>>),
    Invalid(Box<dyn ValueTree<Value = (Value, Violation)>>),
}

/// A case waiting for its turn: a generated case, or (phase [`BASELINE`]) the tool's
/// baseline call with its planned arguments.
struct Pending {
    value: Value,
    violation: Option<Violation>,
    phase: &'static str,
    tree: Option<Tree>,
}

/// A tool's random cases, drawn one at a time as they are sent (a case of a large schema and
/// its value tree can take megabytes): the valid ones first, then the invalid ones, from the
/// tool's own seeded runner, as the serial phase draws them.
struct Draws {
    runner: TestRunner,
    valid: Option<BoxedStrategy<Value>>,
    valid_left: usize,
    invalid: Option<BoxedStrategy<(Value, Violation)>>,
    invalid_left: usize,
}

impl Draws {
    fn is_empty(&self) -> bool {
        (self.valid.is_none() || self.valid_left == 0)
            && (self.invalid.is_none() || self.invalid_left == 0)
    }

    /// The next random case, or `None` when every one was drawn (or a strategy could not
    /// draw: the rest of that kind is given up, as the serial phase does).
    fn next(&mut self) -> Option<Pending> {
        if let Some(strategy) = &self.valid
            && self.valid_left > 0
        {
            self.valid_left -= 1;
            if let Ok(tree) = strategy.new_tree(&mut self.runner) {
                return Some(Pending {
                    value: tree.current(),
                    violation: None,
                    phase: "random",
                    tree: Some(Tree::Valid(tree)),
                });
            }
            self.valid_left = 0;
        }
        if let Some(strategy) = &self.invalid
            && self.invalid_left > 0
        {
            self.invalid_left -= 1;
            if let Ok(tree) = strategy.new_tree(&mut self.runner) {
                let (value, violation) = tree.current();
                return Some(Pending {
                    value,
                    violation: Some(violation),
                    phase: "random",
                    tree: Some(Tree::Invalid(tree)),
                });
            }
            self.invalid_left = 0;
        }
        None
    }
}

/// One tool's cases and bookkeeping.
struct Lane {
    tool: String,
    /// Cases ready to send (boundary and hostile cases, and cases put back), before the
    /// random ones still to draw.
    queue: VecDeque<Pending>,
    /// Boxed: a retired tool keeps its lane (its record is written at the end of the phase),
    /// and 5 000 lanes with a test runner each inline would take megabytes.
    draws: Option<Box<Draws>>,
    /// Retired (see [`Lane::retire`]) with cases never sent.
    left_over: bool,
    started: Instant,
    /// When it was retired (its elapsed time ends there).
    ended: Option<Instant>,
    budget: Duration,
    /// Generated calls sent (the summary's count).
    calls: u64,
    /// Calls sent, the baseline call included (the budget binds once one was).
    sent: u64,
    in_flight: usize,
    /// A call of the tool went unanswered: its other cases are skipped.
    stalled: bool,
    /// A call was given up on at the tool's time budget.
    capped: bool,
    /// Calls answered so far, and whether any was slow (took [`SLOW_CALL`] or more, or
    /// reported progress): a tool runs one call at a time until its first answer, and for
    /// good once it is slow, so that only fast tools have several calls in flight.
    answered: u64,
    slow: bool,
    skipped: Option<String>,
    limits: Vec<String>,
}

impl Lane {
    /// Whether its time budget is spent. Not before its first call was sent: building its
    /// generator can take a small share of the phase (5 000 tools) whole, and a tool the
    /// scheduler took on gets at least one case, as in the serial phase.
    fn over(&self) -> bool {
        self.sent > 0 && self.started.elapsed() >= self.budget
    }

    /// Milliseconds from its start to its retirement (or to now).
    fn elapsed_ms(&self) -> u64 {
        let end = self.ended.unwrap_or_else(Instant::now);
        u64::try_from(end.duration_since(self.started).as_millis()).unwrap_or(u64::MAX)
    }

    fn has_work(&self) -> bool {
        !self.stalled && !self.capped && self.has_cases() && !self.over()
    }

    /// Whether cases are left, queued or still to draw.
    fn has_cases(&self) -> bool {
        !self.queue.is_empty() || self.draws.as_ref().is_some_and(|d| !d.is_empty())
    }

    /// The next case: a queued one, else the next random one drawn.
    fn next_case(&mut self) -> Option<Pending> {
        self.queue
            .pop_front()
            .or_else(|| self.draws.as_mut()?.next())
    }

    /// Whether the tool is done with: nothing more to send and nothing in flight.
    fn finished(&self) -> bool {
        self.in_flight == 0 && !self.has_work()
    }

    /// Frees a finished tool's cases and generator (a campaign of 5 000 tools keeps only the
    /// ones at work), remembering whether some were never sent.
    fn retire(&mut self) {
        self.ended.get_or_insert_with(Instant::now);
        if self.draws.is_none() && self.queue.is_empty() {
            return;
        }
        self.left_over |= self.has_cases();
        self.draws = None;
        self.queue = VecDeque::new();
    }
}

/// A request in flight.
struct Flight {
    /// The order it was sent in.
    seq: u64,
    lane: usize,
    case: Pending,
    id: RequestId,
    probe: Probe,
    bytes: Vec<u8>,
    sent_at: Instant,
    timeout: Duration,
    deadline: Instant,
    hard: Instant,
    capped: bool,
    at_cap: bool,
    token: String,
    post: Option<u64>,
    received: Vec<Received>,
    answered: Option<usize>,
    http_done: bool,
    outcome: Option<Outcome>,
    /// Another call was in flight at some point while this one was: left unanswered without
    /// having reported progress, it is sent again alone before it is judged (see
    /// [`oracle::concurrent_dropped`]).
    company: bool,
    /// It reported progress: the server is working on it, whatever else is in flight.
    working: bool,
}

impl Flight {
    /// Progress for this call came at `at`: the deadline moves to one timeout after it, up to
    /// the call's cap (never earlier than it was).
    fn progressed(&mut self, at: Instant) {
        self.working = true;
        (self.deadline, self.at_cap) =
            crate::session::progressed(at, self.timeout, self.deadline, self.hard, self.capped);
    }
}

/// A call answered, remembered for a while to recognise a second answer with its id.
#[derive(Clone)]
struct AnsweredCall {
    id: RequestId,
    label: String,
    tool: String,
    /// The start of its request frame ([`oracle::KEPT_BYTES`]): only an excerpt of it is
    /// ever quoted, and [`RECENT`] whole frames of a large schema's cases would take megabytes.
    sent: Vec<u8>,
    /// The size of the whole request frame, in bytes.
    sent_len: usize,
}

/// A finished case of the current window, kept until the next good liveness check.
struct Done {
    /// The order it was sent in.
    seq: u64,
    lane: usize,
    exchange: Exchange,
    findings: Vec<Finding>,
    tree: Option<Tree>,
}

impl Campaign<'_> {
    /// Whether the generated phase runs through the scheduler: more than one request in
    /// flight allowed, and no fake upstream (see the module docs).
    pub(super) fn schedules_cases(&self) -> bool {
        self.config.in_flight > 1 && self.injectors.is_none()
    }

    /// The generated phase through the scheduler (see the module docs): `valid` valid and
    /// `invalid` invalid random cases per tool after its boundary and hostile cases, each
    /// tool within `--tool-budget-ms` and the phase within its budget (`by_run`: a share of
    /// `--budget-ms`); the tools not reached within it are recorded as skipped. With
    /// `baseline`, each tool's baseline call is its first case (the baseline phase is then
    /// not run on its own). Returns how many of `tools` it reached.
    pub(super) async fn generated_scheduled(
        &mut self,
        tools: &[(String, Value, String)],
        valid: usize,
        invalid: usize,
        phase_budget: Duration,
        by_run: bool,
        baseline: bool,
    ) -> usize {
        let phase_started = Instant::now();
        let budget = phase_budget.min(self.config.tool_budget);
        let k = self.config.in_flight.max(1);
        // Tools are taken in order, up to `k` at work at once: a tool's generator and cases
        // are built when its turn comes (5 000 tools are not all planned at once).
        let mut lanes: Vec<Lane> = Vec::new();
        let mut next_tool = 0;
        let per_lane = k.div_ceil(2).max(1);
        let mut flights: Vec<Flight> = Vec::new();
        let mut window: Vec<Done> = Vec::new();
        // The keys of the cases sent and not yet counted in `self.called` (in flight, or lost
        // with a failed write): a case whose key is in either is not sent again. Pruned of
        // the counted ones as it grows, so that it holds about the window, not every call of
        // the phase (see `prune_at`).
        let mut submitted: HashSet<u64> = HashSet::new();
        let mut prune_at = 2 * k;
        // A liveness check is due (cadence, or an anomaly); the ping in flight, if one is.
        let mut due = false;
        let mut checking = false;
        // Violations to shrink once nothing is in flight (shrinking runs one call at a time).
        let mut to_shrink: Vec<Done> = Vec::new();
        // A call went unanswered (or was given up on) on a live server that may still be
        // running it: once nothing else is in flight, the server is restarted fresh.
        let mut restart: Option<String> = None;
        let mut batch_started = Instant::now();
        // The latest calls answered (id, then what the finding needs), to tell a second
        // answer with an id already answered: the server mixed up requests in flight.
        let mut recent: VecDeque<AnsweredCall> = VecDeque::new();
        // That second answer: the call whose id it carries, the raw answer, the calls out.
        let mut mixed: Option<(AnsweredCall, Vec<u8>, usize)> = None;
        // Calls left unanswered and silent while others were in flight, with how many were
        // out: not judged as they are, they wait for the liveness check; when the server
        // answers it, each runs again alone on a fresh server (see `alone`), else they are
        // part of the window replayed.
        let mut suspects: Vec<(Flight, usize)> = Vec::new();
        // The server dropped or stalled a call because of the others in flight (reported):
        // the phase goes on one call at a time.
        let mut dropped = false;
        if self.session.is_none() {
            self.restart("no server running").await;
        }
        if let Some(s) = self.session.as_mut() {
            s.begin_batch();
        }
        loop {
            if self.gave_up {
                break;
            }
            // A check due with nothing to check (the window was just settled or replayed onto
            // a fresh server) is moot: it must not hold the next cases back.
            if due && !checking && window.is_empty() && suspects.is_empty() {
                due = false;
            }
            // A check due: a ping joins the calls in flight (calls of a slow tool are not
            // waited for); no new case starts until it is answered.
            if due && !checking && (!window.is_empty() || !suspects.is_empty()) {
                match self.launch_ping().await {
                    Some(ping) => {
                        flights.push(ping);
                        checking = true;
                    }
                    None => {
                        // Nothing can be written: the server is gone; find out at once.
                        self.abandon(&mut flights, &mut lanes, &mut window);
                        self.land_suspects(&mut suspects, &mut lanes, &mut window);
                        self.checkpoint(&mut window, &mut lanes).await;
                        if !self.begin_again(&mut batch_started) {
                            break;
                        }
                    }
                }
                due = false;
            }
            // Tools whose turn came: one at work per slot.
            // (Not while a suspect waits: should the phase go on one call at a time, the tools
            // get their budget again, and need their cases.)
            for lane in lanes
                .iter_mut()
                .filter(|l| suspects.is_empty() && l.finished())
            {
                lane.retire();
            }
            while next_tool < tools.len()
                && phase_started.elapsed() < phase_budget
                && lanes.iter().filter(|l| !l.finished()).count() < k
            {
                let planned = &tools[next_tool];
                let share = share(
                    budget,
                    phase_budget,
                    phase_started,
                    tools.len() - next_tool,
                    k,
                );
                next_tool += 1;
                let lane = self.lane(planned, valid, invalid, share, baseline);
                lanes.push(lane);
            }
            // Refill.
            while !checking
                && !due
                && restart.is_none()
                && flights.len() < k
                && phase_started.elapsed() < phase_budget
            {
                let cap = lane_cap(&lanes, next_tool < tools.len(), per_lane, k);
                let Some(li) = pick(&lanes, cap) else {
                    break;
                };
                let Some(case) = lanes[li].next_case() else {
                    continue;
                };
                let key = call_key(&lanes[li].tool, &case.value);
                if self.called.contains(&key) || !submitted.insert(key) {
                    continue;
                }
                let baseline = case.phase == BASELINE;
                let Some(mut flight) = self.launch(&lanes[li], li, case).await else {
                    due = true;
                    break;
                };
                for other in flights.iter_mut().filter(|f| f.lane != PING) {
                    other.company = true;
                    flight.company = true;
                }
                lanes[li].in_flight += 1;
                lanes[li].sent += 1;
                lanes[li].calls += u64::from(!baseline);
                flights.push(flight);
            }
            if let Some(reason) = restart.take() {
                // As the serial phase does, the server still running a call given up on is
                // restarted at once (it would go on sending that call's progress, or its
                // load, into the other calls): the calls still in flight are sent again on
                // the fresh server.
                requeue(&mut flights, &mut lanes, &mut submitted);
                self.fresh_restart(&reason).await;
                if !self.begin_again(&mut batch_started) {
                    break;
                }
                continue;
            }
            if flights.is_empty() {
                let more = ((lanes.iter().any(Lane::has_work) || next_tool < tools.len())
                    && phase_started.elapsed() < phase_budget
                    && !self.gave_up)
                    || !suspects.is_empty();
                if !more {
                    // The end: the last window's check, then the shrinking.
                    self.checkpoint(&mut window, &mut lanes).await;
                    for d in std::mem::take(&mut to_shrink) {
                        if self.gave_up {
                            break;
                        }
                        self.settle(d, &lanes).await;
                    }
                    break;
                }
                if !window.is_empty() {
                    due = true;
                }
                continue;
            }
            // Wait for the next item or the earliest deadline.
            let until = flights
                .iter()
                .map(|f| f.deadline)
                .min()
                .unwrap_or_else(Instant::now);
            let Some(session) = self.session.as_mut() else {
                break;
            };
            let item = session.pull(until).await;
            let now = Instant::now();
            if let Some(ReceivedItem::Frame(frame)) = &item
                && let Ok(Message::Response(r)) = &frame.message
                && let ResponseId::Id(id) = r.id()
                && !flights.iter().any(|f| &f.id == id)
                && let Some(earlier) = recent.iter().find(|a| &a.id == id)
            {
                // A second answer with the id of a call already answered: the answer of a
                // call in flight under the wrong id. Nothing more is judged concurrently.
                mixed = Some((
                    earlier.clone(),
                    frame.raw.clone(),
                    flights.iter().filter(|f| f.lane != PING).count() + 1,
                ));
                break;
            }
            let quiet = item.is_none();
            if let Some(item) = item {
                route(&mut flights, item, now, session.is_stdio());
            }
            // Progress left out of the record (past the keep budget, while another call
            // floods) still extends its call's deadline.
            for (token, at) in session.take_progress_heard() {
                if let Some(f) = flights
                    .iter_mut()
                    .find(|f| f.outcome.is_none() && f.token == token)
                {
                    f.progressed(at);
                }
            }
            // Deadlines are checked after every item, not only when nothing came: a steady
            // stream (another call's progress, a flood) must not keep a call open past its
            // deadline or its tool's budget, which the serial phase enforces.
            let gone = quiet && (session.has_exited().is_some() || session.output_closed());
            for f in flights.iter_mut().filter(|f| f.outcome.is_none()) {
                if let Some(index) = f.answered {
                    // Answered; its HTTP exchange did not end in time.
                    if gone || now >= f.deadline {
                        f.outcome = Some(Outcome::Answered { index });
                    }
                } else if gone {
                    f.outcome = Some(Outcome::Gone(session.has_exited()));
                } else if now >= f.deadline {
                    f.outcome = Some(if f.at_cap {
                        Outcome::Abandoned
                    } else {
                        Outcome::NoAnswer
                    });
                }
            }
            // Judge the finished ones; the ping's answer settles the window.
            let mut ping: Option<Flight> = None;
            let mut i = 0;
            while i < flights.len() {
                if flights[i].outcome.is_none() {
                    i += 1;
                    continue;
                }
                let f = flights.swap_remove(i);
                if f.lane == PING {
                    ping = Some(f);
                    continue;
                }
                lanes[f.lane].in_flight -= 1;
                if f.company && !f.working && matches!(f.outcome, Some(Outcome::NoAnswer)) {
                    // Not judged as it is: the others in flight may be why it went unanswered
                    // (a call that reported progress was being worked on: judged as it is).
                    let out = flights.iter().filter(|f| f.lane != PING).count() + 1;
                    suspects.push((f, out));
                    due = true;
                    continue;
                }
                let (done, anomaly) = self.land(f, &mut lanes);
                due |= anomaly;
                if let Expect::Response { id, .. } = &done.exchange.expect
                    && matches!(done.exchange.outcome, Outcome::Answered { .. })
                {
                    if recent.len() >= RECENT {
                        recent.pop_front();
                    }
                    recent.push_back(AnsweredCall {
                        id: id.clone(),
                        label: done.exchange.probe.label(),
                        tool: lanes[done.lane].tool.clone(),
                        sent: done.exchange.sent
                            [..done.exchange.sent.len().min(oracle::KEPT_BYTES)]
                            .to_vec(),
                        sent_len: done.exchange.sent.len(),
                    });
                }
                window.push(done);
            }
            if submitted.len() > prune_at {
                // A key counted in `self.called` skips its case by itself.
                submitted.retain(|key| !self.called.contains(key));
                prune_at = (2 * submitted.len()).max(2 * k);
            }
            if let Some(ping) = ping {
                checking = false;
                let ping = self.ping_exchange(ping);
                let busy = still_running(&window);
                if self.window_alive(&mut window, &ping, &mut to_shrink) {
                    due = false;
                    restart = restart.or(busy);
                    if !suspects.is_empty() {
                        // Alive, yet silent on these calls: each runs again alone on a fresh
                        // server (what is still in flight is sent again after them).
                        requeue(&mut flights, &mut lanes, &mut submitted);
                        restart = None;
                        let (f, in_flight) = &suspects[0];
                        let reason = format!(
                            "{} went unanswered with {in_flight} calls in flight; it runs again alone",
                            f.probe.label()
                        );
                        self.fresh_restart(&reason).await;
                        for (f, in_flight) in std::mem::take(&mut suspects) {
                            if dropped || self.gave_up {
                                // Reported once; the rest run one call at a time anyway.
                                put_back(f, &mut lanes, &mut submitted);
                                continue;
                            }
                            dropped = self.alone(f, in_flight, &mut lanes).await;
                        }
                        if dropped || !self.begin_again(&mut batch_started) {
                            break;
                        }
                        continue;
                    }
                } else {
                    // The server died or stopped answering: what is still in flight is lost
                    // with it; the window is replayed one case at a time.
                    self.abandon(&mut flights, &mut lanes, &mut window);
                    self.land_suspects(&mut suspects, &mut lanes, &mut window);
                    self.replay_window(&mut window, &ping, &mut lanes).await;
                    if !self.begin_again(&mut batch_started) {
                        break;
                    }
                }
            }
            if window.len() >= CADENCE || window_bytes(&window) >= WINDOW_BYTES {
                due = true;
            }
        }
        let serial = mixed.is_some() || dropped;
        if let Some((earlier, stray, in_flight)) = mixed {
            let finding = oracle::concurrency::check(
                &self.context(),
                &oracle::concurrency::MixedUp {
                    label: &earlier.label,
                    tool: Some(&earlier.tool),
                    request: &earlier.sent,
                    request_len: earlier.sent_len,
                    stray: &stray,
                    in_flight,
                },
            );
            self.add(vec![finding]);
            // What ran concurrently since the last good check is not judged: it runs again,
            // with the rest, one call at a time on a fresh server.
            requeue(&mut flights, &mut lanes, &mut submitted);
            unwind(&mut window, &mut lanes, &mut self.called);
            self.fresh_restart("the server mixed up concurrent requests")
                .await;
        }
        if serial {
            // Each tool's budget starts again: the time it lost to the server's handling of
            // concurrent requests (a deadline waited out for a dropped call) is not its own.
            let now = Instant::now();
            for lane in lanes.iter_mut().filter(|l| l.has_cases()) {
                lane.started = now;
                lane.ended = None;
            }
            self.serial_rest(&mut lanes, phase_started, phase_budget)
                .await;
            // The tools not yet at work run one call at a time too.
            while next_tool < tools.len() && !self.gave_up && phase_started.elapsed() < phase_budget
            {
                let planned = &tools[next_tool];
                let share = share(
                    budget,
                    phase_budget,
                    phase_started,
                    tools.len() - next_tool,
                    1,
                );
                next_tool += 1;
                let lane = self.lane(planned, valid, invalid, share, baseline);
                lanes.push(lane);
                let last = lanes.len() - 1;
                self.serial_rest(&mut lanes[last..], phase_started, phase_budget)
                    .await;
            }
            for d in std::mem::take(&mut to_shrink) {
                if self.gave_up {
                    break;
                }
                self.settle(d, &lanes).await;
            }
            window.clear();
        }
        if let Some(s) = self.session.as_mut()
            && let Some(dropped) = s.end_batch(batch_started)
            && let Some(last) = window.last_mut()
        {
            last.exchange.received.push(dropped);
        }
        for lane in lanes {
            let cut = if lane.stalled {
                Some("deadline missed")
            } else if lane.capped || (lane.over() && (lane.has_cases() || lane.left_over)) {
                Some("time budget")
            } else {
                None
            };
            let mut skipped = lane.skipped.clone();
            if skipped.is_none() && lane.sent == 0 && (lane.has_cases() || lane.left_over) {
                skipped = Some(format!(
                    "the generated phase's budget ({} ms) was spent before its first case was sent",
                    phase_budget.as_millis()
                ));
            }
            if skipped.is_none() && lane.calls == 0 && (lane.has_cases() || lane.left_over) {
                skipped = Some(if lane.capped {
                    format!(
                        "its baseline call was still reporting progress when its time budget \
                         ({} ms) ran out: given up on, not judged",
                        lane.budget.as_millis()
                    )
                } else {
                    format!(
                        "its time budget ({} ms) ran out before its first generated case, its \
                         baseline call made",
                        lane.budget.as_millis()
                    )
                });
            }
            let elapsed_ms = lane.elapsed_ms();
            let phase = ToolGenerated {
                tool: lane.tool,
                calls: lane.calls,
                elapsed_ms,
                cut,
                skipped,
                limits: lane.limits,
            };
            self.shared.emit(&Event::ToolGenerated { phase: &phase });
            self.summary.generated.push(phase);
        }
        if next_tool < tools.len() && !self.gave_up {
            self.budget_spent(&tools[next_tool..], next_tool, phase_budget, by_run);
        }
        next_tool
    }

    /// One tool's cases, in the serial phase's order: boundary and hostile cases queued,
    /// random valid then random invalid ones drawn as they are sent (with their trees, for
    /// shrinking); with `baseline`, the tool's baseline call first (see [`BASELINE`]).
    fn lane(
        &mut self,
        (tool, input_schema, url_base): &(String, Value, String),
        valid: usize,
        invalid: usize,
        budget: Duration,
        baseline: bool,
    ) -> Lane {
        let started = Instant::now();
        let mut lane = Lane {
            tool: tool.to_owned(),
            queue: VecDeque::new(),
            draws: None,
            left_over: false,
            started,
            ended: None,
            budget,
            calls: 0,
            sent: 0,
            in_flight: 0,
            stalled: false,
            capped: false,
            answered: 0,
            slow: false,
            skipped: None,
            limits: Vec::new(),
        };
        if baseline && let Some(arguments) = self.plan.arguments(tool) {
            lane.queue.push_back(Pending {
                value: arguments.clone(),
                violation: None,
                phase: BASELINE,
                tree: None,
            });
        }
        let version = self.context().version;
        let schema = schema_for(input_schema, version);
        let mut opts = GenOptions::with_url_base(url_base);
        opts.deadline = Some(started + budget.min(GEN_SETUP_TIME));
        let generator = match Generator::new(&schema, &opts) {
            Ok(g) => g,
            Err(e) => {
                lane.skipped = Some(format!("{}: {e}", e.kind()));
                if !e.is_budget() {
                    self.schema_finding(tool, &e);
                }
                return lane;
            }
        };
        if let Ok(cases) = generator.boundary() {
            for case in cases.into_iter().take(BOUNDARY_CASES) {
                let (value, violation) = match case {
                    Case::Valid { value, .. } => (value, None),
                    Case::Invalid { value, violation } => (value, Some(violation)),
                };
                lane.queue.push_back(Pending {
                    value,
                    violation,
                    phase: "boundary",
                    tree: None,
                });
            }
        }
        if let Ok(example) = generator.example() {
            let variants = HostileVariants::new(input_schema, &example);
            if variants.sampled() {
                lane.limits.push(format!(
                    "hostile strings: {} of {} property × string combinations, spread evenly",
                    super::generated::HOSTILE_CASES,
                    variants.combinations()
                ));
            }
            for value in variants.filter(|v| generator.is_valid(v)) {
                lane.queue.push_back(Pending {
                    value,
                    violation: None,
                    phase: "hostile",
                    tree: None,
                });
            }
        }
        lane.draws = Some(Box::new(Draws {
            runner: TestRunner::new_with_rng(
                Config::default(),
                TestRng::from_seed(RngAlgorithm::ChaCha, &tool_seed(self.config.seed, tool)),
            ),
            valid: generator.valid().ok(),
            valid_left: valid,
            invalid: generator.invalid().ok(),
            invalid_left: invalid,
        }));
        lane.limits.extend(
            generator
                .budget_notes()
                .iter()
                .map(|n| format!("{} at {}", n.message, n.pointer)),
        );
        lane
    }

    /// Sends one case; `None` when no server is running or the frame could not be written
    /// (the caller drains and checks liveness).
    async fn launch(&mut self, lane: &Lane, li: usize, case: Pending) -> Option<Flight> {
        let baseline = case.phase == BASELINE;
        let probe = if baseline {
            self.wedge.started += 1;
            Probe::ToolCall {
                tool: lane.tool.clone(),
                arguments: case.value.clone(),
            }
        } else {
            Probe::Generated {
                tool: lane.tool.clone(),
                arguments: case.value.clone(),
                violation: case.violation.clone(),
                phase: case.phase,
            }
        };
        let label = probe.label();
        self.shared.emit(&Event::Step { label: &label });
        let timeout = self.config.timeout;
        let session = self.session.as_mut()?;
        let client_max = session.config().max_timeout.max(timeout);
        let id = session.next_id();
        let bytes = session.call_frame(&id, &lane.tool, &case.value);
        let sent_at = Instant::now();
        // A call reporting progress is given up on when its tool's budget runs out (the
        // baseline call too); a silent one still gets the whole timeout (`session::progressed`).
        let cap = (lane.started + lane.budget)
            .saturating_duration_since(sent_at)
            .min(client_max);
        let post = session.submit(&bytes).await.ok()?;
        self.sent_seq += 1;
        Some(Flight {
            seq: self.sent_seq,
            lane: li,
            case,
            token: format!("mcp-chaos-{id}"),
            id,
            probe,
            bytes,
            sent_at,
            timeout,
            deadline: sent_at + timeout,
            hard: sent_at + cap,
            capped: cap < client_max,
            at_cap: false,
            post,
            received: Vec::new(),
            answered: None,
            http_done: false,
            outcome: None,
            company: false,
            working: false,
        })
    }

    /// Turns a finished flight into its exchange, counts and judges it; returns it with
    /// whether it was an anomaly (the window is then drained and liveness checked).
    fn land(&mut self, f: Flight, lanes: &mut [Lane]) -> (Done, bool) {
        let timeout_ms = u64::try_from(self.config.timeout.as_millis()).unwrap_or(u64::MAX);
        let outcome = f.outcome.unwrap_or(Outcome::NoAnswer);
        if matches!(outcome, Outcome::NoAnswer | Outcome::Abandoned)
            && let Some(s) = self.session.as_mut()
        {
            s.forget(f.id.clone());
        }
        let exchange = Exchange {
            probe: f.probe,
            sent: f.bytes,
            expect: Expect::Response {
                id: f.id,
                or_null: false,
                fence: false,
            },
            received: f.received,
            preceding: 0,
            outcome,
            elapsed: f.sent_at.elapsed(),
            timeout_ms,
            fault: None,
        };
        self.count(&exchange);
        let findings = oracle::judge(&self.context(), &exchange);
        let lane = &mut lanes[f.lane];
        lane.answered += u64::from(matches!(exchange.outcome, Outcome::Answered { .. }));
        lane.slow |= exchange.elapsed >= SLOW_CALL
            || exchange.frames().any(|(_, fr)| {
                matches!(&fr.message, Ok(Message::Notification(n)) if n.method() == "notifications/progress")
            });
        let anomaly = match exchange.outcome {
            Outcome::Answered { .. } => findings.iter().any(|f| f.severity == Severity::Violation),
            Outcome::Abandoned => {
                lane.capped = true;
                true
            }
            Outcome::NoAnswer => {
                lane.stalled = true;
                true
            }
            _ => true,
        };
        (
            Done {
                seq: f.seq,
                lane: f.lane,
                exchange,
                findings,
                tree: f.case.tree,
            },
            anomaly,
        )
    }

    /// With nothing in flight: one liveness ping for the window. When it passes, the
    /// window's findings are recorded (violations shrunk one call at a time) and a server
    /// still busy with a call given up on is restarted fresh; when it fails, the server is
    /// restarted and the window replayed one case at a time to find the case that did it.
    /// Returns whether the scheduler may go on.
    async fn checkpoint(&mut self, window: &mut Vec<Done>, lanes: &mut [Lane]) -> bool {
        let mut done = std::mem::take(window);
        // In the order sent: replays and findings follow the cases' order, not the order the
        // answers happened to come in.
        done.sort_by_key(|d| d.seq);
        let Some(last) = done.last().map(|d| d.exchange.clone()) else {
            return !self.gave_up;
        };
        let Some(session) = self.session.as_mut() else {
            return false;
        };
        let ping = session.liveness().await;
        let stderr = session.stderr_tail();
        self.count(&ping);
        let ctx = self.context();
        let alive = oracle::liveness::check(&ctx, &last, &ping, &stderr);
        let ping_findings = oracle::judge(&ctx, &ping);
        if alive.is_empty() {
            self.add(ping_findings);
            // A server still running a call given up on is restarted first, as the serial
            // phase does at once: shrinking must not share it with that call.
            if let Some(reason) = still_running(&done) {
                self.fresh_restart(&reason).await;
            }
            for d in done {
                self.settle(d, lanes).await;
            }
            return !self.gave_up;
        }
        *window = done;
        self.replay_window(window, &ping, lanes).await
    }

    /// Sends a liveness ping as one more request in flight; `None` when it cannot be written.
    async fn launch_ping(&mut self) -> Option<Flight> {
        let timeout = self.config.timeout;
        let session = self.session.as_mut()?;
        let id = session.next_id();
        let bytes = session.liveness_frame(&id, None);
        let sent_at = Instant::now();
        let post = session.submit(&bytes).await.ok()?;
        Some(Flight {
            seq: 0,
            lane: PING,
            case: Pending {
                value: Value::Null,
                violation: None,
                phase: "liveness",
                tree: None,
            },
            token: format!("mcp-chaos-{id}"),
            id,
            probe: Probe::Liveness,
            bytes,
            sent_at,
            timeout,
            deadline: sent_at + timeout,
            hard: sent_at + timeout,
            capped: false,
            at_cap: false,
            post,
            received: Vec::new(),
            answered: None,
            http_done: false,
            outcome: None,
            company: false,
            working: false,
        })
    }

    /// The exchange of a finished ping flight, counted.
    fn ping_exchange(&mut self, f: Flight) -> Exchange {
        let outcome = f.outcome.unwrap_or(Outcome::NoAnswer);
        if matches!(outcome, Outcome::NoAnswer)
            && let Some(s) = self.session.as_mut()
        {
            s.forget(f.id.clone());
        }
        let exchange = Exchange {
            probe: f.probe,
            sent: f.bytes,
            expect: Expect::Response {
                id: f.id,
                or_null: false,
                fence: false,
            },
            received: f.received,
            preceding: 0,
            outcome,
            elapsed: f.sent_at.elapsed(),
            timeout_ms: u64::try_from(self.config.timeout.as_millis()).unwrap_or(u64::MAX),
            fault: None,
        };
        self.count(&exchange);
        exchange
    }

    /// Judges the window by the `ping` that followed it: when the server is alive, records
    /// the window's findings (the violations with a tree go to `to_shrink`, for later) and
    /// returns true; false when the ping failed (the window is left for a replay).
    fn window_alive(
        &mut self,
        window: &mut Vec<Done>,
        ping: &Exchange,
        to_shrink: &mut Vec<Done>,
    ) -> bool {
        let stderr = self
            .session
            .as_ref()
            .map(|s| s.stderr_tail())
            .unwrap_or_default();
        let ctx = self.context();
        let alive = match window.last() {
            Some(last) => oracle::liveness::check(&ctx, &last.exchange, ping, &stderr),
            None => oracle::liveness::check(&ctx, ping, ping, &stderr),
        };
        if !alive.is_empty() {
            return false;
        }
        let findings = oracle::judge(&ctx, ping);
        self.add(findings);
        let mut done = std::mem::take(window);
        done.sort_by_key(|d| d.seq);
        for d in done {
            if matches!(d.exchange.probe, Probe::ToolCall { .. }) {
                self.add(d.findings);
                continue;
            }
            let violation = d.findings.iter().any(|f| f.severity == Severity::Violation);
            if violation && d.tree.is_some() {
                to_shrink.push(d);
                continue;
            }
            let outcome = self.finalize(CaseOutcome {
                missed: matches!(d.exchange.outcome, Outcome::NoAnswer),
                exchange: d.exchange,
                findings: d.findings,
            });
            self.add(outcome.findings);
        }
        true
    }

    /// Puts the suspects (calls left unanswered among others) into the window, as the calls
    /// they are: the server failed its liveness check, so the window is replayed one case at
    /// a time, and they with it.
    fn land_suspects(
        &mut self,
        suspects: &mut Vec<(Flight, usize)>,
        lanes: &mut [Lane],
        window: &mut Vec<Done>,
    ) {
        for (f, _) in std::mem::take(suspects) {
            let (done, _) = self.land(f, lanes);
            window.push(done);
        }
    }

    /// Ends every flight still out as lost with the server, into the window.
    fn abandon(&mut self, flights: &mut Vec<Flight>, lanes: &mut [Lane], window: &mut Vec<Done>) {
        let status = self.session.as_ref().and_then(|s| s.has_exited());
        for mut f in std::mem::take(flights) {
            if f.lane == PING {
                continue;
            }
            f.outcome = Some(Outcome::Gone(status.clone()));
            lanes[f.lane].in_flight -= 1;
            let (done, _) = self.land(f, lanes);
            window.push(done);
        }
    }

    /// Starts a new batch on the (restarted) session; false when the phase cannot go on.
    fn begin_again(&mut self, batch_started: &mut Instant) -> bool {
        *batch_started = Instant::now();
        match self.session.as_mut() {
            Some(s) if !self.gave_up => {
                s.begin_batch();
                true
            }
            _ => false,
        }
    }

    /// The server failed after `window` (the `ping` after it failed): it is restarted and
    /// every case of the window runs again, one at a time, each followed by its own ping, so
    /// that the case that kills the server is named (and shrunk). When none does, the
    /// failure is reported after the window's last case. Returns whether the phase may go on.
    async fn replay_window(
        &mut self,
        window: &mut Vec<Done>,
        ping: &Exchange,
        lanes: &mut [Lane],
    ) -> bool {
        let mut done = std::mem::take(window);
        done.sort_by_key(|d| d.seq);
        let Some(last) = done.last().map(|d| d.exchange.clone()) else {
            return !self.gave_up;
        };
        let stderr = self
            .session
            .as_ref()
            .map(|s| s.stderr_tail())
            .unwrap_or_default();
        // Should no case reproduce it alone (a failure that depends on the load or on how
        // many calls came before), the failure is reported after the first case still in
        // flight when the server failed: a server that reads its input in order was handling
        // that one (else after the window's last case).
        let culprit = done
            .iter()
            .find(|d| !matches!(d.exchange.outcome, Outcome::Answered { .. }))
            .map_or(last.clone(), |d| d.exchange.clone());
        let alive: Vec<Finding> = oracle::liveness::check(&self.context(), &culprit, ping, &stderr)
            .into_iter()
            .map(|mut f| {
                f.message = format!(
                    "{} (one of {} calls run concurrently; not reproduced one call at a time)",
                    f.message,
                    done.len()
                );
                f
            })
            .collect();
        // The server died or stopped answering with several cases in flight: find the case.
        let reason = format!(
            "server failed with {} generated cases in the window since the last check",
            done.len()
        );
        if !self.restart_after_failure(&reason, &last, ping).await {
            self.add(alive);
            return false;
        }
        let mut found = false;
        // Whether a tool's call went unanswered is settled by the replay, one call at a time:
        // with the server failing under them, its calls in the window proved nothing.
        for d in &done {
            lanes[d.lane].stalled = false;
        }
        for d in done {
            if self.gave_up {
                break;
            }
            let tool = lanes[d.lane].tool.clone();
            let (arguments, violation, phase) = match &d.exchange.probe {
                Probe::Generated {
                    arguments,
                    violation,
                    phase,
                    ..
                } => (arguments.clone(), violation.clone(), *phase),
                Probe::ToolCall { arguments, .. } => {
                    // The baseline call, run again as the baseline phase runs it.
                    let mark = self.shared.hits_len();
                    self.call(&tool, arguments.clone(), None).await;
                    found |= self.died_since(mark);
                    continue;
                }
                _ => continue,
            };
            // Every case of the window runs again, one at a time, each followed by a ping:
            // the one that kills the server is named, and so is any later one that does too.
            self.tool_deadline = Some(lanes[d.lane].started + lanes[d.lane].budget);
            let outcome = self.run_case(&tool, arguments, violation, phase).await;
            let died = outcome.findings.iter().any(|f| kills(&f.code));
            found |= died;
            lanes[d.lane].stalled |= outcome.missed;
            self.finish_case(&tool, outcome, d.tree).await;
            self.tool_deadline = None;
        }
        if !found {
            self.add(alive);
        }
        !self.gave_up
    }

    /// Whether a finding recorded since `mark` (a [`super::shared::Shared::hits_len`]) says
    /// the server died or stopped answering.
    fn died_since(&self, mark: usize) -> bool {
        let found = self.shared.findings();
        self.shared
            .hits_since(mark)
            .into_iter()
            .any(|i| kills(&found[i].code))
    }

    /// The rest of every tool's cases one call at a time, each followed by its ping, as in the
    /// serial phase (after the server mixed up concurrent requests): each tool within its
    /// budget, the phase within `phase_budget` from `phase_started`.
    async fn serial_rest(
        &mut self,
        lanes: &mut [Lane],
        phase_started: Instant,
        phase_budget: Duration,
    ) {
        for lane in lanes.iter_mut() {
            while lane.has_work() && !self.gave_up && phase_started.elapsed() < phase_budget {
                let Some(case) = lane.next_case() else {
                    break;
                };
                let tool = lane.tool.clone();
                if self.already_called(&tool, &case.value) {
                    continue;
                }
                if case.phase == BASELINE {
                    lane.sent += 1;
                    self.call(&tool, case.value, None).await;
                    continue;
                }
                lane.sent += 1;
                self.tool_deadline = Some(lane.started + lane.budget);
                let outcome = self
                    .run_case(&tool, case.value, case.violation, case.phase)
                    .await;
                lane.calls += 1;
                match outcome.exchange.outcome {
                    Outcome::NoAnswer if outcome.missed => lane.stalled = true,
                    Outcome::Abandoned => lane.capped = true,
                    _ => {}
                }
                self.finish_case(&tool, outcome, case.tree).await;
                self.tool_deadline = None;
            }
        }
    }

    /// Sends the case of `f` (a call left unanswered while `in_flight` calls were out) again,
    /// alone on the fresh server, followed by its ping: answered now, the server dropped or
    /// stalled it because of the others (`concurrent-requests-dropped`, a warning, and true is
    /// returned: the phase goes on one call at a time); unanswered again, it is judged as any
    /// call is (`no-response`). Either way it is recorded.
    async fn alone(&mut self, f: Flight, in_flight: usize, lanes: &mut [Lane]) -> bool {
        let label = f.probe.label();
        let lane = &mut lanes[f.lane];
        let tool = lane.tool.clone();
        let answered_in = if f.case.phase == BASELINE {
            lane.sent += 1;
            self.call(&tool, f.case.value, None)
                .await
                .filter(|ex| matches!(ex.outcome, Outcome::Answered { .. }))
                .map(|ex| ex.elapsed)
        } else {
            lane.sent += 1;
            lane.calls += 1;
            self.tool_deadline = Some(lane.started + lane.budget);
            let outcome = self
                .run_case(&tool, f.case.value, f.case.violation, f.case.phase)
                .await;
            self.tool_deadline = None;
            let answered_in = matches!(outcome.exchange.outcome, Outcome::Answered { .. })
                .then_some(outcome.exchange.elapsed);
            match outcome.exchange.outcome {
                Outcome::NoAnswer if outcome.missed => lane.stalled = true,
                Outcome::Abandoned => lane.capped = true,
                _ => {}
            }
            self.finish_case(&tool, outcome, f.case.tree).await;
            answered_in
        };
        if let Some(elapsed) = answered_in {
            let finding = oracle::concurrent_dropped::check(
                &self.context(),
                &oracle::concurrent_dropped::Dropped {
                    label: &label,
                    tool: &tool,
                    request: &f.bytes,
                    request_len: f.bytes.len(),
                    in_flight,
                    timeout_ms: u64::try_from(f.timeout.as_millis()).unwrap_or(u64::MAX),
                    alone_ms: u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX),
                },
            );
            self.add(vec![finding]);
            return true;
        }
        false
    }

    /// Records a finished case of a window that passed its liveness check: its findings, its
    /// violation shrunk (one call at a time) when it has a tree.
    async fn settle(&mut self, d: Done, lanes: &[Lane]) {
        if matches!(d.exchange.probe, Probe::ToolCall { .. }) {
            // The baseline call: recorded as the baseline phase records it.
            self.add(d.findings);
            return;
        }
        let tool = lanes[d.lane].tool.clone();
        let outcome = CaseOutcome {
            missed: matches!(d.exchange.outcome, Outcome::NoAnswer),
            exchange: d.exchange,
            findings: d.findings,
        };
        self.tool_deadline = Some(lanes[d.lane].started + lanes[d.lane].budget);
        self.finish_case(&tool, outcome, d.tree).await;
        self.tool_deadline = None;
    }

    /// Shrinks (when it has a tree and a violation) and records one case's outcome.
    async fn finish_case(&mut self, tool: &str, outcome: CaseOutcome, tree: Option<Tree>) {
        let outcome = match tree {
            Some(Tree::Valid(mut t)) => {
                self.shrink(
                    tool,
                    outcome,
                    |t: &mut _| (ValueTree::current(t), None),
                    &mut t,
                )
                .await
            }
            Some(Tree::Invalid(mut t)) => {
                self.shrink(
                    tool,
                    outcome,
                    |t: &mut Box<dyn ValueTree<Value = (Value, Violation)>>| {
                        let (v, viol) = ValueTree::current(t);
                        (v, Some(viol))
                    },
                    &mut t,
                )
                .await
            }
            None => self.finalize(outcome),
        };
        self.add(outcome.findings);
    }
}

/// A tool's time budget when its turn comes: `tool_budget`, but at most its share of what
/// is left of the phase's budget, with `slots` tools at work at once and `tools_left` tools
/// (this one included) still to run, so that the last tools get their turn as in the serial
/// phase (which gives each tool `left / tools left`).
fn share(
    tool_budget: Duration,
    phase_budget: Duration,
    phase_started: Instant,
    tools_left: usize,
    slots: usize,
) -> Duration {
    let left = phase_budget.saturating_sub(phase_started.elapsed());
    let tools = u32::try_from(tools_left.max(1)).unwrap_or(u32::MAX);
    let slots = u32::try_from(slots.clamp(1, tools_left.max(1))).unwrap_or(1);
    (left / tools).saturating_mul(slots).min(tool_budget)
}

/// Whether a finding of invariant `code` says the server died or stopped answering.
fn kills(code: &str) -> bool {
    code == crate::finding::SERVER_DIED.code
        || code == crate::finding::NOT_ALIVE.code
        || code == crate::finding::CRASH_ON_INPUT.code
}

/// The request bytes of the window's cases (see [`WINDOW_BYTES`]).
fn window_bytes(window: &[Done]) -> usize {
    window.iter().map(|d| d.exchange.sent.len()).sum()
}

/// Puts the window's cases back at the front of their tools' queues, in the order sent (they
/// are run again, one at a time).
fn unwind(window: &mut Vec<Done>, lanes: &mut [Lane], called: &mut HashSet<u64>) {
    let mut done = std::mem::take(window);
    done.sort_by_key(|d| std::cmp::Reverse(d.seq));
    for d in done {
        let (value, violation, phase) = match d.exchange.probe {
            Probe::Generated {
                arguments,
                violation,
                phase,
                ..
            } => (arguments, violation, phase),
            Probe::ToolCall { arguments, .. } => (arguments, None, BASELINE),
            _ => continue,
        };
        let lane = &mut lanes[d.lane];
        // Sent, but not judged: it is to be sent again, not skipped as already called.
        called.remove(&call_key(&lane.tool, &value));
        lane.sent = lane.sent.saturating_sub(1);
        if phase != BASELINE {
            lane.calls = lane.calls.saturating_sub(1);
        }
        lane.queue.push_front(Pending {
            value,
            violation,
            phase,
            tree: d.tree,
        });
    }
}

/// Puts every call still in flight back at the front of its tool's queue, in the order they
/// were sent, not counted (the server they were sent to is being restarted).
fn requeue(flights: &mut Vec<Flight>, lanes: &mut [Lane], submitted: &mut HashSet<u64>) {
    let mut out = std::mem::take(flights);
    out.sort_by_key(|f| std::cmp::Reverse(f.seq));
    for f in out {
        if f.lane == PING {
            continue;
        }
        lanes[f.lane].in_flight -= 1;
        put_back(f, lanes, submitted);
    }
}

/// Puts the case of `f` (no longer counted in flight) back at the front of its tool's queue,
/// not counted as sent.
fn put_back(f: Flight, lanes: &mut [Lane], submitted: &mut HashSet<u64>) {
    let lane = &mut lanes[f.lane];
    lane.sent -= 1;
    lane.calls -= u64::from(f.case.phase != BASELINE);
    submitted.remove(&call_key(&lane.tool, &f.case.value));
    lane.queue.push_front(f.case);
}

/// The most calls one fast tool may have in flight: `per_lane` (half the slots, so that a
/// slow tool never stalls the others) while another tool has cases to send or is still to
/// come, all `k` once it is the last with work (a lone tool, `--tools get_sum`, is driven at
/// the full `--in-flight`).
fn lane_cap(lanes: &[Lane], more_tools: bool, per_lane: usize, k: usize) -> usize {
    if !more_tools && lanes.iter().filter(|l| l.has_work()).count() <= 1 {
        k
    } else {
        per_lane
    }
}

/// Why the server must be restarted after `done`: the first call of it that the server may
/// still be running (unanswered by its deadline, or given up on while it reported progress),
/// with what happened to it; `None` when every call ended.
fn still_running(done: &[Done]) -> Option<String> {
    done.iter().find_map(|d| {
        let why = match d.exchange.outcome {
            Outcome::NoAnswer => "was not answered in time and may still be running",
            Outcome::Abandoned => {
                "was still reporting progress when its tool's time budget ran out"
            }
            _ => return None,
        };
        Some(format!("{} {why}", d.exchange.probe.label()))
    })
}

/// The lane to take the next case from: one with work and fewer than `cap` calls in flight
/// ([`lane_cap`]; one for a tool not yet answered or slow), the least busy first (the first
/// listed on a tie).
fn pick(lanes: &[Lane], cap: usize) -> Option<usize> {
    lanes
        .iter()
        .enumerate()
        .filter(|(_, l)| {
            let most = if l.slow || l.answered == 0 { 1 } else { cap };
            l.has_work() && l.in_flight < most
        })
        .min_by_key(|(i, l)| (l.in_flight, *i))
        .map(|(i, _)| i)
}

/// Files `item` with the flight it belongs to: a response by its id, a progress notification
/// by its token, an HTTP exchange by its number; the end of the server ends every flight;
/// anything else goes to the oldest flight.
fn route(flights: &mut [Flight], item: ReceivedItem, now: Instant, stdio: bool) {
    let at = |f: &Flight| u64::try_from(now.duration_since(f.sent_at).as_millis()).unwrap_or(0);
    match &item {
        ReceivedItem::Exited(status) => {
            for f in flights.iter_mut().filter(|f| f.outcome.is_none()) {
                f.received.push(Received {
                    at_ms: at(f),
                    item: item.clone(),
                });
                f.outcome = Some(Outcome::Gone(Some(status.clone())));
            }
            return;
        }
        ReceivedItem::Closed => {
            for f in flights.iter_mut().filter(|f| f.outcome.is_none()) {
                f.received.push(Received {
                    at_ms: at(f),
                    item: item.clone(),
                });
                f.outcome = Some(Outcome::Gone(None));
            }
            return;
        }
        _ => {}
    }
    let owner = match &item {
        ReceivedItem::Frame(frame) => match &frame.message {
            Ok(Message::Response(r)) => match r.id() {
                ResponseId::Id(id) => flights.iter().position(|f| &f.id == id),
                _ => None,
            },
            _ => flights
                .iter()
                .position(|f| crate::session::is_progress_for(frame, &f.token)),
        },
        ReceivedItem::Http(info) => flights.iter().position(|f| f.post == Some(info.post)),
        // A progress flood is the request's whose token sent most of it.
        ReceivedItem::Flood(flood) => flood
            .token
            .as_deref()
            .and_then(|t| serde_json::from_str::<String>(t).ok())
            .and_then(|t| flights.iter().position(|f| f.token == t)),
        _ => None,
    };
    let Some(i) = owner.or_else(|| {
        flights
            .iter()
            .enumerate()
            .min_by_key(|(_, f)| f.sent_at)
            .map(|(i, _)| i)
    }) else {
        return;
    };
    let f = &mut flights[i];
    let index = f.received.len();
    let answers = matches!(&item, ReceivedItem::Frame(frame)
        if matches!(&frame.message, Ok(Message::Response(r)) if r.id().id() == Some(&f.id)));
    let progress = matches!(&item, ReceivedItem::Frame(frame)
        if crate::session::is_progress_for(frame, &f.token));
    let http = match &item {
        ReceivedItem::Http(info) if f.post == Some(info.post) => Some(info.status.is_none()),
        _ => None,
    };
    f.received.push(Received { at_ms: at(f), item });
    if progress {
        f.progressed(now);
    }
    if answers {
        f.answered = Some(index);
    }
    if let Some(failed) = http {
        f.http_done = true;
        if failed && f.answered.is_none() {
            f.outcome = Some(Outcome::SendFailed("the HTTP request failed".into()));
            return;
        }
    }
    if let Some(index) = f.answered
        && (stdio || f.http_done)
    {
        f.outcome = Some(Outcome::Answered { index });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lane(answered: u64, slow: bool, in_flight: usize, queued: usize) -> Lane {
        Lane {
            tool: "t".into(),
            queue: (0..queued)
                .map(|i| Pending {
                    value: Value::from(i),
                    violation: None,
                    phase: "random",
                    tree: None,
                })
                .collect(),
            draws: None,
            left_over: false,
            started: Instant::now(),
            ended: None,
            budget: Duration::from_secs(60),
            calls: 0,
            sent: 0,
            in_flight,
            stalled: false,
            capped: false,
            answered,
            slow,
            skipped: None,
            limits: Vec::new(),
        }
    }

    #[test]
    fn a_tool_whose_share_ran_out_before_its_first_call_still_gets_one() {
        let mut l = lane(0, false, 0, 3);
        l.budget = Duration::ZERO;
        assert!(!l.over());
        assert!(l.has_work());
        assert_eq!(pick(&[l], 4), Some(0));
        let mut l = lane(0, false, 0, 3);
        l.budget = Duration::ZERO;
        l.sent = 1;
        assert!(l.over());
        assert!(!l.has_work());
        assert!(l.finished());
    }

    #[test]
    fn a_fast_tool_gets_several_slots_a_new_or_slow_one_only_one() {
        // Not answered yet: one call at a time.
        assert_eq!(pick(&[lane(0, false, 1, 5)], 4), None);
        assert_eq!(pick(&[lane(0, false, 0, 5)], 4), Some(0));
        // Fast: up to per_lane.
        assert_eq!(pick(&[lane(3, false, 3, 5)], 4), Some(0));
        assert_eq!(pick(&[lane(3, false, 4, 5)], 4), None);
        // Slow: one at a time for good.
        assert_eq!(pick(&[lane(3, true, 1, 5)], 4), None);
    }

    #[test]
    fn a_tool_gets_its_share_of_the_phase_left_with_the_slots_at_work() {
        let s = Duration::from_secs;
        let start = Instant::now();
        // 5 000 tools, 8 at a time, 100 s left: 160 ms each.
        let each = share(s(20), s(100), start, 5_000, 8);
        assert!(each <= Duration::from_millis(160) && each > Duration::from_millis(150));
        // Few tools: the tool budget.
        assert_eq!(share(s(20), s(100), start, 3, 8), s(20));
        // The phase spent: nothing.
        assert_eq!(share(s(20), Duration::ZERO, start, 3, 8), Duration::ZERO);
    }

    #[test]
    fn the_last_tool_with_work_gets_every_slot() {
        let busy = lane(3, false, 4, 5);
        let done = lane(3, false, 0, 0);
        // Another tool still to come, or another with work: half the slots.
        assert_eq!(lane_cap(&[lane(3, false, 4, 5)], true, 4, 8), 4);
        assert_eq!(
            lane_cap(&[lane(3, false, 4, 5), lane(3, false, 0, 5)], false, 4, 8),
            4
        );
        // Alone (the others done, none to come): all of them.
        let lanes = [busy, done];
        assert_eq!(lane_cap(&lanes, false, 4, 8), 8);
        assert_eq!(pick(&lanes, lane_cap(&lanes, false, 4, 8)), Some(0));
        assert_eq!(pick(&lanes, 4), None);
        // Still one at a time while slow or not yet answered, whatever the cap.
        assert_eq!(pick(&[lane(3, true, 1, 5)], 8), None);
        assert_eq!(pick(&[lane(0, false, 1, 5)], 8), None);
    }

    #[test]
    fn the_least_busy_tool_with_work_goes_first() {
        let lanes = [
            lane(3, false, 2, 5),
            lane(3, false, 1, 5),
            lane(3, false, 0, 0),
        ];
        assert_eq!(pick(&lanes, 4), Some(1));
        let mut stalled = lane(3, false, 0, 5);
        stalled.stalled = true;
        assert_eq!(pick(&[stalled, lane(3, false, 3, 5)], 4), Some(1));
    }
}
