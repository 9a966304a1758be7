//! The one error type of the command line: why a command stopped before its verdict, and the
//! exit code that says so (`mcp_chaos_model::exit`). A command returns `Ok(code)` with its
//! verdict (0: passed, 1: violations or a failed scenario, 2: a run that did not complete and
//! wrote its report) or a [`Failure`], which [`Failure::exit`] prints once, as
//! `mcp-chaos: <message>`, and maps to its code.

use mcp_chaos_model::exit;

/// Why a command could not give its verdict.
#[derive(Debug)]
pub(crate) enum Failure {
    /// The command line, or a file it names (a schema, a scenario, a baseline, a replay
    /// file), is unusable: exit 3 ([`exit::USAGE`]).
    Usage(String),
    /// The server under test could not be started (a replay's): exit 2
    /// ([`exit::SERVER_START`]).
    NotStarted(String),
    /// mcp-chaos itself failed: a report, journal or recording could not be written, the
    /// async runtime or the signal handler could not start: exit 4 ([`exit::INTERNAL`]).
    Internal(String),
}

impl Failure {
    /// The process exit code of this failure.
    pub(crate) fn code(&self) -> i32 {
        match self {
            Failure::Usage(_) => exit::USAGE,
            Failure::NotStarted(_) => exit::SERVER_START,
            Failure::Internal(_) => exit::INTERNAL,
        }
    }

    /// Prints the message on stderr (`mcp-chaos: <message>`, each line of a message of
    /// several) and returns the exit code.
    pub(crate) fn exit(self) -> i32 {
        let code = self.code();
        let (Failure::Usage(message) | Failure::NotStarted(message) | Failure::Internal(message)) =
            self;
        for line in message.lines() {
            eprintln!("mcp-chaos: {line}");
        }
        code
    }
}

/// What a command returns: its verdict's exit code, or why it has none.
pub(crate) type Outcome = Result<i32, Failure>;
