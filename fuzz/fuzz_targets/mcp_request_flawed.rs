//! `mcp_request` against the fixture with `panic-in-handler` planted: it panics on a
//! `tools/call` whose arguments nest objects three or more levels deep. This target is
//! expected to crash, quickly; `ci/fuzz-smoke.sh` fails if it does not.
#![no_main]

use mcp_chaos_fixture::Flaw;
use mcp_chaos_fuzz::{Session, run_session};

libfuzzer_sys::fuzz_target!(|session: Session| run_session(&[Flaw::PanicInHandler], &session));
