//! The sizes of the large-request probe: which request to send next, given how the server
//! took the ones before. A pure state machine (no I/O), so that the search is unit-tested.
//!
//! Every size is the whole frame in bytes, newline included (over HTTP the body is the same
//! frame without its newline). The search has two parts:
//!
//! - **The climb**: sizes doubling from [`LARGE_FROM`] (64 KiB) to [`LARGE_TO`] (16 MiB),
//!   except that a known SDK limit `K` ([`KnownLimit`]) puts its size just over `K` in place
//!   of the doubling nearest to it: over stdio, 10 MiB + 256 KiB instead of 8 MiB. The climb
//!   stops at the first size the server does not survive.
//! - **The narrowing**, between the largest size survived and the smallest not survived:
//!   first the edge tries, then at most [`LARGE_BISECTIONS`] bisection steps, until the two
//!   are at most [`LARGE_PRECISION`] (64 KiB) apart. The edge tries, each once:
//!   - a known limit `K` itself, when the size just over it failed: if `K` survives, the
//!     limit is that one and the search ends there (the pair is `K` and `K` + its margin);
//!   - the largest size survived plus 64 KiB, when that size is a doubling (a power of two):
//!     limits sit at round sizes, so one try usually ends the search where a bisection would
//!     take four.
//!
//! The search thus ends with the pair within 64 KiB, or around a known limit, or after four
//! bisections, within 1/16 of the pair they started from. As with the plain doubling and
//! four bisections it replaces, a limit under 2 MiB is found within 64 KiB, a larger one
//! within 512 KiB (over stdio, 384 KiB above 4 MiB, where it was 256 to 512 KiB).

/// The smallest request the probe sends, in bytes (64 KiB).
pub const LARGE_FROM: usize = 64 * 1024;
/// The largest request the probe sends, in bytes (16 MiB).
pub const LARGE_TO: usize = 16 * 1024 * 1024;
/// How close the narrowing brings the largest size survived and the smallest not survived,
/// in bytes (64 KiB).
pub const LARGE_PRECISION: usize = 64 * 1024;
/// The most bisection steps after the first failure (the edge tries come on top).
pub const LARGE_BISECTIONS: usize = 4;

/// A message-size limit of a common MCP SDK: a frame of `bytes` bytes (newline included) is
/// taken, larger ones are not; the probe tries `bytes + margin` during the climb, and
/// `bytes` itself when that failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KnownLimit {
    /// The largest frame the SDK takes, in bytes, newline included.
    pub bytes: usize,
    /// How far over `bytes` the climb's try goes, in bytes: far enough that a server over
    /// the limit fails the same way (exits) rather than in a costlier way (goes silent).
    pub margin: usize,
}

impl KnownLimit {
    /// The size the climb tries in place of a doubling, in bytes.
    pub fn over(&self) -> usize {
        self.bytes + self.margin
    }
}

/// The limits of common SDKs on one message over stdio.
///
/// - The TypeScript SDK's `StdioServerTransport` buffers input in a `ReadBuffer` of at most
///   `STDIO_DEFAULT_MAX_BUFFER_SIZE` = 10 MiB (`@modelcontextprotocol/sdk`
///   `dist/esm/shared/stdio.js`, lines 2 and 12: a chunk that takes the buffered bytes past
///   10 485 760 throws); the transport then closes and stops reading stdin. Node exits (code
///   0, nothing left to run) only once more input arrives behind the overflowing chunk: at
///   10 MiB + 64 KiB server-everything and server-filesystem (SDK 1.32.2, Node 20) stay
///   alive and silent, at 10 MiB + 96 KiB and above they exit. The margin, 256 KiB, makes
///   the try a clean exit (about 0.5 s) rather than a silence (two timeouts).
/// - The Python SDK (`mcp` 2.3.0, `mcp/server/stdio.py`) reads lines through a text wrapper
///   without a limit (a 64 MiB request is answered); its HTTP transports answer 413 over
///   4 MiB (`mcp/server/transport_security.py`, line 15), as does the TypeScript SDK's
///   (`dist/esm/server/requestBody.js`, line 2): a refusal, not a failure of this probe, so
///   no HTTP limit is listed.
pub const STDIO_KNOWN_LIMITS: &[KnownLimit] = &[KnownLimit {
    bytes: 10 * 1024 * 1024,
    margin: 256 * 1024,
}];

/// Why the next size is tried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Climb,
    Edge,
    Bisection,
}

/// The search for the smallest request size a server does not survive: ask [`Ladder::next`]
/// for a size, send it, tell [`Ladder::record`] how it went, until `next` says `None`.
#[derive(Debug, Clone)]
pub struct Ladder {
    /// The climb's sizes, ascending, in bytes.
    rungs: Vec<usize>,
    known: Vec<KnownLimit>,
    /// Sizes tried, in bytes.
    tried: Vec<usize>,
    /// The largest size survived, in bytes (0: none yet).
    good: usize,
    /// The smallest size not survived, in bytes.
    bad: Option<usize>,
    bisections: usize,
}

impl Ladder {
    /// A search with the limits `known` (those between [`LARGE_FROM`] and [`LARGE_TO`]
    /// count; e.g. [`STDIO_KNOWN_LIMITS`] over stdio, none over HTTP).
    pub fn new(known: &[KnownLimit]) -> Ladder {
        let known: Vec<KnownLimit> = known
            .iter()
            .copied()
            .filter(|k| k.bytes > LARGE_FROM && k.over() < LARGE_TO)
            .collect();
        let doublings: Vec<usize> = std::iter::successors(Some(LARGE_FROM), |s| Some(s * 2))
            .take_while(|s| *s <= LARGE_TO)
            .collect();
        // Each known limit's try replaces the doubling nearest to it (by ratio), never the
        // first or the last.
        let replaced: Vec<usize> = known
            .iter()
            .filter_map(|k| {
                let over = k.over();
                doublings[1..doublings.len() - 1]
                    .iter()
                    .copied()
                    .min_by(|a, b| ratio(*a, over).total_cmp(&ratio(*b, over)))
            })
            .collect();
        let mut rungs: Vec<usize> = doublings
            .into_iter()
            .filter(|d| !replaced.contains(d))
            .chain(known.iter().map(KnownLimit::over))
            .collect();
        rungs.sort_unstable();
        rungs.dedup();
        Ladder {
            rungs,
            known,
            tried: Vec::new(),
            good: 0,
            bad: None,
            bisections: 0,
        }
    }

    /// The next size to send, in bytes, or `None` when the search is over.
    pub fn next(&self) -> Option<usize> {
        self.plan().map(|(size, _)| size)
    }

    fn plan(&self) -> Option<(usize, Kind)> {
        let Some(bad) = self.bad else {
            return self
                .rungs
                .iter()
                .copied()
                .find(|r| *r > self.good)
                .map(|r| (r, Kind::Climb));
        };
        if bad - self.good <= LARGE_PRECISION
            || self
                .known
                .iter()
                .any(|k| k.bytes == self.good && k.over() == bad)
        {
            return None;
        }
        let untried = |s: usize| s > self.good && s < bad && !self.tried.contains(&s);
        if let Some(k) = self
            .known
            .iter()
            .find(|k| k.over() == bad && untried(k.bytes))
        {
            return Some((k.bytes, Kind::Edge));
        }
        let edge = self.good + LARGE_PRECISION;
        if self.good >= LARGE_FROM && self.good.is_power_of_two() && untried(edge) {
            return Some((edge, Kind::Edge));
        }
        if self.bisections >= LARGE_BISECTIONS {
            return None;
        }
        Some((self.good + (bad - self.good) / 2, Kind::Bisection))
    }

    /// Records how the server took a request of `size` bytes (the size [`Ladder::next`]
    /// gave): `survived` when it answered and still answered the liveness probe after it.
    pub fn record(&mut self, size: usize, survived: bool) {
        if let Some((planned, Kind::Bisection)) = self.plan()
            && planned == size
        {
            self.bisections += 1;
        }
        self.tried.push(size);
        if survived {
            self.good = self.good.max(size);
        } else {
            self.bad = Some(self.bad.map_or(size, |b| b.min(size)));
        }
    }

    /// The largest size survived so far, in bytes (0 when none was).
    pub fn survived(&self) -> usize {
        self.good
    }

    /// The smallest size not survived so far, in bytes.
    pub fn failed(&self) -> Option<usize> {
        self.bad
    }
}

/// How far apart `a` and `b` are, as a ratio of at least 1.
fn ratio(a: usize, b: usize) -> f64 {
    let (lo, hi) = if a < b { (a, b) } else { (b, a) };
    hi as f64 / lo as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    const KIB: usize = 1024;
    const MIB: usize = 1024 * 1024;
    const TS: usize = 10 * MIB;

    /// Runs the search against a server that takes every size up to `limit` bytes and
    /// fails every larger one; returns the sizes tried (failed ones negated as `Err`).
    fn search(limit: usize, known: &[KnownLimit]) -> (Vec<Result<usize, usize>>, Ladder) {
        let mut ladder = Ladder::new(known);
        let mut tried = Vec::new();
        while let Some(size) = ladder.next() {
            assert!(tried.len() < 32, "the search does not end: {tried:?}");
            let survived = size <= limit;
            tried.push(if survived { Ok(size) } else { Err(size) });
            ladder.record(size, survived);
        }
        (tried, ladder)
    }

    fn doublings_to(top: usize) -> Vec<Result<usize, usize>> {
        std::iter::successors(Some(LARGE_FROM), |s| Some(s * 2))
            .take_while(|s| *s <= top)
            .map(Ok)
            .collect()
    }

    #[test]
    fn the_typescript_sdk_limit_is_found_with_one_failure() {
        let (tried, ladder) = search(TS, STDIO_KNOWN_LIMITS);
        let mut want = doublings_to(4 * MIB);
        want.extend([Err(TS + 256 * KIB), Ok(TS)]);
        assert_eq!(tried, want);
        assert_eq!(ladder.survived(), TS);
        assert_eq!(ladder.failed(), Some(TS + 256 * KIB));
    }

    #[test]
    fn a_server_without_a_limit_gets_as_many_requests_as_the_doublings() {
        let (tried, ladder) = search(usize::MAX, STDIO_KNOWN_LIMITS);
        let mut want = doublings_to(4 * MIB);
        want.extend([Ok(TS + 256 * KIB), Ok(LARGE_TO)]);
        assert_eq!(tried, want);
        assert_eq!(tried.len(), doublings_to(LARGE_TO).len());
        assert_eq!((ladder.survived(), ladder.failed()), (LARGE_TO, None));
        // Over HTTP (no known limit), the plain doublings.
        let (tried, _) = search(usize::MAX, &[]);
        assert_eq!(tried, doublings_to(LARGE_TO));
    }

    #[test]
    fn a_limit_at_a_doubling_is_found_with_two_failures() {
        // E.g. the fixture's large-frame-hang, which takes 1 MiB and not a byte more.
        let (tried, ladder) = search(MIB, STDIO_KNOWN_LIMITS);
        let mut want = doublings_to(MIB);
        want.extend([Err(2 * MIB), Err(MIB + 64 * KIB)]);
        assert_eq!(tried, want);
        assert_eq!(
            (ladder.survived(), ladder.failed()),
            (MIB, Some(MIB + 64 * KIB))
        );
    }

    #[test]
    fn a_server_that_fails_the_first_size_gets_one_request() {
        let (tried, ladder) = search(1000, STDIO_KNOWN_LIMITS);
        assert_eq!(tried, vec![Err(LARGE_FROM)]);
        assert_eq!((ladder.survived(), ladder.failed()), (0, Some(LARGE_FROM)));
    }

    #[test]
    fn a_limit_just_under_the_known_one_is_bisected() {
        let limit = 9 * MIB + 300 * KIB;
        let (tried, ladder) = search(limit, STDIO_KNOWN_LIMITS);
        let mut want = doublings_to(4 * MIB);
        want.extend([Err(TS + 256 * KIB), Err(TS), Ok(4 * MIB + 64 * KIB)]);
        assert_eq!(tried[..want.len()], want[..]);
        assert_eq!(tried.len(), want.len() + LARGE_BISECTIONS);
        let (good, bad) = (ladder.survived(), ladder.failed().unwrap());
        assert!(good <= limit && limit < bad, "{good} {limit} {bad}");
        assert!(bad - good <= (TS - 4 * MIB) / 16, "{good} {bad}");
    }

    /// Every limit from under 64 KiB to over 16 MiB is bracketed: the largest size
    /// survived is at most the limit, the smallest failed above it, and the two are as close
    /// as the doubling search with four bisections left them: 64 KiB apart below 2 MiB, at
    /// most 512 KiB apart above (or they are a known limit and its margin). No search takes
    /// more than 9 climbing and 6 narrowing requests.
    #[test]
    fn every_limit_is_bracketed_as_closely_as_before() {
        for known in [STDIO_KNOWN_LIMITS, &[]] {
            let mut limit = 1000;
            while limit < LARGE_TO + MIB {
                let (tried, ladder) = search(limit, known);
                let (good, bad) = (ladder.survived(), ladder.failed());
                assert!(good <= limit, "{limit}: {tried:?}");
                assert!(tried.len() <= 9 + 6, "{limit}: {tried:?}");
                if let Some(bad) = bad {
                    assert!(limit < bad, "{limit}: {tried:?}");
                    let around_known = known.iter().any(|k| k.bytes == good && k.over() == bad);
                    let precision = if limit < 2 * MIB { 64 * KIB } else { 512 * KIB };
                    assert!(
                        around_known || bad - good <= precision,
                        "{limit}: {good}..{bad} {tried:?}"
                    );
                } else {
                    assert!(limit >= LARGE_TO, "{limit}: {tried:?}");
                }
                limit += 37 * KIB;
            }
        }
    }

    #[test]
    fn the_sizes_tried_never_repeat() {
        for limit in [70 * KIB, 3 * MIB + 5, TS - 1, TS + 1, 13 * MIB] {
            let (tried, _) = search(limit, STDIO_KNOWN_LIMITS);
            let mut sizes: Vec<usize> = tried
                .iter()
                .map(|r| *r.as_ref().unwrap_or_else(|e| e))
                .collect();
            sizes.sort_unstable();
            sizes.dedup();
            assert_eq!(sizes.len(), tried.len(), "{limit}: {tried:?}");
        }
    }
}
