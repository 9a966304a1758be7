//! Scenario files: named test plans for CI (`mcp-chaos scenario`).
//!
//! - [`format`](mod@format): the TOML format, its validation and JSON Schema, discovery and sharding.
//! - [`run`]: playing scenarios (side by side, `--jobs`) and classifying their findings.
//! - [`baseline`]: accepted findings, so that only new ones fail the build.
//! - [`outcome`]: the suite report every reporter reads (terminal, JSON, JUnit, SARIF,
//!   Markdown).

pub mod baseline;
pub mod format;
pub mod outcome;
pub mod run;
