//! Checks every tool of an MCP server with generated arguments, as a server author would in
//! `cargo test`, using the library API.
//!
//! ```sh
//! cargo run --example check_server -- "node build/index.js"
//! cargo run --example check_server -- "node build/index.js" API_BASE_URL
//! ```
//!
//! For each tool: 32 schema-valid argument values and 16 that break one constraint each; with
//! a second argument, the name of the environment variable the server reads its upstream's
//! base URL from, a fake upstream is started and each tool is also called 16 times under a
//! drawn upstream fault. Every finding is printed, and the exit code is 1 when there is a
//! violation.

use mcp_chaos::finding::Severity;
use mcp_chaos::{Harness, strategies};
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::TestRunner;

fn main() {
    let Some(command) = std::env::args().nth(1) else {
        eprintln!("usage: check_server \"SERVER COMMAND LINE\" [UPSTREAM_ENV]");
        std::process::exit(3);
    };
    let upstream_env = std::env::args().nth(2);
    let mut builder = Harness::builder().stdio(&command);
    if let Some(name) = &upstream_env {
        builder = builder.upstream_env(name);
    }
    let server = match builder.start() {
        Ok(h) => h,
        Err(e) => {
            eprintln!("check_server: {e}");
            std::process::exit(2);
        }
    };
    let tools = server.tools().to_vec();
    let mut runner = TestRunner::deterministic();
    let mut violations = 0;
    for tool in &tools {
        let mut findings = Vec::new();
        if let Ok(valid) = strategies::try_arguments(tool) {
            for _ in 0..32 {
                let Ok(tree) = valid.new_tree(&mut runner) else {
                    break;
                };
                findings.extend(server.check_tool(tool, &tree.current()));
            }
        }
        if let Ok(invalid) = strategies::try_invalid_arguments(tool) {
            for _ in 0..16 {
                let Ok(tree) = invalid.new_tree(&mut runner) else {
                    break;
                };
                findings.extend(server.check_invalid(tool, &tree.current()));
            }
        }
        if upstream_env.is_some()
            && let Ok(valid) = strategies::try_arguments(tool)
        {
            let pairs = (valid, strategies::faults());
            for _ in 0..16 {
                let Ok(tree) = pairs.new_tree(&mut runner) else {
                    break;
                };
                let (args, fault) = tree.current();
                findings.extend(server.check_tool_under(tool, &args, &fault));
            }
        }
        println!("{}: {} finding(s)", tool.name, findings.len());
        for f in &findings {
            println!("  {} {} {}: {}", f.severity, f.code, f.invariant, f.message);
            if f.severity == Severity::Violation {
                violations += 1;
            }
        }
    }
    std::process::exit(i32::from(violations > 0));
}
