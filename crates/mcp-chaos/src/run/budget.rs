//! The run-wide budget (`--budget-ms`): it bounds the time to a verdict. No phase, probe or
//! case starts once it is spent (the one in flight finishes within its own deadline); the
//! generated phase gets at most [`GENERATED_SHARE`] of what is left when it starts (within
//! `--generated-budget-ms`), so that the later phases still run. What the budget cut is listed
//! in [`super::Summary::budget_cut`], one line each, and printed under the summary line.

use std::time::Duration;

use super::Campaign;

/// The part of the run's budget left when the generated phase starts that the phase may use,
/// in percent; the rest is kept for the fault phase, the features phase, transport chaos and
/// the version probe.
pub const GENERATED_SHARE: u32 = 75;

impl Campaign<'_> {
    /// What is left of the run's budget, if it has one.
    pub(super) fn budget_left(&self) -> Option<Duration> {
        self.config
            .budget
            .map(|b| b.saturating_sub(self.started.elapsed()))
    }

    /// Whether the run's budget is spent.
    pub(super) fn run_budget_spent(&self) -> bool {
        self.budget_left().is_some_and(|left| left.is_zero())
    }

    /// When the run's budget is spent: records that `phase` was cut after `done` of its
    /// `total` items (not run at all when `done` is 0; cut short, without counts, when
    /// `total` is 0) and returns true.
    pub(super) fn cut_by_budget(&mut self, phase: &str, done: usize, total: usize) -> bool {
        if !self.run_budget_spent() {
            return false;
        }
        let line = if total == 0 {
            format!("{phase}: cut short")
        } else if done == 0 {
            format!("{phase}: not run")
        } else {
            format!("{phase}: {done} of {total} run")
        };
        if !self.summary.budget_cut.contains(&line) {
            self.summary.budget_cut.push(line);
        }
        true
    }

    /// The generated phase's budget: `--generated-budget-ms`, or [`GENERATED_SHARE`] of
    /// what is left of the run's budget when that is less; with whether the run's budget is
    /// the bound.
    pub(super) fn generated_budget_now(&self) -> (Duration, bool) {
        let phase = self.config.generated_budget;
        match self.budget_left() {
            Some(left) if left * GENERATED_SHARE / 100 < phase => {
                (left * GENERATED_SHARE / 100, true)
            }
            _ => (phase, false),
        }
    }
}
