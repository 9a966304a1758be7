//! Baselines: findings accepted for now, so that only new findings fail a nightly run.
//!
//! A baseline file is TOML, one `[[finding]]` per accepted finding:
//!
//! ```toml
//! [[finding]]
//! scenario = "everything-stdio"
//! code = "MC102"
//! invariant = "wrong-error-code"
//! tool = "echo"                       # optional
//! probe = "tools/call with invalid params (arguments not an object)"
//! fingerprint = "5f0c2a9d81e4b7c3"
//! reason = "The TS SDK answers -32603 with a zod dump; reported upstream as ..."
//! intermittent = true                 # optional: reported in some runs only
//! ```
//!
//! Entries match by scenario and [`fingerprint`]: a stable hash of the finding's code,
//! severity, tool, probe and upstream fault, never of its message (which carries details that
//! change from run to run). `--update-baseline` rewrites the file from a run: entries of the
//! scenarios that ran are replaced by what they found (keeping the reason of every entry
//! that is still found; new ones get a reason to fill in), entries of scenarios that did not
//! run (other shards) are kept as they are, and so are `intermittent` entries not found this
//! time (a run without them says nothing of whether they are fixed).

use std::collections::HashSet;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::outcome::{BaselineEntry, FindingStatus, SuiteReport};
pub use crate::finding::fingerprint;

/// The reason `--update-baseline` gives a new entry, for a person to replace.
pub const UNJUDGED: &str = "UNJUDGED: added by --update-baseline; replace with your verdict";

/// A baseline: accepted findings by scenario.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Baseline {
    /// The entries, sorted by scenario, code and fingerprint.
    #[serde(default, rename = "finding")]
    pub entries: Vec<BaselineEntry>,
}

/// A baseline file that could not be read; the message names the file and line.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct BaselineError(pub String);

impl Baseline {
    /// Reads the baseline at `path`; a missing file is an empty baseline (so that
    /// `--update-baseline` can create it). Errors name the file and line.
    pub fn load(path: &Path) -> Result<Baseline, BaselineError> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Baseline::default()),
            Err(e) => {
                return Err(BaselineError(format!(
                    "{}: cannot read: {e}",
                    path.display()
                )));
            }
        };
        toml::from_str(&text).map_err(|e| {
            let line = e
                .span()
                .map(|s| format!(":{}", super::format::line_of(&text, s.start)))
                .unwrap_or_default();
            BaselineError(format!(
                "{}{line}: {}",
                path.display(),
                e.message().trim_end().replace('\n', " ")
            ))
        })
    }

    /// Copies of the entries whose `scenario` field equals `scenario` (a scenario name).
    pub fn entries_of(&self, scenario: &str) -> Vec<BaselineEntry> {
        self.entries
            .iter()
            .filter(|e| e.scenario == scenario)
            .cloned()
            .collect()
    }

    /// This baseline updated from `report`: for every scenario in the report that ran (did
    /// not end in an error), its entries become its findings that are new or baselined
    /// (expected and `[[known]]` ones are accepted elsewhere), keeping known reasons and
    /// `intermittent` marks, and its `intermittent` entries not found this time.
    pub fn updated(&self, report: &SuiteReport) -> Baseline {
        let ran: Vec<&str> = report
            .scenarios
            .iter()
            .filter(|s| s.status.exit_code() != 2)
            .map(|s| s.name.as_str())
            .collect();
        let mut entries: Vec<BaselineEntry> = self
            .entries
            .iter()
            .filter(|e| !ran.contains(&e.scenario.as_str()) || e.intermittent)
            .cloned()
            .collect();
        for s in report
            .scenarios
            .iter()
            .filter(|s| ran.contains(&s.name.as_str()))
        {
            for f in &s.findings {
                let reason = match &f.status {
                    FindingStatus::New => UNJUDGED.to_owned(),
                    FindingStatus::Baseline(reason) => reason.clone(),
                    FindingStatus::Known(_) | FindingStatus::Expected => continue,
                };
                let entry = BaselineEntry {
                    scenario: s.name.clone(),
                    code: f.finding.code.clone(),
                    invariant: f.finding.invariant.clone(),
                    tool: f.finding.tool.clone(),
                    probe: f.finding.probe.clone(),
                    fingerprint: f.fingerprint.clone(),
                    reason,
                    intermittent: false,
                };
                // An intermittent entry found again is already kept, with its mark.
                if !entries
                    .iter()
                    .any(|e| e.scenario == entry.scenario && e.fingerprint == entry.fingerprint)
                {
                    entries.push(entry);
                }
            }
        }
        entries.sort_by(|a, b| {
            (&a.scenario, &a.code, &a.fingerprint).cmp(&(&b.scenario, &b.code, &b.fingerprint))
        });
        Baseline { entries }
    }

    /// Writes the baseline to `path` as TOML, with a header saying what it is.
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        let body = toml::to_string_pretty(self).map_err(std::io::Error::other)?;
        let text = format!(
            "# mcp-chaos baseline: findings accepted for now, each with the reason.\n\
             # Matched by scenario and fingerprint; `mcp-chaos scenario --update-baseline` rewrites it.\n\n{body}"
        );
        if let Some(parent) = path.parent()
            && !parent.as_os_str().is_empty()
        {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(path, text)
    }
}

/// The entries of one scenario's baseline (`entries`) that its run did not report (`seen`:
/// the fingerprints it did), listed as fixed; `intermittent` entries are not.
pub fn fixed(entries: Vec<BaselineEntry>, seen: &HashSet<String>) -> Vec<BaselineEntry> {
    entries
        .into_iter()
        .filter(|b| !b.intermittent && !seen.contains(&b.fingerprint))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::{ERROR_MASKED_AS_SUCCESS, Finding, Severity};
    use crate::protocol::ProtocolVersion;

    fn finding(fault: serde_json::Value) -> Finding {
        let mut f = Finding::new(
            &ERROR_MASKED_AS_SUCCESS,
            Severity::Violation,
            ProtocolVersion::V2025_11_25,
            "a message",
        );
        f.tool = Some("forecast".into());
        f.fault = Some(fault);
        f
    }

    fn entry(scenario: &str, fingerprint: &str, intermittent: bool) -> BaselineEntry {
        BaselineEntry {
            scenario: scenario.into(),
            code: "MC117".into(),
            invariant: "stdin-eof-ignored".into(),
            tool: None,
            probe: "shutdown (stdin closed)".into(),
            fingerprint: fingerprint.into(),
            reason: format!("reason {fingerprint}"),
            intermittent,
        }
    }

    fn report(scenario: &str, found: &[(&str, &str)]) -> SuiteReport {
        use super::super::outcome::{ScenarioFinding, ScenarioReport, ScenarioStatus};
        let findings = found
            .iter()
            .map(|(fp, reason)| ScenarioFinding {
                finding: finding(serde_json::Value::Null),
                fingerprint: (*fp).into(),
                status: FindingStatus::Baseline((*reason).into()),
                line: 0,
                replay_command: None,
            })
            .collect();
        SuiteReport {
            mcp_chaos_version: "0".into(),
            shard: None,
            baseline: None,
            scenarios: vec![ScenarioReport {
                name: scenario.into(),
                file: "s.toml".into(),
                status: ScenarioStatus::Passed,
                exit_code: 0,
                server: None,
                seed: 1,
                steps: Vec::new(),
                findings,
                fixed: Vec::new(),
                duration_ms: 0,
            }],
            duration_ms: 0,
            interrupted: false,
            unfinished: Vec::new(),
        }
    }

    /// An intermittent entry a run did not report is neither listed as fixed nor dropped by
    /// `--update-baseline`; a plain one is both; found again, it keeps its mark, once.
    #[test]
    fn an_intermittent_entry_missed_by_a_run_is_kept() {
        let baseline = Baseline {
            entries: vec![entry("s", "a", true), entry("s", "b", false)],
        };
        let fixed = fixed(baseline.entries.clone(), &HashSet::new());
        assert_eq!(fixed, vec![entry("s", "b", false)]);
        let updated = baseline.updated(&report("s", &[]));
        assert_eq!(updated.entries, vec![entry("s", "a", true)]);
        let updated = baseline.updated(&report("s", &[("a", "reason a"), ("b", "reason b")]));
        let kept: Vec<(&str, &str, bool)> = updated
            .entries
            .iter()
            .map(|e| (e.fingerprint.as_str(), e.reason.as_str(), e.intermittent))
            .collect();
        assert_eq!(
            kept,
            vec![("a", "reason a", true), ("b", "reason b", false)]
        );
        let text = toml::to_string_pretty(&updated).expect("toml");
        assert_eq!(text.matches("intermittent = true").count(), 1, "{text}");
        assert!(!text.contains("intermittent = false"), "{text}");
    }

    /// A fault on every request keeps the fingerprint it always had; a scoped fault is
    /// another finding, and so is another scope.
    #[test]
    fn the_scope_of_a_fault_is_part_of_the_fingerprint() {
        let every = finding(serde_json::json!({"name": "unavailable", "status": 503}));
        let first =
            finding(serde_json::json!({"name": "unavailable", "scope": "the first request only"}));
        let path = finding(
            serde_json::json!({"name": "unavailable", "scope": "every request to /stations"}),
        );
        let mut plain = every.clone();
        plain.message = "reworded".into();
        assert_eq!(fingerprint(&every), fingerprint(&plain));
        assert_ne!(fingerprint(&every), fingerprint(&first));
        assert_ne!(fingerprint(&first), fingerprint(&path));
        let key = "MC202\u{1f}violation\u{1f}forecast\u{1f}\u{1f}unavailable";
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for b in key.bytes() {
            hash ^= u64::from(b);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
        assert_eq!(
            fingerprint(&every),
            format!("{hash:016x}"),
            "unchanged for unscoped faults"
        );
    }
}
