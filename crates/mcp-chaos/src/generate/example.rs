//! Deterministic small instances of lowered shapes (no RNG): required properties only, the
//! first `enum` value, the shortest string, the number nearest zero, `minItems` items.
//!
//! `variant` makes distinct siblings (for `uniqueItems`): the k-th variant of a string uses
//! another character, of a number another multiple, and so on.

use serde_json::{Map, Value};

use super::format;
use super::ir::{Node, Shape, all_unique, div_ceil, div_floor, json_eq, ty};
use super::num::{clamp_f, clamp_i, float_value, int_value, mul_decimal};
use super::regex::{fit_length, witness};
use super::strategy::Ctx;

impl Ctx {
    /// The first alternative's example that passes the alternative's own checks.
    pub fn ex_node(&self, n: &Node, variant: usize) -> Option<Value> {
        n.alts.iter().find_map(|s| {
            let v = self.ex_shape(s, variant)?;
            (!s.needs_check || self.vals.check_all(&s.srcs, &v)).then_some(v)
        })
    }

    /// An example of one shape.
    pub fn ex_shape(&self, s: &Shape, variant: usize) -> Option<Value> {
        if let Some(e) = &s.enumeration {
            return (!e.is_empty()).then(|| e[variant % e.len()].clone());
        }
        for bit in [
            ty::OBJ,
            ty::STR,
            ty::INT,
            ty::FRAC,
            ty::ARR,
            ty::BOOL,
            ty::NULL,
        ] {
            if s.types & bit == 0 {
                continue;
            }
            let v = match bit {
                ty::NULL => Some(Value::Null),
                ty::BOOL => Some(Value::Bool(variant % 2 == 1)),
                ty::INT => self.ex_int(s, variant),
                ty::FRAC => self.ex_frac(s, variant),
                ty::STR => self.ex_string(s, None, variant).map(Value::String),
                ty::ARR => self.ex_array(s, None, variant),
                _ => self.ex_object(s, variant),
            };
            if v.is_some() {
                return v;
            }
        }
        None
    }

    fn ex_int(&self, s: &Shape, variant: usize) -> Option<Value> {
        let (lo, hi) = s.int_range();
        let m = match s.int_multiple() {
            Ok(Some(m)) if m > 0 => m,
            _ => 1,
        };
        let (klo, khi) = (div_ceil(lo, m), div_floor(hi, m));
        if klo > khi {
            return None;
        }
        let k = clamp_i(0, klo, khi);
        let v = i128::try_from(variant).ok()?;
        let k = if k + v <= khi { k + v } else { k - v };
        (k >= klo).then(|| int_value(k * m))
    }

    fn ex_frac(&self, s: &Shape, variant: usize) -> Option<Value> {
        let (lo, hi) = s.float_range();
        let v = variant as f64;
        if let Some(&m) = s.num.mult.first() {
            let klo = (lo / m).ceil();
            let khi = (hi / m).floor();
            if klo > khi {
                return None;
            }
            let k = clamp_f(0.0, klo, khi) + v;
            let k = if k <= khi { k } else { khi - v };
            return mul_decimal(k as i128, m).map(float_value);
        }
        let x = clamp_f(0.5 + v, lo, hi);
        let x = if x.fract() == 0.0 && lo < hi {
            clamp_f(lo / 2.0 + hi / 2.0, lo, hi)
        } else {
            x
        };
        Some(float_value(x))
    }

    /// A string of the shape, of exactly `len` chars when given.
    pub fn ex_string(&self, s: &Shape, len: Option<u64>, variant: usize) -> Option<String> {
        let (min, max) = match len {
            Some(n) => (n, Some(n)),
            None => (s.str.min, s.str.max),
        };
        let fits = |x: &str| {
            let n = x.chars().count() as u64;
            n >= min && max.is_none_or(|m| n <= m)
        };
        if let Some(f) = &s.str.format
            && let Some(mut x) = format::example(f, &self.base)
        {
            if variant > 0 {
                x = vary_format(f, &x, variant);
            }
            return fits(&x).then_some(x);
        }
        if let Some(p) = s.str.patterns.first()
            && let Ok(pat) = self.pattern(p)
        {
            let rx = fit_length(
                &pat.rx,
                min,
                max.unwrap_or(u64::MAX),
                self.opts.max_string_len,
            )?;
            // Try a few variants: the plain witness may fail a lookaround or a second pattern.
            for k in 0..8 {
                if let Some(w) = witness(&rx, variant + k)
                    && fits(&w)
                    && s.str
                        .patterns
                        .iter()
                        .all(|q| self.vals.matches(q, &w) != Some(false))
                {
                    return Some(w);
                }
            }
            return None;
        }
        // A path-named string keeps a plain example; path-shaped values come in its
        // generated cases.
        if let Some(h) = s.hint.filter(|h| *h != format::Hint::Path) {
            let mut x = format::hint_example(h, &self.base);
            if variant > 0 {
                x = vary_format("uri", &x, variant);
            }
            if fits(&x) {
                return Some(x);
            }
        }
        let n = if len.is_some() {
            min
        } else {
            min.max(1).min(max.unwrap_or(u64::MAX))
        };
        if n > self.opts.size_cap {
            return None;
        }
        let c = char::from(b'a' + (variant % 26) as u8);
        let mut out: String = std::iter::repeat_n(c, usize::try_from(n).ok()?).collect();
        if variant >= 26 && n > 0 {
            out.pop();
            out.push_str(&(variant / 26).to_string());
            let k = out.chars().count() as u64;
            if k != n {
                return None;
            }
        }
        Some(out)
    }

    /// An array of the shape, of exactly `len` items when given.
    pub fn ex_array(&self, s: &Shape, len: Option<u64>, variant: usize) -> Option<Value> {
        let a = &s.arr;
        let n = len.unwrap_or(a.min);
        let n = usize::try_from(n).ok()?;
        if n as u64 > self.opts.size_cap {
            return None;
        }
        let mut out: Vec<Value> = Vec::with_capacity(n);
        for i in 0..n.min(a.prefix.len()) {
            out.push(self.ex_node(&a.prefix[i], variant)?);
        }
        if n > a.prefix.len() {
            let mut k = 0usize;
            if let Some(c) = a.contains.first() {
                for j in 0..usize::try_from(c.min).ok()? {
                    if out.len() < n {
                        out.push(self.ex_node(&c.node, variant + j)?);
                    }
                }
            }
            while out.len() < n {
                let v = match a.items.as_deref() {
                    None => Value::from(i64::try_from(k + variant).ok()?),
                    Some(node) => self.ex_node(node, variant + k)?,
                };
                if a.unique && out.iter().any(|w| json_eq(w, &v)) {
                    k += 1;
                    if k > n + 64 {
                        return None;
                    }
                    continue;
                }
                out.push(v);
                k += 1;
            }
        }
        if a.unique && !all_unique(&out) {
            return None;
        }
        Some(Value::Array(out))
    }

    /// An object with the required properties (plus `dependentRequired` closure and enough
    /// optional ones for `minProperties`).
    pub fn ex_object(&self, s: &Shape, variant: usize) -> Option<Value> {
        let o = &s.obj;
        let mut m = Map::new();
        let mut want: Vec<String> = o.required.clone();
        let mut i = 0;
        while i < want.len() {
            let k = want[i].clone();
            for (t, deps) in &o.dep_req {
                if *t == k {
                    for d in deps {
                        if !want.contains(d) {
                            want.push(d.clone());
                        }
                    }
                }
            }
            i += 1;
        }
        for (name, node) in &o.props {
            if want.contains(name) {
                m.insert(name.clone(), self.ex_node(node, variant)?);
            }
        }
        for name in &want {
            if !m.contains_key(name) {
                return None;
            }
        }
        let min = usize::try_from(o.min).ok()?;
        if m.len() < min {
            for (name, node) in &o.props {
                if m.len() >= min {
                    break;
                }
                if m.contains_key(name) || node.is_never() {
                    continue;
                }
                let trig = o.dep_req.iter().find(|(t, _)| t == name);
                if trig.is_some_and(|(_, d)| d.iter().any(|x| !m.contains_key(x))) {
                    continue;
                }
                if let Some(v) = self.ex_node(node, variant) {
                    m.insert(name.clone(), v);
                }
            }
        }
        let extra_ok = o.additional.as_deref().is_none_or(|n| !n.is_never());
        let mut k = 0;
        while m.len() < min && extra_ok && k < min + 8 {
            let key = o
                .names
                .as_deref()
                .and_then(|n| self.ex_node(&n.strings_only(), k + 1))
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_else(|| format!("extra{k}"));
            k += 1;
            if m.contains_key(&key) || o.prop(&key).is_some() {
                continue;
            }
            let v = match o.additional.as_deref() {
                None => Value::Null,
                Some(n) => self.ex_node(n, variant)?,
            };
            m.insert(key, v);
        }
        Some(Value::Object(m))
    }
}

fn vary_format(f: &str, x: &str, variant: usize) -> String {
    match f {
        "uri" | "uri-reference" | "iri" | "iri-reference" | "url" | "uri-template" => {
            format!("{}v{variant}", x.trim_end_matches("{id}"))
        }
        "email" | "idn-email" => format!("user{variant}@localhost"),
        "date" => format!("2024-01-{:02}", 1 + variant % 28),
        "date-time" => format!("2024-01-{:02}T00:00:00Z", 1 + variant % 28),
        "time" => format!("00:00:{:02}Z", variant % 60),
        "ipv4" => format!("127.0.0.{}", 1 + variant % 254),
        "uuid" => format!("00000000-0000-4000-8000-{variant:012x}"),
        "json-pointer" => format!("/a{variant}"),
        "duration" => format!("P{}D", 1 + variant),
        "hostname" | "idn-hostname" => {
            if variant % 2 == 1 {
                "127.0.0.1".into()
            } else {
                "localhost".into()
            }
        }
        _ => x.to_string(),
    }
}
