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
//! ```
//!
//! Entries match by scenario and [`fingerprint`]: a stable hash of the finding's code,
//! severity, tool, probe and upstream fault, never of its message (which carries details that
//! change from run to run). `--update-baseline` rewrites the file from a run: entries of the
//! scenarios that ran are replaced by what they found (keeping the reason of every entry
//! that is still found; new ones get a reason to fill in), entries of scenarios that did not
//! run (other shards) are kept as they are.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::outcome::{BaselineEntry, FindingStatus, SuiteReport};
use crate::finding::Finding;

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

    /// The entries of `scenario`.
    pub fn entries_of(&self, scenario: &str) -> Vec<BaselineEntry> {
        self.entries
            .iter()
            .filter(|e| e.scenario == scenario)
            .cloned()
            .collect()
    }

    /// This baseline updated from `report`: for every scenario in the report that ran (did
    /// not end in an error), its entries become its findings that are new or baselined
    /// (expected and `[[known]]` ones are accepted elsewhere), keeping known reasons.
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
            .filter(|e| !ran.contains(&e.scenario.as_str()))
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
                };
                if !entries.contains(&entry) {
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

/// The stable fingerprint of a finding: 16 hex digits of a 64-bit FNV-1a hash of its code,
/// severity, tool, probe label and upstream fault name (with its scope, when the fault hit
/// only some requests), none of which depends on timing, ports, paths or the message's
/// excerpts.
pub fn fingerprint(f: &Finding) -> String {
    let name = f
        .fault
        .as_ref()
        .and_then(|v| v.get("name"))
        .and_then(serde_json::Value::as_str)
        .unwrap_or("");
    let fault = match f
        .fault
        .as_ref()
        .and_then(|v| v.get("scope"))
        .and_then(serde_json::Value::as_str)
    {
        Some(scope) => format!("{name} on {scope}"),
        None => name.to_owned(),
    };
    let key = format!(
        "{}\u{1f}{}\u{1f}{}\u{1f}{}\u{1f}{}",
        f.code,
        f.severity,
        f.tool.as_deref().unwrap_or(""),
        f.probe,
        fault
    );
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in key.bytes() {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::{ERROR_MASKED_AS_SUCCESS, Severity};
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
