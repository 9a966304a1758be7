//! Server processes: a child started as the leader of its own process group, so that a
//! launcher (`npx`, `uv`, `sh -c`) and everything it starts are signalled together, reaped in
//! the background, and killed as a group when the run ends, when the handle is dropped (which
//! also happens when a panic unwinds through the run), or on shutdown following
//! `basic/lifecycle` §Shutdown: close stdin, wait, SIGTERM, wait, SIGKILL.
//!
//! Used by the stdio transport (the process is the server) and by the HTTP transport's
//! `--start` (the process serves HTTP; its stdout and stderr are only logged).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use process_wrap::tokio::{CommandWrap, KillOnDrop, ProcessGroup};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::{ChildStdin, ChildStdout};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use super::{ExitKind, ShutdownOutcome, StartError, StdioConfig, TransportEvent};

/// The variables a clean environment keeps from mcp-chaos's own.
pub const KEPT_ENV: &[&str] = &["PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "TZ"];

/// The process groups of the server processes alive now (their leaders' pids), for
/// [`kill_every_group`]; `closed` once it ran.
static GROUPS: Mutex<Groups> = Mutex::new(Groups {
    closed: false,
    pgids: Vec::new(),
});

struct Groups {
    closed: bool,
    pgids: Vec<i32>,
}

fn groups() -> std::sync::MutexGuard<'static, Groups> {
    GROUPS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// SIGKILLs the process group of every server process alive now, from any thread, without
/// the async runtime: what an interrupted run (SIGINT, SIGTERM) does before it exits, while
/// its main task may be busy. A server spawned after it (a restart racing the exit) is
/// killed as soon as it is spawned. Returns how many groups were signalled.
pub fn kill_every_group() -> usize {
    let mut g = groups();
    g.closed = true;
    let pgids = std::mem::take(&mut g.pgids);
    for pgid in &pgids {
        if *pgid > 1 {
            let _ = killpg(Pid::from_raw(*pgid), Signal::SIGKILL);
        }
    }
    pgids.len()
}

/// A running server process (the leader of its own process group). Dropping it kills the
/// group.
#[derive(Debug)]
pub struct ServerProcess {
    pgid: Pid,
    /// How the process exited and when that was seen, once it has.
    exit: watch::Receiver<Option<(ExitKind, Instant)>>,
    log: Arc<Mutex<Ring>>,
    /// How many of the pipes read into `log` reached their end, against how many there are.
    log_ended: watch::Receiver<usize>,
    log_pipes: usize,
    tasks: Vec<JoinHandle<()>>,
    eof_grace: Duration,
    term_grace: Duration,
    finished: bool,
}

/// The pipes of a process the caller reads or writes itself.
#[derive(Debug)]
pub struct Pipes {
    /// stdin, when it was asked to be piped.
    pub stdin: Option<ChildStdin>,
    /// stdout, when the caller reads it (otherwise it goes to the log ring).
    pub stdout: Option<ChildStdout>,
}

impl ServerProcess {
    /// Spawns `config` as the leader of a new process group. stdin is piped when
    /// `stdin_piped` (else `/dev/null`); stdout is handed back when `own_stdout` (else it is
    /// logged with stderr into the ring buffer). When the process exits, an
    /// [`TransportEvent::Exited`] is sent on `events` (as whatever the channel carries, made
    /// from it). Must be called inside a Tokio runtime.
    pub fn spawn<E: From<TransportEvent> + Send + 'static>(
        config: &StdioConfig,
        stdin_piped: bool,
        own_stdout: bool,
        events: mpsc::Sender<E>,
    ) -> Result<(ServerProcess, Pipes), StartError> {
        let mut command = CommandWrap::with_new(&config.program, |c| {
            if config.clean_env {
                c.env_clear();
                for key in KEPT_ENV {
                    if let Some(value) = std::env::var_os(key) {
                        c.env(key, value);
                    }
                }
            }
            c.args(&config.args)
                .envs(config.env.iter().map(|(k, v)| (k, v)))
                .stdin(if stdin_piped {
                    std::process::Stdio::piped()
                } else {
                    std::process::Stdio::null()
                })
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped());
            if let Some(cwd) = &config.cwd {
                c.current_dir(cwd);
            }
        });
        command.wrap(ProcessGroup::leader()).wrap(KillOnDrop);
        let mut child = command.spawn().map_err(|source| StartError::Spawn {
            program: config.program.clone(),
            source,
        })?;
        let pid = child.id().and_then(|p| i32::try_from(p).ok()).unwrap_or(0);
        let pgid = Pid::from_raw(pid);
        {
            let mut g = groups();
            if g.closed && pid > 1 {
                let _ = killpg(pgid, Signal::SIGKILL);
            } else {
                g.pgids.push(pid);
            }
        }
        let stdin = child.stdin().take();
        let stdout = child.stdout().take();
        let stderr_pipe = child.stderr().take();
        let log = Arc::new(Mutex::new(Ring::new(config.stderr_bytes)));
        let (exit_tx, exit) = watch::channel(None);
        let (ended_tx, log_ended) = watch::channel(0usize);
        let ended_tx = Arc::new(ended_tx);
        let mut tasks = Vec::new();
        let mut log_pipes = 0;
        let stdout = match stdout {
            Some(out) if !own_stdout => {
                log_pipes += 1;
                let (log, ended) = (Arc::clone(&log), Arc::clone(&ended_tx));
                tasks.push(tokio::spawn(read_log(out, log, ended)));
                None
            }
            other => other,
        };
        if let Some(pipe) = stderr_pipe {
            log_pipes += 1;
            let (log, ended) = (Arc::clone(&log), Arc::clone(&ended_tx));
            tasks.push(tokio::spawn(read_log(pipe, log, ended)));
        }
        tasks.push(tokio::spawn(async move {
            let status = match child.wait().await {
                Ok(status) => exit_kind(status),
                Err(_) => ExitKind::Unknown,
            };
            let at = Instant::now();
            let _ = exit_tx.send(Some((status.clone(), at)));
            let _ = events
                .send(E::from(TransportEvent::Exited { at, status }))
                .await;
            // Keep `child` alive until here so that kill-on-drop does not fire early.
            drop(child);
        }));
        Ok((
            ServerProcess {
                pgid,
                exit,
                log,
                log_ended,
                log_pipes,
                tasks,
                eof_grace: config.eof_grace,
                term_grace: config.term_grace,
                finished: false,
            },
            Pipes { stdin, stdout },
        ))
    }

    /// The process id (also the process group id).
    pub fn pid(&self) -> i32 {
        self.pgid.as_raw()
    }

    /// The newest stderr (and, when not read by the caller, stdout) output, lossily decoded.
    pub fn log_tail(&self) -> String {
        match self.log.lock() {
            Ok(ring) => ring.text(),
            Err(poisoned) => poisoned.into_inner().text(),
        }
    }

    /// How the process exited, if it has.
    pub fn has_exited(&self) -> Option<ExitKind> {
        self.exit
            .borrow()
            .as_ref()
            .map(|(status, _)| status.clone())
    }

    /// Once the process has exited, waits until the pipes read into the log (stderr, and
    /// stdout when it is logged) reached their end, until at most `grace` after the exit was
    /// seen: a process writes its last words just before it exits, and they may still be in
    /// the pipe when the exit is seen. The end comes with the exit, unless a process it left
    /// behind holds a pipe open. Returns at once while the process runs, and once `grace`
    /// after the exit has passed.
    pub async fn log_settled(&self, grace: Duration) {
        let Some(at) = self.exit.borrow().as_ref().map(|(_, at)| *at) else {
            return;
        };
        let mut ended = self.log_ended.clone();
        let pipes = self.log_pipes;
        let _ = tokio::time::timeout_at((at + grace).into(), ended.wait_for(|n| *n >= pipes)).await;
    }

    /// How long [`ServerProcess::shutdown`] waits for the process to exit on its own.
    pub fn eof_grace(&self) -> Duration {
        self.eof_grace
    }

    /// Waits up to `within` for the process to exit (an exit that happened within it but was
    /// not yet seen counts: the exit watcher gets its turn first, as in `super::late`).
    pub async fn wait_exit(&self, within: Duration) -> Option<ExitKind> {
        let mut exit = self.exit.clone();
        if let Ok(Ok(exited)) = tokio::time::timeout(within, exit.wait_for(Option::is_some)).await {
            return exited.as_ref().map(|(status, _)| status.clone());
        }
        for _ in 0..super::LATE_YIELDS {
            tokio::task::yield_now().await;
            if let Some((status, _)) = self.exit.borrow().as_ref() {
                return Some(status.clone());
            }
        }
        None
    }

    /// Removes the group from the ones [`kill_every_group`] kills (it has been killed).
    fn forget(&self) {
        let pgid = self.pgid.as_raw();
        groups().pgids.retain(|g| *g != pgid);
    }

    /// Sends `signal` to the whole process group (ignoring a group that is already gone).
    pub fn signal_group(&self, signal: Signal) {
        if self.pgid.as_raw() > 1 {
            let _ = killpg(self.pgid, signal);
        }
    }

    /// Shuts the process down: `close_input` (closing stdin) has been done by the caller; wait
    /// `eof_grace`, SIGTERM the group, wait `term_grace`, SIGKILL the group. Any process left
    /// in the group is killed in every case.
    pub async fn shutdown(self) -> ShutdownOutcome {
        let grace = self.eof_grace;
        self.shutdown_after(grace).await
    }

    /// [`ServerProcess::shutdown`] with `eof_grace` instead of the configured one (zero: the
    /// process is not expected to exit on its own, SIGTERM at once).
    pub async fn shutdown_after(mut self, eof_grace: Duration) -> ShutdownOutcome {
        let outcome = if let Some(status) = self.has_exited() {
            ShutdownOutcome::AlreadyExited(status)
        } else if !eof_grace.is_zero()
            && let Some(status) = self.wait_exit(eof_grace).await
        {
            ShutdownOutcome::ExitedOnEof(status)
        } else {
            self.signal_group(Signal::SIGTERM);
            if let Some(status) = self.wait_exit(self.term_grace).await {
                ShutdownOutcome::Terminated(status)
            } else {
                self.signal_group(Signal::SIGKILL);
                let _ = self.wait_exit(Duration::from_millis(1_000)).await;
                ShutdownOutcome::Killed
            }
        };
        self.finish();
        outcome
    }

    /// Kills the process group at once (SIGKILL, no grace): for a server that is busy with a
    /// call mcp-chaos gave up on, or that is known not to exit when its input closes. Waits
    /// (at most 1 s) for the exit to be reaped.
    pub async fn kill(mut self) -> ShutdownOutcome {
        let outcome = if let Some(status) = self.has_exited() {
            ShutdownOutcome::AlreadyExited(status)
        } else {
            self.signal_group(Signal::SIGKILL);
            let _ = self.wait_exit(Duration::from_millis(1_000)).await;
            ShutdownOutcome::Killed
        };
        self.finish();
        outcome
    }

    /// Kills whatever is left of the group and stops the log readers.
    fn finish(&mut self) {
        self.signal_group(Signal::SIGKILL);
        self.forget();
        self.finished = true;
        for task in &self.tasks {
            task.abort();
        }
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        if !self.finished {
            self.signal_group(Signal::SIGKILL);
            self.forget();
            for task in &self.tasks {
                task.abort();
            }
        }
    }
}

fn exit_kind(status: std::process::ExitStatus) -> ExitKind {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => ExitKind::Code(code),
        (None, Some(signal)) => ExitKind::Signal(signal),
        _ => ExitKind::Unknown,
    }
}

/// A byte ring buffer keeping the newest `cap` bytes.
#[derive(Debug)]
struct Ring {
    cap: usize,
    bytes: VecDeque<u8>,
    dropped: u64,
}

impl Ring {
    fn new(cap: usize) -> Ring {
        Ring {
            cap,
            bytes: VecDeque::with_capacity(cap.min(64 * 1024)),
            dropped: 0,
        }
    }

    fn push(&mut self, data: &[u8]) {
        let data = if data.len() > self.cap {
            self.dropped += (data.len() - self.cap) as u64;
            &data[data.len() - self.cap..]
        } else {
            data
        };
        let overflow = (self.bytes.len() + data.len()).saturating_sub(self.cap);
        self.bytes.drain(..overflow);
        self.dropped += overflow as u64;
        self.bytes.extend(data);
    }

    fn text(&self) -> String {
        let (a, b) = self.bytes.as_slices();
        let mut all = Vec::with_capacity(a.len() + b.len());
        all.extend_from_slice(a);
        all.extend_from_slice(b);
        let text = String::from_utf8_lossy(&all).into_owned();
        if self.dropped > 0 {
            format!("[{} earlier bytes dropped]\n{text}", self.dropped)
        } else {
            text
        }
    }
}

/// Reads `reader` into `ring` until its end, then counts it in `ended`.
async fn read_log<R: AsyncRead + Unpin>(
    mut reader: R,
    ring: Arc<Mutex<Ring>>,
    ended: Arc<watch::Sender<usize>>,
) {
    let mut buf = vec![0u8; 8 * 1024];
    loop {
        match reader.read(&mut buf).await {
            Ok(0) | Err(_) => {
                ended.send_modify(|n| *n += 1);
                return;
            }
            Ok(n) => match ring.lock() {
                Ok(mut ring) => ring.push(&buf[..n]),
                Err(poisoned) => poisoned.into_inner().push(&buf[..n]),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_keeps_the_newest_bytes() {
        let mut r = Ring::new(8);
        r.push(b"hello ");
        r.push(b"world!");
        assert_eq!(r.text(), "[4 earlier bytes dropped]\no world!");
        r.push(b"0123456789");
        assert!(r.text().ends_with("23456789"));
    }
}
