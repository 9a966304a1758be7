//! An HTTP server that requires a bearer token (the fixture with `FIXTURE_BEARER_TOKEN`):
//! without `--header` the run is exit 2 naming the 401 and what the server asked for; with
//! `--header "Authorization: Bearer ${TOKEN}"` the campaign runs; the token is in no report
//! (JSON, JUnit, SARIF, Markdown, HTML), replay, recording or line printed; a replay file keeps
//! the header's name and `${TOKEN}` template, and `mcp-chaos replay` sends it again.

use std::path::Path;
use std::process::Command;

use mcp_chaos_tests::{fixture, mcp_chaos};

const TOKEN: &str = "e2e-tok-7f3a9c2d51b8";

fn port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

/// `mcp-chaos run --http URL --start FIXTURE` with the fixture requiring [`TOKEN`], `TOKEN` in
/// mcp-chaos's environment, and `extra` arguments.
fn run(port: u16, extra: &[&str]) -> Out {
    let url = format!("http://127.0.0.1:{port}/mcp");
    let start = format!("{} --http 127.0.0.1:{port}", fixture().display());
    let out = Command::new(mcp_chaos())
        .args([
            "run",
            "--http",
            &url,
            "--start",
            &start,
            "--protocol-version",
            "2025-11-25",
            "--timeout-ms",
            "3000",
            "--quiet",
        ])
        .args(extra)
        .env("FIXTURE_BEARER_TOKEN", TOKEN)
        .env("TOKEN", TOKEN)
        .output()
        .expect("mcp-chaos runs");
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Every file under `dir`, as (path, text).
fn files(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("a readable folder").flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files(&path));
        } else {
            let bytes = std::fs::read(&path).expect("a readable file");
            out.push((
                path.display().to_string(),
                String::from_utf8_lossy(&bytes).into_owned(),
            ));
        }
    }
    out
}

#[test]
fn without_a_header_the_run_is_exit_2_naming_the_401_and_the_challenge() {
    let port = port();
    let out = run(port, &[]);
    assert_eq!(out.code, 2, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains("HTTP 401 Unauthorized"),
        "{}",
        out.stderr
    );
    let metadata = format!("http://127.0.0.1:{port}/.well-known/oauth-protected-resource");
    assert!(
        out.stderr.contains(&format!(
            "WWW-Authenticate: Bearer resource_metadata=\"{metadata}\""
        )),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("--header \"Authorization: Bearer ${TOKEN}\"")
    );
}

#[test]
fn a_wrong_token_is_exit_2_naming_the_header_not_its_value() {
    let out = run(
        port(),
        &["--header", "Authorization: Bearer wrong-token-value"],
    );
    assert_eq!(out.code, 2, "{}\n{}", out.stdout, out.stderr);
    assert!(out.stderr.contains("invalid_token"), "{}", out.stderr);
    assert!(
        out.stderr.contains("--header Authorization"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("wrong-token-value"), "{}", out.stderr);
}

#[test]
fn an_unset_variable_is_a_usage_error_naming_it() {
    let out = run(
        port(),
        &["--header", "Authorization: Bearer ${MCP_CHAOS_E2E_UNSET}"],
    );
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(
        out.stderr.contains("MCP_CHAOS_E2E_UNSET") && out.stderr.contains("not set"),
        "{}",
        out.stderr
    );
}

#[test]
fn with_the_header_the_campaign_runs_and_the_token_is_nowhere() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let report = dir.path().join("report.json");
    let out = run(
        port(),
        &[
            "--header",
            "Authorization: Bearer ${TOKEN}",
            "--cases",
            "4",
            "--report-json",
            report.to_str().expect("utf-8"),
            "--replays",
            dir.path().join("replays").to_str().expect("utf-8"),
            "--record",
            dir.path().join("record").to_str().expect("utf-8"),
            "--junit",
            dir.path().join("junit.xml").to_str().expect("utf-8"),
            "--sarif",
            dir.path().join("results.sarif").to_str().expect("utf-8"),
            "--markdown",
            dir.path().join("summary.md").to_str().expect("utf-8"),
            "--html",
            dir.path().join("report.html").to_str().expect("utf-8"),
        ],
    );
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).expect("a report")).expect("JSON");
    assert!(
        json["summary"]["tool_calls"].as_u64().unwrap_or(0) > 10,
        "{json}"
    );
    assert!(json["summary"]["tools"].as_u64().unwrap_or(0) > 0, "{json}");
    let written = files(dir.path());
    for name in ["junit.xml", "results.sarif", "summary.md", "report.html"] {
        assert!(written.iter().any(|(p, _)| p.ends_with(name)), "{name}");
    }
    for (what, text) in written
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .chain([
            ("stdout", out.stdout.as_str()),
            ("stderr", out.stderr.as_str()),
        ])
    {
        assert!(!text.contains(TOKEN), "the token appears in {what}");
    }
}

/// A scenario whose `[server] headers` carry `${E2E_TOKEN}`: played with the token; without
/// the header, exit 2 naming the 401.
#[test]
fn scenario_headers_are_sent_expanded_and_redacted() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let body = |headers: &str| {
        format!(
            r#"
[server]
http = "http://127.0.0.1:{{port}}/mcp"
start = ["{fixture}", "--http", "127.0.0.1:{{port}}"]
protocol_version = "2025-11-25"
env = {{ FIXTURE_BEARER_TOKEN = "${{E2E_TOKEN}}" }}
{headers}

[[step]]
call = {{ tool = "echo", arguments = {{ text = "hello" }} }}
expect = {{ is_error = false, content_matches = "hello" }}
"#,
            fixture = fixture().display()
        )
    };
    let with = dir.path().join("with.toml");
    std::fs::write(
        &with,
        body(r#"headers = { Authorization = "Bearer ${E2E_TOKEN}" }"#),
    )
    .expect("write");
    let without = dir.path().join("without.toml");
    std::fs::write(&without, body("")).expect("write");
    let out_dir = dir.path().join("out");
    let scenario = |file: &Path| {
        Command::new(mcp_chaos())
            .arg("scenario")
            .arg(file)
            .arg("-q")
            .arg("--report-json")
            .arg(out_dir.join("report.json"))
            .arg("--junit")
            .arg(out_dir.join("junit.xml"))
            .arg("--sarif")
            .arg(out_dir.join("results.sarif"))
            .arg("--markdown")
            .arg(out_dir.join("summary.md"))
            .env("E2E_TOKEN", TOKEN)
            .output()
            .expect("mcp-chaos runs")
    };
    let ok = scenario(&with);
    let stdout = String::from_utf8_lossy(&ok.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&ok.stderr).into_owned();
    assert_eq!(ok.status.code(), Some(0), "{stdout}\n{stderr}");
    let mut seen = files(&out_dir);
    assert_eq!(seen.len(), 4, "{seen:?}");
    seen.push(("stdout".into(), stdout));
    seen.push(("stderr".into(), stderr));
    let refused = scenario(&without);
    let stdout = String::from_utf8_lossy(&refused.stdout).into_owned();
    assert_eq!(refused.status.code(), Some(2), "{stdout}");
    let report = std::fs::read_to_string(out_dir.join("report.json")).expect("a report");
    assert!(report.contains("HTTP 401 Unauthorized"), "{report}");
    seen.extend(files(&out_dir));
    seen.push(("stdout".into(), stdout));
    for (what, text) in &seen {
        assert!(!text.contains(TOKEN), "the token appears in {what}");
    }
}

/// A replay file of a run that needed `--header` keeps the header's name and its `${TOKEN}`
/// template, never the token; `mcp-chaos replay` sends it again (expanded from its own
/// environment) and reproduces the finding. Unset, the variable is a usage error naming it. A
/// header written literally is saved without its value and must be given to `replay` again.
#[test]
fn replay_files_carry_header_names_and_templates_never_values() {
    let port = port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let start = format!(
        "{} --http 127.0.0.1:{port} --flaw=crash-on-nul",
        fixture().display()
    );
    let dir = tempfile::tempdir().expect("a temporary directory");
    let campaign = |replays: &Path, header: &str| {
        Command::new(mcp_chaos())
            .args(["run", "--http", &url, "--start", &start, "--header", header])
            .args(["--protocol-version", "2025-11-25", "--timeout-ms", "3000"])
            .args(["--skip-probes", "--skip-chaos", "--skip-version-probe"])
            .args(["--tools", "echo", "--seed", "7", "--quiet", "--replays"])
            .arg(replays)
            .env("FIXTURE_BEARER_TOKEN", TOKEN)
            .env("TOKEN", TOKEN)
            .output()
            .expect("mcp-chaos runs")
    };
    let replay = |file: &Path, extra: &[&str], token: Option<&str>| {
        let mut cmd = Command::new(mcp_chaos());
        cmd.arg("replay")
            .arg(file)
            .args(extra)
            .env("FIXTURE_BEARER_TOKEN", TOKEN)
            .env_remove("TOKEN");
        if let Some(t) = token {
            cmd.env("TOKEN", t);
        }
        let out = cmd.output().expect("mcp-chaos runs");
        Out {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    };
    let first_replay = |replays: &Path| {
        let out = files(replays);
        assert!(!out.is_empty(), "no replay file in {}", replays.display());
        for (path, text) in &out {
            assert!(!text.contains(TOKEN), "the token in {path}");
        }
        let (path, text) = out.into_iter().next().expect("a replay file");
        let json: serde_json::Value = serde_json::from_str(&text).expect("JSON");
        (std::path::PathBuf::from(path), json)
    };

    // By template: saved, and expanded again at replay.
    let templated = dir.path().join("templated");
    let out = campaign(&templated, "Authorization: Bearer ${TOKEN}");
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let (file, json) = first_replay(&templated);
    assert_eq!(
        json["server"]["http"]["headers"],
        serde_json::json!([{"name": "Authorization", "value": "Bearer ${TOKEN}"}]),
        "{json:#}"
    );
    let again = replay(&file, &[], Some(TOKEN));
    assert_eq!(again.code, 1, "{}\n{}", again.stdout, again.stderr);
    assert!(again.stdout.contains("STILL FAILS"), "{}", again.stdout);
    assert!(!again.stdout.contains(TOKEN) && !again.stderr.contains(TOKEN));
    let unset = replay(&file, &[], None);
    assert_eq!(unset.code, 3, "{}\n{}", unset.stdout, unset.stderr);
    assert!(unset.stderr.contains("TOKEN") && unset.stderr.contains("not set"));

    // Written literally: saved by name only; replay needs it again.
    let literal = dir.path().join("literal");
    let out = campaign(&literal, &format!("Authorization: Bearer {TOKEN}"));
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let (file, json) = first_replay(&literal);
    assert_eq!(
        json["server"]["http"]["headers"],
        serde_json::json!([{"name": "Authorization", "value": null}]),
        "{json:#}"
    );
    let missing = replay(&file, &[], Some(TOKEN));
    assert_eq!(missing.code, 3, "{}\n{}", missing.stdout, missing.stderr);
    assert!(
        missing.stderr.contains("Authorization") && missing.stderr.contains("--header"),
        "{}",
        missing.stderr
    );
    let given = replay(
        &file,
        &["--header", "Authorization: Bearer ${TOKEN}"],
        Some(TOKEN),
    );
    assert_eq!(given.code, 1, "{}\n{}", given.stdout, given.stderr);
    assert!(given.stdout.contains("STILL FAILS"), "{}", given.stdout);
}
