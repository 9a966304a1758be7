//! Arbitrary JSON for unconstrained positions (`{}`/`true` schemas, undeclared properties,
//! untyped array items), drawn directly from the RNG.
//!
//! A union-based recursive strategy costs a forked RNG per untaken branch; this one draws a
//! small value in one pass and shrinks greedily: to `null`, then by dropping members,
//! emptying strings and zeroing numbers, keeping each simplification that still fails.

use proptest::prelude::*;
use proptest::strategy::{NewTree, ValueTree};
use proptest::test_runner::TestRunner;
use serde_json::{Map, Value};

use super::chars::{Alphabet, Chars};
use super::num::float_value;

/// Arbitrary JSON values nested at most `depth` levels.
#[derive(Debug, Clone)]
pub(crate) struct AnyJson {
    /// Maximum container nesting.
    pub depth: u32,
}

fn short_string(runner: &mut TestRunner, max: usize) -> String {
    let s = Chars {
        alpha: Alphabet::Free,
        lo: 0,
        hi: max,
    };
    s.new_tree(runner).map(|t| t.current()).unwrap_or_default()
}

fn key(runner: &mut TestRunner) -> String {
    let n = runner.rng().random_range(1..=6usize);
    (0..n)
        .map(|_| char::from(b'a' + runner.rng().random_range(0..26u8)))
        .collect()
}

fn draw(runner: &mut TestRunner, depth: u32) -> Value {
    let top = if depth == 0 { 5 } else { 7 };
    match runner.rng().random_range(0..top) {
        0 => Value::Null,
        1 => Value::Bool(runner.rng().random()),
        2 => Value::from(runner.rng().random_range(-1000i64..=1000)),
        3 => float_value(f64::from(runner.rng().random_range(-100_000i32..=100_000)) / 100.0),
        4 => Value::String(short_string(runner, 12)),
        5 => {
            let n = runner.rng().random_range(0..=3usize);
            Value::Array((0..n).map(|_| draw(runner, depth - 1)).collect())
        }
        _ => {
            let n = runner.rng().random_range(0..=3usize);
            let mut m = Map::new();
            for _ in 0..n {
                let k = key(runner);
                let v = draw(runner, depth - 1);
                m.insert(k, v);
            }
            Value::Object(m)
        }
    }
}

impl Strategy for AnyJson {
    type Tree = AnyTree;
    type Value = Value;
    fn new_tree(&self, runner: &mut TestRunner) -> NewTree<Self> {
        let v = draw(runner, self.depth);
        Ok(AnyTree {
            best: v.clone(),
            cur: v,
            step: 0,
            pending: false,
        })
    }
}

/// The value tree of [`AnyJson`]: greedy candidate-based shrinking.
#[derive(Debug, Clone)]
pub(crate) struct AnyTree {
    /// The simplest value known to fail.
    best: Value,
    /// The value under test.
    cur: Value,
    /// Next candidate index for `best`.
    step: usize,
    /// `cur` is a candidate not yet known to pass (no `complicate` since it was offered).
    pending: bool,
}

/// The `k`-th simpler variant of `v`, if any.
fn candidate(v: &Value, k: usize) -> Option<Value> {
    if k == 0 {
        return (!v.is_null()).then_some(Value::Null);
    }
    let k = k - 1;
    match v {
        Value::Array(a) => (k < a.len()).then(|| {
            let mut b = a.clone();
            b.remove(k);
            Value::Array(b)
        }),
        Value::Object(m) => m.keys().nth(k).map(|key| {
            let mut n = m.clone();
            n.shift_remove(key);
            Value::Object(n)
        }),
        Value::String(s) => (k == 0 && !s.is_empty()).then(|| Value::String(String::new())),
        Value::Number(n) => (k == 0 && n.as_f64() != Some(0.0)).then(|| Value::from(0)),
        Value::Bool(true) => (k == 0).then_some(Value::Bool(false)),
        _ => None,
    }
}

impl ValueTree for AnyTree {
    type Value = Value;

    fn current(&self) -> Value {
        self.cur.clone()
    }

    fn simplify(&mut self) -> bool {
        if self.pending {
            // The last candidate still failed: adopt it and start over from it.
            self.best = self.cur.clone();
            self.step = 0;
        }
        loop {
            let k = self.step;
            self.step += 1;
            match candidate(&self.best, k) {
                Some(c) => {
                    self.cur = c;
                    self.pending = true;
                    return true;
                }
                // Candidates are numbered 0 (null), then 1..: a gap after 0 ends them.
                None if k == 0 => {}
                None => break,
            }
        }
        self.pending = false;
        self.cur = self.best.clone();
        false
    }

    fn complicate(&mut self) -> bool {
        if !self.pending {
            return false;
        }
        self.pending = false;
        self.cur = self.best.clone();
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::test_runner::{Config, TestError};

    #[test]
    fn shrinks_to_null_or_minimal_container() {
        let mut runner = TestRunner::new(Config::default());
        let r = runner.run(&AnyJson { depth: 2 }, |v| {
            prop_assert!(!v.is_array());
            Ok(())
        });
        match r {
            Err(TestError::Fail(_, v)) => assert_eq!(v, Value::Array(Vec::new())),
            other => panic!("{other:?}"),
        }
    }
}
