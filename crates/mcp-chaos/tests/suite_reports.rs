//! The scenario-suite reporters (`--junit`, `--sarif`, `--markdown`) on a hand-built suite: a
//! passing scenario, a failing one (new, baselined, known and expected findings, a failed
//! expectation, a replay command, a fixed baseline entry), and one that could not be carried
//! out (exit code 2).
//!
//! Each output is read back by something independent of the code that wrote it: the SARIF by
//! the OASIS SARIF 2.1.0 JSON schema (`crates/mcp-chaos-tests/data/sarif/`, validated offline with
//! `jsonschema`), the JUnit XML by the `junit-parser` crate (structure, counts, attributes) and
//! by `quick-xml` for the text of `<failure>` and `<error>` elements: junit-parser 1.7 drops
//! the entity references (`&quot;`, `&lt;`) in element text, which quick-xml 0.41+ reports as
//! separate events, and JSON excerpts are full of them.

use std::path::{Path, PathBuf};

use mcp_chaos::finding::{self, Finding, Invariant, Severity};
use mcp_chaos::protocol::ProtocolVersion;
use mcp_chaos::report::{junit, markdown, sarif};
use mcp_chaos::run::ServerReport;
use mcp_chaos::scenario::outcome::{
    BaselineEntry, FindingStatus, ScenarioFinding, ScenarioReport, ScenarioStatus, StepReport,
    SuiteReport,
};
use serde_json::{Value, json};

const REPLAY: &str = "mcp-chaos scenario scenarios/records.toml --seed 42 --only-line 12";

fn finding(
    invariant: &Invariant,
    severity: Severity,
    tool: &str,
    probe: &str,
    message: &str,
) -> Finding {
    let mut f = Finding::new(invariant, severity, ProtocolVersion::V2025_11_25, message);
    f.tool = Some(tool.to_owned());
    f.probe = probe.to_owned();
    f
}

fn scenario_finding(
    finding: Finding,
    fingerprint: &str,
    status: FindingStatus,
    line: usize,
) -> ScenarioFinding {
    ScenarioFinding {
        finding,
        fingerprint: fingerprint.to_owned(),
        status,
        line,
        replay_command: None,
    }
}

fn step(label: &str, line: usize, findings: Vec<usize>, passed: bool) -> StepReport {
    StepReport {
        label: label.to_owned(),
        line,
        exchanges: 3,
        duration_ms: 250,
        findings,
        passed,
    }
}

fn server() -> ServerReport {
    ServerReport {
        command: Some("node records-server.js".to_owned()),
        url: None,
        server_info: json!({"name": "records", "version": "1.2.0"}),
        protocol_version: "2025-11-25".to_owned(),
    }
}

/// The suite every test reads.
fn suite() -> SuiteReport {
    let passing = ScenarioReport {
        name: "filesystem-happy-path".to_owned(),
        file: PathBuf::from("scenarios/filesystem.toml"),
        status: ScenarioStatus::Passed,
        exit_code: 0,
        server: Some(server()),
        seed: 7,
        steps: vec![
            step("call read_file", 5, vec![], true),
            step(
                "generate write_file (16 valid, 8 invalid)",
                11,
                vec![],
                true,
            ),
        ],
        findings: vec![],
        fixed: vec![],
        duration_ms: 1200,
    };

    let mut new = scenario_finding(
        {
            let mut f = finding(
                &finding::BUSINESS_FAILURE_AS_PROTOCOL_ERROR,
                Severity::Violation,
                "get_record",
                "upstream 404",
                "upstream 404 came back as JSON-RPC error -32603 | not as a CallToolResult",
            );
            f.request = Some(
                r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"get_record","arguments":{"id":"r-1"}}}"#
                    .to_owned(),
            );
            f.response = Some(
                r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32603,"message":"boom"}}"#.to_owned(),
            );
            f.fault = Some(json!({"status": 404}));
            f
        },
        "fp-new-mc201",
        FindingStatus::New,
        12,
    );
    new.replay_command = Some(REPLAY.to_owned());
    let baselined = scenario_finding(
        finding(
            &finding::UNACTIONABLE_ERROR,
            Severity::Warning,
            "list_records",
            "upstream 500",
            "error text 'failed' does not say what failed",
        ),
        "fp-baseline-mc203",
        FindingStatus::Baseline("upstream issue records#12".to_owned()),
        20,
    );
    let known = scenario_finding(
        finding(
            &finding::LEAKED_INTERNALS,
            Severity::Warning,
            "get_record",
            "upstream 404",
            "a stack trace reached the model",
        ),
        "fp-known-mc204",
        FindingStatus::Known("dev build prints traces; fixed in 2.0".to_owned()),
        12,
    );
    let expected = scenario_finding(
        finding(
            &finding::ERROR_MASKED_AS_SUCCESS,
            Severity::Violation,
            "delete_record",
            "upstream 503",
            "a failed delete came back as a success",
        ),
        "fp-expected-mc202",
        FindingStatus::Expected,
        31,
    );
    let expectation = scenario_finding(
        finding(
            &finding::EXPECTATION_FAILED,
            Severity::Violation,
            "delete_record",
            "upstream 503",
            "step at line 31 expected is_error = true, got a result without isError",
        ),
        "fp-new-mc601",
        FindingStatus::New,
        31,
    );
    let failing = ScenarioReport {
        name: "records-upstream-faults".to_owned(),
        file: PathBuf::from("./scenarios/records.toml"),
        status: ScenarioStatus::Failed,
        exit_code: 1,
        server: Some(server()),
        seed: 42,
        steps: vec![
            step("call get_record under 404", 12, vec![0, 2], false),
            step(
                "generate list_records (64 valid, 32 invalid)",
                20,
                vec![1],
                true,
            ),
            step("call delete_record under 503", 31, vec![3, 4], false),
        ],
        findings: vec![new, baselined, known, expected, expectation],
        fixed: vec![BaselineEntry {
            scenario: "records-upstream-faults".to_owned(),
            code: "MC101".to_owned(),
            invariant: "unknown-tool-not-protocol-error".to_owned(),
            tool: None,
            probe: "unknown tool".to_owned(),
            fingerprint: "fp-fixed-mc101".to_owned(),
            reason: "answered isError:true until 1.2".to_owned(),
            intermittent: false,
        }],
        duration_ms: 3400,
    };

    let errored = ScenarioReport {
        name: "http-origin".to_owned(),
        file: PathBuf::from("scenarios/http origin.toml"),
        status: ScenarioStatus::Error(
            "server did not start: connection refused on 127.0.0.1:9".to_owned(),
        ),
        exit_code: 2,
        server: None,
        seed: 3,
        steps: vec![],
        findings: vec![],
        fixed: vec![],
        duration_ms: 50,
    };

    SuiteReport {
        mcp_chaos_version: "0.1.0".to_owned(),
        shard: Some((1, 2)),
        baseline: Some(PathBuf::from("ci/mcp-chaos-baseline.json")),
        scenarios: vec![passing, failing, errored],
        duration_ms: 4650,
        interrupted: false,
        unfinished: vec![],
    }
}

// --- SARIF ---------------------------------------------------------------------------------

fn sarif_validator() -> jsonschema::Validator {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../mcp-chaos-tests/data/sarif/sarif-schema-2.1.0.json");
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("read the SARIF schema"))
            .expect("the SARIF schema is JSON");
    jsonschema::draft4::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("the SARIF schema compiles offline")
}

fn assert_valid(validator: &jsonschema::Validator, log: &Value) {
    let errors: Vec<String> = validator
        .iter_errors(log)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "SARIF is invalid:\n{}",
        errors.join("\n")
    );
}

fn sarif_json(options: sarif::SarifOptions) -> Value {
    serde_json::to_value(sarif::sarif_with(&suite(), options)).expect("SARIF serializes")
}

#[test]
fn sarif_validates_against_the_oasis_schema() {
    let validator = sarif_validator();
    for accepted in [true, false] {
        for fixed in [true, false] {
            let log = sarif_json(sarif::SarifOptions { accepted, fixed });
            assert_valid(&validator, &log);
        }
    }
    // And an empty suite.
    let empty = SuiteReport {
        mcp_chaos_version: "0.1.0".to_owned(),
        shard: None,
        baseline: None,
        scenarios: vec![],
        duration_ms: 0,
        interrupted: false,
        unfinished: vec![],
    };
    assert_valid(
        &validator,
        &serde_json::to_value(sarif::sarif(&empty)).expect("SARIF serializes"),
    );
}

#[test]
fn sarif_schema_rejects_a_broken_log() {
    let validator = sarif_validator();
    let mut log = sarif_json(sarif::SarifOptions::default());
    log["runs"][0]["results"][0]["level"] = json!("fatal");
    assert!(
        !validator.is_valid(&log),
        "level \"fatal\" must be rejected"
    );

    let mut log = sarif_json(sarif::SarifOptions::default());
    log["runs"][0]["results"][1]["suppressions"][0]["kind"] = json!("comment");
    assert!(
        !validator.is_valid(&log),
        "suppression kind \"comment\" must be rejected"
    );

    let mut log = sarif_json(sarif::SarifOptions::default());
    log["version"] = json!("2.2.0");
    assert!(!validator.is_valid(&log), "version 2.2.0 must be rejected");

    // Formats are checked too.
    let mut log = sarif_json(sarif::SarifOptions::default());
    log["runs"][0]["tool"]["driver"]["rules"][0]["helpUri"] = json!("not a uri");
    assert!(
        !validator.is_valid(&log),
        "a helpUri that is no URI must be rejected"
    );
}

#[test]
fn sarif_rules_are_the_catalog() {
    let log = sarif_json(sarif::SarifOptions::default());
    assert_eq!(log["$schema"], json!(sarif::SCHEMA_URI));
    assert_eq!(log["version"], json!("2.1.0"));
    let run = &log["runs"][0];
    let driver = &run["tool"]["driver"];
    assert_eq!(driver["name"], json!("mcp-chaos"));
    assert_eq!(driver["version"], json!("0.1.0"));
    assert_eq!(
        driver["informationUri"],
        json!("https://github.com/mcp-chaos/mcp-chaos")
    );
    let rules = driver["rules"].as_array().expect("rules");
    assert_eq!(rules.len(), finding::CATALOG.len());
    for (rule, invariant) in rules.iter().zip(finding::CATALOG) {
        assert_eq!(rule["id"], json!(invariant.code));
        assert_eq!(rule["name"], json!(invariant.name));
        assert_eq!(rule["shortDescription"]["text"], json!(invariant.summary));
        assert_eq!(rule["fullDescription"]["text"], json!(invariant.explain));
        assert!(
            rule["help"]["text"]
                .as_str()
                .is_some_and(|t| t.starts_with(invariant.explain))
        );
        assert_eq!(
            rule["helpUri"],
            json!(ProtocolVersion::V2025_11_25.spec(invariant.spec_page))
        );
        assert_eq!(rule["defaultConfiguration"]["level"], json!("error"));
    }
}

#[test]
fn sarif_results_carry_rule_location_fingerprint_and_state() {
    let log = sarif_json(sarif::SarifOptions::default());
    let run = &log["runs"][0];
    let rules = run["tool"]["driver"]["rules"].as_array().expect("rules");
    let results = run["results"].as_array().expect("results");
    assert_eq!(
        results.len(),
        5,
        "one result per finding, no absent ones by default"
    );
    for r in results {
        let index = r["ruleIndex"].as_u64().expect("ruleIndex") as usize;
        assert_eq!(rules[index]["id"], r["ruleId"]);
        assert_eq!(r["locations"].as_array().map(Vec::len), Some(1));
        assert!(
            r["suppressions"].is_array(),
            "suppressions all present: {r}"
        );
    }

    let new = &results[0];
    assert_eq!(new["ruleId"], json!("MC201"));
    assert_eq!(new["level"], json!("error"));
    assert_eq!(new["baselineState"], json!("new"));
    assert_eq!(new["suppressions"], json!([]));
    assert_eq!(
        new["partialFingerprints"],
        json!({"mcpChaos/v1": "fp-new-mc201"})
    );
    let text = new["message"]["text"].as_str().expect("message");
    assert!(
        text.starts_with("upstream 404 came back as JSON-RPC error -32603"),
        "{text}"
    );
    assert!(text.contains("scenario records-upstream-faults"), "{text}");
    assert!(text.contains("probe upstream 404"), "{text}");
    assert!(text.contains(REPLAY), "{text}");
    let physical = &new["locations"][0]["physicalLocation"];
    assert_eq!(
        physical["artifactLocation"],
        json!({"uri": "scenarios/records.toml", "uriBaseId": "%SRCROOT%"})
    );
    assert_eq!(physical["region"], json!({"startLine": 12}));
    assert_eq!(new["properties"]["replayCommand"], json!(REPLAY));
    assert_eq!(new["properties"]["tool"], json!("get_record"));

    let baselined = &results[1];
    assert_eq!(baselined["level"], json!("warning"));
    assert_eq!(baselined["baselineState"], json!("unchanged"));
    assert_eq!(
        baselined["suppressions"],
        json!([{"kind": "external", "status": "accepted",
                "justification": "upstream issue records#12"}])
    );
    assert_eq!(baselined["properties"]["status"], json!("baseline"));
    let known = &results[2];
    assert_eq!(known["baselineState"], json!("unchanged"));
    assert_eq!(
        known["suppressions"],
        json!([{"kind": "external", "status": "accepted",
                "justification": "dev build prints traces; fixed in 2.0"}])
    );
    assert_eq!(known["properties"]["status"], json!("known"));
    let expected = &results[3];
    assert_eq!(expected["baselineState"], json!("unchanged"));
    assert_eq!(
        expected["suppressions"],
        json!([{"kind": "inSource", "status": "accepted",
                "justification": "expected by the scenario"}])
    );
    assert_eq!(results[4]["ruleId"], json!("MC601"));
    assert_eq!(results[4]["baselineState"], json!("new"));

    // The shard is part of the category, so shards' uploads do not replace each other.
    assert_eq!(
        run["automationDetails"]["id"],
        json!("mcp-chaos/scenarios/shard-1-of-2/")
    );
    // The errored scenario is a tool execution notification; the run did not fully succeed.
    let invocation = &run["invocations"][0];
    assert_eq!(invocation["executionSuccessful"], json!(false));
    assert_eq!(invocation["exitCode"], json!(2));
    let notes = invocation["toolExecutionNotifications"]
        .as_array()
        .expect("notifications");
    assert_eq!(notes.len(), 1);
    assert_eq!(notes[0]["level"], json!("error"));
    assert_eq!(
        notes[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        json!("scenarios/http%20origin.toml")
    );
}

#[test]
fn sarif_options_select_accepted_and_fixed_results() {
    let only_new = sarif_json(sarif::SarifOptions {
        accepted: false,
        fixed: false,
    });
    let ids: Vec<&Value> = only_new["runs"][0]["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| &r["ruleId"])
        .collect();
    assert_eq!(ids, [&json!("MC201"), &json!("MC601")]);

    let with_fixed = sarif_json(sarif::SarifOptions {
        accepted: true,
        fixed: true,
    });
    let results = with_fixed["runs"][0]["results"]
        .as_array()
        .expect("results");
    assert_eq!(results.len(), 6);
    let absent = &results[5];
    assert_eq!(absent["ruleId"], json!("MC101"));
    assert_eq!(absent["ruleIndex"], json!(0));
    assert_eq!(absent["baselineState"], json!("absent"));
    assert_eq!(
        absent["partialFingerprints"]["mcpChaos/v1"],
        json!("fp-fixed-mc101")
    );
    assert!(
        absent["message"]["text"]
            .as_str()
            .is_some_and(|t| t.starts_with("Fixed since the baseline: MC101"))
    );
    assert!(absent["locations"][0]["physicalLocation"]["region"].is_null());
}

// --- JUnit ---------------------------------------------------------------------------------

fn parsed_junit() -> junit_parser::TestSuites {
    let xml = junit::junit(&suite())
        .to_string()
        .expect("JUnit serializes");
    junit_parser::from_reader(std::io::Cursor::new(xml.as_bytes())).expect("junit-parser reads it")
}

/// The text of every `<tag>` element of `xml`, in document order, entities resolved.
fn element_texts(xml: &str, tag: &str) -> Vec<String> {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(xml);
    let mut texts = Vec::new();
    loop {
        match reader.read_event().expect("well-formed XML") {
            Event::Start(e) if e.name().as_ref() == tag => {
                let raw = reader.read_text(e.name()).expect("element text");
                texts.push(
                    quick_xml::escape::unescape(&raw)
                        .expect("valid entities")
                        .into_owned(),
                );
            }
            Event::Eof => return texts,
            _ => {}
        }
    }
}

#[test]
fn junit_has_a_suite_per_scenario_and_a_case_per_step() {
    let report = parsed_junit();
    assert_eq!(report.name, "mcp-chaos");
    assert_eq!(report.tests, 6);
    assert_eq!(report.failures, 2);
    assert_eq!(report.errors, 1);
    assert!((report.time - 4.65).abs() < 1e-9, "{}", report.time);

    let names: Vec<&str> = report.suites.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "filesystem-happy-path",
            "records-upstream-faults",
            "http-origin"
        ]
    );
    // (tests, failures, errors) per suite, from the attributes and recounted from the cases.
    let expected = [(2, 0, 0), (3, 2, 0), (1, 0, 1)];
    for (suite, (tests, failures, errors)) in report.suites.iter().zip(expected) {
        assert_eq!(
            (suite.tests, suite.failures, suite.errors),
            (tests, failures, errors),
            "{}",
            suite.name
        );
        let recount = (
            suite.cases.len() as u64,
            suite.cases.iter().filter(|c| c.status.is_failure()).count() as u64,
            suite.cases.iter().filter(|c| c.status.is_error()).count() as u64,
        );
        assert_eq!(recount, (tests, failures, errors), "{}", suite.name);
    }
}

#[test]
fn junit_failures_name_new_findings_and_replays() {
    let report = parsed_junit();
    let records = &report.suites[1];
    assert_eq!(
        records.properties.hashmap.get("file").map(String::as_str),
        Some("./scenarios/records.toml")
    );
    let case = &records.cases[0];
    assert_eq!(case.original_name, "call get_record under 404");
    assert_eq!(case.classname.as_deref(), Some("records-upstream-faults"));
    assert_eq!(case.file.as_deref(), Some("./scenarios/records.toml"));
    assert_eq!(case.line, Some(12));
    assert!((case.time - 0.25).abs() < 1e-9, "{}", case.time);
    let failure = case.status.failure_as_ref();
    assert!(
        failure.message.starts_with(
            "1 new finding: MC201 business-failure-as-protocol-error (tool get_record)"
        ),
        "{}",
        failure.message
    );
    assert!(failure.message.contains(REPLAY), "{}", failure.message);
    assert_eq!(failure.failure_type, "MC201");
    // junit-parser loses the quotes of the excerpts (see the module docs); quick-xml reads them.
    let xml = junit::junit(&suite())
        .to_string()
        .expect("JUnit serializes");
    let failure_texts = element_texts(&xml, "failure");
    assert_eq!(failure_texts.len(), 2);
    let text = &failure_texts[0];
    for needle in [
        "MC201 business-failure-as-protocol-error (violation, protocol 2025-11-25)\n",
        "tool: get_record\n",
        "step line: 12\n",
        "probe: upstream 404",
        r#"request: {"jsonrpc":"2.0","id":4,"method":"tools/call""#,
        r#"response: {"jsonrpc":"2.0","id":4,"error":{"code":-32603"#,
        &format!("replay: {REPLAY}"),
        "fingerprint: fp-new-mc201",
    ] {
        assert!(text.contains(needle), "{needle:?} not in {text}");
    }
    // The known finding of the same step is reported, not failed.
    let out = case.system_out.as_deref().unwrap_or_default();
    assert!(
        out.contains("known (dev build prints traces; fixed in 2.0): MC204"),
        "{out}"
    );
    assert!(!failure.message.contains("MC204"));

    // The step with a baselined finding passed, and says so in system-out.
    let baselined = &records.cases[1];
    assert!(baselined.status.is_success());
    let out = baselined.system_out.as_deref().unwrap_or_default();
    assert!(
        out.contains("baselined (upstream issue records#12): MC203"),
        "{out}"
    );

    // The failed expectation fails its step; the expected finding goes to system-out.
    let expectation = &records.cases[2];
    let failure = expectation.status.failure_as_ref();
    assert!(
        failure.message.contains("MC601 expectation-failed"),
        "{}",
        failure.message
    );
    assert!(!failure.message.contains("MC202"));
    let out = expectation.system_out.as_deref().unwrap_or_default();
    assert!(out.contains("expected: MC202"), "{out}");
}

#[test]
fn junit_errored_scenario_is_an_error_not_a_failure() {
    let report = parsed_junit();
    let http = &report.suites[2];
    let case = &http.cases[0];
    assert_eq!(case.original_name, junit::SCENARIO_CASE);
    assert_eq!(case.file.as_deref(), Some("scenarios/http origin.toml"));
    let error = case.status.error_as_ref();
    assert_eq!(
        error.message,
        "server did not start: connection refused on 127.0.0.1:9"
    );
    assert!(error.text.contains("exit code 2"), "{}", error.text);
    let xml = junit::junit(&suite())
        .to_string()
        .expect("JUnit serializes");
    assert_eq!(
        element_texts(&xml, "error"),
        [
            "scenario http-origin could not be carried out (exit code 2): server did not start: \
          connection refused on 127.0.0.1:9"
        ]
    );
}

#[test]
fn junit_reports_unclaimed_findings_and_stepless_failures() {
    let mut report = suite();
    // A new finding no step claims, in a scenario whose steps all passed.
    let scenario = &mut report.scenarios[1];
    for step in &mut scenario.steps {
        step.passed = true;
        step.findings.retain(|&i| i != 0);
    }
    let parsed = junit_parser::from_reader(std::io::Cursor::new(
        junit::junit(&report)
            .to_string()
            .expect("JUnit serializes")
            .into_bytes(),
    ))
    .expect("junit-parser reads it");
    let suite = &parsed.suites[1];
    let unclaimed = suite
        .cases
        .iter()
        .find(|c| c.original_name == junit::UNCLAIMED_CASE)
        .expect("a case for unclaimed findings");
    assert!(unclaimed.status.failure_as_ref().message.contains("MC201"));

    // A failed scenario with no failing case at all still fails.
    let mut report = suite_without_findings();
    report.scenarios[0].status = ScenarioStatus::Failed;
    let parsed = junit_parser::from_reader(std::io::Cursor::new(
        junit::junit(&report)
            .to_string()
            .expect("JUnit serializes")
            .into_bytes(),
    ))
    .expect("junit-parser reads it");
    assert_eq!(parsed.failures, 1);
}

fn suite_without_findings() -> SuiteReport {
    let mut report = suite();
    report.scenarios.truncate(1);
    report
}

#[test]
fn junit_keeps_duplicate_labels_apart() {
    let mut report = suite_without_findings();
    let steps = &mut report.scenarios[0].steps;
    steps.push(step("call read_file", 17, vec![], true));
    let parsed = junit_parser::from_reader(std::io::Cursor::new(
        junit::junit(&report)
            .to_string()
            .expect("JUnit serializes")
            .into_bytes(),
    ))
    .expect("junit-parser reads it");
    let names: Vec<&str> = parsed.suites[0]
        .cases
        .iter()
        .map(|c| c.original_name.as_str())
        .collect();
    assert_eq!(
        names,
        [
            "call read_file (line 5)",
            "generate write_file (16 valid, 8 invalid)",
            "call read_file (line 17)"
        ]
    );
}

// --- Markdown ------------------------------------------------------------------------------

#[test]
fn markdown_summarises_the_suite() {
    let md = markdown::markdown(&suite());
    assert!(md.starts_with("## mcp-chaos scenarios: ERROR\n"), "{md}");
    assert!(
        md.contains(
            "**3 scenarios: 1 passed, 1 failed, 1 errored** in 4.650 s · shard 1/2 · baseline \
             `ci/mcp-chaos-baseline.json` · exit code 2"
        ),
        "{md}"
    );
    assert!(
        md.contains(
            "| records-upstream-faults | `./scenarios/records.toml` | FAIL | 1/3 | 2 | 1 | 1 | 1 | 1 | 3.400 s |"
        ),
        "{md}"
    );
    assert!(
        md.contains("| filesystem-happy-path | `scenarios/filesystem.toml` | PASS | 2/2 | 0 | 0 | 0 | 0 | 0 | 1.200 s |"),
        "{md}"
    );
    assert!(
        md.contains("| http-origin | `scenarios/http origin.toml` | ERROR | 0/0 |"),
        "{md}"
    );
    assert!(
        md.contains("server did not start: connection refused on 127.0.0.1:9"),
        "{md}"
    );

    // Every new finding, with its replay command in a code block.
    assert!(md.contains("### New findings (2)"), "{md}");
    assert!(
        md.contains("#### `MC201` business-failure-as-protocol-error (violation)"),
        "{md}"
    );
    assert!(
        md.contains("#### `MC601` expectation-failed (violation)"),
        "{md}"
    );
    assert!(md.contains("- **Tool:** `get_record`"), "{md}");
    assert!(
        md.contains("- **Scenario:** records-upstream-faults (`./scenarios/records.toml` line 12)"),
        "{md}"
    );
    assert!(
        md.contains(&format!("  ```sh\n  {REPLAY}\n  ```\n")),
        "{md}"
    );
    // The `|` in the message is escaped.
    assert!(
        md.contains("- **Message:** upstream 404 came back as JSON-RPC error -32603 \\| not as a CallToolResult"),
        "{md}"
    );
    assert!(!md.contains("-32603 | not"), "{md}");
    // Request and response excerpts, collapsed.
    assert!(
        md.contains("<details><summary>Request and response</summary>"),
        "{md}"
    );

    // The fixed baseline entry and the accepted findings.
    assert!(md.contains("### Baseline entries not seen (1)"), "{md}");
    assert!(
        md.contains("| records-upstream-faults | `MC101` | unknown-tool-not-protocol-error |  | unknown tool | answered isError:true until 1.2 | `fp-fixed-mc101` |"),
        "{md}"
    );
    assert!(md.contains("Accepted findings (3)"), "{md}");
    assert!(
        md.contains("| baseline | upstream issue records\\#12 |"),
        "{md}"
    );
}

#[test]
fn markdown_table_cells_survive_hostile_text() {
    let mut report = suite();
    report.scenarios[0].name = "a|b\nc `d`".to_owned();
    report.scenarios[1].findings[2].finding.message = "x | y\n`z` **w**".to_owned();
    let md = markdown::markdown(&report);
    assert!(md.contains("| a\\|b<br>c \\`d\\` |"), "{md}");
    assert!(md.contains("| x \\| y<br>\\`z\\` \\*\\*w\\*\\* |"), "{md}");
    // Every table row still has as many cells as its header.
    for table in md.split("\n\n").filter(|b| b.starts_with('|')) {
        let mut lines = table.lines();
        let header = lines.next().expect("header");
        let cells = |l: &str| l.replace("\\|", "").matches('|').count();
        for line in lines {
            assert_eq!(cells(line), cells(header), "{line}");
        }
    }
}

// --- Files ---------------------------------------------------------------------------------

#[test]
fn writers_create_their_files() {
    let dir = tempfile::tempdir().expect("temp dir");
    let report = suite();
    let junit_path = dir.path().join("out/junit.xml");
    let sarif_path = dir.path().join("out/mcp-chaos.sarif");
    let md_path = dir.path().join("out/summary.md");
    junit::write_junit(&report, &junit_path).expect("write JUnit");
    sarif::write_sarif(&report, &sarif_path).expect("write SARIF");
    markdown::write_markdown(&report, &md_path).expect("write Markdown");

    let xml = std::fs::read_to_string(&junit_path).expect("read JUnit");
    assert!(xml.starts_with("<?xml"), "{xml}");
    let log: Value =
        serde_json::from_str(&std::fs::read_to_string(&sarif_path).expect("read SARIF"))
            .expect("SARIF is JSON");
    assert_valid(&sarif_validator(), &log);
    assert_eq!(
        std::fs::read_to_string(&md_path).expect("read Markdown"),
        markdown::markdown(&report)
    );
}
