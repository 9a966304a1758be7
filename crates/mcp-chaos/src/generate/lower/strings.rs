//! String keywords: `minLength`, `maxLength`, `pattern` and `format` — lowering and
//! finalization (length contradictions, `size_cap`, patterns that cannot fit).

use serde_json::{Map, Value};

use super::{Lower, as_count, kill};
use crate::generate::error::NoteKind;
use crate::generate::ir::{Never, NeverKind, Shape, ty};
use crate::generate::regex::{fit_length, len_bounds};

impl Lower<'_> {
    /// Lowers `minLength`, `maxLength`, `pattern` and `format`.
    pub(super) fn lower_strings(m: &Map<String, Value>, s: &mut Shape) {
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
    }

    /// Finalizes the string keywords: kills `string` when no string fits them, and marks
    /// what the generator only approximates for the validator's check.
    pub(super) fn finalize_strings(
        &mut self,
        s: &mut Shape,
        reason: &mut Option<Never>,
        loc: &str,
    ) {
        let cap = self.opts.size_cap;
        if s.types & ty::STR != 0 {
            if s.str.max.is_some_and(|mx| mx < s.str.min) {
                kill(
                    s,
                    reason,
                    ty::STR,
                    Never::unsat(format!("minLength > maxLength at #{loc}")),
                );
            } else if s.str.min > cap {
                let requested = s.str.min;
                kill(
                    s,
                    reason,
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
                                s,
                                reason,
                                ty::STR,
                                Never::unsat(format!(
                                    "pattern {first:?} cannot match a string of the allowed length at #{loc}"
                                )),
                            );
                        } else {
                            let (lo, _) = len_bounds(&pat.rx);
                            if lo > cap {
                                kill(
                                    s,
                                    reason,
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
                            self.note(loc, "pattern", NoteKind::Filtered, format!("pattern {first:?} uses lookaround/backreference/word boundary: filtered"));
                        }
                    }
                    Err(e) => {
                        s.needs_check = true;
                        self.note(
                            loc,
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
    }
}
