//! The generated phase end to end: each argument-handling flaw is caught as exactly its
//! invariant; a planted crash on one string value is found by the generator within the
//! default case budget and shrunk to that value; a saved finding replays; `mcp-chaos gen`
//! output holds under an independent validator for every schema of the corpus.

use std::path::PathBuf;

use mcp_chaos_tests::{fixture_command, run_chaos};

fn generated_run(flaws: &[&str], extra: &[&str]) -> mcp_chaos_tests::ChaosRun {
    let command = fixture_command(flaws);
    let mut args = vec![
        "run",
        "--stdio",
        &command,
        "--skip-probes",
        "--skip-chaos",
        "--skip-version-probe",
        // The wire phase has its own tests (wire.rs); it ends on a fresh server, which would
        // add a restart to the counts these tests assert.
        "--wire-cases",
        "0",
        "--seed",
        "7",
    ];
    if !extra.contains(&"--protocol-version") {
        args.extend(["--protocol-version", "2025-11-25"]);
    }
    args.extend_from_slice(extra);
    run_chaos(&args)
}

fn check(flaw: &str, invariant: &str, violation: bool) {
    let run = generated_run(&[flaw], &[]);
    assert_eq!(
        run.invariants(),
        vec![invariant.to_owned()],
        "{flaw}: {}",
        run.stdout
    );
    assert_eq!(
        !run.with_severity("violation").is_empty(),
        violation,
        "{flaw}: {}",
        run.stdout
    );
}

macro_rules! generated_tests {
    ($($name:ident = $flaw:literal => $invariant:literal, $violation:literal;)*) => {
        /// The flaws covered here (and `crash-on-nul`, `stall-on-long-text`,
        /// `crash-on-500th-call` and `mix-up-concurrent-requests`, below).
        pub const GENERATED_FLAWS: &[&str] =
            &["crash-on-nul", "stall-on-long-text", "crash-on-500th-call", "mix-up-concurrent-requests", "drop-concurrent-calls", $($flaw),*];
        $(
            #[doc = concat!("`", $flaw, "` is caught as `", $invariant, "`.")]
            #[test]
            fn $name() {
                check($flaw, $invariant, $violation);
            }
        )*
    };
}

generated_tests! {
    rejects_valid_args = "rejects-valid-args" => "valid-args-rejected", true;
    accepts_invalid_args = "accepts-invalid-args" => "invalid-args-accepted", false;
    validation_as_protocol_error = "validation-as-protocol-error" => "invalid-args-wrong-channel", false;
    unsatisfiable_schema = "unsatisfiable-schema" => "unsatisfiable-input-schema", false;
    output_validation_error = "output-validation-error" => "structured-content-schema", false;
}

/// Issue 14, calls in flight (`--in-flight 8`) both ways: with 256 cases per tool
/// (over 500 calls; budgets wide enough for a loaded machine), the correct fixture gives no finding; a fixture that crashes on its
/// 500th call is reported as a crash after a case it was handling, saying the crash does not
/// reproduce one call at a time (so it cannot be shrunk), and nothing else.
#[test]
fn a_crash_that_comes_with_the_load_is_found_with_calls_in_flight() {
    let correct = generated_run(
        &[],
        &[
            "--cases",
            "256",
            "--in-flight",
            "8",
            "--tool-budget-ms",
            "60000",
            "--generated-budget-ms",
            "240000",
        ],
    );
    assert_eq!(
        correct.findings(),
        Vec::<serde_json::Value>::new(),
        "{}",
        correct.stdout
    );
    let run = generated_run(
        &["crash-on-500th-call"],
        &[
            "--cases",
            "256",
            "--in-flight",
            "8",
            "--tool-budget-ms",
            "60000",
            "--generated-budget-ms",
            "240000",
        ],
    );
    assert_eq!(
        run.invariants(),
        vec!["crash-on-input".to_owned()],
        "{}",
        run.stdout
    );
    for f in run.findings() {
        let message = f["message"].as_str().unwrap_or_default();
        assert!(message.contains("connection pool exhausted"), "{f:#}");
        assert!(
            message.contains("not reproduced one call at a time"),
            "{f:#}"
        );
        assert!(
            f["request"]
                .as_str()
                .is_some_and(|r| r.contains("tools/call")),
            "{f:#}"
        );
    }
}

/// A server that answers a call in flight with another call's id is reported once as
/// `concurrent-requests-mixed` (and nothing else), and the
/// phase completes one request at a time: every tool still gets its cases.
#[test]
fn a_server_that_mixes_up_requests_in_flight_is_then_driven_one_at_a_time() {
    let run = generated_run(&["mix-up-concurrent-requests"], &["--in-flight", "8"]);
    assert_eq!(
        run.invariants(),
        vec!["concurrent-requests-mixed".to_owned()],
        "{}",
        run.stdout
    );
    let mixed: Vec<_> = run
        .findings()
        .into_iter()
        .filter(|f| f["invariant"] == "concurrent-requests-mixed")
        .collect();
    assert_eq!(mixed.len(), 1, "{}", run.stdout);
    assert_eq!(mixed[0]["occurrences"], 1, "{:#}", mixed[0]);
    for tool in ["echo", "add", "big"] {
        assert!(
            phase(&run, tool)["calls"].as_u64() > Some(16),
            "{tool}: {}",
            run.stdout
        );
    }
}

/// A server that drops a call arriving while another is in flight (`drop-concurrent-calls`;
/// every call is answered one at a time) is reported once as `concurrent-requests-dropped`, a
/// warning, and nothing else: the call it gave up on is sent again alone and answered, so no
/// `no-response`; the phase completes one request at a time, every tool getting its cases. The
/// correct fixture with calls in flight gives no finding at all (the first test above).
#[test]
fn a_server_that_drops_requests_in_flight_is_reported_and_then_driven_one_at_a_time() {
    let run = generated_run(&["drop-concurrent-calls"], &["--in-flight", "8"]);
    assert_eq!(
        run.invariants(),
        vec!["concurrent-requests-dropped".to_owned()],
        "{}",
        run.stdout
    );
    let dropped = &run.findings()[0];
    assert_eq!(dropped["severity"], "warning", "{dropped:#}");
    assert_eq!(dropped["occurrences"], 1, "{dropped:#}");
    let message = dropped["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("when sent alone") && message.contains("calls were in flight"),
        "{message}"
    );
    for tool in ["echo", "add", "big"] {
        assert!(
            phase(&run, tool)["calls"].as_u64() > Some(16),
            "{tool}: {}",
            run.stdout
        );
    }
}

/// Issue 13, both ways: an SDK's "Output validation error: outputSchema defined but no
/// structured output returned" for schema-valid arguments is the tool's output failing, not
/// a rejection of the arguments: `output-validation-error` gets one `structured-content-schema`
/// warning for add and no `valid-args-rejected` (the case above checks it is the only
/// invariant); a tool that does reject valid arguments (`rejects-valid-args`, same inputs)
/// still gets `valid-args-rejected`.
#[test]
fn output_validation_text_is_not_an_argument_rejection() {
    let run = generated_run(&["output-validation-error"], &[]);
    let findings = run.findings();
    assert_eq!(findings.len(), 1, "{}", run.stdout);
    assert_eq!(findings[0]["tool"], "add");
    assert_eq!(findings[0]["severity"], "warning");
    let message = findings[0]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("its own output validation")
            && message.contains("Output validation error"),
        "{message}"
    );
    let run = generated_run(&["rejects-valid-args"], &[]);
    assert_eq!(run.invariants(), ["valid-args-rejected"], "{}", run.stdout);
}

/// Under 2025-06-18 a -32602 for invalid arguments is fine (either channel is accepted).
#[test]
fn protocol_error_for_invalid_arguments_is_fine_before_2025_11_25() {
    let run = generated_run(
        &["validation-as-protocol-error"],
        &["--protocol-version", "2025-06-18"],
    );
    assert_eq!(
        run.findings(),
        Vec::<serde_json::Value>::new(),
        "{}",
        run.stdout
    );
}

/// A crash on a NUL in `echo`'s text is found with the default budget, shrunk to exactly
/// `{"text": "\u0000"}`, saved as a replay file, and the replay reproduces it.
#[test]
fn planted_crash_is_found_shrunk_and_replayed() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let replays = dir.path().join("replays");
    let replays_arg = replays.to_string_lossy().into_owned();
    let run = generated_run(&["crash-on-nul"], &["--replays", &replays_arg]);
    let crashes: Vec<_> = run
        .findings()
        .into_iter()
        .filter(|f| f["invariant"] == "crash-on-input")
        .collect();
    assert!(
        !crashes.is_empty(),
        "the crash was not found: {}",
        run.stdout
    );
    let minimal = serde_json::json!({"text": "\u{0}"});
    let shrunk = crashes
        .iter()
        .find(|f| {
            f["replay"].as_str().is_some_and(|p| {
                std::fs::read_to_string(p)
                    .ok()
                    .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
                    .is_some_and(|r| r["arguments"] == minimal)
            })
        })
        .unwrap_or_else(|| panic!("no crash with the minimal arguments: {crashes:#?}"));
    let replay = PathBuf::from(shrunk["replay"].as_str().expect("a replay file"));
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&replay).expect("readable")).expect("json");
    assert_eq!(file["arguments"], serde_json::json!({"text": "\u{0}"}));
    assert_eq!(file["expect"]["invariant"], "crash-on-input");
    // The saved finding replays: it still fails (exit 1).
    let again = run_chaos(&["replay", &replay.to_string_lossy()]);
    assert_eq!(again.code, 1, "{}{}", again.stdout, again.stderr);
    assert!(again.stdout.contains("STILL FAILS"), "{}", again.stdout);
    // Against the correct fixture it is fixed (exit 0).
    let fixed = run_chaos(&[
        "replay",
        &replay.to_string_lossy(),
        "--stdio",
        &fixture_command(&[]),
    ]);
    assert_eq!(fixed.code, 0, "{}{}", fixed.stdout, fixed.stderr);
    assert!(fixed.stdout.contains("FIXED"), "{}", fixed.stdout);
}

/// The summary's record of one tool's generated phase.
fn phase(run: &mcp_chaos_tests::ChaosRun, tool: &str) -> serde_json::Value {
    let summary = &run.report.as_ref().expect("a report")["summary"];
    summary["generated"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|t| t["tool"] == tool)
        .cloned()
        .unwrap_or_else(|| panic!("no generated phase for {tool}: {summary:#}"))
}

/// A call that never answers but keeps reporting progress (`stall-on-long-text`: echo with a
/// text over 100 characters) is a `no-response` warning once it has had the client's whole
/// allowance (progress extends a 500 ms deadline up to three deadlines, 1 500 ms); the server
/// is restarted fresh, echo's remaining cases are skipped, and the other tools still run.
#[test]
fn a_stalled_call_is_a_warning_and_ends_its_tool() {
    let run = generated_run(
        &["stall-on-long-text"],
        &["--timeout-ms", "500", "--tool-budget-ms", "5000"],
    );
    assert_eq!(run.invariants(), vec!["no-response"], "{}", run.stdout);
    let findings = run.findings();
    assert_eq!(findings.len(), 1, "{findings:#?}");
    let finding = &findings[0];
    assert_eq!(finding["severity"], "warning", "{finding:#}");
    assert_eq!(finding["tool"], "echo", "{finding:#}");
    assert_restarted_once_and_cut(&run, "deadline missed");
    assert_eq!(phase(&run, "add")["cut"], serde_json::Value::Null);
}

/// One fresh restart, echo's phase cut for `cut`, and add's phase still run.
fn assert_restarted_once_and_cut(run: &mcp_chaos_tests::ChaosRun, cut: &str) {
    let summary = &run.report.as_ref().expect("a report")["summary"];
    assert_eq!(summary["restarts"], 1, "{summary:#}");
    assert_eq!(phase(run, "echo")["cut"], cut, "{summary:#}");
    assert!(phase(run, "add")["calls"].as_u64() > Some(0), "{summary:#}");
}

/// A call cut by its tool's time budget while progress still comes: mcp-chaos gave up, not
/// the server, so no finding; echo's phase is cut by its time budget and the server is
/// restarted fresh. Two cases, as (`--timeout-ms`, `--tool-budget-ms`):
/// - (1 000, 2 000): the budget ends the wait before the client's allowance (3 000 ms: three
///   1 000 ms deadlines);
/// - (8 000, 1 000): a budget shorter than the request timeout cuts the call when the budget
///   runs out, not a timeout later (a silent call still gets the whole timeout: see the
///   session's `a_cap_below_the_timeout_cuts_only_a_call_that_reports_progress`).
#[test]
fn a_call_cut_by_the_time_budget_is_not_judged() {
    // (timeout, budget, the phase's wall time must stay under, in ms).
    for (timeout, budget, under) in [("1000", "2000", None), ("8000", "1000", Some(8_000))] {
        let run = generated_run(
            &["stall-on-long-text"],
            &["--timeout-ms", timeout, "--tool-budget-ms", budget],
        );
        assert_eq!(
            run.findings(),
            Vec::<serde_json::Value>::new(),
            "timeout {timeout}, budget {budget}: {}",
            run.stdout
        );
        assert_restarted_once_and_cut(&run, "time budget");
        if let Some(under) = under {
            let echo = phase(&run, "echo");
            assert!(echo["elapsed_ms"].as_u64() < Some(under), "{echo:#}");
        }
    }
}

/// `mcp-chaos gen` prints values an independent validator (boon) accepts, and with
/// `--invalid`, values it rejects, for every schema of the corpus.
#[test]
fn gen_output_holds_under_an_independent_validator() {
    let corpus = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/schemas");
    let mut checked = 0;
    let mut skipped = Vec::new();
    for entry in std::fs::read_dir(&corpus).expect("the corpus") {
        let path = entry.expect("an entry").path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let schema: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).expect("readable")).expect("json");
        let mut schemas = boon::Schemas::new();
        let mut compiler = boon::Compiler::new();
        compiler.enable_format_assertions();
        let url = "urn:mcp-chaos:schema";
        if compiler.add_resource(url, schema.clone()).is_err() {
            skipped.push(path.display().to_string());
            continue;
        }
        let Ok(index) = compiler.compile(url, &mut schemas) else {
            // boon uses Rust regex for `pattern`; ECMA-only patterns do not compile there.
            skipped.push(path.display().to_string());
            continue;
        };
        let file = path.to_string_lossy().into_owned();
        for invalid in [false, true] {
            let mut args = vec!["gen", file.as_str(), "--count", "25", "--seed", "3"];
            if invalid {
                args.push("--invalid");
            }
            let run = run_chaos(&args);
            if run.code != 0 {
                // A schema the generator cannot serve (unsatisfiable, forced public URL).
                assert!(run.stderr.contains("mcp-chaos:"), "{file}: {}", run.stderr);
                continue;
            }
            for line in run.stdout.lines() {
                let v: serde_json::Value =
                    serde_json::from_str(line).expect("one JSON value per line");
                let (value, want_valid) = if invalid {
                    (&v["value"], false)
                } else {
                    (&v, true)
                };
                // boon computes with f64: integers beyond 2^53 lose precision there (a
                // multipleOf on them is judged on a rounded number), so those values prove
                // nothing either way.
                if beyond_f64(value) {
                    continue;
                }
                let result = schemas.validate(value, index);
                // boon checks a fractional multipleOf in binary floating point (0.58 is "not
                // a multiple of 0.01" there); JSON Schema means decimal division.
                if let Err(e) = &result
                    && want_valid
                    && format!("{e:#}").contains("is not multipleOf 0.")
                {
                    continue;
                }
                assert_eq!(result.is_ok(), want_valid, "{file}: {line}");
                checked += 1;
            }
        }
    }
    assert!(checked > 2_000, "only {checked} values checked");
    assert!(skipped.len() < 20, "too many schemas skipped: {skipped:?}");
}

/// Whether `v` holds a number that f64 cannot represent exactly (|n| > 2^53, or huge floats).
fn beyond_f64(v: &serde_json::Value) -> bool {
    match v {
        serde_json::Value::Number(n) => {
            n.as_i64().is_some_and(|i| i.unsigned_abs() > 1 << 53)
                || n.as_u64().is_some_and(|u| u > 1 << 53)
                || n.as_f64().is_some_and(|f| f.abs() > 1e15)
        }
        serde_json::Value::Array(items) => items.iter().any(beyond_f64),
        serde_json::Value::Object(map) => map.values().any(beyond_f64),
        _ => false,
    }
}
