//! [`HarnessBuilder`]: how to start the server under test, and what to inject.

use std::sync::Arc;
use std::time::Duration;

use super::{Harness, HarnessError, Invariant};
use crate::protocol::ProtocolVersion;
use crate::run::ServerSpec;
use crate::run::faults::FaultPlan;
use crate::transport::{DEFAULT_TIMEOUT_MS, HttpConfig, StartError, StdioConfig};

/// How to start a [`Harness`]: the server (a stdio command line, or a Streamable HTTP URL with
/// an optional start command), its environment, the protocol version, the deadline, the fake
/// upstream and proxy it is handed, secrets it must not leak, and your own invariants. Made by
/// [`Harness::builder`]; [`start`](HarnessBuilder::start) starts it.
///
/// ```no_run
/// use std::time::Duration;
/// use mcp_chaos::Harness;
///
/// let server = Harness::builder()
///     .stdio("node build/index.js")
///     .env("LOG_LEVEL", "debug")
///     .upstream_env("API_BASE_URL") // the server reads its upstream's URL from here
///     .secret_env("API_KEY", "sk_test_do_not_leak")
///     .timeout(Duration::from_secs(5))
///     .start()
///     .expect("the server starts");
/// # drop(server);
/// ```
///
/// Errors in the command line or URL are reported by [`start`](HarnessBuilder::start), not
/// by the method that took them.
#[must_use = "a builder does nothing until start() is called"]
pub struct HarnessBuilder {
    server: Option<Result<ServerSpec, StartError>>,
    start: Option<Result<StdioConfig, StartError>>,
    env: Vec<(String, String)>,
    version: ProtocolVersion,
    timeout: Duration,
    plan: FaultPlan,
    secrets: Vec<(String, String)>,
    invariants: Vec<Arc<dyn Invariant>>,
    seed: u64,
}

impl std::fmt::Debug for HarnessBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HarnessBuilder")
            .field("server", &self.server)
            .field("version", &self.version)
            .field("timeout", &self.timeout)
            .field("upstream_env", &self.plan.upstream_env)
            .field("proxy", &self.plan.proxy)
            .field("secrets", &self.secrets.len())
            .field("invariants", &self.invariants.len())
            .field("seed", &self.seed)
            .finish_non_exhaustive()
    }
}

impl Default for HarnessBuilder {
    fn default() -> HarnessBuilder {
        HarnessBuilder::new()
    }
}

impl HarnessBuilder {
    /// A builder with no server yet, protocol 2025-11-25, a 10 s deadline per request, no fake
    /// upstream, no proxy, no secrets, no invariants of your own and seed 0.
    pub fn new() -> HarnessBuilder {
        HarnessBuilder {
            server: None,
            start: None,
            env: Vec::new(),
            version: ProtocolVersion::LATEST_WITH_INITIALIZE,
            timeout: Duration::from_millis(DEFAULT_TIMEOUT_MS),
            plan: FaultPlan {
                upstream_env: Vec::new(),
                proxy: false,
                url_args: false,
                faults: Vec::new(),
            },
            secrets: Vec::new(),
            invariants: Vec::new(),
            seed: 0,
        }
    }

    /// A stdio server started from `command_line`, split like a POSIX shell would (without
    /// running a shell), e.g. `"node build/index.js --verbose"`. An empty line or unbalanced
    /// quotes make [`start`](HarnessBuilder::start) fail with [`HarnessError::Start`].
    pub fn stdio(mut self, command_line: &str) -> HarnessBuilder {
        self.server = Some(StdioConfig::from_command_line(command_line).map(ServerSpec::Stdio));
        self
    }

    /// A Streamable HTTP server at `url` (loopback: `127.0.0.1`, `::1` or `localhost`), e.g.
    /// `http://127.0.0.1:3000/mcp`. Give [`start_command`](HarnessBuilder::start_command) when
    /// the harness should start it (and so hand it the environment); otherwise it must already
    /// be running, and [`env`](HarnessBuilder::env), [`upstream_env`](HarnessBuilder::upstream_env)
    /// and [`secret_env`](HarnessBuilder::secret_env) cannot reach it.
    pub fn http(mut self, url: &str) -> HarnessBuilder {
        self.server = Some(Ok(ServerSpec::Http(HttpConfig::new(url))));
        self
    }

    /// For an [`http`](HarnessBuilder::http) server: the command line that starts it (split
    /// like [`stdio`](HarnessBuilder::stdio)); the harness waits for its port to open (up to
    /// 10 s) and stops its process tree when dropped. Ignored for a stdio server.
    pub fn start_command(mut self, command_line: &str) -> HarnessBuilder {
        self.start = Some(StdioConfig::from_command_line(command_line));
        self
    }

    /// Sets an environment variable of the server process (added to the inherited
    /// environment; a later value of the same name wins).
    pub fn env(mut self, name: impl Into<String>, value: impl Into<String>) -> HarnessBuilder {
        self.env.push((name.into(), value.into()));
        self
    }

    /// The protocol version to ask for in `initialize` (default 2025-11-25). The server may
    /// answer another one it speaks: [`Harness::protocol_version`] tells which was negotiated.
    pub fn protocol_version(mut self, version: ProtocolVersion) -> HarnessBuilder {
        self.version = version;
        self
    }

    /// The deadline of each request (the handshake, every `tools/call` and liveness ping);
    /// default 10 s. A call that misses it is a `no-response` finding. Keep it above the
    /// server's own upstream timeout, so that a `hang` fault is judged on the server's answer.
    pub fn timeout(mut self, timeout: Duration) -> HarnessBuilder {
        self.timeout = timeout;
        self
    }

    /// Starts a fake upstream ([`mcp_chaos_faults::FakeUpstream`], on 127.0.0.1, healthy by
    /// default) and passes its base URL (`http://127.0.0.1:PORT`) to the server in the
    /// environment variable `name`, as `mcp-chaos run --upstream-env NAME` does. Repeatable
    /// (one upstream, several variables). Needed by
    /// [`check_tool_under`](Harness::check_tool_under).
    pub fn upstream_env(mut self, name: impl Into<String>) -> HarnessBuilder {
        let name = name.into();
        if !self.plan.upstream_env.contains(&name) {
            self.plan.upstream_env.push(name);
        }
        self
    }

    /// Also starts a forward proxy ([`mcp_chaos_faults::ForwardProxy`], on 127.0.0.1) that
    /// serves the same faults, and sets `HTTP_PROXY`, `HTTPS_PROXY` and `ALL_PROXY` (and the
    /// lower-case names) for the server, as `mcp-chaos run --proxy` does: for servers whose
    /// HTTP client honours a proxy and whose upstream URL cannot be configured. The fake
    /// upstream is started too.
    pub fn proxy(mut self) -> HarnessBuilder {
        self.plan.proxy = true;
        self
    }

    /// Gives the server the secret `value` in the environment variable `name`, as
    /// `--secret-env NAME=VALUE` does: `leaked-internals` reports any answer that carries it
    /// (also base64- or URL-encoded), and every finding has it replaced by `[REDACTED]`.
    pub fn secret_env(
        mut self,
        name: impl Into<String>,
        value: impl Into<String>,
    ) -> HarnessBuilder {
        self.secrets.push((name.into(), value.into()));
        self
    }

    /// Registers an [`Invariant`] of your own, run on every check after the built-in ones.
    pub fn invariant(mut self, invariant: impl Invariant + 'static) -> HarnessBuilder {
        self.invariants.push(Arc::new(invariant));
        self
    }

    /// The seed of the fake upstream's canaries (fake keys, hostnames, SQL and stack traces
    /// planted in its failure responses) and of probability-scoped faults; default 0.
    pub fn seed(mut self, seed: u64) -> HarnessBuilder {
        self.seed = seed;
        self
    }

    /// Sets the server from a ready-made spec (for [`Harness::start`]).
    pub(super) fn set_server(&mut self, spec: ServerSpec) {
        self.server = Some(Ok(spec));
    }

    /// Starts the fake upstream and proxy (if asked for), then the server with its
    /// environment, performs the handshake and lists the tools.
    ///
    /// # Errors
    /// [`HarnessError::NoServer`] without [`stdio`](HarnessBuilder::stdio) or
    /// [`http`](HarnessBuilder::http); [`HarnessError::Start`] for an unusable command line or
    /// URL or a server that does not start (or whose port does not open);
    /// [`HarnessError::Init`] when the handshake fails; [`HarnessError::Injectors`] when the
    /// fake upstream or proxy cannot bind; [`HarnessError::Runtime`] when the async runtime
    /// cannot be created.
    pub fn start(self) -> Result<Harness, HarnessError> {
        let mut spec = self.server.ok_or(HarnessError::NoServer)??;
        if let (ServerSpec::Http(c), Some(start)) = (&mut spec, self.start) {
            c.start = Some(start?);
        }
        Harness::launch(super::Launch {
            spec,
            env: self.env,
            version: self.version,
            timeout: self.timeout,
            plan: self.plan,
            secrets: self.secrets,
            invariants: self.invariants,
            seed: self.seed,
        })
    }
}
