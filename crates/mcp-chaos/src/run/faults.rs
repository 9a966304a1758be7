//! The fault phase of a campaign: a fake upstream (and optionally a forward proxy) from
//! [`mcp_chaos_faults`], handed to the server through environment variables or URL-typed tool
//! arguments; each tool that calls it is called once per fault profile, and each exchange
//! records the fault in effect and the upstream requests it caused. A call can also run under
//! a [`ScopedFault`] (the first request only, one path, …): the exchange then says which
//! request got what.

use mcp_chaos_faults::{
    FakeUpstream, Fault, FaultKind, ForwardProxy, JournalEntry, Retryability, ScopedFault,
    describe_requests,
};

use crate::session::{FaultContext, Retry, UpstreamHit};

/// What to inject.
#[derive(Debug, Clone)]
pub struct FaultPlan {
    /// Environment variables that receive the fake upstream's base URL.
    pub upstream_env: Vec<String>,
    /// Start a forward proxy and set `HTTP_PROXY`/`HTTPS_PROXY`/`ALL_PROXY` for the server.
    pub proxy: bool,
    /// Point URL-typed tool arguments at the fake upstream.
    pub url_args: bool,
    /// The fault profiles to run, in order.
    pub faults: Vec<Fault>,
}

impl FaultPlan {
    /// Whether the plan injects anything at all.
    pub fn is_active(&self) -> bool {
        !self.upstream_env.is_empty() || self.proxy || self.url_args
    }
}

/// The running injectors of a campaign.
#[derive(Debug)]
pub struct Injectors {
    /// The fake upstream.
    pub upstream: FakeUpstream,
    /// The forward proxy, when asked for.
    pub proxy: Option<ForwardProxy>,
}

/// Why the injectors could not start.
#[derive(Debug, thiserror::Error)]
#[error("could not start the fake upstream: {0}")]
pub struct InjectorError(#[from] mcp_chaos_faults::Error);

impl Injectors {
    /// Starts a fake upstream (and a proxy if `plan.proxy`) on 127.0.0.1, both healthy.
    ///
    /// # Errors
    /// [`InjectorError`] when the fake upstream or the proxy cannot listen on loopback.
    pub async fn start(plan: &FaultPlan, seed: u64) -> Result<Injectors, InjectorError> {
        let upstream = FakeUpstream::builder()
            .seed(seed)
            .healthy(Fault::ok_default())
            .start()
            .await?;
        let proxy = if plan.proxy {
            Some(
                ForwardProxy::builder()
                    .seed(seed)
                    .healthy(Fault::ok_default())
                    .start()
                    .await?,
            )
        } else {
            None
        };
        Ok(Injectors { upstream, proxy })
    }

    /// The environment the server needs to reach the injectors.
    pub fn env(&self, plan: &FaultPlan) -> Vec<(String, String)> {
        let mut env: Vec<(String, String)> = plan
            .upstream_env
            .iter()
            .map(|name| (name.clone(), self.upstream.url()))
            .collect();
        if let Some(proxy) = &self.proxy {
            env.extend(proxy.env_vars().into_iter().map(|(k, v)| (k.to_owned(), v)));
        }
        env
    }

    /// The URL given to URL-typed arguments of `tool`.
    pub fn url_for(&self, tool: &str) -> String {
        self.upstream.url_for(&format!("/mcp-chaos/{tool}"))
    }

    /// Serves `fault` to every request from now on (both injectors).
    pub fn set_fault(&self, fault: &Fault) {
        self.install(&ScopedFault::every(fault.clone()));
    }

    /// Serves `scoped` from now on (both injectors): its fault to the requests in its scope,
    /// counted from now, and the healthy response to the others.
    pub fn install(&self, scoped: &ScopedFault) {
        self.upstream.set_scoped(scoped);
        if let Some(proxy) = &self.proxy {
            proxy.set_scoped(scoped);
        }
    }

    /// Back to healthy answers.
    pub fn heal(&self) {
        self.upstream.clear_rules();
        if let Some(proxy) = &self.proxy {
            proxy.clear_rules();
        }
    }

    /// A position in both journals.
    pub fn mark(&self) -> Marks {
        Marks {
            upstream: self.upstream.journal().mark(),
            proxy: self.proxy.as_ref().map(|p| p.journal().mark()),
        }
    }

    /// Every upstream request since `marks`.
    pub fn since(&self, marks: &Marks) -> Vec<JournalEntry> {
        let mut entries = self.upstream.journal().since(marks.upstream);
        if let (Some(proxy), Some(mark)) = (&self.proxy, marks.proxy) {
            entries.extend(proxy.journal().since(mark));
        }
        entries
    }

    /// The canary strings the injectors plant in failure responses.
    pub fn canaries(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .upstream
            .canaries()
            .strings()
            .into_iter()
            .map(str::to_owned)
            .collect();
        if let Some(proxy) = &self.proxy {
            out.extend(proxy.canaries().strings().into_iter().map(str::to_owned));
        }
        out.sort();
        out.dedup();
        out
    }

    /// Stops both injectors.
    pub async fn shutdown(self) {
        self.upstream.shutdown().await;
        if let Some(proxy) = self.proxy {
            proxy.shutdown().await;
        }
    }
}

/// Positions in the injectors' journals.
#[derive(Debug, Clone, Copy)]
pub struct Marks {
    upstream: mcp_chaos_faults::JournalMark,
    proxy: Option<mcp_chaos_faults::JournalMark>,
}

/// Whether `fault` fails whatever the client expected: an HTTP error status, or a response
/// that never comes or breaks before its status line. A `200` whose body has an unexpected
/// shape (malformed JSON, the wrong content type, a huge body) or breaks off mid-way
/// (`reset-mid-body`, `truncated-body`) is a failure only for a client that reads and parses
/// the body: a tool that needs only the status may rightly succeed.
pub fn is_definite(fault: &Fault) -> bool {
    match fault.http_status() {
        Some(status) if status >= 400 => true,
        _ => matches!(
            fault.kind(),
            FaultKind::Hang | FaultKind::Reset | FaultKind::CloseBeforeHeaders
        ),
    }
}

/// The fault context of an exchange that ran while `scoped` was served and caused `entries`.
/// A scoped fault (not every request) also records its scope and what each request got.
pub fn context(scoped: &ScopedFault, entries: &[JournalEntry]) -> FaultContext {
    let fault = scoped.fault();
    let every = scoped.scope().is_every_request();
    FaultContext {
        scope: (!every).then(|| scoped.scope().to_string()),
        attribution: (!every).then(|| describe_requests(entries)),
        name: fault.name().to_owned(),
        status: fault.http_status(),
        failure: fault.is_failure(),
        retry: match fault.retryability() {
            Retryability::NotAFailure => Retry::NotAFailure,
            Retryability::Retryable => Retry::Retryable,
            Retryability::Permanent => Retry::Permanent,
            _ => Retry::Indeterminate,
        },
        hangs: fault.kind() == FaultKind::Hang,
        expectation: fault.expectation().to_owned(),
        upstream_requests: entries
            .iter()
            .map(|e| UpstreamHit {
                method: e.method.clone(),
                target: e.target.clone(),
                served: e.fault.name().to_owned(),
                failure: e.failure,
                definite: is_definite(&e.fault),
            })
            .collect(),
    }
}
