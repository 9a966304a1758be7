//! The terminal reporter: a progress bar on stderr while the run goes (only on a TTY), then a
//! summary on stdout grouped by invariant, violations first, each finding with its request,
//! response excerpt and spec link.

use std::fmt::Write as _;
use std::io::IsTerminal;

use console::style;
use indicatif::{ProgressBar, ProgressStyle};

use crate::finding::{self, Finding, Severity};
use crate::run::{Event, Report};

/// Live progress of a `mcp-chaos run` on stderr: a bar of probes done out of planned (on a
/// TTY), else one line per notable event.
#[derive(Debug)]
pub struct Progress {
    bar: ProgressBar,
    quiet: bool,
}

impl Progress {
    /// A progress display: a bar when stderr is a terminal and `quiet` is false, otherwise
    /// one line per notable event (start, restart) unless `quiet`.
    pub fn new(quiet: bool) -> Progress {
        let bar = if !quiet && std::io::stderr().is_terminal() {
            let bar = ProgressBar::new(0);
            bar.set_style(
                ProgressStyle::with_template(
                    "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {msg}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            bar
        } else {
            ProgressBar::hidden()
        };
        Progress { bar, quiet }
    }

    /// Updates the display for one run event: advances or lengthens the bar, and prints a
    /// line for notable events (start, tools left out, phases). Warnings print even when
    /// `quiet`.
    pub fn event(&mut self, event: &Event<'_>) {
        match event {
            Event::Starting { server } => self.line(&format!("starting {server}")),
            Event::Initialized { negotiated } => self.line(&format!(
                "initialized {} (protocol {})",
                negotiated
                    .server_info
                    .get("name")
                    .and_then(|n| n.as_str())
                    .unwrap_or("server"),
                negotiated.answered
            )),
            Event::Tools {
                skipped,
                unmatched,
                destructive,
            } => {
                if !skipped.is_empty() {
                    let names: Vec<String> = skipped
                        .iter()
                        .map(|s| format!("{} ({})", s.tool, s.reason))
                        .collect();
                    self.line(&format!(
                        "{} tools left out: {}",
                        skipped.len(),
                        names.join(", ")
                    ));
                }
                // Printed even with --quiet: they say what the run is about to do.
                for glob in *unmatched {
                    self.warn(&format!(
                        "warning: {glob:?} matches no tool the server lists"
                    ));
                }
                if !destructive.is_empty() {
                    self.warn(&format!(
                        "warning: {} annotated destructiveHint: true and will be called with generated arguments: {}. Run against a test instance, or leave them out with --skip-tools or --read-only.",
                        if destructive.len() == 1 { "this tool is" } else { "these tools are" },
                        destructive.join(", ")
                    ));
                }
            }
            Event::Planned { tools, steps } => {
                self.bar.set_length(*steps as u64);
                self.line(&format!("{tools} tools; {steps} probes planned"));
            }
            Event::Step { label } => {
                self.bar.inc(1);
                self.bar.set_message(label.to_string());
            }
            Event::FaultPhase {
                tool,
                faults: 0,
                tried,
            } => self.line(&format!(
                "{tool}: none of its {tried} calls reached the upstream; no faults injected"
            )),
            Event::FaultPhase { tool, faults, .. } => {
                self.bar.inc_length(*faults as u64);
                self.line(&format!(
                    "{tool}: calling it under {faults} upstream fault profiles"
                ));
            }
            Event::FaultProperties { tool, cases } => {
                self.bar.inc_length(*cases as u64);
                self.line(&format!(
                    "{tool}: up to {cases} fault property cases (arguments, fault and scope drawn together)"
                ));
            }
            Event::ToolGenerated { phase } => match &phase.skipped {
                Some(why) => self.line(&format!("{}: not generated for ({why})", phase.tool)),
                None => self.line(&format!(
                    "{}: {} generated calls in {:.1} s{}{}",
                    phase.tool,
                    phase.calls,
                    phase.elapsed_ms as f64 / 1000.0,
                    phase
                        .cut
                        .map(|c| format!(" (cut short: {c})"))
                        .unwrap_or_default(),
                    if phase.limits.is_empty() {
                        String::new()
                    } else {
                        format!(" (within budgets: {})", phase.limits.join("; "))
                    }
                )),
            },
            Event::GeneratedBudgetSpent {
                covered,
                skipped,
                budget_ms,
            } => self.line(&format!(
                "generated phase: its budget of {:.0} s (--generated-budget-ms) is spent after \
                 {covered} tools; {skipped} tools not generated for (listed in the report)",
                *budget_ms as f64 / 1000.0
            )),
            Event::VersionSkipped { version } => {
                self.line(&format!("the server does not speak {version}; skipped"));
            }
            Event::Restarted { reason, .. } => {
                self.line(&format!("restarting the server: {reason}"))
            }
            Event::SecondServer { message } => self.line(message),
            Event::Exchange { .. } | Event::Finding { .. } | Event::StartFailed { .. } => {}
        }
    }

    /// A line printed even when quiet.
    fn warn(&self, text: &str) {
        if self.bar.is_hidden() {
            eprintln!("mcp-chaos: {text}");
        } else {
            self.bar.println(text);
        }
    }

    fn line(&self, text: &str) {
        if self.quiet {
            return;
        }
        if self.bar.is_hidden() {
            eprintln!("mcp-chaos: {text}");
        } else {
            self.bar.println(text);
        }
    }

    /// Clears the progress bar from the terminal (call before printing the summary).
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// The summary of a report, as text (styled when `color`).
pub fn render(report: &Report, color: bool) -> String {
    let s = |text: String,
             f: fn(console::StyledObject<String>) -> console::StyledObject<String>| {
        if color {
            f(style(text)).to_string()
        } else {
            text
        }
    };
    let mut out = String::new();
    let info = &report.server.server_info;
    let name = info
        .get("name")
        .and_then(|v| v.as_str())
        .unwrap_or("server");
    let version = info.get("version").and_then(|v| v.as_str()).unwrap_or("");
    let _ = writeln!(
        out,
        "{} {name} {version} (protocol {})",
        s(format!("mcp-chaos {}:", report.mcp_chaos_version), |x| x
            .bold()),
        if report.server.protocol_version.is_empty() {
            "?"
        } else {
            &report.server.protocol_version
        }
    );
    if let Some(cmd) = report
        .server
        .command
        .as_ref()
        .or(report.server.url.as_ref())
    {
        let _ = writeln!(out, "  server: {cmd}");
    }
    if let Some(error) = &report.error {
        let what = match report.outcome {
            crate::run::live::RunOutcome::Interrupted => "INTERRUPTED",
            _ => "DID NOT START",
        };
        let _ = writeln!(
            out,
            "  {}: {}",
            s(what.to_owned(), |x| x.red().bold()),
            error.message.lines().next().unwrap_or_default()
        );
    }
    let sum = &report.summary;
    let restarts = restarts_text(sum.restarts, sum.fresh_restarts);
    let _ = writeln!(
        out,
        "  {} exchanges, {} tool calls, {:.1} s, {restarts}",
        sum.exchanges,
        sum.tool_calls,
        sum.duration_ms as f64 / 1000.0,
    );
    let f = &sum.features;
    if !f.is_empty() {
        let _ = writeln!(
            out,
            "  features: {} resource request(s) ({} resources, {} templates listed), {} prompt request(s) ({} prompts listed), {} completion(s), {} setLevel, {} unadvertised",
            f.resources,
            f.resources_listed,
            f.templates_listed,
            f.prompts,
            f.prompts_listed,
            f.completions,
            f.logging,
            f.gating
        );
    }
    let reached: Vec<String> = f
        .upstream
        .iter()
        .filter(|r| r.reached)
        .map(|r| format!("{} {} ({} under faults)", r.method, r.target, r.faults))
        .collect();
    if !f.upstream.is_empty() {
        let _ = writeln!(
            out,
            "  features upstream: {} of {} read(s) and prompt(s) reached it{}",
            reached.len(),
            f.upstream.len(),
            if reached.is_empty() {
                String::new()
            } else {
                format!(": {}", reached.join(", "))
            }
        );
    }
    if !sum.upstream.is_empty() {
        let _ = writeln!(out, "{}", upstream_line(&sum.upstream));
    }
    if !sum.budget_cut.is_empty() {
        let _ = writeln!(
            out,
            "  budget (--budget-ms) spent; cut: {}",
            sum.budget_cut.join("; ")
        );
    }
    let d = &sum.dropped;
    if !d.is_empty() {
        let _ = writeln!(
            out,
            "  flood: {} notification(s) and {} server request(s) counted but not kept; {} request(s) left unanswered (rate limit), {} reply(ies) dropped (write queue full)",
            d.notifications, d.requests, d.throttled, d.unanswered
        );
    }
    for severity in [Severity::Violation, Severity::Warning] {
        let of: Vec<&Finding> = report
            .findings
            .iter()
            .filter(|f| f.severity == severity)
            .collect();
        if of.is_empty() {
            continue;
        }
        let title = match severity {
            Severity::Violation => s(format!("\nVIOLATIONS ({})", of.len()), |x| x.red().bold()),
            Severity::Warning => s(format!("\nWARNINGS ({})", of.len()), |x| x.yellow().bold()),
        };
        let _ = writeln!(out, "{title}");
        for inv in finding::CATALOG {
            let group: Vec<&&Finding> = of.iter().filter(|f| f.code == inv.code).collect();
            if group.is_empty() {
                continue;
            }
            let _ = writeln!(
                out,
                "\n  {} {} ({})",
                s(inv.code.to_owned(), |x| x.bold()),
                s(inv.name.to_owned(), |x| x.bold()),
                group.len()
            );
            let _ = writeln!(out, "    {}", inv.summary);
            for f in group.iter().take(5) {
                let tool = f
                    .tool
                    .as_deref()
                    .map(|t| format!("[{t}] "))
                    .unwrap_or_default();
                let times = if f.occurrences > 1 {
                    format!(" (×{})", f.occurrences)
                } else {
                    String::new()
                };
                let _ = writeln!(out, "    - {tool}{}{times}", f.message);
                if let Some(req) = &f.request {
                    let _ = writeln!(out, "        sent:     {}", one_line(req, 160));
                }
                if let Some(resp) = &f.response {
                    let _ = writeln!(out, "        received: {}", one_line(resp, 160));
                }
                if let Some(fault) = &f.fault {
                    let _ = writeln!(out, "        fault:    {}", describe_fault(fault));
                }
            }
            if group.len() > 5 {
                let _ = writeln!(
                    out,
                    "    … and {} more (see --report-json)",
                    group.len() - 5
                );
            }
            if let Some(first) = group.first() {
                let _ = writeln!(out, "    spec: {}", first.spec);
            }
        }
    }
    let verdict = if sum.violations > 0 {
        s(
            format!(
                "\nFAIL: {} violation(s), {} warning(s)",
                sum.violations, sum.warnings
            ),
            |x| x.red().bold(),
        )
    } else if report.error.is_some() {
        s(
            format!(
                "\nINCOMPLETE: the run did not complete; {} warning(s) so far",
                sum.warnings
            ),
            |x| x.red().bold(),
        )
    } else if sum.warnings > 0 {
        s(format!("\nPASS with {} warning(s)", sum.warnings), |x| {
            x.yellow().bold()
        })
    } else {
        s("\nPASS: no findings".to_owned(), |x| x.green().bold())
    };
    let _ = writeln!(out, "{verdict}");
    match &report.rerun {
        Some(cmd) => {
            let _ = writeln!(out, "seed {}; rerun exactly: {cmd}", report.seed);
        }
        None => {
            let _ = writeln!(
                out,
                "seed {} (rerun with --seed {})",
                report.seed, report.seed
            );
        }
    }
    if !report.findings.is_empty() {
        let _ = writeln!(
            out,
            "Run `mcp-chaos explain CODE` for what an invariant means and how to fix it."
        );
    }
    out
}

/// `not-found (404), hit GET /weather?city=x [+2 more]`; a scoped fault names its scope:
/// `unavailable (503) on the first request only, hit GET /stations?city=x [+1 more]`.
/// The summary's restart count, split when some restarts were onto a fresh server that did
/// not fail (see [`crate::run::Summary::fresh_restarts`]).
fn restarts_text(all: u32, fresh: u32) -> String {
    match fresh {
        0 => format!("{all} restart(s)"),
        _ if fresh >= all => format!("{all} restart(s), each onto a fresh server"),
        _ => format!(
            "{all} restart(s): {} after a failure, {fresh} onto a fresh server",
            all - fresh
        ),
    }
}

fn describe_fault(fault: &serde_json::Value) -> String {
    let name = fault.get("name").and_then(|v| v.as_str()).unwrap_or("?");
    let status = fault
        .get("status")
        .and_then(serde_json::Value::as_u64)
        .map(|s| format!(" ({s})"))
        .unwrap_or_default();
    let status = match fault.get("scope").and_then(|v| v.as_str()) {
        Some(scope) => format!("{status} on {scope}"),
        None => status,
    };
    let hits = fault
        .get("upstream_requests")
        .and_then(|v| v.as_array())
        .cloned()
        .unwrap_or_default();
    let hit = match hits.first() {
        Some(h) => format!(
            ", hit {} {}{}",
            h.get("method").and_then(|v| v.as_str()).unwrap_or(""),
            h.get("target").and_then(|v| v.as_str()).unwrap_or(""),
            if hits.len() > 1 {
                format!(" [+{} more]", hits.len() - 1)
            } else {
                String::new()
            }
        ),
        None => ", no upstream request".to_owned(),
    };
    one_line(&format!("{name}{status}{hit}"), 160)
}

fn one_line(text: &str, max: usize) -> String {
    let flat: String = text
        .chars()
        .map(|c| if c == '\n' || c == '\r' { ' ' } else { c })
        .collect();
    if flat.chars().count() <= max {
        flat
    } else {
        let cut: String = flat.chars().take(max).collect();
        format!("{cut}…")
    }
}

/// The summary's upstream line: which tools reached the fake upstream (with the smallest
/// arguments that did) and which did not, with how many calls tried.
fn upstream_line(reach: &[crate::run::reach::ToolReach]) -> String {
    let reached: Vec<String> = reach
        .iter()
        .filter(|t| t.reached)
        .map(|t| {
            let args = t
                .arguments
                .as_ref()
                .map(|a| crate::wire::excerpt(a.to_string().as_bytes(), 80))
                .unwrap_or_default();
            format!("{} {args}", t.tool)
        })
        .collect();
    let missed: Vec<String> = reach
        .iter()
        .filter(|t| !t.reached)
        .map(|t| format!("{} ({} calls)", t.tool, t.calls_tried))
        .collect();
    let mut line = String::from("  upstream: ");
    if reached.is_empty() {
        line.push_str("no tool reached it");
    } else {
        let _ = write!(line, "reached by {}", reached.join(", "));
    }
    if !missed.is_empty() {
        let _ = write!(line, "; not reached by {}", missed.join(", "));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::describe_fault;
    use super::restarts_text;

    #[test]
    fn restarts_onto_a_fresh_server_are_told_apart_from_failures() {
        assert_eq!(restarts_text(2, 0), "2 restart(s)");
        assert_eq!(
            restarts_text(2, 2),
            "2 restart(s), each onto a fresh server"
        );
        assert_eq!(
            restarts_text(7, 5),
            "7 restart(s): 2 after a failure, 5 onto a fresh server"
        );
    }

    #[test]
    fn a_fault_line_names_the_scope_when_there_is_one() {
        let hits = serde_json::json!([
            {"method": "GET", "target": "/stations?city=Oslo"},
            {"method": "GET", "target": "/forecast?city=Oslo"}
        ]);
        let every =
            serde_json::json!({"name": "unavailable", "status": 503, "upstream_requests": hits});
        assert_eq!(
            describe_fault(&every),
            "unavailable (503), hit GET /stations?city=Oslo [+1 more]"
        );
        let mut first = every.clone();
        first["scope"] = "the first request only".into();
        assert_eq!(
            describe_fault(&first),
            "unavailable (503) on the first request only, hit GET /stations?city=Oslo [+1 more]"
        );
    }
}
