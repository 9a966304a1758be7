//! Faults as properties: after the one-per-profile sweep (every request of a call under one
//! fault profile), a property phase draws, for each tool that reached the fake upstream,
//! (arguments that reached it, fault, scope) together and judges each call with the oracle.
//!
//! - Arguments: one of the smallest distinct argument values that reached the upstream in
//!   the earlier phases ([`super::reach`], at most [`super::reach::KEPT`]).
//! - Fault: the healthy upstream or one of the run's fault profiles (`--faults`).
//! - Scope ([`mcp_chaos_faults::Scope`]): every request, the first only, the n-th (n ≤ 3),
//!   a seeded probability (0.5), each also narrowed to one of the request paths the tool's
//!   calls made (that path fails, the others answer 200).
//!
//! Draws come from the run's seed and the tool's name, so `--seed` replays them. A draw the
//! sweep already made (the smallest arguments under a fault on every request), a healthy
//! upstream and a repeated draw are skipped (a skipped draw still counts as a case). A
//! case *fails* when it yields a finding of an invariant not yet reported for the tool. The
//! first failing case of a tool is shrunk, each step a real call: the arguments toward the
//! smallest that reached the upstream, then the fault toward the simplest still failing
//! ([`mcp_chaos_faults::FaultKind::SHRINK_ORDER`]) and the scope toward every request
//! ([`mcp_chaos_faults::Scope::shrink_rank`]); the finding carries the minimal combination,
//! and with `--replays DIR` a replay file that holds it (arguments, scoped fault, how the
//! server reached the upstream). The tool's property then stops, as a property test stops at
//! its first counterexample. Each tool's cases stop after `--tool-budget-ms` (at most
//! [`TOOL_TIME`]), and a tool whose deadline the sweep already saw exceeded
//! under a hang draws no hang (each would cost a whole deadline to find the same).

use std::time::{Duration, Instant};

use mcp_chaos_faults::{Fault, FaultKind, ScopedFault, strategy};
use proptest::prelude::RngExt as _;
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use serde_json::Value;

use super::{Campaign, Event};
use crate::finding::{DEADLINE_EXCEEDED, Finding, Severity};
use crate::oracle;
use crate::session::{Exchange, Outcome, Probe};

/// `mcp-chaos explain fault-properties`: what the fault property phase does.
pub const EXPLAIN: &str = "Fault properties (with a fake upstream; --fault-cases N, default \
16, 0 skips them). After the one-per-profile sweep, which calls each tool that reached the \
upstream once per fault profile with every upstream request failing, a property phase draws \
for each such tool (arguments, fault, scope) together from the run's seed: arguments among \
the smallest that reached the upstream, a fault among the healthy upstream and --faults, and \
a scope: every request, the first only, the n-th (n <= 3), one request path the tool's calls \
made failing while the others answer 200, or each request with probability 0.5 (seeded). A \
tool that fetches robots.txt or metadata first and mishandles only that request's failure is \
reached this way; the sweep misses it. A case fails on an invariant not yet reported for the \
tool. Its first failing case is shrunk, each step a real call: the arguments toward the \
smallest that reached, then the fault toward the simplest that still fails (healthy, 404 ... \
429, 5xx, delays and hangs, connection and body faults), then the scope toward every request \
(every < first < n-th < a path < a probability). The finding says what it shrank to, e.g. \
\"under unavailable on the first request only\", and which request got what; with --replays \
DIR its replay file carries the combination, and mcp-chaos replay FILE serves it again from a \
fresh fake upstream. Each tool's cases stop after --tool-budget-ms (5 s by default, at most 10 s); a tool \
whose deadline the sweep saw exceeded under a hang draws no hang. Scenario files scope a fault \
the same way: fault = { fault = \"unavailable\", path = \"/robots.txt\" }, only = \"first\", \
nth = 2, probability = 0.3 (scenarios/README.md).";

/// Default number of drawn cases per tool that reached the upstream (`--fault-cases`).
pub const FAULT_CASES: usize = 16;
/// Most time one tool's drawn cases take (less with a smaller `--tool-budget-ms`); a case
/// started before it runs to its end, and shrinking has its own bound.
pub const TOOL_TIME: Duration = Duration::from_secs(10);
/// Most calls spent shrinking one failing case.
pub const SHRINK_CALLS: usize = 40;
/// Most time spent shrinking one failing case.
pub const SHRINK_TIME: Duration = Duration::from_secs(30);

/// What one drawn call produced.
struct FaultCase {
    exchange: Exchange,
    findings: Vec<Finding>,
    /// The scoped fault the call ran under.
    scoped: ScopedFault,
}

impl Campaign<'_> {
    /// Runs `cases` drawn (arguments, fault, scope) cases for each of `tools` (those that
    /// reached the upstream), over `profiles` and the healthy upstream.
    pub(super) async fn fault_property_phase(
        &mut self,
        tools: &[String],
        profiles: &[Fault],
        cases: usize,
    ) {
        if cases == 0 || self.injectors.is_none() {
            return;
        }
        let order: Vec<String> = self
            .plan
            .calls
            .iter()
            .map(|(name, _)| name.clone())
            .filter(|name| tools.contains(name))
            .collect();
        for tool in order {
            if self.gave_up {
                break;
            }
            self.fault_property(&tool, profiles, cases).await;
        }
    }

    async fn fault_property(&mut self, tool: &str, profiles: &[Fault], cases: usize) {
        let arguments = self.reach.reaching(tool).to_vec();
        if arguments.is_empty() {
            return;
        }
        // A hang costs a whole deadline per case; once the sweep found the tool blows its
        // deadline under one, a hang can only find that again.
        let deadline_known = self
            .shared
            .findings()
            .iter()
            .any(|f| f.code == DEADLINE_EXCEEDED.code && f.tool.as_deref() == Some(tool));
        let mut all = vec![Fault::ok_default()];
        all.extend(
            profiles
                .iter()
                .filter(|f| !(deadline_known && f.kind() == FaultKind::Hang))
                .cloned(),
        );
        let strategy = strategy::faults_for(&all).paths(self.reach.paths(tool).to_vec());
        let mut seed = super::generated::tool_seed(self.config.seed, tool);
        // Not the generated phase's stream for the same tool.
        seed[0] ^= 0x5a;
        let mut runner = TestRunner::new_with_rng(
            Config::default(),
            TestRng::from_seed(RngAlgorithm::ChaCha, &seed),
        );
        self.shared.emit(&Event::FaultProperties { tool, cases });
        let started = Instant::now();
        let budget = self.config.tool_budget.min(TOOL_TIME);
        let mut tried = std::collections::HashSet::new();
        for _ in 0..cases {
            if self.gave_up || started.elapsed() >= budget {
                break;
            }
            let Ok(mut tree) = strategy.new_tree(&mut runner) else {
                break;
            };
            let i = runner.rng().random_range(0..arguments.len());
            let scoped = tree.current();
            let swept = i == 0 && scoped.scope().is_every_request();
            // A healthy upstream on some requests is a healthy upstream.
            let healthy = *scoped.fault() == Fault::ok_default();
            if swept || healthy || !tried.insert((i, scoped.to_string())) {
                continue;
            }
            let case = self.fault_case(tool, &arguments[i], &scoped).await;
            let Some(target) = self.new_failure(tool, &case.findings) else {
                continue;
            };
            let best = self
                .shrink_fault_case(tool, &arguments, i, &mut tree, &target, case)
                .await;
            let best = self.finalize_fault_case(best);
            self.add(best.findings);
            break;
        }
    }

    /// The code of the first finding in `findings` of an invariant not yet reported for
    /// `tool`: what makes a drawn case a failure.
    fn new_failure(&self, tool: &str, findings: &[Finding]) -> Option<String> {
        findings
            .iter()
            .find(|f| {
                !self
                    .shared
                    .findings()
                    .iter()
                    .any(|g| g.code == f.code && g.tool.as_deref() == Some(tool))
            })
            .map(|f| f.code.clone())
    }

    /// Shrinks a failing case (arguments `arguments[i]`, the fault `tree` holds): the
    /// arguments first (the smallest that still fails), then the fault and its scope; each
    /// step is one call. Returns the minimal failing case, its finding's message saying what
    /// it shrank to.
    async fn shrink_fault_case(
        &mut self,
        tool: &str,
        arguments: &[Value],
        mut i: usize,
        tree: &mut strategy::FaultTree,
        target: &str,
        first: FaultCase,
    ) -> FaultCase {
        let started = Instant::now();
        let limit = SHRINK_TIME.min(self.config.tool_budget);
        let mut best = first;
        let mut scoped = tree.current();
        let mut steps = 0;
        let over = |steps: usize| steps >= SHRINK_CALLS || started.elapsed() >= limit;
        // 1. The arguments: the smallest that still fails.
        for (j, smaller) in arguments.iter().enumerate().take(i) {
            if self.gave_up || over(steps) {
                break;
            }
            steps += 1;
            let case = self.fault_case(tool, smaller, &scoped).await;
            if case.findings.iter().any(|f| f.code == target) {
                best = case;
                i = j;
                break;
            }
        }
        // 2. The fault, then its scope (the strategy's value tree).
        let mut fails = true;
        loop {
            let moved = if fails {
                tree.simplify()
            } else {
                tree.complicate()
            };
            if !moved || self.gave_up || over(steps) {
                break;
            }
            let candidate = tree.current();
            if candidate == scoped && fails {
                continue;
            }
            steps += 1;
            let case = self.fault_case(tool, &arguments[i], &candidate).await;
            fails = case.findings.iter().any(|f| f.code == target);
            if fails {
                best = case;
                scoped = candidate;
            }
        }
        for f in best.findings.iter_mut().filter(|f| f.code == target) {
            f.message = format!(
                "{} (a fault property: shrunk in {steps} steps to the arguments {} under {scoped})",
                f.message,
                crate::wire::excerpt(arguments[i].to_string().as_bytes(), 300)
            );
        }
        best
    }

    /// One call of `tool` with `arguments` under `scoped` (installed for the call only),
    /// judged, followed by a liveness check (the server is restarted if it died or hung). The
    /// findings are returned, not yet recorded.
    async fn fault_case(
        &mut self,
        tool: &str,
        arguments: &Value,
        scoped: &ScopedFault,
    ) -> FaultCase {
        let probe = Probe::ToolCall {
            tool: tool.to_owned(),
            arguments: arguments.clone(),
        };
        let label = format!("tools/call {tool} under {scoped}");
        self.shared.emit(&Event::Step { label: &label });
        if self.session.is_none() {
            self.restart("no server running").await;
        }
        let (Some(inj), Some(session)) = (self.injectors.as_ref(), self.session.as_mut()) else {
            return FaultCase {
                exchange: super::generated::dead_exchange(probe),
                findings: Vec::new(),
                scoped: scoped.clone(),
            };
        };
        inj.install(scoped);
        let marks = inj.mark();
        let mut exchange = session.call_tool(probe, tool, arguments).await;
        let entries = inj.since(&marks);
        inj.heal();
        exchange.fault = Some(super::faults::context(scoped, &entries));
        let ping = session.liveness().await;
        let stderr = session.stderr_tail();
        self.note_reach(tool, arguments, &entries);
        self.count(&exchange);
        self.count(&ping);
        let ctx = self.context();
        let mut findings = oracle::judge(&ctx, &exchange);
        let alive = oracle::liveness::check(&ctx, &exchange, &ping, &stderr);
        let died = !alive.is_empty();
        findings.extend(alive);
        findings.extend(oracle::judge(&ctx, &ping));
        if died {
            let reason = format!("server failed after {}", exchange.probe.label());
            self.restart_after_failure(&reason, &exchange, &ping).await;
        } else if matches!(exchange.outcome, Outcome::NoAnswer | Outcome::Abandoned) {
            self.fresh_restart(&format!(
                "{} missed its deadline and may still be running it",
                exchange.probe.label()
            ))
            .await;
        }
        FaultCase {
            exchange,
            findings,
            scoped: scoped.clone(),
        }
    }

    /// Writes a replay file for each violation of the final case, with `--replays DIR`.
    fn finalize_fault_case(&mut self, mut case: FaultCase) -> FaultCase {
        let (Some(dir), Some(inj)) = (&self.config.replays, &self.injectors) else {
            return case;
        };
        let version = self.context().version;
        let upstream = inj.upstream.url();
        for f in case
            .findings
            .iter_mut()
            .filter(|f| f.severity == Severity::Violation)
        {
            if let Ok(path) = super::replay::write_fault(
                dir,
                self.config,
                version,
                &case.exchange,
                f,
                &case.scoped,
                &upstream,
            ) {
                f.replay = Some(path.display().to_string());
            }
        }
        case
    }
}
