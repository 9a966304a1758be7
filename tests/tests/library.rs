//! The library API as a server author uses it in `cargo test`: a `proptest!` block over a
//! tool's generated arguments, and the shipped example run against the fixture server.

use mcp_chaos::{Harness, strategies};
use mcp_chaos_tests::{fixture_command, workspace_bin};
use proptest::prelude::*;

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

/// The example under harness/examples runs against the fixture and exits 0.
#[test]
fn example_check_server_runs_clean_on_the_fixture() {
    let example = workspace_bin("mcp-chaos", "mcp-chaos")
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
}
