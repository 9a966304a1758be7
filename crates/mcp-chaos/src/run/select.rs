//! Which listed tools a campaign calls (`--tools`, `--skip-tools`, `--read-only`, and the same
//! keys in scenario files), and which of them say they are destructive.
//!
//! Tool annotations are hints a server gives (`Tool.annotations`, MCP `server/tools`
//! §Tool annotations, 2025-03-26 on): `readOnlyHint` (default false) and `destructiveHint`
//! (default true, meaningful when `readOnlyHint` is false). `--read-only` keeps only tools that
//! say `readOnlyHint: true`; a tool without annotations is not assumed safe. The tools that say
//! `destructiveHint: true` are listed on stderr before any is called.

pub use mcp_chaos_model::report::Skipped;
use serde_json::Value;

/// The selection asked for. The default selects every tool.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolSelection {
    /// Globs (`*`, `?`) of the tools to call; empty means every tool.
    pub tools: Vec<String>,
    /// Globs of the tools never to call (applied after `tools`).
    pub skip: Vec<String>,
    /// Call only tools annotated `readOnlyHint: true`.
    pub read_only: bool,
}

impl ToolSelection {
    /// Whether this selects every tool.
    pub fn is_all(&self) -> bool {
        self.tools.is_empty() && self.skip.is_empty() && !self.read_only
    }

    /// Why `tool` (a `tools/list` entry) is left out, or `None` when it is selected.
    pub fn excludes(&self, tool: &Value) -> Option<&'static str> {
        let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
        if !self.tools.is_empty() && !self.tools.iter().any(|g| glob_match(g, name)) {
            return Some("not in --tools");
        }
        if self.skip.iter().any(|g| glob_match(g, name)) {
            return Some("--skip-tools");
        }
        if self.read_only && !hint(tool, "readOnlyHint") {
            return Some("not readOnlyHint: true");
        }
        None
    }

    /// `tools` split into the selected ones (in order, moved, not copied: the tools of a
    /// large server take tens of MiB) and the ones left out.
    pub fn split(&self, tools: Vec<Value>) -> (Vec<Value>, Vec<Skipped>) {
        let mut selected = Vec::new();
        let mut skipped = Vec::new();
        for tool in tools {
            match self.excludes(&tool) {
                None => selected.push(tool),
                Some(reason) => skipped.push(Skipped {
                    tool: name(&tool).to_owned(),
                    reason,
                }),
            }
        }
        (selected, skipped)
    }

    /// The `--tools` globs that match none of `tools` (most likely a typo).
    pub fn unmatched(&self, tools: &[Value]) -> Vec<String> {
        self.tools
            .iter()
            .chain(&self.skip)
            .filter(|g| !tools.iter().any(|t| glob_match(g, name(t))))
            .cloned()
            .collect()
    }
}

fn name(tool: &Value) -> &str {
    tool.get("name").and_then(Value::as_str).unwrap_or_default()
}

/// Whether `tool`'s `annotations` set `key` to `true`.
fn hint(tool: &Value, key: &str) -> bool {
    tool.get("annotations")
        .and_then(|a| a.get(key))
        .and_then(Value::as_bool)
        == Some(true)
}

/// The names of the tools in `tools` annotated `destructiveHint: true` (and not
/// `readOnlyHint: true`, which makes the destructive hint meaningless).
pub fn destructive(tools: &[Value]) -> Vec<String> {
    tools
        .iter()
        .filter(|t| hint(t, "destructiveHint") && !hint(t, "readOnlyHint"))
        .map(|t| name(t).to_owned())
        .collect()
}

/// Parses a comma-separated list of globs (`get_*,list_?`); empty items are refused.
pub fn parse_globs(s: &str) -> Result<Vec<String>, String> {
    let globs: Vec<String> = s.split(',').map(|g| g.trim().to_owned()).collect();
    if globs.iter().any(String::is_empty) {
        return Err(format!(
            "expected tool names or globs separated by commas (e.g. \"get_*,search\"), got {s:?}"
        ));
    }
    Ok(globs)
}

/// Whether `name` matches `glob`: `*` any run of characters (none included), `?` exactly one
/// character, anything else itself (case-sensitive, like tool names).
pub fn glob_match(glob: &str, name: &str) -> bool {
    let (g, n): (Vec<char>, Vec<char>) = (glob.chars().collect(), name.chars().collect());
    let (mut gi, mut ni) = (0, 0);
    // Where the last `*` was, and the name position it is currently matched up to.
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        match g.get(gi) {
            Some('*') => {
                star = Some((gi, ni));
                gi += 1;
            }
            Some(&c) if c == '?' || c == n[ni] => {
                gi += 1;
                ni += 1;
            }
            _ => match star {
                Some((sg, sn)) => {
                    gi = sg + 1;
                    ni = sn + 1;
                    star = Some((sg, sn + 1));
                }
                None => return false,
            },
        }
    }
    g[gi..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn globs() {
        for (glob, name) in [
            ("echo", "echo"),
            ("*", "anything"),
            ("*", ""),
            ("get_*", "get_record"),
            ("get_*", "get_"),
            ("*_record", "get_record"),
            ("g?t", "get"),
            ("*e*o*", "echo"),
            ("a*b*c", "axxbyyc"),
            ("météo*", "météo_ville"),
        ] {
            assert!(glob_match(glob, name), "{glob} should match {name}");
        }
        for (glob, name) in [
            ("echo", "echo2"),
            ("echo", "Echo"),
            ("get_*", "list_records"),
            ("g?t", "gt"),
            ("a*b*c", "axxbyy"),
            ("?", ""),
        ] {
            assert!(!glob_match(glob, name), "{glob} should not match {name}");
        }
    }

    fn tools() -> Vec<Value> {
        vec![
            json!({"name": "get_record", "annotations": {"readOnlyHint": true}}),
            json!({"name": "delete_record", "annotations": {"readOnlyHint": false, "destructiveHint": true}}),
            json!({"name": "search"}),
            json!({"name": "odd", "annotations": {"readOnlyHint": true, "destructiveHint": true}}),
        ]
    }

    fn names(v: &[Value]) -> Vec<&str> {
        v.iter().map(name).collect()
    }

    #[test]
    fn selection() {
        let all = ToolSelection::default();
        assert!(all.is_all());
        assert_eq!(all.split(tools()).0.len(), 4);
        let only = ToolSelection {
            tools: vec!["get_*".into(), "search".into()],
            ..ToolSelection::default()
        };
        let (selected, skipped) = only.split(tools());
        assert_eq!(names(&selected), ["get_record", "search"]);
        assert_eq!(skipped[0].reason, "not in --tools");
        let skip = ToolSelection {
            skip: vec!["*_record".into()],
            ..ToolSelection::default()
        };
        assert_eq!(names(&skip.split(tools()).0), ["search", "odd"]);
        let read_only = ToolSelection {
            read_only: true,
            ..ToolSelection::default()
        };
        assert_eq!(names(&read_only.split(tools()).0), ["get_record", "odd"]);
        let typo = ToolSelection {
            tools: vec!["gte_*".into(), "search".into()],
            skip: vec!["nope".into()],
            read_only: false,
        };
        assert_eq!(typo.unmatched(&tools()), ["gte_*", "nope"]);
    }

    #[test]
    fn destructive_tools_are_those_annotated_so() {
        assert_eq!(destructive(&tools()), ["delete_record"]);
    }

    #[test]
    fn glob_lists() {
        assert_eq!(parse_globs("a, b*").unwrap(), ["a", "b*"]);
        assert!(parse_globs("a,,b").is_err());
        assert!(parse_globs("").is_err());
    }
}
