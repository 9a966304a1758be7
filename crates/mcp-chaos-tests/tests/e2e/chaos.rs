//! Transport chaos end to end, over stdio and HTTP: each chaos flaw is caught as exactly its
//! invariant. The probes that need a slow tool call use the fixture's upstream tools, slowed
//! down by the fake upstream.

use mcp_chaos_tests::{fixture, fixture_command, run_chaos};

fn port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// A run with only the transport-chaos probes (and what they need: an upstream tool).
fn chaos_run(flaws: &[&str], http: bool, version: &str) -> mcp_chaos_tests::ChaosRun {
    let common = [
        "--upstream-env",
        "UPSTREAM_URL",
        "--env",
        "FIXTURE_UPSTREAM_TIMEOUT_MS=5000",
        "--faults",
        "ok",
        "--skip-probes",
        "--skip-generated",
        "--fault-cases",
        "0",
        "--skip-version-probe",
        "--timeout-ms",
        "4000",
        "--protocol-version",
        version,
    ];
    if http {
        let port = port();
        let url = format!("http://127.0.0.1:{port}/mcp");
        let mut start = format!("{} --http 127.0.0.1:{port}", fixture().display());
        for flaw in flaws {
            start = format!("{start} --flaw={flaw}");
        }
        let mut args = vec!["run", "--http", &url, "--start", &start];
        args.extend_from_slice(&common);
        run_chaos(&args)
    } else {
        let command = fixture_command(flaws);
        let mut args = vec!["run", "--stdio", &command];
        args.extend_from_slice(&common);
        run_chaos(&args)
    }
}

fn check(flaw: &str, http: bool, version: &str, invariant: &str, violation: bool) {
    let run = chaos_run(&[flaw], http, version);
    let transport = if http { "HTTP" } else { "stdio" };
    let names = run.invariants();
    assert!(
        names.contains(&invariant.to_owned()),
        "{flaw} over {transport} ({version}): {names:?}\n{}",
        run.stdout
    );
    // A blocked loop cannot read the cancellation in time either; nothing else may appear.
    let allowed = [invariant, "response-after-cancel"];
    assert!(
        names.iter().all(|n| allowed.contains(&n.as_str())),
        "{flaw} over {transport}: {names:?}\n{}",
        run.stdout
    );
    assert_eq!(
        run.findings()
            .iter()
            .any(|f| f["invariant"] == invariant && f["severity"] == "violation"),
        violation,
        "{flaw}: {}",
        run.stdout
    );
}

/// The correct fixture passes every chaos probe, on both transports.
#[test]
fn correct_fixture_survives_chaos() {
    for http in [false, true] {
        let run = chaos_run(&[], http, "2025-11-25");
        assert_eq!(
            run.findings(),
            Vec::<serde_json::Value>::new(),
            "http={http}: {}",
            run.stdout
        );
    }
}

macro_rules! chaos_tests {
    ($($name:ident = $flaw:literal, $http:literal, $version:literal => $invariant:literal, $violation:literal;)*) => {
        /// The flaws covered here.
        pub const CHAOS_FLAWS: &[&str] = &[$($flaw),*];
        $(
            #[doc = concat!("`", $flaw, "` is caught as `", $invariant, "`.")]
            #[test]
            fn $name() {
                check($flaw, $http, $version, $invariant, $violation);
            }
        )*
    };
}

chaos_tests! {
    blocking_call_stdio = "blocking-call", false, "2025-11-25" => "unresponsive-during-call", true;
    blocking_call_http = "blocking-call", true, "2025-11-25" => "unresponsive-during-call", true;
    answer_after_cancel_stdio = "answer-after-cancel", false, "2025-11-25" => "response-after-cancel", false;
    answer_after_cancel_http = "answer-after-cancel", true, "2025-11-25" => "response-after-cancel", false;
    crash_on_disconnect_http = "crash-on-disconnect", true, "2025-11-25" => "server-died", true;
    crash_on_disconnect_stdio = "crash-on-disconnect", false, "2025-11-25" => "server-died", false;
    duplicate_id_crash_stdio = "duplicate-id-crash", false, "2025-11-25" => "server-died", true;
    large_frame_hang_stdio = "large-frame-hang", false, "2025-11-25" => "not-alive", true;
    large_frame_hang_http = "large-frame-hang", true, "2025-11-25" => "not-alive", true;
    stateless_chaos_blocking = "blocking-call", false, "2026-07-28" => "unresponsive-during-call", true;
}
