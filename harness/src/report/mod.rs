//! Reporters: consumers of the run's [`Event`](crate::run::Event)s and of its final
//! [`Report`](crate::run::Report).
//!
//! - [`terminal`]: live progress on a TTY and a summary a person reads in 20 seconds, grouped
//!   by invariant.
//! - [`json`]: the `--report-json` file.
//! - [`record`]: `--record DIR`, every frame of the run in its own file.

//! - [`suite`]: progress and summary of `mcp-chaos scenario`.

pub mod json;
pub mod record;
pub mod suite;
pub mod terminal;
