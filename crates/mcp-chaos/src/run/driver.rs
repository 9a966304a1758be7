//! Step-by-step control of a campaign: what scenario files (`mcp-chaos scenario`) are built on.
//!
//! [`run`](super::run) plays every phase in a fixed order; a [`Driver`] starts the server
//! the same way (fault injectors, secrets, handshake, `tools/list`) and then plays the phases
//! it is asked for, in the order asked: explicit tool calls (optionally under one upstream
//! fault), the protocol probes, the generated phase for one tool or all, the fault phase,
//! transport chaos, the version probe, or the whole remaining campaign. Every exchange is
//! judged by the same oracle, liveness is checked after every probe, and a server that dies is
//! restarted, exactly as in a `run`.
//!
//! Over Streamable HTTP the standalone server-to-client stream (GET) is opened before the
//! first step that is not `probes` (the GET probe must meet the server without one), as a
//! client would, so that server requests sent there (`roots/list`) are answered.
//!
//! Findings are deduplicated over the whole driver (as in a run's report); [`Driver::mark`]
//! and [`Driver::findings_since`] tell which findings a step produced, repeats included.

use serde_json::Value;

use super::{Campaign, Event, Report, RunConfig, RunError};
use crate::finding::Finding;
use crate::protocol::ProtocolVersion;
use crate::session::Exchange;

/// A started campaign, driven one phase at a time. Drop it only after [`Driver::finish`]:
/// that is what stops the server and the fault injectors.
pub struct Driver<'a> {
    campaign: Campaign<'a>,
    baseline_done: bool,
}

/// A position in the driver's record of findings (see [`Driver::findings_since`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mark {
    hits: usize,
    exchanges: u64,
}

impl<'a> Driver<'a> {
    /// Starts the fault injectors `config` asks for, the server, and the handshake (under
    /// `config.version`; [`VersionChoice::All`](super::VersionChoice::All) is treated as
    /// `Auto`), and lists the tools. Errors as [`run`](super::run) does (exit code 2): the
    /// server could not be started or did not complete the handshake, or the injectors could
    /// not bind.
    pub async fn start(
        config: &'a RunConfig,
        on_event: &'a mut dyn FnMut(&Event<'_>),
    ) -> Result<Driver<'a>, RunError> {
        let mut campaign = Campaign::new(config, on_event, false).await?;
        if let Err(e) = campaign.prepare().await {
            campaign.close().await;
            return Err(e);
        }
        campaign.shared.emit(&Event::Planned {
            tools: campaign.plan.tools.len(),
            steps: 0,
        });
        // A server that wedged while its tools were listed is reported now, so that the
        // scenario's expectations see the finding.
        campaign.report_wedge();
        Ok(Driver {
            campaign,
            baseline_done: false,
        })
    }

    /// The tools the server listed that the selection keeps (`RunConfig::selection`), as
    /// listed.
    pub fn tools(&self) -> &[Value] {
        &self.campaign.plan.tools
    }

    /// The protocol version the session runs under.
    pub fn version(&self) -> ProtocolVersion {
        self.campaign.context().version
    }

    /// Whether the driver gave up on the server (it died more than `max_restarts` times, or
    /// could not be restarted). Later phases then do nothing.
    pub fn gave_up(&self) -> bool {
        self.campaign.gave_up
    }

    /// The current position, to pass to [`Driver::findings_since`] after a step.
    pub fn mark(&self) -> Mark {
        Mark {
            hits: self.campaign.shared.hits_len(),
            exchanges: self.campaign.summary.exchanges,
        }
    }

    /// The distinct findings recorded since `mark`, as indices into [`Driver::findings`], in
    /// the order first recorded (a finding already known from an earlier step is included
    /// when it was seen again).
    pub fn findings_since(&self, mark: Mark) -> Vec<usize> {
        self.campaign.shared.hits_since(mark.hits)
    }

    /// Exchanges made since `mark`.
    pub fn exchanges_since(&self, mark: Mark) -> u64 {
        self.campaign
            .summary
            .exchanges
            .saturating_sub(mark.exchanges)
    }

    /// Every distinct finding so far, in the order found (secrets not yet redacted: the
    /// report of [`Driver::finish`] is the redacted one).
    pub fn findings(&self) -> std::cell::Ref<'_, [Finding]> {
        self.campaign.shared.findings()
    }

    /// A finding of `invariant` about `ex` (tool, probe label, request and response excerpts
    /// filled in), judged under the session's version.
    pub fn finding_about(
        &self,
        invariant: &crate::finding::Invariant,
        severity: crate::finding::Severity,
        ex: &Exchange,
        message: impl Into<String>,
    ) -> Finding {
        crate::oracle::finding(invariant, severity, &self.campaign.context(), ex, message)
    }

    /// A finding of `invariant` about no exchange in particular.
    pub fn finding(
        &self,
        invariant: &crate::finding::Invariant,
        severity: crate::finding::Severity,
        message: impl Into<String>,
    ) -> Finding {
        Finding::new(invariant, severity, self.version(), message)
    }

    /// Records findings made outside the oracle (a scenario's expectations): deduplicated,
    /// reported as events and redacted like the oracle's.
    pub fn add(&mut self, findings: Vec<Finding>) {
        self.campaign.add(findings);
    }

    /// Calls `tool` once with `arguments` (default: the small valid value planned for it,
    /// or `{}` for a tool the server did not list), under `fault` when given and a fake
    /// upstream is running, else with a healthy upstream. A scoped fault is installed right
    /// before the call, so its counting scopes count the call's requests. Judges the
    /// exchange, checks liveness after it, and returns it (`None` when no server could be
    /// (re)started).
    pub async fn call(
        &mut self,
        tool: &str,
        arguments: Option<Value>,
        fault: Option<&mcp_chaos_faults::ScopedFault>,
    ) -> Option<Exchange> {
        self.campaign.listen_to_server_stream();
        let arguments = arguments
            .or_else(|| self.campaign.plan.arguments(tool).cloned())
            .unwrap_or_else(|| serde_json::json!({}));
        self.campaign.call(tool, arguments, fault).await
    }

    /// Reads `uri` (`resources/read`), judges the exchange, checks liveness after it and
    /// returns it (`None` when no server could be (re)started).
    pub async fn read(&mut self, uri: &str) -> Option<Exchange> {
        self.campaign.listen_to_server_stream();
        let probe = crate::session::FeatureProbe::Read {
            uri: uri.to_owned(),
            template: None,
        };
        let params = serde_json::json!({"uri": uri});
        self.campaign.feature(probe, Some(params)).await
    }

    /// Gets the prompt `name` with `arguments` (`prompts/get`), judges the exchange, checks
    /// liveness after it and returns it (`None` when no server could be (re)started).
    pub async fn prompt(&mut self, name: &str, arguments: Value) -> Option<Exchange> {
        self.campaign.listen_to_server_stream();
        let probe = crate::session::FeatureProbe::GetPrompt {
            name: name.to_owned(),
            arguments: arguments.clone(),
            hostile: false,
        };
        let params = serde_json::json!({"name": name, "arguments": arguments});
        self.campaign.feature(probe, Some(params)).await
    }

    /// The protocol probes for the negotiated version and transport.
    pub async fn probes(&mut self) {
        self.campaign.probe_phase().await;
        self.campaign.listen_to_server_stream();
        self.campaign.report_wedge();
    }

    /// Calls every listed tool once (the run's baseline calls); under a fake upstream this
    /// also learns which tools call it.
    pub async fn baseline(&mut self) {
        self.campaign.listen_to_server_stream();
        self.campaign.baseline_phase().await;
        self.baseline_done = true;
        self.campaign.report_wedge();
    }

    /// The generated phase (boundary, hostile, `valid` random valid and `invalid` random
    /// invalid cases, with shrinking) for `tool`, or for every listed tool when `None`.
    /// Returns `false` when `tool` is not listed by the server.
    pub async fn generate(&mut self, tool: Option<&str>, valid: usize, invalid: usize) -> bool {
        let tools: Vec<_> = self
            .campaign
            .plan
            .generated_tools
            .iter()
            .filter(|(name, _, _)| tool.is_none_or(|t| t == name))
            .cloned()
            .collect();
        if tools.is_empty() && tool.is_some() {
            return false;
        }
        self.campaign.listen_to_server_stream();
        self.campaign
            .generated_phase(&tools, valid, invalid, false)
            .await;
        self.campaign.report_wedge();
        true
    }

    /// Calls `tool` (or, when `None`, every tool whose calls so far reached the fake
    /// upstream; the baseline calls are made first if they were not) once under each of
    /// `faults`. Does nothing without a fake upstream.
    pub async fn faults(&mut self, tool: Option<&str>, faults: &[mcp_chaos_faults::ScopedFault]) {
        if self.campaign.injectors.is_none() {
            return;
        }
        self.campaign.listen_to_server_stream();
        let tools = match tool {
            Some(t) => vec![t.to_owned()],
            None => {
                if !self.baseline_done {
                    self.baseline().await;
                }
                self.campaign.reach.reached_tools()
            }
        };
        if tool.is_some()
            && !self
                .campaign
                .plan
                .calls
                .iter()
                .any(|(n, _)| Some(n.as_str()) == tool)
        {
            for fault in faults {
                let t = tools[0].clone();
                self.campaign
                    .call(&t, serde_json::json!({}), Some(fault))
                    .await;
            }
            self.campaign.report_wedge();
            return;
        }
        self.campaign.fault_phase(&tools, faults).await;
        self.campaign.report_wedge();
    }

    /// The transport-chaos probes (concurrency, duplicate ids, framing, ping, cancel and
    /// disconnect during a slow upstream call, large requests).
    pub async fn chaos(&mut self) {
        self.campaign.listen_to_server_stream();
        if !self.baseline_done && self.campaign.injectors.is_some() {
            self.baseline().await;
        }
        let (call, slow) = (
            self.campaign.plan.first_call(),
            self.campaign.first_upstream_call(),
        );
        self.campaign.transport_chaos(call, slow).await;
        self.campaign.report_wedge();
    }

    /// Probes version negotiation with a version no release has (ends the session under a
    /// handshake version; later steps start a new one).
    pub async fn version_probe(&mut self) {
        self.campaign.listen_to_server_stream();
        self.campaign.version_probe().await;
        self.campaign.report_wedge();
    }

    /// The wire phase: the config's `wire_cases` generated frames, judged and shrunk.
    pub async fn wire(&mut self) {
        let cases = self.campaign.config.wire_cases;
        self.campaign.wire_phase(cases).await;
        self.campaign.report_wedge();
    }

    /// The campaign of `mcp-chaos run` from here, with the phases `phases` enables.
    pub async fn campaign(&mut self, phases: super::Phases) {
        self.campaign.phases(phases).await;
        self.baseline_done = true;
    }

    /// Stops the server and the fault injectors and returns the report (findings redacted).
    pub async fn finish(mut self) -> Report {
        self.campaign.close().await;
        self.campaign.finish()
    }
}
