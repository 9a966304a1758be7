//! mcp-chaos: a property-based fuzz and chaos test harness for MCP (Model Context Protocol)
//! servers.
//!
//! The crate is layered; each layer imports only the ones above it in this list:
//! - [`wire`]: JSON-RPC 2.0 frames, a total parser that never panics and keeps the raw value.

pub mod generate;
