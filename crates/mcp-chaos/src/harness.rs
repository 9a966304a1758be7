//! The library API for `cargo test`: start your server (against a fake upstream that fails on
//! purpose, if it calls one), list its tools, draw arguments from each tool's `inputSchema`
//! and upstream faults as proptest strategies, add invariants of your own, and check a call in
//! one line.
//!
//! A complete property test: every `weather` call, with any valid arguments and under any
//! upstream fault (404, 429, 5xx, hangs, resets, garbage bodies, on every request, the first
//! only, the n-th, …), is judged by the oracle `mcp-chaos run` uses and by one invariant of
//! your own. A failure shrinks to the simplest arguments and the simplest fault that show it.
//!
//! ```standalone_crate
//! use std::time::Duration;
//!
//! use mcp_chaos::finding::Severity;
//! use mcp_chaos::harness::{ExchangeView, Invariant};
//! use mcp_chaos::{Harness, strategies};
//! use proptest::prelude::*;
//!
//! /// Your own rule: a failed weather call names the service that failed.
//! struct NamesTheService;
//!
//! impl Invariant for NamesTheService {
//!     fn name(&self) -> &str {
//!         "weather-error-names-the-service"
//!     }
//!     fn severity(&self) -> Severity {
//!         Severity::Violation
//!     }
//!     fn check(&self, call: &ExchangeView<'_>) -> Option<String> {
//!         let named = call.text().contains("weather service");
//!         (call.is_error_result() && !named).then(|| format!("{:?} names no service", call.text()))
//!     }
//! }
//!
//! # fn main() {
//! # // This example runs itself as the bundled fixture server, the stand-in for yours.
//! # if std::env::var_os("MCP_CHAOS_DOC_FIXTURE").is_some() {
//! #     std::process::exit(mcp_chaos_fixture::serve_stdio(&[]));
//! # }
//! # let my_server = std::env::current_exe().expect("a path").display().to_string();
//! let server = Harness::builder()
//!     .stdio(&my_server) // e.g. "target/debug/my-mcp-server --verbose"
//! #   .env("MCP_CHAOS_DOC_FIXTURE", "1")
//!     .upstream_env("UPSTREAM_URL") // the server reads its upstream's base URL from here
//!     .env("FIXTURE_UPSTREAM_TIMEOUT_MS", "1000") // the server's own upstream timeout
//!     .timeout(Duration::from_secs(5)) // the deadline of each request to the server
//!     .invariant(NamesTheService)
//!     .start()
//!     .expect("the server starts");
//! let weather = server.tool("weather").expect("a weather tool").clone();
//! proptest!(ProptestConfig::with_cases(16), |(
//!     args in strategies::arguments(&weather),
//!     fault in strategies::faults(),
//! )| {
//!     let findings = server.check_tool_under(&weather, &args, &fault);
//!     prop_assert!(findings.is_empty(), "{args} under {fault}: {findings:#?}");
//! });
//! # }
//! ```
//!
//! (The example runs as a doc test: its hidden lines make the test binary serve as the
//! bundled fixture, `mcp_chaos_fixture::serve_stdio`, so that it needs no other binary. With
//! the fixture's `generic-error` flaw planted, it fails on the invariant.)
//!
//! [`Harness`] is synchronous (it runs its own Tokio runtime), so it works inside `proptest!`
//! blocks and plain `#[test]`s. Each check sends one `tools/call`, then a liveness probe, and
//! judges both with the same oracle the `mcp-chaos` command uses, then runs your
//! [`Invariant`]s; a server that dies is started again for the next check. `PROPTEST_CASES`
//! sets the number of cases, as for any proptest.
//!
//! - [`Harness::builder`] ([`HarnessBuilder`]): the server (stdio command line, or HTTP URL
//!   and start command), environment, protocol version, deadline, fake upstream
//!   ([`upstream_env`](HarnessBuilder::upstream_env)), proxy, secrets, invariants.
//! - [`Harness::check_tool`], [`Harness::check_invalid`], [`Harness::check_tool_under`]:
//!   one call each, its findings as [`Finding`]s (empty: the server behaved).
//! - [`strategies`]: schema-valid and invalid arguments, scoped upstream faults.
//! - [`Invariant`] and [`ExchangeView`]: rules of your own, reported with code [`USER_CODE`].

mod builder;
mod invariant;

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

pub use builder::HarnessBuilder;
pub use invariant::{ExchangeView, Invariant, USER_CODE};
use mcp_chaos_faults::{JournalEntry, ScopedFault};

use crate::finding::Finding;
use crate::generate::{GenError, GenOptions, Generator, Violation};
use crate::oracle::{self, Context, LeakKind, ToolTable};
use crate::protocol::ProtocolVersion;
use crate::run::faults::{FaultPlan, InjectorError, Injectors};
use crate::run::{ServerSpec, generated::schema_for};
use crate::session::{ClientConfig, Probe, Session};

/// A tool as the server lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct Tool {
    /// The tool's `name`, the one `tools/call` takes.
    pub name: String,
    /// Its `inputSchema`, with the dialect made explicit for the negotiated version.
    pub input_schema: Value,
    /// Its `outputSchema`, if it declares one.
    pub output_schema: Option<Value>,
    /// The tool's `description`, if it declares one.
    pub description: Option<String>,
}

/// Why the harness could not start or talk to the server.
#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    /// The builder was given neither a stdio command line nor an HTTP URL.
    #[error("no server: call stdio(COMMAND LINE) or http(URL) on the builder")]
    NoServer,
    /// The command line or URL is unusable, or the server could not be started.
    #[error(transparent)]
    Start(#[from] crate::transport::StartError),
    /// The server did not complete initialization.
    #[error(transparent)]
    Init(#[from] crate::session::InitError),
    /// The fake upstream or the proxy could not start (no loopback port to bind).
    #[error(transparent)]
    Injectors(#[from] InjectorError),
    /// The async runtime could not be created.
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
}

/// Everything [`HarnessBuilder::start`] hands to [`Harness::launch`].
struct Launch {
    spec: ServerSpec,
    env: Vec<(String, String)>,
    version: ProtocolVersion,
    timeout: Duration,
    plan: FaultPlan,
    secrets: Vec<(String, String)>,
    invariants: Vec<Arc<dyn Invariant>>,
    seed: u64,
}

/// A running server under test (see the module docs), with its fake upstream and proxy when
/// the builder asked for them. Dropping it stops the server and its process tree, then the
/// injectors. Its methods take `&self`, so that it can be used from proptest's closures. It
/// runs its own Tokio runtime: use it from synchronous code (a `#[test]`, a `proptest!`), not
/// from inside an async runtime.
pub struct Harness {
    runtime: tokio::runtime::Runtime,
    session: std::sync::Mutex<Option<Session>>,
    spec: ServerSpec,
    version: ProtocolVersion,
    timeout: Duration,
    tools: Vec<Tool>,
    table: ToolTable,
    injectors: Option<Injectors>,
    exact: Vec<(LeakKind, String)>,
    secrets: Vec<String>,
    invariants: Vec<Arc<dyn Invariant>>,
}

impl std::fmt::Debug for Harness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Harness")
            .field("server", &self.spec.describe())
            .field("version", &self.version)
            .field("timeout", &self.timeout)
            .field("tools", &self.tools.len())
            .field("upstream", &self.upstream_url())
            .field("invariants", &self.invariants.len())
            .finish_non_exhaustive()
    }
}

type Connected = (Session, crate::session::Negotiated, Vec<Value>);

impl Harness {
    /// A [`HarnessBuilder`]: the way to give the server an environment, a fake upstream, a
    /// proxy, secrets or invariants of your own.
    pub fn builder() -> HarnessBuilder {
        HarnessBuilder::new()
    }

    /// Starts a stdio server from a command line (split like a shell would) under protocol
    /// 2025-11-25 with a 10 s deadline per request: `Harness::builder().stdio(line).start()`.
    ///
    /// # Errors
    /// As [`HarnessBuilder::start`].
    pub fn stdio(command_line: &str) -> Result<Harness, HarnessError> {
        Harness::builder().stdio(command_line).start()
    }

    /// Connects to a running Streamable HTTP server (loopback) under protocol 2025-11-25:
    /// `Harness::builder().http(url).start()`.
    ///
    /// # Errors
    /// As [`HarnessBuilder::start`].
    pub fn http(url: &str) -> Result<Harness, HarnessError> {
        Harness::builder().http(url).start()
    }

    /// Starts (or connects to) `spec`, negotiates `version` and lists the tools, with no fake
    /// upstream; each request has `timeout`.
    ///
    /// # Errors
    /// As [`HarnessBuilder::start`].
    pub fn start(
        spec: ServerSpec,
        version: ProtocolVersion,
        timeout: Duration,
    ) -> Result<Harness, HarnessError> {
        let mut builder = Harness::builder()
            .protocol_version(version)
            .timeout(timeout);
        builder.set_server(spec);
        builder.start()
    }

    fn launch(launch: Launch) -> Result<Harness, HarnessError> {
        // One worker thread, so that the fake upstream answers even between checks (a server
        // may call it in the background).
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .map_err(HarnessError::Runtime)?;
        let Launch {
            mut spec,
            env,
            version,
            timeout,
            plan,
            secrets,
            invariants,
            seed,
        } = launch;
        // As a run's campaign (`run::Campaign`) does: injectors first, then their URLs and the secrets in the
        // server's environment; the canaries and the secrets are what the leak oracle looks for.
        let injectors = if plan.is_active() {
            Some(runtime.block_on(Injectors::start(&plan, seed))?)
        } else {
            None
        };
        if let Some(spec_env) = spec.env_mut() {
            spec_env.extend(env);
            if let Some(inj) = &injectors {
                spec_env.extend(inj.env(&plan));
            }
            spec_env.extend(secrets.iter().cloned());
        }
        let mut exact: Vec<(LeakKind, String)> = secrets
            .iter()
            .map(|(_, v)| (LeakKind::Secret, v.clone()))
            .collect();
        if let Some(inj) = &injectors {
            exact.extend(inj.canaries().into_iter().map(|c| (LeakKind::Canary, c)));
        }
        let connected = runtime.block_on(connect(&spec, version, timeout));
        let (session, negotiated, tools) = match connected {
            Ok(c) => c,
            Err(e) => {
                if let Some(inj) = injectors {
                    runtime.block_on(inj.shutdown());
                }
                return Err(e);
            }
        };
        let version = negotiated.version;
        let table = ToolTable::new(&tools, version);
        let tools = tools
            .iter()
            .filter_map(|t| {
                Some(Tool {
                    name: t.get("name")?.as_str()?.to_owned(),
                    input_schema: schema_for(t.get("inputSchema").unwrap_or(&Value::Null), version),
                    output_schema: t.get("outputSchema").cloned(),
                    description: t
                        .get("description")
                        .and_then(Value::as_str)
                        .map(str::to_owned),
                })
            })
            .collect();
        Ok(Harness {
            runtime,
            session: std::sync::Mutex::new(Some(session)),
            spec,
            version,
            timeout,
            tools,
            table,
            injectors,
            exact,
            secrets: secrets.into_iter().map(|(_, v)| v).collect(),
            invariants,
        })
    }

    /// The protocol version negotiated.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.version
    }

    /// The tools the server listed.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// The tool called `name`.
    pub fn tool(&self, name: &str) -> Option<&Tool> {
        self.tools.iter().find(|t| t.name == name)
    }

    /// The fake upstream's base URL (`http://127.0.0.1:PORT`), when the builder started one
    /// ([`HarnessBuilder::upstream_env`] or [`HarnessBuilder::proxy`]).
    pub fn upstream_url(&self) -> Option<String> {
        self.injectors.as_ref().map(|inj| inj.upstream.url())
    }

    /// Calls `tool` with schema-valid `arguments` and returns every finding (an empty vector
    /// means the server behaved). With a fake upstream, it answers healthily. The server is
    /// restarted if the call killed it.
    pub fn check_tool(&self, tool: &Tool, arguments: &Value) -> Vec<Finding> {
        let probe = Probe::Generated {
            tool: tool.name.clone(),
            arguments: arguments.clone(),
            violation: None,
            phase: "library",
        };
        self.check(tool, arguments, probe, None)
    }

    /// Calls `tool` with arguments that break exactly `violation` (as produced by
    /// [`strategies::invalid_arguments`]) and returns every
    /// finding.
    pub fn check_invalid(&self, tool: &Tool, case: &(Value, Violation)) -> Vec<Finding> {
        let probe = Probe::Generated {
            tool: tool.name.clone(),
            arguments: case.0.clone(),
            violation: Some(case.1.clone()),
            phase: "library",
        };
        self.check(tool, &case.0, probe, None)
    }

    /// Calls `tool` with `arguments` while the fake upstream serves `fault` (its fault to the
    /// requests in its scope, counted from this call, the healthy answer to the others), then
    /// heals the upstream, and returns every finding: the call judged with the upstream
    /// requests it made, exactly as `mcp-chaos run`'s fault phase judges it
    /// (`business-failure-as-protocol-error`, `error-masked-as-success`, the actionable-error
    /// rubric, `leaked-internals` with the upstream's canaries and your secrets, `outputSchema`,
    /// the deadline, liveness), then your [`Invariant`]s. Findings carry the fault and, for a
    /// scoped one, which request got what.
    ///
    /// # Panics
    /// When the harness has no fake upstream: build it with
    /// [`upstream_env`](HarnessBuilder::upstream_env) or [`proxy`](HarnessBuilder::proxy).
    pub fn check_tool_under(
        &self,
        tool: &Tool,
        arguments: &Value,
        fault: &ScopedFault,
    ) -> Vec<Finding> {
        assert!(
            self.injectors.is_some(),
            "check_tool_under needs a fake upstream: build the harness with .upstream_env(NAME) or .proxy()"
        );
        let probe = Probe::ToolCall {
            tool: tool.name.clone(),
            arguments: arguments.clone(),
        };
        self.check(tool, arguments, probe, Some(fault))
    }

    fn check(
        &self,
        tool: &Tool,
        arguments: &Value,
        probe: Probe,
        fault: Option<&ScopedFault>,
    ) -> Vec<Finding> {
        let mut slot = self
            .session
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if slot.is_none() {
            match self
                .runtime
                .block_on(connect(&self.spec, self.version, self.timeout))
            {
                Ok((session, _, _)) => *slot = Some(session),
                Err(e) => {
                    let mut f = Finding::new(
                        &crate::finding::SERVER_DIED,
                        crate::finding::Severity::Violation,
                        self.version,
                        format!("the server could not be started again: {e}"),
                    );
                    f.tool = Some(tool.name.clone());
                    return vec![f];
                }
            }
        }
        let Some(mut session) = slot.take() else {
            return Vec::new();
        };
        // As the campaign's `Campaign::call` and `step` (`run/`): install, mark, call, attribute, heal.
        let healthy = ScopedFault::healthy();
        let served = self.injectors.as_ref().map(|_| fault.unwrap_or(&healthy));
        if let (Some(inj), Some(fault)) = (&self.injectors, fault) {
            inj.install(fault);
        }
        let marks = self.injectors.as_ref().map(Injectors::mark);
        let (mut exchange, ping, stderr, upstream) = self.runtime.block_on(async {
            let exchange = session.call_tool(probe, &tool.name, arguments).await;
            let upstream: Vec<JournalEntry> = match (&self.injectors, &marks) {
                (Some(inj), Some(marks)) => inj.since(marks),
                _ => Vec::new(),
            };
            let ping = session.liveness().await;
            (exchange, ping, session.stderr_tail(), upstream)
        });
        if let (Some(inj), Some(_)) = (&self.injectors, fault) {
            inj.heal();
        }
        if let Some(served) = served {
            exchange.fault = Some(crate::run::faults::context(served, &upstream));
        }
        let ctx = Context {
            version: self.version,
            tools: &self.table,
            exact: &self.exact,
            // Only tool calls are judged here: the tools capability is not in question.
            capabilities: None,
        };
        let mut findings = oracle::judge(&ctx, &exchange);
        findings.extend(oracle::judge(&ctx, &ping));
        let liveness = oracle::liveness::check(&ctx, &exchange, &ping, &stderr);
        let died = !liveness.is_empty();
        findings.extend(liveness);
        let view = ExchangeView {
            tool: &tool.name,
            arguments,
            version: self.version,
            exchange: &exchange,
            fault: served,
            upstream: &upstream,
        };
        findings.extend(invariant::check_all(&self.invariants, &view));
        if died {
            self.runtime.block_on(session.shutdown());
        } else {
            *slot = Some(session);
        }
        self.redact(findings)
    }

    /// Replaces the secrets (and credentials the oracle uncovered) in `findings`, as the
    /// report of a run does.
    fn redact(&self, mut findings: Vec<Finding>) -> Vec<Finding> {
        let mut secrets = self.secrets.clone();
        for f in &mut findings {
            secrets.append(&mut f.redact);
        }
        if secrets.is_empty() {
            return findings;
        }
        for f in &mut findings {
            f.message = oracle::leaks::redact(&f.message, &secrets);
            for field in [&mut f.request, &mut f.response] {
                if let Some(text) = field.as_mut() {
                    *text = oracle::leaks::redact(text, &secrets);
                }
            }
        }
        findings
    }
}

async fn connect(
    spec: &ServerSpec,
    version: ProtocolVersion,
    timeout: Duration,
) -> Result<Connected, HarnessError> {
    let transport = spec.start().await?;
    let mut session = Session::new(transport, ClientConfig::new(version, timeout));
    let (_, negotiated) = match session.initialize().await {
        Ok(ok) => ok,
        Err(e) => {
            session.shutdown().await;
            return Err(e.into());
        }
    };
    let (_, tools) = session.list_tools().await;
    Ok((session, negotiated, tools))
}

impl Drop for Harness {
    fn drop(&mut self) {
        let session = self
            .session
            .get_mut()
            .map_or_else(|p| p.into_inner().take(), Option::take);
        if let Some(session) = session {
            self.runtime.block_on(session.shutdown());
        }
        if let Some(inj) = self.injectors.take() {
            self.runtime.block_on(inj.shutdown());
        }
    }
}

/// Proptest strategies for a tool's arguments and its upstream's faults.
///
/// [`arguments`](strategies::arguments) draws schema-valid arguments of a tool;
/// [`faults`](strategies::faults) and [`faults_for`](strategies::faults_for) draw an upstream
/// fault together with the requests it hits (a
/// [`ScopedFault`]: every request, the
/// first only, the n-th, one path, a seeded probability). Drawn together in one `proptest!`,
/// a failing (arguments, fault) pair shrinks on both: the arguments toward simple values, then
/// the fault toward the healthy upstream, 404, 429, 5xx, timeouts, connection and body faults
/// (in that order), then its scope toward every request, the first only, the n-th, a path, a
/// probability.
///
/// ```
/// use mcp_chaos::strategies;
/// use mcp_chaos_faults::{Requests, ScopedFault};
/// use proptest::prelude::*;
/// use proptest::test_runner::{Config, TestError, TestRunner};
///
/// let tool = mcp_chaos::Tool {
///     name: "forecast".into(),
///     input_schema: serde_json::json!({
///         "type": "object",
///         "properties": {"days": {"type": "integer", "minimum": 1, "maximum": 14}},
///         "required": ["days"]
///     }),
///     output_schema: None,
///     description: None,
/// };
/// // A stand-in for `check_tool` under the fault: the server mishandles a 5xx of its first
/// // request when asked for more than 3 days.
/// let mishandles = |args: &serde_json::Value, fault: &ScopedFault| {
///     args["days"].as_i64().unwrap_or(0) > 3
///         && fault.fault().http_status().is_some_and(|s| s >= 500)
///         && fault.scope().requests() == Requests::First
/// };
/// let mut runner = TestRunner::new(Config { failure_persistence: None, ..Config::default() });
/// let strategy = (strategies::arguments(&tool), strategies::faults().paths(["/stations"]));
/// let result = runner.run(&strategy, |(args, fault)| {
///     prop_assert!(!mishandles(&args, &fault), "{args} under {fault}");
///     Ok(())
/// });
/// let Err(TestError::Fail(_, (args, fault))) = result else { panic!("no failure found") };
/// assert_eq!(args, serde_json::json!({"days": 4}));
/// assert_eq!(fault.to_string(), "server-error-500 on the first request only");
/// ```
pub mod strategies {
    use proptest::strategy::BoxedStrategy;
    use serde_json::Value;

    pub use mcp_chaos_faults::ScopedFault;
    pub use mcp_chaos_faults::strategy::{FaultStrategy, faults, faults_for};

    use super::{GenError, GenOptions, Generator, Tool, Violation};

    /// Schema-valid arguments of `tool`, shrinking toward simple values. URL-typed values
    /// point at a closed loopback port.
    ///
    /// # Panics
    /// When no value can be generated for the tool's schema (an unsatisfiable schema, for
    /// example); [`try_arguments`] returns the error instead.
    pub fn arguments(tool: &Tool) -> BoxedStrategy<Value> {
        try_arguments(tool).unwrap_or_else(|e| {
            panic!("mcp-chaos cannot generate arguments for {}: {e}", tool.name)
        })
    }

    /// Arguments of `tool` that break exactly one constraint, with the [`Violation`].
    ///
    /// # Panics
    /// As [`arguments`]; [`try_invalid_arguments`] returns the error instead.
    pub fn invalid_arguments(tool: &Tool) -> BoxedStrategy<(Value, Violation)> {
        try_invalid_arguments(tool).unwrap_or_else(|e| {
            panic!(
                "mcp-chaos cannot generate invalid arguments for {}: {e}",
                tool.name
            )
        })
    }

    /// [`arguments`], or why they cannot be generated.
    ///
    /// # Errors
    /// The [`GenError`] of [`Generator::new`] or [`Generator::valid`] (an invalid,
    /// unsatisfiable or too complex schema, or no valid value found).
    pub fn try_arguments(tool: &Tool) -> Result<BoxedStrategy<Value>, GenError> {
        Generator::new(&tool.input_schema, &GenOptions::default())?.valid()
    }

    /// [`invalid_arguments`], or why they cannot be generated.
    ///
    /// # Errors
    /// The [`GenError`] of [`Generator::new`] or [`Generator::invalid`] (as for
    /// [`try_arguments`], or no constraint that can be broken).
    pub fn try_invalid_arguments(
        tool: &Tool,
    ) -> Result<BoxedStrategy<(Value, Violation)>, GenError> {
        Generator::new(&tool.input_schema, &GenOptions::default())?.invalid()
    }
}
