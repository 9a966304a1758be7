//! `mcp-chaos gen`: values generated from a JSON Schema, as the campaign draws them.

use mcp_chaos::run;
use mcp_chaos_model::exit;

use crate::args::*;
use crate::error::{Failure, Outcome};

/// Prints values drawn from the JSON Schema `args.schema` as the campaign draws them (valid,
/// invalid or boundary cases), one per line; 1 when the schema has no instance to draw.
pub(crate) fn gen_values(args: &GenArgs) -> Outcome {
    use proptest::strategy::{Strategy, ValueTree};
    use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
    let text = if args.schema.as_os_str() == "-" {
        let mut s = String::new();
        if let Err(e) = std::io::Read::read_to_string(&mut std::io::stdin(), &mut s) {
            return Err(Failure::Usage(format!("cannot read stdin: {e}")));
        }
        s
    } else {
        match std::fs::read_to_string(&args.schema) {
            Ok(s) => s,
            Err(e) => {
                return Err(Failure::Usage(format!("{}: {e}", args.schema.display())));
            }
        }
    };
    let schema: serde_json::Value = match serde_json::from_str(&text) {
        Ok(v) => v,
        Err(e) => {
            return Err(Failure::Usage(format!(
                "{}: not JSON: {e}",
                args.schema.display()
            )));
        }
    };
    let opts = match &args.url_base {
        Some(base) => mcp_chaos::generate::GenOptions::with_url_base(base.clone()),
        None => mcp_chaos::generate::GenOptions::default(),
    };
    let generator = match mcp_chaos::generate::Generator::new(&schema, &opts) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("mcp-chaos: {}: {e}", args.schema.display());
            return Ok(exit::VIOLATIONS);
        }
    };
    for note in generator.notes() {
        eprintln!(
            "mcp-chaos: note: {} at {}: {}",
            note.keyword, note.pointer, note.message
        );
    }
    let mut out = std::io::stdout().lock();
    let mut print = |line: serde_json::Value| {
        use std::io::Write;
        writeln!(out, "{line}").is_ok()
    };
    if args.boundary
        && let Ok(cases) = generator.boundary()
    {
        for case in cases {
            let line = match case {
                mcp_chaos::generate::Case::Valid { value, .. } if !args.invalid => value,
                mcp_chaos::generate::Case::Invalid { value, violation } if args.invalid => {
                    serde_json::json!({"value": value, "violates": violation})
                }
                _ => continue,
            };
            if !print(line) {
                return Ok(exit::SUCCESS);
            }
        }
    }
    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(
            RngAlgorithm::ChaCha,
            &run::generated::tool_seed(args.seed, "gen"),
        ),
    );
    let result = if args.invalid {
        generator.invalid().map(|s| {
            for _ in 0..args.count {
                let Ok(tree) = s.new_tree(&mut runner) else {
                    break;
                };
                let (value, violation) = tree.current();
                if !print(serde_json::json!({"value": value, "violates": violation})) {
                    break;
                }
            }
        })
    } else {
        generator.valid().map(|s| {
            for _ in 0..args.count {
                let Ok(tree) = s.new_tree(&mut runner) else {
                    break;
                };
                if !print(tree.current()) {
                    break;
                }
            }
        })
    };
    match result {
        Ok(()) => Ok(exit::SUCCESS),
        Err(e) => {
            eprintln!("mcp-chaos: {e}");
            Ok(exit::VIOLATIONS)
        }
    }
}
