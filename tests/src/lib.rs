//! Fixture MCP servers and end-to-end test helpers for mcp-chaos.
