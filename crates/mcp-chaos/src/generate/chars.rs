//! A fast string strategy: one value tree per string (not one per character).
//!
//! proptest's `vec(char_strategy)` builds a tree per character and a union per character
//! choice; for JSON arguments full of strings that dominates generation time. [`Chars`]
//! draws the characters directly and shrinks the way `vec` + `char` trees do: first by
//! removing characters (front to back, down to the minimum length), then by moving each
//! character toward a simple one of its class (`a`, `A`, `0` or space when the class allows,
//! else the start of its range) with a binary search.
//!
//! Three strings in four are plain (ASCII letters and digits, a little punctuation), so
//! servers' business logic is reached; the fourth mixes in control, quote, bidi, combining
//! and astral characters.

use std::sync::Arc;

use proptest::prelude::*;
use proptest::strategy::{NewTree, ValueTree};
use proptest::test_runner::TestRunner;

/// Troublesome characters mixed into free-form and class strings.
const SPECIAL: &[char] = &[
    '\0', '\n', '\r', '\t', '"', '\'', '\\', '/', '<', '%', '$', '{', '.', ' ', '\u{202E}',
    '\u{FEFF}', '\u{301}', '🕴', 'é', 'ß', '中',
];

/// Which characters a string may contain.
#[derive(Debug, Clone)]
pub(crate) enum Alphabet {
    /// Any Unicode scalar value (mostly ASCII letters and digits).
    Free,
    /// Only these inclusive ranges (sorted, non-overlapping, as `regex-syntax` gives them).
    Ranges(Arc<[(char, char)]>),
}

impl Alphabet {
    fn contains(&self, c: char) -> bool {
        match self {
            Self::Free => true,
            Self::Ranges(r) => r.iter().any(|(a, b)| *a <= c && c <= *b),
        }
    }

    fn any_scalar(runner: &mut TestRunner) -> char {
        loop {
            let x: u32 = runner.rng().random_range(0..0x11_0000);
            if let Some(c) = char::from_u32(x) {
                return c;
            }
        }
    }

    fn pick(&self, runner: &mut TestRunner, spicy: bool) -> char {
        match self {
            Self::Free if !spicy => {
                let r: u32 = runner.rng().random_range(0..16);
                match r {
                    0..=10 => char::from(b'a' + runner.rng().random_range(0..26u8)),
                    11 => char::from(b'A' + runner.rng().random_range(0..26u8)),
                    12 | 13 => char::from(b'0' + runner.rng().random_range(0..10u8)),
                    14 => ' ',
                    _ => ['-', '_', '.'][runner.rng().random_range(0..3usize)],
                }
            }
            Self::Free => {
                let r: u32 = runner.rng().random_range(0..16);
                match r {
                    0..=8 => char::from(b'a' + runner.rng().random_range(0..26u8)),
                    9 => char::from(b'A' + runner.rng().random_range(0..26u8)),
                    10 => char::from(b'0' + runner.rng().random_range(0..10u8)),
                    11..=12 => char::from(runner.rng().random_range(b' '..=b'~')),
                    13..=14 => SPECIAL[runner.rng().random_range(0..SPECIAL.len())],
                    _ => Self::any_scalar(runner),
                }
            }
            Self::Ranges(r) if r.is_empty() => 'a',
            Self::Ranges(r) => {
                let roll: u32 = runner.rng().random_range(0..16);
                if spicy && roll == 0 {
                    let s = SPECIAL[runner.rng().random_range(0..SPECIAL.len())];
                    if self.contains(s) {
                        return s;
                    }
                }
                if roll < 10 || (!spicy && roll < 14) {
                    // Prefer plain ASCII letters/digits inside the class.
                    for _ in 0..4 {
                        let c = match runner.rng().random_range(0..4u32) {
                            0 | 1 => char::from(b'a' + runner.rng().random_range(0..26u8)),
                            2 => char::from(b'A' + runner.rng().random_range(0..26u8)),
                            _ => char::from(b'0' + runner.rng().random_range(0..10u8)),
                        };
                        if self.contains(c) {
                            return c;
                        }
                    }
                }
                for _ in 0..64 {
                    let (a, b) = r[runner.rng().random_range(0..r.len())];
                    let x = runner.rng().random_range(a as u32..=b as u32);
                    if let Some(c) = char::from_u32(x) {
                        return c;
                    }
                }
                r.first().map_or('a', |x| x.0)
            }
        }
    }

    /// The simple character `c` shrinks toward (same range, so everything between is valid).
    fn target(&self, c: char) -> char {
        let (lo, _) = match self {
            Self::Free => ('\0', char::MAX),
            Self::Ranges(r) => r
                .iter()
                .copied()
                .find(|(a, b)| *a <= c && c <= *b)
                .unwrap_or((c, c)),
        };
        for nice in ['a', 'A', '0', ' '] {
            if lo <= nice && nice <= c {
                return nice;
            }
        }
        if matches!(self, Self::Free) { c } else { lo }
    }
}

/// Strings of `lo..=hi` characters from an alphabet.
#[derive(Debug, Clone)]
pub(crate) struct Chars {
    /// The alphabet.
    pub alpha: Alphabet,
    /// Fewest characters.
    pub lo: usize,
    /// Most characters.
    pub hi: usize,
}

impl Strategy for Chars {
    type Tree = CharsTree;
    type Value = String;

    fn new_tree(&self, runner: &mut TestRunner) -> NewTree<Self> {
        let hi = self.hi.max(self.lo);
        let len = if hi == self.lo {
            self.lo
        } else {
            runner.rng().random_range(self.lo..=hi)
        };
        // Most strings are plain (letters, digits, a little punctuation); about one in four
        // is spicy (control, bidi, combining and astral characters mixed in).
        let spicy = runner.rng().random_range(0..4u32) == 0;
        let chars: Vec<char> = (0..len).map(|_| self.alpha.pick(runner, spicy)).collect();
        Ok(CharsTree {
            chars,
            min_len: self.lo,
            alpha: self.alpha.clone(),
            rm_idx: 0,
            ch_idx: 0,
            ch: None,
            last: Op::None,
        })
    }
}

#[derive(Debug, Clone, Copy)]
enum Op {
    None,
    Removed { at: usize, ch: char },
    Char,
}

/// Binary search state of the character being shrunk.
#[derive(Debug, Clone, Copy)]
struct Search {
    lo: u32,
    hi: u32,
}

/// The value tree of [`Chars`].
#[derive(Debug, Clone)]
pub(crate) struct CharsTree {
    chars: Vec<char>,
    min_len: usize,
    alpha: Alphabet,
    rm_idx: usize,
    ch_idx: usize,
    ch: Option<Search>,
    last: Op,
}

fn valid_char(x: u32, lo: u32) -> char {
    char::from_u32(x)
        .or_else(|| char::from_u32(0xD7FF).filter(|c| *c as u32 >= lo))
        .or_else(|| char::from_u32(lo))
        .unwrap_or('a')
}

impl ValueTree for CharsTree {
    type Value = String;

    fn current(&self) -> String {
        self.chars.iter().collect()
    }

    fn simplify(&mut self) -> bool {
        if self.rm_idx < self.chars.len() && self.chars.len() > self.min_len {
            let ch = self.chars.remove(self.rm_idx);
            self.last = Op::Removed {
                at: self.rm_idx,
                ch,
            };
            return true;
        }
        while self.ch_idx < self.chars.len() {
            let cur = self.chars[self.ch_idx];
            let s = match self.ch {
                Some(s) => s,
                None => Search {
                    lo: self.alpha.target(cur) as u32,
                    hi: cur as u32,
                },
            };
            let hi = cur as u32;
            let mid = s.lo + (hi.saturating_sub(s.lo)) / 2;
            if mid >= hi || s.lo >= hi {
                self.ch_idx += 1;
                self.ch = None;
                continue;
            }
            let c = valid_char(mid, s.lo);
            if c as u32 >= hi || !self.alpha.contains(c) {
                self.ch_idx += 1;
                self.ch = None;
                continue;
            }
            self.ch = Some(Search { lo: s.lo, hi });
            self.chars[self.ch_idx] = c;
            self.last = Op::Char;
            return true;
        }
        self.last = Op::None;
        false
    }

    fn complicate(&mut self) -> bool {
        match self.last {
            Op::None => false,
            Op::Removed { at, ch } => {
                self.chars.insert(at, ch);
                self.rm_idx = at + 1;
                self.last = Op::None;
                true
            }
            Op::Char => {
                // Move back up toward the last failing character; repeated calls keep
                // climbing until they reach it.
                let Some(s) = self.ch else {
                    self.last = Op::None;
                    return false;
                };
                let cur = self.chars[self.ch_idx] as u32;
                if cur >= s.hi {
                    self.last = Op::None;
                    return false;
                }
                let lo = cur + 1;
                let mid = lo + (s.hi - lo) / 2;
                let c = valid_char(mid, lo);
                let c = if (c as u32) < lo || (c as u32) > s.hi || !self.alpha.contains(c) {
                    valid_char(s.hi, s.hi)
                } else {
                    c
                };
                self.ch = Some(Search { lo, hi: s.hi });
                self.chars[self.ch_idx] = c;
                true
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::test_runner::{Config, TestError};

    fn shrink_to<F: Fn(&str) -> bool>(s: Chars, fails: F) -> String {
        let mut runner = TestRunner::new(Config {
            cases: 2000,
            ..Config::default()
        });
        match runner.run(&s, |v| {
            prop_assert!(!fails(&v));
            Ok(())
        }) {
            Err(TestError::Fail(_, v)) => v,
            other => panic!("expected a failure, got {other:?}"),
        }
    }

    #[test]
    fn nul_shrinks_to_a_single_nul() {
        let s = Chars {
            alpha: Alphabet::Free,
            lo: 0,
            hi: 30,
        };
        assert_eq!(shrink_to(s, |v| v.contains('\0')), "\u{0}");
    }

    #[test]
    fn respects_min_length_and_class() {
        let s = Chars {
            alpha: Alphabet::Ranges(Arc::from(vec![('x', 'z')])),
            lo: 3,
            hi: 10,
        };
        let v = shrink_to(s, |v| v.contains('z'));
        assert_eq!(v.chars().count(), 3);
        assert!(v.chars().all(|c| ('x'..='z').contains(&c)));
        assert!(v.contains('z'));
    }

    #[test]
    fn shrinks_characters_toward_a() {
        let s = Chars {
            alpha: Alphabet::Free,
            lo: 1,
            hi: 1,
        };
        // Fails for any letter after 'k': the minimal failing value is "l".
        assert_eq!(
            shrink_to(s, |v| v.chars().all(|c| ('l'..='z').contains(&c))),
            "l"
        );
    }
}
