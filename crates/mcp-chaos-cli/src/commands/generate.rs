//! `mcp-chaos gen`: values generated from a JSON Schema, as the campaign draws them.

use mcp_chaos::run;
use mcp_chaos_model::exit;

use crate::args::*;

pub(crate) fn gen_values(args: &GenArgs) -> i32 {
    use proptest::strategy::{Strategy, ValueTree};
    use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
    let text = if args.schema.as_os_str() == "-" {
        let mut s = String::new();
        if let Err(e) = std::io::Read::read_to_string(&mut std::io::stdin(), &mut s) {
            eprintln!("mcp-chaos: cannot read stdin: {e}");
            return exit::USAGE;
        }
        s
    } else {
        match std::fs::read_to_string(&args.schema) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("mcp-chaos: {}: {e}", args.schema.display());
                return exit::USAGE;
            }
        }
    };
    let schema: serde_json::Value = match serde_json::from_str(&text) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("mcp-chaos: {}: not JSON: {e}", args.schema.display());
            return exit::USAGE;
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
            return exit::VIOLATIONS;
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
                return exit::SUCCESS;
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
        Ok(()) => exit::SUCCESS,
        Err(e) => {
            eprintln!("mcp-chaos: {e}");
            exit::VIOLATIONS
        }
    }
}
