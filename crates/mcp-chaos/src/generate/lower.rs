//! Lowering a JSON Schema document (2020-12, 2019-09, draft-07/06/04) to [`Node`]s.
//!
//! - `$ref` (local: `#`, JSON pointers, `$anchor`/`$dynamicAnchor`, `$id`-named resources):
//!   expanded inline; a target already being expanded `max_ref_depth` times on the current
//!   path is cut (an unsatisfiable branch, noted). In draft-07 and older, `$ref` replaces its
//!   siblings, as the spec says.
//! - `allOf`: merged; `anyOf`, `oneOf`, `if`/`then`/`else`, `dependentSchemas`: distributed
//!   into alternatives (`oneOf` exclusivity and the `else` branch's "not if" are filtered).
//! - `not`: `type`, single `required` and `enum`/`const` are constructed; anything else is
//!   filtered.
//! - `unevaluatedProperties`/`unevaluatedItems`: applied where nothing else constrains
//!   extra members, plus a filter.

use std::collections::HashMap;
use std::sync::Arc;

use jsonschema::Draft;
use serde_json::{Map, Value};

use super::error::{Note, NoteKind};
use super::format::{hint_for_description, hint_for_name};
use super::ir::{
    Bound, ContainsC, Never, NeverKind, Node, Shape, div_ceil, div_floor, escape_token, json_eq,
    ty, type_of,
};
use super::options::GenOptions;
use super::regex::{Pattern, fit_length, len_bounds};
use super::safety::is_loopback_safe;
use super::validate::Validators;

/// Keywords that never constrain instances.
const ANNOTATIONS: &[&str] = &[
    "title",
    "description",
    "$comment",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$schema",
    "$id",
    "$anchor",
    "$defs",
    "definitions",
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
];

/// Lowering state for one schema document.
pub(crate) struct Lower<'a> {
    root: &'a Value,
    draft: Draft,
    opts: &'a GenOptions,
    vals: &'a Validators,
    pub notes: Vec<Note>,
    nodes: usize,
    nest: usize,
    stack: Vec<String>,
    anchors: HashMap<String, String>,
    ids: Vec<(String, String)>,
    patterns: HashMap<String, Result<Pattern, String>>,
    /// An `enum` was sampled to [`GenOptions::max_enum_values`]: a contradiction found
    /// afterwards may be the sample's, so it is not reported as unsatisfiable.
    pub sampled_enum: bool,
}

/// `max` values of `a` spread evenly over it (first and last included), or all of it.
fn spread<T: Clone>(a: &[T], max: usize) -> Vec<T> {
    let n = a.len();
    if n <= max {
        return a.to_vec();
    }
    if max <= 1 {
        return a.iter().take(max).cloned().collect();
    }
    (0..max)
        .map(|i| a[i * (n - 1) / (max - 1)].clone())
        .collect()
}

impl<'a> Lower<'a> {
    pub fn new(root: &'a Value, opts: &'a GenOptions, vals: &'a Validators) -> Self {
        let mut l = Self {
            root,
            draft: vals.draft(),
            opts,
            vals,
            notes: Vec::new(),
            nodes: 0,
            nest: 0,
            stack: Vec::new(),
            anchors: HashMap::new(),
            ids: Vec::new(),
            patterns: HashMap::new(),
            sampled_enum: false,
        };
        l.collect_anchors();
        l
    }

    fn legacy(&self) -> bool {
        matches!(self.draft, Draft::Draft4 | Draft::Draft6 | Draft::Draft7)
    }

    fn note(&mut self, pointer: &str, keyword: &str, kind: NoteKind, message: impl Into<String>) {
        let n = Note {
            pointer: format!("#{pointer}"),
            keyword: keyword.to_string(),
            kind,
            message: message.into(),
        };
        if !self
            .notes
            .iter()
            .any(|m| m.pointer == n.pointer && m.keyword == n.keyword && m.kind == n.kind)
        {
            self.notes.push(n);
        }
    }

    /// A compiled `pattern` (cached).
    pub fn pattern(&mut self, p: &str) -> Result<Pattern, String> {
        self.patterns
            .entry(p.to_string())
            .or_insert_with(|| Pattern::compile(p))
            .clone()
    }

    fn collect_anchors(&mut self) {
        let mut stack: Vec<(&Value, String)> = vec![(self.root, String::new())];
        while let Some((v, ptr)) = stack.pop() {
            match v {
                Value::Object(m) => {
                    for key in ["$anchor", "$dynamicAnchor"] {
                        if let Some(Value::String(a)) = m.get(key) {
                            self.anchors.entry(a.clone()).or_insert_with(|| ptr.clone());
                        }
                    }
                    if let Some(Value::String(id)) = m.get("$id").or_else(|| m.get("id")) {
                        if let Some(a) = id.strip_prefix('#') {
                            self.anchors
                                .entry(a.to_string())
                                .or_insert_with(|| ptr.clone());
                        } else {
                            self.ids.push((id.clone(), ptr.clone()));
                        }
                    }
                    for (k, c) in m {
                        stack.push((c, format!("{ptr}/{}", escape_token(k))));
                    }
                }
                Value::Array(a) => {
                    for (i, c) in a.iter().enumerate() {
                        stack.push((c, format!("{ptr}/{i}")));
                    }
                }
                _ => {}
            }
        }
    }

    /// Resolves a `$ref` to an escaped JSON pointer into the root document.
    fn ref_target(&self, r: &str) -> Option<String> {
        let root_id = self
            .root
            .get("$id")
            .and_then(Value::as_str)
            .map(|s| s.trim_end_matches('#'));
        let r = match root_id {
            Some(id) if !id.is_empty() && r.starts_with(id) => &r[id.len()..],
            _ => r,
        };
        let (doc, frag) = match r.split_once('#') {
            Some((d, f)) => (d, f),
            None => (r, ""),
        };
        let base = if doc.is_empty() {
            String::new()
        } else {
            let (_, ptr) = self.ids.iter().find(|(id, _)| {
                id == doc || id.ends_with(&format!("/{doc}")) || doc.ends_with(&format!("/{id}"))
            })?;
            ptr.clone()
        };
        let frag = percent_decode(frag);
        if frag.is_empty() {
            Some(base)
        } else if frag.starts_with('/') {
            Some(format!("{base}{frag}"))
        } else {
            self.anchors.get(&frag).cloned()
        }
    }

    fn resolve_ref(&mut self, r: &str, from: &str, kw: &str) -> Node {
        let Some(target) = self.ref_target(r) else {
            self.note(
                from,
                kw,
                NoteKind::Unsupported,
                format!("{kw} {r:?} is not resolved locally; filtered"),
            );
            let mut s = Shape::any();
            s.srcs = vec![Arc::from(from)];
            s.needs_check = true;
            s.loc = Arc::from(from);
            return Node::single(s);
        };
        let count = self.stack.iter().filter(|p| **p == target).count();
        if count >= self.opts.max_ref_depth {
            self.note(
                from,
                kw,
                NoteKind::RecursionCut,
                format!("recursive {kw} {r:?} cut after {count} expansions"),
            );
            return Node::never(Never::complex(format!(
                "{kw} {r:?} at #{from} recurses deeper than max_ref_depth {}",
                self.opts.max_ref_depth
            )));
        }
        let Some(sub) = self.root.pointer(&target) else {
            self.note(
                from,
                kw,
                NoteKind::Unsupported,
                format!("{kw} {r:?} points nowhere"),
            );
            return Node::any();
        };
        self.stack.push(target.clone());
        let n = self.lower(sub, &target);
        self.stack.pop();
        n
    }

    /// Lowers the subschema `v` found at `ptr` (escaped JSON pointer).
    pub fn lower(&mut self, v: &Value, ptr: &str) -> Node {
        self.nodes += 1;
        if self.opts.past_deadline() {
            return Node::never(Never::complex(format!(
                "the generation deadline passed while lowering the schema (at #{ptr})"
            )));
        }
        if self.nodes > self.opts.max_schema_nodes || self.nest > 150 {
            return Node::never(Never::complex(format!(
                "schema exceeds max_schema_nodes {} (at #{ptr})",
                self.opts.max_schema_nodes
            )));
        }
        self.nest += 1;
        let n = match v {
            Value::Bool(false) => Node::never(Never::unsat(format!("false schema at #{ptr}"))),
            Value::Object(m) => self.lower_obj(m, ptr),
            _ => Node::any(),
        };
        self.nest -= 1;
        n
    }

    #[expect(clippy::too_many_lines, reason = "one arm per keyword family")]
    fn lower_obj(&mut self, m: &Map<String, Value>, ptr: &str) -> Node {
        let p = |k: &str| format!("{ptr}/{}", escape_token(k));
        let legacy = self.legacy();
        let draft4 = self.draft == Draft::Draft4;
        if legacy && let Some(Value::String(r)) = m.get("$ref") {
            return self.resolve_ref(r, ptr, "$ref");
        }
        let mut s = Shape::any();
        s.loc = Arc::from(ptr);
        s.srcs = vec![Arc::from(ptr)];

        if let Some(t) = m.get("type") {
            s.types = match t {
                Value::String(x) => ty::from_name(x),
                Value::Array(a) => a
                    .iter()
                    .filter_map(Value::as_str)
                    .fold(0, |acc, x| acc | ty::from_name(x)),
                _ => ty::ALL,
            };
        }
        if let Some(Value::Array(a)) = m.get("enum") {
            let max = self.opts.max_enum_values.max(1);
            if a.len() > max {
                self.sampled_enum = true;
                self.note(
                    ptr,
                    "enum",
                    NoteKind::Budget,
                    format!(
                        "enum of {} values: generating from {max} of them, spread evenly \
                         (max_enum_values)",
                        a.len()
                    ),
                );
            }
            s.enumeration = Some(spread(a, max));
            s.enum_kw = "enum";
        }
        if !draft4 && let Some(c) = m.get("const") {
            s.enumeration = Some(match s.enumeration.take() {
                Some(e) => e.into_iter().filter(|x| json_eq(x, c)).collect(),
                None => vec![c.clone()],
            });
            s.enum_kw = "const";
        }

        // Numbers.
        let num = |k: &str| m.get(k).and_then(Value::as_f64);
        if let Some(v) = num("minimum") {
            let excl = draft4 && m.get("exclusiveMinimum") == Some(&Value::Bool(true));
            s.num.lo = tighter_lo(s.num.lo, Bound { v, excl });
        }
        if let Some(v) = num("maximum") {
            let excl = draft4 && m.get("exclusiveMaximum") == Some(&Value::Bool(true));
            s.num.hi = tighter_hi(s.num.hi, Bound { v, excl });
        }
        if !draft4 {
            if let Some(v) = num("exclusiveMinimum") {
                s.num.lo = tighter_lo(s.num.lo, Bound { v, excl: true });
            }
            if let Some(v) = num("exclusiveMaximum") {
                s.num.hi = tighter_hi(s.num.hi, Bound { v, excl: true });
            }
        }
        if let Some(v) = num("multipleOf")
            && v > 0.0
            && v.is_finite()
        {
            s.num.mult.push(v);
        }

        // Strings.
        let count = |k: &str| m.get(k).and_then(as_count);
        if let Some(v) = count("minLength") {
            s.str.min = v;
        }
        if let Some(v) = count("maxLength") {
            s.str.max = Some(v);
        }
        if let Some(Value::String(pat)) = m.get("pattern") {
            s.str.patterns.push(pat.clone());
        }
        if let Some(Value::String(f)) = m.get("format") {
            s.str.format = Some(f.clone());
        }

        // Arrays.
        let modern = !legacy && self.draft != Draft::Draft201909;
        if modern {
            if let Some(Value::Array(a)) = m.get("prefixItems") {
                let base = p("prefixItems");
                s.arr.prefix = a
                    .iter()
                    .enumerate()
                    .map(|(i, x)| self.lower(x, &format!("{base}/{i}")))
                    .collect();
            }
            match m.get("items") {
                Some(Value::Array(a)) => {
                    let base = p("items");
                    s.arr.prefix = a
                        .iter()
                        .enumerate()
                        .map(|(i, x)| self.lower(x, &format!("{base}/{i}")))
                        .collect();
                }
                Some(x) => {
                    s.arr.items = Some(Box::new(self.lower(x, &p("items"))));
                    s.arr.items_kw = "items";
                }
                None => {}
            }
        } else {
            match m.get("items") {
                Some(Value::Array(a)) => {
                    let base = p("items");
                    s.arr.prefix = a
                        .iter()
                        .enumerate()
                        .map(|(i, x)| self.lower(x, &format!("{base}/{i}")))
                        .collect();
                    if let Some(x) = m.get("additionalItems") {
                        s.arr.items = Some(Box::new(self.lower(x, &p("additionalItems"))));
                        s.arr.items_kw = "additionalItems";
                    }
                }
                Some(x) => {
                    s.arr.items = Some(Box::new(self.lower(x, &p("items"))));
                    s.arr.items_kw = "items";
                }
                None => {}
            }
        }
        if let Some(v) = count("minItems") {
            s.arr.min = v;
        }
        if let Some(v) = count("maxItems") {
            s.arr.max = Some(v);
        }
        if m.get("uniqueItems") == Some(&Value::Bool(true)) {
            s.arr.unique = true;
        }
        if !draft4 && let Some(c) = m.get("contains") {
            let node = self.lower(c, &p("contains"));
            let (min, max) = if legacy {
                (1, None)
            } else {
                (count("minContains").unwrap_or(1), count("maxContains"))
            };
            // `contains` items must also satisfy `items`: merge so they are built valid.
            let node = match s.arr.items.as_deref() {
                Some(items) if s.arr.prefix.is_empty() => self.and(items.clone(), node),
                _ => node,
            };
            s.arr.contains.push(ContainsC { node, min, max });
        }

        // Objects.
        if let Some(Value::Object(props)) = m.get("properties") {
            let base = p("properties");
            for (k, sub) in props {
                let mut n = self.lower(sub, &format!("{base}/{}", escape_token(k)));
                let described = || {
                    sub.get("description")
                        .and_then(Value::as_str)
                        .and_then(hint_for_description)
                };
                if let Some(h) = hint_for_name(k).or_else(described) {
                    for a in &mut n.alts {
                        a.hint = a.hint.or(Some(h));
                    }
                }
                s.obj.props.push((k.clone(), n));
            }
        }
        if let Some(Value::Array(r)) = m.get("required") {
            for x in r.iter().filter_map(Value::as_str) {
                if !s.obj.required.iter().any(|y| y == x) {
                    s.obj.required.push(x.to_string());
                }
            }
        }
        if let Some(x) = m.get("additionalProperties") {
            s.obj.additional = Some(Box::new(self.lower(x, &p("additionalProperties"))));
        }
        if let Some(Value::Object(pp)) = m.get("patternProperties") {
            let base = p("patternProperties");
            for (k, sub) in pp {
                let n = self.lower(sub, &format!("{base}/{}", escape_token(k)));
                s.obj.patterns.push((k.clone(), n));
            }
        }
        if !draft4 && let Some(x) = m.get("propertyNames") {
            s.obj.names = Some(Box::new(self.lower(x, &p("propertyNames"))));
        }
        if let Some(v) = count("minProperties") {
            s.obj.min = v;
        }
        if let Some(v) = count("maxProperties") {
            s.obj.max = Some(v);
        }
        let mut dep_schemas: Vec<(String, &Value, String)> = Vec::new();
        if legacy {
            if let Some(Value::Object(d)) = m.get("dependencies") {
                for (k, v) in d {
                    match v {
                        Value::Array(a) => {
                            let deps = a.iter().filter_map(Value::as_str).map(str::to_string);
                            s.obj.dep_req.push((k.clone(), deps.collect()));
                            s.obj.dep_kw = "dependencies";
                        }
                        other => dep_schemas.push((
                            k.clone(),
                            other,
                            format!("{}/{}", p("dependencies"), escape_token(k)),
                        )),
                    }
                }
            }
        } else {
            if let Some(Value::Object(d)) = m.get("dependentRequired") {
                for (k, v) in d {
                    if let Value::Array(a) = v {
                        let deps = a.iter().filter_map(Value::as_str).map(str::to_string);
                        s.obj.dep_req.push((k.clone(), deps.collect()));
                    }
                }
            }
            if let Some(Value::Object(d)) = m.get("dependentSchemas") {
                for (k, v) in d {
                    dep_schemas.push((
                        k.clone(),
                        v,
                        format!("{}/{}", p("dependentSchemas"), escape_token(k)),
                    ));
                }
            }
        }

        // Seeds.
        if let Some(d) = m.get("default") {
            s.seeds.push(d.clone());
        }
        if let Some(Value::Array(ex)) = m.get("examples") {
            s.seeds.extend(ex.iter().take(8).cloned());
        }

        let mut node = match self.finalize(s, false) {
            Ok(s) => Node::single(s),
            Err(n) => Node::never(n),
        };

        if !legacy && let Some(Value::String(r)) = m.get("$ref") {
            let t = self.resolve_ref(r, ptr, "$ref");
            node = self.and(node, t);
        }
        for kw in ["$dynamicRef", "$recursiveRef"] {
            if let Some(Value::String(r)) = m.get(kw) {
                self.note(
                    ptr,
                    kw,
                    NoteKind::Unsupported,
                    format!("{kw} resolved statically and filtered"),
                );
                let t = self.resolve_ref(r, ptr, kw);
                node = self.and(node, t);
                mark_check(&mut node);
            }
        }
        if let Some(Value::Array(all)) = m.get("allOf") {
            let base = p("allOf");
            for (i, sub) in all.iter().enumerate() {
                let n = self.lower(sub, &format!("{base}/{i}"));
                node = self.and(node, n);
            }
        }
        if let Some(Value::Array(any)) = m.get("anyOf") {
            let base = p("anyOf");
            let branches: Vec<Node> = any
                .iter()
                .enumerate()
                .map(|(i, sub)| self.lower(sub, &format!("{base}/{i}")))
                .collect();
            let u = self.union(branches, ptr, "anyOf");
            node = self.and(node, u);
        }
        if let Some(Value::Array(one)) = m.get("oneOf") {
            let base = p("oneOf");
            let branches: Vec<Node> = one
                .iter()
                .enumerate()
                .map(|(i, sub)| self.lower(sub, &format!("{base}/{i}")))
                .collect();
            let mut u = self.union(branches, ptr, "oneOf");
            if one.len() > 1 {
                mark_check(&mut u);
                self.note(
                    ptr,
                    "oneOf",
                    NoteKind::Filtered,
                    "exclusivity of oneOf is filtered",
                );
            }
            node = self.and(node, u);
        }
        if let Some(ns) = m.get("not") {
            node = self.not(node, ns, ptr);
        }
        if !draft4
            && self.draft != Draft::Draft6
            && let Some(ifs) = m.get("if")
        {
            let if_n = self.lower(ifs, &p("if"));
            let then_n = m
                .get("then")
                .map_or_else(Node::any, |t| self.lower(t, &p("then")));
            let mut else_n = m
                .get("else")
                .map_or_else(Node::any, |e| self.lower(e, &p("else")));
            // An `if` that accepts everything leaves no room for the `else` branch.
            if if_n.is_any() {
                else_n = Node::never(Never::unsat(format!(
                    "\"if\" at #{ptr} accepts everything: \"else\" never applies"
                )));
            }
            let a = self.and(if_n, then_n);
            // The else branch needs "not if": filtered through this location's validator.
            for alt in &mut else_n.alts {
                alt.needs_check = true;
                alt.srcs.push(Arc::from(ptr));
            }
            let u = self.union(vec![a, else_n], ptr, "if");
            node = self.and(node, u);
        }
        for (k, sub, at) in dep_schemas {
            let mut without = Shape::any();
            without
                .obj
                .props
                .push((k.clone(), Node::never(Never::unsat("absent"))));
            let mut with = Shape::any();
            with.obj.required.push(k.clone());
            let sub_n = self.lower(sub, &at);
            let with_n = self.and(Node::single(with), sub_n);
            let u = self.union(vec![Node::single(without), with_n], ptr, "dependentSchemas");
            node = self.and(node, u);
        }
        if !legacy {
            if let Some(u) = m.get("unevaluatedProperties") {
                let un = self.lower(u, &p("unevaluatedProperties"));
                for alt in &mut node.alts {
                    if alt.obj.additional.is_none() && alt.obj.patterns.is_empty() {
                        alt.obj.additional = Some(Box::new(un.clone()));
                        alt.obj.additional_kw = "unevaluatedProperties";
                    }
                    alt.needs_check = true;
                }
                self.note(
                    ptr,
                    "unevaluatedProperties",
                    NoteKind::Filtered,
                    "approximated by additionalProperties, filtered",
                );
            }
            if let Some(u) = m.get("unevaluatedItems") {
                let un = self.lower(u, &p("unevaluatedItems"));
                for alt in &mut node.alts {
                    if alt.arr.items.is_none() {
                        alt.arr.items = Some(Box::new(un.clone()));
                        alt.arr.items_kw = "unevaluatedItems";
                    }
                    alt.needs_check = true;
                }
                self.note(
                    ptr,
                    "unevaluatedItems",
                    NoteKind::Filtered,
                    "approximated by items, filtered",
                );
            }
        }
        self.finish(node)
    }

    /// Final pass on a location's node: full finalization of every alternative.
    fn finish(&mut self, node: Node) -> Node {
        let mut alts = Vec::with_capacity(node.alts.len());
        let mut never = node.never;
        for a in node.alts {
            match self.finalize(a, true) {
                Ok(s) => alts.push(s),
                Err(n) => never = best(never, n),
            }
        }
        Node { alts, never }
    }

    fn not(&mut self, mut node: Node, ns: &Value, ptr: &str) -> Node {
        match ns {
            Value::Bool(true) => {
                return Node::never(Never::unsat(format!("\"not\": true at #{ptr}")));
            }
            Value::Bool(false) => return node,
            _ => {}
        }
        let Some(o) = ns.as_object() else {
            return node;
        };
        // `not` of a schema that accepts everything accepts nothing.
        if self.lower(ns, &format!("{ptr}/not")).is_any() {
            return Node::never(Never::unsat(format!(
                "\"not\" at #{ptr} negates a schema that accepts everything"
            )));
        }
        let keys: Vec<&str> = o
            .keys()
            .map(String::as_str)
            .filter(|k| !ANNOTATIONS.contains(k))
            .collect();
        match keys.as_slice() {
            ["type"] => {
                let t = match &o["type"] {
                    Value::String(x) => ty::from_name(x),
                    Value::Array(a) => a
                        .iter()
                        .filter_map(Value::as_str)
                        .fold(0, |acc, x| acc | ty::from_name(x)),
                    _ => 0,
                };
                for a in &mut node.alts {
                    a.types &= !t;
                }
                node
            }
            ["required"] => {
                let names: Vec<String> = o["required"]
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .filter_map(Value::as_str)
                            .map(str::to_string)
                            .collect()
                    })
                    .unwrap_or_default();
                if names.len() == 1 {
                    let mut f = Shape::any();
                    f.obj.props.push((
                        names[0].clone(),
                        Node::never(Never::unsat(format!("forbidden by \"not\" at #{ptr}"))),
                    ));
                    self.and(node, Node::single(f))
                } else {
                    mark_check(&mut node);
                    self.note(ptr, "not", NoteKind::Filtered, "\"not\" is filtered");
                    node
                }
            }
            ["enum"] | ["const"] => {
                let bad: Vec<Value> = match o.get("enum") {
                    Some(Value::Array(a)) => a.clone(),
                    _ => o.get("const").cloned().into_iter().collect(),
                };
                for a in &mut node.alts {
                    match &mut a.enumeration {
                        Some(e) => e.retain(|v| !bad.iter().any(|b| json_eq(b, v))),
                        None => a.needs_check = true,
                    }
                }
                node
            }
            _ => {
                mark_check(&mut node);
                self.note(ptr, "not", NoteKind::Filtered, "\"not\" is filtered");
                node
            }
        }
    }

    /// Disjunction of branches.
    fn union(&mut self, branches: Vec<Node>, ptr: &str, kw: &str) -> Node {
        let mut alts = Vec::new();
        let mut never = None;
        for b in branches {
            if b.is_never() {
                never = best(never, b.never_reason());
            }
            alts.extend(b.alts);
        }
        if alts.len() > self.opts.max_alternatives {
            alts.truncate(self.opts.max_alternatives);
            self.note(
                ptr,
                kw,
                NoteKind::Capped,
                "alternatives capped by max_alternatives",
            );
        }
        if alts.is_empty() {
            let n = never.unwrap_or_else(|| Never::unsat("empty"));
            return Node::never(Never {
                reason: format!("no branch of {kw} at #{ptr} is satisfiable: {}", n.reason),
                kind: n.kind,
            });
        }
        Node { alts, never: None }
    }

    /// Conjunction of two nodes (distributes over alternatives).
    pub fn and(&mut self, a: Node, b: Node) -> Node {
        if a.is_never() {
            return a;
        }
        if b.is_never() {
            return b;
        }
        if b.is_any() {
            return a;
        }
        if a.is_any() {
            return b;
        }
        let mut alts = Vec::new();
        let mut never = None;
        'outer: for x in &a.alts {
            for y in &b.alts {
                if alts.len() >= self.opts.max_alternatives {
                    let loc = x.loc.to_string();
                    self.note(
                        &loc,
                        "anyOf",
                        NoteKind::Capped,
                        "alternatives capped by max_alternatives",
                    );
                    break 'outer;
                }
                self.nodes += 1;
                if self.nodes > self.opts.max_schema_nodes {
                    never = best(never, Never::complex("schema exceeds max_schema_nodes"));
                    break 'outer;
                }
                match self.merge(x, y) {
                    Ok(s) => alts.push(s),
                    Err(n) => never = best(never, n),
                }
            }
        }
        if alts.is_empty() {
            Node::never(never.unwrap_or_else(|| Never::unsat("contradictory allOf")))
        } else {
            Node { alts, never: None }
        }
    }

    fn and_opt(&mut self, a: Option<&Node>, b: Option<&Node>) -> Option<Box<Node>> {
        match (a, b) {
            (None, None) => None,
            (Some(x), None) | (None, Some(x)) => Some(Box::new(x.clone())),
            (Some(x), Some(y)) => Some(Box::new(self.and(x.clone(), y.clone()))),
        }
    }

    /// The node that applies to property `name` in `s` when it is not in `properties`.
    fn applicable(&mut self, s: &Shape, name: &str, uncertain: &mut bool) -> Node {
        let mut out: Option<Node> = None;
        let mut matched = false;
        for (pat, n) in &s.obj.patterns {
            match self.vals.matches(pat, name) {
                Some(true) => {
                    matched = true;
                    out = Some(match out {
                        None => n.clone(),
                        Some(o) => self.and(o, n.clone()),
                    });
                }
                Some(false) => {}
                None => *uncertain = true,
            }
        }
        if matched {
            return out.unwrap_or_else(Node::any);
        }
        s.obj
            .additional
            .as_deref()
            .cloned()
            .unwrap_or_else(Node::any)
    }

    #[expect(clippy::too_many_lines, reason = "one block per keyword family")]
    fn merge(&mut self, x: &Shape, y: &Shape) -> Result<Shape, Never> {
        let mut s = x.clone();
        s.types &= y.types;
        s.enumeration = match (&x.enumeration, &y.enumeration) {
            (Some(a), Some(b)) => Some(
                a.iter()
                    .filter(|v| b.iter().any(|w| json_eq(v, w)))
                    .cloned()
                    .collect(),
            ),
            (Some(a), None) => Some(a.clone()),
            (None, Some(b)) => {
                s.enum_kw = y.enum_kw;
                Some(b.clone())
            }
            (None, None) => None,
        };
        if let Some(b) = y.num.lo {
            s.num.lo = tighter_lo(s.num.lo, b);
        }
        if let Some(b) = y.num.hi {
            s.num.hi = tighter_hi(s.num.hi, b);
        }
        for m in &y.num.mult {
            if !s.num.mult.contains(m) {
                s.num.mult.push(*m);
            }
        }
        s.str.min = x.str.min.max(y.str.min);
        s.str.max = min_opt(x.str.max, y.str.max);
        for pat in &y.str.patterns {
            if !s.str.patterns.contains(pat) {
                s.str.patterns.push(pat.clone());
            }
        }
        match (&x.str.format, &y.str.format) {
            (None, Some(f)) => s.str.format = Some(f.clone()),
            (Some(a), Some(b)) if a != b => s.needs_check = true,
            _ => {}
        }

        // Arrays: position-wise merge of tuples, then the tails.
        let n = x.arr.prefix.len().max(y.arr.prefix.len());
        if n > 0 || x.arr.items.is_some() || y.arr.items.is_some() {
            let mut prefix = Vec::with_capacity(n);
            for i in 0..n {
                let a = x
                    .arr
                    .prefix
                    .get(i)
                    .cloned()
                    .or_else(|| x.arr.items.as_deref().cloned());
                let b = y
                    .arr
                    .prefix
                    .get(i)
                    .cloned()
                    .or_else(|| y.arr.items.as_deref().cloned());
                prefix.push(match (a, b) {
                    (Some(a), Some(b)) => self.and(a, b),
                    (Some(a), None) | (None, Some(a)) => a,
                    (None, None) => Node::any(),
                });
            }
            s.arr.prefix = prefix;
            s.arr.items = self.and_opt(x.arr.items.as_deref(), y.arr.items.as_deref());
            if y.arr.items.is_some() && x.arr.items.is_none() {
                s.arr.items_kw = y.arr.items_kw;
            }
        }
        s.arr.min = x.arr.min.max(y.arr.min);
        s.arr.max = min_opt(x.arr.max, y.arr.max);
        s.arr.unique = x.arr.unique || y.arr.unique;
        s.arr.contains.extend(y.arr.contains.iter().cloned());

        // Objects: each side's additionalProperties is relative to its own properties.
        if !y.obj.props.is_empty()
            || !x.obj.props.is_empty()
            || y.obj.additional.is_some()
            || !y.obj.patterns.is_empty()
        {
            let mut uncertain = false;
            let mut names: Vec<String> = x.obj.props.iter().map(|(k, _)| k.clone()).collect();
            for (k, _) in &y.obj.props {
                if !names.contains(k) {
                    names.push(k.clone());
                }
            }
            let mut props = Vec::with_capacity(names.len());
            for k in names {
                let a = match x.obj.prop(&k) {
                    Some(n) => n.clone(),
                    None => self.applicable(x, &k, &mut uncertain),
                };
                let b = match y.obj.prop(&k) {
                    Some(n) => n.clone(),
                    None => self.applicable(y, &k, &mut uncertain),
                };
                let merged = self.and(a, b);
                props.push((k, merged));
            }
            s.obj.props = props;
            if (!x.obj.patterns.is_empty() && y.obj.additional.is_some())
                || (!y.obj.patterns.is_empty() && x.obj.additional.is_some())
                || uncertain
            {
                s.needs_check = true;
            }
            s.obj.patterns.extend(y.obj.patterns.iter().cloned());
            s.obj.additional =
                self.and_opt(x.obj.additional.as_deref(), y.obj.additional.as_deref());
            if y.obj.additional.is_some() && x.obj.additional.is_none() {
                s.obj.additional_kw = y.obj.additional_kw;
            }
        }
        for r in &y.obj.required {
            if !s.obj.required.contains(r) {
                s.obj.required.push(r.clone());
            }
        }
        s.obj.names = self.and_opt(x.obj.names.as_deref(), y.obj.names.as_deref());
        s.obj.min = x.obj.min.max(y.obj.min);
        s.obj.max = min_opt(x.obj.max, y.obj.max);
        s.obj.dep_req.extend(y.obj.dep_req.iter().cloned());
        if !y.obj.dep_req.is_empty() {
            s.obj.dep_kw = y.obj.dep_kw;
        }

        for src in &y.srcs {
            if !s.srcs.contains(src) {
                s.srcs.push(Arc::clone(src));
            }
        }
        s.needs_check |= y.needs_check;
        s.seeds.extend(y.seeds.iter().cloned());
        s.hint = s.hint.or(y.hint);
        if s.loc.is_empty() {
            s.loc = Arc::clone(&y.loc);
        }
        self.finalize(s, false)
    }

    /// Prunes what this shape makes impossible; `full` also filters `enum`/`const` and seed
    /// values through the validators and the loopback rule.
    #[expect(clippy::too_many_lines, reason = "one block per type")]
    fn finalize(&mut self, mut s: Shape, full: bool) -> Result<Shape, Never> {
        let loc = s.loc.to_string();
        let cap = self.opts.size_cap;
        let mut reason: Option<Never> = None;

        if s.types & ty::NUM != 0 {
            if let (Some(lo), Some(hi)) = (s.num.lo, s.num.hi)
                && (lo.v > hi.v || (lo.v == hi.v && (lo.excl || hi.excl)))
            {
                kill(
                    &mut s,
                    &mut reason,
                    ty::NUM,
                    Never::unsat(format!("minimum {} > maximum {} at #{loc}", lo.v, hi.v)),
                );
            }
            if s.types & ty::INT != 0 {
                let (ilo, ihi) = s.int_range();
                if ilo > ihi {
                    kill(
                        &mut s,
                        &mut reason,
                        ty::INT,
                        Never::unsat(format!("no integer within the bounds at #{loc}")),
                    );
                } else {
                    match s.int_multiple() {
                        Ok(Some(mlt)) if mlt > 0 => {
                            if div_ceil(ilo, mlt) > div_floor(ihi, mlt) {
                                kill(
                                    &mut s,
                                    &mut reason,
                                    ty::INT,
                                    Never::unsat(format!(
                                        "no multiple of {mlt} within the bounds at #{loc}"
                                    )),
                                );
                            }
                        }
                        Ok(_) => {}
                        Err(()) => s.needs_check = true,
                    }
                }
            }
            if s.types & ty::FRAC != 0 {
                let (flo, fhi) = s.float_range();
                let all_int_mult =
                    !s.num.mult.is_empty() && s.num.mult.iter().all(|m| m.fract() == 0.0);
                if flo > fhi || (flo == fhi && flo.fract() == 0.0) || all_int_mult {
                    // No non-integer number: integers (if allowed) still are.
                    s.types &= !ty::FRAC;
                    if s.types & ty::INT == 0 && reason.is_none() {
                        reason = Some(Never::unsat(format!(
                            "no number within the bounds at #{loc}"
                        )));
                    }
                } else if s.num.mult.len() > 1 {
                    s.needs_check = true;
                } else if let Some(&m) = s.num.mult.first() {
                    let k0 = (flo / m).ceil();
                    let k1 = (fhi / m).floor();
                    if k0
                        .partial_cmp(&k1)
                        .is_none_or(|o| o == std::cmp::Ordering::Greater)
                    {
                        s.types &= !ty::FRAC;
                    }
                }
            }
        }

        if s.types & ty::STR != 0 {
            if s.str.max.is_some_and(|mx| mx < s.str.min) {
                kill(
                    &mut s,
                    &mut reason,
                    ty::STR,
                    Never::unsat(format!("minLength > maxLength at #{loc}")),
                );
            } else if s.str.min > cap {
                let requested = s.str.min;
                kill(
                    &mut s,
                    &mut reason,
                    ty::STR,
                    Never {
                        kind: NeverKind::TooLarge {
                            pointer: format!("#{loc}"),
                            keyword: "minLength".into(),
                            requested,
                            cap,
                        },
                        reason: format!("minLength {requested} exceeds size_cap {cap} at #{loc}"),
                    },
                );
            } else if let Some(first) = s.str.patterns.first().cloned() {
                match self.pattern(&first) {
                    Ok(pat) => {
                        let hi = s.str.max.unwrap_or(u64::MAX);
                        if fit_length(&pat.rx, s.str.min, hi, self.opts.max_string_len).is_none() {
                            kill(
                                &mut s,
                                &mut reason,
                                ty::STR,
                                Never::unsat(format!(
                                    "pattern {first:?} cannot match a string of the allowed length at #{loc}"
                                )),
                            );
                        } else {
                            let (lo, _) = len_bounds(&pat.rx);
                            if lo > cap {
                                kill(
                                    &mut s,
                                    &mut reason,
                                    ty::STR,
                                    Never {
                                        kind: NeverKind::TooLarge {
                                            pointer: format!("#{loc}"),
                                            keyword: "pattern".into(),
                                            requested: lo,
                                            cap,
                                        },
                                        reason: format!(
                                            "pattern {first:?} forces {lo} chars, above size_cap {cap}"
                                        ),
                                    },
                                );
                            }
                        }
                        if pat.approximate {
                            s.needs_check = true;
                            self.note(&loc, "pattern", NoteKind::Filtered, format!("pattern {first:?} uses lookaround/backreference/word boundary: filtered"));
                        }
                    }
                    Err(e) => {
                        s.needs_check = true;
                        self.note(
                            &loc,
                            "pattern",
                            NoteKind::Unsupported,
                            format!("pattern {first:?} not translated ({e}): filtered"),
                        );
                    }
                }
                if s.str.patterns.len() > 1
                    || s.str.format.is_some()
                    || s.str.min > 0
                    || s.str.max.is_some()
                {
                    s.needs_check = true;
                }
            } else if s.str.format.is_some() && (s.str.min > 0 || s.str.max.is_some()) {
                s.needs_check = true;
            }
        }

        if s.types & ty::ARR != 0 {
            let items_never = s.arr.items.as_deref().is_some_and(Node::is_never);
            if s.arr.max.is_some_and(|mx| mx < s.arr.min) {
                kill(
                    &mut s,
                    &mut reason,
                    ty::ARR,
                    Never::unsat(format!("minItems > maxItems at #{loc}")),
                );
            } else if s.arr.min > cap {
                let requested = s.arr.min;
                kill(
                    &mut s,
                    &mut reason,
                    ty::ARR,
                    Never {
                        kind: NeverKind::TooLarge {
                            pointer: format!("#{loc}"),
                            keyword: "minItems".into(),
                            requested,
                            cap,
                        },
                        reason: format!("minItems {requested} exceeds size_cap {cap} at #{loc}"),
                    },
                );
            } else if items_never && s.arr.min > s.arr.prefix.len() as u64 {
                let msg = format!(
                    "minItems {} but at most {} items allowed at #{loc}",
                    s.arr.min,
                    s.arr.prefix.len()
                );
                kill(&mut s, &mut reason, ty::ARR, Never::unsat(msg));
            } else if let Some(i) = s
                .arr
                .prefix
                .iter()
                .take(usize::try_from(s.arr.min).unwrap_or(usize::MAX))
                .position(Node::is_never)
            {
                kill(
                    &mut s,
                    &mut reason,
                    ty::ARR,
                    Never::unsat(format!(
                        "item {i} is required by minItems but unsatisfiable at #{loc}"
                    )),
                );
            } else if s
                .arr
                .contains
                .iter()
                .any(|c| (c.node.is_never() && c.min > 0) || c.max.is_some_and(|m| m < c.min))
            {
                kill(
                    &mut s,
                    &mut reason,
                    ty::ARR,
                    Never::unsat(format!("contains cannot be satisfied at #{loc}")),
                );
            } else if s.arr.unique
                && s.arr.prefix.is_empty()
                && let Some(dom) = s.arr.items.as_deref().and_then(Node::finite_domain)
                && (dom.len() as u64) < s.arr.min
            {
                let msg = format!(
                    "uniqueItems needs {} distinct items but items allow {} at #{loc}",
                    s.arr.min,
                    dom.len()
                );
                kill(&mut s, &mut reason, ty::ARR, Never::unsat(msg));
            }
            if !s.arr.contains.is_empty() || s.arr.unique {
                s.needs_check = true;
            }
        }

        if full && s.types & ty::OBJ != 0 {
            self.complete_props(&mut s);
        }
        if s.types & ty::OBJ != 0 {
            let mut dead = None;
            if s.obj.max.is_some_and(|mx| mx < s.obj.min) {
                dead = Some(Never::unsat(format!(
                    "minProperties > maxProperties at #{loc}"
                )));
            } else if s.obj.min > cap {
                dead = Some(Never {
                    kind: NeverKind::TooLarge {
                        pointer: format!("#{loc}"),
                        keyword: "minProperties".into(),
                        requested: s.obj.min,
                        cap,
                    },
                    reason: format!(
                        "minProperties {} exceeds size_cap {cap} at #{loc}",
                        s.obj.min
                    ),
                });
            } else if s.obj.max.is_some_and(|mx| mx < s.obj.required.len() as u64) {
                dead = Some(Never::unsat(format!(
                    "more required properties than maxProperties at #{loc}"
                )));
            } else {
                let required = s.obj.required.clone();
                for r in &required {
                    let mut unc = false;
                    let n = match s.obj.prop(r) {
                        Some(n) => n.clone(),
                        None => self.applicable(&s, r, &mut unc),
                    };
                    if n.is_never() {
                        let why = n.never_reason();
                        dead = Some(Never {
                            reason: format!(
                                "required property {r:?} is forbidden at #{loc}: {}",
                                why.reason
                            ),
                            kind: if matches!(why.kind, NeverKind::Unsatisfiable) {
                                NeverKind::Unsatisfiable
                            } else {
                                why.kind
                            },
                        });
                        break;
                    }
                    if let Some(names) = s.obj.names.as_deref()
                        && !self.accepts_name(names, r)
                    {
                        dead = Some(Never::unsat(format!(
                            "required property {r:?} violates propertyNames at #{loc}"
                        )));
                        break;
                    }
                }
                let open = s.obj.additional.as_deref().is_none_or(|n| !n.is_never())
                    || !s.obj.patterns.is_empty();
                if dead.is_none() && !open {
                    let possible = s.obj.props.iter().filter(|(_, n)| !n.is_never()).count() as u64;
                    if possible < s.obj.min {
                        dead = Some(Never::unsat(format!(
                            "minProperties {} but only {possible} properties allowed at #{loc}",
                            s.obj.min
                        )));
                    }
                }
                if s.obj.names.is_some() || !s.obj.patterns.is_empty() {
                    s.needs_check = true;
                }
            }
            if let Some(d) = dead {
                kill(&mut s, &mut reason, ty::OBJ, d);
            }
        }

        if let Some(e) = s.enumeration.take() {
            let types = s.types;
            let before = e.len();
            let mut kept: Vec<Value> = e.into_iter().filter(|v| types & type_of(v) != 0).collect();
            if full {
                kept.retain(|v| self.vals.check_all(&s.srcs, v));
                let unsafe_first = kept.iter().find(|v| !is_loopback_safe(v)).cloned();
                kept.retain(is_loopback_safe);
                if let Some(u) = unsafe_first {
                    let text = u.to_string();
                    if kept.is_empty() {
                        return Err(Never {
                            kind: NeverKind::Unsafe {
                                pointer: format!("#{loc}"),
                                value: text.clone(),
                            },
                            reason: format!(
                                "{} at #{loc} only allows non-loopback values like {text}",
                                s.enum_kw
                            ),
                        });
                    }
                    self.note(
                        &loc,
                        s.enum_kw,
                        NoteKind::UnsafeDropped,
                        format!("non-loopback value {text} is never emitted"),
                    );
                }
            }
            if kept.is_empty() {
                return Err(reason.unwrap_or_else(|| {
                    Never::unsat(format!(
                        "no {} value ({before} listed) satisfies the other keywords at #{loc}",
                        s.enum_kw
                    ))
                }));
            }
            s.enumeration = Some(kept);
        } else if s.types == 0 {
            return Err(
                reason.unwrap_or_else(|| Never::unsat(format!("no type is allowed at #{loc}")))
            );
        }
        if full && !s.seeds.is_empty() {
            let mut seeds: Vec<Value> = Vec::new();
            let mut dropped = false;
            for v in std::mem::take(&mut s.seeds) {
                if !is_loopback_safe(&v) {
                    dropped = true;
                    continue;
                }
                if types_ok(s.types, &v)
                    && self.vals.check_all(&s.srcs, &v)
                    && !seeds.iter().any(|w| json_eq(w, &v))
                {
                    seeds.push(v);
                }
            }
            if dropped {
                self.note(
                    &loc,
                    "default",
                    NoteKind::UnsafeDropped,
                    "a non-loopback default/example is never emitted",
                );
            }
            seeds.truncate(8);
            s.seeds = seeds;
        }
        s.dead = reason;
        Ok(s)
    }

    /// Adds the properties that `required` and `dependentRequired` name but `properties`
    /// does not declare (with the schema that applies to them), and forbids a dependent
    /// trigger whose dependency is forbidden.
    fn complete_props(&mut self, s: &mut Shape) {
        let mut wanted: Vec<String> = s.obj.required.clone();
        for (k, deps) in &s.obj.dep_req {
            wanted.push(k.clone());
            wanted.extend(deps.iter().cloned());
        }
        for name in wanted {
            if s.obj.prop(&name).is_none() {
                let mut unc = false;
                let n = self.applicable(s, &name, &mut unc);
                if unc {
                    s.needs_check = true;
                }
                s.obj.props.push((name, n));
            }
        }
        let dep_req = s.obj.dep_req.clone();
        for (k, deps) in dep_req {
            let blocked = deps
                .iter()
                .any(|d| s.obj.prop(d).is_some_and(Node::is_never));
            if blocked && let Some(slot) = s.obj.props.iter_mut().find(|(n, _)| *n == k) {
                slot.1 = Node::never(Never::unsat(format!("{k:?} needs a forbidden property")));
            }
        }
        if s.obj.min > 0 || s.obj.max.is_some() || !s.obj.dep_req.is_empty() {
            s.needs_check = true;
        }
    }

    fn accepts_name(&self, names: &Node, name: &str) -> bool {
        let v = Value::String(name.to_string());
        names.alts.iter().any(|a| {
            a.types & ty::STR != 0
                && a.enumeration.as_ref().is_none_or(|e| e.contains(&v))
                && self.vals.check_all(&a.srcs, &v)
        })
    }
}

fn kill(s: &mut Shape, reason: &mut Option<Never>, bit: u8, n: Never) {
    if s.types & bit != 0 {
        s.types &= !bit;
        *reason = best(reason.take(), n);
    }
}

fn types_ok(types: u8, v: &Value) -> bool {
    types & type_of(v) != 0
}

fn mark_check(n: &mut Node) {
    for a in &mut n.alts {
        a.needs_check = true;
    }
}

/// Keeps the more specific of two reasons.
fn best(a: Option<Never>, b: Never) -> Option<Never> {
    match a {
        Some(x) if x.rank() >= b.rank() => Some(x),
        _ => Some(b),
    }
}

fn min_opt(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, None) => x,
        (None, y) => y,
    }
}

fn tighter_lo(a: Option<Bound>, b: Bound) -> Option<Bound> {
    match a {
        None => Some(b),
        Some(x) if b.v > x.v || (b.v == x.v && b.excl) => Some(b),
        Some(x) => Some(x),
    }
}

fn tighter_hi(a: Option<Bound>, b: Bound) -> Option<Bound> {
    match a {
        None => Some(b),
        Some(x) if b.v < x.v || (b.v == x.v && b.excl) => Some(b),
        Some(x) => Some(x),
    }
}

/// A non-negative count keyword (`minLength: 3`, also `3.0`); huge values saturate.
fn as_count(v: &Value) -> Option<u64> {
    v.as_u64().or_else(|| {
        v.as_f64().filter(|f| *f >= 0.0).map(|f| {
            if f >= u64::MAX as f64 {
                u64::MAX
            } else {
                f as u64
            }
        })
    })
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && let (Some(h), Some(l)) = (
                (b[i + 1] as char).to_digit(16),
                (b[i + 2] as char).to_digit(16),
            )
        {
            out.push(u8::try_from(h * 16 + l).unwrap_or(b'?'));
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| s.to_string())
}
