//! Benchmarks of the schema-driven generators over the corpus in `crates/mcp-chaos-tests/data/schemas/`.
//!
//! Each `valid` iteration draws one value from every schema of a class (through the full
//! pipeline: strategy, shrinkable value tree, validator check, loopback check), so divan's
//! item throughput is values per second for that class. Classes are the server a schema was
//! collected from (`everything`, `github`, ...), `spec-example`, `real` (all of those) and
//! `hard` (the hand-written cases).
//!
//! Run with `cargo bench -p mcp-chaos --bench generate`.

use std::cell::RefCell;
use std::sync::LazyLock;

use divan::Bencher;
use divan::counter::ItemsCount;
use mcp_chaos::generate::{GenOptions, Generator};
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::TestRunner;
use serde_json::Value;

fn main() {
    divan::main();
}

/// `(class, file stem, schema)` for every corpus schema.
static CORPUS: LazyLock<Vec<(String, String, Value)>> = LazyLock::new(|| {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../mcp-chaos-tests/data/schemas");
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        let Some(stem) = p.file_stem().map(|s| s.to_string_lossy().into_owned()) else {
            continue;
        };
        let Ok(text) = std::fs::read_to_string(&p) else {
            continue;
        };
        let Ok(schema) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        let class = stem.split("__").next().unwrap_or("").to_string();
        out.push((class, stem, schema));
    }
    out.sort_by(|a, b| a.1.cmp(&b.1));
    out
});

const CLASSES: &[&str] = &[
    "real",
    "hard",
    "everything",
    "fetch",
    "filesystem",
    "git",
    "github",
    "memory",
    "sequential-thinking",
    "time",
    "spec-example",
];

fn in_class(class: &str, schema_class: &str) -> bool {
    match class {
        "real" => schema_class != "hard",
        c => c == schema_class,
    }
}

fn generators(class: &str) -> Vec<Generator> {
    CORPUS
        .iter()
        .filter(|(c, _, _)| in_class(class, c))
        .filter_map(|(_, _, s)| Generator::new(s, &GenOptions::default()).ok())
        .collect()
}

/// Valid values per second: one value from each schema of the class per iteration.
#[divan::bench(args = CLASSES)]
fn valid(bencher: Bencher<'_, '_>, class: &str) {
    let strategies: Vec<_> = generators(class)
        .iter()
        .filter_map(|g| g.valid().ok())
        .collect();
    let runner = RefCell::new(TestRunner::default());
    bencher
        .counter(ItemsCount::new(strategies.len()))
        .bench_local(|| {
            let mut r = runner.borrow_mut();
            for s in &strategies {
                if let Ok(t) = s.new_tree(&mut r) {
                    divan::black_box(t.current());
                }
            }
        });
}

/// The same with hostile strings switched off.
#[divan::bench(args = ["real"])]
fn valid_no_hostile(bencher: Bencher<'_, '_>, class: &str) {
    let opts = GenOptions::default().hostile(false);
    let strategies: Vec<_> = CORPUS
        .iter()
        .filter(|(c, _, _)| in_class(class, c))
        .filter_map(|(_, _, s)| Generator::new(s, &opts).ok()?.valid().ok())
        .collect();
    let runner = RefCell::new(TestRunner::default());
    bencher
        .counter(ItemsCount::new(strategies.len()))
        .bench_local(|| {
            let mut r = runner.borrow_mut();
            for s in &strategies {
                if let Ok(t) = s.new_tree(&mut r) {
                    divan::black_box(t.current());
                }
            }
        });
}

/// Invalid cases per second (each confirmed by the validator).
#[divan::bench(args = ["real", "hard"])]
fn invalid(bencher: Bencher<'_, '_>, class: &str) {
    let strategies: Vec<_> = generators(class)
        .iter()
        .filter_map(|g| g.invalid().ok())
        .collect();
    let runner = RefCell::new(TestRunner::default());
    bencher
        .counter(ItemsCount::new(strategies.len()))
        .bench_local(|| {
            let mut r = runner.borrow_mut();
            for s in &strategies {
                if let Ok(t) = s.new_tree(&mut r) {
                    divan::black_box(t.current());
                }
            }
        });
}

/// Building generators (validator compile, lowering, probe) per schema.
#[divan::bench(args = ["real", "hard"])]
fn build(bencher: Bencher<'_, '_>, class: &str) {
    let schemas: Vec<&Value> = CORPUS
        .iter()
        .filter(|(c, _, _)| in_class(class, c))
        .map(|(_, _, s)| s)
        .collect();
    bencher
        .counter(ItemsCount::new(schemas.len()))
        .bench_local(|| {
            for s in &schemas {
                divan::black_box(Generator::new(s, &GenOptions::default()).ok());
            }
        });
}

/// The whole boundary phase per schema.
#[divan::bench(args = ["real", "hard"])]
fn boundary(bencher: Bencher<'_, '_>, class: &str) {
    let gens = generators(class);
    bencher
        .counter(ItemsCount::new(gens.len()))
        .bench_local(|| {
            for g in &gens {
                divan::black_box(g.boundary().ok());
            }
        });
}
