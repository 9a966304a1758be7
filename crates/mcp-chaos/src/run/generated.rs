//! The generated phase: for each tool, the boundary cases of its `inputSchema`, then random
//! schema-valid arguments, then random arguments breaking exactly one constraint (from
//! [`crate::generate`]). A case that produces a violation is shrunk, by re-running the call,
//! to a minimal argument value that still breaks the same invariant; the finding carries that
//! value, and, with `--replays DIR`, a replay file that `mcp-chaos replay` re-runs.

use std::time::{Duration, Instant};

use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use serde_json::{Value, json};

use super::{Campaign, Event};
use crate::finding::{Finding, Severity, UNSATISFIABLE_INPUT_SCHEMA};
use crate::generate::{Case, GenError, GenOptions, Generator, Violation};
use crate::oracle;
use crate::protocol::{ProtocolVersion, SchemaDialect};
use crate::session::{Exchange, Outcome, Probe};

/// Most shrink steps per failing case.
pub const SHRINK_STEPS: usize = 64;
/// Most time spent shrinking one failing case (less when the tool's time budget,
/// `--tool-budget-ms`, is smaller: each shrink step of a call that misses its deadline costs a
/// whole deadline).
pub const SHRINK_TIME: Duration = Duration::from_secs(30);
/// Most boundary cases per tool.
pub const BOUNDARY_CASES: usize = 48;

/// Most time spent building one tool's generator (lowering its schema, probing it, its
/// boundary cases and invalid-case sites) before the tool is skipped as over budget; less when
/// the tool's share of the phase's budget is smaller.
pub const GEN_SETUP_TIME: Duration = Duration::from_secs(5);
/// A tool's generated phase's time budget by default (`--tool-budget-ms`), in ms: half a
/// default request timeout. A fast tool runs all its cases in a fraction of it; a slow one
/// gets what fits. A call still reporting progress when it runs out is given up on (not
/// judged; under the case scheduler its baseline call too), while a silent call still gets
/// the whole request timeout before it counts as unanswered, so a budget shorter than the
/// timeout makes no finding of a slow tool. Since the tool calls run beside the other phases
/// where they can (`--in-flight`), a tool that keeps reporting progress adds about this much
/// to the time to a verdict.
pub const DEFAULT_TOOL_BUDGET_MS: u64 = 5_000;

/// How one tool's generated phase ended.
struct ToolDone {
    cut: Option<&'static str>,
    skipped: Option<String>,
    limits: Vec<String>,
}

/// What one generated call produced.
pub(super) struct CaseOutcome {
    pub(super) exchange: Exchange,
    pub(super) findings: Vec<Finding>,
    /// The call missed its deadline on a live server (which was then restarted): the tool's
    /// remaining cases are skipped, as each would likely cost a whole deadline too.
    pub(super) missed: bool,
}

/// A 32-byte ChaCha seed from the run's seed and the tool's name, so that each tool's cases
/// are reproducible on their own.
pub fn tool_seed(seed: u64, tool: &str) -> [u8; 32] {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in tool.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    let mut out = [0u8; 32];
    let mut x = seed ^ h;
    for chunk in out.chunks_mut(8) {
        // splitmix64
        x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        chunk.copy_from_slice(&z.to_le_bytes());
    }
    out
}

/// The tool's `inputSchema` with the dialect made explicit: a schema without `$schema` is
/// draft-07 under the protocol versions whose schema files are draft-07 (up to 2025-06-18),
/// 2020-12 from 2025-11-25 (SEP-1613).
pub fn schema_for(input_schema: &Value, version: ProtocolVersion) -> Value {
    let mut schema = input_schema.clone();
    if version.rules().schema_dialect == SchemaDialect::Draft07
        && let Some(obj) = schema.as_object_mut()
        && !obj.contains_key("$schema")
    {
        obj.insert(
            "$schema".into(),
            json!("http://json-schema.org/draft-07/schema#"),
        );
    }
    schema
}

impl Campaign<'_> {
    /// Runs the generated phase for every tool (`valid` valid and `invalid` invalid random
    /// cases per tool, after its boundary and hostile cases), within the per-tool time budget
    /// and the phase's budget: each tool gets at most `left / tools left` of
    /// [`super::RunConfig::generated_budget`], and the tools not reached when it is spent are
    /// recorded as skipped. With `baseline`, each tool's baseline call is made first (through
    /// the scheduler, as its first case, when it runs; the tools the phase's budget did not
    /// reach still get theirs).
    pub(super) async fn generated_phase(
        &mut self,
        tools: &[(String, Value, String)],
        valid: usize,
        invalid: usize,
        baseline: bool,
    ) {
        let phase_started = Instant::now();
        let (phase_budget, by_run) = self.generated_budget_now();
        if baseline && (!self.schedules_cases() || phase_budget.is_zero()) {
            self.baseline_phase().await;
        }
        if phase_budget.is_zero() && !tools.is_empty() {
            self.budget_spent(tools, 0, phase_budget, by_run);
            return;
        }
        if self.schedules_cases() {
            // Up to --in-flight calls at once across tools (see super::scheduler).
            let reached = self
                .generated_scheduled(tools, valid, invalid, phase_budget, by_run, baseline)
                .await;
            if baseline {
                for tool in &tools[reached..] {
                    if self.gave_up || self.cut_by_budget("baseline calls", 0, 0) {
                        break;
                    }
                    if let Some(arguments) = self.plan.arguments(&tool.0).cloned() {
                        self.call(&tool.0, arguments, None).await;
                    }
                }
            }
            return;
        }
        for (i, (name, schema, url)) in tools.iter().enumerate() {
            if self.gave_up {
                break;
            }
            let left = phase_budget.saturating_sub(phase_started.elapsed());
            if left.is_zero() {
                self.budget_spent(&tools[i..], i, phase_budget, by_run);
                break;
            }
            let share = left
                .checked_div(u32::try_from(tools.len() - i).unwrap_or(u32::MAX))
                .unwrap_or(left)
                .min(self.config.tool_budget);
            let started = Instant::now();
            let calls = self.summary.tool_calls;
            let done = self
                .generate_tool(name, schema, url, valid, invalid, share)
                .await;
            self.tool_deadline = None;
            let phase = super::ToolGenerated {
                tool: name.clone(),
                calls: self.summary.tool_calls - calls,
                elapsed_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
                cut: done.cut,
                skipped: done.skipped,
                limits: done.limits,
            };
            self.shared.emit(&Event::ToolGenerated { phase: &phase });
            self.summary.generated.push(phase);
            // Let other tasks (signal handling, the server's readers) run between tools.
            tokio::task::yield_now().await;
        }
    }

    /// Records `rest` (the tools after the first `covered`) as skipped: the generated phase's
    /// budget was spent before their turn (`by_run`: its share of the run's `--budget-ms`).
    pub(super) fn budget_spent(
        &mut self,
        rest: &[(String, Value, String)],
        covered: usize,
        budget: Duration,
        by_run: bool,
    ) {
        let reason = if by_run {
            let line = format!(
                "generated phase: {} of {} tools not reached",
                rest.len(),
                covered + rest.len()
            );
            self.summary.budget_cut.push(line);
            format!(
                "the generated phase's share ({} ms) of the run's budget (--budget-ms) was spent before its turn",
                budget.as_millis()
            )
        } else {
            format!(
                "the generated phase's budget (--generated-budget-ms {}) was spent before its turn",
                budget.as_millis()
            )
        };
        self.shared.emit(&Event::GeneratedBudgetSpent {
            covered,
            skipped: rest.len(),
            budget_ms: u64::try_from(budget.as_millis()).unwrap_or(u64::MAX),
        });
        for (name, ..) in rest {
            self.summary.generated.push(super::ToolGenerated {
                tool: name.clone(),
                calls: 0,
                elapsed_ms: 0,
                cut: None,
                skipped: Some(reason.clone()),
                limits: Vec::new(),
            });
        }
    }

    async fn generate_tool(
        &mut self,
        tool: &str,
        input_schema: &Value,
        url_base: &str,
        valid: usize,
        invalid: usize,
        budget: Duration,
    ) -> ToolDone {
        let version = self.context().version;
        let schema = schema_for(input_schema, version);
        let started = Instant::now();
        let mut opts = GenOptions::with_url_base(url_base);
        // Building the generator (lowering, probing, the boundary cases, the invalid-case
        // sites) stops at the tool's budget, bounded by GEN_SETUP_TIME.
        opts.deadline = Some(started + budget.min(GEN_SETUP_TIME));
        let generator = match Generator::new(&schema, &opts) {
            Ok(g) => g,
            Err(e) => {
                let skipped = format!("{}: {e}", e.kind());
                if !e.is_budget() {
                    self.schema_finding(tool, &e);
                }
                return ToolDone {
                    cut: None,
                    skipped: Some(skipped),
                    limits: Vec::new(),
                };
            }
        };
        self.tool_deadline = Some(started + budget);
        let over = || started.elapsed() >= budget;
        // Set when a case missed its deadline: the tool's remaining cases are skipped.
        let mut stalled = false;
        // At least one case runs, whatever the share of the phase's budget.
        let mut ran = false;
        // 1. Boundary cases (deterministic).
        if let Ok(cases) = generator.boundary() {
            for case in cases.into_iter().take(BOUNDARY_CASES) {
                if self.gave_up || stalled || (ran && over()) {
                    break;
                }
                let (value, violation) = match case {
                    Case::Valid { value, .. } => (value, None),
                    Case::Invalid { value, violation } => (value, Some(violation)),
                };
                if self.already_called(tool, &value) {
                    continue;
                }
                ran = true;
                let outcome = self.run_case(tool, value, violation, "boundary").await;
                stalled |= outcome.missed;
                let outcome = self.finalize(outcome);
                self.add(outcome.findings);
            }
        }
        // 2. Hostile strings (NUL, RTL marks, emoji, path traversal, SQL and shell
        //    metacharacters, templates, a 1 MiB string) in each top-level string property of
        //    a small valid value, where the schema admits them.
        let mut hostile_limit = None;
        if let Ok(example) = generator.example() {
            let variants = HostileVariants::new(input_schema, &example);
            if variants.sampled() {
                hostile_limit = Some(format!(
                    "hostile strings: {} of {} property × string combinations, spread evenly",
                    HOSTILE_CASES,
                    variants.combinations()
                ));
            }
            for value in variants.filter(|v| generator.is_valid(v)) {
                if self.gave_up || stalled || (ran && over()) {
                    break;
                }
                if self.already_called(tool, &value) {
                    continue;
                }
                ran = true;
                let outcome = self.run_case(tool, value, None, "hostile").await;
                stalled |= outcome.missed;
                let outcome = self.finalize(outcome);
                self.add(outcome.findings);
            }
        }
        let mut runner = TestRunner::new_with_rng(
            Config::default(),
            TestRng::from_seed(RngAlgorithm::ChaCha, &tool_seed(self.config.seed, tool)),
        );
        // 3. Random valid arguments.
        if let Ok(strategy) = generator.valid() {
            for _ in 0..valid {
                if self.gave_up || stalled || (ran && over()) {
                    break;
                }
                let Ok(mut tree) = strategy.new_tree(&mut runner) else {
                    break;
                };
                let value = tree.current();
                if self.already_called(tool, &value) {
                    continue;
                }
                ran = true;
                let outcome = self.run_case(tool, value, None, "random").await;
                stalled |= outcome.missed;
                let outcome = self
                    .shrink(
                        tool,
                        outcome,
                        |t: &mut _| (ValueTree::current(t), None),
                        &mut tree,
                    )
                    .await;
                self.add(outcome.findings);
            }
        }
        // 4. Random arguments breaking one constraint.
        if let Ok(strategy) = generator.invalid() {
            for _ in 0..invalid {
                if self.gave_up || stalled || (ran && over()) {
                    break;
                }
                let Ok(mut tree) = strategy.new_tree(&mut runner) else {
                    break;
                };
                let (value, violation) = tree.current();
                if self.already_called(tool, &value) {
                    continue;
                }
                ran = true;
                let outcome = self.run_case(tool, value, Some(violation), "random").await;
                stalled |= outcome.missed;
                let outcome = self
                    .shrink(
                        tool,
                        outcome,
                        |t: &mut _| {
                            let (v, viol) = ValueTree::current(t);
                            (v, Some(viol))
                        },
                        &mut tree,
                    )
                    .await;
                self.add(outcome.findings);
            }
        }
        let cut = if stalled {
            Some("deadline missed")
        } else if over() {
            Some("time budget")
        } else {
            None
        };
        let mut limits: Vec<String> = generator
            .budget_notes()
            .iter()
            .map(|n| format!("{} at {}", n.message, n.pointer))
            .collect();
        limits.extend(hostile_limit);
        ToolDone {
            cut,
            skipped: None,
            limits,
        }
    }

    pub(super) fn schema_finding(&mut self, tool: &str, error: &GenError) {
        let severity_message = match error {
            GenError::Unsatisfiable { reason } => Some(format!(
                "no value satisfies the inputSchema of {tool}: {reason}"
            )),
            GenError::UnsafeForced { pointer, value } => Some(format!(
                "the inputSchema of {tool} forces a value off this machine at {pointer:?} ({value}); mcp-chaos does not send it"
            )),
            GenError::Exhausted { reason } => Some(format!(
                "mcp-chaos found no value satisfying the inputSchema of {tool} ({reason}); the schema may be unsatisfiable"
            )),
            _ => None,
        };
        let ctx = self.context();
        let mut f = Finding::new(
            &UNSATISFIABLE_INPUT_SCHEMA,
            Severity::Warning,
            ctx.version,
            severity_message.unwrap_or_else(|| {
                format!("mcp-chaos cannot generate arguments for {tool}: {error}")
            }),
        );
        f.tool = Some(tool.to_owned());
        f.probe = format!("inputSchema of {tool}");
        self.add(vec![f]);
    }

    /// One call with generated arguments, judged, followed by a liveness check (the server is
    /// restarted if it died or hung). The findings are returned, not yet recorded.
    pub(super) async fn run_case(
        &mut self,
        tool: &str,
        arguments: Value,
        violation: Option<Violation>,
        phase: &'static str,
    ) -> CaseOutcome {
        let probe = Probe::Generated {
            tool: tool.to_owned(),
            arguments: arguments.clone(),
            violation,
            phase,
        };
        let label = probe.label();
        self.shared.emit(&Event::Step { label: &label });
        if self.session.is_none() {
            self.restart("no server running").await;
        }
        let max_wait = self.tool_deadline.map_or(self.config.timeout, |t| {
            t.saturating_duration_since(Instant::now())
        });
        let Some(session) = self.session.as_mut() else {
            return CaseOutcome {
                exchange: dead_exchange(probe),
                findings: Vec::new(),
                missed: false,
            };
        };
        // Generating a value is synchronous work: let other tasks run between calls.
        tokio::task::yield_now().await;
        let marks = self.injectors.as_ref().map(super::faults::Injectors::mark);
        let exchange = session
            .call_tool_within(probe, tool, &arguments, max_wait)
            .await;
        // Upstream reach is learned from every call (before the ping, which makes none).
        let entries = match (&self.injectors, &marks) {
            (Some(inj), Some(marks)) => Some(inj.since(marks)),
            _ => None,
        };
        let Some(session) = self.session.as_mut() else {
            return CaseOutcome {
                exchange,
                findings: Vec::new(),
                missed: false,
            };
        };
        let ping = session.liveness().await;
        let stderr = session.stderr_tail();
        if let Some(entries) = entries {
            self.note_reach(tool, &arguments, &entries);
        }
        self.count(&exchange);
        self.count(&ping);
        let ctx = self.context();
        let mut findings = oracle::judge(&ctx, &exchange);
        let alive = oracle::liveness::check(&ctx, &exchange, &ping, &stderr);
        let died = !alive.is_empty();
        findings.extend(alive);
        findings.extend(oracle::judge(&ctx, &ping));
        let missed = !died && matches!(exchange.outcome, Outcome::NoAnswer);
        // A live server still running the call is restarted fresh.
        let busy = match exchange.outcome {
            _ if died => None,
            Outcome::NoAnswer => Some("missed its deadline and may still be running it"),
            Outcome::Abandoned => {
                Some("was still reporting progress when the tool's time budget ran out")
            }
            _ => None,
        };
        if died {
            let reason = format!("server failed after {}", exchange.probe.label());
            self.restart_after_failure(&reason, &exchange, &ping).await;
        } else if let Some(why) = busy {
            self.fresh_restart(&format!("{} {why}", exchange.probe.label()))
                .await;
        }
        CaseOutcome {
            exchange,
            findings,
            missed,
        }
    }

    /// Shrinks a failing case: while the same violation reproduces, simplify the value tree
    /// (proptest's shrinking), re-running the call each time; returns the minimal failing
    /// case's outcome (or `first` when nothing failed or nothing simpler failed).
    ///
    /// A call that missed its deadline is not shrunk: every step would cost up to a whole
    /// deadline (and a restart), so a few steps would take the run's minutes and rarely get
    /// anywhere; its finding keeps the arguments as sent.
    pub(super) async fn shrink<T: ValueTree>(
        &mut self,
        tool: &str,
        first: CaseOutcome,
        current: impl Fn(&mut T) -> (Value, Option<Violation>),
        tree: &mut T,
    ) -> CaseOutcome {
        let Some(target) = first
            .findings
            .iter()
            .find(|f| f.severity == Severity::Violation)
            .map(|f| f.code.clone())
        else {
            return first;
        };
        if first.missed {
            return self.finalize(first);
        }
        let started = Instant::now();
        let mut best = first;
        let mut fails = true;
        let mut steps = 0;
        loop {
            let moved = if fails {
                tree.simplify()
            } else {
                tree.complicate()
            };
            if !moved
                || steps >= SHRINK_STEPS
                || started.elapsed() >= SHRINK_TIME.min(self.config.tool_budget)
                || self.gave_up
            {
                break;
            }
            steps += 1;
            let (value, violation) = current(tree);
            let outcome = self.run_case(tool, value, violation, "shrunk").await;
            fails = outcome.findings.iter().any(|f| f.code == target);
            if fails {
                best = outcome;
            }
        }
        if steps > 0 {
            let arguments = match &best.exchange.probe {
                Probe::Generated { arguments, .. } => arguments.to_string(),
                _ => String::new(),
            };
            for f in best.findings.iter_mut().filter(|f| f.code == target) {
                f.message = format!(
                    "{} (shrunk in {steps} steps to the arguments {})",
                    f.message,
                    crate::wire::excerpt(arguments.as_bytes(), 300)
                );
            }
        }
        self.finalize(best)
    }

    /// Writes a replay file for each violation of a (final) case, with `--replays DIR`.
    pub(super) fn finalize(&mut self, mut outcome: CaseOutcome) -> CaseOutcome {
        if let Some(dir) = &self.config.replays {
            let version = self.context().version;
            for f in outcome
                .findings
                .iter_mut()
                .filter(|f| f.severity == Severity::Violation)
            {
                if let Ok(path) =
                    super::replay::write(dir, self.config, version, &outcome.exchange, f)
                {
                    f.replay = Some(path.display().to_string());
                }
            }
        }
        outcome
    }
}

/// Most hostile-string cases per tool: when a schema has more top-level string properties ×
/// hostile strings than this, that many combinations are taken, spread evenly.
pub const HOSTILE_CASES: usize = 128;

/// Each hostile string put into each top-level string property of `example` (built one at a
/// time, as iterated; the caller keeps those that satisfy the schema): every combination, or
/// [`HOSTILE_CASES`] of them spread evenly when there are more.
pub(super) struct HostileVariants<'a> {
    example: &'a Value,
    props: Vec<&'a String>,
    next: usize,
    stride: usize,
}

impl<'a> HostileVariants<'a> {
    pub(super) fn new(input_schema: &'a Value, example: &'a Value) -> Self {
        let props: Vec<&String> = input_schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|props| {
                props
                    .iter()
                    .filter(|(_, schema)| match schema.get("type") {
                        Some(Value::String(t)) => t == "string",
                        Some(Value::Array(ts)) => ts.iter().any(|t| t == "string"),
                        _ => false,
                    })
                    .map(|(name, _)| name)
                    .collect()
            })
            .unwrap_or_default();
        let n = props.len() * crate::generate::hostile_strings().len();
        Self {
            example,
            props,
            next: 0,
            stride: n.div_ceil(HOSTILE_CASES).max(1),
        }
    }

    /// How many property × hostile string combinations there are.
    pub(super) fn combinations(&self) -> usize {
        self.props.len() * crate::generate::hostile_strings().len()
    }

    /// Whether only some of them are taken.
    pub(super) fn sampled(&self) -> bool {
        self.stride > 1
    }
}

impl Iterator for HostileVariants<'_> {
    type Item = Value;

    fn next(&mut self) -> Option<Value> {
        let hostile = crate::generate::hostile_strings();
        let i = self.next;
        if i >= self.combinations() {
            return None;
        }
        self.next += self.stride;
        let (name, s) = (self.props[i / hostile.len()], hostile[i % hostile.len()]);
        let mut value = self.example.clone();
        if let Some(obj) = value.as_object_mut() {
            obj.insert(name.clone(), Value::from(s));
        }
        Some(value)
    }
}

pub(super) fn dead_exchange(probe: Probe) -> Exchange {
    Exchange {
        probe,
        sent: Vec::new(),
        expect: crate::session::Expect::Fenced,
        received: Vec::new(),
        preceding: 0,
        outcome: crate::session::Outcome::SendFailed("no server running".into()),
        elapsed: Duration::ZERO,
        timeout_ms: 0,
        fault: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema_and_example(n: usize) -> (Value, Value) {
        let props: serde_json::Map<String, Value> = (0..n)
            .map(|i| (format!("p{i:04}"), json!({"type": "string"})))
            .collect();
        let example: serde_json::Map<String, Value> =
            (0..n).map(|i| (format!("p{i:04}"), json!("a"))).collect();
        (
            json!({"type": "object", "properties": props}),
            Value::Object(example),
        )
    }

    #[test]
    fn hostile_variants_are_every_combination_for_a_small_schema() {
        let (schema, example) = schema_and_example(2);
        let v = HostileVariants::new(&schema, &example);
        assert!(!v.sampled());
        let all: Vec<Value> = v.collect();
        let h = crate::generate::hostile_strings();
        assert_eq!(all.len(), 2 * h.len());
        // Property-major, every hostile string in order.
        assert_eq!(all[0]["p0000"], json!(h[0]));
        assert_eq!(all[h.len()]["p0001"], json!(h[0]));
        assert_eq!(all[h.len() - 1]["p0000"], json!(h[h.len() - 1]));
    }

    #[test]
    fn hostile_variants_are_capped_and_spread_for_a_thousand_properties() {
        let (schema, example) = schema_and_example(1000);
        let v = HostileVariants::new(&schema, &example);
        assert!(v.sampled());
        assert_eq!(
            v.combinations(),
            1000 * crate::generate::hostile_strings().len()
        );
        let all: Vec<Value> = v.collect();
        assert!(all.len() <= HOSTILE_CASES, "{}", all.len());
        assert!(all.len() > HOSTILE_CASES / 2, "{}", all.len());
        // The last properties get hostile strings too, and not always the same one.
        let hostile_in = |v: &Value| {
            v.as_object()
                .and_then(|m| m.iter().find(|(_, x)| *x != "a"))
                .map(|(k, x)| (k.clone(), x.clone()))
        };
        let picked: Vec<(String, Value)> = all.iter().filter_map(hostile_in).collect();
        assert!(picked.iter().any(|(k, _)| k.starts_with("p09")));
        let strings: std::collections::HashSet<String> =
            picked.iter().map(|(_, x)| x.to_string()).collect();
        assert!(strings.len() > 10, "{}", strings.len());
    }
}
