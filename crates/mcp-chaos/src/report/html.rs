//! The `--html` file of `run`, `demo` and `scenario`: one self-contained page (inline CSS, no
//! script, no image, no font, nothing fetched: it opens from disk, offline), from the suite
//! model every file reporter reads ([`SuiteReport`]; a run goes through
//! [`super::of_run::suite`]).
//!
//! Shape, per scenario (a run is one, `mcp-chaos run`):
//! 1. the verdict (`PASSED`, `FAILED`, `ERROR`) and counts (violations, warnings, steps),
//!    and, when SIGINT or SIGTERM stopped the run, a line saying so (with the scenarios that
//!    did not finish);
//! 2. the tool × fault matrix (`<table id="tool-fault-matrix">`): a row per tool, a column per
//!    upstream fault named by a finding plus `no fault`; each cell is the worst severity of the
//!    findings of that tool under that fault, coloured by it, with the findings' codes and
//!    messages in its `title` (hover) and a link to each finding below. An empty cell means
//!    no finding, not a call known to be right: the report keeps findings, not every answer;
//! 3. the tool × invariant matrix (`<table id="tool-invariant-matrix">`): a column per
//!    invariant found, cells counting occurrences;
//! 4. per-tool timing (generated calls and wall time of each step);
//! 5. every finding: code, invariant, severity, tool, probe, message, the request and response
//!    excerpts, the fault, the spec link and the replay (or rerun) command;
//! 6. the seed and, for a run, the rerun command.
//!
//! Every string from the report is HTML-escaped; links are plain anchors (never fetched).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

use crate::finding::Severity;
use mcp_chaos_model::suite::{ScenarioFinding, ScenarioReport, ScenarioStatus, SuiteReport};

/// The column of findings made under no upstream fault.
pub const NO_FAULT: &str = "no fault";

/// The HTML page of `report` (see the module documentation).
pub fn html(report: &SuiteReport) -> String {
    let mut out = String::new();
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    // No network at all, even if a string slipped through: the page forbids every fetch.
    out.push_str("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n");
    let _ = writeln!(
        out,
        "<title>mcp-chaos {} report</title>\n<style>{CSS}</style></head><body>",
        esc(&report.mcp_chaos_version)
    );
    let verdict = match report.exit_code() {
        0 => "PASSED",
        1 => "FAILED",
        _ => "ERROR",
    };
    let _ = writeln!(
        out,
        "<h1 class=\"{}\">mcp-chaos: {verdict}</h1><p>{} scenario(s), {:.1} s, mcp-chaos {}</p>",
        verdict.to_ascii_lowercase(),
        report.scenarios.len(),
        report.duration_ms as f64 / 1000.0,
        esc(&report.mcp_chaos_version)
    );
    if report.interrupted {
        let _ = write!(
            out,
            "<p class=\"interrupted\"><strong>Interrupted</strong> (SIGINT or SIGTERM): the findings are those found until then"
        );
        if !report.unfinished.is_empty() {
            let names: Vec<String> = report
                .unfinished
                .iter()
                .map(|u| format!("<code>{}</code>", esc(u)))
                .collect();
            let _ = write!(out, "; not finished: {}", names.join(", "));
        }
        out.push_str(".</p>\n");
    }
    for (i, scenario) in report.scenarios.iter().enumerate() {
        section(&mut out, i, scenario);
    }
    out.push_str("</body></html>\n");
    out
}

/// Writes [`html`]`(report)` to `path` (replacing it), creating parent folders.
///
/// # Errors
///
/// Any error creating the folders or writing the file.
pub fn write_html(report: &SuiteReport, path: &Path) -> std::io::Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(path, html(report))
}

const CSS: &str = "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}\
h1.passed{color:#17803d}h1.failed,h1.error{color:#b3261e}\
table{border-collapse:collapse;margin:.5em 0 1.5em}th,td{border:1px solid #ccc;padding:.25em .5em;text-align:left;vertical-align:top}\
th{background:#f3f3f3}td.violation{background:#f8d0cc}td.warning{background:#fbeec1}td.clean{background:#eef7ee}\
td a{color:inherit}pre{background:#f6f6f6;padding:.5em;white-space:pre-wrap;word-break:break-all;max-height:20em;overflow:auto}\
.finding{border-left:4px solid #ccc;padding-left:.75em;margin:1em 0}.finding.violation{border-color:#b3261e}.finding.warning{border-color:#c98a00}\
code{background:#f3f3f3;padding:0 .2em}p.interrupted{color:#b3261e}";

fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn tool_of(f: &ScenarioFinding) -> &str {
    f.finding.tool.as_deref().unwrap_or("(server)")
}

fn fault_of(f: &ScenarioFinding) -> String {
    f.finding
        .fault
        .as_ref()
        .and_then(|v| v.get("name"))
        .and_then(|v| v.as_str())
        .unwrap_or(NO_FAULT)
        .to_owned()
}

fn anchor(scenario: usize, finding: usize) -> String {
    format!("s{scenario}-f{finding}")
}

fn section(out: &mut String, si: usize, s: &ScenarioReport) {
    let (status, class) = match &s.status {
        ScenarioStatus::Passed => ("PASSED".to_owned(), "passed"),
        ScenarioStatus::Failed => ("FAILED".to_owned(), "failed"),
        ScenarioStatus::Error(e) => (format!("ERROR: {e}"), "error"),
    };
    let violations = s
        .findings
        .iter()
        .filter(|f| f.finding.severity == Severity::Violation)
        .count();
    let _ = writeln!(
        out,
        "<section><h2 class=\"{class}\">{}: {}</h2>\n<p>{violations} violation(s), {} warning(s), {} step(s), {:.1} s; seed <code>{}</code>{}</p>",
        esc(&s.name),
        esc(&status),
        s.findings.len() - violations,
        s.steps.len(),
        s.duration_ms as f64 / 1000.0,
        s.seed,
        s.server
            .as_ref()
            .map(|srv| format!(
                "; server <code>{}</code>, protocol {}",
                esc(srv.command.as_deref().or(srv.url.as_deref()).unwrap_or("?")),
                esc(&srv.protocol_version)
            ))
            .unwrap_or_default()
    );
    if let Some(cmd) = s.findings.first().and_then(|f| f.replay_command.as_deref()) {
        let _ = writeln!(out, "<p>Rerun: <code>{}</code></p>", esc(cmd));
    }

    // Rows: every tool of a step or a finding; columns: the faults findings name.
    let mut tools: BTreeSet<String> = s
        .steps
        .iter()
        .filter_map(|st| st.label.strip_prefix("tool ").map(str::to_owned))
        .collect();
    tools.extend(s.findings.iter().map(|f| tool_of(f).to_owned()));
    let mut faults: BTreeSet<String> = s.findings.iter().map(fault_of).collect();
    faults.insert(NO_FAULT.to_owned());
    let faults: Vec<String> = std::iter::once(NO_FAULT.to_owned())
        .chain(faults.into_iter().filter(|f| f != NO_FAULT))
        .collect();
    let _ = writeln!(
        out,
        "<h3>Tool × fault</h3><p>Worst finding per tool under each upstream fault (hover for the findings; an empty cell: no finding).</p><table id=\"tool-fault-matrix\"><tr><th>tool</th>{}</tr>",
        faults
            .iter()
            .map(|f| format!("<th>{}</th>", esc(f)))
            .collect::<String>()
    );
    for tool in &tools {
        let _ = write!(out, "<tr><th>{}</th>", esc(tool));
        for fault in &faults {
            let hits: Vec<(usize, &ScenarioFinding)> = s
                .findings
                .iter()
                .enumerate()
                .filter(|(_, f)| tool_of(f) == tool && &fault_of(f) == fault)
                .collect();
            cell(out, si, &hits);
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");

    let invariants: BTreeSet<(String, String)> = s
        .findings
        .iter()
        .map(|f| (f.finding.code.clone(), f.finding.invariant.clone()))
        .collect();
    if !invariants.is_empty() {
        let _ = writeln!(
            out,
            "<h3>Tool × invariant</h3><table id=\"tool-invariant-matrix\"><tr><th>tool</th>{}</tr>",
            invariants
                .iter()
                .map(|(c, n)| format!("<th title=\"{}\">{}</th>", esc(n), esc(c)))
                .collect::<String>()
        );
        for tool in &tools {
            let _ = write!(out, "<tr><th>{}</th>", esc(tool));
            for (code, _) in &invariants {
                let hits: Vec<(usize, &ScenarioFinding)> = s
                    .findings
                    .iter()
                    .enumerate()
                    .filter(|(_, f)| tool_of(f) == tool && &f.finding.code == code)
                    .collect();
                cell(out, si, &hits);
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</table>\n");
    }

    out.push_str("<h3>Timing</h3><table id=\"timing\"><tr><th>step</th><th>exchanges</th><th>time (s)</th><th>passed</th></tr>\n");
    for st in &s.steps {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{:.2}</td><td class=\"{}\">{}</td></tr>",
            esc(&st.label),
            st.exchanges,
            st.duration_ms as f64 / 1000.0,
            if st.passed { "clean" } else { "violation" },
            if st.passed { "yes" } else { "no" }
        );
    }
    out.push_str("</table>\n");

    if !s.findings.is_empty() {
        out.push_str("<h3>Findings</h3>\n");
    }
    for (fi, f) in s.findings.iter().enumerate() {
        finding(out, &anchor(si, fi), f);
    }
    out.push_str("</section>\n");
}

fn cell(out: &mut String, si: usize, hits: &[(usize, &ScenarioFinding)]) {
    if hits.is_empty() {
        out.push_str("<td></td>");
        return;
    }
    let worst = if hits
        .iter()
        .any(|(_, f)| f.finding.severity == Severity::Violation)
    {
        "violation"
    } else {
        "warning"
    };
    let title: Vec<String> = hits
        .iter()
        .map(|(_, f)| {
            format!(
                "{} {}: {}",
                f.finding.code, f.finding.invariant, f.finding.message
            )
        })
        .collect();
    let links: Vec<String> = hits
        .iter()
        .map(|(i, f)| {
            format!(
                "<a href=\"#{}\">{}</a>",
                anchor(si, *i),
                esc(&f.finding.code)
            )
        })
        .collect();
    let occurrences: u64 = hits.iter().map(|(_, f)| f.finding.occurrences).sum();
    let _ = write!(
        out,
        "<td class=\"{worst}\" title=\"{}\">{} ×{occurrences}</td>",
        esc(&title.join("\n")),
        links.join(" ")
    );
}

fn finding(out: &mut String, id: &str, f: &ScenarioFinding) {
    let x = &f.finding;
    let _ = writeln!(
        out,
        "<div class=\"finding {}\" id=\"{id}\"><h4>{} {} ({})</h4><p>{}</p>",
        x.severity,
        esc(&x.code),
        esc(&x.invariant),
        x.severity,
        esc(&x.message)
    );
    let mut rows: BTreeMap<&str, String> = BTreeMap::new();
    rows.insert("1 tool", x.tool.as_deref().map(esc).unwrap_or_default());
    rows.insert("2 probe", esc(&x.probe));
    rows.insert("3 protocol", esc(&x.protocol_version));
    if let Some(fault) = &x.fault {
        rows.insert(
            "4 fault",
            format!("<code>{}</code>", esc(&fault.to_string())),
        );
    }
    rows.insert("5 spec", format!("<a href=\"{0}\">{0}</a>", esc(&x.spec)));
    if let Some(cmd) = f.replay_command.as_deref().or(x.replay.as_deref()) {
        rows.insert("6 replay", format!("<code>{}</code>", esc(cmd)));
    }
    out.push_str("<table>");
    for (k, v) in rows {
        let _ = write!(out, "<tr><th>{}</th><td>{v}</td></tr>", &k[2..]);
    }
    out.push_str("</table>\n");
    for (label, text) in [("request", &x.request), ("response", &x.response)] {
        if let Some(t) = text {
            let _ = writeln!(out, "<p>{label}:</p><pre>{}</pre>", esc(t));
        }
    }
    out.push_str("</div>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hostile server's text (in a message, a tool name, a response) stays text.
    #[test]
    fn report_strings_cannot_inject_markup() {
        use crate::run::{Report, ServerReport, Summary};
        let mut f = crate::finding::Finding::new(
            &crate::finding::CATALOG[0],
            Severity::Violation,
            crate::protocol::ProtocolVersion::LATEST_WITH_INITIALIZE,
            "<script src=\"http://evil.example/x.js\"></script>",
        );
        f.tool = Some("<img src=x>".into());
        f.response = Some("<link rel=stylesheet href=http://evil.example>".into());
        let report = Report {
            mcp_chaos_version: "0".into(),
            seed: 1,
            server: ServerReport {
                command: Some("<iframe>".into()),
                url: None,
                server_info: serde_json::Value::Null,
                protocol_version: String::new(),
            },
            summary: Summary::default(),
            findings: vec![f],
            versions: Vec::new(),
            outcome: crate::run::live::RunOutcome::Completed,
            interrupted: false,
            error: None,
            exchanges: Vec::new(),
            rerun: None,
        };
        let page = html(&super::super::of_run::suite(&report));
        for tag in ["<script", "<img", "<link", "<iframe"] {
            assert!(!page.contains(tag), "{tag} in {page}");
        }
        assert!(page.contains("&lt;script src=&quot;http://evil.example/x.js&quot;"));
    }

    #[test]
    fn escapes_markup() {
        assert_eq!(
            esc("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }
}
