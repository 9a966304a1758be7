//! Applicator keywords, applied to the node built from a location's own keywords:
//! `$ref` (2019-09 and later), `$dynamicRef`, `$recursiveRef`, `allOf`, `anyOf`, `oneOf`,
//! `not`, `if`/`then`/`else`, `dependentSchemas` (and schema-valued `dependencies`),
//! `unevaluatedProperties` and `unevaluatedItems`.

use std::sync::Arc;

use jsonschema::Draft;
use serde_json::{Map, Value};

use super::objects::DepSchema;
use super::{ANNOTATIONS, Lower, mark_check};
use crate::generate::error::NoteKind;
use crate::generate::ir::{Never, Node, Shape, escape_token, json_eq, ty};

impl Lower<'_> {
    /// Applies `$ref` (its siblings' conjunction, 2019-09 and later), then `$dynamicRef`
    /// and `$recursiveRef` (resolved statically, filtered).
    pub(super) fn lower_refs(
        &mut self,
        m: &Map<String, Value>,
        ptr: &str,
        legacy: bool,
        mut node: Node,
    ) -> Node {
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
        node
    }

    /// Applies `allOf` (merged), `anyOf` and `oneOf` (distributed), then `not`.
    pub(super) fn lower_combinators(
        &mut self,
        m: &Map<String, Value>,
        ptr: &str,
        mut node: Node,
    ) -> Node {
        let p = |k: &str| format!("{ptr}/{}", escape_token(k));
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
        node
    }

    /// Applies `if`/`then`/`else` (draft-07 and later) as two alternatives.
    pub(super) fn lower_conditional(
        &mut self,
        m: &Map<String, Value>,
        ptr: &str,
        mut node: Node,
    ) -> Node {
        let p = |k: &str| format!("{ptr}/{}", escape_token(k));
        let draft4 = self.draft == Draft::Draft4;
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
        node
    }

    /// Applies each `dependentSchemas` entry as "absent, or present and valid".
    pub(super) fn lower_dependent_schemas(
        &mut self,
        dep_schemas: Vec<DepSchema<'_>>,
        ptr: &str,
        mut node: Node,
    ) -> Node {
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
        node
    }

    /// Applies `unevaluatedProperties`/`unevaluatedItems` (2019-09 and later) where nothing
    /// else constrains extra members, filtered.
    pub(super) fn lower_unevaluated(
        &mut self,
        m: &Map<String, Value>,
        ptr: &str,
        legacy: bool,
        mut node: Node,
    ) -> Node {
        let p = |k: &str| format!("{ptr}/{}", escape_token(k));
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
        node
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
}
