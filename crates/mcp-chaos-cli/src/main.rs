//! The `mcp-chaos` command-line tool; see `mcp-chaos --help`. A thin shell over the engine
//! (`mcp-chaos`): [`args`] holds the arguments of every command, [`commands`] one file per
//! command, and `main` maps what a command returns (`error::Outcome`) to the process
//! exit codes of `mcp_chaos_model::exit`.

mod args;
mod commands;
mod error;
mod interrupt;

use mcp_chaos_model::exit;

use crate::args::{Cli, Command};
use crate::commands::{demo, explain, fixture, gen_values, replay, run_command, scenario};
use crate::error::Outcome;

fn main() {
    std::process::exit(match dispatch() {
        Ok(code) => code,
        Err(failure) => failure.exit(),
    });
}

/// Parses the command line and runs the command; returns its verdict's exit code, or why it
/// has none.
fn dispatch() -> Outcome {
    use clap::{CommandFactory, FromArgMatches};
    let parsed = Cli::command()
        .try_get_matches()
        .and_then(|m| Cli::from_arg_matches(&m).map(|cli| (cli, m)));
    let (cli, matches) = match parsed {
        Ok(parsed) => parsed,
        Err(e) => {
            let _ = e.print();
            return Ok(match e.kind() {
                clap::error::ErrorKind::DisplayHelp
                | clap::error::ErrorKind::DisplayVersion
                | clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => exit::SUCCESS,
                _ => exit::USAGE,
            });
        }
    };
    match cli.command {
        Command::Fixture {
            flaws,
            list_flaws,
            http,
        } => fixture(&flaws, list_flaws, http.as_deref()),
        Command::Explain { code } => explain(code.as_deref()),
        Command::Replay(args) => replay(&args),
        Command::Gen(args) => gen_values(&args),
        Command::Scenario(args) => scenario(&args),
        Command::Run(args) => run_command(&args, &matches),
        Command::Demo(args) => demo(&args, &matches),
    }
}
