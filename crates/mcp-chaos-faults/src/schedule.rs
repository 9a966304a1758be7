//! Schedules: *when* a rule's fault is served instead of its healthy response.

use std::time::Duration;

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

/// Decides, for each request a [`Rule`](crate::Rule) matches, whether that request gets the
/// rule's fault or the rule's healthy response ([`Rule::otherwise`](crate::Rule::otherwise)).
///
/// Counting schedules count only the requests their own rule matched, starting at 1.
/// Time-based schedules measure from the moment the server started (the journal's `t = 0`)
/// or, after [`FakeUpstream::set_rules`](crate::FakeUpstream::set_rules), from the moment the
/// rules were installed. Random schedules are reproducible: the same seed gives the same
/// sequence of decisions.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Schedule {
    /// Every matched request gets the fault.
    Always,
    /// The first `n` matched requests get the fault, the rest the healthy response.
    FirstN {
        /// How many requests fail, counted from the first.
        n: u64,
    },
    /// Only request number `n` (1-based) gets the fault; every other request gets the healthy
    /// response. `Nth { n: 1 }` is the same as `FirstN { n: 1 }`.
    Nth {
        /// The position of the one failing request, at least 1.
        n: u64,
    },
    /// Requests number `n`, `2n`, `3n`, … get the fault (1-based).
    EveryNth {
        /// The period, at least 1.
        n: u64,
    },
    /// Each matched request independently gets the fault with probability `p`, drawn from
    /// a seeded generator (never the thread RNG).
    Probability {
        /// Probability of the fault per request, in `[0, 1]`.
        p: f64,
        /// Seed of the generator; `None` uses the server's seed mixed with the rule's
        /// position, so the whole plan replays from one seed.
        seed: Option<u64>,
    },
    /// Healthy until `after`, then failing for `duration` (`None`: for ever), then healthy
    /// again.
    Outage {
        /// Healthy time before the outage starts.
        after: Duration,
        /// Length of the outage; `None` means it never ends.
        duration: Option<Duration>,
    },
    /// At most `limit` healthy requests per fixed `window`; further requests in the same
    /// window get the fault. When the fault is [`Fault::RateLimited`](crate::Fault), its
    /// `Retry-After` is replaced with the whole seconds left in the window (at least 1).
    Quota {
        /// Healthy requests allowed per window.
        limit: u64,
        /// Window length; windows are back to back from `t = 0`.
        window: Duration,
    },
}

impl Schedule {
    /// Every matched request gets the fault.
    pub fn always() -> Schedule {
        Schedule::Always
    }

    /// The first `n` matched requests get the fault; afterwards the rule's healthy
    /// response ([`Rule::otherwise`](crate::Rule::otherwise)) is served.
    pub fn first_n(n: u64) -> Schedule {
        Schedule::FirstN { n }
    }

    /// Only the first matched request gets the fault (the same as `first_n(1)`): a failing
    /// preflight, metadata or `robots.txt` request before the real one.
    pub fn first() -> Schedule {
        Schedule::FirstN { n: 1 }
    }

    /// Only the `n`-th matched request (1-based; `n` of 0 is treated as 1) gets the fault; the
    /// requests before and after it get the healthy response. Unlike
    /// [`every_nth`](Schedule::every_nth), it fires once.
    pub fn nth(n: u64) -> Schedule {
        Schedule::Nth { n: n.max(1) }
    }

    /// Every `n`-th matched request gets the fault (`n` of 0 is treated as 1).
    pub fn every_nth(n: u64) -> Schedule {
        Schedule::EveryNth { n: n.max(1) }
    }

    /// Fault with probability `p` (clamped to `[0, 1]`, NaN is 0) per request, from a
    /// generator seeded with the server's seed.
    pub fn probability(p: f64) -> Schedule {
        Schedule::Probability {
            p: clamp_probability(p),
            seed: None,
        }
    }

    /// Like [`probability`](Schedule::probability) but with an explicit seed.
    pub fn probability_seeded(p: f64, seed: u64) -> Schedule {
        Schedule::Probability {
            p: clamp_probability(p),
            seed: Some(seed),
        }
    }

    /// Healthy for `after`, then failing for `duration`, then healthy again.
    pub fn outage(after: Duration, duration: Duration) -> Schedule {
        Schedule::Outage {
            after,
            duration: Some(duration),
        }
    }

    /// Healthy for `after`, then failing for ever.
    pub fn outage_forever(after: Duration) -> Schedule {
        Schedule::Outage {
            after,
            duration: None,
        }
    }

    /// `limit` healthy requests per `window` (a zero window is treated as 1 ms), then the
    /// fault — normally [`Fault::rate_limit`](crate::Fault::rate_limit), whose
    /// `Retry-After` then counts down to the next window.
    pub fn quota(limit: u64, window: Duration) -> Schedule {
        Schedule::Quota {
            limit,
            window: window.max(Duration::from_millis(1)),
        }
    }
}

fn clamp_probability(p: f64) -> f64 {
    if p.is_nan() { 0.0 } else { p.clamp(0.0, 1.0) }
}

/// What a schedule decided for one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Firing {
    /// Serve the healthy response.
    Healthy,
    /// Serve the fault.
    Fault,
    /// Serve the fault; if it is a 429, use this `Retry-After` (seconds).
    FaultRetryAfter(u64),
}

/// Mixes a seed with a stream number (SplitMix64 finaliser), so rules get independent
/// but reproducible generators.
pub(crate) fn mix_seed(seed: u64, stream: u64) -> u64 {
    let mut z = seed ^ stream.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The mutable state of a schedule inside a running plan.
#[derive(Debug)]
pub(crate) struct ScheduleState {
    schedule: Schedule,
    matched: u64,
    rng: Option<StdRng>,
    quota_window: u64,
    quota_used: u64,
}

impl ScheduleState {
    pub(crate) fn new(schedule: Schedule, plan_seed: u64, rule_index: usize) -> ScheduleState {
        let rng = match &schedule {
            Schedule::Probability { seed, .. } => {
                let seed = seed.unwrap_or_else(|| mix_seed(plan_seed, rule_index as u64));
                Some(StdRng::seed_from_u64(seed))
            }
            _ => None,
        };
        ScheduleState {
            schedule,
            matched: 0,
            rng,
            quota_window: 0,
            quota_used: 0,
        }
    }

    /// How many requests this schedule has decided on (the 1-based position of the last).
    pub(crate) fn matched(&self) -> u64 {
        self.matched
    }

    /// Decides for the next matched request, `elapsed` after the plan's `t = 0`.
    pub(crate) fn fire(&mut self, elapsed: Duration) -> Firing {
        self.matched = self.matched.saturating_add(1);
        let n = self.matched;
        let fault = |b: bool| if b { Firing::Fault } else { Firing::Healthy };
        match &self.schedule {
            Schedule::Always => Firing::Fault,
            Schedule::FirstN { n: first } => fault(n <= *first),
            Schedule::Nth { n: nth } => fault(n == (*nth).max(1)),
            Schedule::EveryNth { n: every } => fault(n.is_multiple_of((*every).max(1))),
            Schedule::Probability { p, .. } => {
                let p = clamp_probability(*p);
                match &mut self.rng {
                    // Always draw, so the sequence of draws does not depend on `p`.
                    Some(rng) => fault(rng.random::<f64>() < p),
                    None => fault(p >= 1.0),
                }
            }
            Schedule::Outage { after, duration } => {
                let started = elapsed >= *after;
                let ended = duration.is_some_and(|d| elapsed >= after.saturating_add(d));
                fault(started && !ended)
            }
            Schedule::Quota { limit, window } => {
                let window_ms = window.as_millis().max(1);
                let now_ms = elapsed.as_millis();
                let index = u64::try_from(now_ms / window_ms).unwrap_or(u64::MAX);
                if index != self.quota_window {
                    self.quota_window = index;
                    self.quota_used = 0;
                }
                if self.quota_used < *limit {
                    self.quota_used += 1;
                    Firing::Healthy
                } else {
                    let window_end_ms = (u128::from(index) + 1) * window_ms;
                    let left_ms = window_end_ms.saturating_sub(now_ms);
                    let secs = left_ms.div_ceil(1000).max(1);
                    Firing::FaultRetryAfter(u64::try_from(secs).unwrap_or(u64::MAX))
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(schedule: Schedule, times: &[u64]) -> Vec<Firing> {
        let mut st = ScheduleState::new(schedule, 1, 0);
        times
            .iter()
            .map(|ms| st.fire(Duration::from_millis(*ms)))
            .collect()
    }

    use Firing::{Fault as F, Healthy as H};

    #[test]
    fn counting_schedules() {
        assert_eq!(run(Schedule::always(), &[0, 0]), [F, F]);
        assert_eq!(run(Schedule::first_n(2), &[0; 4]), [F, F, H, H]);
        assert_eq!(run(Schedule::every_nth(3), &[0; 6]), [H, H, F, H, H, F]);
        assert_eq!(run(Schedule::every_nth(0), &[0; 2]), [F, F]);
        assert_eq!(run(Schedule::first(), &[0; 3]), [F, H, H]);
        assert_eq!(run(Schedule::nth(2), &[0; 5]), [H, F, H, H, H]);
        assert_eq!(run(Schedule::nth(0), &[0; 2]), [F, H]);
        assert_eq!(run(Schedule::Nth { n: 0 }, &[0; 2]), [F, H]);
    }

    #[test]
    fn outage_window() {
        let s = Schedule::outage(Duration::from_millis(100), Duration::from_millis(50));
        assert_eq!(run(s, &[0, 99, 100, 149, 150, 1000]), [H, H, F, F, H, H]);
        let s = Schedule::outage_forever(Duration::from_millis(10));
        assert_eq!(run(s, &[0, 10, 100_000]), [H, F, F]);
    }

    #[test]
    fn quota_counts_per_fixed_window() {
        let s = Schedule::quota(2, Duration::from_secs(10));
        assert_eq!(
            run(s, &[0, 1, 2, 9_500, 10_000, 10_001, 10_002]),
            [
                H,
                H,
                Firing::FaultRetryAfter(10),
                Firing::FaultRetryAfter(1),
                H,
                H,
                Firing::FaultRetryAfter(10)
            ]
        );
    }

    #[test]
    fn probability_is_reproducible_per_seed() {
        let seq = |seed| run(Schedule::probability_seeded(0.5, seed), &[0; 64]);
        assert_eq!(seq(7), seq(7));
        assert_ne!(seq(7), seq(8));
        assert!(seq(7).contains(&F) && seq(7).contains(&H));
        assert!(
            run(Schedule::probability(1.0), &[0; 8])
                .iter()
                .all(|f| *f == F)
        );
        assert!(
            run(Schedule::probability(0.0), &[0; 8])
                .iter()
                .all(|f| *f == H)
        );
        assert_eq!(Schedule::probability(f64::NAN), Schedule::probability(0.0));
    }

    #[test]
    fn server_seed_is_mixed_per_rule() {
        let mut a = ScheduleState::new(Schedule::probability(0.5), 42, 0);
        let mut b = ScheduleState::new(Schedule::probability(0.5), 42, 1);
        let sa: Vec<_> = (0..64).map(|_| a.fire(Duration::ZERO)).collect();
        let sb: Vec<_> = (0..64).map(|_| b.fire(Duration::ZERO)).collect();
        assert_ne!(sa, sb);
    }
}
