//! The terminal reporter of `mcp-chaos scenario`: a spinner per running scenario on stderr
//! (on a TTY; otherwise one line per scenario as it ends), then a summary table on stdout and
//! the details of every new finding and failed expectation.

use std::fmt::Write as _;
use std::io::IsTerminal;
use std::sync::Mutex;

use indicatif::{MultiProgress, ProgressBar, ProgressStyle};

use crate::scenario::outcome::{
    FindingStatus, ScenarioReport, ScenarioStatus, SuiteEvent, SuiteReport,
};

/// Live progress of a suite run. Shared by concurrent scenarios (`&self` methods).
#[derive(Debug)]
pub struct SuiteProgress {
    multi: Option<MultiProgress>,
    bars: Mutex<Vec<(String, ProgressBar)>>,
    quiet: bool,
    total: usize,
    done: Mutex<usize>,
}

impl SuiteProgress {
    /// A display for `total` scenarios: spinners on a TTY unless `quiet`, otherwise one line
    /// per scenario as it ends (none when `quiet`).
    pub fn new(total: usize, quiet: bool) -> SuiteProgress {
        let multi = (!quiet && std::io::stderr().is_terminal()).then(MultiProgress::new);
        SuiteProgress {
            multi,
            bars: Mutex::new(Vec::new()),
            quiet,
            total,
            done: Mutex::new(0),
        }
    }

    fn bar(&self, name: &str) -> Option<ProgressBar> {
        let bars = self.bars.lock().ok()?;
        bars.iter().find(|(n, _)| n == name).map(|(_, b)| b.clone())
    }

    /// Updates the display for one event: `Started` adds the scenario's spinner, `Step` and
    /// `Run` update its message, `Finished` removes it and prints the scenario's result line
    /// (on stderr).
    pub fn event(&self, event: &SuiteEvent<'_>) {
        match event {
            SuiteEvent::Started { name, steps } => {
                if let Some(multi) = &self.multi {
                    let bar = multi.add(ProgressBar::new(*steps as u64));
                    bar.set_style(
                        ProgressStyle::with_template(
                            "{spinner} [{elapsed_precise}] {prefix:.bold} {pos}/{len} {wide_msg}",
                        )
                        .unwrap_or_else(|_| ProgressStyle::default_bar()),
                    );
                    bar.set_prefix((*name).to_owned());
                    bar.enable_steady_tick(std::time::Duration::from_millis(200));
                    if let Ok(mut bars) = self.bars.lock() {
                        bars.push(((*name).to_owned(), bar));
                    }
                }
            }
            SuiteEvent::Step { name, label } => {
                if let Some(bar) = self.bar(name) {
                    bar.inc(1);
                    bar.set_message((*label).to_owned());
                }
            }
            SuiteEvent::Run { name, event } => {
                if let (Some(bar), crate::run::Event::Step { label }) = (self.bar(name), event) {
                    bar.set_message((*label).to_owned());
                }
            }
            SuiteEvent::Finished { report } => {
                let n = match self.done.lock() {
                    Ok(mut d) => {
                        *d += 1;
                        *d
                    }
                    Err(_) => 0,
                };
                let line = format!("[{n}/{}] {}", self.total, one_line(report));
                if let Some(bar) = self.bar(&report.name) {
                    bar.finish_and_clear();
                    if let Some(multi) = &self.multi {
                        let _ = multi.println(line);
                    }
                } else if !self.quiet {
                    eprintln!("mcp-chaos: {line}");
                }
            }
        }
    }
}

fn counts(report: &ScenarioReport) -> (usize, usize, usize, usize) {
    let mut c = (0, 0, 0, 0);
    for f in &report.findings {
        match f.status {
            FindingStatus::New => c.0 += 1,
            FindingStatus::Known(_) => c.1 += 1,
            FindingStatus::Baseline(_) => c.2 += 1,
            FindingStatus::Expected => c.3 += 1,
        }
    }
    c
}

fn status_word(status: &ScenarioStatus) -> &'static str {
    match status {
        ScenarioStatus::Passed => "PASS",
        ScenarioStatus::Failed => "FAIL",
        ScenarioStatus::Error(_) => "ERROR",
    }
}

/// `PASS fixture (3 steps, 0 new, 2 baseline) 4.2 s`.
fn one_line(report: &ScenarioReport) -> String {
    let (new, known, baseline, expected) = counts(report);
    let mut parts = vec![
        format!("{} steps", report.steps.len()),
        format!("{new} new"),
    ];
    for (n, what) in [
        (known, "known"),
        (baseline, "baseline"),
        (expected, "expected"),
    ] {
        if n > 0 {
            parts.push(format!("{n} {what}"));
        }
    }
    let mut line = format!(
        "{} {} ({}) {:.1} s",
        status_word(&report.status),
        report.name,
        parts.join(", "),
        report.duration_ms as f64 / 1000.0
    );
    if let ScenarioStatus::Error(e) = &report.status {
        let _ = write!(line, ": {e}");
    }
    line
}

/// The suite's summary as text: a table of scenarios, the new findings in detail, the fixed
/// baseline entries, and the verdict.
pub fn render(report: &SuiteReport) -> String {
    let mut out = String::new();
    let shard = report
        .shard
        .map(|(i, n)| format!(", shard {i}/{n}"))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "mcp-chaos {}: {} scenario(s){shard}, {:.1} s",
        report.mcp_chaos_version,
        report.scenarios.len(),
        report.duration_ms as f64 / 1000.0
    );
    if report.interrupted {
        let _ = writeln!(
            out,
            "  INTERRUPTED: {} scenario(s) had not finished: {}",
            report.unfinished.len(),
            report.unfinished.join(", ")
        );
    }
    let width = report
        .scenarios
        .iter()
        .map(|s| s.name.len())
        .max()
        .unwrap_or(8)
        .max(8);
    let _ = writeln!(
        out,
        "\n  {:<6} {:<width$} {:>5} {:>5} {:>5} {:>8} {:>8} {:>8}",
        "STATUS", "SCENARIO", "STEPS", "NEW", "KNOWN", "BASELINE", "EXPECTED", "TIME"
    );
    for s in &report.scenarios {
        let (new, known, baseline, expected) = counts(s);
        let _ = writeln!(
            out,
            "  {:<6} {:<width$} {:>5} {:>5} {:>5} {:>8} {:>8} {:>7.1}s",
            status_word(&s.status),
            s.name,
            s.steps.len(),
            new,
            known,
            baseline,
            expected,
            s.duration_ms as f64 / 1000.0
        );
    }
    for s in &report.scenarios {
        if let ScenarioStatus::Error(e) = &s.status {
            let _ = writeln!(out, "\nERROR {} ({}): {e}", s.name, s.file.display());
        }
        let new: Vec<_> = s.findings.iter().filter(|f| f.status.fails()).collect();
        if new.is_empty() {
            continue;
        }
        let _ = writeln!(out, "\nNEW in {} ({}):", s.name, s.file.display());
        for f in new {
            let tool = f
                .finding
                .tool
                .as_deref()
                .map(|t| format!(" [{t}]"))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "  - {} {} {}{tool} (line {}, fingerprint {}): {}",
                f.finding.code,
                f.finding.severity,
                f.finding.invariant,
                f.line,
                f.fingerprint,
                f.finding.message.replace('\n', " ")
            );
            let _ = writeln!(out, "      probe:  {}", f.finding.probe);
            if let Some(cmd) = &f.replay_command {
                let _ = writeln!(out, "      replay: {cmd}");
            }
        }
    }
    for s in &report.scenarios {
        for b in &s.fixed {
            let _ = writeln!(
                out,
                "\nFIXED in {}: {} {} ({}) — no longer reported; remove it from the baseline",
                s.name, b.code, b.invariant, b.probe
            );
        }
    }
    let failed = report
        .scenarios
        .iter()
        .filter(|s| s.status == ScenarioStatus::Failed)
        .count();
    let errored = report
        .scenarios
        .iter()
        .filter(|s| matches!(s.status, ScenarioStatus::Error(_)))
        .count();
    let passed = report.scenarios.len() - failed - errored;
    let _ = writeln!(
        out,
        "\n{}: {passed} passed, {failed} failed, {errored} could not run",
        match report.exit_code() {
            0 => "PASS",
            1 => "FAIL",
            _ => "ERROR",
        }
    );
    out
}
