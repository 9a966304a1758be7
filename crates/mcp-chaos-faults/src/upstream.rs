//! The fake upstream HTTP server.

use std::fmt;

use crate::error::Error;
use crate::handle::{http_builder_methods, http_handle_methods};
use crate::server::{self, HttpConfig, Mode, Running};

/// A fake upstream HTTP/1.1 service on `127.0.0.1`, answering through a fault plan.
///
/// Point the MCP server under test at [`url`](FakeUpstream::url) instead of its real
/// upstream. Every request is matched against the plan's [`Rule`](crate::Rule)s, served
/// the chosen [`Fault`](crate::Fault), and recorded in the [`Journal`](crate::Journal).
/// Requests no rule matches get the healthy response ([`Fault::ok_default`] unless
/// configured otherwise).
///
/// Socket-level faults (`reset`, `hang`, …) act on the connection that carried the
/// request; HTTP/1.1 keep-alive is supported for everything else. A `CONNECT` request is
/// answered the way a [`ForwardProxy`](crate::ForwardProxy) answers it, and an
/// absolute-form request is matched by its URL's path and host (but never passed
/// through: a fake upstream has no origin).
///
/// The server stops on [`shutdown`](FakeUpstream::shutdown) or when dropped.
///
/// [`Fault::ok_default`]: crate::Fault::ok_default
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), mcp_chaos_faults::Error> {
/// use mcp_chaos_faults::{FakeUpstream, Fault};
///
/// let upstream = FakeUpstream::builder().fault(Fault::NotFound).seed(1).start().await?;
/// assert!(upstream.url().starts_with("http://127.0.0.1:"));
/// upstream.shutdown().await;
/// # Ok(())
/// # }
/// ```
pub struct FakeUpstream {
    running: Running,
}

impl fmt::Debug for FakeUpstream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FakeUpstream")
            .field("addr", &self.running.addr)
            .field("seed", &self.seed())
            .finish_non_exhaustive()
    }
}

/// Builds a [`FakeUpstream`]; start with [`FakeUpstream::builder`].
#[derive(Debug, Clone, Default)]
#[must_use = "a builder does nothing until start() is awaited"]
pub struct FakeUpstreamBuilder {
    config: HttpConfig,
}

impl FakeUpstreamBuilder {
    http_builder_methods!();

    /// Binds the listener and starts serving in the background on the current Tokio
    /// runtime.
    ///
    /// # Errors
    ///
    /// [`Error::NonLoopbackBind`] if the bind address is not loopback (nothing is bound),
    /// [`Error::Bind`] if the OS refuses the address.
    pub async fn start(self) -> Result<FakeUpstream, Error> {
        Ok(FakeUpstream {
            running: server::start(self.config, Mode::Upstream, crate::connect::HANDLER).await?,
        })
    }
}

impl FakeUpstream {
    /// A builder with an empty plan, a fresh seed, and `127.0.0.1:0` as address.
    pub fn builder() -> FakeUpstreamBuilder {
        FakeUpstreamBuilder::default()
    }

    /// Starts a fake upstream with the default configuration on `addr`.
    ///
    /// # Errors
    ///
    /// [`Error::NonLoopbackBind`] if `addr` is not in `127.0.0.0/8` or `::1` (nothing is
    /// bound), [`Error::Bind`] if the OS refuses the address.
    pub async fn bind(addr: std::net::SocketAddr) -> Result<FakeUpstream, Error> {
        FakeUpstream::builder().bind(addr).start().await
    }

    /// The base URL, `http://127.0.0.1:PORT` (no trailing slash).
    pub fn url(&self) -> String {
        format!("http://{}", self.running.addr)
    }

    /// The URL of `path` on this server; a missing leading `/` is added.
    pub fn url_for(&self, path: &str) -> String {
        if path.starts_with('/') {
            format!("{}{path}", self.url())
        } else {
            format!("{}/{path}", self.url())
        }
    }

    http_handle_methods!();
}
