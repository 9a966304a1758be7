//! `mcp-chaos replay`: a finding's replay file run again against the server.

use std::time::Duration;

use mcp_chaos::run::{self, ServerSpec};
use mcp_chaos::transport::StdioConfig;
use mcp_chaos_model::exit;

use crate::args::*;
use crate::commands::runtime;
use crate::error::{Failure, Outcome};

/// Runs the replay file `args.file` again: 1 when its finding still fails, 0 when it is fixed.
pub(crate) fn replay(args: &ReplayArgs) -> Outcome {
    let file = match run::replay::read(&args.file) {
        Ok(f) => f,
        Err(e) => {
            return Err(Failure::Usage(e.to_string()));
        }
    };
    let env = |name: &str| std::env::var(name).ok();
    let server = match args.stdio.as_deref().map(StdioConfig::from_command_line) {
        None => {
            let given = match args
                .headers
                .iter()
                .map(|h| h.resolve(&env))
                .collect::<Result<Vec<_>, String>>()
            {
                Ok(given) => given,
                Err(e) => {
                    return Err(Failure::Usage(e.to_string()));
                }
            };
            match file.server.spec_with(&env, &given) {
                Ok(spec) => spec,
                Err(e) => {
                    return Err(Failure::Usage(format!("{}: {e}", args.file.display())));
                }
            }
        }
        Some(Ok(c)) => ServerSpec::Stdio(c),
        Some(Err(e)) => {
            return Err(Failure::Usage(e.to_string()));
        }
    };
    let secrets = server.redactions();
    let redact = |s: &str| mcp_chaos::oracle::leaks::redact(s, &secrets);
    let runtime = runtime()?;
    println!(
        "replaying {} {} on {} (protocol {}): tools/call {} {}{}",
        file.expect.code,
        file.expect.invariant,
        file.server.spec().describe(),
        file.protocol_version,
        file.tool,
        file.arguments,
        file.upstream
            .as_ref()
            .map(|u| format!(" under the upstream fault {}", u.fault))
            .unwrap_or_default()
    );
    let timeout = Duration::from_millis(args.timeout_ms.max(1));
    match runtime.block_on(run::replay::replay(&file, Some(server), timeout)) {
        Err(e) => Err(Failure::NotStarted(redact(&e))),
        Ok(outcome) if outcome.reproduced => {
            for f in outcome
                .findings
                .iter()
                .filter(|f| f.code == file.expect.code)
            {
                println!(
                    "STILL FAILS: {} {}: {}",
                    f.code,
                    f.invariant,
                    redact(&f.message)
                );
            }
            Ok(exit::VIOLATIONS)
        }
        Ok(outcome) => {
            println!("FIXED: {} no longer reproduces", file.expect.code);
            for f in &outcome.findings {
                println!(
                    "  (other finding: {} {}: {})",
                    f.code,
                    f.invariant,
                    redact(&f.message)
                );
            }
            Ok(exit::SUCCESS)
        }
    }
}
