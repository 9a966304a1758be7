//! The forward-proxy mode: the same fault plan for servers whose HTTP client honours
//! `HTTP_PROXY` / `HTTPS_PROXY` / `ALL_PROXY`.

use std::fmt;
use std::net::SocketAddr;
use std::time::Duration;

use http::{Response, StatusCode, Uri};
use hyper::upgrade::OnUpgrade;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

use crate::body::{ConnAction, FaultBody};
use crate::error::Error;
use crate::fault::Fault;
use crate::handle::{http_builder_methods, http_handle_methods};
use crate::journal::JournalEntry;
use crate::net::loopback_target;
use crate::server::{
    self, Ctx, Decision, HttpConfig, Mode, Running, abort_connection, error_response, hang,
};

const TUNNEL_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// A forward HTTP proxy on `127.0.0.1` that applies a fault plan to proxied traffic.
///
/// Hand the MCP server under test [`env_vars`](ForwardProxy::env_vars) and its HTTP
/// client sends its upstream traffic here:
///
/// * **Absolute-form requests** (`GET http://api.example.test/v1/x HTTP/1.1`, what clients
///   send for `http://` URLs through a proxy) are matched like any request — the path is
///   the URL's path, [`matchers::host`](crate::matchers::host) sees the URL's host, which
///   is also recorded in the journal — and served the chosen fault. The healthy response
///   is [`Fault::PassThrough`]: the request is forwarded to the real origin **only if the
///   origin is loopback** (`127.0.0.0/8`, `::1`, `localhost`; no DNS lookup is ever made),
///   otherwise it is refused with `502 Bad Gateway` and a journal note. Set
///   [`healthy`](ForwardProxyBuilder::healthy) to a [`Fault::ok`] to fake every origin
///   instead.
/// * **`CONNECT host:port`** (what clients send for `https://` URLs) gets the faults that
///   make sense on a tunnel: status faults refuse the tunnel with that status (e.g.
///   [`Fault::Forbidden`] → `403`, [`Fault::BadGateway`] → `502`), `reset` and
///   `reset-mid-body` reset the connection, `close-before-headers` closes it, `hang` never
///   answers, `delay` waits then acts healthily. Healthy (`ok`, `pass-through`,
///   `slow-body`) opens the tunnel — for loopback targets only; others get `502`.
///   Body faults (`truncated-body`, `malformed-json`, `wrong-content-type`, `huge-body`)
///   cannot be applied inside a TLS tunnel and are answered with `502` (journal note
///   says so).
///
/// Pass-through buffers the origin's response (up to 64 MiB) before relaying it, and
/// body-shaping faults shape the healthy [`Fault::Ok`] body (the default body when the
/// healthy response is pass-through), not the origin's.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), mcp_chaos_faults::Error> {
/// use mcp_chaos_faults::{Fault, ForwardProxy, Rule, matchers::host};
///
/// let proxy = ForwardProxy::builder()
///     .rule(Rule::given(host("api.weather.test")).respond_with(Fault::GatewayTimeout))
///     .start()
///     .await?;
/// let env = proxy.env_vars();
/// assert!(env.iter().any(|(k, v)| *k == "HTTPS_PROXY" && *v == proxy.proxy_url()));
/// proxy.shutdown().await;
/// # Ok(())
/// # }
/// ```
pub struct ForwardProxy {
    running: Running,
}

impl fmt::Debug for ForwardProxy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ForwardProxy")
            .field("addr", &self.running.addr)
            .field("seed", &self.seed())
            .finish_non_exhaustive()
    }
}

/// Builds a [`ForwardProxy`]; start with [`ForwardProxy::builder`].
#[derive(Debug, Clone, Default)]
#[must_use = "a builder does nothing until start() is awaited"]
pub struct ForwardProxyBuilder {
    config: HttpConfig,
}

impl ForwardProxyBuilder {
    http_builder_methods!();

    /// Binds the listener and starts proxying in the background on the current Tokio
    /// runtime.
    ///
    /// # Errors
    ///
    /// [`Error::NonLoopbackBind`] if the bind address is not loopback (nothing is bound),
    /// [`Error::Bind`] if the OS refuses the address.
    pub async fn start(self) -> Result<ForwardProxy, Error> {
        Ok(ForwardProxy {
            running: server::start(self.config, Mode::Proxy).await?,
        })
    }
}

impl ForwardProxy {
    /// A builder with an empty plan (everything passes through, loopback origins only),
    /// a fresh seed, and `127.0.0.1:0` as address.
    pub fn builder() -> ForwardProxyBuilder {
        ForwardProxyBuilder::default()
    }

    /// The proxy URL, `http://127.0.0.1:PORT`.
    pub fn proxy_url(&self) -> String {
        format!("http://{}", self.running.addr)
    }

    /// The environment to give the server under test so that its HTTP client uses this
    /// proxy: `HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY` and their lower-case forms set to
    /// [`proxy_url`](ForwardProxy::proxy_url), and `NO_PROXY` / `no_proxy` set to the
    /// empty string so that an inherited exemption list (often `localhost,127.0.0.1`)
    /// does not bypass the proxy.
    ///
    /// Some clients never proxy loopback destinations whatever the environment says (Go's
    /// `net/http` is one); point such servers at a non-loopback *name* such as
    /// `http://api.example.test`, which the proxy answers without resolving it.
    pub fn env_vars(&self) -> Vec<(&'static str, String)> {
        let url = self.proxy_url();
        let mut vars: Vec<(&'static str, String)> = [
            "HTTP_PROXY",
            "HTTPS_PROXY",
            "ALL_PROXY",
            "http_proxy",
            "https_proxy",
            "all_proxy",
        ]
        .into_iter()
        .map(|k| (k, url.clone()))
        .collect();
        vars.push(("NO_PROXY", String::new()));
        vars.push(("no_proxy", String::new()));
        vars
    }

    http_handle_methods!();
}

/// What a `CONNECT` gets.
enum ConnectPlan {
    /// Open the tunnel if the target is loopback; refuse with 502 otherwise.
    Tunnel,
    /// Answer with this (status) fault instead of `200`.
    Refuse(Fault, Option<String>),
    Reset,
    Close,
    Hang,
    Delay(u64),
}

fn connect_plan(fault: &Fault) -> ConnectPlan {
    match fault {
        Fault::Ok { .. } | Fault::PassThrough | Fault::SlowBody { .. } => ConnectPlan::Tunnel,
        Fault::Delay { ms } => ConnectPlan::Delay(*ms),
        Fault::NotFound
        | Fault::Gone
        | Fault::Unauthorized
        | Fault::Forbidden
        | Fault::RateLimited { .. }
        | Fault::ServerError
        | Fault::BadGateway
        | Fault::Unavailable
        | Fault::GatewayTimeout => ConnectPlan::Refuse(fault.clone(), None),
        Fault::Reset | Fault::ResetMidBody { .. } => ConnectPlan::Reset,
        Fault::CloseBeforeHeaders => ConnectPlan::Close,
        Fault::Hang => ConnectPlan::Hang,
        Fault::TruncatedBody { .. }
        | Fault::MalformedJson
        | Fault::WrongContentType
        | Fault::HugeBody { .. } => ConnectPlan::Refuse(
            Fault::BadGateway,
            Some(format!(
                "the {} fault cannot be applied to a CONNECT tunnel; refused with 502",
                fault.name()
            )),
        ),
    }
}

fn connect_target(uri: &Uri) -> Option<(String, u16)> {
    let authority = uri.authority()?;
    let host = authority
        .host()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_owned();
    Some((host, authority.port_u16().unwrap_or(443)))
}

async fn open_tunnel(target: Option<&(String, u16)>) -> Result<(TcpStream, SocketAddr), String> {
    let Some((host, port)) = target else {
        return Err("tunnel refused: CONNECT without a host:port authority".to_owned());
    };
    let Some(ip) = loopback_target(host) else {
        return Err(format!(
            "tunnel refused: target {host:?} is not a loopback address"
        ));
    };
    let addr = SocketAddr::new(ip, *port);
    match tokio::time::timeout(TUNNEL_CONNECT_TIMEOUT, TcpStream::connect(addr)).await {
        Ok(Ok(stream)) => Ok((stream, addr)),
        Ok(Err(e)) => Err(format!("tunnel to {addr} failed: {e}")),
        Err(_) => Err(format!("tunnel to {addr} failed: connect timed out")),
    }
}

/// Serves a `CONNECT` request whose body has been read and whose fault has been decided.
/// Records the journal entry (with the fault actually served).
pub(crate) async fn serve_connect(
    ctx: &Ctx,
    entry: JournalEntry,
    uri: &Uri,
    decision: Decision,
    on_upgrade: OnUpgrade,
) -> Response<FaultBody> {
    let target = connect_target(uri);
    let mut plan = connect_plan(&decision.fault);
    if let ConnectPlan::Delay(ms) = plan {
        ctx.shared.journal.record(entry);
        tokio::time::sleep(Duration::from_millis(ms)).await;
        plan = match connect_plan(&decision.healthy) {
            ConnectPlan::Delay(_) => ConnectPlan::Tunnel,
            other => other,
        };
        return execute(ctx, plan, target.as_ref(), on_upgrade, None).await;
    }
    // Resolve the tunnel first so that the journal records what was really served.
    match plan {
        ConnectPlan::Tunnel => match open_tunnel(target.as_ref()).await {
            Ok((stream, addr)) => {
                let entry = served(entry, Fault::PassThrough, Some(format!("tunnel to {addr}")));
                tunnel(ctx, stream, on_upgrade, entry)
            }
            Err(note) => {
                let entry = served(entry, Fault::BadGateway, Some(note));
                execute(
                    ctx,
                    ConnectPlan::Refuse(Fault::BadGateway, None),
                    target.as_ref(),
                    on_upgrade,
                    entry,
                )
                .await
            }
        },
        ConnectPlan::Refuse(fault, note) => {
            let entry = served(entry, fault.clone(), note);
            execute(
                ctx,
                ConnectPlan::Refuse(fault, None),
                target.as_ref(),
                on_upgrade,
                entry,
            )
            .await
        }
        other => {
            let entry = Some(entry);
            execute(ctx, other, target.as_ref(), on_upgrade, entry).await
        }
    }
}

/// Sets what was served on a journal entry.
fn served(mut entry: JournalEntry, fault: Fault, note: Option<String>) -> Option<JournalEntry> {
    entry.failure = fault.is_failure();
    entry.fault = fault;
    entry.note = note;
    Some(entry)
}

/// Carries out a plan, first recording `entry` if given.
async fn execute(
    ctx: &Ctx,
    plan: ConnectPlan,
    target: Option<&(String, u16)>,
    on_upgrade: OnUpgrade,
    entry: Option<JournalEntry>,
) -> Response<FaultBody> {
    if let ConnectPlan::Tunnel = plan {
        return match open_tunnel(target).await {
            Ok((stream, _)) => tunnel(ctx, stream, on_upgrade, entry),
            Err(note) => {
                if let Some(e) = entry {
                    ctx.shared.journal.record(e);
                }
                error_response(&Fault::BadGateway, &ctx.shared.canaries, Some(&note))
            }
        };
    }
    if let Some(e) = entry {
        ctx.shared.journal.record(e);
    }
    match plan {
        ConnectPlan::Refuse(fault, note) => {
            error_response(&fault, &ctx.shared.canaries, note.as_deref())
        }
        ConnectPlan::Reset => abort_connection(ctx, ConnAction::Reset).await,
        ConnectPlan::Close => abort_connection(ctx, ConnAction::Close).await,
        ConnectPlan::Hang => hang(ctx).await,
        // Handled by the caller / above.
        ConnectPlan::Delay(_) | ConnectPlan::Tunnel => {
            error_response(&Fault::BadGateway, &ctx.shared.canaries, None)
        }
    }
}

/// Answers `200` and hands the connection driver the job of relaying bytes between the
/// upgraded client connection and `origin` once the response has been written.
fn tunnel(
    ctx: &Ctx,
    mut origin: TcpStream,
    on_upgrade: OnUpgrade,
    entry: Option<JournalEntry>,
) -> Response<FaultBody> {
    if let Some(e) = entry {
        ctx.shared.journal.record(e);
    }
    let job = async move {
        if let Ok(upgraded) = on_upgrade.await {
            let mut client = TokioIo::new(upgraded);
            let _ = tokio::io::copy_bidirectional(&mut client, &mut origin).await;
        }
    };
    let _ = ctx.control.send(ConnAction::Then(Box::pin(job)));
    let mut response = Response::new(FaultBody::empty());
    *response.status_mut() = StatusCode::OK;
    response
}
