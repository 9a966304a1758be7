//! Array keywords: `prefixItems`, `items`, `additionalItems` (draft 2019-09 and older),
//! `minItems`, `maxItems`, `uniqueItems`, `contains`, `minContains` and `maxContains` —
//! lowering and finalization.

use jsonschema::Draft;
use serde_json::{Map, Value};

use super::{Lower, as_count, kill};
use crate::generate::ir::{ContainsC, Never, NeverKind, Node, Shape, escape_token, ty};

impl Lower<'_> {
    /// Lowers `prefixItems`/`items`/`additionalItems`, `minItems`, `maxItems`,
    /// `uniqueItems` and `contains` (with `minContains`/`maxContains`).
    pub(super) fn lower_arrays(
        &mut self,
        m: &Map<String, Value>,
        ptr: &str,
        legacy: bool,
        draft4: bool,
        s: &mut Shape,
    ) {
        let p = |k: &str| format!("{ptr}/{}", escape_token(k));
        let count = |k: &str| m.get(k).and_then(as_count);
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
    }

    /// Finalizes the array keywords: kills `array` when no array can satisfy them.
    pub(super) fn finalize_arrays(&self, s: &mut Shape, reason: &mut Option<Never>, loc: &str) {
        let cap = self.opts.size_cap;
        if s.types & ty::ARR != 0 {
            let items_never = s.arr.items.as_deref().is_some_and(Node::is_never);
            if s.arr.max.is_some_and(|mx| mx < s.arr.min) {
                kill(
                    s,
                    reason,
                    ty::ARR,
                    Never::unsat(format!("minItems > maxItems at #{loc}")),
                );
            } else if s.arr.min > cap {
                let requested = s.arr.min;
                kill(
                    s,
                    reason,
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
                kill(s, reason, ty::ARR, Never::unsat(msg));
            } else if let Some(i) = s
                .arr
                .prefix
                .iter()
                .take(usize::try_from(s.arr.min).unwrap_or(usize::MAX))
                .position(Node::is_never)
            {
                kill(
                    s,
                    reason,
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
                    s,
                    reason,
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
                kill(s, reason, ty::ARR, Never::unsat(msg));
            }
            if !s.arr.contains.is_empty() || s.arr.unique {
                s.needs_check = true;
            }
        }
    }
}
