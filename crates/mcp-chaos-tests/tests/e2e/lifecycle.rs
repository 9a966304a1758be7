//! The lifecycle-order cases (`served-before-initialize`, MC115): the default campaign finds
//! a fixture that serves `tools/list` before `initialize`, as one minimal case, and the
//! correct fixture, which refuses it, stays clean while the cases still run.

use mcp_chaos_tests::{fixture_command, run_chaos};

/// The fixture flaws proven here.
pub const LIFECYCLE_FLAWS: &[&str] = &["serve-before-initialize"];

/// `mcp-chaos run` with no extra flag: the flaw is one warning (exit 0), on the request
/// `tools/list` alone, sent before initialize, with the spec's lifecycle page.
#[test]
fn lifecycle_the_default_campaign_finds_a_server_serving_before_initialize() {
    let run = run_chaos(&[
        "run",
        "--stdio",
        &fixture_command(&["serve-before-initialize"]),
    ]);
    let findings = run.findings();
    assert_eq!(
        run.invariants(),
        ["served-before-initialize"],
        "{findings:#?}"
    );
    assert_eq!(findings.len(), 1, "{findings:#?}");
    let f = &findings[0];
    assert_eq!(f["code"], "MC115");
    assert_eq!(f["severity"], "warning");
    assert_eq!(f["probe"], "tools/list before initialize");
    assert_eq!(f["protocol_version"], "2025-11-25");
    assert_eq!(
        f["spec"],
        "https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle#initialization"
    );
    assert_eq!(
        f["request"],
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#
    );
    let message = f["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("tools/list sent on a fresh connection before initialize")
            && message.contains("tools/list result with 3 tools"),
        "{message}"
    );
    assert!(
        f["response"]
            .as_str()
            .unwrap_or_default()
            .contains("\"tools\"")
    );
    assert_eq!(
        run.code, 0,
        "a warning does not fail the run: {}",
        run.stderr
    );
}

/// The correct fixture refuses a request before initialize (-32600), serves one between the
/// initialize response and notifications/initialized and a second initialize: no finding,
/// and the three cases are in the transcript.
#[test]
fn lifecycle_the_correct_fixture_is_clean_and_the_cases_run() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let record = dir.path().join("rec");
    let run = run_chaos(&[
        "run",
        "--stdio",
        &fixture_command(&[]),
        "--protocol-version",
        "2025-11-25",
        "--skip-tool-calls",
        "--skip-chaos",
        "--record",
        record.to_str().expect("a UTF-8 path"),
    ]);
    assert_eq!(
        run.findings(),
        Vec::<serde_json::Value>::new(),
        "{}",
        run.stderr
    );
    assert_eq!(run.code, 0);
    let transcript =
        std::fs::read_to_string(record.join("transcript.jsonl")).expect("a transcript");
    for probe in [
        "tools/list before initialize",
        "tools/list before notifications/initialized",
        "second initialize",
    ] {
        let received = transcript
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .find(|e| e["probe"] == probe && e["direction"] == "received")
            .unwrap_or_else(|| panic!("no answer to {probe} recorded:\n{transcript}"));
        let file = received["file"].as_str().expect("a file");
        let answer: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(record.join(file)).expect("the frame"))
                .expect("JSON");
        if probe == "tools/list before initialize" {
            assert_eq!(answer["error"]["code"], -32600, "{answer}");
        } else {
            assert!(answer.get("result").is_some(), "{probe}: {answer}");
        }
    }
}

/// `--skip-probes` skips the lifecycle cases too (no fresh process for them).
#[test]
fn lifecycle_cases_are_protocol_probes() {
    let run = run_chaos(&[
        "run",
        "--stdio",
        &fixture_command(&["serve-before-initialize"]),
        "--protocol-version",
        "2025-11-25",
        "--skip-probes",
        "--skip-tool-calls",
        "--skip-chaos",
    ]);
    assert_eq!(
        run.findings(),
        Vec::<serde_json::Value>::new(),
        "{}",
        run.stderr
    );
}

/// A server that answers ping before initialize but exits on any other request before it.
const EXITS_BEFORE_INITIALIZE: &str = r#"
import json, sys
ready = False
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        print(json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}}), flush=True)
        continue
    if not isinstance(m, dict) or "id" not in m or "method" not in m:
        continue
    method, result, error = m["method"], None, None
    if method == "ping":
        result = {}
    elif method == "initialize":
        ready = True
        result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "t", "version": "1"}}
    elif not ready:
        sys.stderr.write(method + " before initialize: exiting\n")
        sys.exit(3)
    elif method == "tools/list":
        result = {"tools": []}
    else:
        error = {"code": -32601, "message": "Method not found: " + str(method)}
    reply = {"jsonrpc": "2.0", "id": m["id"]}
    reply.update({"error": error} if error else {"result": result})
    print(json.dumps(reply), flush=True)
"#;

/// A server that exits on a request before initialize is a server-died warning naming that
/// request (the spec leaves the reaction open; the client broke the order), not a violation,
/// and not served-before-initialize.
#[test]
fn lifecycle_a_server_exiting_before_initialize_is_a_warning() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let script = dir.path().join("exits.py");
    std::fs::write(&script, EXITS_BEFORE_INITIALIZE).expect("the script is written");
    let run = run_chaos(&[
        "run",
        "--stdio",
        &format!("python3 {}", script.display()),
        "--protocol-version",
        "2025-11-25",
        "--skip-tool-calls",
        "--skip-chaos",
        "--skip-version-probe",
        "--timeout-ms",
        "3000",
    ]);
    let findings = run.findings();
    let died: Vec<_> = findings
        .iter()
        .filter(|f| f["probe"] == "tools/list before initialize")
        .collect();
    assert_eq!(died.len(), 1, "{findings:#?}");
    assert_eq!(died[0]["invariant"], "server-died");
    assert_eq!(died[0]["severity"], "warning");
    let message = died[0]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("exited (exit code 3) after tools/list before initialize")
            && message.contains("before initialize: exiting"),
        "{message}"
    );
    assert!(
        !run.invariants()
            .contains(&"served-before-initialize".to_owned())
    );
}
