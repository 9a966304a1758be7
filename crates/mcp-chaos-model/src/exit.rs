//! Process exit codes of the `mcp-chaos` binary: a stable contract for CI. `run` (and `demo`)
//! and `scenario` share the codes; each has a table of what a code means for it, which its
//! `--help` prints ([`section`]).

/// The run completed and found no violations (warnings may have been reported).
pub const SUCCESS: i32 = 0;
/// The run found at least one violation (also a run interrupted by SIGINT or SIGTERM
/// after finding one).
pub const VIOLATIONS: i32 = 1;
/// The server could not be started or did not complete initialization, or SIGINT or
/// SIGTERM stopped the run before it found a violation: the run did not complete. The
/// report is written in both cases.
pub const SERVER_START: i32 = 2;
/// The command line, or a file it names (a schema, a scenario or baseline file, a replay
/// file), was invalid; nothing ran.
pub const USAGE: i32 = 3;
/// mcp-chaos itself failed (for example, the report could not be written).
pub const INTERNAL: i32 = 4;

/// What each code means for `mcp-chaos run` (and `demo`), as `--help` prints it.
pub const RUN: &[(i32, &str)] = &[
    (SUCCESS, "no violations (warnings may have been reported)"),
    (
        VIOLATIONS,
        "violations found (also when interrupted after finding one)",
    ),
    (
        SERVER_START,
        "the run did not complete: the server could not be started or initialized, or\n\
         SIGINT/SIGTERM stopped it before a violation was found",
    ),
    (USAGE, "usage error"),
    (
        INTERNAL,
        "mcp-chaos itself failed (e.g. the report could not be written)",
    ),
];

/// What each code means for `mcp-chaos scenario`, as its `--help` prints it.
pub const SCENARIO: &[(i32, &str)] = &[
    (SUCCESS, "every scenario passed"),
    (
        VIOLATIONS,
        "a scenario failed (a new finding, or an expectation that did not hold)",
    ),
    (
        SERVER_START,
        "a scenario could not be run (its server did not start); the others still ran",
    ),
    (
        USAGE,
        "usage error, or a malformed scenario or baseline file (nothing ran)",
    ),
    (INTERNAL, "a report could not be written"),
];

/// The `Exit codes:` section of a `--help` from one of the tables above: a code per
/// line, its meaning indented (a meaning's own line breaks continue under it).
pub fn section(table: &[(i32, &str)]) -> String {
    use std::fmt::Write as _;
    let mut out = String::from("Exit codes:\n");
    for (code, meaning) in table {
        let meaning = meaning.replace('\n', "\n       ");
        let _ = writeln!(out, "  {code:<5}{meaning}");
    }
    out
}
