//! Structure-aware: an `Arbitrary` JSON Schema of bounded depth (`mcp_chaos_fuzz::ArbSchema`,
//! the keywords the generator supports) into `mcp_chaos::generate::Generator`: it never panics
//! or spins past its budgets, every value it calls valid validates against the schema, and
//! every invalid case is rejected for the constraint it names, by a validator compiled apart
//! from the generator (see `mcp_chaos_fuzz::check_schema_generator`).
#![no_main]

use mcp_chaos_fuzz::{ArbSchema, check_schema_generator};

libfuzzer_sys::fuzz_target!(|input: ArbSchema| check_schema_generator(&input));
