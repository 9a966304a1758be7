//! mcp-chaos: a property-based fuzz and chaos test harness for MCP (Model Context Protocol)
//! servers.
//!
//! It drives a server (a child process over stdio) with valid and invalid requests, checks
//! invariants on every exchange, and reports each place where the server fails badly: protocol
//! errors with the wrong code, replies to notifications, noise on stdout, crashes, hangs.
//!
//! The crate is layered; each layer imports only the ones above it in this list:
//! - [`wire`]: JSON-RPC 2.0 frames; a total parser that never panics and keeps the raw value;
//!   what a correct server owes each frame ([`wire::answer`]).
//! - [`observed`]: what was seen of a server, as data (frames, exits, HTTP exchanges).
//! - [`transport`]: bytes in, frames out; process trees; deadlines. Knows nothing of MCP rules.
//! - [`protocol`]: MCP protocol versions and the per-version rule table.
//! - [`session`]: the MCP lifecycle, request ids, fences, answers to server-to-client requests;
//!   every send becomes an [`session::Exchange`].
//! - [`generate`]: schema-driven arguments for tool calls.
//! - [`finding`] and [`oracle`]: the invariant catalog, and pure functions from exchanges to
//!   findings.
//! - [`run`]: the campaign loop, emitting typed events.
//! - [`report`] and [`cli`]: consumers of events and the command line.
//! - [`fixture`]: the bundled fixture server, correct by default, with plantable flaws.
//! - [`Harness`] and [`strategies`]: the library API for `cargo test` (see [`harness`]).
//! - [`fuzz`]: `Arbitrary` MCP messages and the answers a server owes them
//!   ([`wire::answer`]), for cargo-fuzz targets and the campaign's wire phase.

pub use mcp_chaos_model::finding;
pub use mcp_chaos_proto::{observed, protocol, schema, sse, wire};

pub mod auth;
pub mod cli;
pub mod fixture;
pub mod fuzz;
pub mod generate;
pub mod harness;
pub mod interrupt;
pub mod oracle;
pub mod report;
pub mod run;
pub mod scenario;
pub mod session;
pub mod transport;

pub use harness::{Harness, Tool, strategies};
