//! Value keywords: `type`, `enum`, `const`, and the seeds `default` and `examples` —
//! lowered onto a [`Shape`], and their finalization (`enum`/`const` values and seeds
//! filtered through the other keywords, the validators and the loopback rule).

use serde_json::{Map, Value};

use super::{Lower, spread, types_ok};
use crate::generate::error::NoteKind;
use crate::generate::ir::{Never, NeverKind, Shape, json_eq, ty, type_of};
use crate::generate::safety::is_loopback_safe;

impl Lower<'_> {
    /// Lowers `type`, `enum` (sampled to `max_enum_values`) and `const` (not in draft-04).
    pub(super) fn lower_values(
        &mut self,
        m: &Map<String, Value>,
        ptr: &str,
        draft4: bool,
        s: &mut Shape,
    ) {
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
    }

    /// Lowers the seeds: `default` and the first `examples`.
    pub(super) fn lower_seeds(m: &Map<String, Value>, s: &mut Shape) {
        if let Some(d) = m.get("default") {
            s.seeds.push(d.clone());
        }
        if let Some(Value::Array(ex)) = m.get("examples") {
            s.seeds.extend(ex.iter().take(8).cloned());
        }
    }

    /// Finalizes `enum`/`const`: keeps the values the types allow (and, when `full`, the
    /// validators and the loopback rule); fails when none is left, or no type is.
    pub(super) fn finalize_enum(
        &mut self,
        s: &mut Shape,
        reason: &mut Option<Never>,
        loc: &str,
        full: bool,
    ) -> Result<(), Never> {
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
                        loc,
                        s.enum_kw,
                        NoteKind::UnsafeDropped,
                        format!("non-loopback value {text} is never emitted"),
                    );
                }
            }
            if kept.is_empty() {
                return Err(reason.take().unwrap_or_else(|| {
                    Never::unsat(format!(
                        "no {} value ({before} listed) satisfies the other keywords at #{loc}",
                        s.enum_kw
                    ))
                }));
            }
            s.enumeration = Some(kept);
        } else if s.types == 0 {
            return Err(reason
                .take()
                .unwrap_or_else(|| Never::unsat(format!("no type is allowed at #{loc}"))));
        }
        Ok(())
    }

    /// Finalizes the seeds (`default`/`examples`) when `full`: loopback-safe, valid and
    /// distinct, at most 8.
    pub(super) fn finalize_seeds(&mut self, s: &mut Shape, loc: &str, full: bool) {
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
                    loc,
                    "default",
                    NoteKind::UnsafeDropped,
                    "a non-loopback default/example is never emitted",
                );
            }
            seeds.truncate(8);
            s.seeds = seeds;
        }
    }
}
