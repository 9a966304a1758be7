//! The library API for `cargo test`: start your server, list its tools, generate arguments
//! from each tool's `inputSchema` as proptest strategies, and check a call in one line.
//!
//! ```no_run
//! use mcp_chaos::{Harness, strategies};
//! use proptest::prelude::*;
//!
//! let server = Harness::stdio("target/debug/my-mcp-server").expect("the server starts");
//! let weather = server.tool("weather").expect("a weather tool").clone();
//! proptest!(|(args in strategies::arguments(&weather))| {
//!     let findings = server.check_tool(&weather, &args);
//!     prop_assert!(findings.is_empty(), "{findings:#?}");
//! });
//! ```
//!
//! [`Harness`] is synchronous (it runs its own Tokio runtime), so it works inside `proptest!`
//! blocks and plain `#[test]`s. Each check sends one `tools/call`, then a liveness probe, and
//! judges both with the same oracle the `mcp-chaos` command uses; a server that dies is started
//! again for the next check. `PROPTEST_CASES` sets the number of cases, as for any proptest.

use std::time::Duration;

use serde_json::Value;

use crate::finding::Finding;
use crate::generate::{GenError, GenOptions, Generator, Violation};
use crate::oracle::{self, Context, ToolTable};
use crate::protocol::ProtocolVersion;
use crate::run::{ServerSpec, generated::schema_for};
use crate::session::{ClientConfig, Probe, Session};
use crate::transport::{HttpConfig, StdioConfig};

/// A tool as the server lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct Tool {
    /// Its name.
    pub name: String,
    /// Its `inputSchema`, with the dialect made explicit for the negotiated version.
    pub input_schema: Value,
    /// Its `outputSchema`, if it declares one.
    pub output_schema: Option<Value>,
    /// Its description.
    pub description: Option<String>,
}

/// Why the harness could not start or talk to the server.
#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    /// The command line or URL is unusable, or the server could not be started.
    #[error(transparent)]
    Start(#[from] crate::transport::StartError),
    /// The server did not complete initialization.
    #[error(transparent)]
    Init(#[from] crate::session::InitError),
    /// The async runtime could not be created.
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
}

/// A running server under test (see the module docs). Dropping it stops the server and its
/// process tree. Its methods take `&self`, so that it can be used from proptest's closures.
#[derive(Debug)]
pub struct Harness {
    runtime: tokio::runtime::Runtime,
    session: std::sync::Mutex<Option<Session>>,
    spec: ServerSpec,
    version: ProtocolVersion,
    timeout: Duration,
    tools: Vec<Tool>,
    table: ToolTable,
}

type Connected = (Session, crate::session::Negotiated, Vec<Value>);

impl Harness {
    /// Starts a stdio server from a command line (split like a shell would) under protocol
    /// 2025-11-25 with a 10 s deadline per request.
    pub fn stdio(command_line: &str) -> Result<Harness, HarnessError> {
        let config = StdioConfig::from_command_line(command_line)?;
        Harness::start(
            ServerSpec::Stdio(config),
            ProtocolVersion::LATEST_WITH_INITIALIZE,
            Duration::from_secs(10),
        )
    }

    /// Connects to a Streamable HTTP server (loopback) under protocol 2025-11-25.
    pub fn http(url: &str) -> Result<Harness, HarnessError> {
        Harness::start(
            ServerSpec::Http(HttpConfig::new(url)),
            ProtocolVersion::LATEST_WITH_INITIALIZE,
            Duration::from_secs(10),
        )
    }

    /// Starts (or connects to) `spec`, negotiates `version` and lists the tools.
    pub fn start(
        spec: ServerSpec,
        version: ProtocolVersion,
        timeout: Duration,
    ) -> Result<Harness, HarnessError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(HarnessError::Runtime)?;
        let (session, negotiated, tools) = runtime.block_on(connect(&spec, version, timeout))?;
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

    /// Calls `tool` with schema-valid `arguments` and returns every finding (an empty vector
    /// means the server behaved). The server is restarted if the call killed it.
    pub fn check_tool(&self, tool: &Tool, arguments: &Value) -> Vec<Finding> {
        self.check(tool, arguments, None)
    }

    /// Calls `tool` with arguments that break exactly `violation` (as produced by
    /// [`strategies::invalid_arguments`]) and returns every
    /// finding.
    pub fn check_invalid(&self, tool: &Tool, case: &(Value, Violation)) -> Vec<Finding> {
        self.check(tool, &case.0, Some(case.1.clone()))
    }

    fn check(&self, tool: &Tool, arguments: &Value, violation: Option<Violation>) -> Vec<Finding> {
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
        let probe = Probe::Generated {
            tool: tool.name.clone(),
            arguments: arguments.clone(),
            violation,
            phase: "library",
        };
        let (exchange, ping, stderr) = self.runtime.block_on(async {
            let exchange = session.call_tool(probe, &tool.name, arguments).await;
            let ping = session.liveness().await;
            (exchange, ping, session.stderr_tail())
        });
        let ctx = Context {
            version: self.version,
            tools: &self.table,
            exact: &[],
        };
        let mut findings = oracle::judge(&ctx, &exchange);
        let liveness = oracle::liveness::check(&ctx, &exchange, &ping, &stderr);
        let died = !liveness.is_empty();
        findings.extend(liveness);
        if died {
            self.runtime.block_on(session.shutdown());
        } else {
            *slot = Some(session);
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
    let (_, negotiated) = session.initialize().await?;
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
    }
}

/// Proptest strategies for a tool's arguments and its upstream's faults.
///
/// [`arguments`](strategies::arguments) draws schema-valid arguments of a tool;
/// [`faults`](strategies::faults) and [`faults_for`](strategies::faults_for) draw an upstream
/// fault together with the requests it hits (a
/// [`ScopedFault`](mcp_chaos_faults::ScopedFault): every request, the
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
    pub fn try_arguments(tool: &Tool) -> Result<BoxedStrategy<Value>, GenError> {
        Generator::new(&tool.input_schema, &GenOptions::default())?.valid()
    }

    /// [`invalid_arguments`], or why they cannot be generated.
    pub fn try_invalid_arguments(
        tool: &Tool,
    ) -> Result<BoxedStrategy<(Value, Violation)>, GenError> {
        Generator::new(&tool.input_schema, &GenOptions::default())?.invalid()
    }
}
