//! Reporters: consumers of the run's [`Event`](crate::run::Event)s and of its final
//! [`Report`](crate::run::Report).
//!
//! - [`terminal`]: live progress on a TTY and a summary a person reads in 20 seconds, grouped
//!   by invariant.
//! - [`json`]: the `--report-json` file.
//! - [`journal`]: the findings journal beside it, one JSON line per finding as found.
//! - [`record`]: `--record DIR`, every frame of the run in its own file.
//!
//! Reporters of a scenario suite (`mcp-chaos scenario`), all reading a
//! [`SuiteReport`](crate::scenario::outcome::SuiteReport):
//! - [`junit`]: `--junit`, JUnit XML, one test suite per scenario and one test case per step.
//! - [`sarif`]: `--sarif`, SARIF 2.1.0 for code scanning, one result per finding.
//! - [`markdown`]: `--markdown`, a summary for a CI job page (GitHub step summary).
//! - [`html`]: `--html`, one self-contained page: verdict, tool × fault and tool × invariant
//!   matrices, timing, every finding.
//! - [`suite`]: the terminal progress and summary of `mcp-chaos scenario`.
//!
//! [`of_run`] turns a run's report into that suite model, so `run --junit/--sarif/--markdown`
//! use the same writers.

pub mod html;
pub mod journal;
pub mod json;
pub mod junit;
pub mod markdown;
pub mod of_run;
pub mod record;
pub mod sarif;
pub mod suite;
pub mod terminal;

/// A path as the suite reports write it: forward slashes on every platform.
pub(crate) fn forward_slashes(path: &std::path::Path) -> String {
    let s = path.to_string_lossy();
    if std::path::MAIN_SEPARATOR == '\\' {
        s.replace('\\', "/")
    } else {
        s.into_owned()
    }
}
