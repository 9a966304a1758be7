//! A `mcp-chaos run` (or `demo`) as the suite model every file reporter reads, so that `run
//! --junit/--sarif/--markdown` use the very writers of `mcp-chaos scenario`
//! ([`super::junit`], [`super::sarif`], [`super::markdown`]).
//!
//! Shape: one [`ScenarioReport`] named `mcp-chaos run` with one [`StepReport`] per tool the
//! campaign called (label `tool NAME`, with its generated calls and time) and one step,
//! `server`, for the findings about no tool (protocol probes, transport, liveness). A step
//! passes when none of its findings is a violation. The scenario's status is the run's exit
//! code: a run that could not start (`outcome: not-started`, exit 2) is an error with the
//! run's error message, whatever it found; an interrupted run (SIGINT, SIGTERM) fails when a
//! finding so far is a violation (exit 1) and is otherwise an error (exit 2), and the suite is
//! marked interrupted; a completed run fails when it has violations (exit 1). Every finding is [`FindingStatus::New`] (a run has no
//! baseline), with the scenario fingerprint and, as its replay command, the run's rerun
//! command. Its file (the SARIF location) is the server's entry point when the `--stdio`
//! command names an existing relative file (`build/index.js` in `node build/index.js`), else
//! `.`: a run has no scenario file.

use std::path::{Path, PathBuf};

use crate::finding::Severity;
use crate::finding::fingerprint;
use crate::run::Report;
use crate::run::live::RunOutcome;
use mcp_chaos_model::suite::{
    FindingStatus, ScenarioFinding, ScenarioReport, ScenarioStatus, StepReport, SuiteReport,
};

/// The scenario name a run gets in the suite model.
pub const RUN_NAME: &str = "mcp-chaos run";

/// The label of the step holding the findings about no tool.
pub const SERVER_STEP: &str = "server";

/// The suite model of `report` (see the module documentation).
pub fn suite(report: &Report) -> SuiteReport {
    let findings: Vec<ScenarioFinding> = report
        .findings
        .iter()
        .map(|f| ScenarioFinding {
            finding: f.clone(),
            fingerprint: fingerprint(f),
            status: FindingStatus::New,
            line: 0,
            replay_command: report.rerun.clone(),
        })
        .collect();
    let mut tools: Vec<String> = report
        .summary
        .generated
        .iter()
        .map(|g| g.tool.clone())
        .collect();
    for f in &report.findings {
        if let Some(tool) = &f.tool
            && !tools.contains(tool)
        {
            tools.push(tool.clone());
        }
    }
    let step = |label: String, of: &dyn Fn(Option<&str>) -> bool, calls: u64, ms: u64| {
        let indices: Vec<usize> = report
            .findings
            .iter()
            .enumerate()
            .filter(|(_, f)| of(f.tool.as_deref()))
            .map(|(i, _)| i)
            .collect();
        let passed = indices
            .iter()
            .all(|&i| report.findings[i].severity != Severity::Violation);
        StepReport {
            label,
            line: 0,
            exchanges: calls,
            duration_ms: ms,
            findings: indices,
            passed,
        }
    };
    let mut steps = vec![step(
        SERVER_STEP.to_owned(),
        &|t| t.is_none(),
        report.summary.exchanges,
        report.summary.duration_ms,
    )];
    for tool in &tools {
        let (calls, ms) = report
            .summary
            .generated
            .iter()
            .filter(|g| &g.tool == tool)
            .fold((0, 0), |(c, m), g| (c + g.calls, m + g.elapsed_ms));
        steps.push(step(
            format!("tool {tool}"),
            &|t| t == Some(tool.as_str()),
            calls,
            ms,
        ));
    }
    let error = || {
        report.error.as_ref().map_or_else(
            || "the run did not complete".to_owned(),
            |e| e.message.clone(),
        )
    };
    let status = match report.outcome {
        RunOutcome::NotStarted => ScenarioStatus::Error(error()),
        _ if report.has_violations() => ScenarioStatus::Failed,
        RunOutcome::Interrupted => ScenarioStatus::Error(error()),
        RunOutcome::Completed => ScenarioStatus::Passed,
    };
    SuiteReport {
        mcp_chaos_version: report.mcp_chaos_version.clone(),
        shard: None,
        baseline: None,
        scenarios: vec![ScenarioReport {
            name: RUN_NAME.to_owned(),
            file: entry_point(report.server.command.as_deref()),
            exit_code: status.exit_code(),
            status,
            server: Some(report.server.clone()),
            seed: report.seed,
            steps,
            findings,
            fixed: Vec::new(),
            duration_ms: report.summary.duration_ms,
        }],
        duration_ms: report.summary.duration_ms,
        interrupted: report.interrupted,
        unfinished: Vec::new(),
    }
}

/// The first word of `command` (arguments first, then the program) that is an existing
/// relative file; `.` when none is.
fn entry_point(command: Option<&str>) -> PathBuf {
    let words = command
        .and_then(|c| shell_words::split(c).ok())
        .unwrap_or_default();
    let (program, args) = match words.split_first() {
        Some((p, a)) => (Some(p), a),
        None => (None, &[][..]),
    };
    args.iter()
        .chain(program)
        .map(Path::new)
        .find(|p| p.is_relative() && p.is_file())
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::Finding;
    use crate::run::{ServerReport, Summary, ToolGenerated};

    fn report(findings: Vec<Finding>) -> Report {
        Report {
            mcp_chaos_version: "0.0.0".into(),
            seed: 7,
            server: ServerReport {
                command: Some("node Cargo.toml".into()),
                url: None,
                server_info: serde_json::Value::Null,
                protocol_version: "2025-11-25".into(),
            },
            summary: Summary {
                generated: vec![ToolGenerated {
                    tool: "echo".into(),
                    calls: 12,
                    elapsed_ms: 30,
                    cut: None,
                    skipped: None,
                    limits: Vec::new(),
                }],
                ..Summary::default()
            },
            findings,
            versions: Vec::new(),
            outcome: crate::run::live::RunOutcome::Completed,
            interrupted: false,
            error: None,
            exchanges: Vec::new(),
            rerun: Some("mcp-chaos run --stdio x --seed 7".into()),
        }
    }

    fn finding(severity: Severity, tool: Option<&str>) -> Finding {
        let inv = &crate::finding::CATALOG[0];
        let mut f = Finding::new(
            inv,
            severity,
            crate::protocol::ProtocolVersion::LATEST_WITH_INITIALIZE,
            "message",
        );
        f.tool = tool.map(str::to_owned);
        f
    }

    #[test]
    fn one_step_per_tool_and_one_for_the_server() {
        let suite = suite(&report(vec![
            finding(Severity::Violation, Some("add")),
            finding(Severity::Warning, None),
        ]));
        let s = &suite.scenarios[0];
        let labels: Vec<&str> = s.steps.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(labels, ["server", "tool echo", "tool add"]);
        assert_eq!(s.steps[1].exchanges, 12);
        assert!(s.steps[0].passed && s.steps[1].passed && !s.steps[2].passed);
        assert_eq!(s.steps[2].findings, [0]);
        assert_eq!(s.steps[0].findings, [1]);
        assert_eq!(s.status, ScenarioStatus::Failed);
        assert_eq!(suite.exit_code(), 1);
        assert_eq!(s.file, PathBuf::from("Cargo.toml"));
        assert_eq!(
            s.findings[0].replay_command.as_deref(),
            Some("mcp-chaos run --stdio x --seed 7")
        );
    }

    #[test]
    fn a_clean_run_passes() {
        let suite = suite(&report(vec![finding(Severity::Warning, Some("echo"))]));
        assert!(suite.scenarios[0].steps.iter().all(|s| s.passed));
        assert_eq!(suite.scenarios[0].status, ScenarioStatus::Passed);
        assert_eq!(suite.exit_code(), 0);
    }

    #[test]
    fn a_run_that_did_not_start_is_an_error_whatever_it_found() {
        let mut r = report(vec![finding(Severity::Violation, None)]);
        r.outcome = RunOutcome::NotStarted;
        r.error = Some(crate::run::live::ErrorReport {
            kind: "start",
            message: "the server exited".into(),
            stderr_tail: String::new(),
        });
        let suite = suite(&r);
        assert_eq!(
            suite.scenarios[0].status,
            ScenarioStatus::Error("the server exited".into())
        );
        assert_eq!(suite.exit_code(), 2);
    }

    #[test]
    fn an_interrupted_run_fails_on_a_violation_else_is_an_error() {
        let mut r = report(vec![finding(Severity::Warning, None)]);
        r.outcome = RunOutcome::Interrupted;
        r.interrupted = true;
        let clean = suite(&r);
        assert!(clean.interrupted);
        assert!(matches!(
            clean.scenarios[0].status,
            ScenarioStatus::Error(_)
        ));
        assert_eq!(clean.exit_code(), 2);
        r.findings.push(finding(Severity::Violation, Some("echo")));
        let failed = suite(&r);
        assert_eq!(failed.scenarios[0].status, ScenarioStatus::Failed);
        assert_eq!(failed.exit_code(), 1);
    }

    #[test]
    fn entry_points() {
        assert_eq!(entry_point(None), PathBuf::from("."));
        assert_eq!(entry_point(Some("node /abs/x.js")), PathBuf::from("."));
        assert_eq!(
            entry_point(Some("Cargo.toml --flag")),
            PathBuf::from("Cargo.toml")
        );
    }
}
