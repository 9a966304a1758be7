//! Upstream reach: which tools call the fake upstream, learned from every `tools/call` of
//! every phase (the baseline call, each generated case, each call under a fault). A call
//! reached the upstream when the fake upstream's (or the forward proxy's) journal gained an
//! entry while it ran. A tool calls out if any of its calls did; the fault phases then call it
//! with the smallest argument value that did (by serialized size, the first of equal size),
//! since a tool that builds `base_url + path` may reach the upstream only for some arguments
//! (`path = "/a"`, not `path = "a"`).

pub use mcp_chaos_model::report::ToolReach;

/// `mcp-chaos explain upstream`: how upstream discovery works.
pub const EXPLAIN: &str = "Upstream discovery (with --upstream-env, --url-args or --proxy). \
mcp-chaos reads the fake upstream's journal (and the forward proxy's) around every tools/call \
of every phase: the baseline call, each generated case, each call under a fault. A tool calls \
out if any of its calls made an upstream request; the fault phases then call it with the \
smallest arguments (serialized) that did. A tool that builds base_url + path reaches its \
upstream only for some arguments (path = \"a\" gives http://127.0.0.1:PORTa, no request), so \
a string property named or described like a path or route (path, route, url_path, *_path, \
\"Path of the page\") also gets path-shaped values (/, /a, /robots.txt, /v1/items/1) among \
its generated cases; its simple example stays a plain string. The report says per tool \
whether it was reached, how many calls tried, how many reached, the smallest reaching \
arguments and the request paths seen (summary.upstream in --report-json; the upstream line \
of the terminal summary). A tool that no call reached gets no faults: the terminal says \
\"none of its N calls reached the upstream\". If a tool you know calls out is not reached, \
check how the server finds its upstream (an environment variable: --upstream-env NAME; a \
URL argument: --url-args; an HTTP proxy: --proxy) and which arguments make it call out.";
use serde_json::Value;

/// How many reaching argument values and request paths are kept per tool.
pub const KEPT: usize = mcp_chaos_model::report::REACH_KEPT;

/// Every tool's reach, in the order the tools were first called.
#[derive(Debug, Clone, Default)]
pub struct ReachTable {
    tools: Vec<ToolReach>,
}

impl ReachTable {
    /// Notes a call of `tool` with `arguments` that made upstream requests to `paths` (one
    /// per request; none: it did not reach the upstream).
    pub fn note(&mut self, tool: &str, arguments: &Value, paths: &[&str]) {
        let i = match self.tools.iter().position(|t| t.tool == tool) {
            Some(i) => i,
            None => {
                self.tools.push(ToolReach {
                    tool: tool.to_owned(),
                    reached: false,
                    calls_tried: 0,
                    calls_reached: 0,
                    arguments: None,
                    paths: Vec::new(),
                    reaching: Vec::new(),
                });
                self.tools.len() - 1
            }
        };
        let t = &mut self.tools[i];
        t.calls_tried += 1;
        if paths.is_empty() {
            return;
        }
        t.reached = true;
        t.calls_reached += 1;
        for path in paths {
            if t.paths.len() < KEPT && !t.paths.iter().any(|p| p == path) {
                t.paths.push((*path).to_owned());
            }
        }
        if !t.reaching.contains(arguments) {
            let n = size(arguments);
            let at = t.reaching.partition_point(|v| size(v) <= n);
            if at < KEPT {
                t.reaching.insert(at, arguments.clone());
                t.reaching.truncate(KEPT);
            }
        }
        t.arguments = t.reaching.first().cloned();
    }

    /// The smallest distinct arguments of `tool` that reached the upstream, smallest first.
    pub fn reaching(&self, tool: &str) -> &[Value] {
        self.get(tool).map_or(&[], |t| &t.reaching)
    }

    /// The upstream request paths `tool`'s calls made.
    pub fn paths(&self, tool: &str) -> &[String] {
        self.get(tool).map_or(&[], |t| &t.paths)
    }

    /// Whether `tool` reached the upstream in any call.
    pub fn reached(&self, tool: &str) -> bool {
        self.get(tool).is_some_and(|t| t.reached)
    }

    /// The smallest arguments of a call of `tool` that reached the upstream.
    pub fn arguments(&self, tool: &str) -> Option<&Value> {
        self.get(tool).and_then(|t| t.arguments.as_ref())
    }

    /// How many calls of `tool` were made.
    pub fn tried(&self, tool: &str) -> u64 {
        self.get(tool).map_or(0, |t| t.calls_tried)
    }

    /// The tools that reached the upstream, in the order first called.
    pub fn reached_tools(&self) -> Vec<String> {
        self.tools
            .iter()
            .filter(|t| t.reached)
            .map(|t| t.tool.clone())
            .collect()
    }

    /// Every tool's record.
    pub fn tools(&self) -> &[ToolReach] {
        &self.tools
    }

    fn get(&self, tool: &str) -> Option<&ToolReach> {
        self.tools.iter().find(|t| t.tool == tool)
    }
}

/// The serialized size of `v`, in bytes.
fn size(v: &Value) -> usize {
    v.to_string().len()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_tool_reaches_when_any_call_did_and_keeps_the_smallest_arguments() {
        let mut t = ReachTable::default();
        t.note("fetch", &json!({"path": "a"}), &[]);
        assert!(!t.reached("fetch"));
        assert_eq!(t.tried("fetch"), 1);
        t.note(
            "fetch",
            &json!({"path": "/robots.txt"}),
            &["/robots.txt", "/robots.txt"],
        );
        t.note(
            "fetch",
            &json!({"path": "/v1/items/1"}),
            &["/robots.txt", "/v1/items/1"],
        );
        t.note("fetch", &json!({"path": "/a"}), &["/a"]);
        t.note("fetch", &json!({"path": "/b"}), &["/b"]);
        t.note("fetch", &json!({"path": "/a"}), &["/a"]);
        t.note("echo", &json!({"text": "a"}), &[]);
        assert!(t.reached("fetch"));
        assert_eq!(t.arguments("fetch"), Some(&json!({"path": "/a"})));
        assert_eq!(
            t.reaching("fetch"),
            [
                json!({"path": "/a"}),
                json!({"path": "/b"}),
                json!({"path": "/robots.txt"}),
                json!({"path": "/v1/items/1"})
            ]
        );
        assert_eq!(t.paths("fetch"), ["/robots.txt", "/v1/items/1", "/a", "/b"]);
        assert_eq!(t.reached_tools(), ["fetch"]);
        let fetch = &t.tools()[0];
        assert_eq!((fetch.calls_tried, fetch.calls_reached), (6, 5));
        assert_eq!(
            serde_json::to_value(&t.tools()[1]).expect("serializable"),
            json!({"tool": "echo", "reached": false, "calls_tried": 1, "calls_reached": 0})
        );
    }
}
