//! The `mcp-chaos` command-line tool; see `mcp-chaos --help`. A thin shell over the engine
//! (`mcp-chaos`): [`args`] holds the arguments of every command, [`commands`] one file per
//! command, and [`main`] maps what a command returns to the process exit codes of
//! `mcp_chaos_model::exit`.

mod args;
mod commands;
mod interrupt;

use std::time::Duration;

use mcp_chaos::protocol::ProtocolVersion;
use mcp_chaos::run::{RunConfig, ServerSpec, VersionChoice};
use mcp_chaos::transport::StdioConfig;
use mcp_chaos_fixture::{self as fixture, Flaw};
use mcp_chaos_model::exit;

use crate::args::*;
use crate::commands::*;

fn main() {
    std::process::exit(dispatch());
}

/// Parses the command line and runs; returns the process exit code.
fn dispatch() -> i32 {
    use clap::{CommandFactory, FromArgMatches};
    let parsed = Cli::command()
        .try_get_matches()
        .and_then(|m| Cli::from_arg_matches(&m).map(|cli| (cli, m)));
    let (cli, matches) = match parsed {
        Ok(parsed) => parsed,
        Err(e) => {
            let _ = e.print();
            return match e.kind() {
                clap::error::ErrorKind::DisplayHelp
                | clap::error::ErrorKind::DisplayVersion
                | clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => exit::SUCCESS,
                _ => exit::USAGE,
            };
        }
    };
    match cli.command {
        Command::Fixture {
            flaws,
            list_flaws,
            http,
        } => {
            if list_flaws {
                for f in Flaw::ALL.iter().copied() {
                    println!("{:<24} {:<34} {}", f.name(), f.invariant(), f.description());
                }
                return exit::SUCCESS;
            }
            match http {
                Some(addr) => fixture::serve_http(&flaws, &addr),
                None => fixture::serve_stdio(&flaws),
            }
        }
        Command::Explain { code } => explain(code.as_deref()),
        Command::Replay(args) => replay(&args),
        Command::Gen(args) => gen_values(&args),
        Command::Scenario(args) => scenario(&args),
        Command::Run(args) => {
            let server = match server_spec(&args) {
                Ok(c) => c,
                Err(e) => {
                    eprintln!("mcp-chaos: {e}");
                    return exit::USAGE;
                }
            };
            let output = &args.common.output;
            let mut config = run_config(server, &args.common);
            if let Some(run) = matches.subcommand_matches("run") {
                let mut secrets = config.server.redactions();
                secrets.extend(config.secrets.iter().map(|(_, v)| v.clone()));
                config.rerun = Some(rerun_command(run, ENV_KNOBS, config.seed, &secrets));
            }
            block_on_run(&config, output)
        }
        Command::Demo(args) => {
            let exe = match std::env::current_exe() {
                Ok(exe) => exe,
                Err(e) => {
                    eprintln!("mcp-chaos: cannot locate the mcp-chaos binary for the demo: {e}");
                    return exit::INTERNAL;
                }
            };
            let mut words = vec!["fixture".to_owned()];
            for flaw in DEMO_FLAWS {
                words.push("--flaw".into());
                words.push(flaw.name().into());
            }
            let mut server = StdioConfig::new(exe.to_string_lossy(), words);
            server
                .env
                .push(("FIXTURE_UPSTREAM_TIMEOUT_MS".into(), "1000".into()));
            if !args.output.quiet {
                eprintln!(
                    "mcp-chaos demo: running the bundled fixture server with the flaws {}",
                    DEMO_FLAWS
                        .iter()
                        .map(|f| f.name())
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
            let mut config = RunConfig::new(
                ServerSpec::Stdio(server),
                VersionChoice::Exactly(ProtocolVersion::LATEST_WITH_INITIALIZE),
            );
            config.timeout = Duration::from_millis(5_000);
            config.faults.upstream_env = vec!["UPSTREAM_URL".into()];
            config.faults.faults = [
                "not-found",
                "rate-limited",
                "unavailable",
                "hang",
                "malformed-json",
            ]
            .iter()
            .filter_map(|f| f.parse().ok())
            .collect();
            config.seed = args.seed.unwrap_or_else(random_seed);
            if let Some(demo) = matches.subcommand_matches("demo") {
                config.rerun = Some(rerun_command(demo, &[], config.seed, &[]));
            }
            block_on_run(&config, &args.output)
        }
    }
}
