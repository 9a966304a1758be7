//! `mcp-chaos explain`: an invariant (or a topic) described, with its spec link and rubric.

use mcp_chaos::finding;
use mcp_chaos::protocol::ProtocolVersion;
use mcp_chaos::run;
use mcp_chaos_model::exit;

use crate::error::{Failure, Outcome};

/// Topics `mcp-chaos explain` describes besides the invariants: (name, text).
pub(crate) const EXPLAIN_TOPICS: &[(&str, &str)] = &[
    ("upstream", run::reach::EXPLAIN),
    ("fault-properties", run::fault_props::EXPLAIN),
];

/// Prints the catalog (no `code`), one invariant by code or name (`MC102`,
/// `wrong-error-code`) with its rubric and spec link, or a topic (`upstream`,
/// `fault-properties`).
pub(crate) fn explain(code: Option<&str>) -> Outcome {
    if let Some((name, text)) = code.and_then(|c| EXPLAIN_TOPICS.iter().find(|(n, _)| *n == c)) {
        println!("{name}\n\n{}", textwrap(text, 90));
        return Ok(exit::SUCCESS);
    }
    match code {
        None => {
            for inv in finding::CATALOG {
                println!("{}  {:<34} {}", inv.code, inv.name, inv.summary);
            }
            let topics: Vec<&str> = EXPLAIN_TOPICS.iter().map(|(n, _)| *n).collect();
            println!(
                "\nRun `mcp-chaos explain CODE` for details, or `mcp-chaos explain TOPIC` for {}.",
                topics.join(", ")
            );
            Ok(exit::SUCCESS)
        }
        Some(code) => match finding::lookup(code) {
            Some(inv) => {
                println!("{} {}\n", inv.code, inv.name);
                println!("{}\n", inv.summary);
                println!("{}\n", textwrap(inv.explain, 90));
                if let Some(rubric) = mcp_chaos::oracle::rubric(inv.code) {
                    println!("{rubric}\n");
                }
                let spec = if inv.spec_page.starts_with("http") {
                    inv.spec_page.to_owned()
                } else {
                    ProtocolVersion::LATEST_WITH_INITIALIZE.spec(inv.spec_page)
                };
                println!("Spec: {spec}");
                Ok(exit::SUCCESS)
            }
            None => Err(Failure::Usage(format!(
                "no invariant {code:?}; run `mcp-chaos explain` to list them"
            ))),
        },
    }
}

/// `text` re-flowed into lines of at most `width` columns (a longer word stands alone).
pub(crate) fn textwrap(text: &str, width: usize) -> String {
    let mut out = String::new();
    let mut line = 0;
    for word in text.split_whitespace() {
        if line > 0 && line + 1 + word.len() > width {
            out.push('\n');
            line = 0;
        } else if line > 0 {
            out.push(' ');
            line += 1;
        }
        out.push_str(word);
        line += word.len();
    }
    out
}
