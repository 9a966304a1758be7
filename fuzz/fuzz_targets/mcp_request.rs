//! Structure-aware: `Arbitrary` MCP messages (`mcp_chaos::fuzz::Request`, every method of
//! every protocol version, and near-misses) sent to the bundled fixture server in-process.
//! The fixture must never panic, must answer every request exactly once with a well-formed
//! response carrying its id, and must never answer a notification.
//!
//! Flaws named in `MCP_CHAOS_FUZZ_FLAW` (comma-separated) are planted; the correct fixture
//! must pass, so any crash of this target with the variable unset is a bug.
#![no_main]

use mcp_chaos_fuzz::{Session, flaws_from_env, run_session};

libfuzzer_sys::fuzz_target!(|session: Session| run_session(flaws_from_env(), &session));
