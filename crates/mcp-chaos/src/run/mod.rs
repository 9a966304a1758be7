//! The campaign loop: start the server, initialize, list tools, run the protocol probes and the
//! tool calls, check liveness after every probe (restarting a server that died), and emit a
//! typed [`Event`] for everything that happens. Reporters consume the events; [`run`] returns
//! the final [`Report`] (a type of `mcp-chaos-model`, re-exported here).
//!
//! Where things are: what a run is given ([`RunConfig`], [`ServerSpec`]) in `config.rs`; what it
//! reports as it goes ([`Event`], [`RunError`]) in `events.rs`; the protocol probe catalog
//! ([`Step`], [`protocol_steps`]) in `probes.rs`; this file sequences the phases
//! (`Campaign::phases`), each phase a module of its own (`features`, `generated`, `wire_phase`,
//! `chaos`, `ladder`, `lifecycle`, `fault_props`, ...), with `scheduler` keeping tool calls in
//! flight and `shared` running them beside the other phases.

pub mod args;
mod budget;
mod chaos;
mod config;
pub mod driver;
mod events;
pub mod fault_props;
pub mod faults;
pub mod features;
pub mod generated;
mod ladder;
mod lifecycle;
pub mod live;
mod probes;
pub mod reach;
mod recover;
pub mod replay;
mod retire;
pub mod scheduler;
pub mod select;
mod shared;
pub mod wire_phase;

use std::time::Instant;

use serde_json::{Value, json};

pub use mcp_chaos_model::report::{
    Report, ServerReport, Summary, ToolGenerated, VersionSummary, report_json_schema,
};

use crate::finding::{Finding, Severity};
use crate::oracle::{self, Context, LeakKind, ToolTable};
use crate::protocol::ProtocolVersion;
use crate::session::{ClientConfig, Exchange, Expect, Negotiated, Probe, Session};
use crate::wire;

pub use config::{ProcessOptions, RunConfig, ServerSpec, VersionChoice, no_egress_env};
pub use events::{Event, RunError};
pub use probes::{
    BOGUS_VERSION, InvalidCallParams, InvalidRequest, Step, UNKNOWN_METHOD, UNKNOWN_TOOL, execute,
    protocol_steps,
};

/// The report of a run of `config` that tested nothing (yet): the server named, zero totals.
pub fn empty_report(config: &RunConfig) -> Report {
    let (command, url) = config.server.identity();
    Report::empty(config.seed, command, url, config.rerun.clone())
}

/// Runs a campaign against the server in `config`, reporting events to `on_event`. With
/// [`VersionChoice::All`], one campaign per version the server supports; the report then
/// holds every finding (each tagged with its version) and a summary per version.
///
/// Errors (exit code 2) only when the server cannot be started or initialized at the start;
/// a server that dies later is a finding, and is restarted up to `max_restarts` times.
pub async fn run(
    config: &RunConfig,
    on_event: &mut dyn FnMut(&Event<'_>),
) -> Result<Report, RunError> {
    if config.version != VersionChoice::All {
        return run_one(config, on_event, false)
            .await
            .map(|r| r.unwrap_or_else(|| empty_report(config)));
    }
    let mut merged: Option<Report> = None;
    let mut first_error = None;
    let started = Instant::now();
    for version in ProtocolVersion::ALL {
        let mut one = config.clone();
        one.version = VersionChoice::Exactly(version);
        one.budget = config.budget.map(|b| b.saturating_sub(started.elapsed()));
        match run_one(&one, on_event, true).await {
            Ok(Some(report)) => {
                merged = Some(match merged {
                    None => {
                        let mut r = report.clone();
                        r.versions = vec![VersionSummary::of(&report)];
                        r
                    }
                    Some(mut all) => {
                        all.absorb(report);
                        all
                    }
                });
            }
            Ok(None) => (on_event)(&Event::VersionSkipped { version }),
            // A server that has never started will not start for another version either: one
            // start timeout, not one per version.
            Err(e @ RunError::Start(_)) if merged.is_none() => return Err(e),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    match (merged, first_error) {
        (Some(report), _) => Ok(report),
        (None, Some(e)) => Err(e),
        (None, None) => Ok(empty_report(config)),
    }
}

/// One campaign. With `only_if_supported`, a server that negotiates another version than the
/// one asked for is not tested (`Ok(None)`).
async fn run_one(
    config: &RunConfig,
    on_event: &mut dyn FnMut(&Event<'_>),
    only_if_supported: bool,
) -> Result<Option<Report>, RunError> {
    let mut campaign = Campaign::new(config, on_event, only_if_supported).await?;
    let result = campaign.run().await;
    campaign.close().await;
    match result {
        Err(RunError::Unsupported) => Ok(None),
        Err(e) => Err(e),
        Ok(()) => Ok(Some(campaign.finish())),
    }
}

impl<'a> Campaign<'a> {
    /// A campaign on `config`'s server, with its fault injectors started (nothing else yet).
    async fn new(
        config: &'a RunConfig,
        on_event: &'a mut dyn FnMut(&Event<'_>),
        only_if_supported: bool,
    ) -> Result<Campaign<'a>, RunError> {
        let injectors = if config.faults.is_active() {
            Some(faults::Injectors::start(&config.faults, config.seed).await?)
        } else {
            None
        };
        let mut server = config.server.clone();
        if let Some(env) = server.env_mut() {
            if let Some(inj) = &injectors {
                env.extend(inj.env(&config.faults));
            }
            env.extend(config.secrets.iter().cloned());
        }
        let mut exact: Vec<(LeakKind, String)> = config
            .secrets
            .iter()
            .map(|(_, v)| (LeakKind::Secret, v.clone()))
            .collect();
        if let Some(inj) = &injectors {
            exact.extend(inj.canaries().into_iter().map(|c| (LeakKind::Canary, c)));
        }
        Ok(Campaign {
            config,
            server,
            shared: std::rc::Rc::new(shared::Shared::new(
                on_event,
                config
                    .secrets
                    .iter()
                    .map(|(_, v)| v.clone())
                    .chain(config.server.redactions())
                    .collect(),
            )),
            session: None,
            version: match config.version {
                VersionChoice::Exactly(v) => Some(v),
                _ => None,
            },
            only_if_supported,
            server_stream: false,
            negotiated: None,
            tools: std::rc::Rc::default(),
            plan: std::rc::Rc::default(),
            exact,
            injectors,
            summary: Summary::default(),
            started: Instant::now(),
            gave_up: false,
            called: std::collections::HashSet::new(),
            tool_deadline: None,
            wedge: recover::WedgeState::default(),
            reach: reach::ReachTable::default(),
            sent_seq: 0,
            failed_methods: std::collections::HashSet::new(),
        })
    }

    /// Shuts the server and the fault injectors down.
    async fn close(&mut self) {
        if let Some(session) = self.session.take() {
            self.retire(session).await;
        }
        if let Some(inj) = self.injectors.take() {
            inj.shutdown().await;
        }
    }
}

/// A started session: the session, what it negotiated, the handshake's exchanges.
type Started = (Session, Negotiated, Vec<Exchange>);

/// Which phases of a campaign run (each on in [`RunConfig::new`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Phases {
    /// The protocol probes, the lifecycle-order cases, and the HTTP session's DELETE at the end.
    pub probes: bool,
    /// Tool calls: the baseline calls, and the generated and fault phases.
    pub tool_calls: bool,
    /// The generated phase (with `tool_calls`).
    pub generated: bool,
    /// Transport chaos: concurrency, cancellation, disconnects and large frames.
    pub chaos: bool,
    /// The version-negotiation probe: a bogus version, on one extra server start.
    pub version_probe: bool,
    /// Over an HTTP session, end it with DELETE and check that its id is then refused (404).
    pub end_session: bool,
    /// The wire phase (`RunConfig::wire_cases` frames).
    pub wire: bool,
    /// The features phase (resources, prompts, completion, logging, capability gating), for
    /// the features [`RunConfig::features`] selects.
    pub features: bool,
}

impl Phases {
    /// The phases `config` enables.
    pub fn of(config: &RunConfig) -> Phases {
        Phases {
            probes: config.protocol_probes,
            tool_calls: config.tool_calls,
            generated: config.generated,
            chaos: config.transport_chaos,
            version_probe: config.version_probe,
            end_session: config.protocol_probes,
            wire: config.wire_cases > 0,
            features: config.features.any(),
        }
    }
}

/// What a campaign will do, decided once the tools are listed.
#[derive(Debug, Clone, Default)]
struct Plan {
    /// The tools as listed.
    tools: Vec<Value>,
    /// The protocol probes for the negotiated version and transport.
    probes: Vec<Step>,
    /// One call per listed tool: its name and a small valid argument value.
    calls: Vec<(String, Value)>,
    /// Per tool: name, `inputSchema`, and the URL base for URL-typed arguments.
    generated_tools: Vec<(String, Value, String)>,
    /// Whether the server keeps an HTTP session (`Mcp-Session-Id`).
    http_session: bool,
}

impl Plan {
    fn first_tool(&self) -> Option<String> {
        self.calls.first().map(|(name, _)| name.clone())
    }

    fn first_call(&self) -> Option<(String, Value)> {
        self.calls.first().cloned()
    }

    fn arguments(&self, tool: &str) -> Option<&Value> {
        self.calls
            .iter()
            .find(|(name, _)| name == tool)
            .map(|(_, args)| args)
    }
}

struct Campaign<'a> {
    config: &'a RunConfig,
    server: ServerSpec,
    /// The listener and the findings, shared with a side campaign (see [`shared`]).
    shared: std::rc::Rc<shared::Shared<'a>>,
    session: Option<Session>,
    /// The version asked for in every (re)start, once decided.
    version: Option<ProtocolVersion>,
    only_if_supported: bool,
    /// Whether new sessions open the HTTP standalone stream (after the GET probe).
    server_stream: bool,
    negotiated: Option<Negotiated>,
    /// The tools' output schemas, compiled; shared with a side campaign.
    tools: std::rc::Rc<ToolTable>,
    /// The probes and calls planned; shared with a side campaign (large for thousands of
    /// tools).
    plan: std::rc::Rc<Plan>,
    exact: Vec<(LeakKind, String)>,
    injectors: Option<faults::Injectors>,
    summary: Summary,
    started: Instant,
    gave_up: bool,
    /// Every tool call made so far, as [`call_key`]s: the generated phase skips a case whose
    /// arguments were already sent to the same tool (as Hypothesis skips duplicate examples).
    called: std::collections::HashSet<u64>,
    /// When the current tool's generated phase runs out of time (`--tool-budget-ms` after it
    /// started): progress extends a generated call's deadline no further than this.
    tool_deadline: Option<Instant>,
    /// Whether the server wedged, and the counts its finding reports.
    wedge: recover::WedgeState,
    /// Which tools reached the fake upstream, learned from every call (see [`reach`]).
    reach: reach::ReachTable,
    /// How many generated cases the scheduler has sent (their order, see [`scheduler`]).
    sent_seq: u64,
    /// The requests whose well-formed form the server already failed on (died or stopped
    /// answering after it), as [`method_key`]s: the wire phase skips frames calling them,
    /// whose failure would be the method's, not the frame's (each would cost a restart and a
    /// shrink that only rediscovers it).
    failed_methods: std::collections::HashSet<String>,
}

/// The key of a request in [`Campaign::failed_methods`]: its method, and for `tools/call` the
/// tool's name too (`"tools/call echo"`); `None` for a frame that is not one JSON-RPC request
/// or notification with a string method.
fn method_key(frame: &[u8]) -> Option<String> {
    let value: Value = serde_json::from_slice(frame).ok()?;
    method_key_of(value.get("method")?.as_str()?, value.get("params"))
}

/// [`method_key`] of a request with `method` and `params`: `None` for a `tools/call` without
/// a string `params.name`.
fn method_key_of(method: &str, params: Option<&Value>) -> Option<String> {
    if method == "tools/call" {
        let name = params?.get("name")?.as_str()?;
        Some(format!("tools/call {name}"))
    } else {
        Some(method.to_owned())
    }
}

/// A key for a `tools/call` of `tool` with `arguments` (a hash of both; the arguments as
/// serialised, so `{"a":1,"b":2}` and `{"b":2,"a":1}` are different calls).
fn call_key(tool: &str, arguments: &Value) -> u64 {
    use std::hash::{Hash, Hasher};
    /// Feeds the serialised arguments to the hasher as they are written (no string built).
    struct Feed<'a>(&'a mut std::hash::DefaultHasher);
    impl std::io::Write for Feed<'_> {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.write(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut h = std::hash::DefaultHasher::new();
    tool.hash(&mut h);
    // Serialising a `Value` cannot fail, and neither can this writer.
    let _ = serde_json::to_writer(Feed(&mut h), arguments);
    h.finish()
}

impl<'a> Campaign<'a> {
    /// The first planned tool that reached the fake upstream, with the smallest arguments that
    /// did (the slow-upstream transport-chaos probes use it).
    fn first_upstream_call(&self) -> Option<(String, Value)> {
        self.plan.calls.iter().find_map(|(name, _)| {
            self.reach
                .arguments(name)
                .map(|args| (name.clone(), args.clone()))
        })
    }

    /// Notes, for the reach table, a call of `tool` with `arguments` that caused `entries`.
    fn note_reach(
        &mut self,
        tool: &str,
        arguments: &Value,
        entries: &[mcp_chaos_faults::JournalEntry],
    ) {
        let paths: Vec<&str> = entries
            .iter()
            .map(mcp_chaos_faults::JournalEntry::path)
            .collect();
        self.reach.note(tool, arguments, &paths);
    }

    /// Whether `tool` was already called with exactly these `arguments` in this campaign.
    fn already_called(&self, tool: &str, arguments: &Value) -> bool {
        self.called.contains(&call_key(tool, arguments))
    }

    fn context(&self) -> Context<'_> {
        Context {
            version: self.session.as_ref().map_or(
                self.version
                    .unwrap_or(ProtocolVersion::LATEST_WITH_INITIALIZE),
                Session::version,
            ),
            tools: &self.tools,
            exact: &self.exact,
            capabilities: self.negotiated.as_ref().map(|n| &n.capabilities),
        }
    }

    async fn run(&mut self) -> Result<(), RunError> {
        self.prepare().await?;
        self.phases(Phases::of(self.config)).await;
        Ok(())
    }

    /// The phases `phases` enables, in order, after [`Campaign::prepare`]: the protocol probes
    /// and the wire phase, the tool calls (baseline, generated, under faults), the features,
    /// transport chaos, the end of the HTTP session, the lifecycle cases and the version probe.
    /// The tool calls run on a second server beside the others where that changes no finding
    /// (see [`Campaign::side_for_tool_calls`]), so that a slow tool holds no other phase up.
    async fn phases(&mut self, phases: Phases) {
        let config = self.config;
        let config = RunConfig {
            protocol_probes: phases.probes,
            tool_calls: phases.tool_calls,
            generated: phases.generated,
            transport_chaos: phases.chaos,
            version_probe: phases.version_probe,
            ..config.clone()
        };
        let calls = usize::from(config.tool_calls) * self.plan.calls.len();
        let steps = usize::from(config.protocol_probes) * self.plan.probes.len()
            + calls
            + usize::from(config.version_probe);
        self.wedge.planned = steps;
        self.shared.emit(&Event::Planned {
            tools: self.plan.tools.len(),
            steps,
        });
        let side = if config.tool_calls && config.generated && !self.gave_up {
            self.side_for_tool_calls()
        } else {
            None
        };
        match side {
            Some(mut side) => {
                self.wedge.planned -= calls;
                side.wedge.planned = calls;
                // The second server starts while the first runs the protocol probes.
                let (started, ()) = futures::join!(
                    async {
                        let started = side.start_session().await.is_ok();
                        if started {
                            side.tool_call_phases(&config).await;
                        }
                        // Its server ends beside the other phases too (a server that ignores
                        // its stdin closing costs the grace there, not after them).
                        side.report_wedge();
                        side.close().await;
                        started
                    },
                    async {
                        self.protocol_phases(&config, phases).await;
                        self.later_phases(&config, phases).await;
                    }
                );
                self.absorb(side);
                if !started {
                    self.shared.emit(&Event::SecondServer {
                        message: "the second server did not start; the tool calls run last, on this one",
                    });
                    self.wedge.planned += calls;
                    self.tool_call_phases(&config).await;
                }
            }
            None => {
                self.protocol_phases(&config, phases).await;
                self.tool_call_phases(&config).await;
                self.later_phases(&config, phases).await;
            }
        }
        self.report_wedge();
    }

    /// The protocol probes and the wire phase; then the HTTP server stream is listened to.
    async fn protocol_phases(&mut self, config: &RunConfig, phases: Phases) {
        if config.protocol_probes {
            self.probe_phase().await;
        }
        if phases.wire && !self.gave_up {
            self.wire_phase(config.wire_cases).await;
        }
        self.listen_to_server_stream();
    }

    /// The tool calls: the baseline call of every tool, the generated cases (the baseline
    /// calls among them when the scheduler runs), and under a fake upstream the fault phases.
    async fn tool_call_phases(&mut self, config: &RunConfig) {
        if !config.tool_calls {
            return;
        }
        if config.generated && !self.gave_up {
            let plan = std::rc::Rc::clone(&self.plan);
            self.generated_phase(
                &plan.generated_tools,
                config.cases,
                config.cases.div_ceil(2),
                true,
            )
            .await;
        } else {
            self.baseline_phase().await;
        }
        if self.injectors.is_some() {
            let tools: Vec<String> = self.reach.reached_tools();
            let faults: Vec<_> = config
                .faults
                .faults
                .iter()
                .cloned()
                .map(mcp_chaos_faults::ScopedFault::every)
                .collect();
            self.fault_phase(&tools, &faults).await;
            let profiles = config.faults.faults.clone();
            self.fault_property_phase(&tools, &profiles, config.fault_cases)
                .await;
        }
    }

    /// The features phase, transport chaos, the end of the HTTP session, the lifecycle cases
    /// and the version probe.
    async fn later_phases(&mut self, config: &RunConfig, phases: Phases) {
        if phases.features && !self.gave_up {
            self.features_phase(config.features).await;
        }
        if config.transport_chaos && !self.gave_up {
            let (call, slow) = if config.tool_calls {
                (self.plan.first_call(), self.first_upstream_call())
            } else {
                (None, None)
            };
            self.transport_chaos(call, slow).await;
        }
        if phases.end_session {
            self.end_http_session().await;
        }
        if config.protocol_probes && !self.cut_by_budget("lifecycle cases", 0, 1) {
            self.lifecycle_phase().await;
        }
        if config.version_probe && !self.gave_up && !self.cut_by_budget("version probe", 0, 1) {
            self.version_probe().await;
        }
    }

    /// A campaign for the tool calls on a second server process of the same command (not yet
    /// started), run beside the other phases; `None` (they then run in turn, on this
    /// campaign's server) unless that changes no finding: a stdio server (a session is its own
    /// process: the other phases' restarts and hostile frames never reach it), the case
    /// scheduler on (`--in-flight` over 1), and no fake upstream (its journal is read per call,
    /// and would mix both servers' requests). Should the second process not start, the tool
    /// calls run last, on this campaign's server.
    fn side_for_tool_calls(&mut self) -> Option<Campaign<'a>> {
        if !self.schedules_cases() || !matches!(self.server, ServerSpec::Stdio(_)) {
            return None;
        }
        self.shared.emit(&Event::SecondServer {
            message: "the tool calls run on a second server process, beside the other phases",
        });
        Some(self.fork())
    }

    /// A campaign on the same server command, version, tools and plan, recording into the same
    /// findings, with no server running yet and counts of its own (see [`Campaign::absorb`]).
    fn fork(&self) -> Campaign<'a> {
        Campaign {
            config: self.config,
            server: self.server.clone(),
            shared: std::rc::Rc::clone(&self.shared),
            session: None,
            version: self.version,
            only_if_supported: false,
            server_stream: self.server_stream,
            negotiated: self.negotiated.clone(),
            tools: std::rc::Rc::clone(&self.tools),
            plan: std::rc::Rc::clone(&self.plan),
            exact: self.exact.clone(),
            injectors: None,
            summary: Summary::default(),
            started: self.started,
            gave_up: false,
            called: std::collections::HashSet::new(),
            tool_deadline: None,
            wedge: recover::WedgeState::default(),
            reach: reach::ReachTable::default(),
            sent_seq: 0,
            failed_methods: std::collections::HashSet::new(),
        }
    }

    /// Adds a forked campaign's counts to this one's (its findings are already recorded).
    fn absorb(&mut self, side: Campaign<'a>) {
        let (a, b) = (&mut self.summary, side.summary);
        a.exchanges += b.exchanges;
        a.tool_calls += b.tool_calls;
        a.restarts += b.restarts;
        a.fresh_restarts += b.fresh_restarts;
        a.generated.extend(b.generated);
        a.dropped.add(&b.dropped);
        for line in b.budget_cut {
            if !a.budget_cut.contains(&line) {
                a.budget_cut.push(line);
            }
        }
        self.called.extend(side.called);
        self.failed_methods.extend(side.failed_methods);
    }

    /// Starts the server, performs the handshake, lists the tools and plans the probes and
    /// the calls (one small valid argument value per tool).
    async fn prepare(&mut self) -> Result<(), RunError> {
        let config = self.config;
        self.start_session().await?;
        let tools = self.list_tools_checked().await;
        self.tools = std::rc::Rc::new(ToolTable::new(&tools, self.context().version));
        let listed = tools.len();
        let unmatched = config.selection.unmatched(&tools);
        let (tools, skipped) = config.selection.split(tools);
        self.shared.emit(&Event::Tools {
            skipped: &skipped,
            unmatched: &unmatched,
            destructive: &select::destructive(&tools),
        });
        self.summary.skipped_tools = skipped;
        let version = self.context().version;
        let (http, http_session) = match self.session.as_mut() {
            Some(session) => {
                let http = session.transport_mut().http();
                let has_session = http.as_ref().is_some_and(|h| h.session_id().is_some());
                (http.is_some(), has_session)
            }
            None => (false, false),
        };
        let mut plan = Plan {
            probes: protocol_steps(version, http, http_session),
            http_session: http && http_session,
            ..Plan::default()
        };
        for tool in &tools {
            let Some(name) = tool.get("name").and_then(Value::as_str) else {
                continue;
            };
            let schema = tool.get("inputSchema").cloned().unwrap_or(json!({}));
            let url = match &self.injectors {
                Some(inj) if config.faults.url_args => inj.url_for(name),
                _ => config.url.clone(),
            };
            // One small valid value from the generator; the simple builder when the
            // generator cannot serve this schema (it is then reported in the generated phase).
            let arguments = crate::generate::Generator::new(
                &generated::schema_for(&schema, version),
                &crate::generate::GenOptions::with_url_base(url.clone()),
            )
            .and_then(|g| g.example())
            .unwrap_or_else(|_| args::simple_arguments(&schema, &url));
            plan.calls.push((name.to_owned(), arguments));
            plan.generated_tools.push((name.to_owned(), schema, url));
        }
        plan.tools = tools;
        self.summary.tools = listed as u64;
        self.plan = std::rc::Rc::new(plan);
        Ok(())
    }

    /// The protocol probes (malformed frames, unknown method and tool, notifications, batch,
    /// HTTP-level probes), each followed by a liveness check.
    async fn probe_phase(&mut self) {
        let mut steps = self.plan.probes.clone();
        if self.server_stream {
            // The GET probe needs a server without a standalone stream open (a second one may
            // rightly be refused with 409); a scenario that opened one skips it.
            steps.retain(|s| !matches!(s, Step::Http(crate::session::HttpProbe::Get)));
        }
        let first_tool = self.plan.first_tool();
        for (i, step) in steps.iter().enumerate() {
            if self.gave_up || self.cut_by_budget("protocol probes", i, steps.len()) {
                break;
            }
            self.step(step, first_tool.as_deref(), None).await;
        }
    }

    /// From here on, listen on the server's standalone stream too (after the GET probe,
    /// which must meet the server without a stream already open).
    /// Idempotent.
    fn listen_to_server_stream(&mut self) {
        if self.server_stream {
            return;
        }
        self.server_stream = true;
        if let Some(session) = self.session.as_mut() {
            session.open_server_stream();
        }
    }

    /// Calls every listed tool once with its planned arguments (under a fake upstream, each
    /// call's upstream requests go into the reach table, as every call's do).
    async fn baseline_phase(&mut self) {
        let plan = std::rc::Rc::clone(&self.plan);
        let total = plan.calls.len();
        for (i, (tool, arguments)) in plan.calls.iter().enumerate() {
            if self.gave_up || self.cut_by_budget("baseline calls", i, total) {
                break;
            }
            self.call(tool, arguments.clone(), None).await;
        }
    }

    /// Calls `tool` with `arguments` (under `fault` when given, else a healthy upstream) and
    /// checks liveness after it.
    async fn call(
        &mut self,
        tool: &str,
        arguments: Value,
        fault: Option<&mcp_chaos_faults::ScopedFault>,
    ) -> Option<Exchange> {
        let step = Step::CallTool {
            tool: tool.to_owned(),
            arguments,
        };
        let first_tool = self.plan.first_tool();
        let healthy = mcp_chaos_faults::ScopedFault::healthy();
        if let (Some(inj), Some(fault)) = (&self.injectors, fault) {
            inj.install(fault);
        }
        let ex = self
            .step(
                &step,
                first_tool.as_deref(),
                Some(fault.unwrap_or(&healthy)),
            )
            .await;
        if let (Some(inj), Some(_)) = (&self.injectors, fault) {
            inj.heal();
        }
        ex
    }

    /// Calls each of `tools` once under each of `faults`, with the smallest arguments that
    /// reached the upstream (the planned ones for a tool that never did).
    async fn fault_phase(&mut self, tools: &[String], faults: &[mcp_chaos_faults::ScopedFault]) {
        let plan = std::rc::Rc::clone(&self.plan);
        for (tool, planned) in &plan.calls {
            let uses = tools.contains(tool);
            let n = if uses { faults.len() } else { 0 };
            let tried = self.reach.tried(tool);
            self.shared.emit(&Event::FaultPhase {
                tool,
                faults: n,
                tried,
            });
            if !uses {
                continue;
            }
            let arguments = self.reach.arguments(tool).unwrap_or(planned).clone();
            for fault in faults {
                if self.gave_up || self.cut_by_budget("fault phase", 0, 0) {
                    break;
                }
                self.call(tool, arguments.clone(), Some(fault)).await;
            }
        }
    }

    /// Over a Streamable HTTP session: DELETE the session, then use its id again (which must
    /// get 404). Last, because it ends the session (so no liveness ping follows them).
    async fn end_http_session(&mut self) {
        if !self.plan.http_session || self.gave_up {
            return;
        }
        for what in [
            crate::session::HttpProbe::Delete,
            crate::session::HttpProbe::DeletedSession,
        ] {
            self.shared.emit(&Event::Step {
                label: &format!("HTTP {}", what.label()),
            });
            let ex = match self.session.as_mut() {
                Some(session) => session.http_probe(what).await,
                None => None,
            };
            let Some(ex) = ex else { break };
            self.record(&ex);
            // Only a session that really ended can be checked for 404.
            let ended = ex
                .http()
                .and_then(|h| h.status)
                .is_some_and(|s| (200..300).contains(&s));
            if !ended {
                break;
            }
        }
        if let Some(old) = self.session.take() {
            self.retire(old).await;
        }
    }

    /// Starts a server process (or connection) and performs the handshake; records its
    /// exchanges. Under [`VersionChoice::Auto`] the first start decides the version:
    /// `server/discover` for 2026-07-28, and if the server does not speak it, a fresh start
    /// with `initialize` for 2025-11-25 (the server answers with the version it speaks). A
    /// server that cannot be started at all (it does not spawn, exits or never opens its port)
    /// is not started a second time: the error comes after one start timeout.
    async fn start_session(&mut self) -> Result<(), RunError> {
        if self.version.is_none() {
            let stateless = ProtocolVersion::V2026_07_28;
            match self.try_start(stateless).await {
                Ok(session) => {
                    self.version = Some(stateless);
                    return self.adopt(session);
                }
                Err(e @ RunError::Start(_)) => return Err(e),
                Err(_) => {}
            }
            self.version = Some(ProtocolVersion::LATEST_WITH_INITIALIZE);
        }
        let version = self
            .version
            .unwrap_or(ProtocolVersion::LATEST_WITH_INITIALIZE);
        let session = self.try_start(version).await?;
        if self.only_if_supported && session.1.version != version {
            session.0.kill().await;
            return Err(RunError::Unsupported);
        }
        self.adopt(session)
    }

    async fn try_start(&mut self, version: ProtocolVersion) -> Result<Started, RunError> {
        let describe = self.server.describe();
        self.shared.emit(&Event::Starting { server: &describe });
        let transport = self.server.start().await?;
        let mut session = Session::new(transport, ClientConfig::new(version, self.config.timeout));
        match session.initialize().await {
            Ok((exchanges, negotiated)) => Ok((session, negotiated, exchanges)),
            Err(e) => {
                // Counted and reported: the report of a run that cannot start quotes them,
                // with the server's output. Only the HTTP-level invariants judge them (a
                // redirect, a wrong status or content type is what it is whether or not the
                // handshake completed); what a server owes after initialize is not judged.
                for ex in session.take_failed_handshake() {
                    let findings = oracle::http::check(&self.context(), &ex);
                    self.add(findings);
                    self.count(&ex);
                }
                let stderr_tail = session.stderr_tail();
                self.shared.emit(&Event::StartFailed {
                    stderr_tail: &stderr_tail,
                });
                session.kill().await;
                Err(e.into())
            }
        }
    }

    fn adopt(&mut self, started: Started) -> Result<(), RunError> {
        let (mut session, negotiated, exchanges) = started;
        if self.server_stream {
            session.open_server_stream();
        }
        self.session = Some(session);
        for ex in &exchanges {
            self.record(ex);
        }
        self.wedge.note_handshake(&exchanges);
        self.shared.emit(&Event::Initialized {
            negotiated: &negotiated,
        });
        self.negotiated = Some(negotiated);
        Ok(())
    }

    /// Judges an exchange and records its findings.
    fn record(&mut self, ex: &Exchange) {
        self.count(ex);
        let findings = oracle::judge(&self.context(), ex);
        self.add(findings);
    }

    /// Counts an exchange in the summary and reports it, without judging it.
    fn count(&mut self, ex: &Exchange) {
        self.summary.exchanges += 1;
        for r in &ex.received {
            if let crate::session::ReceivedItem::Dropped(d) = &r.item {
                self.summary.dropped.add(d);
            }
        }
        if let Probe::ToolCall { tool, arguments }
        | Probe::Generated {
            tool, arguments, ..
        } = &ex.probe
        {
            self.called.insert(call_key(tool, arguments));
        }
        if matches!(
            ex.probe,
            Probe::ToolCall { .. } | Probe::Generated { .. } | Probe::UnknownTool { .. }
        ) {
            self.summary.tool_calls += 1;
        }
        self.shared.emit(&Event::Exchange { exchange: ex });
    }

    /// Records `findings` (see [`shared::Shared::add`]).
    fn add(&self, findings: Vec<Finding>) {
        self.shared.add(findings);
    }

    /// Runs one step (under `fault`, when a fake upstream is serving one), judges it, checks
    /// liveness after it, and returns its exchange.
    async fn step(
        &mut self,
        step: &Step,
        first_tool: Option<&str>,
        fault: Option<&mcp_chaos_faults::ScopedFault>,
    ) -> Option<Exchange> {
        let label = match fault {
            Some(f) if !f.scope().is_every_request() => {
                format!(
                    "{} under {} on {}",
                    step.label(),
                    f.fault().name(),
                    f.scope()
                )
            }
            Some(f)
                if f.fault().is_failure()
                    || f.fault().kind() != mcp_chaos_faults::FaultKind::Ok =>
            {
                format!("{} under {}", step.label(), f.fault().name())
            }
            _ => step.label(),
        };
        self.shared.emit(&Event::Step { label: &label });
        self.wedge.started += 1;
        if self.session.is_none() && !self.restart("no server running").await {
            return None;
        }
        let marks = self.injectors.as_ref().map(faults::Injectors::mark);
        let session = self.session.as_mut()?;
        let mut ex = execute(session, step, first_tool).await;
        if let (Some(inj), Some(marks)) = (&self.injectors, &marks) {
            let entries = inj.since(marks);
            if let Some(fault) = fault {
                ex.fault = Some(faults::context(fault, &entries));
            }
            if let Step::CallTool { tool, arguments } = step {
                self.note_reach(tool, arguments, &entries);
            }
        }
        self.record(&ex);
        self.check_liveness(&ex).await;
        Some(ex)
    }

    /// Pings after `previous`; on failure, records the finding and restarts the server.
    async fn check_liveness(&mut self, previous: &Exchange) {
        let Some(session) = self.session.as_mut() else {
            return;
        };
        let ping = session.liveness().await;
        let stderr = session.stderr_tail();
        self.record(&ping);
        let findings = oracle::liveness::check(&self.context(), previous, &ping, &stderr);
        if findings.is_empty() {
            return;
        }
        self.add(findings);
        let reason = format!("server failed after {}", previous.probe.label());
        self.restart_after_failure(&reason, previous, &ping).await;
    }

    /// Restarts a live server whose call missed its deadline: it may still be running that
    /// call (a loop, a progress stream), which would slow or muddle every later case (and
    /// starts the fresh server of [`Campaign::renew`]). Not counted against `max_restarts`
    /// (the server did not fail).
    async fn fresh_restart(&mut self, reason: &str) -> bool {
        self.restart_counted(reason, false).await
    }

    async fn restart(&mut self, reason: &str) -> bool {
        self.restart_counted(reason, true).await
    }

    async fn restart_counted(&mut self, reason: &str, counted: bool) -> bool {
        // A restart follows a failure, a call given up on or a probe that ended the session:
        // nothing is gained by waiting for the old server to exit on its own.
        if let Some(old) = self.session.take() {
            old.kill().await;
        }
        // A campaign that gave up (too many restarts, a wedged server) starts nothing more.
        if self.gave_up {
            return false;
        }
        if counted
            && self.summary.restarts - self.summary.fresh_restarts >= self.config.max_restarts
        {
            self.gave_up = true;
            return false;
        }
        self.summary.restarts += 1;
        if !counted {
            self.summary.fresh_restarts += 1;
        }
        self.shared.emit(&Event::Restarted {
            reason,
            fresh: !counted,
        });
        match self.start_session().await {
            Ok(()) => true,
            Err(_) => {
                self.gave_up = true;
                false
            }
        }
    }

    /// Probes version negotiation with a version no release has: under a handshake version,
    /// `initialize` on a fresh process; under 2026-07-28, a `server/discover` whose `_meta`
    /// carries it (which MUST get -32022).
    async fn version_probe(&mut self) {
        self.shared.emit(&Event::Step {
            label: "version negotiation",
        });
        let version = self.context().version;
        if !version.rules().handshake {
            let Some(session) = self.session.as_mut() else {
                return;
            };
            let id = session.next_id();
            let params = json!({"_meta": {
                crate::session::META_PROTOCOL_VERSION: BOGUS_VERSION,
                crate::session::META_CLIENT_CAPABILITIES: Session::client_capabilities(version),
            }});
            let frame = wire::to_line(&wire::request(&id, "server/discover", Some(params)));
            let probe = Probe::VersionNegotiation {
                requested: BOGUS_VERSION.into(),
            };
            let expect = Expect::Response {
                id,
                or_null: false,
                fence: false,
            };
            // Over HTTP the header must name the same version as `_meta`, or the answer is a
            // header mismatch (-32020) instead of an unsupported version (-32022).
            let header = vec![(
                "mcp-protocol-version".to_owned(),
                Some(BOGUS_VERSION.to_owned()),
            )];
            let ex = session
                .send_with_headers(probe, frame, expect, header)
                .await;
            self.record(&ex);
            self.check_liveness(&ex).await;
            return;
        }
        if let Some(old) = self.session.take() {
            self.retire(old).await;
        }
        let Ok(transport) = self.server.start().await else {
            return;
        };
        let mut session = Session::new(transport, ClientConfig::new(version, self.config.timeout));
        let ex = session.initialize_with(BOGUS_VERSION).await;
        self.session = Some(session);
        self.record(&ex);
        if let Some(session) = self.session.take() {
            self.retire(session).await;
        }
    }

    fn finish(mut self) -> Report {
        self.report_wedge();
        let findings = self.shared.take_redacted();
        self.summary.duration_ms = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(0);
        self.summary.violations = findings
            .iter()
            .filter(|f| f.severity == Severity::Violation)
            .count() as u64;
        self.summary.warnings = findings.len() as u64 - self.summary.violations;
        if self.config.faults.is_active() {
            self.summary.upstream = self.reach.tools().to_vec();
        }
        let (command, url) = self.config.server.identity();
        Report {
            mcp_chaos_version: env!("CARGO_PKG_VERSION").to_owned(),
            seed: self.config.seed,
            server: ServerReport {
                command,
                url,
                server_info: self
                    .negotiated
                    .as_ref()
                    .map_or(Value::Null, |n| n.server_info.clone()),
                protocol_version: self
                    .negotiated
                    .as_ref()
                    .map_or_else(String::new, |n| n.answered.clone()),
            },
            summary: self.summary,
            findings,
            versions: Vec::new(),
            outcome: live::RunOutcome::Completed,
            interrupted: false,
            error: None,
            exchanges: Vec::new(),
            rerun: self.config.rerun.clone(),
        }
    }
}

/// `f` with `secrets` redacted from its message, request and response.
fn redacted(f: &Finding, secrets: &[String]) -> Finding {
    let mut f = f.clone();
    f.message = oracle::leaks::redact(&f.message, secrets);
    for field in [&mut f.request, &mut f.response] {
        if let Some(text) = field.as_mut() {
            *text = oracle::leaks::redact(text, secrets);
        }
    }
    f
}
