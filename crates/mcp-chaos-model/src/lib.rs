//! The stable surface of mcp-chaos, what reporters, the command line and users' tools read:
//! - [`finding`]: the invariant catalog (each invariant's code `MCxxx`, name, default
//!   severity and spec page) and [`finding::Finding`], one place where a server fails badly,
//!   as reports carry it, with its stable [`finding::fingerprint`].
//! - [`report`]: the report of a run (`--report-json`), with its JSON Schema.
//! - [`suite`]: the report of a scenario suite run (`mcp-chaos scenario --report-json`).
//! - [`exit`]: the process exit codes of `mcp-chaos run` and `mcp-chaos scenario`.
//!
//! It depends only on the wire layer (`mcp-chaos-proto`, for protocol versions and their spec
//! links), so a tool that reads mcp-chaos's reports needs no engine.

pub mod exit;
pub mod finding;
pub mod report;
pub mod suite;
