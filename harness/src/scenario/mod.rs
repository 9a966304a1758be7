//! Scenario files: named, versioned test plans for CI (`mcp-chaos scenario`).

pub mod outcome;
