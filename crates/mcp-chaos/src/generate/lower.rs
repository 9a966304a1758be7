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

mod applicators;
mod arrays;
mod numbers;
mod objects;
mod strings;
mod values;

use std::collections::HashMap;
use std::sync::Arc;

use jsonschema::Draft;
use serde_json::{Map, Value};

use super::error::{Note, NoteKind};
use super::ir::{Bound, Never, Node, Shape, escape_token, json_eq, type_of};
use super::options::GenOptions;
use super::regex::Pattern;
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

    fn lower_obj(&mut self, m: &Map<String, Value>, ptr: &str) -> Node {
        let legacy = self.legacy();
        let draft4 = self.draft == Draft::Draft4;
        if legacy && let Some(Value::String(r)) = m.get("$ref") {
            return self.resolve_ref(r, ptr, "$ref");
        }
        let mut s = Shape::any();
        s.loc = Arc::from(ptr);
        s.srcs = vec![Arc::from(ptr)];

        self.lower_values(m, ptr, draft4, &mut s);
        Self::lower_numbers(m, draft4, &mut s);
        Self::lower_strings(m, &mut s);
        self.lower_arrays(m, ptr, legacy, draft4, &mut s);
        let dep_schemas = self.lower_objects(m, ptr, legacy, draft4, &mut s);
        Self::lower_seeds(m, &mut s);

        let mut node = match self.finalize(s, false) {
            Ok(s) => Node::single(s),
            Err(n) => Node::never(n),
        };

        node = self.lower_refs(m, ptr, legacy, node);
        node = self.lower_combinators(m, ptr, node);
        node = self.lower_conditional(m, ptr, node);
        node = self.lower_dependent_schemas(dep_schemas, ptr, node);
        node = self.lower_unevaluated(m, ptr, legacy, node);
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
    fn finalize(&mut self, mut s: Shape, full: bool) -> Result<Shape, Never> {
        let loc = s.loc.to_string();
        let mut reason: Option<Never> = None;

        Self::finalize_numbers(&mut s, &mut reason, &loc);
        self.finalize_strings(&mut s, &mut reason, &loc);
        self.finalize_arrays(&mut s, &mut reason, &loc);
        self.finalize_objects(&mut s, &mut reason, &loc, full);
        self.finalize_enum(&mut s, &mut reason, &loc, full)?;
        self.finalize_seeds(&mut s, &loc, full);
        s.dead = reason;
        Ok(s)
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
