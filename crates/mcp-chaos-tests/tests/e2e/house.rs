//! The house's floor plan, checked from the sources.
//! - Crates: every folder under `crates/` is the crate of that name; the crates' dependencies
//!   on each other (`[dependencies]` of each `Cargo.toml`; dev-dependencies are test code) form
//!   no loop and keep the layers the README describes: the wire layer (`mcp-chaos-proto`) and
//!   the fault injectors depend on no crate of ours, the model only on the wire layer, the
//!   fixture only on the wire layer, the engine on no fixture and no command line.
//! - Modules: no two modules (files) of a crate import each other in a loop, and the layers the
//!   engine's module docs claim hold (reporters import no scenario-engine module; the oracle
//!   imports no transport module). Imports are read from the code as written: `use` trees and
//!   paths through `crate::`, `super::` and a module's own children; test-only code
//!   (`#[cfg(test)]` modules and files) is left out, as a test may reach anywhere.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One crate's modules: module path (`run::scheduler`, `` for the root) -> source file.
struct Crate {
    modules: BTreeMap<String, PathBuf>,
}

impl Crate {
    /// Every module reachable from `src/lib.rs` by `mod` declarations, test-only ones left out.
    fn read(src: &Path) -> Crate {
        let mut modules = BTreeMap::new();
        let root = if src.join("lib.rs").exists() {
            src.join("lib.rs")
        } else {
            src.join("main.rs")
        };
        let mut todo = vec![(String::new(), root)];
        while let Some((path, file)) = todo.pop() {
            let code = non_test_code(&std::fs::read_to_string(&file).expect("a source file"));
            // A module's children live beside it (`a.rs` -> `a/x.rs`; `mod.rs`, `lib.rs` ->
            // `x.rs` in the same folder).
            let name = file
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or_default();
            let dir = if matches!(name, "mod" | "lib" | "main") {
                file.parent().expect("a folder").to_path_buf()
            } else {
                file.with_extension("")
            };
            for child in declared_modules(&code) {
                let child_path = if path.is_empty() {
                    child.clone()
                } else {
                    format!("{path}::{child}")
                };
                let flat = dir.join(format!("{child}.rs"));
                let nested = dir.join(&child).join("mod.rs");
                let child_file = if flat.exists() { flat } else { nested };
                assert!(child_file.exists(), "mod {child_path}: no file");
                todo.push((child_path, child_file));
            }
            modules.insert(path, file);
        }
        Crate { modules }
    }

    /// The module a path (`a::b::Item`, as segments from the crate root) lands in: its
    /// longest prefix that is a module.
    fn module_of(&self, segments: &[&str]) -> Option<String> {
        (1..=segments.len()).rev().find_map(|n| {
            let path = segments[..n].join("::");
            self.modules.contains_key(&path).then_some(path)
        })
    }

    /// Module -> the modules its non-test code names, itself and its ancestors left out
    /// (a child naming its parent's items is the module tree, not an import).
    fn imports(&self) -> BTreeMap<String, BTreeSet<String>> {
        let mut graph = BTreeMap::new();
        for (module, file) in &self.modules {
            let code = non_test_code(&std::fs::read_to_string(file).expect("a source file"));
            let own: Vec<&str> = if module.is_empty() {
                Vec::new()
            } else {
                module.split("::").collect()
            };
            let children: BTreeSet<String> = declared_modules(&code).into_iter().collect();
            let mut out = BTreeSet::new();
            for path in paths(&code) {
                let segments: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
                let absolute: Vec<&str> = match segments.first() {
                    Some(&"crate") => segments[1..].to_vec(),
                    Some(&"super") => {
                        let ups = segments.iter().take_while(|s| **s == "super").count();
                        if ups > own.len() {
                            continue;
                        }
                        let mut a = own[..own.len() - ups].to_vec();
                        a.extend(&segments[ups..]);
                        a
                    }
                    Some(&"self") => {
                        let mut a = own.clone();
                        a.extend(&segments[1..]);
                        a
                    }
                    Some(first) if children.contains(*first) => {
                        let mut a = own.clone();
                        a.extend(&segments);
                        a
                    }
                    _ => continue,
                };
                let Some(target) = self.module_of(&absolute) else {
                    continue;
                };
                let ancestor = module == &target || module.starts_with(&format!("{target}::"));
                let root = target.is_empty();
                if !ancestor && !root {
                    out.insert(target);
                }
            }
            graph.insert(module.clone(), out);
        }
        graph
    }
}

/// `code` without comments, string contents and test-only modules (`#[cfg(test)] mod x { .. }`
/// and `#[cfg(test)] mod x;`).
fn non_test_code(code: &str) -> String {
    let mut out = String::new();
    let mut skip_depth: Option<usize> = None;
    let mut depth = 0usize;
    let mut cfg_test = false;
    for line in code.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("//") {
            continue;
        }
        let line = strip_strings(line);
        let opens = line.matches('{').count();
        let closes = line.matches('}').count();
        if skip_depth.is_none() && trimmed.starts_with("#[cfg(test)]") {
            cfg_test = true;
            continue;
        }
        if cfg_test && skip_depth.is_none() {
            cfg_test = false;
            if line.trim_start().starts_with("mod ") || line.contains(" mod ") {
                if opens > closes {
                    skip_depth = Some(depth);
                    depth += opens - closes;
                }
                continue;
            }
        }
        depth = (depth + opens).saturating_sub(closes);
        if let Some(d) = skip_depth {
            if depth <= d {
                skip_depth = None;
            }
            continue;
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// A line with the contents of its string literals removed (a path in a message is no import).
fn strip_strings(line: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    let mut escaped = false;
    for c in line.chars() {
        if inside {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                inside = false;
                out.push(c);
            }
            continue;
        }
        if c == '"' {
            inside = true;
        }
        out.push(c);
        if c == '/' && out.ends_with("//") {
            out.truncate(out.len() - 2);
            break;
        }
    }
    out
}

/// The modules `code` declares (`mod x;`, `pub mod x;`, `pub(crate) mod x;`), test-only ones
/// already left out by [`non_test_code`].
fn declared_modules(code: &str) -> Vec<String> {
    code.lines()
        .filter_map(|l| {
            let l = l.trim();
            let rest = l.split_once("mod ")?;
            let before = rest.0.trim();
            if !(before.is_empty() || before.starts_with("pub")) {
                return None;
            }
            let name = rest.1.strip_suffix(';')?;
            name.chars()
                .all(|c| c.is_alphanumeric() || c == '_')
                .then(|| name.to_owned())
        })
        .collect()
}

/// Every path `code` names: each `use` tree expanded (`use a::{b, c::d}` -> `a::b`,
/// `a::c::d`), and every `x::y` path elsewhere.
fn paths(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("use ") {
        let before = rest[..at].chars().last();
        let tail = &rest[at + 4..];
        rest = tail;
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let Some(end) = tail.find(';') else { break };
        expand_use("", &tail[..end], &mut out);
    }
    let bytes: Vec<char> = code.chars().collect();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < bytes.len()
                && (bytes[i].is_alphanumeric() || bytes[i] == '_' || bytes[i] == ':')
            {
                i += 1;
            }
            let word: String = bytes[start..i].iter().collect();
            if word.contains("::") && (start == 0 || !bytes[start - 1].is_alphanumeric()) {
                out.push(word);
            }
        } else {
            i += 1;
        }
    }
    out
}

/// Expands one `use` tree under `prefix` into full paths.
fn expand_use(prefix: &str, tree: &str, out: &mut Vec<String>) {
    let tree = tree.trim();
    let join = |p: &str, s: &str| {
        if p.is_empty() {
            s.to_owned()
        } else {
            format!("{p}::{s}")
        }
    };
    match tree.find('{') {
        None => {
            let path = tree.split_whitespace().next().unwrap_or_default();
            if !path.is_empty() {
                out.push(join(prefix, path.trim_end_matches("::*")));
            }
        }
        Some(open) => {
            let head = tree[..open].trim().trim_end_matches("::");
            let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
            let base = join(prefix, head);
            let mut depth = 0;
            let mut start = 0;
            for (i, c) in inner.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        expand_use(&base, &inner[start..i], out);
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            if start < inner.len() {
                expand_use(&base, &inner[start..], out);
            }
        }
    }
}

/// The modules of one loop in `graph`, if there is one.
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    // 0: not seen, 1: on the current path, 2: done.
    let mut state: BTreeMap<&str, u8> = BTreeMap::new();
    fn visit<'a>(
        node: &'a str,
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<&'a str, u8>,
        stack: &mut Vec<&'a str>,
    ) -> Option<Vec<String>> {
        state.insert(node, 1);
        stack.push(node);
        for next in graph.get(node).into_iter().flatten() {
            match state.get(next.as_str()).copied().unwrap_or(0) {
                1 => {
                    let from = stack.iter().position(|n| *n == next.as_str()).unwrap_or(0);
                    return Some(stack[from..].iter().map(|s| (*s).to_owned()).collect());
                }
                0 => {
                    if let Some(c) = visit(next, graph, state, stack) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(node, 2);
        None
    }
    for node in graph.keys() {
        if state.get(node.as_str()).copied().unwrap_or(0) == 0
            && let Some(c) = visit(node, graph, &mut state, &mut Vec::new())
        {
            return Some(c);
        }
    }
    None
}

fn crates_dir() -> PathBuf {
    mcp_chaos_tests::repo_root().join("crates")
}

/// Every crate under `crates/`: folder name -> the crates of ours it depends on
/// (`[dependencies]`, normal ones only). Asserts that each folder's package has the
/// folder's name.
fn crate_graph() -> BTreeMap<String, BTreeSet<String>> {
    let mut graph = BTreeMap::new();
    for entry in std::fs::read_dir(crates_dir()).expect("crates/") {
        let dir = entry.expect("an entry").path();
        let manifest = dir.join("Cargo.toml");
        if !manifest.exists() {
            continue;
        }
        let folder = dir
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_owned();
        let text = std::fs::read_to_string(&manifest).expect("a manifest");
        let toml: toml::Table = toml::from_str(&text).expect("a TOML manifest");
        let name = toml["package"]["name"].as_str().unwrap_or_default();
        assert_eq!(name, folder, "crates/{folder} holds the package {name}");
        let deps: BTreeSet<String> = toml
            .get("dependencies")
            .and_then(|d| d.as_table())
            .map(|d| {
                d.keys()
                    .filter(|k| k.starts_with("mcp-chaos"))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        graph.insert(folder, deps);
    }
    graph
}

/// The crates form no loop and keep their layers: who may depend on whom (normal
/// dependencies; a crate not listed here may depend on nothing of ours but what it is
/// allowed below).
#[test]
fn the_crate_graph_keeps_its_layers() {
    let graph = crate_graph();
    for krate in [
        "mcp-chaos-proto",
        "mcp-chaos-model",
        "mcp-chaos-faults",
        "mcp-chaos-fixture",
        "mcp-chaos",
        "mcp-chaos-cli",
        "mcp-chaos-tests",
    ] {
        assert!(graph.contains_key(krate), "no crate {krate}: {graph:?}");
    }
    if let Some(cycle) = find_cycle(&graph) {
        panic!(
            "crates depend on each other in a loop: {}",
            cycle.join(" -> ")
        );
    }
    let allowed: &[(&str, &[&str])] = &[
        ("mcp-chaos-proto", &[]),
        ("mcp-chaos-faults", &[]),
        ("mcp-chaos-model", &["mcp-chaos-proto"]),
        ("mcp-chaos-fixture", &["mcp-chaos-proto"]),
        (
            "mcp-chaos",
            &["mcp-chaos-proto", "mcp-chaos-model", "mcp-chaos-faults"],
        ),
    ];
    for (krate, may) in allowed {
        for dep in &graph[*krate] {
            assert!(may.contains(&dep.as_str()), "{krate} depends on {dep}");
        }
    }
    // The command line is a shell over the engine, and only the command line and the tests
    // depend on the fixture to run it.
    assert!(graph["mcp-chaos-cli"].contains("mcp-chaos"));
    for (krate, deps) in &graph {
        if deps.contains("mcp-chaos-cli") {
            panic!("{krate} depends on the command line");
        }
    }
}

/// The crate-graph check sees a loop and a layer broken when there is one.
#[test]
fn the_crate_graph_check_sees_a_loop() {
    let mut graph = crate_graph();
    assert!(find_cycle(&graph).is_none());
    graph
        .get_mut("mcp-chaos-proto")
        .expect("the wire layer")
        .insert("mcp-chaos".to_owned());
    let cycle = find_cycle(&graph).expect("a loop");
    assert!(cycle.contains(&"mcp-chaos-proto".to_owned()), "{cycle:?}");
}

/// No loop of imports between the modules of any crate.
#[test]
fn no_module_imports_itself_through_others() {
    for krate in crate_graph().keys() {
        let src = crates_dir().join(krate).join("src");
        let c = Crate::read(&src);
        let graph = c.imports();
        assert!(!graph.is_empty(), "{krate}: no module read");
        if let Some(cycle) = find_cycle(&graph) {
            panic!(
                "{krate}: modules import each other in a loop: {}",
                cycle.join(" -> ")
            );
        }
    }
}

/// The checker sees a loop when there is one, and the imports it reads are the real ones
/// (scheduler -> session, a reporter -> scenario::outcome, the fault crate's tunnel ->
/// server and not back, the command line's commands -> its arguments).
#[test]
fn the_import_reader_reads_real_imports_and_sees_a_loop() {
    let c = Crate::read(&crates_dir().join("mcp-chaos").join("src"));
    let graph = c.imports();
    let of = |m: &str| graph.get(m).cloned().unwrap_or_default();
    assert!(
        of("run::scheduler").contains("session"),
        "{:?}",
        of("run::scheduler")
    );
    assert!(
        of("report::suite").contains("scenario::outcome"),
        "{:?}",
        of("report::suite")
    );
    let faults = Crate::read(&crates_dir().join("mcp-chaos-faults").join("src")).imports();
    assert!(
        faults["connect"].contains("server"),
        "{:?}",
        faults["connect"]
    );
    assert!(
        !faults["server"].contains("connect"),
        "{:?}",
        faults["server"]
    );
    let cli = Crate::read(&crates_dir().join("mcp-chaos-cli").join("src")).imports();
    assert!(
        cli["commands::run"].contains("args"),
        "{:?}",
        cli["commands::run"]
    );
    let proto = Crate::read(&crates_dir().join("mcp-chaos-proto").join("src")).imports();
    assert!(
        proto["wire::answer"].contains("protocol"),
        "{:?}",
        proto["wire::answer"]
    );
    let mut looped = graph.clone();
    looped
        .entry("session".to_owned())
        .or_default()
        .insert("run::scheduler".to_owned());
    let cycle = find_cycle(&looped).expect("a loop");
    assert!(cycle.contains(&"session".to_owned()), "{cycle:?}");
}

/// The engine's layers its module docs claim: no reporter imports the scenario engine (only
/// the suite report, `scenario::outcome`); the oracle imports no transport module (it judges
/// data: what was observed of a server is `mcp_chaos_proto::observed`).
#[test]
fn the_layers_hold() {
    let graph = Crate::read(&crates_dir().join("mcp-chaos").join("src")).imports();
    let mut checked = 0;
    for (module, targets) in &graph {
        for t in targets {
            if module.starts_with("report") {
                checked += 1;
                assert!(
                    !t.starts_with("scenario") || t == "scenario::outcome",
                    "{module} imports {t}"
                );
            }
            if module.starts_with("oracle") {
                checked += 1;
                assert!(!t.starts_with("transport"), "{module} imports {t}");
            }
        }
    }
    assert!(
        checked > 20,
        "only {checked} imports of reporters and the oracle read"
    );
}
