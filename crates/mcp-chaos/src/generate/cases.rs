//! Invalid cases (one named constraint broken) and the deterministic boundary phase.
//!
//! Both walk the lowered schema and enumerate *sites*: a path of properties/items from the
//! root to a shape, and what to do there (break `minLength`, drop a required property, take
//! the `maximum` edge, ...). A site is realised either as a strategy (random, shrinking) or
//! deterministically (from examples), by building a valid value for the enclosing structure
//! and putting the site's value at the path. Each realised case is confirmed by the validator:
//! invalid cases must be rejected with the named keyword at the named instance location,
//! valid edges must be accepted.

use std::sync::Arc;

use proptest::prelude::*;
use proptest::sample::select;
use proptest::strategy::Union;
use proptest::test_runner::{Config, TestRng, TestRunner};
use serde::Serialize;
use serde_json::Value;

use super::checked::{Checked, OnExhaust};
use super::error::{GenError, Note, NoteKind};
use super::format;
use super::ir::{Node, Shape, escape_token, json_eq, ty, type_of};
use super::num::{decimal_step, float_value, int_value};
use super::safety::is_loopback_safe;
use super::strategy::Ctx;
use super::validate::reported_as;

/// The one constraint an invalid case breaks.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
pub struct Violation {
    /// The JSON Schema keyword broken (`required`, `type`, `minimum`, `exclusiveMaximum`,
    /// `multipleOf`, `minLength`, `maxLength`, `pattern`, `format`, `enum`, `const`,
    /// `minItems`, `maxItems`, `uniqueItems`, `additionalProperties`, `minProperties`,
    /// `maxProperties`, `dependentRequired`/`dependencies`, `items`/`additionalItems`, ...).
    pub keyword: String,
    /// JSON pointer (RFC 6901) of the instance location whose constraint is broken: `""`
    /// for the arguments object itself (also for a missing required property, which is a
    /// constraint on the object), `"/city"` for a property.
    pub pointer: String,
    /// What was done, for humans ("missing required property \"city\"", "length 0 < minLength 1").
    pub description: String,
}

/// One boundary-phase case.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Case {
    /// A value the schema accepts (an edge: exact `minLength`, `maximum`, an `enum` value,
    /// all optional properties present, ...).
    Valid {
        /// The arguments.
        value: Value,
        /// Which edge it is.
        label: String,
    },
    /// A value the schema rejects for exactly the named reason.
    Invalid {
        /// The arguments.
        value: Value,
        /// The broken constraint.
        violation: Violation,
    },
}

impl Case {
    /// The arguments of the case.
    #[must_use]
    pub fn value(&self) -> &Value {
        match self {
            Self::Valid { value, .. } | Self::Invalid { value, .. } => value,
        }
    }
}

/// A step from a shape into a child.
#[derive(Debug, Clone)]
pub(crate) enum Step {
    Prop(String),
    Item(usize),
}

/// What to do at a site.
#[derive(Debug, Clone)]
pub(crate) enum Kind {
    WrongType { root: bool },
    Null,
    NotInEnum,
    BelowMin,
    AboveMax,
    NotMultiple,
    TooShort,
    TooLong,
    PatternMismatch(String),
    BadFormat(String),
    TooFewItems,
    TooManyItems,
    Duplicate,
    ExtraItem,
    MissingRequired(String),
    ExtraProperty,
    TooFewProps,
    TooManyProps,
    MissingDependency { trigger: String, dep: String },
    // Valid edges (boundary phase only).
    LenEdge(u64),
    NumEdge(Value, &'static str),
    EnumValue(usize),
    ItemsEdge(u64),
    AllOptional,
}

impl Kind {
    fn is_valid_edge(&self) -> bool {
        matches!(
            self,
            Self::LenEdge(_)
                | Self::NumEdge(..)
                | Self::EnumValue(_)
                | Self::ItemsEdge(_)
                | Self::AllOptional
        )
    }
}

/// A site: alternative index at each level, the steps, the kind.
#[derive(Debug, Clone)]
pub(crate) struct Site {
    alts: Vec<usize>,
    steps: Vec<Step>,
    kind: Kind,
    /// The work of realising the site: 1 + the members of every object (and the prefix
    /// items of every array) on its path, which are built around it.
    cost: usize,
}

/// `(keyword, description, instance pointer relative to the site)`.
type ViolationParts = (String, String, String);

/// How a local value is made.
enum Make {
    /// Pick from these (the first is the deterministic choice).
    Values(Vec<Value>),
    /// A valid value of this (modified) shape.
    Shape(Box<Shape>),
    /// A value of the inner maker, transformed.
    Map(Box<Make>, Arc<dyn Fn(Value) -> Value + Send + Sync>),
}

const MAX_SITE_DEPTH: usize = 6;
/// Invalid strings longer than this are built directly (`aaa...`), not through strategies.
const LONG_STRING: u64 = 4096;
const MAX_SITES: usize = 400;
/// Most sites enumerated before sampling ([`MAX_SITES`] of them, within
/// [`crate::generate::GenOptions::max_site_work`], spread evenly).
const MAX_SITES_SCAN: usize = 20_000;

fn pointer_of(steps: &[Step]) -> String {
    steps
        .iter()
        .map(|s| match s {
            Step::Prop(k) => format!("/{}", escape_token(k)),
            Step::Item(i) => format!("/{i}"),
        })
        .collect()
}

fn type_name(v: &Value) -> &'static str {
    match type_of(v) {
        ty::NULL => "null",
        ty::BOOL => "boolean",
        ty::INT => "integer",
        ty::FRAC => "number",
        ty::STR => "string",
        ty::ARR => "array",
        _ => "object",
    }
}

impl Ctx {
    /// Enumerates the sites of `node` (`valid_edges` adds the boundary phase's valid edges):
    /// at most [`MAX_SITES`], of total cost at most `max_site_work`, spread evenly over all
    /// of them when there are more (each sampling recorded as a budget note).
    pub(crate) fn sites(&self, node: &Node, valid_edges: bool) -> Vec<Site> {
        let mut out = Vec::new();
        self.sites_rec(
            node,
            &mut Vec::new(),
            &mut Vec::new(),
            0,
            valid_edges,
            &mut out,
        );
        let total: usize = out.iter().map(|s| s.cost).sum();
        let budget = self.opts.max_site_work.max(1);
        if out.len() <= MAX_SITES && total <= budget {
            return out;
        }
        // Keep `keep` sites spread evenly, fewer while their cost is over the budget.
        let n = out.len();
        let mean = total.div_ceil(n).max(1);
        let mut keep = n.min(MAX_SITES).min((budget / mean).max(1));
        let pick = |keep: usize| -> Vec<usize> { (0..keep).map(|i| i * n / keep).collect() };
        let mut idx = pick(keep);
        while keep > 1 && idx.iter().map(|&i| out[i].cost).sum::<usize>() > budget {
            keep = keep * 3 / 4;
            idx = pick(keep);
        }
        let scanned = if n >= MAX_SITES_SCAN {
            format!("at least {n}")
        } else {
            n.to_string()
        };
        self.budget_note(
            "",
            if valid_edges { "boundary" } else { "invalid" },
            format!(
                "{} case sites: {} of {scanned} used, spread evenly (work {total} members \
                 and items over max_site_work {budget}, or more than {MAX_SITES} sites)",
                if valid_edges { "boundary" } else { "invalid" },
                idx.len()
            ),
        );
        let mut out: Vec<Option<Site>> = out.into_iter().map(Some).collect();
        idx.into_iter().filter_map(|i| out[i].take()).collect()
    }

    fn sites_rec(
        &self,
        node: &Node,
        alts: &mut Vec<usize>,
        steps: &mut Vec<Step>,
        cost: usize,
        valid_edges: bool,
        out: &mut Vec<Site>,
    ) {
        for (ai, s) in node.alts.iter().enumerate() {
            if out.len() >= MAX_SITES_SCAN || self.opts.past_deadline() {
                return;
            }
            alts.push(ai);
            let root = steps.is_empty();
            let mut push = |kind: Kind| {
                if kind.is_valid_edge() && !valid_edges {
                    return;
                }
                out.push(Site {
                    alts: alts.clone(),
                    steps: steps.clone(),
                    kind,
                    cost: cost + 1,
                });
            };
            if s.types != ty::ALL && (root || s.types | ty::NULL != ty::ALL) {
                push(Kind::WrongType { root });
            }
            if !root && s.types & ty::NULL == 0 {
                push(Kind::Null);
            }
            if let Some(e) = &s.enumeration {
                push(Kind::NotInEnum);
                for i in 0..e.len().min(16) {
                    push(Kind::EnumValue(i));
                }
            } else {
                self.local_sites(s, &mut push);
            }
            if steps.len() < MAX_SITE_DEPTH && s.enumeration.is_none() {
                if s.types & ty::OBJ != 0 {
                    for (name, child) in &s.obj.props {
                        if child.is_never() || child.is_any() {
                            continue;
                        }
                        steps.push(Step::Prop(name.clone()));
                        let cost = cost + s.obj.props.len();
                        self.sites_rec(child, alts, steps, cost, valid_edges, out);
                        steps.pop();
                    }
                }
                if s.types & ty::ARR != 0 {
                    let plen = s.arr.prefix.len();
                    for (i, child) in s.arr.prefix.iter().enumerate() {
                        if child.is_never() || child.is_any() {
                            continue;
                        }
                        steps.push(Step::Item(i));
                        self.sites_rec(child, alts, steps, cost + plen, valid_edges, out);
                        steps.pop();
                    }
                    if let Some(items) = s.arr.items.as_deref()
                        && !items.is_never()
                        && !items.is_any()
                        && s.arr.max.is_none_or(|m| m > plen as u64)
                    {
                        steps.push(Step::Item(plen));
                        self.sites_rec(items, alts, steps, cost + plen + 1, valid_edges, out);
                        steps.pop();
                    }
                }
            }
            alts.pop();
        }
    }

    fn local_sites(&self, s: &Shape, push: &mut impl FnMut(Kind)) {
        if s.types & ty::NUM != 0 {
            if let Some(lo) = s.num.lo {
                push(Kind::BelowMin);
                if let Some(v) = self.num_edge(s, true) {
                    push(Kind::NumEdge(
                        v,
                        if lo.excl {
                            "exclusiveMinimum"
                        } else {
                            "minimum"
                        },
                    ));
                }
            }
            if let Some(hi) = s.num.hi {
                push(Kind::AboveMax);
                if let Some(v) = self.num_edge(s, false) {
                    push(Kind::NumEdge(
                        v,
                        if hi.excl {
                            "exclusiveMaximum"
                        } else {
                            "maximum"
                        },
                    ));
                }
            }
            if !s.num.mult.is_empty() {
                push(Kind::NotMultiple);
            }
        }
        if s.types & ty::STR != 0 {
            if s.str.min > 0 {
                push(Kind::TooShort);
                push(Kind::LenEdge(s.str.min));
            }
            if let Some(m) = s.str.max {
                if m < self.opts.size_cap {
                    push(Kind::TooLong);
                }
                if m <= self.opts.size_cap && Some(m) != Some(s.str.min) {
                    push(Kind::LenEdge(m));
                }
            }
            if let Some(p) = s.str.patterns.first() {
                push(Kind::PatternMismatch(p.clone()));
            }
            if let Some(f) = &s.str.format
                && format::KNOWN.contains(&f.as_str())
            {
                push(Kind::BadFormat(f.clone()));
            }
        }
        if s.types & ty::ARR != 0 {
            if s.arr.min > 0 {
                push(Kind::TooFewItems);
                push(Kind::ItemsEdge(s.arr.min));
            }
            if let Some(m) = s.arr.max {
                if m < self.opts.size_cap {
                    push(Kind::TooManyItems);
                }
                if m != s.arr.min && m <= self.opts.max_items.max(s.arr.min) + 16 {
                    push(Kind::ItemsEdge(m));
                }
            }
            if s.arr.unique && s.arr.max.is_none_or(|m| m >= 2) {
                push(Kind::Duplicate);
            }
            if s.arr.items.as_deref().is_some_and(Node::is_never) {
                push(Kind::ExtraItem);
            }
        }
        if s.types & ty::OBJ != 0 {
            for r in &s.obj.required {
                push(Kind::MissingRequired(r.clone()));
            }
            if s.obj.additional.as_deref().is_some_and(Node::is_never) {
                push(Kind::ExtraProperty);
            }
            if s.obj.min > 0 {
                push(Kind::TooFewProps);
            }
            if s.obj.max.is_some() {
                push(Kind::TooManyProps);
            }
            for (t, deps) in &s.obj.dep_req {
                for d in deps {
                    if t != d {
                        push(Kind::MissingDependency {
                            trigger: t.clone(),
                            dep: d.clone(),
                        });
                    }
                }
            }
            if s.obj
                .props
                .iter()
                .any(|(k, n)| !s.obj.required.contains(k) && !n.is_never())
            {
                push(Kind::AllOptional);
            }
        }
    }

    /// The valid value at the lower (`low`) or upper numeric edge.
    fn num_edge(&self, s: &Shape, low: bool) -> Option<Value> {
        if s.types & ty::INT != 0 {
            let (lo, hi) = s.int_range();
            let m = match s.int_multiple() {
                Ok(Some(m)) if m > 0 => m,
                _ => 1,
            };
            let v = if low {
                super::ir::div_ceil(lo, m) * m
            } else {
                super::ir::div_floor(hi, m) * m
            };
            return (lo..=hi).contains(&v).then(|| int_value(v));
        }
        if !s.num.mult.is_empty() {
            return None;
        }
        let (lo, hi) = s.float_range();
        Some(float_value(if low { lo } else { hi }))
    }

    /// Strings that break `pattern` (checked with the pattern validator), length-fitting ones
    /// first.
    fn pattern_breakers(&self, s: &Shape, p: &str) -> Vec<Value> {
        let mut cands: Vec<String> = [
            "",
            "!",
            " ",
            "~~~",
            "\u{0}",
            "0",
            "a",
            "A",
            "-",
            "Z9!",
            "..",
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        ]
        .iter()
        .map(|x| (*x).to_string())
        .collect();
        if let Some(ex) = self.ex_string(s, None, 0) {
            cands.push(format!("{ex}!"));
            cands.push(format!("!{ex}"));
            cands.push(format!("{ex} "));
            let mut chars: Vec<char> = ex.chars().collect();
            if let Some(c) = chars.first_mut() {
                *c = if *c == '!' { '?' } else { '!' };
            }
            cands.push(chars.into_iter().collect());
        }
        let fits = |x: &str| {
            let n = x.chars().count() as u64;
            n >= s.str.min && s.str.max.is_none_or(|m| n <= m)
        };
        let mut ok: Vec<String> = cands
            .into_iter()
            .filter(|c| self.vals.matches(p, c) == Some(false))
            .collect();
        ok.sort_by_key(|c| !fits(c));
        ok.dedup();
        ok.into_iter().map(Value::String).collect()
    }

    fn not_in_enum(s: &Shape) -> Vec<Value> {
        let e = s.enumeration.as_deref().unwrap_or(&[]);
        let mut cands: Vec<Value> = Vec::new();
        for v in e.iter().take(4) {
            match v {
                Value::String(x) => {
                    cands.push(Value::String(format!("{x}_not_in_enum")));
                    cands.push(Value::String(x.to_uppercase()));
                }
                Value::Number(n) => {
                    if let Some(i) = n.as_i64() {
                        cands.push(Value::from(i.saturating_add(1)));
                        cands.push(Value::from(i.saturating_sub(1)));
                    } else if let Some(f) = n.as_f64() {
                        cands.push(float_value(f + 0.5));
                    }
                }
                Value::Bool(b) => cands.push(Value::Bool(!b)),
                _ => {}
            }
        }
        cands.push(Value::String("__not_in_enum__".into()));
        cands.push(Value::from(-987_654_321));
        cands.retain(|c| !e.iter().any(|v| json_eq(v, c)));
        // Prefer values of a type the enum uses, so only `enum` breaks.
        cands.sort_by_key(|c| !e.iter().any(|v| type_of(v) == type_of(c)));
        cands
    }

    /// A copy of `s` for a modified (possibly invalid) value: no local filters.
    fn unchecked(s: &Shape, types: u8) -> Shape {
        let mut t = s.clone();
        t.types = types;
        t.enumeration = None;
        t.seeds.clear();
        t.srcs.clear();
        t.needs_check = false;
        t
    }

    /// A copy of `s` restricted to one type, checks kept (a valid container).
    fn restricted(s: &Shape, types: u8) -> Option<Shape> {
        if s.enumeration.is_some() || s.types & types == 0 {
            return None;
        }
        let mut t = s.clone();
        t.types = types;
        t.seeds.retain(|v| type_of(v) & types != 0);
        Some(t)
    }

    #[expect(clippy::too_many_lines, reason = "one arm per site kind")]
    fn local(&self, s: &Shape, kind: &Kind) -> Option<(Make, Option<ViolationParts>)> {
        let viol = |k: &str, d: String| Some((k.to_string(), d, String::new()));
        Some(match kind {
            Kind::WrongType { root } => {
                let mut bad: Vec<Value> = Vec::new();
                let allowed = s.types;
                if allowed & ty::OBJ == 0 {
                    bad.push(serde_json::json!({}));
                }
                if allowed & ty::ARR == 0 {
                    bad.push(serde_json::json!([]));
                }
                if allowed & ty::STR == 0 {
                    bad.push(Value::String("not-a-string-value".into()));
                }
                if allowed & ty::INT == 0 {
                    bad.push(Value::from(1));
                }
                if allowed & ty::FRAC == 0 && allowed & ty::INT != 0 {
                    bad.push(float_value(1.5));
                } else if allowed & ty::FRAC == 0 && allowed & ty::INT == 0 {
                    bad.push(float_value(2.5));
                }
                if allowed & ty::BOOL == 0 {
                    bad.push(Value::Bool(true));
                }
                if *root && allowed & ty::NULL == 0 {
                    bad.push(Value::Null);
                }
                if bad.is_empty() {
                    return None;
                }
                let names = ty::names(allowed);
                (
                    Make::Values(bad),
                    viol("type", format!("wrong type where {names} expected")),
                )
            }
            Kind::Null => (
                Make::Values(vec![Value::Null]),
                viol("type", "null where not allowed".into()),
            ),
            Kind::NotInEnum => {
                let c = Self::not_in_enum(s);
                if c.is_empty() {
                    return None;
                }
                (
                    Make::Values(c),
                    viol(s.enum_kw, format!("value outside {}", s.enum_kw)),
                )
            }
            Kind::BelowMin | Kind::AboveMax => {
                let low = matches!(kind, Kind::BelowMin);
                let b = if low { s.num.lo? } else { s.num.hi? };
                let kw = match (low, b.excl) {
                    (true, false) => "minimum",
                    (true, true) => "exclusiveMinimum",
                    (false, false) => "maximum",
                    (false, true) => "exclusiveMaximum",
                };
                let sign: i128 = if low { -1 } else { 1 };
                let mut vals = Vec::new();
                if s.types & ty::INT != 0 {
                    let (ilo, ihi) = s.int_range();
                    let edge = if low { ilo - 1 } else { ihi + 1 };
                    vals.push(int_value(edge));
                    vals.push(int_value(edge + sign * 99));
                } else {
                    let edge = if b.excl {
                        Some(b.v)
                    } else {
                        decimal_step(b.v, sign)
                    };
                    vals.extend(edge.map(float_value));
                    vals.push(float_value(b.v + sign as f64 * 100.5));
                }
                (
                    Make::Values(vals),
                    viol(kw, format!("just past {kw} {}", b.v)),
                )
            }
            Kind::NotMultiple => {
                let m = *s.num.mult.first()?;
                let mut vals = Vec::new();
                if s.types & ty::INT != 0
                    && let Ok(Some(im)) = s.int_multiple()
                    && im > 1
                {
                    let (lo, hi) = s.int_range();
                    let k = super::num::clamp_i(
                        0,
                        super::ir::div_ceil(lo, im),
                        super::ir::div_floor(hi, im),
                    );
                    for v in [k * im + 1, k * im - 1, (k + 1) * im + 1] {
                        if (lo..=hi).contains(&v) {
                            vals.push(int_value(v));
                        }
                    }
                } else {
                    let (lo, hi) = s.float_range();
                    let k = (super::num::clamp_f(0.0, lo, hi) / m).ceil();
                    for x in [(k + 0.5) * m, (k - 0.5) * m, (k + 1.5) * m] {
                        if x >= lo && x <= hi {
                            vals.push(float_value(x));
                        }
                    }
                }
                if vals.is_empty() {
                    return None;
                }
                (
                    Make::Values(vals),
                    viol("multipleOf", format!("not a multiple of {m}")),
                )
            }
            Kind::TooShort => {
                let n = s.str.min.checked_sub(1)?;
                let d = format!("length {n} < minLength {}", s.str.min);
                let make = if n > LONG_STRING {
                    Make::Values(vec![Value::String("a".repeat(usize::try_from(n).ok()?))])
                } else if s.str.format.is_some() || !s.str.patterns.is_empty() {
                    let valid = Self::restricted(s, ty::STR)?;
                    let keep = usize::try_from(n).ok()?;
                    Make::Map(
                        Box::new(Make::Shape(Box::new(valid))),
                        Arc::new(move |v| match v {
                            Value::String(x) => Value::String(x.chars().take(keep).collect()),
                            other => other,
                        }),
                    )
                } else {
                    let mut t = Self::unchecked(s, ty::STR);
                    t.str.min = n;
                    t.str.max = Some(n);
                    Make::Shape(Box::new(t))
                };
                (make, viol("minLength", d))
            }
            Kind::TooLong => {
                let mx = s.str.max?;
                let n = mx.checked_add(1)?;
                let d = format!("length {n} > maxLength {mx}");
                let make = if n > LONG_STRING {
                    Make::Values(vec![Value::String("a".repeat(usize::try_from(n).ok()?))])
                } else if s.str.format.is_some() || !s.str.patterns.is_empty() {
                    let valid = Self::restricted(s, ty::STR)?;
                    let want = usize::try_from(n).ok()?;
                    Make::Map(
                        Box::new(Make::Shape(Box::new(valid))),
                        Arc::new(move |v| match v {
                            Value::String(x) => {
                                let mut cs: Vec<char> = x.chars().collect();
                                let pad = cs.last().copied().unwrap_or('a');
                                while cs.len() < want {
                                    cs.push(pad);
                                }
                                cs.truncate(want);
                                Value::String(cs.into_iter().collect())
                            }
                            other => other,
                        }),
                    )
                } else {
                    let mut t = Self::unchecked(s, ty::STR);
                    t.str.min = n;
                    t.str.max = Some(n);
                    Make::Shape(Box::new(t))
                };
                (make, viol("maxLength", d))
            }
            Kind::PatternMismatch(p) => {
                let c = self.pattern_breakers(s, p);
                if c.is_empty() {
                    return None;
                }
                (
                    Make::Values(c),
                    viol("pattern", format!("does not match pattern {p:?}")),
                )
            }
            Kind::BadFormat(f) => {
                let fv = self.vals.format(f)?;
                let c: Vec<Value> = format::invalid_candidates(f)
                    .iter()
                    .map(|x| Value::String((*x).to_string()))
                    .filter(|v| !fv.is_valid(v))
                    .collect();
                if c.is_empty() {
                    return None;
                }
                (Make::Values(c), viol("format", format!("not a valid {f}")))
            }
            Kind::TooFewItems => {
                let n = s.arr.min.checked_sub(1)?;
                let mut t = Self::unchecked(s, ty::ARR);
                t.arr.min = n;
                t.arr.max = Some(n);
                (
                    Make::Shape(Box::new(t)),
                    viol("minItems", format!("{n} items < minItems {}", s.arr.min)),
                )
            }
            Kind::TooManyItems => {
                let mx = s.arr.max?;
                let n = mx + 1;
                let mut t = Self::unchecked(s, ty::ARR);
                t.arr.min = n;
                t.arr.max = Some(n);
                // Keep uniqueness unless the item domain is too small for it.
                t.arr.unique = s.arr.unique
                    && s.arr
                        .items
                        .as_deref()
                        .and_then(Node::finite_domain)
                        .is_none_or(|d| d.len() as u64 >= n);
                (
                    Make::Shape(Box::new(t)),
                    viol("maxItems", format!("{n} items > maxItems {mx}")),
                )
            }
            Kind::Duplicate => {
                let mut t = Self::unchecked(s, ty::ARR);
                t.arr.unique = false;
                t.arr.min = t.arr.min.max(1);
                (
                    Make::Map(
                        Box::new(Make::Shape(Box::new(t))),
                        Arc::new(|v| match v {
                            Value::Array(mut a) => {
                                if let Some(first) = a.first().cloned() {
                                    if a.len() >= 2 {
                                        a[1] = first;
                                    } else {
                                        a.push(first);
                                    }
                                }
                                Value::Array(a)
                            }
                            other => other,
                        }),
                    ),
                    viol("uniqueItems", "duplicate items".into()),
                )
            }
            Kind::ExtraItem => {
                let n = s.arr.prefix.len() as u64 + 1;
                let mut t = Self::unchecked(s, ty::ARR);
                t.arr.items = None;
                t.arr.min = n;
                t.arr.max = Some(n);
                let d = format!("{n} items where only {} allowed", n - 1);
                // 2020-12 `items: false` fails at the extra item itself; draft-07
                // `additionalItems` at the array.
                let rel = if s.arr.items_kw == "items" {
                    format!("/{}", n - 1)
                } else {
                    String::new()
                };
                (
                    Make::Shape(Box::new(t)),
                    Some((s.arr.items_kw.to_string(), d, rel)),
                )
            }
            Kind::MissingRequired(name) => {
                let mut t = Self::unchecked(s, ty::OBJ);
                t.obj.required.retain(|r| r != name);
                t.obj.dep_req.retain(|(_, d)| !d.contains(name));
                if let Some(slot) = t.obj.props.iter_mut().find(|(k, _)| k == name) {
                    slot.1 = Node::never(super::ir::Never::unsat("removed"));
                }
                (
                    Make::Shape(Box::new(t)),
                    viol("required", format!("missing required property {name:?}")),
                )
            }
            Kind::ExtraProperty => {
                let mut key = String::from("mcp_chaos_extra");
                let mut k = 0;
                while s.obj.prop(&key).is_some()
                    || s.obj
                        .patterns
                        .iter()
                        .any(|(p, _)| self.vals.matches(p, &key) != Some(false))
                {
                    k += 1;
                    key = format!("mcp_chaos_extra_{k}");
                    if k > 8 {
                        return None;
                    }
                }
                let mut t = Self::restricted(s, ty::OBJ)?;
                t.srcs.clear();
                t.needs_check = false;
                let key2 = key.clone();
                (
                    Make::Map(
                        Box::new(Make::Shape(Box::new(t))),
                        Arc::new(move |v| match v {
                            Value::Object(mut m) => {
                                m.insert(key2.clone(), Value::from(1));
                                Value::Object(m)
                            }
                            other => other,
                        }),
                    ),
                    viol(s.obj.additional_kw, format!("extra property {key:?}")),
                )
            }
            Kind::TooFewProps => {
                let n = s.obj.min.checked_sub(1)?;
                if (s.obj.required.len() as u64) > n {
                    return None;
                }
                let mut t = Self::unchecked(s, ty::OBJ);
                t.obj.min = 0;
                t.obj.max = Some(n);
                (
                    Make::Shape(Box::new(t)),
                    viol(
                        "minProperties",
                        format!("{n} properties < minProperties {}", s.obj.min),
                    ),
                )
            }
            Kind::TooManyProps => {
                let mx = s.obj.max?;
                let mut t = Self::unchecked(s, ty::OBJ);
                t.obj.min = mx + 1;
                t.obj.max = None;
                (
                    Make::Shape(Box::new(t)),
                    viol("maxProperties", format!("more than maxProperties {mx}")),
                )
            }
            Kind::MissingDependency { trigger, dep } => {
                let mut t = Self::unchecked(s, ty::OBJ);
                if !t.obj.required.contains(trigger) {
                    t.obj.required.push(trigger.clone());
                }
                t.obj.required.retain(|r| r != dep);
                t.obj.dep_req.clear();
                if let Some(slot) = t.obj.props.iter_mut().find(|(k, _)| k == dep) {
                    slot.1 = Node::never(super::ir::Never::unsat("removed"));
                }
                (
                    Make::Shape(Box::new(t)),
                    viol(s.obj.dep_kw, format!("{trigger:?} present without {dep:?}")),
                )
            }
            Kind::LenEdge(n) => {
                let mut t = Self::restricted(s, ty::STR)?;
                t.str.min = *n;
                t.str.max = Some(*n);
                t.seeds.clear();
                (Make::Shape(Box::new(t)), None)
            }
            Kind::NumEdge(v, _) => (Make::Values(vec![v.clone()]), None),
            Kind::EnumValue(i) => (
                Make::Values(vec![s.enumeration.as_ref()?.get(*i)?.clone()]),
                None,
            ),
            Kind::ItemsEdge(n) => {
                let mut t = Self::restricted(s, ty::ARR)?;
                t.arr.min = *n;
                t.arr.max = Some(*n);
                t.seeds.clear();
                (Make::Shape(Box::new(t)), None)
            }
            Kind::AllOptional => {
                let mut t = Self::restricted(s, ty::OBJ)?;
                for (k, n) in &s.obj.props {
                    if !n.is_never() && !t.obj.required.contains(k) {
                        t.obj.required.push(k.clone());
                    }
                }
                t.seeds.clear();
                (Make::Shape(Box::new(t)), None)
            }
        })
    }

    fn make_strat(&self, m: &Make) -> Option<BoxedStrategy<Value>> {
        match m {
            Make::Values(v) => (!v.is_empty()).then(|| select(v.clone()).boxed()),
            Make::Shape(s) => self.shape(s),
            Make::Map(inner, f) => {
                let f = Arc::clone(f);
                Some(self.make_strat(inner)?.prop_map(move |v| f(v)).boxed())
            }
        }
    }

    fn make_ex(&self, m: &Make) -> Option<Value> {
        match m {
            Make::Values(v) => v.first().cloned(),
            Make::Shape(s) => {
                let v = self.ex_shape(s, 0)?;
                (!s.needs_check || self.vals.check_all(&s.srcs, &v)).then_some(v)
            }
            Make::Map(inner, f) => Some(f(self.make_ex(inner)?)),
        }
    }

    fn label(kind: &Kind, pointer: &str) -> String {
        let at = if pointer.is_empty() {
            "the root"
        } else {
            pointer
        };
        match kind {
            Kind::LenEdge(n) => format!("string of exactly {n} chars at {at}"),
            Kind::NumEdge(v, kw) => format!("{kw} edge {v} at {at}"),
            Kind::EnumValue(i) => format!("enum value #{i} at {at}"),
            Kind::ItemsEdge(n) => format!("array of exactly {n} items at {at}"),
            Kind::AllOptional => format!("all optional properties present at {at}"),
            other => format!("{other:?} at {at}"),
        }
    }

    /// The site as a strategy of `(value, violation or None for a valid edge)`.
    fn site_strat(
        &self,
        node: &Node,
        alts: &[usize],
        steps: &[Step],
        kind: &Kind,
    ) -> Option<BoxedStrategy<(Value, Option<Violation>)>> {
        let s = node.alts.get(*alts.first()?)?;
        let Some(step) = steps.first() else {
            let (make, viol) = self.local(s, kind)?;
            let st = self.make_strat(&make)?;
            let viol = viol.map(|(keyword, description, pointer)| Violation {
                keyword,
                pointer,
                description,
            });
            return Some(
                st.prop_map(move |v| {
                    let d = describe(&v, viol.clone());
                    (v, d)
                })
                .boxed(),
            );
        };
        match step {
            Step::Prop(name) => {
                let parent = self.shape(&Self::restricted(s, ty::OBJ)?)?;
                let child = self.site_strat(s.obj.prop(name)?, &alts[1..], &steps[1..], kind)?;
                let name = name.clone();
                let tok = format!("/{}", escape_token(&name));
                Some(
                    (parent, child)
                        .prop_map(move |(mut p, (bad, viol))| {
                            if let Value::Object(m) = &mut p {
                                m.insert(name.clone(), bad);
                            }
                            (p, viol.map(|v| prefixed(v, &tok)))
                        })
                        .boxed(),
                )
            }
            Step::Item(i) => {
                let mut t = Self::restricted(s, ty::ARR)?;
                t.arr.min = t.arr.min.max(*i as u64 + 1);
                if t.arr.max.is_some_and(|m| m < t.arr.min) {
                    return None;
                }
                let parent = self.shape(&t)?;
                let child_node = s.arr.prefix.get(*i).or(s.arr.items.as_deref())?;
                let child = self.site_strat(child_node, &alts[1..], &steps[1..], kind)?;
                let i = *i;
                let tok = format!("/{i}");
                Some(
                    (parent, child)
                        .prop_map(move |(mut p, (bad, viol))| {
                            if let Value::Array(a) = &mut p {
                                if i < a.len() {
                                    a[i] = bad;
                                } else if i == a.len() {
                                    a.push(bad);
                                }
                            }
                            (p, viol.map(|v| prefixed(v, &tok)))
                        })
                        .boxed(),
                )
            }
        }
    }

    /// The site realised deterministically.
    fn site_ex(
        &self,
        node: &Node,
        alts: &[usize],
        steps: &[Step],
        kind: &Kind,
    ) -> Option<(Value, Option<Violation>)> {
        let s = node.alts.get(*alts.first()?)?;
        let Some(step) = steps.first() else {
            let (make, viol) = self.local(s, kind)?;
            let v = self.make_ex(&make)?;
            let viol = viol.map(|(keyword, description, pointer)| Violation {
                keyword,
                pointer,
                description,
            });
            let viol = describe(&v, viol);
            return Some((v, viol));
        };
        match step {
            Step::Prop(name) => {
                let t = Self::restricted(s, ty::OBJ)?;
                let mut p = self.ex_shape(&t, 0)?;
                let (bad, viol) = self.site_ex(s.obj.prop(name)?, &alts[1..], &steps[1..], kind)?;
                if let Value::Object(m) = &mut p {
                    m.insert(name.clone(), bad);
                }
                Some((
                    p,
                    viol.map(|v| prefixed(v, &format!("/{}", escape_token(name)))),
                ))
            }
            Step::Item(i) => {
                let mut t = Self::restricted(s, ty::ARR)?;
                t.arr.min = t.arr.min.max(*i as u64 + 1);
                if t.arr.max.is_some_and(|m| m < t.arr.min) {
                    return None;
                }
                let mut p = self.ex_shape(&t, 0)?;
                let child_node = s.arr.prefix.get(*i).or(s.arr.items.as_deref())?;
                let (bad, viol) = self.site_ex(child_node, &alts[1..], &steps[1..], kind)?;
                if let Value::Array(a) = &mut p {
                    if *i < a.len() {
                        a[*i] = bad;
                    } else {
                        a.push(bad);
                    }
                }
                Some((p, viol.map(|v| prefixed(v, &format!("/{i}")))))
            }
        }
    }

    /// `true` if the validator rejects `v` and names `viol`'s keyword at its location.
    pub(crate) fn confirms(&self, v: &Value, viol: &Violation) -> bool {
        if !is_loopback_safe(v) || self.vals.is_valid(v) {
            return false;
        }
        let names = reported_as(&viol.keyword);
        let prop = viol
            .description
            .strip_prefix("missing required property ")
            .and_then(|q| serde_json::from_str::<String>(q).ok())
            .or_else(|| {
                viol.description
                    .split_once(" present without ")
                    .and_then(|(_, d)| serde_json::from_str::<String>(d).ok())
            });
        self.vals.errors(v).iter().any(|e| {
            names.contains(&e.keyword.as_str())
                && e.pointer == viol.pointer
                && (e.keyword != "required" || prop.is_none() || e.property == prop)
        })
    }

    /// The invalid-case strategy: a union over every confirmable site.
    pub(crate) fn invalid_strategy(
        self: &Arc<Self>,
        root: &Node,
        notes: &mut Vec<Note>,
    ) -> Result<BoxedStrategy<(Value, Violation)>, GenError> {
        // Every property has a wrong-type and a null site; weight them down so the other
        // constraints get their share.
        let mut parts: Vec<(u32, BoxedStrategy<(Value, Violation)>)> = Vec::new();
        for (idx, site) in self.sites(root, false).into_iter().enumerate() {
            if self.opts.past_deadline() {
                self.budget_note(
                    "",
                    "invalid",
                    format!("invalid case sites: the generation deadline passed after {idx}"),
                );
                break;
            }
            let Some(st) = self.site_strat(root, &site.alts, &site.steps, &site.kind) else {
                continue;
            };
            let st = st
                .prop_map(|(v, viol)| {
                    (
                        v,
                        viol.unwrap_or_else(|| Violation {
                            keyword: String::new(),
                            pointer: String::new(),
                            description: String::new(),
                        }),
                    )
                })
                .boxed();
            let me = Arc::clone(self);
            let checked = Checked::new(
                st,
                Arc::new(move |(v, viol): &(Value, Violation)| me.confirms(v, viol)),
                16,
                OnExhaust::Soft,
                "invalid site",
            );
            // Keep the site only if the validator confirms it at least once.
            let mut runner = TestRunner::new_with_rng(
                Config::default(),
                TestRng::from_seed(
                    proptest::test_runner::RngAlgorithm::ChaCha,
                    &seed_bytes(idx as u64),
                ),
            );
            let ok = checked.new_tree(&mut runner).is_ok_and(|tree| {
                use proptest::strategy::ValueTree;
                let (v, viol) = tree.current();
                self.confirms(&v, &viol)
            });
            if ok {
                let w = match site.kind {
                    Kind::WrongType { root: true } => 4,
                    Kind::WrongType { .. } | Kind::Null => 1,
                    _ => 4,
                };
                parts.push((w, checked.boxed()));
            } else {
                notes.push(Note {
                    pointer: pointer_of(&site.steps),
                    keyword: format!("{:?}", site.kind),
                    kind: NoteKind::SiteDropped,
                    message: "no generated value was confirmed by the validator".into(),
                });
            }
        }
        if parts.is_empty() {
            return Err(GenError::NoInvalidCases {
                reason: "no constraint of the schema could be broken in a confirmed way".into(),
            });
        }
        let me = Arc::clone(self);
        Ok(Checked::new(
            Union::new_weighted(parts).boxed(),
            Arc::new(move |(v, viol): &(Value, Violation)| me.confirms(v, viol)),
            self.opts.filter_budget,
            OnExhaust::Hard,
            "invalid case",
        )
        .boxed())
    }

    /// The deterministic boundary cases.
    pub(crate) fn boundary_cases(&self, root: &Node, example: Option<Value>) -> Vec<Case> {
        let mut out: Vec<Case> = Vec::new();
        if let Some(e) = example {
            out.push(Case::Valid {
                value: e,
                label: "example: required properties only".into(),
            });
        }
        for (idx, site) in self.sites(root, true).into_iter().enumerate() {
            if self.opts.past_deadline() {
                self.budget_note(
                    "",
                    "boundary",
                    format!("boundary case sites: the generation deadline passed after {idx}"),
                );
                break;
            }
            let Some((v, viol)) = self.site_ex(root, &site.alts, &site.steps, &site.kind) else {
                continue;
            };
            let case = match viol {
                None => {
                    if !(is_loopback_safe(&v) && self.vals.is_valid(&v)) {
                        continue;
                    }
                    Case::Valid {
                        label: Self::label(&site.kind, &pointer_of(&site.steps)),
                        value: v,
                    }
                }
                Some(viol) => {
                    if !self.confirms(&v, &viol) {
                        continue;
                    }
                    Case::Invalid {
                        value: v,
                        violation: viol,
                    }
                }
            };
            if !out.iter().any(|c| c == &case) {
                out.push(case);
            }
        }
        out
    }
}

/// Names the offending type in a `type` violation's description.
fn describe(v: &Value, viol: Option<Violation>) -> Option<Violation> {
    viol.map(|mut x| {
        if x.keyword == "type" && x.description.starts_with("wrong type") {
            x.description = format!("{}: {}", type_name(v), x.description);
        }
        x
    })
}

fn prefixed(v: Violation, tok: &str) -> Violation {
    Violation {
        pointer: format!("{tok}{}", v.pointer),
        ..v
    }
}

/// 32 seed bytes from a number (deterministic runners).
pub(crate) fn seed_bytes(n: u64) -> [u8; 32] {
    let mut b = [0u8; 32];
    b[..8].copy_from_slice(&n.to_le_bytes());
    b[8..16].copy_from_slice(&0x6d63_705f_6368_616f_u64.to_le_bytes());
    b
}
