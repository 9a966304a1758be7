//! The library API as a server author uses it in `cargo test`: a `proptest!` block over a
//! tool's generated arguments, one over (arguments, upstream fault) against the fake upstream,
//! an invariant of the author's own, and the shipped example run against the fixture server.

use std::time::Duration;

use mcp_chaos::finding::{Finding, Severity};
use mcp_chaos::harness::{ExchangeView, Invariant, USER_CODE};
use mcp_chaos::strategies::{self, ScopedFault};
use mcp_chaos::{Harness, Tool};
use mcp_chaos_tests::fixture_command;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestError, TestRng, TestRunner};
use serde_json::Value;

/// The fixture with `flaws`, its upstream tools pointed at a fake upstream (the fixture reads
/// its URL from `UPSTREAM_URL`), a 1 s upstream timeout inside a 5 s deadline per request.
fn with_upstream(flaws: &[&str]) -> Harness {
    Harness::builder()
        .stdio(&fixture_command(flaws))
        .upstream_env("UPSTREAM_URL")
        .env("FIXTURE_UPSTREAM_TIMEOUT_MS", "1000")
        .timeout(Duration::from_secs(5))
        .start()
        .expect("the fixture starts")
}

/// The property: a call under a fault draws no finding.
fn behaves(
    server: &Harness,
    tool: &Tool,
    args: &Value,
    fault: &ScopedFault,
) -> Result<(), TestCaseError> {
    let findings = server.check_tool_under(tool, args, fault);
    prop_assert!(findings.is_empty(), "{args} under {fault}: {findings:#?}");
    Ok(())
}

/// Runs [`behaves`] over `(arguments, fault)` with a fixed seed (so the test is the same on
/// every run) and returns proptest's verdict, with the shrunk pair when it fails.
#[expect(
    clippy::result_large_err,
    reason = "proptest's own verdict, returned as is"
)]
fn under_faults(
    server: &Harness,
    tool: &Tool,
    cases: u32,
) -> Result<(), TestError<(Value, ScopedFault)>> {
    let config = Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    };
    let mut runner =
        TestRunner::new_with_rng(config, TestRng::deterministic_rng(RngAlgorithm::ChaCha));
    runner.run(
        &(strategies::arguments(tool), strategies::faults()),
        |(args, fault)| behaves(server, tool, &args, &fault),
    )
}

/// The fixture whose `weather` tool answers an upstream 404 with a JSON-RPC error is found by
/// a proptest over (arguments, fault), and the failure shrinks to the simplest arguments and
/// the simplest fault that shows it: derived here by trying each fault of the strategy, in its
/// shrink order, on every request; the arguments to the required properties only, each as
/// short as the schema allows.
#[test]
fn a_fault_proptest_finds_and_shrinks_an_upstream_flaw() {
    let server = with_upstream(&["protocol-error-on-404"]);
    let weather = server.tool("weather").expect("a weather tool").clone();
    let args = serde_json::json!({"city": "a"});
    let expected = strategies::faults()
        .fault_list()
        .iter()
        .map(|f| ScopedFault::every(f.clone()))
        .find(|f| !server.check_tool_under(&weather, &args, f).is_empty())
        .expect("some fault shows the flaw");
    let result = under_faults(&server, &weather, 256);
    let Err(TestError::Fail(_, (shrunk_args, shrunk_fault))) = result else {
        panic!("the flaw was not found: {result:?}");
    };
    assert_eq!(
        shrunk_fault, expected,
        "shrunk to {shrunk_args} under {shrunk_fault}"
    );
    let schema = &weather.input_schema;
    let required: Vec<&str> = schema["required"]
        .as_array()
        .expect("required properties")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let keys: Vec<&str> = shrunk_args
        .as_object()
        .expect("an object")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, required, "{shrunk_args}");
    let min = schema["properties"]["city"]["minLength"]
        .as_u64()
        .expect("a minLength");
    let city = shrunk_args["city"].as_str().expect("a city");
    assert_eq!(city.chars().count() as u64, min, "{shrunk_args}");
    let findings = server.check_tool_under(&weather, &shrunk_args, &shrunk_fault);
    let names: Vec<&str> = findings.iter().map(|f| f.invariant.as_str()).collect();
    assert!(
        names.contains(&"business-failure-as-protocol-error"),
        "{shrunk_args} under {shrunk_fault}: {findings:#?}"
    );
    eprintln!("shrunk to {shrunk_args} under {shrunk_fault}");
}

/// The correct fixture passes the same property, written as a user would with `proptest!`.
#[test]
fn the_correct_fixture_passes_the_fault_proptest() {
    let server = with_upstream(&[]);
    let weather = server.tool("weather").expect("a weather tool").clone();
    assert_eq!(under_faults(&server, &weather, 64), Ok(()));
    proptest!(ProptestConfig::with_cases(16), |(args in strategies::arguments(&weather), fault in strategies::faults())| {
        behaves(&server, &weather, &args, &fault)?;
    });
}

/// A user invariant: a failed `weather` call names the service that failed.
struct ErrorNamesTheService;

impl Invariant for ErrorNamesTheService {
    fn name(&self) -> &str {
        "weather-error-names-the-service"
    }
    fn severity(&self) -> Severity {
        Severity::Violation
    }
    fn check(&self, call: &ExchangeView<'_>) -> Option<String> {
        let named = call.text().contains("weather service");
        (call.tool() == "weather" && call.is_error_result() && !named).then(|| {
            format!(
                "the error {:?} does not name the weather service",
                call.text()
            )
        })
    }
}

fn user_findings(flaws: &[&str]) -> Vec<Finding> {
    let server = Harness::builder()
        .stdio(&fixture_command(flaws))
        .upstream_env("UPSTREAM_URL")
        .invariant(ErrorNamesTheService)
        .start()
        .expect("the fixture starts");
    let weather = server.tool("weather").expect("a weather tool").clone();
    let args = serde_json::json!({"city": "Oslo"});
    let mut findings = server.check_tool(&weather, &args);
    for fault in ["not-found", "unavailable", "hang"] {
        let fault = ScopedFault::every(fault.parse().expect("a fault profile"));
        findings.extend(server.check_tool_under(&weather, &args, &fault));
    }
    findings.retain(|f| f.code == USER_CODE);
    findings
}

/// The invariant fires on a fixture that reports every upstream failure as "Error: failed"
/// (once per failing fault, not on the healthy call), and stays silent on the correct
/// fixture, which names the service.
#[test]
fn a_user_invariant_fires_on_a_fixture_that_breaks_it_only() {
    let broken = user_findings(&["generic-error"]);
    assert_eq!(broken.len(), 3, "{broken:#?}");
    for f in &broken {
        assert_eq!(f.invariant, "weather-error-names-the-service");
        assert_eq!(f.severity, Severity::Violation);
        assert_eq!(f.tool.as_deref(), Some("weather"));
        assert!(f.message.contains("Error: failed"), "{}", f.message);
        assert!(f.fault.is_some(), "{f:#?}");
    }
    let kept = user_findings(&[]);
    assert!(kept.is_empty(), "{kept:#?}");
}

/// Five lines of proptest against the correct fixture: no finding for any valid or invalid
/// arguments of `echo`.
#[test]
fn proptest_over_generated_arguments() {
    let server = Harness::stdio(&fixture_command(&[])).expect("the fixture starts");
    let echo = server.tool("echo").expect("an echo tool").clone();
    proptest!(ProptestConfig::with_cases(32), |(args in strategies::arguments(&echo))| {
        let findings = server.check_tool(&echo, &args);
        prop_assert!(findings.is_empty(), "{findings:#?}");
    });
    proptest!(ProptestConfig::with_cases(16), |(case in strategies::invalid_arguments(&echo))| {
        let findings = server.check_invalid(&echo, &case);
        prop_assert!(findings.is_empty(), "{findings:#?}");
    });
}

/// The same check finds a planted crash, and proptest shrinks it to a minimal text.
#[test]
fn proptest_finds_and_shrinks_a_planted_crash() {
    let server = Harness::stdio(&fixture_command(&["crash-on-nul"])).expect("the fixture starts");
    let echo = server.tool("echo").expect("an echo tool").clone();
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: 256,
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    let result = runner.run(&strategies::arguments(&echo), |args| {
        let findings = server.check_tool(&echo, &args);
        prop_assert!(findings.is_empty(), "{findings:?}");
        Ok(())
    });
    let Err(proptest::test_runner::TestError::Fail(_, minimal)) = result else {
        panic!("the planted crash was not found: {result:?}");
    };
    assert_eq!(minimal, serde_json::json!({"text": "\u{0}"}));
}

/// The example under crates/mcp-chaos/examples runs against the fixture and exits 0.
#[test]
fn example_check_server_runs_clean_on_the_fixture() {
    let example = mcp_chaos_tests::fixture()
        .parent()
        .expect("a target folder")
        .join("examples")
        .join("check_server");
    if !example.exists() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = std::process::Command::new(cargo)
            .args([
                "build",
                "--quiet",
                "-p",
                "mcp-chaos",
                "--example",
                "check_server",
            ])
            .status()
            .expect("cargo runs");
        assert!(status.success());
    }
    let out = std::process::Command::new(&example)
        .arg(fixture_command(&[]))
        .output()
        .expect("the example runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("echo: 0 finding(s)"), "{stdout}");
    // With a fake upstream: the upstream tools, also under drawn faults, still clean.
    let out = std::process::Command::new(&example)
        .args([fixture_command(&[]).as_str(), "UPSTREAM_URL"])
        .env("FIXTURE_UPSTREAM_TIMEOUT_MS", "1000")
        .output()
        .expect("the example runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("weather: 0 finding(s)"), "{stdout}");
    assert!(stdout.contains("forecast: 0 finding(s)"), "{stdout}");
}

/// Every finding `check_tool_under` reports for `weather {"city": "Oslo"}` under `fault`.
fn weather_under(server: &Harness, fault: &str) -> Vec<String> {
    let weather = server.tool("weather").expect("a weather tool").clone();
    let fault = ScopedFault::every(fault.parse().expect("a fault profile"));
    let args = serde_json::json!({"city": "Oslo"});
    let mut names: Vec<String> = server
        .check_tool_under(&weather, &args, &fault)
        .into_iter()
        .map(|f| f.invariant)
        .collect();
    names.sort();
    names.dedup();
    names
}

/// The leak oracle looks for the fake upstream's canaries: a fixture that appends the
/// upstream's raw body to its error leaks them; the correct fixture does not.
#[test]
fn check_tool_under_finds_leaked_canaries() {
    let leaky = with_upstream(&["echo-upstream-body"]);
    assert!(
        weather_under(&leaky, "server-error-500").contains(&"leaked-internals".to_owned()),
        "{:?}",
        weather_under(&leaky, "server-error-500")
    );
    let correct = with_upstream(&[]);
    assert_eq!(
        weather_under(&correct, "server-error-500"),
        Vec::<String>::new()
    );
}

/// An HTTP server started by the harness (`start_command`) gets the fake upstream's URL in its
/// environment, and is judged the same way.
#[test]
fn an_http_server_with_a_start_command_is_checked_under_faults() {
    let http = |flaws: &[&str]| {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        Harness::builder()
            .http(&format!("http://127.0.0.1:{port}/mcp"))
            .start_command(&format!(
                "{} --http 127.0.0.1:{port}",
                fixture_command(flaws)
            ))
            .upstream_env("UPSTREAM_URL")
            .start()
            .expect("the HTTP fixture starts")
    };
    let flawed = http(&["protocol-error-on-404"]);
    assert_eq!(
        weather_under(&flawed, "not-found"),
        ["business-failure-as-protocol-error"]
    );
    let correct = http(&[]);
    assert_eq!(weather_under(&correct, "not-found"), Vec::<String>::new());
}

/// A builder without a server is an error, not a panic.
#[test]
fn a_builder_without_a_server_is_an_error() {
    let err = Harness::builder().start().expect_err("no server");
    assert!(
        err.to_string().contains("stdio(COMMAND LINE) or http(URL)"),
        "{err}"
    );
    let err = Harness::builder()
        .stdio("'unbalanced")
        .start()
        .expect_err("bad quotes");
    assert!(
        matches!(err, mcp_chaos::harness::HarnessError::Start(_)),
        "{err}"
    );
}
