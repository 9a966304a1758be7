//! The forward-proxy mode: the same fault plan for servers whose HTTP client honours
//! `HTTP_PROXY` / `HTTPS_PROXY` / `ALL_PROXY`.

use std::fmt;

use crate::error::Error;
use crate::handle::{http_builder_methods, http_handle_methods};
use crate::server::{self, HttpConfig, Mode, Running};

/// A forward HTTP proxy on `127.0.0.1` that applies a fault plan to proxied traffic.
///
/// Hand the MCP server under test [`env_vars`](ForwardProxy::env_vars) and its HTTP
/// client sends its upstream traffic here:
///
/// * **Absolute-form requests** (`GET http://api.example.test/v1/x HTTP/1.1`, what clients
///   send for `http://` URLs through a proxy) are matched like any request — the path is
///   the URL's path, [`matchers::host`](crate::matchers::host) sees the URL's host, which
///   is also recorded in the journal — and served the chosen fault. The healthy response
///   is [`Fault::PassThrough`](crate::Fault::PassThrough): the request is forwarded to the real origin **only if the
///   origin is loopback** (`127.0.0.0/8`, `::1`, `localhost`; no DNS lookup is ever made),
///   otherwise it is refused with `502 Bad Gateway` and a journal note. Set
///   [`healthy`](ForwardProxyBuilder::healthy) to a [`Fault::ok`](crate::Fault::ok) to fake every origin
///   instead.
/// * **`CONNECT host:port`** (what clients send for `https://` URLs) gets the faults that
///   make sense on a tunnel: status faults refuse the tunnel with that status (e.g.
///   [`Fault::Forbidden`](crate::Fault::Forbidden) → `403`, [`Fault::BadGateway`](crate::Fault::BadGateway) → `502`), `reset` and
///   `reset-mid-body` reset the connection, `close-before-headers` closes it, `hang` never
///   answers, `delay` waits then acts healthily. Healthy (`ok`, `pass-through`,
///   `slow-body`) opens the tunnel — for loopback targets only; others get `502`.
///   Body faults (`truncated-body`, `malformed-json`, `wrong-content-type`, `huge-body`)
///   cannot be applied inside a TLS tunnel and are answered with `502` (journal note
///   says so).
///
/// Pass-through buffers the origin's response (up to 64 MiB) before relaying it, and
/// body-shaping faults shape the healthy [`Fault::Ok`](crate::Fault::Ok) body (the default body when the
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
            running: server::start(self.config, Mode::Proxy, crate::connect::HANDLER).await?,
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
