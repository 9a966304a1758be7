//! End-to-end tests: the real `mcp-chaos` binary against the fixture server (correct, and with
//! each flaw planted), against servers that misbehave at start, and through its CLI surface.

mod cli;
mod faults;
mod invariants;
mod robustness;
