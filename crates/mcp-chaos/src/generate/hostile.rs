//! Hostile strings: inputs that break naive servers (path traversal, injection
//! metacharacters, control and bidi characters, huge sizes, numbers as strings).
//!
//! None of them names a host, so they pass the loopback rule.

use std::sync::LazyLock;

use proptest::prelude::*;
use proptest::sample::select;

/// Length of the "very long" hostile string: 1 MiB of ASCII.
pub const LONG_LEN: usize = 1 << 20;

static LONG: LazyLock<String> = LazyLock::new(|| "A".repeat(LONG_LEN));

const SHORT: &[&str] = &[
    "",
    "\u{0}",
    "a\u{0}b",
    "\u{202E}gnp.exe",
    "\u{200F}\u{202B}rtl\u{202C}",
    "\u{FEFF}bom",
    "🕴️👨‍👩‍👧‍👦",
    "e\u{301}\u{301}\u{301}\u{301}",
    "Z\u{36B}\u{34F}\u{351}\u{35B}\u{30E}\u{31D}",
    "../../etc/passwd",
    "..\\..\\windows\\win.ini",
    "/etc/passwd\u{0}.png",
    "' OR 1=1 --",
    "\"; DROP TABLE users; --",
    "$(id)",
    "`id`",
    "; rm -rf / #",
    "| cat /etc/passwd",
    "{{template}}",
    "${7*7}",
    "<%= 7*7 %>",
    "%s%n%x%d",
    "<script>alert(1)</script>",
    "\r\nX-Injected: 1",
    "a\r\n\r\nb",
    "-1",
    "1e309",
    "-1e309",
    "1e-400",
    "-0",
    "9007199254740993",
    "18446744073709551616",
    "NaN",
    "Infinity",
    "null",
    "true",
    " ",
    "\t\n\u{b}\u{c}\r",
    "\u{7f}\u{1b}[31m",
    "\\u0000",
    "%00",
    "%2e%2e%2f",
];

static ALL: LazyLock<Vec<&'static str>> = LazyLock::new(|| {
    let mut v: Vec<&'static str> = SHORT.to_vec();
    v.push(LONG.as_str());
    v
});

/// Hostile strings, each a valid Rust `String` (so valid JSON text once escaped):
/// empty, NUL, bidi overrides, emoji and combining marks, path traversal, SQL and shell
/// metacharacters, template and format-string syntax, CR/LF injection, numbers and literals
/// as strings, and one 1 MiB string (the last element, [`LONG_LEN`] bytes).
///
/// Lone surrogates cannot be Rust strings; see [`hostile_raw_json`].
#[must_use]
pub fn hostile_strings() -> &'static [&'static str] {
    ALL.as_slice()
}

/// Hostile JSON *texts* for what a Rust `String` cannot hold: string literals with lone or
/// reversed UTF-16 surrogate escapes (`"\ud800"`). The wire layer can splice them in place of
/// a string value; a strict JSON parser should reject or replace them.
#[must_use]
pub fn hostile_raw_json() -> &'static [&'static str] {
    &[
        r#""\ud800""#,
        r#""\udfff""#,
        r#""a\ud800b""#,
        r#""\udc00\ud800""#,
        r#""\ud83d""#,
    ]
}

/// A strategy over [`hostile_strings`] whose char count is within `min..=max`, weighted so
/// the 1 MiB string is rare (1 in 1001 hostile draws: it costs about a millisecond to copy
/// and check). `None` if none fits. A drawn string shrinks by dropping characters (halves,
/// then quarters, ... then single characters, never below `min`), so that a failure on
/// `"/etc/passwd\0.png"` shrinks to the `"\0"` inside it.
pub(crate) fn fitting(min: u64, max: u64) -> Option<BoxedStrategy<String>> {
    let min_chars = usize::try_from(min).unwrap_or(usize::MAX);
    pick(min, max).map(|s| {
        Dropping {
            inner: s,
            min_chars,
        }
        .boxed()
    })
}

/// Draws with `inner`, then shrinks by dropping characters (see [`fitting`]).
#[derive(Debug)]
struct Dropping {
    inner: BoxedStrategy<String>,
    min_chars: usize,
}

impl Strategy for Dropping {
    type Tree = DroppingTree;
    type Value = String;

    fn new_tree(
        &self,
        runner: &mut proptest::test_runner::TestRunner,
    ) -> proptest::strategy::NewTree<Self> {
        let chars: Vec<char> = self.inner.new_tree(runner)?.current().chars().collect();
        Ok(DroppingTree {
            chunk: (chars.len() / 2).max(1),
            current: chars,
            prev: None,
            pos: 0,
            min: self.min_chars,
        })
    }
}

/// The value tree of [`Dropping`]: removes `chunk` characters at `pos`; when that makes the
/// test pass, puts them back and moves on; at the end of the string, halves `chunk`.
#[derive(Debug, Clone)]
struct DroppingTree {
    current: Vec<char>,
    prev: Option<Vec<char>>,
    pos: usize,
    chunk: usize,
    min: usize,
}

impl proptest::strategy::ValueTree for DroppingTree {
    type Value = String;

    fn current(&self) -> String {
        self.current.iter().collect()
    }

    fn simplify(&mut self) -> bool {
        let room = self.current.len().saturating_sub(self.min);
        if room == 0 {
            return false;
        }
        while self.pos >= self.current.len() {
            if self.chunk <= 1 {
                return false;
            }
            self.chunk /= 2;
            self.pos = 0;
        }
        let end = (self.pos + self.chunk.min(room)).min(self.current.len());
        let mut next = self.current.clone();
        next.drain(self.pos..end);
        self.prev = Some(std::mem::replace(&mut self.current, next));
        true
    }

    fn complicate(&mut self) -> bool {
        match self.prev.take() {
            Some(previous) => {
                self.current = previous;
                self.pos += self.chunk;
                true
            }
            None => false,
        }
    }
}

fn pick(min: u64, max: u64) -> Option<BoxedStrategy<String>> {
    let short: Vec<&'static str> = SHORT
        .iter()
        .copied()
        .filter(|s| {
            let n = s.chars().count() as u64;
            n >= min && n <= max
        })
        .collect();
    let long_fits = (LONG_LEN as u64) >= min && (LONG_LEN as u64) <= max;
    match (short.is_empty(), long_fits) {
        (true, false) => None,
        (false, false) => Some(select(short).prop_map(String::from).boxed()),
        (true, true) => Some(Just(LONG.clone()).boxed()),
        (false, true) => Some(
            proptest::strategy::Union::new_weighted(vec![
                (1000, select(short).prop_map(String::from).boxed()),
                (1, Just(()).prop_map(|()| LONG.clone()).boxed()),
            ])
            .boxed(),
        ),
    }
}

/// A proptest strategy over all hostile strings (the long one rarely).
pub fn hostile_string_strategy() -> BoxedStrategy<String> {
    fitting(0, u64::MAX).unwrap_or_else(|| Just(String::new()).boxed())
}
