//! One module per command of the `mcp-chaos` binary; each returns the process exit code
//! (`mcp_chaos_model::exit`).

mod explain;
mod generate;
mod replay;
mod run;
mod scenario;

pub(crate) use explain::explain;
pub(crate) use generate::gen_values;
pub(crate) use replay::replay;
pub(crate) use run::{
    DEMO_FLAWS, ENV_KNOBS, block_on_run, rerun_command, run_config, runtime, server_spec,
};
pub(crate) use scenario::scenario;
