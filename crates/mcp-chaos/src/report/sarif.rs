//! The `--sarif` file of `mcp-chaos scenario`: SARIF 2.1.0 for code scanning (GitHub code
//! scanning, GitLab, SARIF viewers), built with the `serde-sarif` types.
//!
//! Shape: one run.
//! - `tool.driver`: `mcp-chaos`, its version, its homepage or repository, and one rule per
//!   invariant of [`finding::CATALOG`] in catalog order (`id` = code such as `MC102`, `name` =
//!   kebab name, `shortDescription` = summary, `fullDescription` and `help` = the explanation,
//!   `helpUri` = the spec page, `defaultConfiguration.level` = `error`).
//! - `results`: one per [`ScenarioFinding`]: `ruleId` (the code) and `ruleIndex`, `level`
//!   (`error` for a violation, `warning` for a warning), the message with the scenario, step
//!   line, probe, tool and replay command, one location (the scenario file, relative, with
//!   forward slashes, at the step's line), `partialFingerprints["mcpChaos/v1"]` = the
//!   finding's fingerprint, `baselineState` (`new`, or `unchanged` for a known, baselined or
//!   expected finding) and `suppressions` (empty for a new finding; `external` with the reason
//!   as justification for known and baselined ones; `inSource` for expected ones; all
//!   `accepted`). Details a reader may want (`status`: new, known, baseline or expected; tool,
//!   probe, protocol version, excerpts, replay command) are in `properties`.
//! - With [`SarifOptions::fixed`], baseline entries not seen this run are results too, with
//!   `baselineState: "absent"`.
//! - `invocations[0]`: whether every scenario could be carried out, the suite's exit code, and
//!   one `toolExecutionNotifications` entry per scenario that errored.
//! - `automationDetails.id`: `mcp-chaos/scenarios/` (with `shard-I-of-N/` appended for a
//!   shard), so that GitHub keeps the uploads of different shards apart; `mcp-chaos/run/` for
//!   the log of a `run`.
//!
//! GitHub code scanning reads neither `suppressions` nor `baselineState`: each accepted
//! finding uploaded there is an open alert. [`SarifOptions::accepted`] leaves them out.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;
use serde_json::Value;
use serde_sarif::sarif::{
    ArtifactLocation, Invocation, Location, Message, MultiformatMessageString, Notification,
    NotificationLevel, PhysicalLocation, PropertyBag, Region, ReportingConfiguration,
    ReportingConfigurationLevel, ReportingDescriptor, Result as SarifResult, ResultBaselineState,
    ResultLevel, Run, RunAutomationDetails, Sarif, Suppression, SupressionKind, SupressionStatus,
    Tool, ToolComponent, Version,
};

use crate::finding::{self, Invariant, Severity};
use crate::protocol::ProtocolVersion;
use crate::report::forward_slashes;
use mcp_chaos_model::suite::{
    BaselineEntry, FindingStatus, ScenarioFinding, ScenarioReport, ScenarioStatus, SuiteReport,
};

/// The `$schema` of the log: the OASIS SARIF 2.1.0 schema (errata 01), the one the tests
/// validate against.
pub const SCHEMA_URI: &str =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

/// The key of the finding's fingerprint in `partialFingerprints`.
pub const FINGERPRINT_KEY: &str = "mcpChaos/v1";

/// `automationDetails.id` of an unsharded run (the GitHub code scanning category is the part
/// before the last `/`).
pub const CATEGORY: &str = "mcp-chaos/scenarios/";

/// `automationDetails.id` of a `mcp-chaos run` log (its suite model, see
/// [`super::of_run`]), so that GitHub keeps run and scenario uploads apart.
pub const RUN_CATEGORY: &str = "mcp-chaos/run/";

/// The most results GitHub code scanning accepts in one run. Past it, accepted findings are
/// left out first, then the last new ones, and a notification says how many.
pub const MAX_RESULTS: usize = 25_000;

/// GitHub code scanning shows at most this many characters of a rule's descriptions.
const MAX_DESCRIPTION_CHARS: usize = 1024;

/// The protocol version whose specification the rules' `helpUri`s point into: the newest one
/// whose page layout the catalog's `spec_page`s address (`basic/lifecycle`,
/// `basic/transports#stdio`, `basic/utilities/ping`; 2026-07-28 split and removed pages).
const HELP_VERSION: ProtocolVersion = ProtocolVersion::LATEST_WITH_INITIALIZE;

/// What goes into the log beyond the new findings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SarifOptions {
    /// Include the findings the run accepted (known, baselined, expected), marked with
    /// `suppressions` and `baselineState: "unchanged"`. Default: true. GitHub code scanning
    /// ignores both marks and would open an alert for each; turn this off for an upload there.
    pub accepted: bool,
    /// Include the baseline entries not seen this run as results with `baselineState:
    /// "absent"` (located at their scenario file, without a line). Default: false, since GitHub
    /// code scanning ignores `baselineState` and would open an alert for each.
    pub fixed: bool,
}

impl Default for SarifOptions {
    fn default() -> SarifOptions {
        SarifOptions {
            accepted: true,
            fixed: false,
        }
    }
}

/// The SARIF log of a suite run with the default [`SarifOptions`] (see the module
/// documentation for its shape). Deterministic: the same report gives the same log.
pub fn sarif(report: &SuiteReport) -> Sarif {
    sarif_with(report, SarifOptions::default())
}

/// The SARIF log of a suite run, with `options` saying which accepted and fixed findings go in.
pub fn sarif_with(report: &SuiteReport, options: SarifOptions) -> Sarif {
    let mut results = Vec::new();
    for scenario in &report.scenarios {
        for f in &scenario.findings {
            if options.accepted || f.status.fails() {
                results.push(result(scenario, f));
            }
        }
    }
    if options.fixed {
        for scenario in &report.scenarios {
            for entry in &scenario.fixed {
                results.push(absent(scenario, entry));
            }
        }
    }

    let mut notifications: Vec<Notification> = report
        .scenarios
        .iter()
        .filter_map(|s| match &s.status {
            ScenarioStatus::Error(msg) => Some(
                Notification::builder()
                    .message(text(format!(
                        "Scenario {} could not be carried out (exit code {}): {msg}",
                        s.name, s.exit_code
                    )))
                    .level(enum_value(NotificationLevel::Error))
                    .locations(vec![location(&s.file, 0)])
                    .build(),
            ),
            _ => None,
        })
        .collect();
    if results.len() > MAX_RESULTS {
        let dropped = results.len() - MAX_RESULTS;
        // Accepted findings go first (their suppressions are non-empty), then the last new ones.
        let mut accepted_left = results
            .iter()
            .filter(|r| r.suppressions.as_ref().is_some_and(|s| !s.is_empty()))
            .count()
            .min(dropped);
        results.retain(|r| {
            let accepted = r.suppressions.as_ref().is_some_and(|s| !s.is_empty());
            if accepted && accepted_left > 0 {
                accepted_left -= 1;
                false
            } else {
                true
            }
        });
        results.truncate(MAX_RESULTS);
        notifications.push(
            Notification::builder()
                .message(text(format!(
                    "{dropped} results left out: GitHub code scanning accepts at most \
                     {MAX_RESULTS} per run. The JSON report has them all."
                )))
                .level(enum_value(NotificationLevel::Warning))
                .build(),
        );
    }

    let errored = report
        .scenarios
        .iter()
        .any(|s| matches!(s.status, ScenarioStatus::Error(_)));
    let mut invocation = Invocation::builder()
        .execution_successful(!errored)
        .exit_code(i64::from(report.exit_code()))
        .build();
    if !notifications.is_empty() {
        invocation.tool_execution_notifications = Some(notifications);
    }

    let mut driver = ToolComponent::builder()
        .name("mcp-chaos")
        .version(report.mcp_chaos_version.as_str())
        .rules(finding::CATALOG.iter().map(rule).collect::<Vec<_>>())
        .build();
    driver.information_uri = information_uri();

    let is_run = matches!(&report.scenarios[..], [s] if s.name == super::of_run::RUN_NAME);
    let category = match report.shard {
        Some((i, n)) => format!("{CATEGORY}shard-{i}-of-{n}/"),
        None if is_run => RUN_CATEGORY.to_owned(),
        None => CATEGORY.to_owned(),
    };
    let mut run = Run::builder()
        .tool(Tool::builder().driver(driver).build())
        .results(results)
        .invocations(vec![invocation])
        .automation_details(RunAutomationDetails::builder().id(category).build())
        .build();
    let mut properties = BTreeMap::new();
    if let Some((i, n)) = report.shard {
        properties.insert("shard".to_owned(), Value::from(format!("{i}/{n}")));
    }
    if let Some(baseline) = &report.baseline {
        properties.insert(
            "baseline".to_owned(),
            Value::from(forward_slashes(baseline)),
        );
    }
    properties.insert("durationMs".to_owned(), Value::from(report.duration_ms));
    run.properties = Some(bag(properties));

    Sarif::builder()
        .schema(SCHEMA_URI)
        .version(enum_value(Version::V2_1_0))
        .runs(vec![run])
        .build()
}

/// Writes [`sarif`]`(report)` as pretty-printed JSON to `path` (replacing it), creating
/// parent folders.
///
/// # Errors
///
/// Any error creating the folders or writing the file.
pub fn write_sarif(report: &SuiteReport, path: &Path) -> std::io::Result<()> {
    write_sarif_with(report, SarifOptions::default(), path)
}

/// Writes [`sarif_with`]`(report, options)` as pretty-printed JSON to `path` (replacing it),
/// creating parent folders.
///
/// # Errors
///
/// Any error creating the folders or writing the file.
pub fn write_sarif_with(
    report: &SuiteReport,
    options: SarifOptions,
    path: &Path,
) -> std::io::Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    let mut text = serde_json::to_string_pretty(&sarif_with(report, options))
        .map_err(std::io::Error::other)?;
    text.push('\n');
    std::fs::write(path, text)
}

/// The reporting descriptor of an invariant.
fn rule(invariant: &Invariant) -> ReportingDescriptor {
    let spec = spec_uri(invariant);
    ReportingDescriptor::builder()
        .id(invariant.code)
        .name(invariant.name)
        .short_description(multiformat(truncate(invariant.summary)))
        .full_description(multiformat(truncate(invariant.explain)))
        .help(
            MultiformatMessageString::builder()
                .text(format!("{}\n\nSpec: {spec}", invariant.explain))
                .markdown(format!(
                    "**{}**\n\n{}\n\nSpec: [{}]({spec})\n\nRun `mcp-chaos explain {}` for more.",
                    invariant.summary, invariant.explain, invariant.spec_page, invariant.code
                ))
                .build(),
        )
        .help_uri(spec)
        .default_configuration(
            ReportingConfiguration::builder()
                .level(enum_value(ReportingConfigurationLevel::Error))
                .build(),
        )
        .build()
}

fn spec_uri(invariant: &Invariant) -> String {
    if invariant.spec_page.starts_with("http") {
        invariant.spec_page.to_owned()
    } else {
        HELP_VERSION.spec(invariant.spec_page)
    }
}

fn result(scenario: &ScenarioReport, f: &ScenarioFinding) -> SarifResult {
    let finding = &f.finding;
    let mut message = format!(
        "{} (scenario {}, step at line {}",
        finding.message, scenario.name, f.line
    );
    if !finding.probe.is_empty() {
        message.push_str(", probe ");
        message.push_str(&finding.probe);
    }
    if let Some(tool) = &finding.tool {
        message.push_str(", tool ");
        message.push_str(tool);
    }
    message.push(')');
    if let Some(cmd) = &f.replay_command {
        message.push_str(". Replay: ");
        message.push_str(cmd);
    }

    let (baseline_state, suppressions, status) = match &f.status {
        FindingStatus::New => (ResultBaselineState::New, Vec::new(), "new"),
        FindingStatus::Known(reason) => (
            ResultBaselineState::Unchanged,
            vec![suppression(SupressionKind::External, reason)],
            "known",
        ),
        FindingStatus::Baseline(reason) => (
            ResultBaselineState::Unchanged,
            vec![suppression(SupressionKind::External, reason)],
            "baseline",
        ),
        FindingStatus::Expected => (
            ResultBaselineState::Unchanged,
            vec![suppression(
                SupressionKind::InSource,
                "expected by the scenario",
            )],
            "expected",
        ),
    };

    let mut properties = BTreeMap::new();
    properties.insert("scenario".to_owned(), Value::from(scenario.name.as_str()));
    properties.insert("status".to_owned(), Value::from(status));
    properties.insert(
        "severity".to_owned(),
        Value::from(finding.severity.to_string()),
    );
    properties.insert(
        "protocolVersion".to_owned(),
        Value::from(finding.protocol_version.as_str()),
    );
    properties.insert("probe".to_owned(), Value::from(finding.probe.as_str()));
    properties.insert("spec".to_owned(), Value::from(finding.spec.as_str()));
    properties.insert("occurrences".to_owned(), Value::from(finding.occurrences));
    let optional = [
        ("tool", finding.tool.as_deref()),
        ("request", finding.request.as_deref()),
        ("response", finding.response.as_deref()),
        ("replayFile", finding.replay.as_deref()),
        ("replayCommand", f.replay_command.as_deref()),
    ];
    for (key, value) in optional {
        if let Some(value) = value {
            properties.insert(key.to_owned(), Value::from(value));
        }
    }
    if let Some(fault) = &finding.fault {
        properties.insert("fault".to_owned(), fault.clone());
    }

    let mut r = SarifResult::builder()
        .rule_id(finding.code.as_str())
        .level(match finding.severity {
            Severity::Violation => ResultLevel::Error,
            Severity::Warning => ResultLevel::Warning,
        })
        .message(text(message))
        .locations(vec![location(&scenario.file, f.line)])
        .partial_fingerprints(BTreeMap::from([(
            FINGERPRINT_KEY.to_owned(),
            f.fingerprint.clone(),
        )]))
        .baseline_state(enum_value(baseline_state))
        .suppressions(suppressions)
        .properties(bag(properties))
        .build();
    r.rule_index = rule_index(&finding.code);
    r
}

fn absent(scenario: &ScenarioReport, entry: &BaselineEntry) -> SarifResult {
    let mut message = format!(
        "Fixed since the baseline: {} {} (probe {}",
        entry.code, entry.invariant, entry.probe
    );
    if let Some(tool) = &entry.tool {
        message.push_str(", tool ");
        message.push_str(tool);
    }
    message.push_str(") was not reported by scenario ");
    message.push_str(&entry.scenario);
    message.push_str("; remove it from the baseline once it is fixed. Baselined because: ");
    message.push_str(&entry.reason);

    let mut r = SarifResult::builder()
        .rule_id(entry.code.as_str())
        .level(ResultLevel::Note)
        .message(text(message))
        .locations(vec![location(&scenario.file, 0)])
        .partial_fingerprints(BTreeMap::from([(
            FINGERPRINT_KEY.to_owned(),
            entry.fingerprint.clone(),
        )]))
        .baseline_state(enum_value(ResultBaselineState::Absent))
        .suppressions(Vec::new())
        .build();
    r.rule_index = rule_index(&entry.code);
    r
}

fn rule_index(code: &str) -> Option<i64> {
    finding::CATALOG
        .iter()
        .position(|i| i.code == code)
        .and_then(|i| i64::try_from(i).ok())
}

fn suppression(kind: SupressionKind, justification: &str) -> Suppression {
    Suppression::builder()
        .kind(enum_value(kind))
        .justification(justification)
        .status(enum_value(SupressionStatus::Accepted))
        .build()
}

/// The location of a scenario file, at `line` (1-based; 0 = the whole file).
fn location(file: &Path, line: usize) -> Location {
    let (uri, relative) = artifact_uri(file);
    let mut artifact = ArtifactLocation::builder().uri(uri).build();
    if relative {
        artifact.uri_base_id = Some("%SRCROOT%".to_owned());
    }
    let mut physical = PhysicalLocation::builder()
        .artifact_location(artifact)
        .build();
    if let Ok(line @ 1..) = i64::try_from(line) {
        physical.region = Some(Region::builder().start_line(line).build());
    }
    Location::builder().physical_location(physical).build()
}

/// The URI of a scenario file, and whether it is relative: a relative path stays relative
/// (forward slashes, no leading `./`), resolved against `%SRCROOT%`, the directory mcp-chaos
/// ran in (normally the repository root); an absolute one becomes a `file:` URI. Bytes
/// outside the unreserved set are percent-encoded, so `:` cannot pass for a scheme.
pub fn artifact_uri(path: &Path) -> (String, bool) {
    let mut s = forward_slashes(path);
    while let Some(rest) = s.strip_prefix("./") {
        s = rest.to_owned();
    }
    let windows_drive = s.len() >= 2
        && s.as_bytes()[0].is_ascii_alphabetic()
        && s.as_bytes()[1] == b':'
        && (s.len() == 2 || s.as_bytes()[2] == b'/');
    if windows_drive {
        let (drive, rest) = s.split_at(2);
        (format!("file:///{drive}{}", percent_encode(rest)), false)
    } else if s.starts_with('/') {
        (format!("file://{}", percent_encode(&s)), false)
    } else {
        (percent_encode(&s), true)
    }
}

fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/') {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

fn information_uri() -> Option<String> {
    [
        option_env!("CARGO_PKG_HOMEPAGE"),
        option_env!("CARGO_PKG_REPOSITORY"),
    ]
    .into_iter()
    .flatten()
    .find(|s| !s.is_empty())
    .map(str::to_owned)
}

fn text(s: String) -> Message {
    Message::builder().text(s).build()
}

fn multiformat(s: String) -> MultiformatMessageString {
    MultiformatMessageString::builder().text(s).build()
}

fn bag(properties: BTreeMap<String, Value>) -> PropertyBag {
    PropertyBag {
        tags: None,
        additional_properties: properties,
    }
}

/// The JSON string of one of serde-sarif's enums (several of its fields are typed `Value`).
fn enum_value(value: impl Serialize) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// At most [`MAX_DESCRIPTION_CHARS`] characters, cut at a char boundary, ending in `…` when
/// cut.
fn truncate(s: &str) -> String {
    match s.char_indices().nth(MAX_DESCRIPTION_CHARS) {
        Some(_) => {
            let mut cut: String = s.chars().take(MAX_DESCRIPTION_CHARS - 1).collect();
            cut.push('…');
            cut
        }
        None => s.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_are_relative_references_or_file_uris() {
        assert_eq!(
            artifact_uri(Path::new("scenarios/a b.toml")),
            ("scenarios/a%20b.toml".to_owned(), true)
        );
        assert_eq!(
            artifact_uri(Path::new("./././x:y.toml")),
            ("x%3Ay.toml".to_owned(), true)
        );
        assert_eq!(
            artifact_uri(Path::new("/repo/s/é.toml")),
            ("file:///repo/s/%C3%A9.toml".to_owned(), false)
        );
        assert_eq!(
            artifact_uri(Path::new("C:/repo/s.toml")),
            ("file:///C:/repo/s.toml".to_owned(), false)
        );
    }

    #[test]
    fn descriptions_fit_github_limits() {
        let long = "é".repeat(2000);
        assert_eq!(truncate(&long).chars().count(), MAX_DESCRIPTION_CHARS);
        assert!(truncate(&long).ends_with('…'));
        assert_eq!(truncate(&"a".repeat(1024)), "a".repeat(1024));
        assert_eq!(truncate("short"), "short");
        for i in finding::CATALOG {
            assert!(
                i.summary.chars().count() <= MAX_DESCRIPTION_CHARS,
                "{}",
                i.code
            );
            assert!(
                i.explain.chars().count() <= MAX_DESCRIPTION_CHARS,
                "{}",
                i.code
            );
            assert!(i.name.len() <= 255, "{}", i.code);
        }
    }
}
