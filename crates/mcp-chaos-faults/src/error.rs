//! The crate's error type.

use std::net::SocketAddr;

/// Everything that can go wrong when configuring or starting a fault injector.
///
/// Serving requests never produces an `Error`: once a server or proxy is running, every
/// problem with a request (hostile input, a client that disconnects, an origin that is
/// down) is answered on the wire and, for HTTP servers, recorded in the
/// [`Journal`](crate::Journal).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A server or proxy was asked to listen on an address outside the loopback range.
    ///
    /// Fault injectors only ever listen on `127.0.0.0/8` or `::1`, so that a chaos run can
    /// never expose a misbehaving server to the network.
    #[error(
        "refusing to listen on {addr}: fault injectors only bind loopback addresses (127.0.0.0/8 or ::1)"
    )]
    NonLoopbackBind {
        /// The rejected address.
        addr: SocketAddr,
    },

    /// A TCP proxy was pointed at an upstream outside the loopback range.
    ///
    /// Chaos traffic must stay on this machine; the proxy refuses to forward anywhere else.
    #[error(
        "refusing to forward to {addr}: the proxied upstream must be a loopback address (127.0.0.0/8 or ::1)"
    )]
    NonLoopbackUpstream {
        /// The rejected upstream address.
        addr: SocketAddr,
    },

    /// The operating system refused to bind the (loopback) listening socket.
    #[error("could not listen on {addr}: {source}")]
    Bind {
        /// The address that could not be bound.
        addr: SocketAddr,
        /// The underlying I/O error.
        #[source]
        source: std::io::Error,
    },

    /// A fault specification such as `"delay=abc"` or `"teapot"` could not be parsed.
    ///
    /// `spec` is the text that was rejected; `reason` says why, and for an unknown name
    /// lists the known names.
    #[error("invalid fault {spec:?}: {reason}")]
    InvalidFault {
        /// The specification that was rejected.
        spec: String,
        /// Why it was rejected.
        reason: String,
    },
}

/// Shorthand for `std::result::Result<T, mcp_chaos_faults::Error>`.
pub type Result<T, E = Error> = std::result::Result<T, E>;
