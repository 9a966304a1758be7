//! One module per command of the `mcp-chaos` binary; each returns its verdict's exit code or
//! a [`Failure`](crate::error::Failure) (`crate::error::Outcome`).

mod explain;
mod fixture;
mod generate;
mod replay;
mod run;
mod scenario;

pub(crate) use explain::explain;
pub(crate) use fixture::fixture;
pub(crate) use generate::gen_values;
pub(crate) use replay::replay;
pub(crate) use run::{demo, run_command, runtime};
pub(crate) use scenario::scenario;
