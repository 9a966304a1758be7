//! Upstream fault injection end to end: the fixture's upstream tools under every fault
//! profile. The correct fixture handles each one and yields no finding; each fault-handling
//! flaw is caught as exactly its invariant, and every finding names the fault and the
//! upstream request it hit.

use mcp_chaos_tests::{fixture_command, run_chaos};

/// The arguments of a fault campaign against the fixture: the one-per-profile sweep only
/// (protocol probes skipped: the protocol invariants have their own tests; the fault
/// properties, `--fault-cases`, too: [`reach_fault_properties_find_the_first_failure_flaw`]).
fn fault_run(flaws: &[&str], extra: &[&str]) -> mcp_chaos_tests::ChaosRun {
    let command = fixture_command(flaws);
    let mut args = vec![
        "run",
        "--stdio",
        &command,
        "--upstream-env",
        "UPSTREAM_URL",
        "--env",
        "FIXTURE_UPSTREAM_TIMEOUT_MS=1000",
        "--timeout-ms",
        "3000",
        "--skip-probes",
        "--skip-version-probe",
        "--skip-chaos",
        "--skip-generated",
        "--fault-cases",
        "0",
        "--protocol-version",
        "2025-11-25",
        "--seed",
        "42",
    ];
    args.extend_from_slice(extra);
    run_chaos(&args)
}

/// Asserts that a run over all 18 profiles made every call (6 baseline calls + 3 upstream
/// tools x 18 fault profiles) and found nothing.
fn assert_clean_over_every_fault(run: &mcp_chaos_tests::ChaosRun) {
    assert_eq!(
        run.findings(),
        Vec::<serde_json::Value>::new(),
        "{}",
        run.stdout
    );
    assert_eq!(run.code, 0);
    let summary = &run.report.as_ref().expect("a report")["summary"];
    assert_eq!(summary["tool_calls"], 60, "{summary}");
}

/// The correct fixture handles all 18 standard fault profiles without a finding.
#[test]
fn correct_fixture_handles_every_fault() {
    let run = fault_run(&[], &[]);
    assert_clean_over_every_fault(&run);
    assert_eq!(run.report.as_ref().expect("a report")["seed"], 42);
}

/// A secret handed to the correct fixture never shows up.
#[test]
fn correct_fixture_keeps_a_secret() {
    let run = fault_run(
        &[],
        &[
            "--secret-env",
            "FIXTURE_API_KEY=s3cr3t-9f8e7d6c",
            "--faults",
            "not-found,ok",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = run.report.as_ref().expect("a report");
    // 6 baseline calls + 3 upstream tools x 2 fault profiles.
    assert_eq!(report["summary"]["tool_calls"], 12, "{report}");
    assert_eq!(
        run.findings(),
        Vec::<serde_json::Value>::new(),
        "{}",
        run.stdout
    );
}

fn check(flaw: &str, invariant: &str, violation: bool) {
    let run = fault_run(&[flaw], &[]);
    assert_eq!(
        run.invariants(),
        vec![invariant.to_owned()],
        "flaw {flaw}: {}",
        run.stdout
    );
    assert_eq!(
        !run.with_severity("violation").is_empty(),
        violation,
        "flaw {flaw}"
    );
    assert_eq!(run.code, i32::from(violation), "flaw {flaw}");
    for f in run.findings() {
        let fault = &f["fault"];
        assert!(fault["name"].is_string(), "finding without its fault: {f}");
        let hits = fault["upstream_requests"]
            .as_array()
            .expect("upstream requests");
        assert!(
            !hits.is_empty(),
            "finding without the upstream request it hit: {f}"
        );
        assert!(
            hits[0]["target"]
                .as_str()
                .is_some_and(|t| t.starts_with('/'))
        );
    }
}

macro_rules! fault_flaw_tests {
    ($($name:ident = $flaw:literal => $invariant:literal, $violation:literal;)*) => {
        /// The flaws covered here.
        pub const FAULT_FLAWS: &[&str] = &[$($flaw),*];
        $(
            #[doc = concat!("The flaw `", $flaw, "` is caught as `", $invariant, "`.")]
            #[test]
            fn $name() {
                check($flaw, $invariant, $violation);
            }
        )*
    };
}

fault_flaw_tests! {
    protocol_error_on_404 = "protocol-error-on-404" => "business-failure-as-protocol-error", true;
    empty_success_on_5xx = "empty-success-on-5xx" => "error-masked-as-success", true;
    echo_upstream_body = "echo-upstream-body" => "leaked-internals", true;
    leak_stack_trace = "leak-stack-trace" => "leaked-internals", true;
    ignore_upstream_timeout = "ignore-upstream-timeout" => "deadline-exceeded", true;
    bad_structured_content = "bad-structured-content" => "structured-content-schema", true;
    generic_error = "generic-error" => "unactionable-error", false;
    raw_exception_text = "raw-exception-text" => "unactionable-error", false;
}

/// Flaws that only a fault scoped to some of a call's upstream requests reaches: the fault
/// phase (every request, every profile) misses them, as
/// [`the_lookup_flaw_is_out_of_reach_of_faults_on_every_request`] shows; the scenario test
/// `a_scoped_fault_finds_the_lookup_flaw_and_the_correct_fixture_passes` catches them.
pub const SCOPED_FAULT_FLAWS: &[&str] = &["empty-success-on-lookup-failure"];

/// `empty-success-on-lookup-failure` mishandles a failure of the forecast tool's first request
/// only: under each of the 18 profiles on every request, the fallback request fails too and
/// the failure is reported well, so the one-per-profile sweep finds nothing.
#[test]
fn the_lookup_flaw_is_out_of_reach_of_faults_on_every_request() {
    assert_clean_over_every_fault(&fault_run(&["empty-success-on-lookup-failure"], &[]));
}

/// A server that echoes the upstream body leaks the canaries, and the report says so with
/// the fault and request that carried them; a leaked secret is redacted from the report.
#[test]
fn leaked_secret_is_redacted_from_the_report() {
    // The fixture with echo-upstream-body echoes whatever the upstream sends; the upstream's
    // canaries are fake, but a --secret-env value that reaches the output must be redacted.
    let run = fault_run(
        &["echo-upstream-body"],
        &[
            "--secret-env",
            "UNUSED_SECRET=never-shown-7a6b5c",
            "--faults",
            "not-found",
        ],
    );
    assert_eq!(run.invariants(), vec!["leaked-internals".to_owned()]);
    let text = serde_json::to_string(&run.report).expect("json");
    assert!(!text.contains("never-shown-7a6b5c"));
    let f = &run.findings()[0];
    assert_eq!(f["fault"]["name"], "not-found");
    assert!(
        f["message"].as_str().is_some_and(|m| m.contains("canary")),
        "{f}"
    );
}

/// Flaws behind a tool that reaches its upstream only for some arguments, or that mishandles
/// a failure of one of its requests only: the default campaign (with only the flags that point
/// the fixture at its fake upstream) catches each, by learning upstream reach from every call.
pub const REACH_FLAWS: &[&str] = &[
    "upstream-only-for-slash-paths",
    "first-upstream-failure-mishandled",
];

/// The default campaign against the fixture, with the flags that point it at the fake
/// upstream (and `fetch_page` listed).
fn reach_run(flaws: &[&str], extra: &[&str]) -> mcp_chaos_tests::ChaosRun {
    let command = fixture_command(flaws);
    let mut args = vec![
        "run",
        "--stdio",
        &command,
        "--upstream-env",
        "UPSTREAM_URL",
        "--env",
        "FIXTURE_UPSTREAM_TIMEOUT_MS=1000",
        "--env",
        "FIXTURE_PAGE_TOOL=1",
        "--timeout-ms",
        "3000",
        "--seed",
        "42",
    ];
    args.extend_from_slice(extra);
    run_chaos(&args)
}

/// `summary.upstream`'s record of `tool`.
fn reach_of(run: &mcp_chaos_tests::ChaosRun, tool: &str) -> serde_json::Value {
    run.report.as_ref().expect("a report")["summary"]["upstream"]
        .as_array()
        .and_then(|a| a.iter().find(|t| t["tool"] == tool).cloned())
        .unwrap_or_else(|| panic!("no upstream record of {tool}: {}", run.stdout))
}

/// `fetch_page` builds `base_url + path` under `upstream-only-for-slash-paths`: its simple
/// example `path = "a"` never reaches the upstream, a generated `/…` path does, and the fault
/// phase then calls it with the smallest such path and finds the empty success.
#[test]
fn reach_learned_from_generated_calls_finds_the_slash_path_flaw() {
    let run = reach_run(&["upstream-only-for-slash-paths"], &[]);
    assert_eq!(
        run.invariants(),
        vec!["error-masked-as-success".to_owned()],
        "{}",
        run.stdout
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    let page = reach_of(&run, "fetch_page");
    assert_eq!(page["reached"], true, "{page}");
    assert_eq!(
        page["arguments"],
        serde_json::json!({"path": "/"}),
        "{page}"
    );
    for f in run.findings() {
        assert_eq!(f["tool"], "fetch_page", "{f}");
        assert!(
            f["request"]
                .as_str()
                .is_some_and(|r| r.contains(r#""arguments":{"path":"/"}"#)),
            "not the smallest reaching arguments: {f}"
        );
    }
    // The other tools: the echo tool never reaches, and says how many calls tried.
    let echo = reach_of(&run, "echo");
    assert_eq!(echo["reached"], false, "{echo}");
    assert!(
        echo["calls_tried"].as_u64().is_some_and(|n| n > 10),
        "{echo}"
    );
}

/// Without the generated phase, only the baseline call (`path = "a"`) tries: the report says
/// the tool was not reached in 1 call, and nothing is found.
#[test]
fn reach_from_the_baseline_alone_misses_the_slash_path_flaw_and_says_so() {
    let run = reach_run(
        &["upstream-only-for-slash-paths"],
        &["--skip-generated", "--skip-probes", "--skip-chaos"],
    );
    assert_eq!(
        run.findings(),
        Vec::<serde_json::Value>::new(),
        "{}",
        run.stdout
    );
    let page = reach_of(&run, "fetch_page");
    assert_eq!(page["reached"], false, "{page}");
    assert_eq!(page["calls_tried"], 1, "{page}");
    assert!(page.get("arguments").is_none(), "{page}");
    assert!(
        run.stdout.contains("not reached by") && run.stdout.contains("fetch_page (1 calls)"),
        "{}",
        run.stdout
    );
}

/// The correct fixture's `fetch_page` (robots.txt, then the page; a missing leading `/` put
/// back) passes the default campaign with upstream faults, and reaches with its example.
#[test]
fn reach_correct_fixture_with_the_page_tool_is_clean() {
    let run = reach_run(&[], &[]);
    assert_eq!(
        run.findings(),
        Vec::<serde_json::Value>::new(),
        "{}",
        run.stdout
    );
    assert_eq!(run.code, 0);
    let page = reach_of(&run, "fetch_page");
    assert_eq!(page["reached"], true, "{page}");
    assert_eq!(
        page["arguments"],
        serde_json::json!({"path": "a"}),
        "{page}"
    );
}

/// `first-upstream-failure-mishandled`: the sweep (every request) misses it; the fault
/// properties draw a fault on the first request (robots.txt) only, find the empty success, and
/// shrink it to the smallest reaching arguments, the simplest failing fault and the simplest
/// scope (the first request only). The replay file carries that combination, and
/// `mcp-chaos replay` reproduces it against a fresh fake upstream.
#[test]
fn reach_fault_properties_find_the_first_failure_flaw() {
    let replays = tempfile::tempdir().expect("a temporary directory");
    let dir = replays.path().to_str().expect("utf-8");
    let run = reach_run(&["first-upstream-failure-mishandled"], &["--replays", dir]);
    assert_eq!(
        run.invariants(),
        vec!["error-masked-as-success".to_owned()],
        "{}",
        run.stdout
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    let findings = run.findings();
    assert_eq!(findings.len(), 1, "{findings:#?}");
    let f = &findings[0];
    assert_eq!(f["tool"], "fetch_page");
    assert_eq!(f["fault"]["scope"], "the first request only", "{f:#}");
    assert_eq!(
        f["fault"]["upstream_requests"][0]["target"], "/robots.txt",
        "{f:#}"
    );
    assert!(
        f["request"]
            .as_str()
            .is_some_and(|r| r.contains(r#""arguments":{"path":"a"}"#)),
        "not shrunk to the smallest reaching arguments: {f:#}"
    );
    let message = f["message"].as_str().unwrap_or("");
    assert!(message.contains("a fault property: shrunk in"), "{message}");
    let replay = f["replay"].as_str().expect("a replay file");
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(replay).expect("readable")).expect("JSON");
    assert_eq!(file["upstream"]["fault"]["only"], "first", "{file:#}");
    assert_eq!(
        file["upstream"]["upstream_env"][0], "UPSTREAM_URL",
        "{file:#}"
    );
    let again = run_chaos(&["replay", replay]);
    assert_eq!(again.code, 1, "{}{}", again.stdout, again.stderr);
    assert!(
        again.stdout.contains("STILL FAILS: MC202"),
        "{}",
        again.stdout
    );
}

/// The forecast tool's `empty-success-on-lookup-failure`, out of reach of the sweep, is found
/// by the fault properties too, shrunk to a fault on the first request only.
#[test]
fn reach_fault_properties_find_the_lookup_flaw() {
    let run = reach_run(
        &["empty-success-on-lookup-failure"],
        &["--skip-probes", "--skip-chaos", "--skip-version-probe"],
    );
    assert_eq!(
        run.invariants(),
        vec!["error-masked-as-success".to_owned()],
        "{}",
        run.stdout
    );
    let scopes: Vec<String> = run
        .findings()
        .iter()
        .map(|f| f["fault"]["scope"].as_str().unwrap_or("").to_owned())
        .collect();
    assert_eq!(scopes, ["the first request only"], "{}", run.stdout);
}

/// `mcp-chaos explain` describes upstream discovery and the fault properties as topics.
#[test]
fn reach_explain_describes_upstream_discovery_and_fault_properties() {
    let list = run_chaos(&["explain"]);
    assert!(
        list.stdout.contains("upstream, fault-properties"),
        "{}",
        list.stdout
    );
    let upstream = run_chaos(&["explain", "upstream"]);
    assert_eq!(upstream.code, 0);
    assert!(
        upstream.stdout.contains("path-shaped values"),
        "{}",
        upstream.stdout
    );
    let props = run_chaos(&["explain", "fault-properties"]);
    assert_eq!(props.code, 0);
    assert!(props.stdout.contains("the first only"), "{}", props.stdout);
    assert!(props.stdout.contains("--fault-cases"), "{}", props.stdout);
}
