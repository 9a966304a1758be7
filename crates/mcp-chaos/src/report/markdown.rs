//! The `--markdown` file of `mcp-chaos scenario`: a summary for a CI job page (written to
//! `$GITHUB_STEP_SUMMARY` on GitHub Actions; any GitHub-flavoured Markdown viewer reads it).
//!
//! Shape, top to bottom:
//! 1. a heading with the suite's outcome (`PASSED`, `FAILED`, `ERROR`), then one line of
//!    counts (scenarios passed, failed, errored), the wall time, the shard and the baseline,
//!    and, when SIGINT or SIGTERM stopped the run, a line saying so and naming the scenarios
//!    that did not finish;
//! 2. a table with one row per scenario: status (`PASS`, `FAIL`, `ERROR`), steps passed,
//!    findings by class (new, known, baseline, expected), baseline entries fixed, time;
//! 3. the reason of every scenario that errored;
//! 4. every new finding: code, invariant, severity, tool, scenario file and step line, probe,
//!    message, replay command, and the request and response excerpts in a collapsed block;
//! 5. the baseline entries that were not seen (fixed, or not reached);
//! 6. the accepted findings (known, baselined, expected) with their reasons, collapsed.
//!
//! Text from the report (messages, labels, reasons) is escaped so that it cannot break the
//! table or the page: `|` and newlines in cells, Markdown punctuation in prose, and code spans
//! and fenced blocks use more backticks than the text they hold.

use std::fmt::Write as _;
use std::path::Path;

use crate::report::forward_slashes;
use mcp_chaos_model::suite::{
    BaselineEntry, FindingStatus, ScenarioFinding, ScenarioReport, ScenarioStatus, SuiteReport,
};

/// GitHub shows at most 1 MiB of step summary per step; finding details stop before that, with
/// a note of how many were left out.
pub const MAX_BYTES: usize = 1000 * 1000;

/// The Markdown summary of a suite run (see the module documentation for its shape). Ends with
/// a newline.
pub fn markdown(report: &SuiteReport) -> String {
    let mut out = String::new();
    headline(&mut out, report);
    scenario_table(&mut out, report);
    errors(&mut out, report);
    new_findings(&mut out, report);
    fixed(&mut out, report);
    accepted(&mut out, report);
    out
}

/// Writes [`markdown`]`(report)` to `path` (replacing it), creating parent folders.
///
/// # Errors
///
/// Any error creating the folders or writing the file.
pub fn write_markdown(report: &SuiteReport, path: &Path) -> std::io::Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(path, markdown(report))
}

#[derive(Default)]
struct Counts {
    new: usize,
    known: usize,
    baseline: usize,
    expected: usize,
}

impl Counts {
    fn of(scenario: &ScenarioReport) -> Counts {
        let mut c = Counts::default();
        for f in &scenario.findings {
            match f.status {
                FindingStatus::New => c.new += 1,
                FindingStatus::Known(_) => c.known += 1,
                FindingStatus::Baseline(_) => c.baseline += 1,
                FindingStatus::Expected => c.expected += 1,
            }
        }
        c
    }
}

fn headline(out: &mut String, report: &SuiteReport) {
    let count = |pred: fn(&ScenarioStatus) -> bool| {
        report.scenarios.iter().filter(|s| pred(&s.status)).count()
    };
    let passed = count(|s| matches!(s, ScenarioStatus::Passed));
    let failed = count(|s| matches!(s, ScenarioStatus::Failed));
    let errored = count(|s| matches!(s, ScenarioStatus::Error(_)));
    let outcome = match report.exit_code() {
        0 => "PASSED",
        1 => "FAILED",
        _ => "ERROR",
    };
    let _ = writeln!(out, "## mcp-chaos scenarios: {outcome}\n");
    let total = report.scenarios.len();
    let _ = write!(
        out,
        "**{total} {}: {passed} passed, {failed} failed, {errored} errored** in {}",
        if total == 1 { "scenario" } else { "scenarios" },
        seconds(report.duration_ms)
    );
    if let Some((i, n)) = report.shard {
        let _ = write!(out, " · shard {i}/{n}");
    }
    if let Some(baseline) = &report.baseline {
        let _ = write!(out, " · baseline {}", code(&forward_slashes(baseline)));
    }
    let _ = writeln!(
        out,
        " · exit code {} · mcp-chaos {}\n",
        report.exit_code(),
        escape_text(&report.mcp_chaos_version)
    );
    if report.interrupted {
        let _ = write!(
            out,
            "**Interrupted** (SIGINT or SIGTERM): the findings are those found until then"
        );
        if !report.unfinished.is_empty() {
            let names: Vec<String> = report.unfinished.iter().map(|u| code(u)).collect();
            let _ = write!(out, "; not finished: {}", names.join(", "));
        }
        out.push_str(".\n\n");
    }
}

fn scenario_table(out: &mut String, report: &SuiteReport) {
    if report.scenarios.is_empty() {
        out.push_str("No scenario ran.\n\n");
        return;
    }
    out.push_str(
        "| Scenario | File | Status | Steps passed | New | Known | Baseline | Expected | Fixed | Time |\n",
    );
    out.push_str("|---|---|---|--:|--:|--:|--:|--:|--:|--:|\n");
    for s in &report.scenarios {
        let c = Counts::of(s);
        let status = match s.status {
            ScenarioStatus::Passed => "PASS",
            ScenarioStatus::Failed => "FAIL",
            ScenarioStatus::Error(_) => "ERROR",
        };
        let steps_passed = s.steps.iter().filter(|st| st.passed).count();
        let _ = writeln!(
            out,
            "| {} | {} | {status} | {steps_passed}/{} | {} | {} | {} | {} | {} | {} |",
            cell(&s.name),
            cell_code(&forward_slashes(&s.file)),
            s.steps.len(),
            c.new,
            c.known,
            c.baseline,
            c.expected,
            s.fixed.len(),
            seconds(s.duration_ms)
        );
    }
    out.push('\n');
}

fn errors(out: &mut String, report: &SuiteReport) {
    let errored: Vec<(&ScenarioReport, &str)> = report
        .scenarios
        .iter()
        .filter_map(|s| match &s.status {
            ScenarioStatus::Error(msg) => Some((s, msg.as_str())),
            _ => None,
        })
        .collect();
    if errored.is_empty() {
        return;
    }
    out.push_str("### Scenarios that could not be carried out\n\n");
    for (s, msg) in errored {
        let _ = writeln!(
            out,
            "- **{}** ({}, exit code {}): {}",
            escape_text(&s.name),
            code(&forward_slashes(&s.file)),
            s.exit_code,
            escape_text(msg)
        );
    }
    out.push('\n');
}

fn new_findings(out: &mut String, report: &SuiteReport) {
    let new: Vec<(&ScenarioReport, &ScenarioFinding)> = report
        .scenarios
        .iter()
        .flat_map(|s| s.findings.iter().map(move |f| (s, f)))
        .filter(|(_, f)| f.status.fails())
        .collect();
    if new.is_empty() {
        return;
    }
    let _ = writeln!(out, "### New findings ({})\n", new.len());
    for (shown, (s, f)) in new.iter().enumerate() {
        let mut block = String::new();
        finding_details(&mut block, s, f);
        // Leave room for the sections that follow.
        if out.len() + block.len() > MAX_BYTES * 9 / 10 {
            let _ = writeln!(
                out,
                "{} more new findings left out: GitHub step summaries hold at most 1 MiB. \
                 The JSON, JUnit and SARIF reports have them all.\n",
                new.len() - shown
            );
            return;
        }
        out.push_str(&block);
    }
}

fn finding_details(out: &mut String, s: &ScenarioReport, f: &ScenarioFinding) {
    let finding = &f.finding;
    let _ = writeln!(
        out,
        "#### {} {} ({})\n",
        code(&finding.code),
        escape_text(&finding.invariant),
        finding.severity
    );
    let _ = writeln!(
        out,
        "- **Scenario:** {} ({} line {})",
        escape_text(&s.name),
        code(&forward_slashes(&s.file)),
        f.line
    );
    if let Some(tool) = &finding.tool {
        let _ = writeln!(out, "- **Tool:** {}", code(tool));
    }
    if !finding.probe.is_empty() {
        let _ = writeln!(out, "- **Probe:** {}", escape_text(&finding.probe));
    }
    let _ = writeln!(out, "- **Message:** {}", escape_text(&finding.message));
    if !finding.spec.is_empty() {
        let _ = writeln!(
            out,
            "- **Spec:** <{}> (protocol {})",
            finding.spec.replace(['<', '>', ' '], ""),
            escape_text(&finding.protocol_version)
        );
    }
    if let Some(cmd) = &f.replay_command {
        let _ = writeln!(out, "- **Replay:**\n\n{}", fenced("sh", cmd, "  "));
    }
    if finding.request.is_some() || finding.response.is_some() {
        out.push_str("\n<details><summary>Request and response</summary>\n\n");
        if let Some(request) = &finding.request {
            let _ = writeln!(out, "Request:\n\n{}", fenced("", request, ""));
        }
        if let Some(response) = &finding.response {
            let _ = writeln!(out, "Response:\n\n{}", fenced("", response, ""));
        }
        out.push_str("</details>\n");
    }
    out.push('\n');
}

fn fixed(out: &mut String, report: &SuiteReport) {
    let fixed: Vec<&BaselineEntry> = report.scenarios.iter().flat_map(|s| &s.fixed).collect();
    if fixed.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "### Baseline entries not seen ({})\n\nFixed, or not reached this run; remove them \
         from the baseline once fixed.\n",
        fixed.len()
    );
    out.push_str("| Scenario | Code | Invariant | Tool | Probe | Reason | Fingerprint |\n");
    out.push_str("|---|---|---|---|---|---|---|\n");
    for e in fixed {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} |",
            cell(&e.scenario),
            cell_code(&e.code),
            cell(&e.invariant),
            e.tool.as_deref().map(cell_code).unwrap_or_default(),
            cell(&e.probe),
            cell(&e.reason),
            cell_code(&e.fingerprint)
        );
    }
    out.push('\n');
}

fn accepted(out: &mut String, report: &SuiteReport) {
    let accepted: Vec<(&ScenarioReport, &ScenarioFinding)> = report
        .scenarios
        .iter()
        .flat_map(|s| s.findings.iter().map(move |f| (s, f)))
        .filter(|(_, f)| !f.status.fails())
        .collect();
    if accepted.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "<details><summary>Accepted findings ({}): known, baselined or expected</summary>\n",
        accepted.len()
    );
    out.push_str("| Scenario | Line | Code | Invariant | Tool | Status | Reason | Message |\n");
    out.push_str("|---|--:|---|---|---|---|---|---|\n");
    for (s, f) in accepted {
        let (status, reason) = match &f.status {
            FindingStatus::Known(r) => ("known", r.as_str()),
            FindingStatus::Baseline(r) => ("baseline", r.as_str()),
            FindingStatus::Expected => ("expected", ""),
            FindingStatus::New => ("new", ""),
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {status} | {} | {} |",
            cell(&s.name),
            f.line,
            cell_code(&f.finding.code),
            cell(&f.finding.invariant),
            f.finding.tool.as_deref().map(cell_code).unwrap_or_default(),
            cell(reason),
            cell(&f.finding.message)
        );
    }
    out.push_str("\n</details>\n");
}

/// `1.234 s`.
fn seconds(ms: u64) -> String {
    format!("{}.{:03} s", ms / 1000, ms % 1000)
}

/// Prose, escaped: Markdown punctuation gets a backslash, so that a message cannot open a
/// link, emphasis, a code span or an HTML tag; newlines become `<br>`.
pub(crate) fn escape_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '#' | '~' | '!' | '&' => {
                out.push('\\');
                out.push(c);
            }
            '\r' => {}
            '\n' => out.push_str("<br>"),
            _ => out.push(c),
        }
    }
    out
}

/// A table cell holding text: [`escape_text`].
fn cell(s: &str) -> String {
    escape_text(s)
}

/// A table cell holding a code span of `s`: [`code`], with `|` escaped all the same (GFM
/// splits rows into cells before it parses code spans; the backslash is dropped on display).
fn cell_code(s: &str) -> String {
    code(s).replace('|', "\\|")
}

/// A code span holding `s` verbatim: delimited by one backtick more than the longest run of
/// backticks in `s`, padded with a space when `s` starts or ends with a backtick. Newlines
/// become spaces (a code span is one line).
pub(crate) fn code(s: &str) -> String {
    let s = s.replace(['\r', '\n'], " ");
    if s.is_empty() {
        return "` `".to_owned();
    }
    let ticks = "`".repeat(longest_backtick_run(&s) + 1);
    let pad = if s.starts_with('`') || s.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{ticks}{pad}{s}{pad}{ticks}")
}

/// A fenced code block holding `s` verbatim, each line prefixed with `indent`; the fence is
/// longer than any run of backticks in `s`.
fn fenced(lang: &str, s: &str, indent: &str) -> String {
    let fence = "`".repeat((longest_backtick_run(s) + 1).max(3));
    let mut out = format!("{indent}{fence}{lang}\n");
    for line in s.lines() {
        let _ = writeln!(out, "{indent}{line}");
    }
    let _ = writeln!(out, "{indent}{fence}");
    out
}

fn longest_backtick_run(s: &str) -> usize {
    s.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_spans_outlast_their_backticks() {
        assert_eq!(code("a"), "`a`");
        assert_eq!(code("a`b"), "``a`b``");
        assert_eq!(code("`x`"), "`` `x` ``");
        assert_eq!(code("a``b"), "```a``b```");
        assert_eq!(code(""), "` `");
    }

    #[test]
    fn fences_outlast_their_backticks() {
        assert_eq!(fenced("sh", "echo hi", ""), "```sh\necho hi\n```\n");
        assert_eq!(
            fenced("", "a ```` b", "  "),
            "  `````\n  a ```` b\n  `````\n"
        );
    }

    #[test]
    fn text_and_cells_are_escaped() {
        assert_eq!(escape_text("a|b\nc *d* <x>"), "a\\|b<br>c \\*d\\* \\<x\\>");
        assert_eq!(cell_code("a|b"), "`a\\|b`");
        assert_eq!(cell("a|b"), "a\\|b");
        assert_eq!(seconds(1234), "1.234 s");
        assert_eq!(seconds(5), "0.005 s");
    }
}
