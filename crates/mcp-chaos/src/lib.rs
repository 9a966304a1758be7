//! mcp-chaos: a property-based fuzz and chaos test harness for MCP (Model Context Protocol)
//! servers. This crate is the engine; the `mcp-chaos` binary is the `mcp-chaos-cli` crate, a
//! thin shell over it.
//!
//! It drives a server (a child process over stdio, or a URL over Streamable HTTP) with valid
//! and invalid requests, checks invariants on every exchange, and reports each place where the
//! server fails badly: protocol errors with the wrong code, replies to notifications, noise on
//! stdout, crashes, hangs, tool errors a model cannot act on.
//!
//! The crate is layered; each layer imports only the ones above it in this list:
//! - the wire layer, from `mcp-chaos-proto` (no I/O), re-exported: [`wire`] (JSON-RPC 2.0
//!   frames, a total parser; what a correct server owes each frame, [`wire::answer`]),
//!   [`sse`], [`protocol`] (versions and the per-version rule table), [`schema`], [`observed`]
//!   (what was seen of a server, as data).
//! - [`finding`], from `mcp-chaos-model`: the invariant catalog and findings (the model's
//!   report types are re-exported by [`run`] and [`scenario`]).
//! - [`transport`]: bytes in, frames out; process trees; deadlines. Knows nothing of MCP rules.
//! - [`session`]: the MCP lifecycle, request ids, fences, answers to server-to-client requests;
//!   every send becomes an [`session::Exchange`].
//! - [`generate`]: schema-driven arguments for tool calls.
//! - [`oracle`]: pure functions from exchanges to findings, one module per invariant.
//! - [`run`]: the campaign loop, emitting typed events.
//! - [`scenario`] and [`report`]: scenario files and baselines; consumers of events and reports.
//! - [`Harness`] and [`strategies`]: the library API for `cargo test` (see [`harness`]).
//! - [`fuzz`]: `Arbitrary` MCP messages and the answers a server owes them
//!   ([`wire::answer`]), for cargo-fuzz targets and the campaign's wire phase.
//! - [`auth`]: HTTP headers and tokens given on the command line, kept out of reports.

pub use mcp_chaos_model::finding;
pub use mcp_chaos_proto::{observed, protocol, schema, sse, wire};

pub mod auth;
pub mod fuzz;
pub mod generate;
pub mod harness;
pub mod oracle;
pub mod report;
pub mod run;
pub mod scenario;
pub mod session;
pub mod transport;

pub use harness::{Harness, Tool, strategies};
