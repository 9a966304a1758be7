//! Numeric keywords: `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`
//! (boolean in draft-04, numbers after) and `multipleOf` — lowering and finalization
//! (empty ranges, no integer or multiple within the bounds).

use serde_json::{Map, Value};

use super::{Lower, kill, tighter_hi, tighter_lo};
use crate::generate::ir::{Bound, Never, Shape, div_ceil, div_floor, ty};

impl Lower<'_> {
    /// Lowers `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum` and `multipleOf`.
    pub(super) fn lower_numbers(m: &Map<String, Value>, draft4: bool, s: &mut Shape) {
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
    }

    /// Finalizes the numeric bounds: kills `number`/`integer` when no value fits them.
    pub(super) fn finalize_numbers(s: &mut Shape, reason: &mut Option<Never>, loc: &str) {
        if s.types & ty::NUM != 0 {
            if let (Some(lo), Some(hi)) = (s.num.lo, s.num.hi)
                && (lo.v > hi.v || (lo.v == hi.v && (lo.excl || hi.excl)))
            {
                kill(
                    s,
                    reason,
                    ty::NUM,
                    Never::unsat(format!("minimum {} > maximum {} at #{loc}", lo.v, hi.v)),
                );
            }
            if s.types & ty::INT != 0 {
                let (ilo, ihi) = s.int_range();
                if ilo > ihi {
                    kill(
                        s,
                        reason,
                        ty::INT,
                        Never::unsat(format!("no integer within the bounds at #{loc}")),
                    );
                } else {
                    match s.int_multiple() {
                        Ok(Some(mlt)) if mlt > 0 => {
                            if div_ceil(ilo, mlt) > div_floor(ihi, mlt) {
                                kill(
                                    s,
                                    reason,
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
                        *reason = Some(Never::unsat(format!(
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
    }
}
