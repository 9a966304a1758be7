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

/// What one generated call produced.
struct CaseOutcome {
    exchange: Exchange,
    findings: Vec<Finding>,
    /// The call missed its deadline on a live server (which was then restarted): the tool's
    /// remaining cases are skipped, as each would likely cost a whole deadline too.
    missed: bool,
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
    /// cases per tool, after its boundary and hostile cases), within the per-tool time budget.
    pub(super) async fn generated_phase(
        &mut self,
        tools: &[(String, Value, String)],
        valid: usize,
        invalid: usize,
    ) {
        for (name, schema, url) in tools {
            if self.gave_up {
                break;
            }
            let started = Instant::now();
            let calls = self.summary.tool_calls;
            let cut = self.generate_tool(name, schema, url, valid, invalid).await;
            self.tool_deadline = None;
            let phase = super::ToolGenerated {
                tool: name.clone(),
                calls: self.summary.tool_calls - calls,
                elapsed_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
                cut,
            };
            (self.on_event)(&Event::ToolGenerated { phase: &phase });
            self.summary.generated.push(phase);
        }
    }

    async fn generate_tool(
        &mut self,
        tool: &str,
        input_schema: &Value,
        url_base: &str,
        valid: usize,
        invalid: usize,
    ) -> Option<&'static str> {
        let version = self.context().version;
        let schema = schema_for(input_schema, version);
        let opts = GenOptions::with_url_base(url_base);
        let generator = match Generator::new(&schema, &opts) {
            Ok(g) => g,
            Err(e) => {
                self.schema_finding(tool, &e);
                return None;
            }
        };
        let started = Instant::now();
        let budget = self.config.tool_budget;
        self.tool_deadline = Some(started + budget);
        let over = |started: Instant| started.elapsed() >= budget;
        // Set when a case missed its deadline: the tool's remaining cases are skipped.
        let mut stalled = false;
        // 1. Boundary cases (deterministic).
        if let Ok(cases) = generator.boundary() {
            for case in cases.into_iter().take(BOUNDARY_CASES) {
                if self.gave_up || stalled || over(started) {
                    break;
                }
                let (value, violation) = match case {
                    Case::Valid { value, .. } => (value, None),
                    Case::Invalid { value, violation } => (value, Some(violation)),
                };
                if self.already_called(tool, &value) {
                    continue;
                }
                let outcome = self.run_case(tool, value, violation, "boundary").await;
                stalled |= outcome.missed;
                let outcome = self.finalize(outcome);
                self.add(outcome.findings);
            }
        }
        // 2. Hostile strings (NUL, RTL marks, emoji, path traversal, SQL and shell
        //    metacharacters, templates, a 1 MiB string) in each top-level string property of
        //    a small valid value, where the schema admits them.
        if let Ok(example) = generator.example() {
            for (_, value) in hostile_variants(&generator, input_schema, &example) {
                if self.gave_up || stalled || over(started) {
                    break;
                }
                if self.already_called(tool, &value) {
                    continue;
                }
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
                if self.gave_up || stalled || over(started) {
                    break;
                }
                let Ok(mut tree) = strategy.new_tree(&mut runner) else {
                    break;
                };
                let value = tree.current();
                if self.already_called(tool, &value) {
                    continue;
                }
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
                if self.gave_up || stalled || over(started) {
                    break;
                }
                let Ok(mut tree) = strategy.new_tree(&mut runner) else {
                    break;
                };
                let (value, violation) = tree.current();
                if self.already_called(tool, &value) {
                    continue;
                }
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
        if stalled {
            Some("deadline missed")
        } else if over(started) {
            Some("time budget")
        } else {
            None
        }
    }

    fn schema_finding(&mut self, tool: &str, error: &GenError) {
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
    async fn run_case(
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
        (self.on_event)(&Event::Step { label: &label });
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
        let exchange = session
            .call_tool_within(probe, tool, &arguments, max_wait)
            .await;
        let ping = session.liveness().await;
        let stderr = session.stderr_tail();
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
    async fn shrink<T: ValueTree>(
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
    fn finalize(&mut self, mut outcome: CaseOutcome) -> CaseOutcome {
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

/// Each hostile string put into each top-level string property of `example`, when the result
/// still satisfies the schema.
fn hostile_variants(
    generator: &Generator,
    input_schema: &Value,
    example: &Value,
) -> Vec<(String, Value)> {
    let Some(props) = input_schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (name, schema) in props {
        let is_string = match schema.get("type") {
            Some(Value::String(t)) => t == "string",
            Some(Value::Array(ts)) => ts.iter().any(|t| t == "string"),
            _ => false,
        };
        if !is_string {
            continue;
        }
        for hostile in crate::generate::hostile_strings() {
            let mut value = example.clone();
            if let Some(obj) = value.as_object_mut() {
                obj.insert(name.clone(), Value::from(*hostile));
            }
            if generator.is_valid(&value) {
                out.push((name.clone(), value));
            }
        }
    }
    out
}

fn dead_exchange(probe: Probe) -> Exchange {
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
