//! The `--report-json` file: `{"mcp_chaos_version", "seed", "server": {"command"|"url",
//! "server_info", "protocol_version"}, "summary": {"exchanges", "tool_calls", "tools",
//! "violations", "warnings", "duration_ms", "restarts", "generated"}, "findings": [{"code",
//! "invariant", "severity", "protocol_version", "tool", "message", "spec", "request",
//! "response", "fault", "probe", "occurrences"}], "outcome", "interrupted"}`, plus, when the
//! run did not complete (`outcome` `not-started` or `interrupted`), `"error": {"kind",
//! "message", "stderr_tail"}` and `"exchanges": [{"probe", "sent", "received", "outcome",
//! "elapsed_ms"}]` (see [`crate::run::live`]). Written whatever happens: on exit 2 and on
//! SIGINT/SIGTERM too; [`crate::report::journal`] keeps the findings as they are found.

use std::path::Path;

use crate::run::Report;

/// Writes `report` as pretty-printed JSON to `path` (replacing it), creating parent folders.
///
/// # Errors
///
/// Any I/O error creating the folders or writing the file, or a serialization error (as
/// [`std::io::ErrorKind::Other`]).
pub fn write(report: &Report, path: &Path) -> std::io::Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    let mut text = serde_json::to_string_pretty(report).map_err(std::io::Error::other)?;
    text.push('\n');
    std::fs::write(path, text)
}
