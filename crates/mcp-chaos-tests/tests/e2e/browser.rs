//! Loading an HTML report in headless Chromium (Debian's `chromium` package): what the browser
//! made of the page (its DOM after load, `--dump-dom`), every network request the page made,
//! read from Chromium's own network log (`--log-net-log`), and a screenshot of the page as
//! painted (`--screenshot`); always with the network cut off (every HTTP request goes to a
//! closed loopback proxy port).
//!
//! Chromium makes requests of its own (component updates, the time service, accounts) even
//! with background networking disabled; they carry no page origin. A request the page made
//! carries the page's: its network isolation key names `file://` and its initiator is the
//! page's origin (`null` for a file) instead of `not an origin`.
//! [`the_network_log_sees_a_page_request`] checks that a page that does fetch something is
//! seen doing so, so that "zero requests" is not the reading of a blind log.
//!
//! Without a Chromium binary (`chromium`, `chromium-browser`, `google-chrome` on PATH, or
//! `MCP_CHAOS_CHROMIUM`), [`render`] and [`screenshot`] print a SKIPPED line on stderr
//! (uncaptured: it shows in a plain `cargo test`) and return `None`, so the README's
//! `cargo test --workspace` passes where no browser is installed; with
//! `MCP_CHAOS_REQUIRE_CHROMIUM=1` (set by `.ci/run`, which installs Chromium) they fail
//! instead.

use std::io::{Read as _, Write as _};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// How long one page load may take, Chromium's start and exit included.
const LOAD_DEADLINE: Duration = Duration::from_secs(90);

/// A page as headless Chromium loaded it.
#[derive(Debug)]
pub struct Rendered {
    /// The DOM after the load event, serialized (`--dump-dom`).
    pub dom: String,
    /// The URL of every request the page made (never Chromium's own), in log order.
    pub page_requests: Vec<String>,
}

/// The Chromium binary: `MCP_CHAOS_CHROMIUM`, else the first of `chromium`,
/// `chromium-browser`, `google-chrome` on PATH.
fn chromium() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("MCP_CHAOS_CHROMIUM") {
        return Some(PathBuf::from(path));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|dir| {
            ["chromium", "chromium-browser", "google-chrome"].map(|name| dir.join(name))
        })
        .find(|p| p.is_file())
}

/// Loads `page` (a file) in headless Chromium; `None` (after a loud SKIPPED line) when there
/// is no Chromium and `MCP_CHAOS_REQUIRE_CHROMIUM` is not `1`.
///
/// # Panics
/// No Chromium while `MCP_CHAOS_REQUIRE_CHROMIUM=1`; Chromium failing, or taking longer than
/// 90 s; a network log that is not JSON.
pub fn render(test: &str, page: &Path) -> Option<Rendered> {
    let chromium = find_or_skip(test)?;
    let dir = tempfile::tempdir().expect("a temporary directory");
    let net_log = dir.path().join("net-log.json");
    let dom_path = dir.path().join("dom.html");
    launch(
        &chromium,
        dir.path(),
        page,
        &[
            format!("--log-net-log={}", net_log.display()),
            "--dump-dom".to_owned(),
        ],
        Some(&dom_path),
    );
    let stderr_path = dir.path().join("stderr");
    let dom = std::fs::read_to_string(&dom_path).expect("the DOM");
    let log: Value = serde_json::from_str(
        &std::fs::read_to_string(&net_log)
            .unwrap_or_else(|e| panic!("no network log: {e}\n{}", tail(&stderr_path))),
    )
    .expect("the network log is JSON");
    Some(Rendered {
        dom,
        page_requests: page_requests(&log),
    })
}

/// Runs headless Chromium on `page` with `args` (plus the flags that keep it offline and
/// quiet), its stdout into `stdout` (else discarded), its profile and stderr (`stderr`) in
/// `dir`; waits at most [`LOAD_DEADLINE`].
fn launch(chromium: &Path, dir: &Path, page: &Path, args: &[String], stdout: Option<&Path>) {
    let stderr_path = dir.join("stderr");
    // A port nothing listens on: the proxy of every HTTP(S) request, so none leaves the host.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a loopback port");
    let page = std::fs::canonicalize(page).expect("the page exists");
    let mut child = Command::new(chromium)
        .args([
            "--headless=new",
            // The tests may run as root (CI containers), where the sandbox cannot start.
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
            "--disable-default-apps",
            "--metrics-recording-only",
            "--net-log-capture-mode=Default",
        ])
        .arg(format!("--proxy-server=http://{closed}"))
        .arg(format!("--user-data-dir={}", dir.join("profile").display()))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(match stdout {
            Some(path) => Stdio::from(std::fs::File::create(path).expect("the stdout file")),
            None => Stdio::null(),
        })
        .stderr(std::fs::File::create(&stderr_path).expect("the stderr file"))
        .process_group(0)
        .spawn()
        .unwrap_or_else(|e| panic!("{} does not start: {e}", chromium.display()));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("waitable") {
            break status;
        }
        if started.elapsed() > LOAD_DEADLINE {
            // The whole group: Chromium's zygote and renderer processes too.
            let _ = Command::new("kill")
                .args(["-KILL", &format!("-{}", child.id())])
                .status();
            let _ = child.wait();
            panic!(
                "Chromium took over {LOAD_DEADLINE:?} to load {}:\n{}",
                page.display(),
                tail(&stderr_path)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(
        status.success(),
        "Chromium failed ({status}) on {}:\n{}",
        page.display(),
        tail(&stderr_path)
    );
}

/// A screenshot of `page` as headless Chromium paints it in a 1280 × 1600 window: the PNG's
/// bytes; `None` as for [`render`].
pub fn screenshot(test: &str, page: &Path) -> Option<Vec<u8>> {
    let chromium = find_or_skip(test)?;
    let dir = tempfile::tempdir().expect("a temporary directory");
    let png = dir.path().join("page.png");
    launch(
        &chromium,
        dir.path(),
        page,
        &[
            "--window-size=1280,1600".to_owned(),
            "--hide-scrollbars".to_owned(),
            format!("--screenshot={}", png.display()),
        ],
        None,
    );
    let bytes = std::fs::read(&png).expect("a screenshot");
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    Some(bytes)
}

/// The Chromium binary, or `None` after a loud SKIPPED line (see the module documentation).
///
/// # Panics
/// No Chromium while `MCP_CHAOS_REQUIRE_CHROMIUM=1`.
fn find_or_skip(test: &str) -> Option<PathBuf> {
    let found = chromium();
    if found.is_none() {
        assert!(
            std::env::var("MCP_CHAOS_REQUIRE_CHROMIUM").as_deref() != Ok("1"),
            "MCP_CHAOS_REQUIRE_CHROMIUM=1 but no Chromium found (install the Debian package \
             chromium, or set MCP_CHAOS_CHROMIUM to the binary)"
        );
        // Straight to the process's stderr, past the test harness's capture of eprintln!, so
        // that the skip shows in a plain `cargo test` run.
        let _ = writeln!(
            std::io::stderr(),
            "\n*** SKIPPED {test}: no Chromium on PATH (apt-get install chromium, or set \
             MCP_CHAOS_CHROMIUM); the HTML report was NOT loaded in a browser. .ci/run sets \
             MCP_CHAOS_REQUIRE_CHROMIUM=1 so that CI cannot skip this. ***\n"
        );
    }
    found
}

/// The URLs of the requests started on behalf of a page in `log` (a Chromium net-log): the
/// `URL_REQUEST_START_JOB` events with a page origin (see the module documentation).
fn page_requests(log: &Value) -> Vec<String> {
    let start_job = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"].as_u64();
    assert!(start_job.is_some(), "a net-log without its event types");
    log["events"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["type"].as_u64() == start_job)
        .filter_map(|e| {
            let p = &e["params"];
            let url = p["url"].as_str()?;
            let by_page = p["initiator"].as_str() != Some("not an origin")
                || p["network_isolation_key"]
                    .as_str()
                    .is_some_and(|k| k.contains("file://"));
            (by_page && !url.starts_with("file:")).then(|| url.to_owned())
        })
        .collect()
}

/// The last 4 KiB of the file at `path`, for failure messages.
fn tail(path: &Path) -> String {
    let mut text = String::new();
    if let Ok(mut f) = std::fs::File::open(path) {
        let _ = f.read_to_string(&mut text);
    }
    let cut = text.len().saturating_sub(4096);
    let cut = (cut..=text.len())
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0);
    text[cut..].to_owned()
}

/// The log is not blind: a page that loads an image and runs a script is seen making the
/// request, and the dumped DOM is the one after its script ran.
#[test]
fn the_network_log_sees_a_page_request() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let page = dir.path().join("control.html");
    std::fs::write(
        &page,
        "<!DOCTYPE html><html><body><p id=\"p\">before</p>\
         <img src=\"http://127.0.0.1:9/control.png\">\
         <script>document.getElementById('p').textContent = 'after';</script></body></html>",
    )
    .expect("the control page");
    let Some(rendered) = render("the_network_log_sees_a_page_request", &page) else {
        return;
    };
    assert_eq!(
        rendered.page_requests,
        ["http://127.0.0.1:9/control.png"],
        "{rendered:?}"
    );
    assert!(
        rendered.dom.contains("<p id=\"p\">after</p>"),
        "{}",
        rendered.dom
    );
}
