//! Streamable HTTP end to end: the fixture's HTTP mode, started by `--start`, is clean under
//! every version that has Streamable HTTP, and each HTTP flaw is caught as exactly its
//! invariant. A server that never opens its port is a clear error, exit 2, with nothing left
//! behind.

use std::time::{Duration, Instant};

use mcp_chaos_tests::{fixture, process_running, run_chaos};

/// A free loopback port.
fn port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

fn http_run(flaws: &[&str], version: &str, extra: &[&str]) -> mcp_chaos_tests::ChaosRun {
    let port = port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let mut start = format!("{} --http 127.0.0.1:{port}", fixture().display());
    for flaw in flaws {
        start = format!("{start} --flaw={flaw}");
    }
    let mut args = vec![
        "run",
        "--http",
        &url,
        "--start",
        &start,
        "--protocol-version",
        version,
        "--timeout-ms",
        "3000",
    ];
    args.extend_from_slice(extra);
    run_chaos(&args)
}

/// The correct HTTP fixture: no finding, with the whole campaign, under every version.
#[test]
fn correct_http_fixture_is_clean() {
    for version in ["2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"] {
        let run = http_run(&[], version, &["--cases", "8"]);
        assert_eq!(
            run.findings(),
            Vec::<serde_json::Value>::new(),
            "{version}: {}",
            run.stdout
        );
        assert_eq!(run.code, 0, "{version}");
        let report = run.report.expect("a report");
        assert_eq!(report["server"]["protocol_version"], version);
        assert!(
            report["server"]["url"]
                .as_str()
                .is_some_and(|u| u.starts_with("http://127.0.0.1:"))
        );
    }
}

fn check(flaw: &str, version: &str, invariant: &str) {
    let run = http_run(
        &[flaw],
        version,
        &["--skip-generated", "--skip-chaos", "--skip-tool-calls"],
    );
    assert_eq!(
        run.invariants(),
        vec![invariant.to_owned()],
        "{flaw} under {version}: {}",
        run.stdout
    );
    assert!(!run.with_severity("violation").is_empty(), "{flaw}");
    assert_eq!(run.code, 1, "{flaw}");
}

macro_rules! http_flaw_tests {
    ($($name:ident = $flaw:literal, $version:literal => $invariant:literal;)*) => {
        $(
            #[doc = concat!("`", $flaw, "` over HTTP (", $version, ") is caught as `", $invariant, "`.")]
            #[test]
            fn $name() {
                check($flaw, $version, $invariant);
            }
        )*
        /// The HTTP flaws covered here.
        pub const HTTP_FLAWS: &[&str] = &[$($flaw),*];
    };
}

http_flaw_tests! {
    any_origin = "http-any-origin", "2025-11-25" => "http-origin-not-validated";
    dead_session_400 = "http-dead-session-400", "2025-11-25" => "http-status";
    notification_200 = "http-notification-200", "2025-11-25" => "http-status";
    no_version_check = "http-no-version-check", "2025-11-25" => "http-status";
    wrong_content_type = "http-wrong-content-type", "2025-11-25" => "http-content-type";
    bad_session_id = "http-bad-session-id", "2025-11-25" => "session-id-format";
    malformed_sse = "http-malformed-sse", "2025-11-25" => "sse-malformed";
    stateless_unknown_method_400 = "http-stateless-unknown-method-400", "2026-07-28" => "http-status";
}

/// A server that never opens its port: a clear error and exit code 2 within the start timeout
/// (it is started once, so the run waits for one start timeout, not one per protocol version
/// tried, also under `--protocol-version all`), and no process or listening socket left.
#[test]
fn server_that_never_opens_its_port_exits_2() {
    for versions in [&[][..], &["--protocol-version", "all"]] {
        let port = port();
        let url = format!("http://127.0.0.1:{port}/mcp");
        let dir = tempfile::tempdir().expect("a temporary directory");
        let starts = dir.path().join("starts");
        let start = format!(
            "sh -c 'echo started >> {}; echo booting; exec sleep 31.4103'",
            starts.display()
        );
        let mut args = vec![
            "run",
            "--http",
            &url,
            "--start",
            &start,
            "--start-timeout-ms",
            "1500",
        ];
        args.extend_from_slice(versions);
        let run = run_chaos(&args);
        assert_eq!(run.code, 2, "{versions:?}: {}{}", run.stdout, run.stderr);
        assert!(
            run.stderr
                .contains(&format!("did not open port {port} within 1500 ms")),
            "{}",
            run.stderr
        );
        assert!(
            run.stderr.contains("booting"),
            "the server's output is shown: {}",
            run.stderr
        );
        assert_eq!(
            std::fs::read_to_string(&starts).expect("the start command ran"),
            "started\n",
            "{versions:?}: the server is started once"
        );
        let deadline = Instant::now() + Duration::from_secs(5);
        while process_running("sleep 31.4103") && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        assert!(
            !process_running("sleep 31.4103"),
            "the start command outlived the run"
        );
        assert!(
            std::net::TcpStream::connect(("127.0.0.1", port)).is_err(),
            "something listens on {port}"
        );
    }
}

/// No listening socket or process is left after a full HTTP run.
#[test]
fn nothing_is_left_after_an_http_run() {
    let port = port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let start = format!("{} --http 127.0.0.1:{port}", fixture().display());
    let run = run_chaos(&["run", "--http", &url, "--start", &start, "--skip-generated"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert!(
        std::net::TcpStream::connect(("127.0.0.1", port)).is_err(),
        "the server still listens on {port}"
    );
    assert!(!process_running(&format!("--http 127.0.0.1:{port}")));
}

/// A non-loopback URL is refused as a usage error.
#[test]
fn remote_urls_need_allow_remote() {
    let run = run_chaos(&["run", "--http", "http://example.com/mcp"]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(run.stderr.contains("--allow-remote"), "{}", run.stderr);
}
