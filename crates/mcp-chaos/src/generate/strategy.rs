//! Lowered schema ([`Node`]) → proptest strategies of valid values.
//!
//! Everything is built from proptest combinators (`Union`, `vec`, tuples, `option::weighted`,
//! `select`) plus the numeric trees of [`super::num`], so values shrink toward simple ones:
//! fewer optional properties and items, shorter strings of plainer characters, numbers toward
//! zero (clamped into range), earlier `anyOf` branches and `enum` values.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use proptest::prelude::*;
use proptest::sample::select;
use proptest::strategy::Union;
use serde_json::{Map, Value};

use super::any::AnyJson;
use super::chars::{Alphabet, Chars};
use super::checked::{Checked, OnExhaust};
use super::error::{Note, NoteKind};
use super::format::{self, Hint};
use super::hostile;
use super::ir::{Node, Shape, all_unique, div_ceil, div_floor, json_eq, ty};
use super::num::{FloatStrategy, IntStrategy, float_value, int_value, mul_decimal};
use super::options::GenOptions;
use super::regex::{self, Pattern, fit_length};
use super::validate::Validators;

/// Everything strategies need at generation time.
pub(crate) struct Ctx {
    pub vals: Arc<Validators>,
    pub opts: GenOptions,
    /// Loopback URL base without a trailing slash.
    pub base: String,
    patterns: Mutex<HashMap<String, Result<Pattern, String>>>,
    /// Budget notes made while building cases (sites sampled, the deadline reached).
    budget_notes: Mutex<Vec<Note>>,
}

impl std::fmt::Debug for Ctx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ctx")
            .field("base", &self.base)
            .finish_non_exhaustive()
    }
}

type S = BoxedStrategy<Value>;

impl Ctx {
    pub fn new(vals: Arc<Validators>, opts: GenOptions, base: String) -> Self {
        Self {
            vals,
            opts,
            base,
            patterns: Mutex::new(HashMap::new()),
            budget_notes: Mutex::new(Vec::new()),
        }
    }

    /// Records a [`NoteKind::Budget`] note (once per pointer and keyword).
    pub fn budget_note(&self, pointer: &str, keyword: &str, message: String) {
        let mut notes = self
            .budget_notes
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let pointer = format!("#{pointer}");
        if !notes
            .iter()
            .any(|n| n.pointer == pointer && n.keyword == keyword)
        {
            notes.push(Note {
                pointer,
                keyword: keyword.to_owned(),
                kind: NoteKind::Budget,
                message,
            });
        }
    }

    /// The budget notes made so far while building cases.
    pub fn budget_notes(&self) -> Vec<Note> {
        self.budget_notes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// A compiled pattern (cached).
    pub fn pattern(&self, p: &str) -> Result<Pattern, String> {
        let mut c = self.patterns.lock().unwrap_or_else(PoisonError::into_inner);
        c.entry(p.to_string())
            .or_insert_with(|| Pattern::compile(p))
            .clone()
    }

    /// The strategy of a node; `None` if it has no instance we can build.
    pub fn node(&self, n: &Node) -> Option<S> {
        let mut alts: Vec<S> = n.alts.iter().filter_map(|s| self.shape(s)).collect();
        match alts.len() {
            0 => None,
            1 => alts.pop(),
            _ => Some(Union::new(alts).boxed()),
        }
    }

    /// The strategy of one shape (with its local filter when it has non-constructed
    /// keywords).
    pub fn shape(&self, s: &Shape) -> Option<S> {
        if s.is_any() && s.seeds.is_empty() && s.hint.is_none() {
            return Some(self.any_json());
        }
        let base = if let Some(e) = &s.enumeration {
            if e.is_empty() {
                return None;
            }
            select(e.clone()).boxed()
        } else {
            self.by_type(s)?
        };
        let base = if s.seeds.is_empty() {
            base
        } else {
            Union::new_weighted(vec![(6, base), (1, select(s.seeds.clone()).boxed())]).boxed()
        };
        Some(self.local_check(s, base))
    }

    /// Wraps `base` in the shape's local filter, if it needs one.
    pub fn local_check(&self, s: &Shape, base: S) -> S {
        if s.needs_check && !s.srcs.is_empty() {
            let vals = Arc::clone(&self.vals);
            let srcs = s.srcs.clone();
            Checked::new(
                base,
                Arc::new(move |v: &Value| vals.check_all(&srcs, v)),
                self.opts.filter_budget,
                OnExhaust::Soft,
                format!("schema at #{}", s.loc),
            )
            .boxed()
        } else {
            base
        }
    }

    /// The union over the shape's types, simplest type first (shrinking goes there), the
    /// constrained types weighted up.
    pub fn by_type(&self, s: &Shape) -> Option<S> {
        let mut parts: Vec<(u32, S)> = Vec::new();
        let constrained = |bit: u8| match bit {
            ty::STR => s.str != Default::default() || s.hint.is_some(),
            ty::INT | ty::FRAC => s.num != Default::default(),
            ty::ARR => !s.arr.prefix.is_empty() || s.arr.items.is_some() || s.arr.min > 0,
            ty::OBJ => !s.obj.props.is_empty() || s.obj.additional.is_some(),
            _ => false,
        };
        for bit in [
            ty::NULL,
            ty::BOOL,
            ty::INT,
            ty::FRAC,
            ty::STR,
            ty::ARR,
            ty::OBJ,
        ] {
            if s.types & bit == 0 {
                continue;
            }
            let strat = match bit {
                ty::NULL => Some(Just(Value::Null).boxed()),
                ty::BOOL => Some(any::<bool>().prop_map(Value::Bool).boxed()),
                ty::INT => self.int(s),
                ty::FRAC => self.frac(s),
                ty::STR => Some(self.string(s)),
                ty::ARR => self.array(s),
                _ => self.object(s),
            };
            if let Some(st) = strat {
                let w = if constrained(bit) {
                    8
                } else if bit == ty::NULL || bit == ty::BOOL {
                    1
                } else {
                    3
                };
                parts.push((w, st));
            }
        }
        match parts.len() {
            0 => None,
            1 => parts.pop().map(|(_, s)| s),
            _ => Some(Union::new_weighted(parts).boxed()),
        }
    }

    fn int(&self, s: &Shape) -> Option<S> {
        let (lo, hi) = s.int_range();
        if lo > hi {
            return None;
        }
        match s.int_multiple() {
            Ok(Some(m)) if m > 0 => {
                let (klo, khi) = (div_ceil(lo, m), div_floor(hi, m));
                if klo > khi {
                    return None;
                }
                Some(
                    IntStrategy { lo: klo, hi: khi }
                        .prop_map(move |k| int_value(k * m))
                        .boxed(),
                )
            }
            _ => Some(IntStrategy { lo, hi }.prop_map(int_value).boxed()),
        }
    }

    fn frac(&self, s: &Shape) -> Option<S> {
        let (lo, hi) = s.float_range();
        if lo > hi {
            return None;
        }
        let only_frac = s.types & ty::INT == 0;
        if let Some(&m) = s.num.mult.first() {
            let klo = super::num::clamp_f((lo / m).ceil(), -1e15, 1e15) as i128;
            let khi = super::num::clamp_f((hi / m).floor(), -1e15, 1e15) as i128;
            if klo > khi {
                return None;
            }
            return Some(
                IntStrategy { lo: klo, hi: khi }
                    .prop_map(move |k| float_value(mul_decimal(k, m).unwrap_or(lo)))
                    .boxed(),
            );
        }
        Some(
            FloatStrategy { lo, hi }
                .prop_map(move |x| {
                    let x = if only_frac && x.fract() == 0.0 {
                        if x + 0.5 <= hi { x + 0.5 } else { x - 0.5 }
                    } else {
                        x
                    };
                    float_value(x)
                })
                .boxed(),
        )
    }

    /// Free-form strings of `min..=max` chars (max soft-capped), hostile ones mixed in.
    pub fn free_string(&self, min: u64, max: Option<u64>) -> BoxedStrategy<String> {
        let hi = max
            .unwrap_or(u64::MAX)
            .min(min.saturating_add(self.opts.max_string_len));
        let lo = usize::try_from(min).unwrap_or(usize::MAX);
        let hi = usize::try_from(hi).unwrap_or(usize::MAX).max(lo);
        let base = Chars {
            alpha: Alphabet::Free,
            lo,
            hi,
        }
        .boxed();
        if self.opts.hostile
            && let Some(h) = hostile::fitting(min, max.unwrap_or(u64::MAX))
        {
            Union::new_weighted(vec![(12, base), (1, h)]).boxed()
        } else {
            base
        }
    }

    fn string(&self, s: &Shape) -> S {
        let (min, max) = (s.str.min, s.str.max);
        let fits = |x: &str| {
            let n = x.chars().count() as u64;
            n >= min && max.is_none_or(|m| n <= m)
        };
        // A URL-ish string with a pattern: loopback URLs that match it, if there are any;
        // else pattern-shaped URLs moved to loopback (below).
        let url_like = s.hint == Some(Hint::Url)
            || s.str.format.as_deref().is_some_and(|f| {
                matches!(f, "uri" | "uri-reference" | "iri" | "iri-reference" | "url")
            });
        if let Some(f) = &s.str.format
            && (!url_like || s.str.patterns.is_empty())
            && let Some(st) = format::strategy(f, &self.base)
        {
            return st.prop_map(Value::String).boxed();
        }
        if url_like
            && !s.str.patterns.is_empty()
            && let Some(st) = self.url_matching(s)
        {
            return st;
        }
        if let Some(p) = s.str.patterns.first()
            && let Ok(pat) = self.pattern(p)
        {
            let rx = fit_length(
                &pat.rx,
                min,
                max.unwrap_or(u64::MAX),
                self.opts.max_string_len,
            )
            .unwrap_or_else(|| pat.rx.clone());
            if url_like {
                // Pattern-shaped URLs, their host moved to loopback, kept if they still match.
                let base = self.base.clone();
                let st = regex::strategy(&rx)
                    .prop_map(move |x| Value::String(super::safety::loopback_rewrite(&x, &base)))
                    .boxed();
                let vals = Arc::clone(&self.vals);
                let patterns = s.str.patterns.clone();
                return Checked::new(
                    st,
                    Arc::new(move |v: &Value| {
                        v.as_str().is_some_and(|x| {
                            patterns.iter().all(|p| vals.matches(p, x) != Some(false))
                        })
                    }),
                    self.opts.filter_budget,
                    OnExhaust::Soft,
                    "pattern URL on loopback",
                )
                .boxed();
            }
            let st = regex::strategy(&rx).prop_map(Value::String).boxed();
            // A host/IP-named property with a pattern must still stay on loopback.
            return match s.hint {
                Some(Hint::Host | Hint::Ip) => Checked::new(
                    st,
                    Arc::new(|v: &Value| v.as_str().is_some_and(super::safety::is_loopback_host)),
                    self.opts.filter_budget,
                    OnExhaust::Soft,
                    "loopback host",
                )
                .boxed(),
                _ => st,
            };
        }
        if s.hint == Some(Hint::Path) {
            // Path-shaped values among free-form ones: half each.
            let free = self.free_string(min, max).prop_map(Value::String).boxed();
            let path = Checked::new(
                format::path().prop_map(Value::String).boxed(),
                Arc::new(move |v: &Value| {
                    v.as_str().is_some_and(|x| {
                        let n = x.chars().count() as u64;
                        n >= min && max.is_none_or(|m| n <= m)
                    })
                }),
                self.opts.filter_budget,
                OnExhaust::Soft,
                "path-shaped string length",
            )
            .boxed();
            return if fits("/") || fits("/a") || fits("/robots.txt") {
                Union::new_weighted(vec![(1, free), (1, path)]).boxed()
            } else {
                free
            };
        }
        if let Some(h) = s.hint
            && fits(&format::hint_example(h, &self.base))
        {
            let st = format::hint_strategy(h, &self.base);
            return if min > 0 || max.is_some() {
                Checked::new(
                    st.prop_map(Value::String).boxed(),
                    Arc::new(move |v: &Value| {
                        v.as_str().is_some_and(|x| {
                            let n = x.chars().count() as u64;
                            n >= min && max.is_none_or(|m| n <= m)
                        })
                    }),
                    self.opts.filter_budget,
                    OnExhaust::Soft,
                    "hinted string length",
                )
                .boxed()
            } else {
                st.prop_map(Value::String).boxed()
            };
        }
        self.free_string(min, max).prop_map(Value::String).boxed()
    }

    /// Loopback URLs filtered by the shape's patterns and lengths; `None` when a short
    /// deterministic probe finds none.
    fn url_matching(&self, s: &Shape) -> Option<S> {
        let vals = Arc::clone(&self.vals);
        let patterns = s.str.patterns.clone();
        let (min, max) = (s.str.min, s.str.max);
        let pred: super::checked::Pred<Value> = Arc::new(move |v: &Value| {
            v.as_str().is_some_and(|x| {
                let n = x.chars().count() as u64;
                n >= min
                    && max.is_none_or(|m| n <= m)
                    && patterns.iter().all(|p| vals.matches(p, x) != Some(false))
            })
        });
        let st = format::hint_strategy(Hint::Url, &self.base)
            .prop_map(Value::String)
            .boxed();
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        let found = (0..32).any(|_| {
            st.new_tree(&mut runner)
                .is_ok_and(|t| pred(&proptest::strategy::ValueTree::current(&t)))
        });
        found.then(|| {
            Checked::new(
                st,
                pred,
                self.opts.filter_budget,
                OnExhaust::Soft,
                "loopback URL matching pattern",
            )
            .boxed()
        })
    }

    fn array(&self, s: &Shape) -> Option<S> {
        let a = &s.arr;
        let soft = self.opts.max_items;
        let plen = a.prefix.len() as u64;
        let items_never = a.items.as_deref().is_some_and(Node::is_never);
        // Usable prefix positions: up to the first unsatisfiable one.
        let usable = a
            .prefix
            .iter()
            .position(Node::is_never)
            .map_or(plen, |i| i as u64);
        let mut hi = a
            .max
            .unwrap_or(u64::MAX)
            .min(a.min.max(plen).saturating_add(soft));
        if items_never || usable < plen {
            hi = hi.min(usable);
        }
        let lo = a.min;
        if lo > hi {
            return None;
        }

        // Unique items from a small finite domain: pick a subset.
        if a.unique
            && plen == 0
            && let Some(dom) = a.items.as_deref().and_then(Node::finite_domain)
        {
            let hi = hi.min(dom.len() as u64);
            if lo > hi {
                return None;
            }
            let range = usize::try_from(lo).ok()?..=usize::try_from(hi).ok()?;
            return Some(
                proptest::sample::subsequence(dom, range)
                    .prop_shuffle()
                    .prop_map(Value::Array)
                    .boxed(),
            );
        }

        let prefix: Vec<S> = a
            .prefix
            .iter()
            .take(usize::try_from(usable).ok()?)
            .map(|n| self.node(n))
            .collect::<Option<_>>()?;
        let k_lo = lo.min(usable);
        let k_hi = hi.min(usable);
        let item = match a.items.as_deref() {
            None => self.any_json(),
            Some(n) if n.is_never() => Just(Value::Null).boxed(),
            Some(n) => self.node(n)?,
        };
        let (tail_lo, tail_hi) = if items_never || usable < plen {
            (0, 0)
        } else {
            (lo.saturating_sub(plen), hi.saturating_sub(plen))
        };
        let contains = a.contains.first().and_then(|c| {
            let st = self.node(&c.node)?;
            let n = usize::try_from(c.min).ok()?;
            Some(proptest::collection::vec(st, n..=n))
        });
        let contains =
            contains.unwrap_or_else(|| proptest::collection::vec(Just(Value::Null).boxed(), 0..=0));
        let unique = a.unique;
        let hi_us = usize::try_from(hi).ok()?;
        let lo_us = usize::try_from(lo).ok()?;
        let tail = proptest::collection::vec(
            item,
            usize::try_from(tail_lo).ok()?..=usize::try_from(tail_hi).ok()?,
        );
        let plen_us = usize::try_from(usable).ok()?;
        Some(
            (
                prefix,
                usize::try_from(k_lo).ok()?..=usize::try_from(k_hi).ok()?,
                contains,
                tail,
            )
                .prop_map(move |(prefix, k, contains, tail)| {
                    let mut out: Vec<Value> = prefix.into_iter().take(k).collect();
                    if k == plen_us {
                        out.extend(contains);
                        out.extend(tail);
                    }
                    if unique && !all_unique(&out) {
                        let mut dedup: Vec<Value> = Vec::with_capacity(out.len());
                        for v in out {
                            if !dedup.iter().any(|w| json_eq(w, &v)) {
                                dedup.push(v);
                            }
                        }
                        out = dedup;
                    }
                    out.truncate(hi_us.max(lo_us));
                    Value::Array(out)
                })
                .boxed(),
        )
    }

    /// Short identifier-like keys (`a`, `x_1b`).
    fn plain_key() -> BoxedStrategy<String> {
        (
            proptest::char::range('a', 'z'),
            proptest::collection::vec(
                prop_oneof![
                    4 => proptest::char::range('a', 'z'),
                    1 => proptest::char::range('0', '9'),
                    1 => Just('_'),
                ],
                0..=7,
            ),
        )
            .prop_map(|(c, rest)| {
                let mut k = String::from(c);
                k.extend(rest);
                k
            })
            .boxed()
    }

    fn key_strategy(&self, s: &Shape) -> BoxedStrategy<Option<String>> {
        if let Some(names) = s.obj.names.as_deref()
            && let Some(st) = self.node(&names.strings_only())
        {
            return st.prop_map(|v| v.as_str().map(str::to_string)).boxed();
        }
        Self::plain_key().prop_map(Some).boxed()
    }

    #[expect(
        clippy::too_many_lines,
        reason = "one object strategy, assembled in one place"
    )]
    fn object(&self, s: &Shape) -> Option<S> {
        let o = &s.obj;
        let mut required: Vec<(String, S)> = Vec::new();
        // Optional properties: (name, presence, value); the value is always generated so a
        // dependentRequired trigger can pull it in.
        let mut optional: Vec<(String, S)> = Vec::new();
        for (name, node) in &o.props {
            let is_req = o.required.contains(name);
            if node.is_never() {
                if is_req {
                    return None;
                }
                continue;
            }
            let st = self.node(node);
            match (st, is_req) {
                (Some(st), true) => required.push((name.clone(), st)),
                (Some(st), false) => optional.push((name.clone(), st)),
                (None, true) => return None,
                (None, false) => {}
            }
        }
        let declared: Vec<String> = o.props.iter().map(|(k, _)| k.clone()).collect();
        let opt_names: Vec<String> = optional.iter().map(|(k, _)| k.clone()).collect();
        let req_names: Vec<String> = required.iter().map(|(k, _)| k.clone()).collect();
        let req_vals: Vec<S> = required.into_iter().map(|(_, s)| s).collect();
        let opt_vals: Vec<BoxedStrategy<(bool, Value)>> = optional
            .into_iter()
            .map(|(_, st)| (proptest::bool::weighted(0.5), st).boxed())
            .collect();

        // Extra (undeclared) properties.
        let extra_allowed = o.additional.as_deref().is_none_or(|n| !n.is_never());
        let declared_count = o.props.iter().filter(|(_, n)| !n.is_never()).count() as u64;
        let max_extra = if extra_allowed {
            let need = o.min.saturating_sub(declared_count);
            self.opts.max_extra_properties.max(need)
        } else {
            0
        };
        let min_extra = if extra_allowed {
            o.min.saturating_sub(declared_count)
        } else {
            0
        };
        let extra_val = match o.additional.as_deref() {
            None => Some(self.any_json()),
            Some(n) => self.node(n),
        };
        let extras: BoxedStrategy<Vec<(Option<String>, Value)>> = match extra_val {
            Some(v) if max_extra > 0 => {
                let some = proptest::collection::vec(
                    (self.key_strategy(s), v),
                    usize::try_from(min_extra.max(1)).ok()?..=usize::try_from(max_extra).ok()?,
                )
                .boxed();
                if min_extra == 0 {
                    // Usually none: undeclared members are noise for most servers.
                    Union::new_weighted(vec![(3, Just(Vec::new()).boxed()), (1, some)]).boxed()
                } else {
                    some
                }
            }
            _ => Just(Vec::new()).boxed(),
        };
        // One optional member per patternProperties entry.
        let mut pat_members: Vec<BoxedStrategy<Option<(String, Value)>>> = Vec::new();
        for (pat, node) in &o.patterns {
            if node.is_never() {
                continue;
            }
            let (Ok(p), Some(v)) = (self.pattern(pat), self.node(node)) else {
                continue;
            };
            let key = fit_length(&p.rx, 1, 24, 8).unwrap_or_else(|| p.rx.clone());
            pat_members.push(proptest::option::weighted(0.4, (regex::strategy(&key), v)).boxed());
        }
        let patterns: Vec<String> = o.patterns.iter().map(|(p, _)| p.clone()).collect();
        let vals = Arc::clone(&self.vals);
        let dep_req = o.dep_req.clone();
        let max = o.max;
        Some(
            (req_vals, opt_vals, pat_members, extras)
                .prop_map(move |(req, opt, pats, extras)| {
                    let mut present: Vec<bool> = opt.iter().map(|(p, _)| *p).collect();
                    // dependentRequired: a present trigger pulls its dependencies in.
                    let mut changed = true;
                    while changed {
                        changed = false;
                        for (k, deps) in &dep_req {
                            let trig = req_names.contains(k)
                                || opt_names
                                    .iter()
                                    .position(|n| n == k)
                                    .is_some_and(|i| present[i]);
                            if !trig {
                                continue;
                            }
                            for d in deps {
                                if let Some(i) = opt_names.iter().position(|n| n == d)
                                    && !present[i]
                                {
                                    present[i] = true;
                                    changed = true;
                                }
                            }
                        }
                    }
                    let mut m = Map::new();
                    let mut req = req.into_iter();
                    let mut opt = opt.into_iter().zip(present);
                    for name in &declared {
                        if req_names.contains(name) {
                            if let Some(v) = req.next() {
                                m.insert(name.clone(), v);
                            }
                        } else if opt_names.contains(name)
                            && let Some(((_, v), keep)) = opt.next()
                            && keep
                        {
                            m.insert(name.clone(), v);
                        }
                    }
                    for (k, v) in pats.into_iter().flatten() {
                        if !m.contains_key(&k) && !declared.contains(&k) {
                            m.insert(k, v);
                        }
                    }
                    for (k, v) in extras {
                        let Some(k) = k else { continue };
                        if m.contains_key(&k) || declared.contains(&k) {
                            continue;
                        }
                        if patterns.iter().any(|p| vals.matches(p, &k) != Some(false)) {
                            continue;
                        }
                        m.insert(k, v);
                    }
                    if let Some(mx) = max {
                        let mx = usize::try_from(mx).unwrap_or(usize::MAX);
                        while m.len() > mx {
                            let victim = m.keys().rev().find(|k| !req_names.contains(k)).cloned();
                            match victim {
                                Some(k) => {
                                    m.shift_remove(&k);
                                }
                                None => break,
                            }
                        }
                    }
                    Value::Object(m)
                })
                .boxed(),
        )
    }

    /// Arbitrary JSON (for unconstrained positions): shallow, small, shrinking to `null`.
    pub fn any_json(&self) -> S {
        AnyJson { depth: 2 }.boxed()
    }
}
