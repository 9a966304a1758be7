//! The `--junit` file of `mcp-chaos scenario`: JUnit XML for CI test views.
//!
//! Shape: one `<testsuites name="mcp-chaos">` holding one `<testsuite>` per scenario (named
//! after the scenario, in the order of [`SuiteReport::scenarios`]) and one `<testcase>` per
//! `[[step]]` (name = the step's label, `classname` = the scenario's name, `file` and `line`
//! attributes pointing at the step in the scenario file, `time` in seconds).
//!
//! - A step that did not pass is a `<failure>`: its message names every new finding (code,
//!   invariant, tool, message); its text adds each one's probe, spec link, request and
//!   response excerpts and replay command.
//! - Findings that do not fail the step (known, baselined, expected) go to the testcase's
//!   `<system-out>`, with their reasons.
//! - A scenario that could not be carried out ([`ScenarioStatus::Error`]) gets an extra
//!   testcase, `scenario`, with an `<error>` (not a failure) carrying the reason.
//! - Findings that no step claims get an extra testcase, `scenario findings`; and a failed
//!   scenario none of whose testcases failed gets a failing `scenario` testcase, so the
//!   failure count of every suite agrees with the scenario's status.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use quick_junit::{NonSuccessKind, Property, Report, TestCase, TestCaseStatus, TestSuite};

use crate::report::forward_slashes;
use mcp_chaos_model::suite::{
    FindingStatus, ScenarioFinding, ScenarioReport, ScenarioStatus, StepReport, SuiteReport,
};

/// The name of the extra testcase that carries a scenario's error, or its failure when no
/// step failed.
pub const SCENARIO_CASE: &str = "scenario";

/// The name of the extra testcase that carries findings no step claims.
pub const UNCLAIMED_CASE: &str = "scenario findings";

/// The JUnit report of a suite run: one test suite per scenario, one test case per step (see
/// the module documentation for the exact shape). Deterministic: no timestamps or ids are
/// added, so the same report gives the same XML.
pub fn junit(report: &SuiteReport) -> Report {
    let mut out = Report::new("mcp-chaos");
    out.set_time(Duration::from_millis(report.duration_ms));
    for scenario in &report.scenarios {
        out.add_test_suite(suite(scenario));
    }
    out
}

/// Writes [`junit`]`(report)` as XML to `path` (replacing it), creating parent folders.
///
/// # Errors
///
/// Any error creating the folders or writing the file; a serialization error (which does not
/// happen for well-formed strings) comes back as [`std::io::ErrorKind::Other`].
pub fn write_junit(report: &SuiteReport, path: &Path) -> std::io::Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    let text = junit(report).to_string().map_err(std::io::Error::other)?;
    std::fs::write(path, text)
}

fn suite(scenario: &ScenarioReport) -> TestSuite {
    let file = forward_slashes(&scenario.file);
    let mut suite = TestSuite::new(scenario.name.as_str());
    suite.set_time(Duration::from_millis(scenario.duration_ms));
    suite.add_property(Property::new("file", file.as_str()));
    suite.add_property(Property::new("seed", scenario.seed.to_string()));
    suite.add_property(Property::new("exit_code", scenario.exit_code.to_string()));
    if let Some(server) = &scenario.server {
        suite.add_property(Property::new(
            "protocol_version",
            server.protocol_version.as_str(),
        ));
    }

    // Labels name the test cases; a label used twice gets its line, so that CI tools that
    // key cases by classname and name keep them apart.
    let mut seen = HashSet::new();
    let duplicated: HashSet<&str> = scenario
        .steps
        .iter()
        .filter(|s| !seen.insert(s.label.as_str()))
        .map(|s| s.label.as_str())
        .collect();

    let mut any_failed = false;
    for step in &scenario.steps {
        let name = if duplicated.contains(step.label.as_str()) {
            format!("{} (line {})", step.label, step.line)
        } else {
            step.label.clone()
        };
        any_failed |= !step.passed;
        suite.add_test_case(step_case(scenario, step, name, &file));
    }

    let claimed: HashSet<usize> = scenario
        .steps
        .iter()
        .flat_map(|s| s.findings.iter().copied())
        .collect();
    let unclaimed: Vec<&ScenarioFinding> = scenario
        .findings
        .iter()
        .enumerate()
        .filter(|(i, _)| !claimed.contains(i))
        .map(|(_, f)| f)
        .collect();
    if !unclaimed.is_empty() {
        let failing = unclaimed.iter().any(|f| f.status.fails());
        any_failed |= failing;
        let mut case = findings_case(UNCLAIMED_CASE, &unclaimed, failing);
        case.set_classname(scenario.name.as_str());
        set_location(&mut case, &file, None);
        suite.add_test_case(case);
    }

    match &scenario.status {
        ScenarioStatus::Error(msg) => {
            let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
            status.set_message(msg.as_str());
            status.set_type("scenario error");
            status.set_description(format!(
                "scenario {} could not be carried out (exit code {}): {msg}",
                scenario.name, scenario.exit_code
            ));
            let mut case = TestCase::new(SCENARIO_CASE, status);
            case.set_classname(scenario.name.as_str());
            set_location(&mut case, &file, None);
            suite.add_test_case(case);
        }
        ScenarioStatus::Failed if !any_failed => {
            let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
            status.set_message("the scenario failed, though none of its steps did");
            status.set_type("scenario failure");
            let mut case = TestCase::new(SCENARIO_CASE, status);
            case.set_classname(scenario.name.as_str());
            set_location(&mut case, &file, None);
            suite.add_test_case(case);
        }
        ScenarioStatus::Passed | ScenarioStatus::Failed => {}
    }
    suite
}

fn step_case(scenario: &ScenarioReport, step: &StepReport, name: String, file: &str) -> TestCase {
    let findings: Vec<&ScenarioFinding> = step
        .findings
        .iter()
        .filter_map(|&i| scenario.findings.get(i))
        .collect();
    let mut case = findings_case(name, &findings, !step.passed);
    case.set_classname(scenario.name.as_str());
    case.set_time(Duration::from_millis(step.duration_ms));
    case.add_property(Property::new("exchanges", step.exchanges.to_string()));
    set_location(&mut case, file, Some(step.line));
    case
}

/// A test case over `findings`: a failure naming the new ones when `failed`, and the others
/// (or all, when not `failed`) in system-out.
fn findings_case(
    name: impl Into<quick_junit::XmlString>,
    findings: &[&ScenarioFinding],
    failed: bool,
) -> TestCase {
    let (new, accepted): (Vec<&ScenarioFinding>, Vec<&ScenarioFinding>) = if failed {
        findings.iter().partition(|f| f.status.fails())
    } else {
        (Vec::new(), findings.to_vec())
    };
    let status = if failed {
        let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
        if new.is_empty() {
            status.set_message("an expectation of the step did not hold");
        } else {
            let names: Vec<String> = new.iter().map(|f| one_line(f)).collect();
            let noun = if new.len() == 1 {
                "finding"
            } else {
                "findings"
            };
            status.set_message(format!("{} new {noun}: {}", new.len(), names.join("; ")));
            status.set_type(
                new.iter()
                    .map(|f| f.finding.code.as_str())
                    .collect::<Vec<_>>()
                    .join(","),
            );
            let details: Vec<String> = new.iter().map(|f| details(f)).collect();
            status.set_description(details.join("\n"));
        }
        status
    } else {
        TestCaseStatus::success()
    };
    let mut case = TestCase::new(name, status);
    if !accepted.is_empty() {
        let lines: Vec<String> = accepted
            .iter()
            .map(|f| format!("{}: {}", status_text(&f.status), one_line(f)))
            .collect();
        case.set_system_out(lines.join("\n") + "\n");
    }
    case
}

fn set_location(case: &mut TestCase, file: &str, line: Option<usize>) {
    case.extra.insert("file".into(), file.into());
    if let Some(line) = line {
        case.extra.insert("line".into(), line.to_string().into());
    }
}

/// `MC102 wrong-error-code (tool get_record): message`.
fn one_line(f: &ScenarioFinding) -> String {
    let mut s = format!("{} {}", f.finding.code, f.finding.invariant);
    if let Some(tool) = &f.finding.tool {
        let _ = write!(s, " (tool {tool})");
    }
    let _ = write!(s, ": {}", f.finding.message);
    if let Some(cmd) = &f.replay_command {
        let _ = write!(s, " [replay: {cmd}]");
    }
    s
}

/// Every field a reader needs to act on a new finding, one per line.
fn details(f: &ScenarioFinding) -> String {
    let finding = &f.finding;
    let mut s = format!(
        "{} {} ({}, protocol {})\n",
        finding.code, finding.invariant, finding.severity, finding.protocol_version
    );
    if let Some(tool) = &finding.tool {
        let _ = writeln!(s, "tool: {tool}");
    }
    let _ = writeln!(s, "step line: {}", f.line);
    if !finding.probe.is_empty() {
        let _ = writeln!(s, "probe: {}", finding.probe);
    }
    let _ = writeln!(s, "message: {}", finding.message);
    let _ = writeln!(s, "spec: {}", finding.spec);
    if let Some(fault) = &finding.fault {
        let _ = writeln!(s, "fault: {fault}");
    }
    if let Some(request) = &finding.request {
        let _ = writeln!(s, "request: {request}");
    }
    if let Some(response) = &finding.response {
        let _ = writeln!(s, "response: {response}");
    }
    if let Some(replay) = &finding.replay {
        let _ = writeln!(s, "replay file: {replay}");
    }
    if let Some(cmd) = &f.replay_command {
        let _ = writeln!(s, "replay: {cmd}");
    }
    let _ = writeln!(s, "fingerprint: {}", f.fingerprint);
    s
}

fn status_text(status: &FindingStatus) -> String {
    match status {
        FindingStatus::New => "new".to_owned(),
        FindingStatus::Known(reason) => format!("known ({reason})"),
        FindingStatus::Baseline(reason) => format!("baselined ({reason})"),
        FindingStatus::Expected => "expected".to_owned(),
    }
}
