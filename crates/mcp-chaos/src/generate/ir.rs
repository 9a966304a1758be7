//! The intermediate form a schema is lowered to before strategies are built.
//!
//! A [`Node`] is a disjunction of [`Shape`]s; a shape is a conjunction of per-type constraints
//! (JSON Schema's keywords are conjunctive, `anyOf`/`oneOf`/`if` distribute over them). An
//! empty node is unsatisfiable and says why in [`Never`].

use std::sync::Arc;

use serde_json::Value;

use super::format::Hint;

/// JSON types as bits; `INT | FRAC` is JSON Schema's `number`.
pub(crate) mod ty {
    pub const NULL: u8 = 1;
    pub const BOOL: u8 = 2;
    /// Integer-valued numbers.
    pub const INT: u8 = 4;
    /// Numbers with a fractional part.
    pub const FRAC: u8 = 8;
    pub const STR: u8 = 16;
    pub const ARR: u8 = 32;
    pub const OBJ: u8 = 64;
    pub const NUM: u8 = INT | FRAC;
    pub const ALL: u8 = 127;

    /// The bits of a `type` keyword name.
    pub fn from_name(s: &str) -> u8 {
        match s {
            "null" => NULL,
            "boolean" => BOOL,
            "integer" => INT,
            "number" => NUM,
            "string" => STR,
            "array" => ARR,
            "object" => OBJ,
            _ => 0,
        }
    }

    /// The JSON Schema names of the bits, for messages.
    pub fn names(bits: u8) -> String {
        let mut v = Vec::new();
        for (b, n) in [
            (NULL, "null"),
            (BOOL, "boolean"),
            (STR, "string"),
            (ARR, "array"),
            (OBJ, "object"),
        ] {
            if bits & b != 0 {
                v.push(n);
            }
        }
        if bits & NUM == NUM {
            v.push("number");
        } else if bits & INT != 0 {
            v.push("integer");
        } else if bits & FRAC != 0 {
            v.push("non-integer number");
        }
        v.join(", ")
    }
}

/// The type bit of a value.
pub(crate) fn type_of(v: &Value) -> u8 {
    match v {
        Value::Null => ty::NULL,
        Value::Bool(_) => ty::BOOL,
        Value::Number(n) => {
            if n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0) {
                ty::INT
            } else {
                ty::FRAC
            }
        }
        Value::String(_) => ty::STR,
        Value::Array(_) => ty::ARR,
        Value::Object(_) => ty::OBJ,
    }
}

/// JSON equality as JSON Schema defines it (`1 == 1.0`).
pub(crate) fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            if let (Some(p), Some(q)) = (x.as_i64(), y.as_i64()) {
                p == q
            } else if let (Some(p), Some(q)) = (x.as_u64(), y.as_u64()) {
                p == q
            } else {
                x.as_f64() == y.as_f64()
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_eq(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

/// `true` if no two items are [`json_eq`].
pub(crate) fn all_unique(items: &[Value]) -> bool {
    for (i, a) in items.iter().enumerate() {
        if items[i + 1..].iter().any(|b| json_eq(a, b)) {
            return false;
        }
    }
    true
}

/// Escapes one JSON pointer token (`~` → `~0`, `/` → `~1`).
pub(crate) fn escape_token(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

/// Why a node has no instances.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum NeverKind {
    /// Provably unsatisfiable.
    Unsatisfiable,
    /// A forced size above the cap.
    TooLarge {
        pointer: String,
        keyword: String,
        requested: u64,
        cap: u64,
    },
    /// Only non-loopback values would do.
    Unsafe { pointer: String, value: String },
    /// Budgets (recursion cut, node budget).
    TooComplex,
}

/// An unsatisfiable node's reason.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Never {
    pub kind: NeverKind,
    pub reason: String,
}

impl Never {
    pub fn unsat(reason: impl Into<String>) -> Self {
        Self {
            kind: NeverKind::Unsatisfiable,
            reason: reason.into(),
        }
    }
    pub fn complex(reason: impl Into<String>) -> Self {
        Self {
            kind: NeverKind::TooComplex,
            reason: reason.into(),
        }
    }
    /// Ranks reasons: when several alternatives fail, report the most specific.
    pub fn rank(&self) -> u8 {
        match self.kind {
            NeverKind::Unsafe { .. } => 4,
            NeverKind::TooLarge { .. } => 3,
            NeverKind::TooComplex => 2,
            NeverKind::Unsatisfiable => 1,
        }
    }
}

/// A disjunction of shapes; empty = no instance (`never` says why).
#[derive(Debug, Clone, Default)]
pub(crate) struct Node {
    pub alts: Vec<Shape>,
    pub never: Option<Never>,
}

impl Node {
    /// The `true` schema.
    pub fn any() -> Self {
        Self {
            alts: vec![Shape::any()],
            never: None,
        }
    }
    pub fn never(n: Never) -> Self {
        Self {
            alts: Vec::new(),
            never: Some(n),
        }
    }
    pub fn single(s: Shape) -> Self {
        Self {
            alts: vec![s],
            never: None,
        }
    }
    pub fn is_never(&self) -> bool {
        self.alts.is_empty()
    }
    /// `true` if this is the unconstrained schema.
    pub fn is_any(&self) -> bool {
        self.alts.len() == 1 && self.alts[0].is_any()
    }
    /// The reason, or a generic one.
    pub fn never_reason(&self) -> Never {
        self.never
            .clone()
            .unwrap_or_else(|| Never::unsat("no alternative is satisfiable"))
    }
    /// The node restricted to strings (for `propertyNames`, which only sees strings).
    pub fn strings_only(&self) -> Self {
        let alts: Vec<Shape> = self
            .alts
            .iter()
            .filter(|a| a.types & ty::STR != 0)
            .map(|a| {
                let mut b = a.clone();
                b.types = ty::STR;
                if let Some(e) = &mut b.enumeration {
                    e.retain(Value::is_string);
                }
                b.seeds.retain(Value::is_string);
                b
            })
            .filter(|a| a.enumeration.as_ref().is_none_or(|e| !e.is_empty()))
            .collect();
        Self {
            never: alts.is_empty().then(|| Never::unsat("no string allowed")),
            alts,
        }
    }

    /// A finite list of the node's possible values, if it has one (enums, booleans, null).
    pub fn finite_domain(&self) -> Option<Vec<Value>> {
        let mut out: Vec<Value> = Vec::new();
        for s in &self.alts {
            let vals = if let Some(e) = &s.enumeration {
                e.clone()
            } else if s.types & ty::INT != 0
                && s.types & !(ty::NULL | ty::BOOL | ty::INT) == 0
                && s.num.mult.is_empty()
                && !s.needs_check
            {
                // Small integer ranges are finite too (plus null/booleans if allowed).
                let (lo, hi) = s.int_range();
                if hi < lo || hi - lo >= 64 {
                    return None;
                }
                let mut v: Vec<Value> = (lo..=hi).map(super::num::int_value).collect();
                if s.types & ty::NULL != 0 {
                    v.push(Value::Null);
                }
                if s.types & ty::BOOL != 0 {
                    v.push(Value::Bool(false));
                    v.push(Value::Bool(true));
                }
                v
            } else if s.types & !(ty::NULL | ty::BOOL) == 0 {
                let mut v = Vec::new();
                if s.types & ty::NULL != 0 {
                    v.push(Value::Null);
                }
                if s.types & ty::BOOL != 0 {
                    v.push(Value::Bool(false));
                    v.push(Value::Bool(true));
                }
                v
            } else {
                return None;
            };
            for v in vals {
                if !out.iter().any(|w| json_eq(w, &v)) {
                    out.push(v);
                }
            }
        }
        Some(out)
    }
}

/// A numeric bound.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Bound {
    pub v: f64,
    pub excl: bool,
}

/// Numeric constraints (`minimum`, `exclusiveMinimum`, `maximum`, `exclusiveMaximum`,
/// `multipleOf`).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct NumC {
    pub lo: Option<Bound>,
    pub hi: Option<Bound>,
    pub mult: Vec<f64>,
}

/// String constraints (`minLength`, `maxLength`, `pattern`, `format`).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct StrC {
    pub min: u64,
    pub max: Option<u64>,
    pub patterns: Vec<String>,
    pub format: Option<String>,
}

/// `contains` with its `minContains`/`maxContains`.
#[derive(Debug, Clone)]
pub(crate) struct ContainsC {
    pub node: Node,
    pub min: u64,
    pub max: Option<u64>,
}

/// Array constraints.
#[derive(Debug, Clone, Default)]
pub(crate) struct ArrC {
    /// `prefixItems` (draft-07: `items` as an array).
    pub prefix: Vec<Node>,
    /// `items` (draft-07: `additionalItems` after a tuple); `None` = anything.
    pub items: Option<Box<Node>>,
    /// The keyword that forbids extra items when `items` is never (`items` or
    /// `additionalItems`).
    pub items_kw: &'static str,
    pub min: u64,
    pub max: Option<u64>,
    pub unique: bool,
    pub contains: Vec<ContainsC>,
}

/// Object constraints.
#[derive(Debug, Clone, Default)]
pub(crate) struct ObjC {
    pub props: Vec<(String, Node)>,
    pub required: Vec<String>,
    /// `additionalProperties` (or `unevaluatedProperties`); `None` = anything.
    pub additional: Option<Box<Node>>,
    pub additional_kw: &'static str,
    pub patterns: Vec<(String, Node)>,
    pub names: Option<Box<Node>>,
    pub min: u64,
    pub max: Option<u64>,
    /// `dependentRequired` (draft-07: `dependencies` with arrays).
    pub dep_req: Vec<(String, Vec<String>)>,
    pub dep_kw: &'static str,
}

impl ObjC {
    pub fn prop(&self, name: &str) -> Option<&Node> {
        self.props.iter().find(|(k, _)| k == name).map(|(_, n)| n)
    }
}

/// One conjunctive alternative.
#[derive(Debug, Clone)]
pub(crate) struct Shape {
    pub types: u8,
    /// `enum`/`const` values still possible.
    pub enumeration: Option<Vec<Value>>,
    /// `"enum"` or `"const"`.
    pub enum_kw: &'static str,
    pub num: NumC,
    pub str: StrC,
    pub arr: ArrC,
    pub obj: ObjC,
    /// Subschema locations whose validators this shape's values must pass.
    pub srcs: Vec<Arc<str>>,
    /// Filter candidates through `srcs` (keywords not constructed).
    pub needs_check: bool,
    /// `default`/`examples` values (filtered before use).
    pub seeds: Vec<Value>,
    /// What the property name suggests, for strings.
    pub hint: Option<Hint>,
    /// Schema location for messages.
    pub loc: Arc<str>,
    /// Keywords of this shape that another one contradicted: the first reason, if any.
    pub dead: Option<Never>,
}

impl Shape {
    /// The `true` schema.
    pub fn any() -> Self {
        Self {
            types: ty::ALL,
            enumeration: None,
            enum_kw: "enum",
            num: NumC::default(),
            str: StrC::default(),
            arr: ArrC {
                items_kw: "items",
                ..ArrC::default()
            },
            obj: ObjC {
                additional_kw: "additionalProperties",
                dep_kw: "dependentRequired",
                ..ObjC::default()
            },
            srcs: Vec::new(),
            needs_check: false,
            seeds: Vec::new(),
            hint: None,
            loc: Arc::from(""),
            dead: None,
        }
    }

    /// `true` if nothing constrains this shape.
    pub fn is_any(&self) -> bool {
        self.types == ty::ALL
            && self.enumeration.is_none()
            && self.num == NumC::default()
            && self.str == StrC::default()
            && self.arr.prefix.is_empty()
            && self.arr.items.is_none()
            && self.arr.min == 0
            && self.arr.max.is_none()
            && !self.arr.unique
            && self.arr.contains.is_empty()
            && self.obj.props.is_empty()
            && self.obj.required.is_empty()
            && self.obj.additional.is_none()
            && self.obj.patterns.is_empty()
            && self.obj.names.is_none()
            && self.obj.min == 0
            && self.obj.max.is_none()
            && self.obj.dep_req.is_empty()
            && !self.needs_check
    }

    /// Integer range `[lo, hi]` implied by the numeric bounds (clamped to `i64`).
    pub fn int_range(&self) -> (i128, i128) {
        let lo = match self.num.lo {
            None => i128::from(i64::MIN),
            Some(b) => {
                let c = b.v.ceil();
                let c = if b.excl && c == b.v { c + 1.0 } else { c };
                if c <= i64::MIN as f64 {
                    i128::from(i64::MIN)
                } else if c >= i64::MAX as f64 {
                    i128::from(i64::MAX) + 1
                } else {
                    c as i128
                }
            }
        };
        let hi = match self.num.hi {
            None => i128::from(i64::MAX),
            Some(b) => {
                let f = b.v.floor();
                let f = if b.excl && f == b.v { f - 1.0 } else { f };
                if f >= i64::MAX as f64 {
                    i128::from(i64::MAX)
                } else if f <= i64::MIN as f64 {
                    i128::from(i64::MIN) - 1
                } else {
                    f as i128
                }
            }
        };
        (lo, hi)
    }

    /// Float range `[lo, hi]` (exclusive bounds stepped by one ulp); unbounded sides are
    /// `±f64::MAX`.
    pub fn float_range(&self) -> (f64, f64) {
        let lo = self
            .num
            .lo
            .map_or(-f64::MAX, |b| if b.excl { b.v.next_up() } else { b.v });
        let hi = self
            .num
            .hi
            .map_or(f64::MAX, |b| if b.excl { b.v.next_down() } else { b.v });
        (lo, hi)
    }

    /// The integer step all integers must be a multiple of, if `multipleOf` gives one.
    /// `Err(())` if some `multipleOf` has no integer multiple we can find.
    pub fn int_multiple(&self) -> Result<Option<i128>, ()> {
        let mut acc: Option<i128> = None;
        for &m in &self.num.mult {
            let mut found = None;
            for k in 1..=10_000i128 {
                let Some(v) = super::num::mul_decimal(k, m) else {
                    break;
                };
                if v.fract() == 0.0 && v.abs() < 9.0e15 {
                    found = Some(v as i128);
                    break;
                }
            }
            let f = found.ok_or(())?;
            acc = Some(match acc {
                None => f,
                Some(a) => lcm(a, f).ok_or(())?,
            });
        }
        Ok(acc)
    }
}

fn gcd(a: i128, b: i128) -> i128 {
    if b == 0 { a.abs() } else { gcd(b, a % b) }
}

fn lcm(a: i128, b: i128) -> Option<i128> {
    let g = gcd(a, b);
    if g == 0 {
        return Some(0);
    }
    (a / g).checked_mul(b).map(i128::abs)
}

/// Floor and ceiling division for the multiple ranges.
pub(crate) fn div_floor(a: i128, b: i128) -> i128 {
    let q = a / b;
    if (a % b != 0) && ((a < 0) != (b < 0)) {
        q - 1
    } else {
        q
    }
}

/// See [`div_floor`].
pub(crate) fn div_ceil(a: i128, b: i128) -> i128 {
    let q = a / b;
    if (a % b != 0) && ((a < 0) == (b < 0)) {
        q + 1
    } else {
        q
    }
}
