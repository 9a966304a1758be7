//! Number strategies (JSON Schema 2020-12 validation §6.2: `multipleOf`, `maximum`,
//! `exclusiveMaximum`, `minimum`, `exclusiveMinimum`; `type: integer`).
//!
//! Values start from a biased distribution (mostly small numbers near zero or the nearest
//! bound, sometimes the whole range, the exact edges, or large magnitudes) and shrink by
//! binary search toward zero clamped into the range, the way proptest's own numeric trees do
//! (proptest's clamped constructors are private, hence these small trees).

use proptest::prelude::*;
use proptest::strategy::{NewTree, ValueTree};
use proptest::test_runner::TestRunner;
use serde_json::Value;

/// `x` clamped into `lo..=hi`; never panics (an empty range yields `lo`, NaN yields `lo`).
pub(crate) fn clamp_f(x: f64, lo: f64, hi: f64) -> f64 {
    if x.is_nan() || lo.is_nan() || hi.is_nan() || lo >= hi {
        return lo;
    }
    x.max(lo).min(hi)
}

/// `x` clamped into `lo..=hi`; an empty range yields `lo`.
pub(crate) fn clamp_i(x: i128, lo: i128, hi: i128) -> i128 {
    if lo >= hi { lo } else { x.max(lo).min(hi) }
}

/// Binary-search shrinking of an integer toward `target`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct IntTree {
    lo: i128,
    curr: i128,
    hi: i128,
}

impl IntTree {
    fn new(target: i128, start: i128) -> Self {
        Self {
            lo: target,
            curr: start,
            hi: start,
        }
    }

    fn reposition(&mut self) -> bool {
        let mid = self.lo + (self.hi - self.lo) / 2;
        if mid == self.curr {
            false
        } else {
            self.curr = mid;
            true
        }
    }
}

impl ValueTree for IntTree {
    type Value = i128;
    fn current(&self) -> i128 {
        self.curr
    }
    fn simplify(&mut self) -> bool {
        if self.hi == self.lo {
            return false;
        }
        self.hi = self.curr;
        self.reposition()
    }
    fn complicate(&mut self) -> bool {
        if self.hi == self.lo {
            return false;
        }
        let step = if self.hi > self.curr { 1 } else { -1 };
        self.lo = self.curr + step;
        self.reposition()
    }
}

/// Integers in `lo..=hi` (both inclusive), biased toward small values and edges.
#[derive(Debug, Clone)]
pub(crate) struct IntStrategy {
    /// Inclusive lower bound.
    pub lo: i128,
    /// Inclusive upper bound.
    pub hi: i128,
}

impl IntStrategy {
    fn target(&self) -> i128 {
        clamp_i(0, self.lo, self.hi)
    }
}

fn uniform_i128(runner: &mut TestRunner, lo: i128, hi: i128) -> i128 {
    if lo >= hi {
        return lo;
    }
    let span = (hi - lo) as u128;
    let r: u128 = runner.rng().random();
    let off = if span == u128::MAX { r } else { r % (span + 1) };
    lo + off as i128
}

impl Strategy for IntStrategy {
    type Tree = IntTree;
    type Value = i128;
    fn new_tree(&self, runner: &mut TestRunner) -> NewTree<Self> {
        let (lo, hi) = (self.lo, self.hi);
        let t = self.target();
        let pick: u32 = runner.rng().random_range(0..100);
        let start = if pick < 50 {
            uniform_i128(runner, (t - 100).max(lo), (t + 100).min(hi))
        } else if pick < 70 {
            uniform_i128(runner, lo, hi)
        } else if pick < 85 {
            let edges = [
                lo,
                hi,
                lo.saturating_add(1).min(hi),
                hi.saturating_sub(1).max(lo),
            ];
            edges[runner.rng().random_range(0..edges.len())]
        } else {
            const POW: [u32; 8] = [7, 8, 15, 16, 31, 32, 53, 63];
            let p = POW[runner.rng().random_range(0..POW.len())];
            let sign: bool = runner.rng().random();
            let adj: i128 = runner.rng().random_range(-1..=1);
            let v = (1i128 << p) + adj;
            clamp_i(if sign { -v } else { v }, lo, hi)
        };
        Ok(IntTree::new(t, start))
    }
}

/// Binary-search shrinking of a float toward `target`, bounded in steps.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FloatTree {
    lo: f64,
    curr: f64,
    hi: f64,
    steps: u32,
}

impl FloatTree {
    fn reposition(&mut self) -> bool {
        self.steps += 1;
        if self.steps > 80 {
            return false;
        }
        // Try the integer part first: shrinking 12.375 should reach 12.0, not 12.37109375.
        let mid = self.lo + (self.hi - self.lo) / 2.0;
        let rounded = mid.trunc();
        let cand = if rounded != self.curr
            && (rounded - self.lo) * (self.hi - rounded) >= 0.0
            && rounded != self.hi
        {
            rounded
        } else {
            mid
        };
        if cand == self.curr || !cand.is_finite() {
            false
        } else {
            self.curr = cand;
            true
        }
    }
}

impl ValueTree for FloatTree {
    type Value = f64;
    fn current(&self) -> f64 {
        self.curr
    }
    fn simplify(&mut self) -> bool {
        if self.hi == self.lo {
            return false;
        }
        self.hi = self.curr;
        self.reposition()
    }
    fn complicate(&mut self) -> bool {
        if self.hi == self.lo || self.hi == self.curr {
            return false;
        }
        self.lo = self.curr;
        self.reposition()
    }
}

/// Finite floats in `lo..=hi`, biased toward short decimals, edges and wide magnitudes.
#[derive(Debug, Clone)]
pub(crate) struct FloatStrategy {
    /// Inclusive lower bound (finite).
    pub lo: f64,
    /// Inclusive upper bound (finite).
    pub hi: f64,
}

impl Strategy for FloatStrategy {
    type Tree = FloatTree;
    type Value = f64;
    fn new_tree(&self, runner: &mut TestRunner) -> NewTree<Self> {
        let (lo, hi) = (self.lo, self.hi);
        let t = clamp_f(0.0, lo, hi);
        let pick: u32 = runner.rng().random_range(0..100);
        let uniform = |runner: &mut TestRunner| {
            let u: f64 = runner.rng().random();
            // Interpolate without forming `hi - lo`, which overflows for the full f64 range.
            lo * (1.0 - u) + hi * u
        };
        let mut start = if pick < 40 {
            let k: i64 = runner.rng().random_range(-10_000..=10_000);
            let v = t.trunc() + k as f64 / 100.0;
            if v < lo || v > hi { uniform(runner) } else { v }
        } else if pick < 65 {
            uniform(runner)
        } else if pick < 80 {
            let edges = [lo, hi, lo.next_up().min(hi), hi.next_down().max(lo)];
            edges[runner.rng().random_range(0..edges.len())]
        } else {
            let e: i32 = runner.rng().random_range(-10..=300);
            let m: f64 = runner.rng().random_range(1.0..10.0);
            let sign = if runner.rng().random::<bool>() {
                -1.0
            } else {
                1.0
            };
            clamp_f(sign * m * 10f64.powi(e), lo, hi)
        };
        if !start.is_finite() {
            start = t;
        }
        Ok(FloatTree {
            lo: t,
            curr: clamp_f(start, lo, hi),
            hi: clamp_f(start, lo, hi),
            steps: 0,
        })
    }
}

/// The shortest decimal form of `x` as `(mantissa, exponent)` with `x = mantissa * 10^exponent`.
pub(crate) fn decimal(x: f64) -> Option<(i128, i32)> {
    let s = format!("{x:e}");
    let (m, e) = s.split_once('e')?;
    let e: i32 = e.parse().ok()?;
    let (neg, m) = m.strip_prefix('-').map_or((false, m), |r| (true, r));
    let (int, frac) = m.split_once('.').unwrap_or((m, ""));
    let digits = format!("{int}{frac}");
    let mant: i128 = digits.parse().ok()?;
    let exp = e - i32::try_from(frac.len()).ok()?;
    Some((if neg { -mant } else { mant }, exp))
}

/// `k * m` computed in decimal, so `7 * 0.01` is `0.07` and not `0.07000000000000001`.
pub(crate) fn mul_decimal(k: i128, m: f64) -> Option<f64> {
    let (mant, exp) = decimal(m)?;
    let p = k.checked_mul(mant)?;
    let v: f64 = format!("{p}e{exp}").parse().ok()?;
    v.is_finite().then_some(v)
}

/// A JSON number for an integer, as `i64`/`u64` when it fits, else as a float.
pub(crate) fn int_value(v: i128) -> Value {
    if let Ok(x) = i64::try_from(v) {
        Value::from(x)
    } else if let Ok(x) = u64::try_from(v) {
        Value::from(x)
    } else {
        Value::from(v as f64)
    }
}

/// A JSON number for a float (`null` never happens: callers pass finite values).
pub(crate) fn float_value(v: f64) -> Value {
    serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)
}

/// Renders a float's shortest decimal form, adjusted by `steps` units of its last decimal
/// place (`0.5` with `-1` is `0.4`; integral values step by one).
pub(crate) fn decimal_step(x: f64, steps: i128) -> Option<f64> {
    if x.fract() == 0.0 && x.abs() < 9.0e15 {
        return Some(x + steps as f64);
    }
    let (mant, exp) = decimal(x)?;
    let v: f64 = format!("{}e{exp}", mant.checked_add(steps)?).parse().ok()?;
    v.is_finite().then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals() {
        assert_eq!(decimal(0.01), Some((1, -2)));
        assert_eq!(decimal(2.5), Some((25, -1)));
        assert_eq!(decimal(-300.0), Some((-3, 2)));
        assert_eq!(mul_decimal(7, 0.01), Some(0.07));
        assert_eq!(decimal_step(0.5, -1), Some(0.4));
        assert_eq!(decimal_step(2.75, 1), Some(2.76));
        assert_eq!(decimal_step(5.0, -1), Some(4.0));
    }

    #[test]
    fn int_tree_shrinks_to_boundary() {
        let mut t = IntTree::new(0, 5_000_000);
        // The runner's loop, for the predicate "fails while > 100".
        let mut last_failure = t.current();
        let mut passed = false;
        loop {
            let moved = if passed { t.complicate() } else { t.simplify() };
            if !moved {
                break;
            }
            passed = t.current() <= 100;
            if !passed {
                last_failure = t.current();
            }
        }
        assert_eq!(last_failure, 101);
    }
}
