//! The findings journal: one JSON line per distinct finding, appended (one `write` each, so
//! it is on disk for other processes at once) as the run finds it, beside `--report-json`
//! ([`path_for`]: `report.json` → `report.findings.jsonl`). Even a run killed with SIGKILL
//! loses nothing it had found. Each line has the shape of an element of the report's
//! `findings`; `occurrences` is the count when first found (the report has the final count),
//! and the redaction is that of the secrets known at that moment.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::run::Event;

/// The journal beside the report at `report`: its file name with the extension replaced by
/// `.findings.jsonl` (`out/report.json` → `out/report.findings.jsonl`).
pub fn path_for(report: &Path) -> PathBuf {
    let stem = report
        .file_stem()
        .map_or_else(|| "report".into(), |s| s.to_string_lossy().into_owned());
    report.with_file_name(format!("{stem}.findings.jsonl"))
}

/// An open findings journal (`*.findings.jsonl`), made by [`Journal::create`]: one JSON line
/// per finding, written as found.
#[derive(Debug)]
pub struct Journal {
    file: std::fs::File,
    lines: u64,
    error: Option<std::io::Error>,
}

impl Journal {
    /// Creates (or empties) the journal at `path`, and its parent folders.
    ///
    /// # Errors
    /// The file cannot be created.
    pub fn create(path: &Path) -> std::io::Result<Journal> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)?;
        }
        Ok(Journal {
            file: std::fs::File::create(path)?,
            lines: 0,
            error: None,
        })
    }

    /// Appends a finding event as one line; other events are ignored. The first I/O error is
    /// kept (and later findings skipped) for [`Journal::finish`].
    pub fn event(&mut self, event: &Event<'_>) {
        let Event::Finding { finding } = event else {
            return;
        };
        if self.error.is_some() {
            return;
        }
        let result = serde_json::to_string(finding)
            .map_err(std::io::Error::other)
            .and_then(|mut line| {
                line.push('\n');
                // One write per line: a reader (or a crash) never sees half a line.
                self.file.write_all(line.as_bytes())
            })
            .and_then(|()| self.file.flush());
        match result {
            Ok(()) => self.lines += 1,
            Err(e) => self.error = Some(e),
        }
    }

    /// The number of lines written, or the first error met.
    ///
    /// # Errors
    /// A line could not be written.
    pub fn finish(self) -> std::io::Result<u64> {
        match self.error {
            Some(e) => Err(e),
            None => Ok(self.lines),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_journal_sits_beside_the_report() {
        assert_eq!(
            path_for(Path::new("out/report.json")),
            Path::new("out/report.findings.jsonl")
        );
        assert_eq!(
            path_for(Path::new("report")),
            Path::new("report.findings.jsonl")
        );
    }
}
