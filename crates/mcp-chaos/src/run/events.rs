//! What a run tells its listeners as it goes ([`Event`]), and why a run could not be carried
//! out ([`RunError`]).

use super::{ToolGenerated, faults, select};
use crate::finding::Finding;
use crate::protocol::ProtocolVersion;
use crate::session::{Exchange, InitError, Negotiated};
use crate::transport::StartError;

/// Something that happened during a run, in order.
#[derive(Debug)]
pub enum Event<'a> {
    /// A server process is being started.
    Starting {
        /// Its command line or URL.
        server: &'a str,
    },
    /// The handshake succeeded.
    Initialized {
        /// The requested and answered protocol versions, and the server's `serverInfo` and
        /// `capabilities`.
        negotiated: &'a Negotiated,
    },
    /// The tools were listed and selected (before any is called).
    Tools {
        /// The tools left out by the selection, and why.
        skipped: &'a [select::Skipped],
        /// Globs of `--tools`/`--skip-tools` that match no listed tool.
        unmatched: &'a [String],
        /// The selected tools annotated `destructiveHint: true`: they will be called.
        destructive: &'a [String],
    },
    /// The tools were listed; `steps` more probes are planned.
    Planned {
        /// Number of tools the server listed.
        tools: usize,
        /// Number of probes planned.
        steps: usize,
    },
    /// A probe starts.
    Step {
        /// The probe's short human label, e.g. `unknown method` or `tools/call echo`.
        label: &'a str,
    },
    /// An exchange finished.
    Exchange {
        /// The request or notification sent, the frames that answered it and its timing.
        exchange: &'a Exchange,
    },
    /// A finding (each distinct one once), redacted; its `redact` holds every value to
    /// redact found so far in the run (secrets, credentials a finding uncovered).
    Finding {
        /// The finding, its message and evidence already redacted.
        finding: &'a Finding,
    },
    /// The fault phase starts for a tool (`faults` profiles), or is skipped because none of
    /// the tool's calls so far (baseline and generated) made an upstream request.
    FaultPhase {
        /// The tool's name.
        tool: &'a str,
        /// How many fault profiles will run (0 when skipped).
        faults: usize,
        /// How many calls of the tool were made before, in every phase (those that tried to
        /// reach the upstream, when skipped).
        tried: u64,
    },
    /// The fault property phase starts for a tool that reached the upstream: up to `cases`
    /// drawn (arguments, fault, scope) cases.
    FaultProperties {
        /// The tool's name.
        tool: &'a str,
        /// How many cases are drawn at most.
        cases: usize,
    },
    /// The generated phase of one tool ended (all its cases ran, or its time budget ran out,
    /// or a call missed its deadline); the same record goes into [`Summary::generated`](super::Summary::generated).
    ToolGenerated {
        /// The tool's calls, wall time (ms), and why it stopped early or was skipped.
        phase: &'a ToolGenerated,
    },
    /// The generated phase's budget (`--generated-budget-ms`) was spent: `covered` tools were
    /// generated for, the `skipped` others are listed in [`Summary::generated`](super::Summary::generated) as skipped.
    GeneratedBudgetSpent {
        /// Tools whose generated phase ran.
        covered: usize,
        /// Tools not reached (no generated case ran for them).
        skipped: usize,
        /// The budget, in ms.
        budget_ms: u64,
    },
    /// `--protocol-version all` skipped a version the server does not speak.
    VersionSkipped {
        /// The protocol version skipped, e.g. `2025-03-26`.
        version: ProtocolVersion,
    },
    /// The server was restarted: after dying or hanging, or onto a fresh process though it
    /// did not fail (`fresh`).
    Restarted {
        /// What led to it, for the terminal line (for example "no server running" or "server
        /// failed after a request of 1048576 bytes").
        reason: &'a str,
        /// A restart onto a fresh server that did not fail: a call given up on may still be
        /// running, a wire frame may have changed the session's state, or a phase starts on
        /// a fresh server. Not counted against `--max-restarts`.
        fresh: bool,
    },
    /// A second server process is started for the tool calls, beside the other phases, or
    /// could not be (see `--in-flight`).
    SecondServer {
        /// What happens, for the terminal line.
        message: &'a str,
    },
    /// A start of the server failed (it did not answer the handshake usably); its output
    /// tail, for the report of a run that could not start.
    StartFailed {
        /// The end of the server's stderr (and stdout when not read as protocol).
        stderr_tail: &'a str,
    },
}

/// Why a run could not be carried out (exit code 2).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The server could not be started.
    #[error(transparent)]
    Start(#[from] StartError),
    /// The server did not complete the handshake.
    #[error("{0}")]
    Init(#[from] InitError),
    /// The fault injectors could not start.
    #[error(transparent)]
    Injectors(#[from] faults::InjectorError),
    /// The server does not speak the version asked for (only reported internally by
    /// `--protocol-version all`, which then skips that version).
    #[error("the server does not speak the requested protocol version")]
    Unsupported,
}
