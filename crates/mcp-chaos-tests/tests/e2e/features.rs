//! The features phase end to end: resources, templates, prompts, completion, logging,
//! pagination and capability gating. The correct fixture is clean over stdio and HTTP and
//! the report counts the requests per feature; a fixture that advertises only tools gets one
//! request per unadvertised feature, answered -32601 (clean); each feature flaw is caught as
//! exactly its invariant, at the severity the spec's words give it; `--features`,
//! `--skip-resources` and `--skip-prompts` narrow the phase.

use mcp_chaos_tests::{fixture, fixture_command, run_chaos};

/// A free loopback port.
fn port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// The fixture under `version`, without the transport chaos and the generated phase.
fn features_run(flaws: &[&str], version: &str, extra: &[&str]) -> mcp_chaos_tests::ChaosRun {
    let command = fixture_command(flaws);
    let mut args = vec![
        "run",
        "--stdio",
        &command,
        "--protocol-version",
        version,
        "--timeout-ms",
        "3000",
        "--skip-chaos",
        "--skip-generated",
    ];
    args.extend_from_slice(extra);
    run_chaos(&args)
}

#[test]
fn features_correct_fixture_is_clean_and_counted_over_stdio_and_http() {
    for version in ["2024-11-05", "2025-11-25", "2026-07-28"] {
        let run = features_run(&[], version, &[]);
        assert_eq!(
            run.findings(),
            Vec::<serde_json::Value>::new(),
            "{version}: {}",
            run.stdout
        );
        assert_eq!(run.code, 0, "{version}");
        let report = run.report.expect("a report");
        let f = &report["summary"]["features"];
        assert_eq!(f["resources_listed"], 3, "{version}: {f}");
        assert_eq!(f["templates_listed"], 1, "{version}: {f}");
        assert_eq!(f["prompts_listed"], 3, "{version}: {f}");
        // 2 + 1 pages, 2 invalid cursors, 3 reads, 1 template read, 1 unknown URI; and up to
        // 2025-11-25 (resources.subscribe) a subscribe, an unsubscribe, an unknown subscribe.
        let resources = if version == "2026-07-28" { 10 } else { 13 };
        assert_eq!(f["resources"], resources, "{version}: {f}");
        assert_eq!(f["gating"], 0, "{version}: {f}");
        // 2024-11-05 has no completions capability; 2026-07-28 no logging/setLevel.
        let completions = if version == "2024-11-05" { 0 } else { 3 };
        assert_eq!(f["completions"], completions, "{version}: {f}");
        let logging = if version == "2026-07-28" { 0 } else { 9 };
        assert_eq!(f["logging"], logging, "{version}: {f}");
        assert!(
            run.stdout
                .contains(&format!("features: {resources} resource request(s)")),
            "{}",
            run.stdout
        );
    }
    for version in ["2025-11-25", "2026-07-28"] {
        let port = port();
        let url = format!("http://127.0.0.1:{port}/mcp");
        let start = format!("{} --http 127.0.0.1:{port}", fixture().display());
        let run = run_chaos(&[
            "run",
            "--http",
            &url,
            "--start",
            &start,
            "--protocol-version",
            version,
            "--timeout-ms",
            "3000",
            "--skip-chaos",
            "--skip-generated",
        ]);
        assert_eq!(
            run.findings(),
            Vec::<serde_json::Value>::new(),
            "HTTP {version}: {}",
            run.stdout
        );
        let report = run.report.expect("a report");
        assert_eq!(
            report["summary"]["features"]["prompts_listed"], 3,
            "HTTP {version}"
        );
    }
}

#[test]
fn features_unadvertised_are_gated_with_method_not_found() {
    for version in ["2025-11-25", "2026-07-28"] {
        let run = features_run(&[], version, &["--env", "FIXTURE_TOOLS_ONLY=1"]);
        assert_eq!(
            run.findings(),
            Vec::<serde_json::Value>::new(),
            "{version}: {}",
            run.stdout
        );
        let report = run.report.expect("a report");
        let f = &report["summary"]["features"];
        // resources, prompts, completions, and logging where setLevel exists.
        let gated = if version == "2026-07-28" { 3 } else { 4 };
        assert_eq!(f["gating"], gated, "{version}: {f}");
        assert_eq!(f["resources"], 0, "{version}: {f}");
    }
}

#[test]
fn features_selection_narrows_the_phase() {
    let run = features_run(&[], "2025-11-25", &["--skip-resources", "--skip-prompts"]);
    let f = &run.report.expect("a report")["summary"]["features"];
    assert_eq!(
        (f["resources"].as_u64(), f["prompts"].as_u64()),
        (Some(0), Some(0)),
        "{f}"
    );
    assert_eq!(f["logging"], 9, "{f}");
    let run = features_run(&[], "2025-11-25", &["--features", "none"]);
    assert!(
        run.report.expect("a report")["summary"]
            .get("features")
            .is_none()
    );
    let run = features_run(&["cursor-loop"], "2025-11-25", &["--features", "logging"]);
    assert_eq!(
        run.findings(),
        Vec::<serde_json::Value>::new(),
        "{}",
        run.stdout
    );
    let run = run_chaos(&[
        "run",
        "--stdio",
        &fixture_command(&[]),
        "--features",
        "tools",
    ]);
    assert_eq!(
        run.code, 3,
        "an unknown feature is a usage error: {}",
        run.stderr
    );
}

/// One planted feature flaw, the version it is run under, and what must be reported.
struct Case {
    flaw: &'static str,
    version: &'static str,
    invariant: &'static str,
    violation: bool,
}

const CASES: &[Case] = &[
    Case {
        flaw: "resource-not-found-internal-error",
        version: "2026-07-28",
        invariant: "resource-not-found",
        violation: true,
    },
    Case {
        flaw: "empty-contents-for-unknown-resource",
        version: "2026-07-28",
        invariant: "empty-resource-contents",
        violation: true,
    },
    Case {
        flaw: "cursor-loop",
        version: "2025-11-25",
        invariant: "pagination-cursor",
        violation: true,
    },
    Case {
        flaw: "invalid-cursor-first-page",
        version: "2025-11-25",
        invariant: "pagination-cursor",
        violation: false,
    },
    Case {
        flaw: "prompt-argument-internal-error",
        version: "2025-11-25",
        invariant: "prompt-argument-errors",
        violation: false,
    },
    Case {
        flaw: "log-level-accepts-invalid",
        version: "2025-11-25",
        invariant: "log-level-errors",
        violation: false,
    },
    Case {
        flaw: "log-without-log-level",
        version: "2026-07-28",
        invariant: "log-level-errors",
        violation: true,
    },
    Case {
        flaw: "log-leaks-stack-trace",
        version: "2025-11-25",
        invariant: "leaked-internals",
        violation: true,
    },
    Case {
        flaw: "subscribe-not-served",
        version: "2025-11-25",
        invariant: "capability-gating",
        violation: false,
    },
    Case {
        flaw: "unadvertised-internal-error",
        version: "2025-11-25",
        invariant: "capability-gating",
        violation: false,
    },
];

fn check(case: &Case) {
    let run = features_run(&[case.flaw], case.version, &[]);
    assert_eq!(
        run.invariants(),
        vec![case.invariant.to_owned()],
        "flaw {}: {}",
        case.flaw,
        run.stdout
    );
    assert_eq!(
        !run.with_severity("violation").is_empty(),
        case.violation,
        "flaw {}: {}",
        case.flaw,
        run.stdout
    );
    assert_eq!(run.code, i32::from(case.violation), "flaw {}", case.flaw);
    for f in run.findings() {
        assert!(
            f["spec"]
                .as_str()
                .is_some_and(|s| s.starts_with("https://modelcontextprotocol.io/specification/")),
            "{f}"
        );
        assert!(f["request"].is_string() && f["response"].is_string(), "{f}");
    }
}

macro_rules! flaw_tests {
    ($($name:ident = $flaw:literal;)*) => {
        $(
            #[doc = concat!("The flaw `", $flaw, "` is caught as exactly its invariant.")]
            #[test]
            fn $name() {
                check(CASES.iter().find(|c| c.flaw == $flaw).expect("a case"));
            }
        )*

        /// The flaws covered above.
        pub const FEATURE_FLAWS: &[&str] = &[$($flaw),*];
    };
}

flaw_tests! {
    features_resource_not_found_internal_error = "resource-not-found-internal-error";
    features_empty_contents_for_unknown_resource = "empty-contents-for-unknown-resource";
    features_cursor_loop = "cursor-loop";
    features_invalid_cursor_first_page = "invalid-cursor-first-page";
    features_prompt_argument_internal_error = "prompt-argument-internal-error";
    features_log_level_accepts_invalid = "log-level-accepts-invalid";
    features_unadvertised_internal_error = "unadvertised-internal-error";
    features_log_leaks_stack_trace = "log-leaks-stack-trace";
    features_subscribe_not_served = "subscribe-not-served";
    features_log_without_log_level = "log-without-log-level";
}

/// Under a handshake version a wrong resource-not-found code is only a warning (SHOULD), and
/// an empty success too.
#[test]
fn features_resource_not_found_is_a_warning_before_2026_07_28() {
    for flaw in [
        "resource-not-found-internal-error",
        "empty-contents-for-unknown-resource",
    ] {
        let run = features_run(&[flaw], "2025-11-25", &[]);
        assert_eq!(
            run.with_severity("violation"),
            Vec::<serde_json::Value>::new(),
            "{flaw}: {}",
            run.stdout
        );
        // The read, and for the wrong code also the subscribe of the unknown URI.
        assert!(
            !run.with_severity("warning").is_empty(),
            "{flaw}: {}",
            run.stdout
        );
        assert_eq!(run.code, 0, "{flaw}");
    }
}

/// Scenario steps read a resource and get a prompt, with expectations on the answer: the
/// fixture's answers meet them, and a wrong expectation is `expectation-failed`.
#[test]
fn features_scenario_steps_read_and_prompt() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let write = |name: &str, body: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, body).expect("the scenario is written");
        path.to_string_lossy().into_owned()
    };
    let steps = r#"
[[step]]
read = { uri = "mcp-chaos://fixture/readme" }
expect = { channel = "result", content_matches = "fails well" }

[[step]]
read = { uri = "mcp-chaos://fixture/records/7" }
expect = { content_matches = "Record 7" }

[[step]]
read = { uri = "mcp-chaos://nowhere" }
expect = { error_code = -32002, content_matches = "(?i)not found" }

[[step]]
prompt = { name = "translate", arguments = { text = "hi", language = "french" } }
expect = { channel = "result", content_matches = "into french" }

[[step]]
prompt = { name = "translate", arguments = { text = "hi" } }
expect = { error_code = -32602, content_matches = "language" }
"#;
    let server = format!(
        "[server]\nstdio = [{:?}]\nprotocol_version = \"2025-11-25\"\n",
        fixture().display().to_string()
    );
    let good = write(
        "good.toml",
        &format!("name = \"features-good\"\n{server}{steps}"),
    );
    let run = run_chaos(&["scenario", &good]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let wrong = write(
        "wrong.toml",
        &format!(
            "name = \"features-wrong\"\n{server}\n[[step]]\nread = {{ uri = \"mcp-chaos://nowhere\" }}\nexpect = {{ channel = \"result\" }}\n"
        ),
    );
    let run = run_chaos(&["scenario", &wrong]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("expectation-failed") || run.stdout.contains("MC601"),
        "{}",
        run.stdout
    );
    // is_error is about a CallToolResult: not for a read step.
    let bad = write(
        "bad.toml",
        &format!(
            "name = \"features-bad\"\n{server}\n[[step]]\nread = {{ uri = \"x:y\" }}\nexpect = {{ is_error = true }}\n"
        ),
    );
    assert_eq!(run_chaos(&["scenario", &bad]).code, 3);
}

/// The fixture with a fake upstream: its `weather://forecast/{city}` template calls it.
fn upstream_features_run(flaws: &[&str], version: &str) -> mcp_chaos_tests::ChaosRun {
    let command = fixture_command(flaws);
    run_chaos(&[
        "run",
        "--stdio",
        &command,
        "--upstream-env",
        "UPSTREAM_URL",
        "--env",
        "FIXTURE_UPSTREAM_TIMEOUT_MS=1000",
        "--protocol-version",
        version,
        "--timeout-ms",
        "3000",
        "--skip-probes",
        "--skip-version-probe",
        "--skip-chaos",
        "--skip-generated",
        "--fault-cases",
        "0",
        "--seed",
        "42",
    ])
}

/// A `resources/read` whose handler calls the upstream is learned from the journal and read
/// again under every fault profile: the correct fixture answers each with an actionable
/// JSON-RPC error (clean), and `summary.features.upstream` says which reads reached it.
#[test]
fn features_upstream_reads_get_the_fault_campaign() {
    for version in ["2025-11-25", "2026-07-28"] {
        let run = upstream_features_run(&[], version);
        assert_eq!(
            run.findings(),
            Vec::<serde_json::Value>::new(),
            "{version}: {}",
            run.stdout
        );
        assert_eq!(run.code, 0, "{version}");
        let report = run.report.expect("a report");
        let f = &report["summary"]["features"];
        assert_eq!(f["templates_listed"], 2, "{version}: {f}");
        let reach = f["upstream"].as_array().expect("summary.features.upstream");
        let forecast = reach
            .iter()
            .find(|r| r["target"] == "weather://forecast/1")
            .unwrap_or_else(|| panic!("{version}: no forecast read in {f}"));
        assert_eq!(forecast["reached"], true, "{forecast}");
        assert_eq!(
            forecast["template"], "weather://forecast/{city}",
            "{forecast}"
        );
        assert_eq!(
            forecast["paths"],
            serde_json::json!(["/weather"]),
            "{forecast}"
        );
        assert_eq!(forecast["faults"], 18, "{forecast}");
        assert_eq!(forecast["requests_tried"], 19, "{forecast}");
        // The fixture's own resources and prompts never call out, and get no faults.
        for other in reach
            .iter()
            .filter(|r| r["target"] != "weather://forecast/1")
        {
            assert_eq!(
                (other["reached"].as_bool(), other["faults"].as_u64()),
                (Some(false), Some(0)),
                "{other}"
            );
        }
    }
}

/// `resource-upstream-failure-masked`: an empty `contents` under an upstream 404 or 5xx is
/// `error-masked-as-success`, a violation, and nothing else.
#[test]
fn features_upstream_failure_masked_is_caught() {
    let run = upstream_features_run(&["resource-upstream-failure-masked"], "2025-11-25");
    assert_eq!(
        run.invariants(),
        vec!["error-masked-as-success".to_owned()],
        "{}",
        run.stdout
    );
    let violations = run.with_severity("violation");
    assert!(!violations.is_empty(), "{}", run.stdout);
    for f in &violations {
        assert!(
            f["probe"]
                .as_str()
                .is_some_and(|p| p.starts_with("resources/read weather://forecast/1")),
            "{f}"
        );
        assert!(f["fault"]["status"].is_u64(), "{f}");
    }
    assert_eq!(run.code, 1);
}

/// The flaws of the upstream-backed features, caught above.
pub const FEATURE_UPSTREAM_FLAWS: &[&str] = &["resource-upstream-failure-masked"];
