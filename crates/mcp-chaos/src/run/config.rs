//! What a run is given: the server under test (a stdio command or a Streamable HTTP URL, with
//! its process options) and the run's configuration (versions, phases, deadlines, budgets).

use std::time::Duration;

use super::{args, fault_props, faults, features, generated, scheduler, select, wire_phase};
use crate::protocol::ProtocolVersion;
use crate::transport::{
    HttpConfig, HttpTransport, StartError, StdioConfig, StdioTransport, Transport,
};

/// The proxy variables `--no-egress` (and a scenario's `no_egress = true`) add to the server's
/// environment, as `(name, value)` pairs: every proxy variable, upper and lower case, points at
/// the closed discard port on loopback (`http://127.0.0.1:9`); `NO_PROXY` lets loopback through.
pub fn no_egress_env() -> Vec<(String, String)> {
    let closed = "http://127.0.0.1:9".to_owned();
    let mut env = Vec::new();
    for key in ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"] {
        env.push((key.to_owned(), closed.clone()));
        env.push((key.to_ascii_lowercase(), closed.clone()));
    }
    let loopback = "localhost,127.0.0.1,::1".to_owned();
    env.push(("NO_PROXY".into(), loopback.clone()));
    env.push(("no_proxy".into(), loopback));
    env
}

/// What the command line (`--env`, `--no-egress`, `--clean-env`, `--cwd`,
/// `--max-frame-bytes`) and a scenario's `[server]` table both say about a process they
/// start (the server, or an HTTP server's start command): applied in one place, in one order.
#[derive(Debug, Clone, Default)]
pub struct ProcessOptions {
    /// Add the proxy variables of [`no_egress_env`] first (so that `env` may override one).
    pub no_egress: bool,
    /// Variables added to the environment, in order, as `(name, value)`.
    pub env: Vec<(String, String)>,
    /// Start from an empty environment, keeping only the variables the transport keeps
    /// ([`crate::transport::stdio::KEPT_ENV`]), plus `env`.
    pub clean_env: bool,
    /// The working directory (default: mcp-chaos's own).
    pub cwd: Option<std::path::PathBuf>,
    /// Largest frame accepted from the server, in bytes.
    pub max_frame_bytes: usize,
}

impl ProcessOptions {
    /// `process` with these options applied (its program and arguments untouched).
    pub fn apply(&self, mut process: StdioConfig) -> StdioConfig {
        if self.no_egress {
            process.env.extend(no_egress_env());
        }
        process.env.extend(self.env.iter().cloned());
        process.clean_env = self.clean_env;
        process.cwd.clone_from(&self.cwd);
        process.max_frame_bytes = self.max_frame_bytes;
        process
    }
}

/// How to reach the server under test.
#[derive(Debug, Clone)]
pub enum ServerSpec {
    /// A child process over stdio.
    Stdio(StdioConfig),
    /// A Streamable HTTP endpoint, optionally started by a command.
    Http(HttpConfig),
}

impl ServerSpec {
    /// `(command, url)` for the report.
    pub fn identity(&self) -> (Option<String>, Option<String>) {
        match self {
            ServerSpec::Stdio(c) => (Some(c.display()), None),
            ServerSpec::Http(c) => (
                c.start.as_ref().map(StdioConfig::display),
                Some(c.url.clone()),
            ),
        }
    }

    /// The command line (or URL), for reports.
    pub fn describe(&self) -> String {
        match self {
            ServerSpec::Stdio(c) => c.display(),
            ServerSpec::Http(c) => match &c.start {
                Some(start) => format!("{} (started with {})", c.url, start.display()),
                None => c.url.clone(),
            },
        }
    }

    /// What every report redacts for this server: the values of its extra HTTP headers
    /// (`--header`, see [`crate::auth::redactions`]).
    pub fn redactions(&self) -> Vec<String> {
        match self {
            ServerSpec::Http(c) => crate::auth::redactions(&c.headers),
            ServerSpec::Stdio(_) => Vec::new(),
        }
    }

    /// The environment of the process mcp-chaos starts, if it starts one.
    pub fn env_mut(&mut self) -> Option<&mut Vec<(String, String)>> {
        match self {
            ServerSpec::Stdio(c) => Some(&mut c.env),
            ServerSpec::Http(c) => c.start.as_mut().map(|s| &mut s.env),
        }
    }

    /// Starts a fresh server (process, or connection) and returns its transport.
    ///
    /// # Errors
    /// [`StartError`] when the command line or URL is unusable, the program cannot be spawned,
    /// or a server started for HTTP exits or does not open its port in time.
    pub async fn start(&self) -> Result<Transport, StartError> {
        match self {
            ServerSpec::Stdio(c) => Ok(Transport::Stdio(StdioTransport::spawn(c.clone())?)),
            ServerSpec::Http(c) => Ok(Transport::Http(HttpTransport::connect(c.clone()).await?)),
        }
    }
}

/// Which protocol version(s) a run uses (`--protocol-version`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VersionChoice {
    /// The newest version both sides speak: `server/discover` for 2026-07-28 first, then
    /// `initialize` with 2025-11-25 (the server answers the version it speaks).
    Auto,
    /// One campaign per version the server supports, reported per version.
    All,
    /// Exactly this version (`--protocol-version 2025-11-25`, for example).
    Exactly(ProtocolVersion),
}

impl std::str::FromStr for VersionChoice {
    type Err = crate::protocol::UnknownVersion;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "auto" => Ok(VersionChoice::Auto),
            "all" => Ok(VersionChoice::All),
            other => other.parse().map(VersionChoice::Exactly),
        }
    }
}

/// What a run does: the server under test, the protocol version(s), which phases run, and
/// their deadlines, budgets and limits.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// How to reach the server under test: a stdio command or a Streamable HTTP endpoint.
    pub server: ServerSpec,
    /// The protocol version(s) to use.
    pub version: VersionChoice,
    /// Deadline per request: how long each request waits for its response.
    pub timeout: Duration,
    /// Run the protocol probes (malformed frames, unknown method, notifications, ...) and the
    /// lifecycle-order cases on a fresh process.
    pub protocol_probes: bool,
    /// Call the selected tools (`tools/call`): the baseline calls, and the generated and fault
    /// phases.
    pub tool_calls: bool,
    /// Probe version negotiation with a bogus version (needs one extra server start).
    pub version_probe: bool,
    /// Run the transport-chaos probes (concurrency, cancellation, disconnects, large frames).
    pub transport_chaos: bool,
    /// Run the generated phase (boundary, valid and invalid arguments for every tool).
    pub generated: bool,
    /// Random valid cases per tool in the generated phase (half as many invalid ones).
    pub cases: usize,
    /// Time budget of the generated phase per tool.
    pub tool_budget: Duration,
    /// Time budget of the whole generated phase: each tool gets at most its fair share of
    /// what is left (`left / tools left`, capped by `tool_budget`), and the tools not reached
    /// when it is spent are listed as skipped in [`Summary::generated`](super::Summary::generated).
    pub generated_budget: Duration,
    /// Where replay files of generated findings are written, if anywhere.
    pub replays: Option<std::path::PathBuf>,
    /// How many times a server that died is restarted before the run gives up.
    pub max_restarts: u32,
    /// The URL given to URL-typed tool arguments (when no fake upstream takes them).
    pub url: String,
    /// Upstream fault injection; inactive by default.
    pub faults: faults::FaultPlan,
    /// Drawn (arguments, fault, scope) cases per tool that reached the upstream, in the fault
    /// property phase after the one-per-profile sweep (0: no property phase); see
    /// [`fault_props`].
    pub fault_cases: usize,
    /// Secrets handed to the server in its environment (`NAME`, `VALUE`): the value must never
    /// appear in anything the server returns.
    pub secrets: Vec<(String, String)>,
    /// The run's seed (canaries, probabilistic schedules, generated values).
    pub seed: u64,
    /// Which listed tools are called (`--tools`, `--skip-tools`, `--read-only`).
    pub selection: select::ToolSelection,
    /// Which server features beyond tools the features phase exercises (`--features`,
    /// `--skip-resources`, `--skip-prompts`); [`features::FeatureSelection::NONE`] skips it.
    pub features: features::FeatureSelection,
    /// The command line that reruns this run exactly (its seed included, secrets redacted),
    /// for the summary and the reports; `None` when the run has none (a library run).
    pub rerun: Option<String>,
    /// Frames the wire phase sends (`--wire-cases`; 0: no wire phase), see [`wire_phase`].
    pub wire_cases: usize,
    /// The run's budget (`--budget-ms`), if any: it bounds the time to a verdict (see
    /// `budget`); what it cut is listed in [`Summary::budget_cut`](super::Summary::budget_cut). With
    /// [`VersionChoice::All`] it covers every version's campaign together.
    pub budget: Option<Duration>,
    /// Most `tools/call` requests outstanding at once in the generated phase (`--in-flight`,
    /// default [`scheduler::DEFAULT_IN_FLIGHT`]); 1 runs one call at a time, each followed by a
    /// liveness ping. Under a fake upstream the phase always runs one call at a time.
    pub in_flight: usize,
}

impl RunConfig {
    /// A config with every probe on, for `server` under `version`, with a 10 s timeout.
    pub fn new(server: ServerSpec, version: VersionChoice) -> RunConfig {
        RunConfig {
            server,
            version,
            timeout: Duration::from_millis(crate::transport::DEFAULT_TIMEOUT_MS),
            protocol_probes: true,
            tool_calls: true,
            version_probe: true,
            transport_chaos: true,
            generated: true,
            cases: 64,
            tool_budget: Duration::from_millis(generated::DEFAULT_TOOL_BUDGET_MS),
            generated_budget: Duration::from_secs(120),
            replays: None,
            max_restarts: 10,
            url: args::CLOSED_LOOPBACK_URL.to_owned(),
            faults: faults::FaultPlan {
                upstream_env: Vec::new(),
                proxy: false,
                url_args: false,
                faults: mcp_chaos_faults::Fault::catalog(),
            },
            fault_cases: fault_props::FAULT_CASES,
            secrets: Vec::new(),
            seed: 0,
            selection: select::ToolSelection::default(),
            features: features::FeatureSelection::ALL,
            rerun: None,
            wire_cases: wire_phase::DEFAULT_WIRE_CASES,
            budget: None,
            in_flight: scheduler::DEFAULT_IN_FLIGHT,
        }
    }
}
