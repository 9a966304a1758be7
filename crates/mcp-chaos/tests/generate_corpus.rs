//! Corpus test of the schema-driven generators.
//!
//! For every schema in `crates/mcp-chaos-tests/data/schemas/` (real `tools/list` input schemas and the
//! hand-written `hard__*` cases):
//! - 1 000 generated "valid" values (or `PROPTEST_CASES`) are all accepted by an
//!   independently compiled validator, and none names a non-loopback host;
//! - every invalid case is rejected, and the validator reports the named keyword at the
//!   named instance location;
//! - every boundary case holds as labelled;
//! - `example()` is valid.
//!
//! Runs use a fixed seed per schema (derived from its file name) for CI determinism.

use std::path::{Path, PathBuf};

use mcp_chaos::generate::{Case, GenOptions, Generator, is_loopback_safe};
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use serde_json::Value;

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../mcp-chaos-tests/data/schemas")
}

fn load_corpus() -> Vec<(String, Value)> {
    let mut out = Vec::new();
    let entries = std::fs::read_dir(corpus_dir()).expect("corpus directory exists");
    for e in entries {
        let p = e.expect("dir entry").path();
        if p.extension().is_some_and(|x| x == "json") {
            let text = std::fs::read_to_string(&p).expect("readable schema");
            let v: Value = serde_json::from_str(&text).expect("schema is JSON");
            let name = p
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            out.push((name, v));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn cases() -> usize {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1000)
}

fn runner_for(name: &str) -> TestRunner {
    let mut seed = [0u8; 32];
    for (i, b) in name.bytes().enumerate() {
        seed[i % 32] ^= b.rotate_left((i / 32) as u32);
    }
    TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &seed),
    )
}

fn independent_validator(schema: &Value) -> jsonschema::Validator {
    jsonschema::options()
        .should_validate_formats(true)
        .build(schema)
        .expect("schema compiles")
}

/// Every generated valid value validates, for every schema of the corpus.
#[test]
fn valid_values_validate() {
    let n = cases();
    let mut total = 0usize;
    let mut failures = Vec::new();
    for (name, schema) in load_corpus() {
        let g = match Generator::new(&schema, &GenOptions::default()) {
            Ok(g) => g,
            Err(e) => {
                failures.push(format!("{name}: generator: {e}"));
                continue;
            }
        };
        let check = independent_validator(&schema);
        let strategy = g.valid().expect("valid strategy");
        let mut runner = runner_for(&name);
        for _ in 0..n {
            let tree = match strategy.new_tree(&mut runner) {
                Ok(t) => t,
                Err(e) => {
                    failures.push(format!("{name}: new_tree: {e}"));
                    break;
                }
            };
            let v = tree.current();
            total += 1;
            if !check.is_valid(&v) {
                failures.push(format!("{name}: invalid \"valid\" value {v}"));
            }
            if !is_loopback_safe(&v) {
                failures.push(format!("{name}: non-loopback value {v}"));
            }
        }
        let ex = g.example().expect("example");
        if !check.is_valid(&ex) {
            failures.push(format!("{name}: invalid example {ex}"));
        }
    }
    eprintln!(
        "generated {total} valid values, {} failures",
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Every invalid case is rejected and names the keyword at its location.
#[test]
fn invalid_cases_are_confirmed() {
    let n = (cases() / 4).max(25);
    let mut total = 0usize;
    let mut failures = Vec::new();
    let mut keywords = std::collections::BTreeMap::<String, usize>::new();
    for (name, schema) in load_corpus() {
        let g = match Generator::new(&schema, &GenOptions::default()) {
            Ok(g) => g,
            Err(e) => {
                failures.push(format!("{name}: generator: {e}"));
                continue;
            }
        };
        let check = independent_validator(&schema);
        let strategy = match g.invalid() {
            Ok(s) => s,
            Err(e) => {
                failures.push(format!("{name}: invalid(): {e}"));
                continue;
            }
        };
        let mut runner = runner_for(&name);
        for _ in 0..n {
            let tree = match strategy.new_tree(&mut runner) {
                Ok(t) => t,
                Err(e) => {
                    failures.push(format!("{name}: new_tree: {e}"));
                    break;
                }
            };
            let (v, viol) = tree.current();
            total += 1;
            *keywords.entry(viol.keyword.clone()).or_default() += 1;
            if check.is_valid(&v) {
                failures.push(format!("{name}: \"invalid\" value accepted {v} ({viol:?})"));
            } else if !g.confirms(&v, &viol) {
                failures.push(format!(
                    "{name}: {viol:?} not among errors {:?} of {v}",
                    g.errors(&v)
                ));
            }
            if !is_loopback_safe(&v) {
                failures.push(format!("{name}: non-loopback invalid value {v}"));
            }
        }
    }
    eprintln!("generated {total} invalid cases by keyword: {keywords:?}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Boundary cases hold as labelled.
#[test]
fn boundary_cases_hold_as_labelled() {
    let mut total = 0usize;
    let mut failures = Vec::new();
    for (name, schema) in load_corpus() {
        let g = match Generator::new(&schema, &GenOptions::default()) {
            Ok(g) => g,
            Err(e) => {
                failures.push(format!("{name}: generator: {e}"));
                continue;
            }
        };
        let check = independent_validator(&schema);
        let cases = g.boundary().expect("boundary");
        let again = g.boundary().expect("boundary");
        if cases != again {
            failures.push(format!("{name}: boundary phase is not deterministic"));
        }
        for c in cases {
            total += 1;
            match &c {
                Case::Valid { value, label } => {
                    if !check.is_valid(value) {
                        failures.push(format!("{name}: valid edge {label} rejected: {value}"));
                    }
                }
                Case::Invalid { value, violation } => {
                    if check.is_valid(value) || !g.confirms(value, violation) {
                        failures.push(format!(
                            "{name}: invalid edge not confirmed: {value} {violation:?}"
                        ));
                    }
                }
            }
            if !is_loopback_safe(c.value()) {
                failures.push(format!("{name}: non-loopback boundary value {}", c.value()));
            }
        }
    }
    eprintln!("checked {total} boundary cases");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
