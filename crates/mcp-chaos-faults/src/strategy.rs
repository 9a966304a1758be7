//! Proptest strategies over scoped faults (feature `proptest`): draw a fault and the upstream
//! requests it hits together, and shrink a failing pair toward the simplest fault and the
//! simplest scope.
//!
//! ```
//! use mcp_chaos_faults::strategy;
//! use proptest::prelude::*;
//!
//! proptest!(ProptestConfig::with_cases(16), |(scoped in strategy::faults().paths(["/robots.txt"]))| {
//!     // Install `scoped` on the fake upstream for one tool call, call, judge:
//!     // upstream.set_scoped(&scoped); ...
//!     prop_assert!(scoped.to_string().contains(" on "));
//! });
//! ```
//!
//! # Shrinking
//!
//! A failing value shrinks its fault first, then its scope, each by trying every simpler
//! candidate in order, simplest first, and keeping the first that still fails: the result is
//! the simplest fault that fails under the drawn scope, then the simplest scope that fails
//! with that fault. Faults are ranked by [`FaultKind::SHRINK_ORDER`] (healthy, then 404 …
//! 429, 5xx, then delays and hangs, then connection and body faults); scopes by
//! [`Scope::shrink_rank`] (every request, the first only, the n-th, a path, a probability).
//! Each simpler candidate costs one run of the test, plus one run that confirms the failing
//! value when a half stops shrinking, so a shrink costs at most as many runs as there are
//! faults and scopes in the strategy, plus two (about 20 plus a handful).
//!
//! In a `proptest!` over `(arguments, fault)`, proptest shrinks the tuple element by element,
//! so a failing pair shrinks on both: the arguments first, then the fault and its scope.
//!
//! [`FaultKind::SHRINK_ORDER`]: crate::FaultKind::SHRINK_ORDER

use std::sync::Arc;

use proptest::strategy::{NewTree, Strategy, ValueTree};
use proptest::test_runner::TestRunner;
use rand::{Rng, RngExt};

use crate::fault::Fault;
use crate::scope::{Requests, Scope, ScopeKind, ScopedFault};

/// Default largest `n` of the n-th-request scopes drawn ([`FaultStrategy::max_nth`]).
pub const DEFAULT_MAX_NTH: u64 = 3;
/// Default probability of probability scopes ([`FaultStrategy::probability`]): 0.5 makes
/// every pattern of failing and healthy requests of a call equally likely.
pub const DEFAULT_PROBABILITY: f64 = 0.5;

/// The healthy upstream and the whole [`Fault::catalog`], on every scope kind but paths
/// (add some with [`FaultStrategy::paths`]).
pub fn faults() -> FaultStrategy {
    let mut profiles = vec![Fault::ok_default()];
    profiles.extend(Fault::catalog());
    faults_for(&profiles)
}

/// Exactly `profiles` (in shrink order, whatever order they are given in; duplicates
/// dropped), on every scope kind but paths. Include `Fault::ok_default()` to let a failure
/// shrink to "the upstream was healthy". An empty list makes every test using the strategy
/// fail with a reason saying so.
pub fn faults_for(profiles: &[Fault]) -> FaultStrategy {
    let mut ranked: Vec<Fault> = Vec::with_capacity(profiles.len());
    for fault in profiles {
        if !ranked.contains(fault) {
            ranked.push(fault.clone());
        }
    }
    ranked.sort_by_key(|f| f.kind().shrink_rank());
    FaultStrategy {
        faults: ranked.into(),
        paths: Vec::new(),
        kinds: ScopeKind::ALL.to_vec(),
        max_nth: DEFAULT_MAX_NTH,
        probability: DEFAULT_PROBABILITY,
    }
}

/// A strategy over [`ScopedFault`]s; build it with [`faults`] or [`faults_for`], then narrow
/// or widen it with its methods. Values are drawn as: a fault, uniformly; a scope kind,
/// uniformly among those enabled; with paths, a path half the time (uniformly among them);
/// `n` uniformly in `2..=max_nth`; a fresh seed for probability scopes (from the test
/// runner's generator, so a failing case replays from proptest's seed).
#[derive(Debug, Clone)]
#[must_use = "strategies do nothing unless used"]
pub struct FaultStrategy {
    faults: Arc<[Fault]>,
    paths: Vec<String>,
    kinds: Vec<ScopeKind>,
    max_nth: u64,
    probability: f64,
}

impl FaultStrategy {
    /// Also draws scopes narrowed to one of `paths` (exact request paths without the query,
    /// such as the paths a tool's baseline call requested): every request to it, the first,
    /// the n-th, or with a probability. A missing leading `/` is added.
    pub fn paths(mut self, paths: impl IntoIterator<Item = impl Into<String>>) -> FaultStrategy {
        for path in paths {
            let path = path.into();
            let path = if path.starts_with('/') {
                path
            } else {
                format!("/{path}")
            };
            if !self.paths.contains(&path) {
                self.paths.push(path);
            }
        }
        self
    }

    /// Draws only these scope kinds (default: all of [`ScopeKind::ALL`]).
    /// [`ScopeKind::Path`] needs [`paths`](FaultStrategy::paths); without any other kind,
    /// or with none at all, the strategy draws [`ScopeKind::Every`].
    pub fn scopes(mut self, kinds: &[ScopeKind]) -> FaultStrategy {
        self.kinds = kinds.to_vec();
        self
    }

    /// The largest `n` of n-th-request scopes (default [`DEFAULT_MAX_NTH`]); 1 or 0 draws
    /// no n-th scopes.
    pub fn max_nth(mut self, n: u64) -> FaultStrategy {
        self.max_nth = n;
        self
    }

    /// The probability of probability scopes (default [`DEFAULT_PROBABILITY`]; clamped to
    /// `[0, 1]`, NaN is 0.5).
    pub fn probability(mut self, p: f64) -> FaultStrategy {
        self.probability = if p.is_nan() { 0.5 } else { p.clamp(0.0, 1.0) };
        self
    }

    /// The faults drawn, simplest first.
    pub fn fault_list(&self) -> &[Fault] {
        &self.faults
    }

    fn requests_kinds(&self) -> Vec<ScopeKind> {
        let kinds: Vec<ScopeKind> = ScopeKind::ALL
            .into_iter()
            .filter(|k| *k != ScopeKind::Path && self.kinds.contains(k))
            .filter(|k| *k != ScopeKind::Nth || self.max_nth >= 2)
            .collect();
        if kinds.is_empty() {
            vec![ScopeKind::Every]
        } else {
            kinds
        }
    }

    fn with_paths(&self) -> bool {
        self.kinds.contains(&ScopeKind::Path) && !self.paths.is_empty()
    }

    /// Every scope this strategy can draw with probability seed `seed`, simplest first.
    fn scope_list(&self, seed: u64) -> Vec<Scope> {
        let kinds = self.requests_kinds();
        let base = |kind: ScopeKind| -> Vec<Scope> {
            match kind {
                ScopeKind::Every => vec![Scope::every()],
                ScopeKind::First => vec![Scope::first()],
                ScopeKind::Nth => (2..=self.max_nth).map(Scope::nth).collect(),
                _ => vec![Scope::probability_seeded(self.probability, seed)],
            }
        };
        let mut list: Vec<Scope> = kinds.iter().flat_map(|k| base(*k)).collect();
        if self.with_paths() {
            for kind in &kinds {
                for path in &self.paths {
                    list.extend(base(*kind).into_iter().map(|s| s.on_path(path.clone())));
                }
            }
        }
        // Stable: within a rank, smaller n first, then paths in the order given.
        list.sort_by_key(|s| {
            let n = match s.requests() {
                Requests::Nth(n) => n,
                _ => 0,
            };
            (s.shrink_rank(), n)
        });
        list
    }

    /// Draws one scope from `list` (as [`scope_list`](Self::scope_list) built it).
    fn draw_scope(&self, rng: &mut impl Rng, list: &[Scope], seed: u64) -> usize {
        let kinds = self.requests_kinds();
        let kind = kinds[rng.random_range(0..kinds.len())];
        let mut scope = match kind {
            ScopeKind::Every => Scope::every(),
            ScopeKind::First => Scope::first(),
            ScopeKind::Nth => Scope::nth(rng.random_range(2..=self.max_nth)),
            _ => Scope::probability_seeded(self.probability, seed),
        };
        if self.with_paths() && rng.random_bool(0.5) {
            scope = scope.on_path(self.paths[rng.random_range(0..self.paths.len())].clone());
        }
        list.iter().position(|s| *s == scope).unwrap_or(0)
    }
}

impl Strategy for FaultStrategy {
    type Tree = FaultTree;
    type Value = ScopedFault;

    fn new_tree(&self, runner: &mut TestRunner) -> NewTree<Self> {
        if self.faults.is_empty() {
            return Err("mcp_chaos_faults::strategy::faults_for was given no faults".into());
        }
        let rng = runner.rng();
        let seed: u64 = rng.random();
        let scopes: Arc<[Scope]> = self.scope_list(seed).into();
        let fault = rng.random_range(0..self.faults.len());
        let scope = self.draw_scope(rng, &scopes, seed);
        Ok(FaultTree {
            faults: Arc::clone(&self.faults),
            scopes,
            fault: Scan::new(fault),
            scope: Scan::new(scope),
            part: Part::Fault,
            last: None,
        })
    }
}

/// Which half of a [`FaultTree`] is being shrunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Fault,
    Scope,
    Done,
}

/// A linear shrink over a ranked list: tries each index below the known failing one, from
/// 0 up, and keeps the first that fails.
#[derive(Debug, Clone, Copy)]
struct Scan {
    /// The index the current value uses.
    current: usize,
    /// The simplest index known to fail.
    failing: usize,
    /// The next simpler index to try.
    next: usize,
}

impl Scan {
    fn new(index: usize) -> Scan {
        Scan {
            current: index,
            failing: index,
            next: 0,
        }
    }

    /// The current value failed (or is the drawn one): try the simplest untried index.
    fn simplify(&mut self) -> bool {
        self.failing = self.current;
        self.advance()
    }

    /// The current value passed: try the next index, or go back to the failing one (so
    /// that proptest runs it again and moves on).
    fn complicate(&mut self) -> bool {
        if self.current == self.failing {
            return false;
        }
        if !self.advance() {
            self.current = self.failing;
        }
        true
    }

    fn advance(&mut self) -> bool {
        if self.next < self.failing {
            self.current = self.next;
            self.next += 1;
            true
        } else {
            false
        }
    }
}

/// The value tree of a [`FaultStrategy`]: the drawn fault and scope, and their shrinking
/// state (see the [module docs](self)).
#[derive(Debug, Clone)]
pub struct FaultTree {
    faults: Arc<[Fault]>,
    scopes: Arc<[Scope]>,
    fault: Scan,
    scope: Scan,
    part: Part,
    /// The part the last successful `simplify` changed.
    last: Option<Part>,
}

impl ValueTree for FaultTree {
    type Value = ScopedFault;

    fn current(&self) -> ScopedFault {
        ScopedFault::new(
            self.faults[self.fault.current].clone(),
            self.scopes[self.scope.current].clone(),
        )
    }

    fn simplify(&mut self) -> bool {
        loop {
            let moved = match self.part {
                Part::Fault => self.fault.simplify(),
                Part::Scope => self.scope.simplify(),
                Part::Done => return false,
            };
            if moved {
                self.last = Some(self.part);
                return true;
            }
            self.part = match self.part {
                Part::Fault => Part::Scope,
                _ => Part::Done,
            };
        }
    }

    fn complicate(&mut self) -> bool {
        match self.last {
            Some(Part::Fault) => self.fault.complicate(),
            Some(Part::Scope) => self.scope.complicate(),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::{Config, TestError, TestRunner};

    use super::*;
    use crate::FaultKind;

    /// Runs `test` over `strategy` and returns the minimal failing value proptest reports.
    fn minimal(
        strategy: FaultStrategy,
        test: impl Fn(&ScopedFault) -> bool,
    ) -> Option<ScopedFault> {
        let mut runner = TestRunner::new(Config {
            cases: 256,
            failure_persistence: None,
            ..Config::default()
        });
        match runner.run(&strategy, |v| {
            proptest::prop_assert!(test(&v));
            Ok(())
        }) {
            Err(TestError::Fail(_, value)) => Some(value),
            _ => None,
        }
    }

    #[test]
    fn faults_are_ranked_and_deduplicated() {
        let s = faults_for(&[
            Fault::Reset,
            Fault::Unavailable,
            Fault::NotFound,
            Fault::Reset,
        ]);
        assert_eq!(
            s.fault_list(),
            [Fault::NotFound, Fault::Unavailable, Fault::Reset]
        );
        let all = faults();
        assert_eq!(all.fault_list()[0], Fault::ok_default());
        assert_eq!(all.fault_list().len(), Fault::catalog().len());
        let ranks: Vec<usize> = all
            .fault_list()
            .iter()
            .map(|f| f.kind().shrink_rank())
            .collect();
        assert!(ranks.windows(2).all(|w| w[0] <= w[1]), "{ranks:?}");
    }

    #[test]
    fn the_scope_list_is_in_shrink_order() {
        let s = faults().paths(["/a", "b"]).max_nth(3);
        let list: Vec<String> = s.scope_list(5).iter().map(ToString::to_string).collect();
        assert_eq!(
            list,
            [
                "every request",
                "the first request only",
                "the second request only",
                "the third request only",
                "every request to /a",
                "every request to /b",
                "the first request to /a only",
                "the first request to /b only",
                "the second request to /a only",
                "the second request to /b only",
                "the third request to /a only",
                "the third request to /b only",
                "each request with probability 0.5 (seed 5)",
                "each request to /a with probability 0.5 (seed 5)",
                "each request to /b with probability 0.5 (seed 5)",
            ]
        );
        let only_first = faults().scopes(&[ScopeKind::First]).scope_list(0);
        assert_eq!(only_first, [Scope::first()]);
        assert_eq!(faults().scopes(&[]).scope_list(0), [Scope::every()]);
        assert_eq!(
            faults()
                .scopes(&[ScopeKind::Path])
                .paths(["/x"])
                .scope_list(0),
            [Scope::every(), Scope::every().on_path("/x")]
        );
    }

    #[test]
    fn every_kind_is_drawn_and_generation_is_deterministic_per_seed() {
        let strategy = faults().paths(["/robots.txt"]);
        let draw = |seed: u8| {
            let mut runner = TestRunner::new_with_rng(
                Config::default(),
                proptest::test_runner::TestRng::from_seed(
                    proptest::test_runner::RngAlgorithm::ChaCha,
                    &[seed; 32],
                ),
            );
            (0..400)
                .map(|_| strategy.new_tree(&mut runner).expect("a tree").current())
                .collect::<Vec<_>>()
        };
        let values = draw(1);
        assert_eq!(values, draw(1));
        assert_ne!(values, draw(2));
        for rank in 0..=7u8 {
            assert!(
                values.iter().any(|v| v.scope().shrink_rank() == rank),
                "scope rank {rank} never drawn"
            );
        }
        for fault in strategy.fault_list() {
            assert!(
                values.iter().any(|v| v.fault() == fault),
                "{fault} never drawn"
            );
        }
    }

    #[test]
    fn a_failure_shrinks_to_the_simplest_fault_then_the_simplest_scope() {
        // Fails for any 5xx on a scope that spares the first request.
        let spares_first = |v: &ScopedFault| {
            let status = v.fault().http_status().unwrap_or(0);
            let spared =
                matches!(v.scope().requests(), Requests::Nth(_)) || v.scope().path().is_some();
            !(status >= 500 && spared)
        };
        let found = minimal(faults().paths(["/data"]), spares_first).expect("a failure");
        assert_eq!(found, Fault::ServerError.scoped(Scope::nth(2)));

        // Fails on any failure of the first request only (the fixture's lookup flaw).
        let first_only =
            |v: &ScopedFault| !(v.fault().is_failure() && v.scope().requests() == Requests::First);
        let found = minimal(faults().paths(["/data"]), first_only).expect("a failure");
        assert_eq!(found, Fault::NotFound.scoped(Scope::first()));

        // A failure that does not depend on the fault shrinks to the healthy upstream.
        assert_eq!(minimal(faults(), |_| false), Some(ScopedFault::healthy()));
        assert_eq!(minimal(faults(), |_| true), None);
    }

    #[test]
    fn hangs_shrink_to_the_first_timing_fault_that_still_fails() {
        // Fails when the upstream never answers within the tool's deadline.
        let slow = |v: &ScopedFault| !matches!(v.fault().kind(), FaultKind::Hang);
        let found = minimal(faults_for(&Fault::catalog()), slow).expect("a failure");
        assert_eq!(found, ScopedFault::every(Fault::Hang));
    }

    #[test]
    fn shrinking_runs_each_simpler_candidate_at_most_once() {
        let strategy = faults();
        let mut runner = TestRunner::deterministic();
        let mut tree = strategy.new_tree(&mut runner).expect("a tree");
        while tree.current().fault().kind() != FaultKind::HugeBody
            || tree.current().scope().shrink_rank() != 6
        {
            tree = strategy.new_tree(&mut runner).expect("a tree");
        }
        // Every value fails: each simplify step is taken, ending at the simplest.
        let mut steps = 0;
        while tree.simplify() {
            steps += 1;
        }
        assert_eq!(tree.current(), ScopedFault::healthy());
        assert_eq!(
            steps, 2,
            "one step to the healthy fault, one to every request"
        );
        assert!(!tree.complicate());
    }

    #[test]
    fn an_empty_list_is_a_reason_not_a_panic() {
        let mut runner = TestRunner::deterministic();
        let err = faults_for(&[])
            .new_tree(&mut runner)
            .expect_err("no faults");
        assert!(err.to_string().contains("no faults"), "{err}");
    }
}
