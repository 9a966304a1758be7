//! The `--report-json` file: `{"mcp_chaos_version", "server": {"command"|"url", "server_info",
//! "protocol_version"}, "summary": {"exchanges", "tool_calls", "violations", "warnings",
//! "duration_ms", "restarts"}, "findings": [{"code", "invariant", "severity",
//! "protocol_version", "tool", "message", "spec", "request", "response", "fault", "probe"}]}`.

use std::path::Path;

use crate::run::Report;

/// Writes `report` as pretty-printed JSON to `path` (replacing it), creating parent folders.
pub fn write(report: &Report, path: &Path) -> std::io::Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    let mut text = serde_json::to_string_pretty(report).map_err(std::io::Error::other)?;
    text.push('\n');
    std::fs::write(path, text)
}
