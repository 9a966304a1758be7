//! The wire layer of mcp-chaos, shared by the engine (`mcp-chaos`), the fixture server
//! (`mcp-chaos-fixture`) and the cargo-fuzz targets. No I/O: bytes and values in, typed
//! frames, verdicts and rules out. Each module imports only the ones before it in this list:
//! - [`protocol`]: MCP protocol versions and the per-version rule table (every protocol rule
//!   mcp-chaos judges by, named by its spec section).
//! - [`wire`]: JSON-RPC 2.0 frames; a total parser that never panics and keeps the raw value;
//!   what a correct server owes each frame ([`wire::answer`]).
//! - [`sse`]: a strict, incremental `text/event-stream` reader (Streamable HTTP responses).
//! - [`schema`]: compiling a server's `inputSchema`/`outputSchema` offline, with a
//!   backtracking limit, in the dialect the protocol version gives it.
//! - [`observed`]: what was seen of a server, as plain data (frames, exits, shutdowns, HTTP
//!   exchanges), which the engine's transports produce and its oracle judges.

pub mod observed;
pub mod protocol;
pub mod schema;
pub mod sse;
pub mod wire;
