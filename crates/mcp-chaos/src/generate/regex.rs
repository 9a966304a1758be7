//! ECMA-262 `pattern` → proptest string strategy (JSON Schema 2020-12 §6.3.3, §4.3.1 of the
//! validation vocabulary: patterns are ECMA-262 regular expressions, matched unanchored).
//!
//! The pattern is first translated from ECMA-262 syntax to the `regex-syntax` dialect:
//! - `\d`, `\w`, `\s` and their negations become the explicit ASCII (ECMA `\s`: Unicode
//!   whitespace plus line terminators) classes ECMA defines, not Rust's Unicode ones;
//! - `.` excludes all four ECMA line terminators, `[^]` is any character;
//! - `\uXXXX` (surrogate pairs combined), `\cX`, `\0`, `\xHH` are rewritten;
//! - lookarounds are dropped and backreferences replaced by a copy of their group: the
//!   strategy then over-approximates the language and its values are filtered by the validator
//!   (the translation reports itself as approximate).
//!
//! The parsed HIR is compiled into our own small regex tree ([`Rx`]) whose strategy is built
//! from proptest combinators, so strings shrink toward shorter ones made of simpler characters.
//! A length solver bends the repetition counts so that `minLength`/`maxLength` are met by
//! construction in the common cases (one variable-width repetition of fixed-width atoms).

use std::fmt::Write as _;
use std::sync::Arc;

use proptest::prelude::*;
use proptest::strategy::Union;
use regex_syntax::hir::{Class, Hir, HirKind, Look};

use super::chars::{Alphabet, Chars};

/// ECMA-262 `\s`: WhiteSpace plus LineTerminator, as `regex-syntax` class items.
const ECMA_WS: &str = r"\t\n\x0B\x0C\r \x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}\x{feff}";

/// Soft cap on the extra repetitions of an unbounded quantifier (`*`, `+`, `{n,}`).
const REP_SOFT: u32 = 8;

/// The result of translating an ECMA-262 pattern.
#[derive(Debug, Clone)]
pub(crate) struct Translated {
    /// The pattern in `regex-syntax` syntax.
    pub rust: String,
    /// `true` when lookarounds, backreferences or word boundaries were approximated, so the
    /// language of `rust` is a superset of the pattern's and candidates must be filtered.
    pub approximate: bool,
}

/// Translates an ECMA-262 pattern to the `regex-syntax` dialect.
///
/// # Errors
/// `Err(reason)` for constructs with no translation (a lone surrogate escape, octal escapes
/// inside classes, unbalanced groups).
pub(crate) fn translate(pattern: &str) -> Result<Translated, String> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut t = Translator {
        src: &chars,
        i: 0,
        out: String::with_capacity(pattern.len() + 16),
        approximate: false,
        groups: Vec::new(),
        open: Vec::new(),
        names: Vec::new(),
    };
    t.run()?;
    Ok(Translated {
        rust: t.out,
        approximate: t.approximate,
    })
}

struct Translator<'a> {
    src: &'a [char],
    i: usize,
    out: String,
    approximate: bool,
    /// Translated text of each closed capture group, by group number - 1.
    groups: Vec<Option<String>>,
    /// Open capture groups: (group number - 1, output offset where the group starts).
    open: Vec<(Option<usize>, usize)>,
    /// Group names by group number - 1.
    names: Vec<Option<String>>,
}

impl Translator<'_> {
    fn peek(&self, k: usize) -> Option<char> {
        self.src.get(self.i + k).copied()
    }

    fn run(&mut self) -> Result<(), String> {
        while let Some(c) = self.peek(0) {
            match c {
                '\\' => {
                    self.i += 1;
                    self.escape(false)?;
                }
                '[' => self.class()?,
                '(' => self.group_open()?,
                ')' => {
                    self.i += 1;
                    let (num, start) = self.open.pop().ok_or("unbalanced ')'")?;
                    self.out.push(')');
                    if let Some(n) = num {
                        let text = self.out[start..].to_string();
                        if let Some(slot) = self.groups.get_mut(n) {
                            *slot = Some(text);
                        }
                    }
                }
                '.' => {
                    self.i += 1;
                    self.out.push_str(r"[^\n\r\x{2028}\x{2029}]");
                }
                '{' => {
                    if let Some(len) = self.quantifier_len() {
                        for k in 0..len {
                            if let Some(q) = self.peek(k) {
                                self.out.push(q);
                            }
                        }
                        self.i += len;
                    } else {
                        self.i += 1;
                        self.out.push_str(r"\{");
                    }
                }
                '}' => {
                    self.i += 1;
                    self.out.push_str(r"\}");
                }
                ']' => {
                    self.i += 1;
                    self.out.push_str(r"\]");
                }
                '^' | '$' | '|' | '*' | '+' | '?' => {
                    self.i += 1;
                    self.out.push(c);
                }
                _ => {
                    self.i += 1;
                    self.push_literal(c);
                }
            }
        }
        if self.open.is_empty() {
            Ok(())
        } else {
            Err("unbalanced '('".into())
        }
    }

    fn push_literal(&mut self, c: char) {
        let mut buf = [0u8; 4];
        self.out
            .push_str(&regex_syntax::escape(c.encode_utf8(&mut buf)));
    }

    fn push_class_literal(&mut self, c: char) {
        if c.is_ascii_alphanumeric() || (!c.is_ascii() && !c.is_whitespace()) {
            self.out.push(c);
        } else {
            let _ = write!(self.out, r"\x{{{:x}}}", c as u32);
        }
    }

    /// Length of a `{n}`, `{n,}` or `{n,m}` quantifier starting at the cursor, if one is there.
    fn quantifier_len(&self) -> Option<usize> {
        let mut k = 1;
        let mut digits = 0;
        while self.peek(k).is_some_and(|c| c.is_ascii_digit()) {
            k += 1;
            digits += 1;
        }
        if digits == 0 {
            return None;
        }
        if self.peek(k) == Some(',') {
            k += 1;
            while self.peek(k).is_some_and(|c| c.is_ascii_digit()) {
                k += 1;
            }
        }
        (self.peek(k) == Some('}')).then_some(k + 1)
    }

    fn hex(&self, from: usize, n: usize) -> Option<u32> {
        let mut v = 0u32;
        for k in 0..n {
            let d = self.peek(from + k)?.to_digit(16)?;
            v = v * 16 + d;
        }
        Some(v)
    }

    /// Handles the escape whose backslash was just consumed.
    fn escape(&mut self, in_class: bool) -> Result<(), String> {
        let e = self.peek(0).ok_or("trailing backslash")?;
        self.i += 1;
        match e {
            'd' => self.out.push_str(if in_class { "0-9" } else { "[0-9]" }),
            'D' => self.out.push_str("[^0-9]"),
            'w' => self.out.push_str(if in_class {
                "A-Za-z0-9_"
            } else {
                "[A-Za-z0-9_]"
            }),
            'W' => self.out.push_str("[^A-Za-z0-9_]"),
            's' => {
                if in_class {
                    self.out.push_str(ECMA_WS);
                } else {
                    self.out.push('[');
                    self.out.push_str(ECMA_WS);
                    self.out.push(']');
                }
            }
            'S' => {
                self.out.push_str("[^");
                self.out.push_str(ECMA_WS);
                self.out.push(']');
            }
            'b' if in_class => self.out.push_str(r"\x08"),
            'b' => {
                self.approximate = true;
                self.out.push_str(r"(?-u:\b)");
            }
            'B' => {
                self.approximate = true;
                self.out.push_str(r"(?-u:\B)");
            }
            'n' => self.out.push_str(r"\n"),
            'r' => self.out.push_str(r"\r"),
            't' => self.out.push_str(r"\t"),
            'f' => self.out.push_str(r"\x0C"),
            'v' => self.out.push_str(r"\x0B"),
            '0' if !self.peek(0).is_some_and(|c| c.is_ascii_digit()) => {
                self.out.push_str(r"\x00");
            }
            '1'..='9' => {
                if in_class {
                    return Err("octal escape in a class".into());
                }
                let mut n = e.to_digit(10).unwrap_or(0) as usize;
                while let Some(d) = self.peek(0).and_then(|c| c.to_digit(10)) {
                    n = n * 10 + d as usize;
                    self.i += 1;
                }
                self.backref(n.checked_sub(1));
            }
            'k' if !in_class && self.peek(0) == Some('<') => {
                let mut name = String::new();
                let mut k = 1;
                while let Some(c) = self.peek(k) {
                    if c == '>' {
                        break;
                    }
                    name.push(c);
                    k += 1;
                }
                self.i += k + 1;
                let idx = self.names.iter().position(|n| n.as_deref() == Some(&name));
                self.backref(idx);
            }
            'c' => {
                let letter = self.peek(0).filter(char::is_ascii_alphabetic);
                if let Some(l) = letter {
                    self.i += 1;
                    let code = (l as u32) % 32;
                    let _ = write!(self.out, r"\x{{{code:x}}}");
                } else {
                    self.out.push_str(r"\\c");
                }
            }
            'x' => match self.hex(0, 2) {
                Some(v) => {
                    self.i += 2;
                    let _ = write!(self.out, r"\x{{{v:x}}}");
                }
                None => self.out.push('x'),
            },
            'u' => {
                if self.peek(0) == Some('{') {
                    let mut k = 1;
                    let mut v = 0u32;
                    while let Some(d) = self.peek(k).and_then(|c| c.to_digit(16)) {
                        v = v.saturating_mul(16).saturating_add(d);
                        k += 1;
                    }
                    if self.peek(k) != Some('}') || char::from_u32(v).is_none() {
                        return Err("bad \\u{...} escape".into());
                    }
                    self.i += k + 1;
                    let _ = write!(self.out, r"\x{{{v:x}}}");
                } else if let Some(v) = self.hex(0, 4) {
                    self.i += 4;
                    if (0xD800..0xDC00).contains(&v) {
                        let low = (self.peek(0) == Some('\\') && self.peek(1) == Some('u'))
                            .then(|| self.hex(2, 4))
                            .flatten()
                            .filter(|lo| (0xDC00..0xE000).contains(lo));
                        let Some(lo) = low else {
                            return Err("lone surrogate escape".into());
                        };
                        self.i += 6;
                        let cp = 0x10000 + ((v - 0xD800) << 10) + (lo - 0xDC00);
                        let _ = write!(self.out, r"\x{{{cp:x}}}");
                    } else if (0xDC00..0xE000).contains(&v) {
                        return Err("lone surrogate escape".into());
                    } else {
                        let _ = write!(self.out, r"\x{{{v:x}}}");
                    }
                } else {
                    self.out.push('u');
                }
            }
            'p' | 'P' if self.peek(0) == Some('{') => {
                self.out.push('\\');
                self.out.push(e);
                while let Some(c) = self.peek(0) {
                    self.i += 1;
                    self.out.push(c);
                    if c == '}' {
                        break;
                    }
                }
            }
            _ => {
                if in_class {
                    self.push_class_literal(e);
                } else {
                    self.push_literal(e);
                }
            }
        }
        Ok(())
    }

    fn backref(&mut self, idx: Option<usize>) {
        self.approximate = true;
        let text = idx.and_then(|n| self.groups.get(n).cloned().flatten());
        // A forward or self reference matches the empty string in ECMA-262: nothing to add.
        if let Some(t) = text {
            // Re-insert the group's translated text as a non-capturing copy, without names
            // (duplicate names do not parse).
            let inner = strip_group_names(&t);
            self.out.push_str("(?:");
            self.out.push_str(&inner);
            self.out.push(')');
        }
    }

    fn group_open(&mut self) -> Result<(), String> {
        self.i += 1;
        if self.peek(0) == Some('?') {
            match (self.peek(1), self.peek(2)) {
                (Some('='), _) | (Some('!'), _) => {
                    self.i += 2;
                    self.skip_group()
                }
                (Some('<'), Some('=')) | (Some('<'), Some('!')) => {
                    self.i += 3;
                    self.skip_group()
                }
                (Some(':'), _) => {
                    self.i += 2;
                    self.out.push_str("(?:");
                    self.open.push((None, self.out.len()));
                    Ok(())
                }
                (Some('<'), _) => {
                    let mut name = String::new();
                    let mut k = 2;
                    while let Some(c) = self.peek(k) {
                        if c == '>' {
                            break;
                        }
                        name.push(c);
                        k += 1;
                    }
                    self.i += k + 1;
                    let start = self.out.len();
                    self.out.push_str("(?<");
                    self.out.push_str(&name);
                    self.out.push('>');
                    self.groups.push(None);
                    self.names.push(Some(name));
                    self.open.push((Some(self.groups.len() - 1), start));
                    Ok(())
                }
                _ => Err("unsupported group syntax".into()),
            }
        } else {
            let start = self.out.len();
            self.out.push('(');
            self.groups.push(None);
            self.names.push(None);
            self.open.push((Some(self.groups.len() - 1), start));
            Ok(())
        }
    }

    /// Skips a lookaround group body (the `(?=` etc. is consumed) and its closing `)`.
    fn skip_group(&mut self) -> Result<(), String> {
        self.approximate = true;
        let mut depth = 1usize;
        let mut in_class = false;
        while let Some(c) = self.peek(0) {
            self.i += 1;
            match c {
                '\\' => self.i += 1,
                '[' if !in_class => in_class = true,
                ']' if in_class => in_class = false,
                '(' if !in_class => depth += 1,
                ')' if !in_class => {
                    depth -= 1;
                    if depth == 0 {
                        // A quantifier on a lookaround means nothing; drop it.
                        if matches!(self.peek(0), Some('*' | '+' | '?')) {
                            self.i += 1;
                        } else if self.peek(0) == Some('{')
                            && let Some(len) = self.quantifier_len()
                        {
                            self.i += len;
                        }
                        return Ok(());
                    }
                }
                _ => {}
            }
        }
        Err("unbalanced lookaround".into())
    }

    fn class(&mut self) -> Result<(), String> {
        self.i += 1;
        let negated = self.peek(0) == Some('^');
        if negated {
            self.i += 1;
        }
        if self.peek(0) == Some(']') {
            self.i += 1;
            // `[]` matches nothing, `[^]` anything.
            self.out.push_str(if negated {
                r"[\x{0}-\x{10FFFF}]"
            } else {
                r"[^\x{0}-\x{10FFFF}]"
            });
            return Ok(());
        }
        self.out.push('[');
        if negated {
            self.out.push('^');
        }
        let mut first = true;
        let mut prev_was_class_escape = false;
        loop {
            let c = self.peek(0).ok_or("unterminated class")?;
            match c {
                ']' => {
                    self.i += 1;
                    self.out.push(']');
                    return Ok(());
                }
                '\\' => {
                    self.i += 1;
                    let e = self.peek(0);
                    self.escape(true)?;
                    prev_was_class_escape = matches!(e, Some('d' | 'D' | 'w' | 'W' | 's' | 'S'));
                }
                '-' => {
                    self.i += 1;
                    let at_end = self.peek(0) == Some(']');
                    if first || at_end || prev_was_class_escape || self.peek(0) == Some('-') {
                        self.out.push_str(r"\-");
                    } else {
                        self.out.push('-');
                    }
                    prev_was_class_escape = false;
                }
                _ => {
                    self.i += 1;
                    self.push_class_literal(c);
                    prev_was_class_escape = false;
                }
            }
            first = false;
        }
    }
}

fn strip_group_names(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(pos) = rest.find("(?<") {
        let after = &rest[pos + 3..];
        if after.starts_with('=') || after.starts_with('!') {
            out.push_str(&rest[..pos + 3]);
            rest = after;
            continue;
        }
        out.push_str(&rest[..pos]);
        out.push_str("(?:");
        rest = after.find('>').map_or("", |end| &after[end + 1..]);
    }
    out.push_str(rest);
    out
}

/// Our regex tree: the subset of HIR that generation needs, with char (not byte) lengths.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Rx {
    /// Matches the empty string (also assertions, which generation ignores).
    Empty,
    /// A fixed string.
    Lit(String),
    /// One character from inclusive ranges.
    Class(Vec<(char, char)>),
    /// `min..=max` repetitions (`max` `None` = unbounded).
    Rep {
        /// Fewest repetitions.
        min: u32,
        /// Most repetitions.
        max: Option<u32>,
        /// The repeated expression.
        sub: Box<Rx>,
    },
    /// Concatenation.
    Cat(Vec<Rx>),
    /// Alternation (first alternative is the simplest for shrinking).
    Alt(Vec<Rx>),
}

/// A compiled `pattern`: the regex tree plus anchoring facts.
#[derive(Debug, Clone)]
pub(crate) struct Pattern {
    /// The tree, with unanchored ends padded by free repetitions.
    pub rx: Rx,
    /// The translation was approximate: candidates must be filtered.
    pub approximate: bool,
}

impl Pattern {
    /// Parses and compiles an ECMA-262 pattern.
    ///
    /// # Errors
    /// `Err(reason)` if the pattern cannot be translated or parsed.
    pub fn compile(pattern: &str) -> Result<Self, String> {
        let t = translate(pattern)?;
        let hir = regex_syntax::ParserBuilder::new()
            .nest_limit(200)
            .build()
            .parse(&t.rust)
            .map_err(|e| format!("{e}"))?;
        let mut approximate = t.approximate;
        let start = anchored_start(&hir);
        let end = anchored_end(&hir);
        let core = from_hir(&hir, &mut approximate)?;
        let pad = || Rx::Rep {
            min: 0,
            max: Some(3),
            sub: Box::new(Rx::Class(vec![('a', 'z'), ('0', '9')])),
        };
        let mut parts = Vec::new();
        if !start {
            parts.push(pad());
        }
        parts.push(core);
        if !end {
            parts.push(pad());
        }
        let rx = if parts.len() == 1 {
            parts.pop().unwrap_or(Rx::Empty)
        } else {
            Rx::Cat(parts)
        };
        Ok(Self { rx, approximate })
    }
}

fn anchored_start(h: &Hir) -> bool {
    match h.kind() {
        HirKind::Look(Look::Start) => true,
        HirKind::Concat(v) => v.first().is_some_and(anchored_start),
        HirKind::Alternation(v) => v.iter().all(anchored_start),
        HirKind::Capture(c) => anchored_start(&c.sub),
        _ => false,
    }
}

fn anchored_end(h: &Hir) -> bool {
    match h.kind() {
        HirKind::Look(Look::End) => true,
        HirKind::Concat(v) => v.last().is_some_and(anchored_end),
        HirKind::Alternation(v) => v.iter().all(anchored_end),
        HirKind::Capture(c) => anchored_end(&c.sub),
        _ => false,
    }
}

fn from_hir(h: &Hir, approximate: &mut bool) -> Result<Rx, String> {
    Ok(match h.kind() {
        HirKind::Empty => Rx::Empty,
        HirKind::Look(l) => {
            if !matches!(l, Look::Start | Look::End) {
                *approximate = true;
            }
            Rx::Empty
        }
        HirKind::Literal(lit) => {
            Rx::Lit(String::from_utf8(lit.0.to_vec()).map_err(|_| "non-UTF-8 literal".to_string())?)
        }
        HirKind::Class(Class::Unicode(c)) => {
            Rx::Class(c.ranges().iter().map(|r| (r.start(), r.end())).collect())
        }
        HirKind::Class(Class::Bytes(c)) => {
            let mut v = Vec::new();
            for r in c.ranges() {
                let (s, e) = (r.start(), r.end().min(0x7F));
                if s <= e {
                    v.push((char::from(s), char::from(e)));
                }
            }
            Rx::Class(v)
        }
        HirKind::Repetition(r) => Rx::Rep {
            min: r.min,
            max: r.max,
            sub: Box::new(from_hir(&r.sub, approximate)?),
        },
        HirKind::Capture(c) => from_hir(&c.sub, approximate)?,
        HirKind::Concat(v) => {
            let mut out: Vec<Rx> = Vec::with_capacity(v.len());
            for x in v {
                match from_hir(x, approximate)? {
                    Rx::Empty => {}
                    Rx::Lit(s) => {
                        if let Some(Rx::Lit(prev)) = out.last_mut() {
                            prev.push_str(&s);
                        } else {
                            out.push(Rx::Lit(s));
                        }
                    }
                    other => out.push(other),
                }
            }
            match out.len() {
                0 => Rx::Empty,
                1 => out.pop().unwrap_or(Rx::Empty),
                _ => Rx::Cat(out),
            }
        }
        HirKind::Alternation(v) => Rx::Alt(
            v.iter()
                .map(|x| from_hir(x, approximate))
                .collect::<Result<_, _>>()?,
        ),
    })
}

/// `(min, max)` length in chars; `max` is `None` when unbounded.
pub(crate) fn len_bounds(rx: &Rx) -> (u64, Option<u64>) {
    match rx {
        Rx::Empty => (0, Some(0)),
        Rx::Lit(s) => {
            let n = s.chars().count() as u64;
            (n, Some(n))
        }
        Rx::Class(r) => {
            if r.is_empty() {
                (u64::MAX, Some(0))
            } else {
                (1, Some(1))
            }
        }
        Rx::Rep { min, max, sub } => {
            let (smin, smax) = len_bounds(sub);
            let lo = smin.saturating_mul(u64::from(*min));
            let hi = match (max, smax) {
                (Some(m), Some(s)) => Some(s.saturating_mul(u64::from(*m))),
                (_, Some(0)) => Some(0),
                _ => None,
            };
            (lo, hi)
        }
        Rx::Cat(v) => v.iter().fold((0, Some(0)), |(a, b), x| {
            let (c, d) = len_bounds(x);
            (
                a.saturating_add(c),
                b.zip(d).map(|(b, d)| b.saturating_add(d)),
            )
        }),
        Rx::Alt(v) => v.iter().fold((u64::MAX, Some(0)), |(a, b), x| {
            let (c, d) = len_bounds(x);
            (a.min(c), b.zip(d).map(|(b, d)| b.max(d)))
        }),
    }
}

/// Caps every unbounded or huge repetition so generation stays small: `max` becomes at most
/// `min + REP_SOFT` (single-character atoms: `min + soft`).
fn soft_caps(rx: &Rx, soft: u64) -> Rx {
    match rx {
        Rx::Rep { min, max, sub } => {
            let sub2 = soft_caps(sub, soft);
            let width1 = len_bounds(&sub2) == (1, Some(1));
            let extra = if width1 {
                u32::try_from(soft).unwrap_or(u32::MAX)
            } else {
                REP_SOFT
            };
            let cap = min.saturating_add(extra);
            let max2 = Some(max.map_or(cap, |m| m.min(cap)));
            Rx::Rep {
                min: *min,
                max: max2,
                sub: Box::new(sub2),
            }
        }
        Rx::Cat(v) => Rx::Cat(v.iter().map(|x| soft_caps(x, soft)).collect()),
        Rx::Alt(v) => Rx::Alt(v.iter().map(|x| soft_caps(x, soft)).collect()),
        other => other.clone(),
    }
}

/// Bends repetition counts so that the generated length falls in `lo..=hi` chars where the
/// structure allows it: a single repetition of a fixed-width atom, or one such repetition
/// inside a concatenation of otherwise fixed-width parts, is solved exactly; alternatives
/// that cannot reach the range are dropped. Returns `None` when the range is unreachable.
pub(crate) fn fit_length(rx: &Rx, lo: u64, hi: u64, soft: u64) -> Option<Rx> {
    let capped = soft_caps(rx, soft);
    fit(&capped, rx, lo, hi)
}

/// `capped` is `orig` with soft caps; the solver may raise a cap up to `orig`'s real bound.
fn fit(capped: &Rx, orig: &Rx, lo: u64, hi: u64) -> Option<Rx> {
    let (mn, _) = len_bounds(orig);
    let (_, cmx) = len_bounds(capped);
    let (_, omx) = len_bounds(orig);
    if mn > hi || omx.is_some_and(|m| m < lo) || lo > hi {
        return None;
    }
    let cmx = cmx.unwrap_or(u64::MAX);
    if mn >= lo && cmx <= hi {
        return Some(capped.clone());
    }
    match (capped, orig) {
        (
            Rx::Rep { sub, .. },
            Rx::Rep {
                min: omin,
                max: omax,
                ..
            },
        ) => {
            let (w, wmax) = len_bounds(sub);
            if w == 0 || wmax != Some(w) {
                return Some(capped.clone());
            }
            let need_lo = lo.div_ceil(w).max(u64::from(*omin));
            let mut need_hi = (hi / w).min(omax.map_or(u64::MAX, u64::from));
            // Keep the range modest: a long exact range is uniform anyway.
            need_hi = need_hi.min(need_lo.saturating_add(u64::from(REP_SOFT) * 4));
            if need_lo > need_hi {
                return None;
            }
            Some(Rx::Rep {
                min: u32::try_from(need_lo).ok()?,
                max: Some(u32::try_from(need_hi).ok()?),
                sub: sub.clone(),
            })
        }
        (Rx::Cat(cv), Rx::Cat(ov)) if cv.len() == ov.len() => {
            // Pick the elastic part: the last repetition of a fixed-width atom.
            let Some(elastic) = ov.iter().rposition(|x| match x {
                Rx::Rep { sub, .. } => {
                    let (w, wm) = len_bounds(sub);
                    w > 0 && wm == Some(w)
                }
                _ => false,
            }) else {
                return Some(capped.clone());
            };
            let (mut others_min, mut others_max) = (0u64, 0u64);
            for (k, x) in cv.iter().enumerate() {
                if k != elastic {
                    let (a, b) = len_bounds(x);
                    others_min = others_min.saturating_add(a);
                    others_max = others_max.saturating_add(b.unwrap_or(u64::MAX));
                }
            }
            let e_lo = lo.saturating_sub(others_max.min(lo));
            let e_lo = if others_max == others_min {
                lo.saturating_sub(others_min)
            } else {
                e_lo
            };
            let e_hi = hi.checked_sub(others_min)?;
            let part = match fit(&cv[elastic], &ov[elastic], e_lo, e_hi) {
                Some(p) => p,
                // With variable-width neighbours the split above is only a guess.
                None if others_min != others_max => cv[elastic].clone(),
                None => return None,
            };
            let mut out = cv.clone();
            out[elastic] = part;
            Some(Rx::Cat(out))
        }
        (Rx::Alt(cv), Rx::Alt(ov)) if cv.len() == ov.len() => {
            let alts: Vec<Rx> = cv
                .iter()
                .zip(ov)
                .filter_map(|(c, o)| fit(c, o, lo, hi))
                .collect();
            match alts.len() {
                0 => None,
                1 => alts.into_iter().next(),
                _ => Some(Rx::Alt(alts)),
            }
        }
        _ => Some(capped.clone()),
    }
}

/// The proptest strategy for `rx`. Unbounded repetitions must have been capped first
/// ([`fit_length`] does it).
pub(crate) fn strategy(rx: &Rx) -> BoxedStrategy<String> {
    match rx {
        Rx::Empty => Just(String::new()).boxed(),
        Rx::Lit(s) => Just(s.clone()).boxed(),
        Rx::Class(r) if r.is_empty() => Just(String::new()).boxed(),
        Rx::Class(r) => Chars {
            alpha: Alphabet::Ranges(Arc::from(r.as_slice())),
            lo: 1,
            hi: 1,
        }
        .boxed(),
        Rx::Rep { min, max, sub } => {
            let lo = *min as usize;
            let hi = max.map_or(lo + REP_SOFT as usize, |m| m as usize).max(lo);
            if let Rx::Class(r) = sub.as_ref()
                && !r.is_empty()
            {
                Chars {
                    alpha: Alphabet::Ranges(Arc::from(r.as_slice())),
                    lo,
                    hi,
                }
                .boxed()
            } else {
                proptest::collection::vec(strategy(sub), lo..=hi)
                    .prop_map(|v| v.concat())
                    .boxed()
            }
        }
        Rx::Cat(v) => {
            let parts: Vec<BoxedStrategy<String>> = v.iter().map(strategy).collect();
            parts.prop_map(|v| v.concat()).boxed()
        }
        Rx::Alt(v) => Union::new(v.iter().map(strategy)).boxed(),
    }
}

/// A deterministic small match of `rx` (fewest repetitions, first alternative, the nicest
/// character of each class). `variant` picks other characters to make distinct witnesses.
pub(crate) fn witness(rx: &Rx, variant: usize) -> Option<String> {
    let mut out = String::new();
    witness_into(rx, variant, &mut out)?;
    Some(out)
}

fn witness_into(rx: &Rx, variant: usize, out: &mut String) -> Option<()> {
    match rx {
        Rx::Empty => {}
        Rx::Lit(s) => out.push_str(s),
        Rx::Class(r) => out.push(nice_char(r, variant)?),
        Rx::Rep { min, sub, .. } => {
            for _ in 0..*min {
                witness_into(sub, variant, out)?;
            }
        }
        Rx::Cat(v) => {
            for x in v {
                witness_into(x, variant, out)?;
            }
        }
        Rx::Alt(v) => {
            let mut done = false;
            for x in v {
                let mut s = String::new();
                if witness_into(x, variant, &mut s).is_some() {
                    out.push_str(&s);
                    done = true;
                    break;
                }
            }
            if !done {
                return None;
            }
        }
    }
    Some(())
}

fn nice_char(ranges: &[(char, char)], variant: usize) -> Option<char> {
    let contains = |c: char| ranges.iter().any(|(a, b)| *a <= c && c <= *b);
    let preferred = ('a'..='z')
        .chain('A'..='Z')
        .chain('0'..='9')
        .chain(['_', '-', ' ']);
    let mut found = preferred.filter(|c| contains(*c));
    if let Some(c) = found.nth(variant % 26).or_else(|| {
        let mut again = ('a'..='z')
            .chain('A'..='Z')
            .chain('0'..='9')
            .chain(['_', '-', ' '])
            .filter(|c| contains(*c));
        again.next()
    }) {
        return Some(c);
    }
    for (a, b) in ranges {
        let mut c = *a;
        loop {
            if !c.is_control() {
                return Some(c);
            }
            if c >= *b {
                break;
            }
            c = char::from_u32(c as u32 + 1)?;
        }
    }
    ranges.first().map(|(a, _)| *a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn translates_ecma_classes_to_ascii() {
        let t = translate(r"^\d+\w\s.$").expect("translates");
        assert!(t.rust.contains("[0-9]"));
        assert!(t.rust.contains("[A-Za-z0-9_]"));
        assert!(!t.approximate);
    }

    #[test]
    fn lookaround_is_dropped_and_flagged() {
        let t = translate(r"^(?!foo)[a-z]+(?<=z)$").expect("translates");
        assert!(t.approximate);
        assert!(!t.rust.contains("?!"));
        regex_syntax::Parser::new()
            .parse(&t.rust)
            .expect("parses after translation");
    }

    #[test]
    fn backreference_becomes_a_copy() {
        let t = translate(r"^(a|b)\1$").expect("translates");
        assert!(t.approximate);
        assert!(t.rust.contains("(?:(a|b))"), "{}", t.rust);
    }

    #[test]
    fn surrogate_pairs_combine_and_lone_ones_fail() {
        let t = translate(r"^\uD83D\uDE00$").expect("translates");
        assert!(t.rust.contains("1f600"));
        assert!(translate(r"\uD800").is_err());
    }

    #[test]
    fn class_edge_cases() {
        for p in [
            r"[a-z-]", r"[-a]", r"[\d-x]", r"[[]", r"[^]", r"[]", r"[a&&b]", r"a{", r"x{2,3}",
        ] {
            let t = translate(p).expect(p);
            regex_syntax::Parser::new()
                .parse(&t.rust)
                .unwrap_or_else(|e| panic!("{p} -> {}: {e}", t.rust));
        }
    }

    #[test]
    fn fit_length_solves_single_repetition() {
        let p = Pattern::compile(r"^[a-z]+$").expect("compiles");
        let rx = fit_length(&p.rx, 40, 50, 8).expect("fits");
        let (lo, hi) = len_bounds(&rx);
        assert!(lo >= 40 && hi.is_some_and(|h| h <= 50), "{rx:?}");
        let p = Pattern::compile(r"^id-[0-9]{2,}$").expect("compiles");
        let rx = fit_length(&p.rx, 10, 10, 8).expect("fits");
        assert_eq!(witness(&rx, 0).map(|s| s.chars().count()), Some(10));
    }

    #[test]
    fn witness_is_small() {
        let p = Pattern::compile(r"^[A-Z]{2}-\d{3}$").expect("compiles");
        assert_eq!(witness(&p.rx, 0).as_deref(), Some("AA-000"));
    }
}
