//! Runs the real `mcp-chaos` binary against one hostile server and measures what issue 12's
//! acceptance asks: the exit status (an exit code, never a signal), mcp-chaos's peak RSS
//! (`VmHWM` of `/proc/<pid>/status`, polled every 50 ms), the wall time, the JSON report,
//! the processes left behind (every process of a run carries `HOSTILE_ROW=<marker>` in its
//! environment; `/proc/*/environ` is scanned after the run) and, over HTTP, whether the
//! server's port still listens (`/proc/net/tcp{,6}`).
//!
//! A runaway is stopped, to spare the shared machine: SIGKILL past `HOSTILE_KILL_RSS_MIB` of
//! peak RSS (default 1024; its server's processes are then left for the harness to kill, and
//! reported), SIGTERM past the row's wall bound (`HOSTILE_KILL_WALL_S` raises it, for
//! measuring how long a run would really take) and SIGKILL 5 s later. Every run prints one summary line to stderr
//! (`--nocapture` shows it) and, when `HOSTILE_MEASURE_FILE` names a file, appends it there
//! as a JSON line; `HOSTILE_KEEP_DIR=dir` keeps each run's report and mcp-chaos's stdout and
//! stderr in `dir/<row>/`. Rows run one at a time unless `HOSTILE_PARALLEL` is set.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write as _;
use std::os::unix::process::ExitStatusExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// Issue 12's bound on mcp-chaos's peak RSS, in KiB (256 MiB).
pub const RSS_LIMIT_KIB: u64 = 256 * 1024;

/// How long leftovers (processes, a listening port) get to disappear after mcp-chaos exits.
const SETTLE: Duration = Duration::from_secs(5);

/// How long a run stopped for its wall time gets between SIGTERM and SIGKILL.
const KILL_GRACE: Duration = Duration::from_secs(5);

/// The poll interval of the RSS and exit watch.
const POLL: Duration = Duration::from_millis(50);

/// Where a row's server is, and how mcp-chaos reaches it. The `&str` is the script (in
/// `hostile/`) and its arguments, e.g. `"wedge.py --mode silent"`.
#[derive(Debug, Clone, Copy)]
pub enum Server {
    /// `--stdio "python3 hostile/<script> <args>"`.
    Stdio(&'static str),
    /// `--http http://127.0.0.1:PORT/mcp --start "python3 hostile/<script> <args>"
    /// --env PORT=PORT`, PORT a free loopback port.
    Http(&'static str),
    /// As `Http`, with mcp-chaos (and so its server) run inside a new network namespace that
    /// has nothing but loopback (`unshare -rn`), where 198.51.100.1 is also put on `lo` and
    /// the server is told (`HOSTILE_CANARY=1`) to listen there: a client that follows a
    /// redirect off loopback is caught without any packet leaving the machine.
    HttpNetns(&'static str),
    /// `--stdio "mcp-chaos-fixture <args>"`: the bundled fixture server.
    Fixture(&'static str),
}

impl Server {
    /// The script and its arguments (or the fixture's arguments).
    pub fn command(self) -> &'static str {
        match self {
            Server::Stdio(c) | Server::Http(c) | Server::HttpNetns(c) | Server::Fixture(c) => c,
        }
    }

    /// The hostile script this row runs, if any.
    pub fn script(self) -> Option<&'static str> {
        match self {
            Server::Fixture(_) => None,
            other => other.command().split_whitespace().next(),
        }
    }

    /// The transport, for messages.
    pub fn transport(self) -> &'static str {
        match self {
            Server::Stdio(_) | Server::Fixture(_) => "stdio",
            Server::Http(_) => "http",
            Server::HttpNetns(_) => "http (netns)",
        }
    }
}

/// What mcp-chaos owes against a row's server, beyond the acceptance every row checks (an
/// exit code 0, 1 or 2, peak RSS under 256 MiB, the wall bound, a parseable report, nothing
/// left running or listening).
#[derive(Clone, Copy)]
pub enum Owed {
    /// A finding of this invariant (by name, e.g. `oversize-frame`) is in the report.
    Finding(&'static str),
    /// No finding of this invariant is in the report (a false finding the issue saw).
    NoFinding(&'static str),
    /// The report has no finding at all.
    NoFindings,
    /// mcp-chaos exits with this code (narrower than the 0, 1 or 2 every row allows).
    Exit(i32),
    /// A check of its own: what it checks, and the check (`Err` says what is wrong).
    Check(&'static str, fn(&Outcome) -> Result<(), String>),
}

/// One row of the zoo: a hostile server and what mcp-chaos owes against it.
pub struct Row {
    /// The row's name (the test's name).
    pub name: &'static str,
    /// The server.
    pub server: Server,
    /// The wall-time bound, in seconds: generous, so that only a runaway breaks it.
    pub wall_s: u64,
    /// What mcp-chaos owes.
    pub owed: &'static [Owed],
    /// Send mcp-chaos SIGTERM during the run.
    pub sigterm: Option<Sigterm>,
}

/// When the harness sends mcp-chaos SIGTERM.
#[derive(Debug, Clone, Copy)]
pub struct Sigterm {
    /// Once mcp-chaos's stderr (its progress) shows this text...
    pub after: &'static str,
    /// ... and this many seconds more.
    pub delay_s: u64,
}

/// What one run did.
pub struct Outcome {
    /// The exit code, if mcp-chaos exited.
    pub code: Option<i32>,
    /// The signal that ended mcp-chaos, if one did.
    pub signal: Option<i32>,
    /// Why the harness killed mcp-chaos, if it did.
    pub killed: Option<String>,
    /// Peak RSS (`VmHWM`) of mcp-chaos, in KiB.
    pub peak_rss_kib: u64,
    /// Wall time from spawn to exit.
    pub wall: Duration,
    /// From the SIGTERM the harness sent to the exit, if it sent one.
    pub after_sigterm: Option<Duration>,
    /// The JSON report, or why there is none.
    pub report: Result<Value, String>,
    /// Processes of the run still alive after it (pid and command line); the harness killed
    /// them afterwards.
    pub leftovers: Vec<String>,
    /// Whether the server's port was still listening after the run (HTTP rows).
    pub listening: Option<u16>,
    /// The end of mcp-chaos's stdout and stderr.
    pub stdout_tail: String,
    /// The end of mcp-chaos's stderr.
    pub stderr_tail: String,
    /// The run's folder: `state/` is the server's `$HOSTILE_STATE_DIR`.
    pub dir: tempfile::TempDir,
}

impl Outcome {
    /// The findings of the report (none without a report).
    pub fn findings(&self) -> Vec<Value> {
        self.report
            .as_ref()
            .ok()
            .and_then(|r| r["findings"].as_array().cloned())
            .unwrap_or_default()
    }

    /// How many findings of each invariant the report has.
    pub fn invariants(&self) -> BTreeMap<String, usize> {
        let mut counts = BTreeMap::new();
        for f in self.findings() {
            if let Some(name) = f["invariant"].as_str() {
                *counts.entry(name.to_owned()).or_insert(0) += 1;
            }
        }
        counts
    }

    /// The server's state folder (`$HOSTILE_STATE_DIR`).
    pub fn state_dir(&self) -> PathBuf {
        self.dir.path().join("state")
    }

    /// The measurements as one JSON object (the `HOSTILE_MEASURE_FILE` line).
    fn to_json(&self, row: &Row, failures: &[String]) -> Value {
        json!({
            "row": row.name,
            "transport": row.server.transport(),
            "exit_code": self.code,
            "signal": self.signal,
            "killed": self.killed,
            "peak_rss_mib": self.peak_rss_kib as f64 / 1024.0,
            "wall_s": self.wall.as_secs_f64(),
            "after_sigterm_s": self.after_sigterm.map(|d| d.as_secs_f64()),
            "report": self.report.is_ok(),
            "report_error": self.report.as_ref().err(),
            "findings": self.invariants(),
            "leftovers": self.leftovers.len(),
            "listening": self.listening,
            "failures": failures,
        })
    }

    fn summary(&self, row: &Row) -> String {
        let exit = match (self.code, self.signal) {
            (Some(c), _) => format!("exit {c}"),
            (_, Some(s)) => format!("signal {s}"),
            _ => "no status".into(),
        };
        let findings: Vec<String> = self
            .invariants()
            .iter()
            .map(|(k, v)| format!("{k} x{v}"))
            .collect();
        format!(
            "hostile {}: {exit}{}, peak RSS {:.0} MiB, {:.1} s{}, report {}, findings [{}], \
             {} left over{}",
            row.name,
            self.killed
                .as_ref()
                .map(|k| format!(" (killed: {k})"))
                .unwrap_or_default(),
            self.peak_rss_kib as f64 / 1024.0,
            self.wall.as_secs_f64(),
            self.after_sigterm
                .map(|d| format!(" ({:.1} s after SIGTERM)", d.as_secs_f64()))
                .unwrap_or_default(),
            if self.report.is_ok() { "yes" } else { "no" },
            findings.join(", "),
            self.leftovers.len(),
            self.listening
                .map(|p| format!(", port {p} still listening"))
                .unwrap_or_default(),
        )
    }
}

/// The folder of the hostile servers: `hostile/` of the tests crate.
pub fn hostile_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("hostile")
}

/// `word` quoted for mcp-chaos's shell-like splitting of `--stdio` and `--start`.
fn quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// The server's command line.
fn server_command(server: Server) -> String {
    match server {
        Server::Fixture(args) => {
            format!(
                "{} {args}",
                quote(&mcp_chaos_tests::fixture().to_string_lossy())
            )
        }
        other => {
            let mut words = other.command().splitn(2, ' ');
            let script = hostile_dir().join(words.next().unwrap_or_default());
            let rest = words.next().unwrap_or_default();
            format!("python3 {} {rest}", quote(&script.to_string_lossy()))
                .trim_end()
                .to_owned()
        }
    }
}

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

/// Peak RSS (`VmHWM`) of a live process, in KiB.
fn vm_hwm_kib(pid: u32) -> Option<u64> {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// The live processes whose environment holds `HOSTILE_ROW=<marker>`: pid and command line.
fn marked_processes(marker: &str) -> Vec<(u32, String)> {
    let needle = format!("HOSTILE_ROW={marker}");
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(environ) = fs::read(entry.path().join("environ")) else {
            continue;
        };
        if environ.split(|b| *b == 0).any(|v| v == needle.as_bytes()) {
            let cmdline = fs::read(entry.path().join("cmdline")).unwrap_or_default();
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            out.push((pid, cmdline.trim().to_owned()));
        }
    }
    out
}

/// Whether a TCP socket listens on `port` (IPv4 or IPv6), per `/proc/net/tcp{,6}`.
fn listens(port: u16) -> bool {
    let want = format!(":{port:04X}");
    ["/proc/net/tcp", "/proc/net/tcp6"].iter().any(|path| {
        fs::read_to_string(path).is_ok_and(|table| {
            table.lines().skip(1).any(|l| {
                let cols: Vec<&str> = l.split_whitespace().collect();
                cols.len() > 3 && cols[1].ends_with(&want) && cols[3] == "0A"
            })
        })
    })
}

fn signal(pid: u32, sig: &str) {
    let _ = Command::new("kill")
        .args([sig, &pid.to_string()])
        .stderr(Stdio::null())
        .status();
}

/// The last `n` bytes of a file, as text.
fn tail(path: &Path, n: usize) -> String {
    let bytes = fs::read(path).unwrap_or_default();
    let start = bytes.len().saturating_sub(n);
    String::from_utf8_lossy(&bytes[start..]).into_owned()
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

/// Whether `unshare -rn` can make a network namespace here.
fn netns_available() -> bool {
    Command::new("unshare")
        .args(["-rn", "true"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Runs mcp-chaos with defaults against `row`'s server and measures the run.
pub fn run(row: &Row) -> Outcome {
    static RUNS: AtomicU32 = AtomicU32::new(0);
    let marker = format!(
        "{}-{}-{}",
        row.name,
        std::process::id(),
        RUNS.fetch_add(1, Ordering::Relaxed)
    );
    let dir = tempfile::tempdir().expect("a temporary directory");
    let state = dir.path().join("state");
    fs::create_dir(&state).expect("the state folder");
    let report_path = dir.path().join("report.json");
    let stdout_path = dir.path().join("stdout");
    let stderr_path = dir.path().join("stderr");

    let mcp_chaos = mcp_chaos_tests::mcp_chaos();
    let command = server_command(row.server);
    let mut args: Vec<String> = vec!["run".into()];
    let mut port = None;
    match row.server {
        Server::Stdio(_) | Server::Fixture(_) => args.extend(["--stdio".into(), command]),
        Server::Http(_) | Server::HttpNetns(_) => {
            let p = free_port();
            port = Some(p);
            args.extend([
                "--http".into(),
                format!("http://127.0.0.1:{p}/mcp"),
                "--start".into(),
                command,
                "--env".into(),
                format!("PORT={p}"),
            ]);
        }
    }
    args.extend(["--report-json".into(), report_path.display().to_string()]);

    let mut cmd = if let Server::HttpNetns(_) = row.server {
        assert!(
            netns_available(),
            "{}: this row needs a network namespace with only loopback (`unshare -rn`), so \
             that a client following the redirect cannot reach off the machine",
            row.name
        );
        let mut c = Command::new("unshare");
        c.args([
            "-rn",
            "sh",
            "-c",
            "ip link set lo up && ip addr add 198.51.100.1/32 dev lo && exec \"$0\" \"$@\"",
        ]);
        c.arg(&mcp_chaos);
        c.env("HOSTILE_CANARY", "1");
        c
    } else {
        Command::new(&mcp_chaos)
    };
    cmd.args(&args)
        .env("HOSTILE_ROW", &marker)
        .env("HOSTILE_STATE_DIR", &state)
        .stdin(Stdio::null())
        .stdout(fs::File::create(&stdout_path).expect("the stdout file"))
        .stderr(fs::File::create(&stderr_path).expect("the stderr file"));

    let kill_rss_kib = env_u64("HOSTILE_KILL_RSS_MIB").unwrap_or(1024) * 1024;
    let kill_wall =
        Duration::from_secs(env_u64("HOSTILE_KILL_WALL_S").unwrap_or(0).max(row.wall_s));

    let started = Instant::now();
    let mut child: Child = cmd.spawn().expect("mcp-chaos starts");
    let pid = child.id();
    let mut peak = 0;
    let mut killed = None;
    let mut sigterm_at: Option<Instant> = None;
    let mut text_seen: Option<Instant> = None;
    let mut grace_until: Option<Instant> = None;
    let status = loop {
        if let Some(kib) = vm_hwm_kib(pid) {
            peak = peak.max(kib);
        }
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) => {}
            Err(e) => panic!("waiting for mcp-chaos: {e}"),
        }
        if killed.is_none() {
            if peak > kill_rss_kib {
                // Memory runs away fast: no grace.
                killed = Some(format!(
                    "SIGKILL: peak RSS past {} MiB",
                    kill_rss_kib / 1024
                ));
                let _ = child.kill();
            } else if started.elapsed() > kill_wall {
                // A grace period, so that mcp-chaos can kill its server's tree itself.
                killed = Some(format!(
                    "SIGTERM: still running after {} s",
                    kill_wall.as_secs()
                ));
                signal(pid, "-TERM");
                grace_until = Some(Instant::now() + KILL_GRACE);
            }
        } else if grace_until.is_some_and(|t| Instant::now() > t) {
            grace_until = None;
            killed = killed.map(|k| format!("{k}; SIGKILL {} s later", KILL_GRACE.as_secs()));
            let _ = child.kill();
        }
        if let (Some(sigterm), None) = (row.sigterm, sigterm_at) {
            if text_seen.is_none() && tail(&stderr_path, 64 * 1024).contains(sigterm.after) {
                text_seen = Some(Instant::now());
            }
            if text_seen.is_some_and(|t| t.elapsed() >= Duration::from_secs(sigterm.delay_s)) {
                signal(pid, "-TERM");
                sigterm_at = Some(Instant::now());
            }
        }
        std::thread::sleep(POLL);
    };
    let wall = started.elapsed();
    let after_sigterm = sigterm_at.map(|t| t.elapsed());

    // Leftovers: give the process tree and the port a moment, then record and kill.
    let settle = Instant::now() + SETTLE;
    let mut leftovers = marked_processes(&marker);
    while !leftovers.is_empty() && Instant::now() < settle {
        std::thread::sleep(POLL);
        leftovers = marked_processes(&marker);
    }
    for (pid, _) in &leftovers {
        signal(*pid, "-KILL");
    }
    let mut listening = port.filter(|p| listens(*p));
    while listening.is_some() && Instant::now() < settle {
        std::thread::sleep(POLL);
        listening = port.filter(|p| listens(*p));
    }

    let report = match fs::read_to_string(&report_path) {
        Err(e) => Err(format!("no report at {}: {e}", report_path.display())),
        Ok(text) => serde_json::from_str::<Value>(&text)
            .map_err(|e| format!("the report is not JSON: {e}"))
            .and_then(|v| {
                if v["findings"].is_array() {
                    Ok(v)
                } else {
                    Err("the report has no findings array".into())
                }
            }),
    };
    Outcome {
        code: status.code(),
        signal: status.signal(),
        killed,
        peak_rss_kib: peak,
        wall,
        after_sigterm,
        report,
        leftovers: leftovers
            .into_iter()
            .map(|(pid, cmd)| format!("{pid} {cmd}"))
            .collect(),
        listening,
        stdout_tail: tail(&stdout_path, 3000),
        stderr_tail: tail(&stderr_path, 3000),
        dir,
    }
}

/// What `outcome` fails of the acceptance and of `row.owed`; empty when the row passes.
pub fn failures(row: &Row, outcome: &Outcome) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(why) = &outcome.killed {
        out.push(format!("killed by the harness: {why}"));
    }
    match (outcome.code, outcome.signal) {
        (Some(0..=2), _) => {}
        (Some(c), _) => out.push(format!("exit code {c}; 0, 1 or 2 expected")),
        (None, s) => out.push(format!("ended by signal {s:?}, not an exit code")),
    }
    if outcome.peak_rss_kib >= RSS_LIMIT_KIB {
        out.push(format!(
            "peak RSS {} MiB, over the {} MiB bound",
            outcome.peak_rss_kib / 1024,
            RSS_LIMIT_KIB / 1024
        ));
    }
    if outcome.wall > Duration::from_secs(row.wall_s) {
        out.push(format!(
            "wall time {:.1} s, over the row's {} s bound",
            outcome.wall.as_secs_f64(),
            row.wall_s
        ));
    }
    if let Err(e) = &outcome.report {
        out.push(e.clone());
    }
    if !outcome.leftovers.is_empty() {
        let sigkilled = outcome
            .killed
            .as_ref()
            .is_some_and(|k| k.contains("SIGKILL"));
        out.push(format!(
            "processes left after the run{}: {}",
            if sigkilled {
                " (the harness SIGKILLed mcp-chaos, which could not clean up)"
            } else {
                ""
            },
            outcome.leftovers.join("; ")
        ));
    }
    if let Some(p) = outcome.listening {
        out.push(format!("port {p} still listening after the run"));
    }
    let invariants = outcome.invariants();
    for owed in row.owed {
        match owed {
            Owed::Finding(name) if !invariants.contains_key(*name) => {
                out.push(format!("no {name} finding"));
            }
            Owed::NoFinding(name) if invariants.contains_key(*name) => {
                out.push(format!("a {name} finding, which is false here"));
            }
            Owed::NoFindings if !invariants.is_empty() => {
                out.push("findings, where none is owed".into());
            }
            Owed::Exit(code) if outcome.code != Some(*code) => {
                out.push(format!("exit code {:?}, {code} owed", outcome.code));
            }
            Owed::Check(what, check) => {
                if let Err(e) = check(outcome) {
                    out.push(format!("{what}: {e}"));
                }
            }
            _ => {}
        }
    }
    out
}

/// Runs `row`, prints and records its measurements, and panics with every failure. Rows run
/// one at a time (they are heavy on purpose, and the machine has two cores: two at once would
/// slow every other test down), unless `HOSTILE_PARALLEL` is set.
pub fn check(row: &Row) {
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    let _turn = std::env::var_os("HOSTILE_PARALLEL")
        .is_none()
        .then(|| ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner));
    let outcome = run(row);
    let failures = failures(row, &outcome);
    eprintln!("{}", outcome.summary(row));
    if let Ok(keep) = std::env::var("HOSTILE_KEEP_DIR") {
        // Keep the report and mcp-chaos's output for a look: <dir>/<row>/.
        let to = Path::new(&keep).join(row.name);
        let _ = fs::create_dir_all(&to);
        for file in ["report.json", "stdout", "stderr"] {
            let _ = fs::copy(outcome.dir.path().join(file), to.join(file));
        }
    }
    if let Ok(path) = std::env::var("HOSTILE_MEASURE_FILE") {
        let line = outcome.to_json(row, &failures).to_string();
        if let Ok(mut f) = fs::OpenOptions::new().create(true).append(true).open(path) {
            let _ = writeln!(f, "{line}");
        }
    }
    assert!(
        failures.is_empty(),
        "{} ({}, {}):\n- {}\n--- mcp-chaos stdout (end) ---\n{}\n--- mcp-chaos stderr (end) ---\n{}",
        row.name,
        row.server.transport(),
        row.server.command(),
        failures.join("\n- "),
        outcome.stdout_tail,
        outcome.stderr_tail,
    );
}

/// The harness's own probes can fail: a marked process, a listening port and a peak RSS are
/// seen, and stop being seen once gone.
#[test]
fn the_harness_probes_see_what_they_look_for() {
    let marker = format!("probe-self-test-{}", std::process::id());
    let mut child = Command::new("sleep")
        .arg("30")
        .env("HOSTILE_ROW", &marker)
        .spawn()
        .expect("sleep starts");
    let deadline = Instant::now() + SETTLE;
    while marked_processes(&marker).is_empty() && Instant::now() < deadline {
        std::thread::sleep(POLL);
    }
    let seen = marked_processes(&marker);
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0].0, child.id());
    child.kill().expect("sleep is killed");
    child.wait().expect("sleep is reaped");
    assert!(marked_processes(&marker).is_empty());

    // A port below the ephemeral range (32768 on): the tests running beside this one bind
    // port 0, so none of them can take this port between the drop and the second look.
    let listener = (0..2000u16)
        .map(|i| 20_000 + (u16::try_from(std::process::id() % 5000).unwrap_or(0) + i) % 10_000)
        .find_map(|port| std::net::TcpListener::bind(("127.0.0.1", port)).ok())
        .expect("a listener below the ephemeral range");
    let port = listener.local_addr().expect("its address").port();
    assert!(listens(port));
    drop(listener);
    assert!(!listens(port));

    assert!(vm_hwm_kib(std::process::id()).is_some_and(|kib| kib > 0));
}
