//! Fault-injecting fake upstreams for mcp-chaos (filled by the fault-injection work).
