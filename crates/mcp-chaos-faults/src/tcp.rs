//! A Toxiproxy-style TCP proxy in front of a real (loopback) upstream.

use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::pin::pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;
use tokio::task::JoinSet;

use crate::error::Error;
use crate::net::{
    Background, DEFAULT_BIND, bind_loopback, is_loopback, set_reset_on_close, shutdown_both,
};
use crate::schedule::mix_seed;
use crate::server::fresh_seed;

const READ_BUF: usize = 16 * 1024;
const UPSTREAM_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Which way bytes flow through a [`TcpProxy`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// From the upstream to the client (responses). Toxics apply here by default, as in
    /// Toxiproxy.
    Downstream,
    /// From the client to the upstream (requests).
    Upstream,
}

/// A network condition applied by a [`TcpProxy`], named and shaped after Toxiproxy's
/// toxics. Units: milliseconds for times, bytes for sizes.
///
/// Stream toxics (`latency`, `bandwidth`, `slicer`, `limit_data`, `timeout`) act on the
/// [`Direction`] they are attached to; connection toxics (`reset_peer`, and the closing
/// part of `timeout`) end the whole connection whichever direction holds them.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Toxic {
    /// `latency`: delay every chunk read from the source by `latency_ms`, plus a
    /// uniformly drawn offset in `[-jitter_ms, +jitter_ms]` (never below zero). Order is
    /// preserved. The client should observe slower answers, not failures.
    Latency {
        /// Added delay per chunk, in milliseconds.
        latency_ms: u64,
        /// Maximum random deviation, in milliseconds (seeded, reproducible).
        jitter_ms: u64,
    },
    /// `bandwidth`: forward at most `bytes_per_sec` bytes per second (at least 1).
    Bandwidth {
        /// Rate limit, in bytes per second.
        bytes_per_sec: u64,
    },
    /// `reset_peer`: after `after_ms` milliseconds from connection start, abort both sides
    /// with a TCP RST. The client sees "connection reset by peer".
    ResetPeer {
        /// Time before the reset, in milliseconds (0: reset at once).
        after_ms: u64,
    },
    /// `timeout`: forward nothing in this direction (data is read and dropped), and close
    /// the connection after `after_ms` milliseconds, or never if `None`. The client sees a
    /// silent peer: a read timeout, then (if `Some`) end of stream.
    Timeout {
        /// Time before closing, in milliseconds; `None` keeps the connection open (and
        /// silent) until the client gives up or the proxy stops.
        after_ms: Option<u64>,
    },
    /// `slicer`: split every chunk into pieces of `chunk_bytes` (at least 1) and pause
    /// `delay_ms` milliseconds between pieces.
    Slicer {
        /// Piece size, in bytes.
        chunk_bytes: usize,
        /// Pause between pieces, in milliseconds.
        delay_ms: u64,
    },
    /// `limit_data`: close the connection once `bytes` bytes have been forwarded in this
    /// direction (the chunk that crosses the limit is cut to fit).
    LimitData {
        /// Bytes forwarded before closing.
        bytes: u64,
    },
}

impl Toxic {
    /// `latency` of `ms` milliseconds without jitter.
    pub fn latency(ms: u64) -> Toxic {
        Toxic::Latency {
            latency_ms: ms,
            jitter_ms: 0,
        }
    }

    /// `latency` of `ms` ± `jitter_ms` milliseconds.
    pub fn latency_with_jitter(ms: u64, jitter_ms: u64) -> Toxic {
        Toxic::Latency {
            latency_ms: ms,
            jitter_ms,
        }
    }

    /// `bandwidth` limited to `bytes_per_sec` (at least 1) bytes per second.
    pub fn bandwidth(bytes_per_sec: u64) -> Toxic {
        Toxic::Bandwidth {
            bytes_per_sec: bytes_per_sec.max(1),
        }
    }

    /// `reset_peer` after `after_ms` milliseconds.
    pub fn reset_peer(after_ms: u64) -> Toxic {
        Toxic::ResetPeer { after_ms }
    }

    /// `timeout`: drop data, close after `after_ms` milliseconds.
    pub fn timeout(after_ms: u64) -> Toxic {
        Toxic::Timeout {
            after_ms: Some(after_ms),
        }
    }

    /// `timeout`: drop data, never close.
    pub fn timeout_forever() -> Toxic {
        Toxic::Timeout { after_ms: None }
    }

    /// `slicer`: pieces of `chunk_bytes` (at least 1) with `delay_ms` between them.
    pub fn slicer(chunk_bytes: usize, delay_ms: u64) -> Toxic {
        Toxic::Slicer {
            chunk_bytes: chunk_bytes.max(1),
            delay_ms,
        }
    }

    /// `limit_data`: close after `bytes` bytes.
    pub fn limit_data(bytes: u64) -> Toxic {
        Toxic::LimitData { bytes }
    }

    /// The Toxiproxy name: `latency`, `bandwidth`, `reset_peer`, `timeout`, `slicer` or
    /// `limit_data`.
    pub fn name(&self) -> &'static str {
        match self {
            Toxic::Latency { .. } => "latency",
            Toxic::Bandwidth { .. } => "bandwidth",
            Toxic::ResetPeer { .. } => "reset_peer",
            Toxic::Timeout { .. } => "timeout",
            Toxic::Slicer { .. } => "slicer",
            Toxic::LimitData { .. } => "limit_data",
        }
    }
}

#[derive(Debug, Clone, Default)]
struct Toxics {
    downstream: Vec<Toxic>,
    upstream: Vec<Toxic>,
}

impl Toxics {
    fn all(&self) -> impl Iterator<Item = &Toxic> {
        self.downstream.iter().chain(&self.upstream)
    }
}

struct ProxyState {
    upstream: SocketAddr,
    seed: u64,
    toxics: Mutex<Toxics>,
    connections: AtomicU64,
}

impl ProxyState {
    fn toxics(&self) -> MutexGuard<'_, Toxics> {
        self.toxics.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Builds a [`TcpProxy`]; start with [`TcpProxy::builder`].
#[derive(Debug, Clone)]
#[must_use = "a builder does nothing until start() is awaited"]
pub struct TcpProxyBuilder {
    upstream: SocketAddr,
    bind: SocketAddr,
    seed: Option<u64>,
    toxics: Toxics,
}

impl TcpProxyBuilder {
    /// Adds a toxic on the [`Direction::Downstream`] stream (upstream → client).
    pub fn toxic(self, toxic: Toxic) -> Self {
        self.toxic_on(Direction::Downstream, toxic)
    }

    /// Adds a toxic on the given direction. Several toxics on one direction all apply,
    /// in the order latency → limit → slicer/bandwidth.
    pub fn toxic_on(mut self, direction: Direction, toxic: Toxic) -> Self {
        match direction {
            Direction::Downstream => self.toxics.downstream.push(toxic),
            Direction::Upstream => self.toxics.upstream.push(toxic),
        }
        self
    }

    /// Seeds the jitter generator (default: a fresh seed per proxy).
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// Sets the listen address (default `127.0.0.1:0`); only loopback is accepted.
    pub fn bind(mut self, addr: SocketAddr) -> Self {
        self.bind = addr;
        self
    }

    /// Starts the proxy in the background on the current Tokio runtime.
    ///
    /// # Errors
    ///
    /// [`Error::NonLoopbackUpstream`] if the upstream is not loopback,
    /// [`Error::NonLoopbackBind`] if the bind address is not loopback (in both cases
    /// nothing is bound or connected), [`Error::Bind`] if the OS refuses the address.
    pub async fn start(self) -> Result<TcpProxy, Error> {
        if !is_loopback(self.upstream.ip()) {
            return Err(Error::NonLoopbackUpstream {
                addr: self.upstream,
            });
        }
        let listener = bind_loopback(self.bind).await?;
        let addr = listener.local_addr().map_err(|source| Error::Bind {
            addr: self.bind,
            source,
        })?;
        let state = Arc::new(ProxyState {
            upstream: self.upstream,
            seed: self.seed.unwrap_or_else(fresh_seed),
            toxics: Mutex::new(self.toxics),
            connections: AtomicU64::new(0),
        });
        let (stop_tx, stop_rx) = oneshot::channel();
        let task = tokio::spawn(accept_loop(listener, Arc::clone(&state), stop_rx));
        Ok(TcpProxy {
            addr,
            state,
            background: Background::new(stop_tx, task),
        })
    }
}

/// A TCP proxy on `127.0.0.1` in front of a loopback upstream, applying [`Toxic`]s to the
/// connections that pass through it.
///
/// Each accepted connection opens its own connection to the upstream and takes a snapshot
/// of the toxics at that moment; [`set_toxics`](TcpProxy::set_toxics) affects later
/// connections only. If the upstream refuses, the client connection is reset.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), mcp_chaos_faults::Error> {
/// use mcp_chaos_faults::{TcpProxy, Toxic};
///
/// let upstream = "127.0.0.1:9".parse().expect("address");
/// let proxy = TcpProxy::builder(upstream)
///     .toxic(Toxic::latency_with_jitter(200, 50))
///     .start()
///     .await?;
/// assert!(proxy.addr().ip().is_loopback());
/// proxy.shutdown().await;
/// # Ok(())
/// # }
/// ```
pub struct TcpProxy {
    addr: SocketAddr,
    state: Arc<ProxyState>,
    background: Background,
}

impl fmt::Debug for TcpProxy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TcpProxy")
            .field("addr", &self.addr)
            .field("upstream", &self.state.upstream)
            .finish_non_exhaustive()
    }
}

impl TcpProxy {
    /// A builder for a proxy in front of `upstream` (which must be loopback), with no
    /// toxics.
    pub fn builder(upstream: SocketAddr) -> TcpProxyBuilder {
        TcpProxyBuilder {
            upstream,
            bind: DEFAULT_BIND,
            seed: None,
            toxics: Toxics::default(),
        }
    }

    /// The address clients connect to.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The upstream connections are forwarded to.
    pub fn upstream(&self) -> SocketAddr {
        self.state.upstream
    }

    /// The seed of the latency-jitter generator: the one given to the builder's `seed`, or the
    /// fresh one drawn for this proxy. Reuse it to replay the same jitter.
    pub fn seed(&self) -> u64 {
        self.state.seed
    }

    /// How many client connections have been accepted so far.
    pub fn connections(&self) -> u64 {
        self.state.connections.load(Ordering::Relaxed)
    }

    /// Replaces the toxics of both directions for connections accepted from now on.
    pub fn set_toxics(
        &self,
        downstream: impl IntoIterator<Item = Toxic>,
        upstream: impl IntoIterator<Item = Toxic>,
    ) {
        *self.state.toxics() = Toxics {
            downstream: downstream.into_iter().collect(),
            upstream: upstream.into_iter().collect(),
        };
    }

    /// Removes every toxic (for connections accepted from now on).
    pub fn clear_toxics(&self) {
        self.set_toxics([], []);
    }

    /// Stops the proxy and waits: the port is closed and every proxied connection is
    /// dropped. Dropping the proxy does the same without waiting.
    pub async fn shutdown(mut self) {
        self.background.shutdown().await;
    }
}

async fn accept_loop(
    listener: TcpListener,
    state: Arc<ProxyState>,
    mut stop: oneshot::Receiver<()>,
) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            _ = &mut stop => break,
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
            accepted = listener.accept() => match accepted {
                Ok((client, _peer)) => {
                    let index = state.connections.fetch_add(1, Ordering::Relaxed);
                    let toxics = state.toxics().clone();
                    let seed = mix_seed(state.seed, index);
                    connections.spawn(proxy_connection(client, state.upstream, toxics, seed));
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
            },
        }
    }
    drop(listener);
    connections.shutdown().await;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PumpEnd {
    /// The source closed (or failed); the destination's write side was shut down.
    Eof,
    /// `limit_data` was reached.
    Limit,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ending {
    Close,
    Reset,
}

async fn proxy_connection(client: TcpStream, upstream: SocketAddr, toxics: Toxics, seed: u64) {
    let upstream =
        match tokio::time::timeout(UPSTREAM_CONNECT_TIMEOUT, TcpStream::connect(upstream)).await {
            Ok(Ok(s)) => s,
            _ => {
                set_reset_on_close(&client);
                return;
            }
        };
    let _ = client.set_nodelay(true);
    let _ = upstream.set_nodelay(true);

    let reset_after = toxics
        .all()
        .filter_map(|t| match t {
            Toxic::ResetPeer { after_ms } => Some(*after_ms),
            _ => None,
        })
        .min();
    let close_after = toxics
        .all()
        .filter_map(|t| match t {
            Toxic::Timeout { after_ms } => *after_ms,
            _ => None,
        })
        .min();

    let ending = {
        let mut up = pin!(pump(
            &client,
            &upstream,
            &toxics.upstream,
            StdRng::seed_from_u64(mix_seed(seed, 1))
        ));
        let mut down = pin!(pump(
            &upstream,
            &client,
            &toxics.downstream,
            StdRng::seed_from_u64(mix_seed(seed, 2))
        ));
        let mut reset_timer = pin!(sleep_or_never(reset_after));
        let mut close_timer = pin!(sleep_or_never(close_after));
        let (mut up_done, mut down_done) = (false, false);
        loop {
            tokio::select! {
                end = up.as_mut(), if !up_done => {
                    up_done = true;
                    if end == PumpEnd::Limit { break Ending::Close; }
                }
                end = down.as_mut(), if !down_done => {
                    down_done = true;
                    if end == PumpEnd::Limit { break Ending::Close; }
                }
                () = reset_timer.as_mut() => break Ending::Reset,
                () = close_timer.as_mut() => break Ending::Close,
            }
            if up_done && down_done {
                break Ending::Close;
            }
        }
    };
    match ending {
        Ending::Reset => {
            set_reset_on_close(&client);
            set_reset_on_close(&upstream);
        }
        Ending::Close => {
            shutdown_both(&client);
            shutdown_both(&upstream);
        }
    }
}

async fn sleep_or_never(ms: Option<u64>) {
    match ms {
        Some(ms) => tokio::time::sleep(Duration::from_millis(ms)).await,
        None => std::future::pending().await,
    }
}

async fn read_some(src: &TcpStream, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        src.readable().await?;
        match src.try_read(buf) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
            other => return other,
        }
    }
}

async fn write_all(dst: &TcpStream, mut data: &[u8]) -> io::Result<()> {
    while !data.is_empty() {
        dst.writable().await?;
        match dst.try_write(data) {
            Ok(n) => data = &data[n..],
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Writes `data`, honouring `slicer` and `bandwidth`.
async fn write_shaped(
    dst: &TcpStream,
    data: &[u8],
    slicer: Option<(usize, u64)>,
    bandwidth: Option<u64>,
) -> io::Result<()> {
    let piece_len = slicer.map_or(data.len().max(1), |(chunk, _)| chunk.max(1));
    for (i, piece) in data.chunks(piece_len).enumerate() {
        if let Some((_, delay_ms)) = slicer
            && i > 0
            && delay_ms > 0
        {
            tokio::time::sleep(Duration::from_millis(delay_ms)).await;
        }
        match bandwidth {
            Some(bps) => {
                let bps = bps.max(1);
                // Send in slices of about 1/20 s worth of data, sleeping after each.
                let step = usize::try_from(bps / 20).unwrap_or(usize::MAX).max(1);
                for slice in piece.chunks(step) {
                    write_all(dst, slice).await?;
                    let secs = slice.len() as f64 / bps as f64;
                    tokio::time::sleep(Duration::from_secs_f64(secs)).await;
                }
            }
            None => write_all(dst, piece).await?,
        }
    }
    Ok(())
}

/// Copies `src` to `dst` through the stream toxics of one direction.
async fn pump(src: &TcpStream, dst: &TcpStream, toxics: &[Toxic], mut rng: StdRng) -> PumpEnd {
    let blackhole = toxics.iter().any(|t| matches!(t, Toxic::Timeout { .. }));
    let limit = toxics
        .iter()
        .filter_map(|t| match t {
            Toxic::LimitData { bytes } => Some(*bytes),
            _ => None,
        })
        .min();
    let slicer = toxics.iter().find_map(|t| match t {
        Toxic::Slicer {
            chunk_bytes,
            delay_ms,
        } => Some((*chunk_bytes, *delay_ms)),
        _ => None,
    });
    let bandwidth = toxics
        .iter()
        .filter_map(|t| match t {
            Toxic::Bandwidth { bytes_per_sec } => Some(*bytes_per_sec),
            _ => None,
        })
        .min();
    let latencies: Vec<(u64, u64)> = toxics
        .iter()
        .filter_map(|t| match t {
            Toxic::Latency {
                latency_ms,
                jitter_ms,
            } => Some((*latency_ms, *jitter_ms)),
            _ => None,
        })
        .collect();

    let mut forwarded = 0u64;
    let mut buf = vec![0u8; READ_BUF];
    loop {
        let n = match read_some(src, &mut buf).await {
            Ok(0) | Err(_) => {
                if !blackhole {
                    let _ = socket2::SockRef::from(dst).shutdown(std::net::Shutdown::Write);
                }
                return PumpEnd::Eof;
            }
            Ok(n) => n,
        };
        if blackhole {
            continue;
        }
        let mut data = &buf[..n];
        let mut reached_limit = false;
        if let Some(limit) = limit {
            let room = limit.saturating_sub(forwarded);
            if data.len() as u64 >= room {
                data = &data[..usize::try_from(room).unwrap_or(data.len()).min(data.len())];
                reached_limit = true;
            }
        }
        for (latency_ms, jitter_ms) in &latencies {
            let jitter = if *jitter_ms > 0 {
                let j = i64::try_from(*jitter_ms).unwrap_or(i64::MAX);
                rng.random_range(-j..=j)
            } else {
                0
            };
            let ms = (i64::try_from(*latency_ms).unwrap_or(i64::MAX))
                .saturating_add(jitter)
                .max(0);
            tokio::time::sleep(Duration::from_millis(ms.unsigned_abs())).await;
        }
        if write_shaped(dst, data, slicer, bandwidth).await.is_err() {
            return PumpEnd::Eof;
        }
        forwarded = forwarded.saturating_add(data.len() as u64);
        if reached_limit {
            return PumpEnd::Limit;
        }
    }
}
