//! Object keywords: `properties`, `required`, `additionalProperties`,
//! `patternProperties`, `propertyNames`, `minProperties`, `maxProperties`, and
//! `dependencies` (draft-07 and older) / `dependentRequired` — lowering and finalization
//! (required properties completed and checked). `dependentSchemas` are collected here and
//! applied with the other applicators.

use serde_json::{Map, Value};

use super::{Lower, as_count, kill};
use crate::generate::format::{hint_for_description, hint_for_name};
use crate::generate::ir::{Never, NeverKind, Node, Shape, escape_token, ty};

/// A `dependentSchemas` (or schema-valued `dependencies`) entry: the trigger property,
/// its schema and that schema's pointer.
pub(super) type DepSchema<'m> = (String, &'m Value, String);

impl Lower<'_> {
    /// Lowers `properties`, `required`, `additionalProperties`, `patternProperties`,
    /// `propertyNames`, `minProperties`, `maxProperties` and `dependencies`/
    /// `dependentRequired`; returns the `dependentSchemas` to apply afterwards.
    pub(super) fn lower_objects<'m>(
        &mut self,
        m: &'m Map<String, Value>,
        ptr: &str,
        legacy: bool,
        draft4: bool,
        s: &mut Shape,
    ) -> Vec<DepSchema<'m>> {
        let p = |k: &str| format!("{ptr}/{}", escape_token(k));
        let count = |k: &str| m.get(k).and_then(as_count);
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
        dep_schemas
    }

    /// Finalizes the object keywords: completes the required properties (when `full`) and
    /// kills `object` when no object can satisfy them.
    pub(super) fn finalize_objects(
        &mut self,
        s: &mut Shape,
        reason: &mut Option<Never>,
        loc: &str,
        full: bool,
    ) {
        let cap = self.opts.size_cap;
        if full && s.types & ty::OBJ != 0 {
            self.complete_props(s);
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
                        None => self.applicable(s, r, &mut unc),
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
                kill(s, reason, ty::OBJ, d);
            }
        }
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

    /// Whether some alternative of the `propertyNames` node accepts the name `name`.
    fn accepts_name(&self, names: &Node, name: &str) -> bool {
        let v = Value::String(name.to_string());
        names.alts.iter().any(|a| {
            a.types & ty::STR != 0
                && a.enumeration.as_ref().is_none_or(|e| e.contains(&v))
                && self.vals.check_all(&a.srcs, &v)
        })
    }
}
