//! Socket plumbing shared by the servers and proxies: loopback checks, a shareable TCP
//! stream, and background-task lifetime management.

use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::error::Error;

/// The default listen address: `127.0.0.1`, port chosen by the OS.
pub(crate) const DEFAULT_BIND: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 0);

/// Whether `ip` is in `127.0.0.0/8`, is `::1`, or is an IPv4-mapped loopback address.
pub fn is_loopback(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_loopback(),
        IpAddr::V6(v6) => {
            v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
    }
}

/// Binds a listener on `addr`, refusing anything but loopback before touching the network.
pub(crate) async fn bind_loopback(addr: SocketAddr) -> Result<TcpListener, Error> {
    if !is_loopback(addr.ip()) {
        return Err(Error::NonLoopbackBind { addr });
    }
    TcpListener::bind(addr)
        .await
        .map_err(|source| Error::Bind { addr, source })
}

/// Resolves a host (as written in a URL or `CONNECT` authority) to a loopback IP without
/// any DNS lookup: loopback IP literals and the names `localhost` / `*.localhost` only.
pub(crate) fn loopback_target(host: &str) -> Option<IpAddr> {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = bare.parse::<IpAddr>() {
        return is_loopback(ip).then_some(ip);
    }
    let lower = bare.to_ascii_lowercase();
    let lower = lower.trim_end_matches('.');
    (lower == "localhost" || lower.ends_with(".localhost"))
        .then_some(IpAddr::V4(Ipv4Addr::LOCALHOST))
}

/// Aborts the socket with a TCP RST: linger 0, then close.
pub(crate) fn set_reset_on_close(stream: &TcpStream) {
    let _ = socket2::SockRef::from(stream).set_linger(Some(Duration::ZERO));
}

/// Sends FIN in both directions (best effort).
pub(crate) fn shutdown_both(stream: &TcpStream) {
    let _ = socket2::SockRef::from(stream).shutdown(std::net::Shutdown::Both);
}

/// A TCP stream that several owners can read, write and (crucially) reset: the connection
/// driver keeps one handle to abort the socket while hyper owns another for I/O.
#[derive(Debug, Clone)]
pub(crate) struct SharedStream(pub(crate) Arc<TcpStream>);

impl SharedStream {
    pub(crate) fn new(stream: TcpStream) -> SharedStream {
        SharedStream(Arc::new(stream))
    }
}

impl AsyncRead for SharedStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if buf.remaining() == 0 {
            return Poll::Ready(Ok(()));
        }
        loop {
            ready!(self.0.poll_read_ready(cx))?;
            match self.0.try_read(buf.initialize_unfilled()) {
                Ok(n) => {
                    buf.advance(n);
                    return Poll::Ready(Ok(()));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }
}

impl AsyncWrite for SharedStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        loop {
            ready!(self.0.poll_write_ready(cx))?;
            match self.0.try_write(buf) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                other => return Poll::Ready(other),
            }
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        loop {
            ready!(self.0.poll_write_ready(cx))?;
            match self.0.try_write_vectored(bufs) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                other => return Poll::Ready(other),
            }
        }
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match socket2::SockRef::from(&*self.0).shutdown(std::net::Shutdown::Write) {
            Err(e) if e.kind() != io::ErrorKind::NotConnected => Poll::Ready(Err(e)),
            _ => Poll::Ready(Ok(())),
        }
    }
}

/// Owns a server's accept loop. `shutdown` stops it gracefully and waits; dropping it
/// aborts the loop, which drops (and so aborts) every connection task it owns.
#[derive(Debug)]
pub(crate) struct Background {
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

impl Background {
    pub(crate) fn new(stop: oneshot::Sender<()>, task: JoinHandle<()>) -> Background {
        Background {
            stop: Some(stop),
            task: Some(task),
        }
    }

    pub(crate) async fn shutdown(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_classification() {
        for ok in ["127.0.0.1", "127.9.8.7", "::1", "::ffff:127.0.0.1"] {
            assert!(is_loopback(ok.parse().expect("ip")), "{ok}");
        }
        for bad in [
            "0.0.0.0",
            "10.0.0.1",
            "192.168.1.1",
            "::",
            "8.8.8.8",
            "fe80::1",
        ] {
            assert!(!is_loopback(bad.parse().expect("ip")), "{bad}");
        }
        assert!(loopback_target("localhost").is_some());
        assert!(loopback_target("api.localhost").is_some());
        assert!(loopback_target("[::1]").is_some());
        assert!(loopback_target("127.0.0.2").is_some());
        assert!(loopback_target("example.com").is_none());
        assert!(loopback_target("localhost.example.com").is_none());
        assert!(loopback_target("10.1.2.3").is_none());
    }
}
