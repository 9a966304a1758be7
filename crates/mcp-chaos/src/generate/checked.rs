//! A bounded generate-and-filter strategy that never spins and never panics.
//!
//! proptest's `prop_filter` counts rejections against a global limit and its value tree
//! panics when shrinking cannot get back to an acceptable value. [`Checked`] instead retries
//! locally a bounded number of times, and its tree only ever reports values that passed the
//! predicate (shrinking skips over rejected candidates and stops when stuck).

use std::fmt;
use std::sync::Arc;

use proptest::strategy::{BoxedStrategy, NewTree, Strategy, ValueTree};
use proptest::test_runner::TestRunner;

/// A predicate over generated values.
pub(crate) type Pred<T> = Arc<dyn Fn(&T) -> bool + Send + Sync>;

/// What to do when the budget is exhausted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OnExhaust {
    /// Return the last candidate anyway (an enclosing check will reject and retry).
    Soft,
    /// Fail generation with an error (`new_tree` returns `Err`).
    Hard,
}

/// `inner` filtered by `pred`, at most `budget` candidates per value.
#[derive(Clone)]
pub(crate) struct Checked<T: Clone + fmt::Debug + 'static> {
    inner: BoxedStrategy<T>,
    pred: Pred<T>,
    budget: u32,
    on_exhaust: OnExhaust,
    what: Arc<str>,
}

impl<T: Clone + fmt::Debug + 'static> fmt::Debug for Checked<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Checked")
            .field("what", &self.what)
            .field("budget", &self.budget)
            .field("on_exhaust", &self.on_exhaust)
            .finish_non_exhaustive()
    }
}

impl<T: Clone + fmt::Debug + 'static> Checked<T> {
    pub(crate) fn new(
        inner: BoxedStrategy<T>,
        pred: Pred<T>,
        budget: u32,
        on_exhaust: OnExhaust,
        what: impl Into<Arc<str>>,
    ) -> Self {
        Self {
            inner,
            pred,
            budget: budget.max(1),
            on_exhaust,
            what: what.into(),
        }
    }
}

/// Shrinking steps tried to get past rejected candidates before a tree gives up.
const SHRINK_BUDGET: u32 = 64;

/// The value tree of [`Checked`].
pub(crate) struct CheckedTree<T: Clone + fmt::Debug + 'static> {
    inner: Box<dyn ValueTree<Value = T>>,
    cur: T,
    pred: Pred<T>,
    stuck: bool,
}

impl<T: Clone + fmt::Debug + 'static> fmt::Debug for CheckedTree<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CheckedTree")
            .field("cur", &self.cur)
            .field("stuck", &self.stuck)
            .finish_non_exhaustive()
    }
}

impl<T: Clone + fmt::Debug + 'static> Strategy for Checked<T> {
    type Tree = CheckedTree<T>;
    type Value = T;

    fn new_tree(&self, runner: &mut TestRunner) -> NewTree<Self> {
        let mut last = None;
        for _ in 0..self.budget {
            let tree = self.inner.new_tree(runner)?;
            let v = tree.current();
            if (self.pred)(&v) {
                return Ok(CheckedTree {
                    inner: tree,
                    cur: v,
                    pred: Arc::clone(&self.pred),
                    stuck: false,
                });
            }
            last = Some((tree, v));
        }
        match (self.on_exhaust, last) {
            (OnExhaust::Soft, Some((tree, v))) => Ok(CheckedTree {
                inner: tree,
                cur: v,
                pred: Arc::clone(&self.pred),
                // An unchecked value must not be shrunk into other unchecked values.
                stuck: true,
            }),
            _ => Err(format!(
                "{}: no candidate passed the check in {} tries",
                self.what, self.budget
            )
            .into()),
        }
    }
}

impl<T: Clone + fmt::Debug + 'static> CheckedTree<T> {
    /// Moves `inner` (by complicating) until its value passes; keeps `cur` at the last
    /// accepted value either way.
    fn settle(&mut self) -> bool {
        for _ in 0..SHRINK_BUDGET {
            let v = self.inner.current();
            if (self.pred)(&v) {
                self.cur = v;
                return true;
            }
            if !self.inner.complicate() {
                break;
            }
        }
        self.stuck = true;
        false
    }
}

impl<T: Clone + fmt::Debug + 'static> ValueTree for CheckedTree<T> {
    type Value = T;

    fn current(&self) -> T {
        self.cur.clone()
    }

    fn simplify(&mut self) -> bool {
        if self.stuck || !self.inner.simplify() {
            return false;
        }
        self.settle()
    }

    fn complicate(&mut self) -> bool {
        if self.stuck || !self.inner.complicate() {
            return false;
        }
        self.settle()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn impossible_filter_errors_instead_of_spinning() {
        let s = Checked::new(
            (0u32..10).boxed(),
            Arc::new(|v: &u32| *v > 100),
            50,
            OnExhaust::Hard,
            "test",
        );
        let mut runner = TestRunner::deterministic();
        assert!(s.new_tree(&mut runner).is_err());
    }

    #[test]
    fn shrinks_within_the_filter() {
        let s = Checked::new(
            (0u32..10_000).boxed(),
            Arc::new(|v: &u32| v % 2 == 1),
            50,
            OnExhaust::Hard,
            "odd",
        );
        let mut runner = TestRunner::deterministic();
        let result = runner.run(&s, |v| {
            prop_assert!(v < 1000);
            Ok(())
        });
        match result {
            Err(proptest::test_runner::TestError::Fail(_, v)) => {
                // Never a rejected (even) value, and still a failing one.
                assert_eq!(v % 2, 1);
                assert!(v >= 1000, "{v}");
            }
            other => panic!("{other:?}"),
        }
    }
}
