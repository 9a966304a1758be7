//! The wire phase: frames no probe list names, drawn by the generator of `mcp_chaos::fuzz`,
//! catch the fixture's wire flaws in the default campaign (`mcp-chaos run` with no extra
//! flags), each shrunk to a minimal frame that replays; the correct fixture stays clean.

use std::path::PathBuf;

use mcp_chaos_tests::{ChaosRun, fixture, fixture_command, run_chaos};
use serde_json::Value;

/// The flaws with a case below.
pub const WIRE_FLAWS: &[&str] = &[
    "exit-on-invalid-utf8-string",
    "die-on-deep-nesting",
    "double-answer-string-id",
];

/// The default campaign against the fixture with `flaw` planted, over stdio, with the seed
/// given (replay files go to `replays`).
fn default_run(flaw: &str, seed: &str, replays: &std::path::Path) -> ChaosRun {
    run_chaos(&[
        "run",
        "--stdio",
        &fixture_command(&[flaw]),
        "--seed",
        seed,
        "--replays",
        &replays.to_string_lossy(),
    ])
}

/// The one finding of `invariant` that a wire frame produced.
fn wire_finding(run: &ChaosRun, invariant: &str) -> Value {
    let found: Vec<Value> = run
        .findings()
        .into_iter()
        .filter(|f| f["invariant"] == invariant)
        .filter(|f| {
            f["probe"]
                .as_str()
                .is_some_and(|p| p.starts_with("wire frame"))
        })
        .collect();
    assert_eq!(found.len(), 1, "{found:#?}\n{}", run.stdout);
    found[0].clone()
}

/// The finding's replay file still fails against the flawed fixture and is fixed against the
/// correct one; returns the file.
fn replays(finding: &Value) -> Value {
    let path = PathBuf::from(finding["replay"].as_str().expect("a replay file"));
    let file: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("readable")).expect("JSON");
    let again = run_chaos(&["replay", &path.to_string_lossy()]);
    assert_eq!(again.code, 1, "{}{}", again.stdout, again.stderr);
    assert!(again.stdout.contains("STILL FAILS"), "{}", again.stdout);
    let fixed = run_chaos(&[
        "replay",
        &path.to_string_lossy(),
        "--stdio",
        &fixture_command(&[]),
    ]);
    assert_eq!(fixed.code, 0, "{}{}", fixed.stdout, fixed.stderr);
    file
}

/// A string value holding a byte that is not UTF-8 kills the flawed fixture: caught as
/// `server-died` by the default campaign under several seeds, and shrunk to the byte inside a
/// short string, shown escaped, whose exact bytes the replay file carries.
#[test]
fn wire_invalid_utf8_in_a_string_is_caught_and_shrunk() {
    for seed in ["1", "7", "42"] {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let run = default_run("exit-on-invalid-utf8-string", seed, dir.path());
        assert_eq!(
            run.invariants(),
            vec!["server-died"],
            "seed {seed}: {}",
            run.stdout
        );
        assert_eq!(run.code, 1);
        let f = wire_finding(&run, "server-died");
        let request = f["request"].as_str().expect("the shrunk frame");
        assert!(request.contains("\\x"), "seed {seed}: {request}");
        assert!(request.len() <= 16, "seed {seed}: {request}");
        let message = f["message"].as_str().unwrap_or_default();
        assert!(message.contains("shrunk in"), "{message}");
        if seed == "1" {
            let file = replays(&f);
            let bytes = base64_decode(file["wire"]["base64"].as_str().expect("base64"));
            assert!(std::str::from_utf8(&bytes).is_err(), "{bytes:?}");
            assert!(bytes.len() <= 8, "{bytes:?}");
        }
    }
}

/// A frame nested past 64 levels kills the flawed fixture: caught by the default campaign
/// under several seeds and shrunk to a frame nested 65 levels deep.
#[test]
fn wire_deep_nesting_is_caught_and_shrunk() {
    for seed in ["1", "7", "42"] {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let run = default_run("die-on-deep-nesting", seed, dir.path());
        assert_eq!(
            run.invariants(),
            vec!["server-died"],
            "seed {seed}: {}",
            run.stdout
        );
        let f = wire_finding(&run, "server-died");
        let request = f["request"].as_str().expect("the shrunk frame");
        assert_eq!(
            mcp_chaos::wire::json_depth(request.as_bytes(), 10_000),
            65,
            "seed {seed}: {request}"
        );
        assert!(request.len() < 400, "seed {seed}: {request}");
        if seed == "1" {
            replays(&f);
        }
    }
}

/// Over Streamable HTTP the same: the deep frame is a POST body.
#[test]
fn wire_deep_nesting_is_caught_over_http() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port");
    let url = format!("http://127.0.0.1:{port}/mcp");
    let start = format!(
        "{} --flaw=die-on-deep-nesting --http 127.0.0.1:{port}",
        fixture().display()
    );
    let run = run_chaos(&["run", "--http", &url, "--start", &start, "--seed", "3"]);
    assert!(
        run.invariants().contains(&"server-died".to_owned()),
        "{}",
        run.stdout
    );
    let f = wire_finding(&run, "server-died");
    let request = f["request"].as_str().expect("the shrunk frame");
    assert_eq!(
        mcp_chaos::wire::json_depth(request.as_bytes(), 10_000),
        65,
        "{request}"
    );
}

/// A request with a string id answered twice is a `wire-answer` violation, shrunk to a short
/// request.
#[test]
fn wire_double_answer_is_caught_and_shrunk() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let run = default_run("double-answer-string-id", "1", dir.path());
    assert_eq!(run.invariants(), vec!["wire-answer"], "{}", run.stdout);
    let found: Vec<Value> = run.findings();
    assert!(found.iter().all(|f| f["severity"] == "violation"));
    let shortest = found
        .iter()
        .filter_map(|f| f["request"].as_str())
        .map(str::len)
        .min()
        .unwrap_or(usize::MAX);
    assert!(shortest <= 60, "{found:#?}");
    replays(&found[0]);
}

/// The correct fixture gets no wire-phase finding, over stdio under every version and over
/// HTTP; `--wire-cases 0` turns the phase off.
#[test]
fn wire_correct_fixture_is_clean() {
    for version in [
        "2024-11-05",
        "2025-03-26",
        "2025-06-18",
        "2025-11-25",
        "2026-07-28",
    ] {
        let run = run_chaos(&[
            "run",
            "--stdio",
            &fixture_command(&[]),
            "--protocol-version",
            version,
            "--skip-generated",
            "--skip-chaos",
        ]);
        assert_eq!(
            run.findings(),
            Vec::<Value>::new(),
            "{version}: {}",
            run.stdout
        );
        let wire = &run.report.as_ref().expect("a report")["summary"]["wire"];
        assert_eq!(wire["frames"], 160, "{version}: {wire}");
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port");
    let url = format!("http://127.0.0.1:{port}/mcp");
    let start = format!("{} --http 127.0.0.1:{port}", fixture().display());
    let run = run_chaos(&["run", "--http", &url, "--start", &start, "--skip-generated"]);
    assert_eq!(run.findings(), Vec::<Value>::new(), "{}", run.stdout);
    let off = run_chaos(&[
        "run",
        "--stdio",
        &fixture_command(&["exit-on-invalid-utf8-string"]),
        "--wire-cases",
        "0",
    ]);
    assert_eq!(off.findings(), Vec::<Value>::new(), "{}", off.stdout);
    assert!(
        off.report.expect("a report")["summary"]
            .get("wire")
            .is_none()
    );
}

fn base64_decode(text: &str) -> Vec<u8> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut bits = 0u32;
    let mut n = 0;
    let mut out = Vec::new();
    for c in text.bytes().filter(|c| *c != b'=') {
        let Some(v) = ALPHABET.iter().position(|a| *a == c) else {
            continue;
        };
        bits = (bits << 6) | v as u32;
        n += 6;
        if n >= 8 {
            n -= 8;
            out.push((bits >> n) as u8);
        }
    }
    out
}
