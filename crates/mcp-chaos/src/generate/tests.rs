//! Unit tests of the generators: one block per keyword family, shrinking, unsatisfiability,
//! the loopback rule, the `$ref` recursion bound and hostile schemas.

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, TestError, TestRunner};
use serde_json::{Value, json};

use super::*;

fn generator(schema: &Value) -> Generator {
    Generator::new(schema, &GenOptions::default())
        .unwrap_or_else(|e| panic!("generator for {schema}: {e}"))
}

/// `n` valid values, each checked by the generator's validator.
fn values(schema: &Value, n: usize) -> Vec<Value> {
    values_with(schema, n, &GenOptions::default())
}

fn values_with(schema: &Value, n: usize, opts: &GenOptions) -> Vec<Value> {
    let g = Generator::new(schema, opts).unwrap_or_else(|e| panic!("generator for {schema}: {e}"));
    let s = g.valid().expect("valid strategy");
    let mut runner = TestRunner::deterministic();
    (0..n)
        .map(|_| {
            let v = s.new_tree(&mut runner).expect("value").current();
            assert!(g.is_valid(&v), "invalid value {v} for {schema}");
            v
        })
        .collect()
}

/// A URL under one of the default base's loopback spellings.
fn default_base_url(s: &str) -> bool {
    [
        "http://127.0.0.1:9/",
        "https://127.0.0.1:9/",
        "http://localhost:9/",
        "http://[::1]:9/",
    ]
    .iter()
    .any(|b| s.starts_with(b))
}

fn strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        Value::Object(m) => m.iter().for_each(|(k, x)| {
            out.push(k.clone());
            strings(x, out);
        }),
        _ => {}
    }
}

fn err(schema: &Value) -> GenError {
    match Generator::new(schema, &GenOptions::default()) {
        Ok(g) => panic!("expected an error for {schema}, got {g:?}"),
        Err(e) => e,
    }
}

/// The minimal failing value proptest finds for `pred` over `schema`'s valid values.
fn shrunk(schema: &Value, fails: impl Fn(&Value) -> bool) -> Value {
    let s = generator(schema).valid().expect("strategy");
    let mut runner = TestRunner::new(Config {
        cases: 5000,
        failure_persistence: None,
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

// ---------------------------------------------------------------------------------------
// Keywords.

#[test]
fn type_single_and_arrays() {
    for (t, check) in [
        ("string", Value::is_string as fn(&Value) -> bool),
        ("integer", |v: &Value| v.is_i64() || v.is_u64()),
        ("number", Value::is_number),
        ("boolean", Value::is_boolean),
        ("null", Value::is_null),
        ("array", Value::is_array),
        ("object", Value::is_object),
    ] {
        for v in values(&json!({ "type": t }), 200) {
            assert!(check(&v), "{t}: {v}");
        }
    }
    let vs = values(&json!({"type": ["string", "null"]}), 300);
    assert!(vs.iter().any(Value::is_null) && vs.iter().any(Value::is_string));
    assert!(vs.iter().all(|v| v.is_null() || v.is_string()));
}

#[test]
fn enum_and_const() {
    let vs = values(&json!({"enum": ["a", 1, null, {"x": [1]}]}), 300);
    for want in [json!("a"), json!(1), Value::Null, json!({"x": [1]})] {
        assert!(vs.contains(&want), "{want} never generated");
    }
    assert!(
        values(&json!({"const": {"k": 2}}), 20)
            .iter()
            .all(|v| *v == json!({"k": 2}))
    );
    // enum values of the wrong type are dropped, not emitted.
    let vs = values(&json!({"type": "string", "enum": ["x", 1, "y"]}), 200);
    assert!(vs.iter().all(Value::is_string));
}

#[test]
fn numeric_bounds_and_multiples() {
    let vs = values(&json!({"type": "integer", "minimum": 5, "maximum": 9}), 300);
    assert!(
        vs.iter()
            .all(|v| (5..=9).contains(&v.as_i64().unwrap_or(-1)))
    );
    assert!(
        vs.contains(&json!(5)) && vs.contains(&json!(9)),
        "edges are hit"
    );
    let vs = values(
        &json!({"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1}),
        300,
    );
    assert!(
        vs.iter()
            .all(|v| v.as_f64().is_some_and(|x| x > 0.0 && x < 1.0))
    );
    let vs = values(
        &json!({"type": "integer", "multipleOf": 7, "minimum": -50, "maximum": 50}),
        200,
    );
    assert!(vs.iter().all(|v| v.as_i64().is_some_and(|x| x % 7 == 0)));
    let vs = values(
        &json!({"type": "number", "multipleOf": 0.01, "minimum": 0, "maximum": 2}),
        300,
    );
    assert!(
        vs.iter()
            .any(|v| v.as_f64().is_some_and(|x| x.fract() != 0.0))
    );
    // Integers with fractional bounds, and allOf of two multiples (lcm).
    values(
        &json!({"type": "integer", "minimum": 0.5, "maximum": 3.5}),
        100,
    );
    let vs = values(
        &json!({"type": "integer", "allOf": [{"multipleOf": 4}, {"multipleOf": 6}]}),
        100,
    );
    assert!(vs.iter().all(|v| v.as_i64().is_some_and(|x| x % 12 == 0)));
}

#[test]
fn draft04_boolean_exclusive_bounds() {
    let s = json!({"$schema": "http://json-schema.org/draft-04/schema#", "type": "integer",
        "minimum": 0, "exclusiveMinimum": true, "maximum": 3, "exclusiveMaximum": true});
    let vs = values(&s, 200);
    assert!(vs.iter().all(|v| matches!(v.as_i64(), Some(1 | 2))));
}

#[test]
fn string_lengths_count_code_points() {
    let vs = values(
        &json!({"type": "string", "minLength": 2, "maxLength": 3}),
        500,
    );
    assert!(vs.iter().all(|v| {
        v.as_str()
            .is_some_and(|s| (2..=3).contains(&s.chars().count()))
    }));
    assert!(
        vs.iter()
            .any(|v| v.as_str().is_some_and(|s| s.len() > s.chars().count())),
        "non-ASCII appears"
    );
    let vs = values(&json!({"type": "string", "minLength": 300}), 20);
    assert!(
        vs.iter()
            .all(|v| v.as_str().is_some_and(|s| s.chars().count() >= 300))
    );
}

#[test]
fn patterns_ecma_and_fallbacks() {
    for (p, sample) in [
        (r"^\d{3}-\d{4}$", "555-1234"),
        (r"^[A-Z][a-z]+$", "Abc"),
        (r"^(?!admin$)[a-z]{3,8}$", "abc"),
        (r"^(ab|cd)-\1$", "ab-ab"),
        (r"^\S+@\S+$", "a@localhost"),
        ("x", "x"),
        (r"^\/api\/v[0-9]$", "/api/v1"),
    ] {
        let g = generator(&json!({"type": "string", "pattern": p}));
        assert!(g.is_valid(&json!(sample)), "{p} sample");
        let vs = values(&json!({"type": "string", "pattern": p}), 200);
        assert!(!vs.is_empty(), "{p}");
    }
    // \d is ASCII only in ECMA-262: never an Arabic-Indic digit.
    let vs = values(&json!({"type": "string", "pattern": r"^\d+$"}), 300);
    assert!(vs.iter().all(|v| {
        v.as_str()
            .is_some_and(|s| s.bytes().all(|b| b.is_ascii_digit()))
    }));
    // Lookaround is noted as filtered.
    let g = generator(&json!({"type": "string", "pattern": "^(?=a)[a-c]+$"}));
    assert!(
        g.notes()
            .iter()
            .any(|n| n.keyword == "pattern" && n.kind == NoteKind::Filtered)
    );
    // Pattern and length together.
    let vs = values(
        &json!({"type": "string", "pattern": "^[a-f0-9]+$", "minLength": 32, "maxLength": 32}),
        100,
    );
    assert!(vs.iter().all(|v| v.as_str().is_some_and(|s| s.len() == 32)));
}

#[test]
fn formats_are_valid_and_loopback() {
    for f in [
        "date",
        "date-time",
        "time",
        "duration",
        "email",
        "idn-email",
        "hostname",
        "idn-hostname",
        "ipv4",
        "ipv6",
        "uri",
        "uri-reference",
        "iri",
        "iri-reference",
        "url",
        "uri-template",
        "uuid",
        "json-pointer",
        "relative-json-pointer",
        "regex",
    ] {
        let vs = values(&json!({"type": "string", "format": f}), 200);
        for v in &vs {
            let s = v.as_str().unwrap_or_default();
            assert!(is_safe_str(s), "{f}: {s}");
            match f {
                "uri" | "url" | "iri" | "uri-reference" | "iri-reference" => {
                    assert!(default_base_url(s), "{f}: {s}");
                }
                "hostname" | "idn-hostname" => assert!(is_loopback_host(s), "{s}"),
                "ipv4" => assert!(s.starts_with("127."), "{s}"),
                "ipv6" => assert!(is_loopback_host(s), "{s}"),
                "email" | "idn-email" => {
                    assert!(
                        s.ends_with("@localhost") || s.ends_with("@[127.0.0.1]"),
                        "{s}"
                    );
                }
                _ => {}
            }
        }
    }
}

#[test]
fn arrays() {
    let s = json!({"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "items": false, "minItems": 1});
    for v in values(&s, 200) {
        let a = v.as_array().cloned().unwrap_or_default();
        assert!((1..=2).contains(&a.len()) && a[0].is_string());
    }
    let s = json!({"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 9}, "uniqueItems": true, "minItems": 3, "maxItems": 5});
    for v in values(&s, 200) {
        let a = v.as_array().cloned().unwrap_or_default();
        assert!((3..=5).contains(&a.len()));
    }
    let s = json!({"type": "array", "items": {"enum": ["r", "g", "b"]}, "uniqueItems": true, "minItems": 3});
    assert!(
        values(&s, 50)
            .iter()
            .all(|v| v.as_array().is_some_and(|a| a.len() == 3))
    );
    let s = json!({"type": "array", "items": {"type": "integer"}, "contains": {"minimum": 100}, "minContains": 2});
    for v in values(&s, 200) {
        let n = v.as_array().map_or(0, |a| {
            a.iter()
                .filter(|x| x.as_i64().is_some_and(|i| i >= 100))
                .count()
        });
        assert!(n >= 2, "{v}");
    }
    // draft-07 tuple form.
    let s = json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "array",
        "items": [{"type": "boolean"}], "additionalItems": {"type": "null"}});
    assert_eq!(generator(&s).dialect(), "draft-07");
    for v in values(&s, 200) {
        let a = v.as_array().cloned().unwrap_or_default();
        assert!(
            a.iter().skip(1).all(Value::is_null) && a.first().is_none_or(Value::is_boolean),
            "{v}"
        );
    }
}

#[test]
fn objects() {
    let s = json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
        "required": ["a"], "additionalProperties": false});
    let vs = values(&s, 300);
    assert!(
        vs.iter()
            .all(|v| v.get("a").is_some() && v.as_object().is_some_and(|m| m.len() <= 2))
    );
    assert!(vs.iter().any(|v| v.get("b").is_some()) && vs.iter().any(|v| v.get("b").is_none()));
    let s = json!({"type": "object", "patternProperties": {"^x-": {"type": "string"}}, "additionalProperties": false, "minProperties": 1});
    for v in values(&s, 100) {
        assert!(
            v.as_object()
                .is_some_and(|m| !m.is_empty() && m.keys().all(|k| k.starts_with("x-"))),
            "{v}"
        );
    }
    let s = json!({"type": "object", "propertyNames": {"pattern": "^[a-z]{1,4}$"}, "minProperties": 2, "maxProperties": 3});
    values(&s, 100);
    let s = json!({"type": "object", "properties": {"n": {"type": "string"}, "c": {"type": "string"}},
        "dependentRequired": {"n": ["c"]}});
    for v in values(&s, 200) {
        assert!(v.get("n").is_none() || v.get("c").is_some(), "{v}");
    }
    let s = json!({"type": "object", "properties": {"n": {"type": "integer"}},
        "dependentSchemas": {"n": {"properties": {"m": {"const": 1}}, "required": ["m"]}}});
    for v in values(&s, 200) {
        assert!(v.get("n").is_none() || v.get("m") == Some(&json!(1)), "{v}");
    }
    let s = json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "dependencies": {"a": ["b"]}});
    assert!(
        values(&s, 200)
            .iter()
            .all(|v| v.get("a").is_none() || v.get("b").is_some())
    );
}

#[test]
fn refs_and_combinators() {
    let s = json!({"$defs": {"pos": {"type": "integer", "minimum": 1}}, "definitions": {"neg": {"type": "integer", "maximum": -1}},
        "type": "object", "properties": {"p": {"$ref": "#/$defs/pos"}, "n": {"$ref": "#/definitions/neg"}}, "required": ["p", "n"]});
    for v in values(&s, 100) {
        assert!(
            v["p"].as_i64().is_some_and(|x| x >= 1) && v["n"].as_i64().is_some_and(|x| x <= -1)
        );
    }
    let s = json!({"allOf": [{"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
        {"properties": {"a": {"maxLength": 2}, "b": {"type": "boolean"}}, "required": ["b"]}]});
    for v in values(&s, 200) {
        assert!(v["a"].as_str().is_some_and(|x| x.chars().count() <= 2) && v["b"].is_boolean());
    }
    let s = json!({"oneOf": [{"type": "integer", "multipleOf": 2}, {"type": "integer", "multipleOf": 3}]});
    assert!(
        values(&s, 300)
            .iter()
            .all(|v| v.as_i64().is_some_and(|x| (x % 2 == 0) != (x % 3 == 0)))
    );
    let s = json!({"anyOf": [{"type": "string"}, {"type": "boolean"}]});
    let vs = values(&s, 200);
    assert!(vs.iter().any(Value::is_string) && vs.iter().any(Value::is_boolean));
    let s = json!({"type": "integer", "minimum": -3, "maximum": 3, "not": {"const": 0}});
    assert!(values(&s, 200).iter().all(|v| *v != json!(0)));
    let s = json!({"type": "object", "properties": {"legacy": {"type": "boolean"}}, "not": {"required": ["legacy"]}});
    assert!(values(&s, 200).iter().all(|v| v.get("legacy").is_none()));
    let s = json!({"type": "object", "properties": {"c": {"enum": ["US", "NL"]}, "zip": {"type": "string"}}, "required": ["c", "zip"],
        "if": {"properties": {"c": {"const": "US"}}}, "then": {"properties": {"zip": {"pattern": "^[0-9]{5}$"}}},
        "else": {"properties": {"zip": {"pattern": "^[0-9]{4}[A-Z]{2}$"}}}});
    let vs = values(&s, 300);
    assert!(vs.iter().any(|v| v["c"] == "US") && vs.iter().any(|v| v["c"] == "NL"));
}

#[test]
fn boolean_schemas() {
    values(&json!(true), 100);
    let s = json!({"type": "object", "properties": {"never": false, "always": true}, "required": ["always"]});
    assert!(
        values(&s, 200)
            .iter()
            .all(|v| v.get("never").is_none() && v.get("always").is_some())
    );
}

#[test]
fn defaults_and_examples_are_seeds() {
    let s = json!({"type": "integer", "minimum": 0, "maximum": 1_000_000, "default": 424_242, "examples": [777_777, -5]});
    let vs = values(&s, 600);
    assert!(vs.contains(&json!(424_242)) && vs.contains(&json!(777_777)));
    assert!(
        !vs.contains(&json!(-5)),
        "an invalid example is never emitted"
    );
}

#[test]
fn hostile_knob_and_lengths() {
    let s = json!({"type": "string"});
    let vs = values(&s, 3000);
    let hostile: Vec<&str> = hostile_strings()
        .iter()
        .filter(|h| h.len() > 3)
        .copied()
        .collect();
    assert!(
        vs.iter()
            .any(|v| v.as_str().is_some_and(|x| hostile.contains(&x))),
        "hostile strings mixed in"
    );
    let vs = values_with(&s, 3000, &GenOptions::default().hostile(false));
    assert!(!vs.iter().any(|v| v.as_str() == Some("../../etc/passwd")));
    // Only where they fit: nothing longer than maxLength.
    let vs = values(&json!({"type": "string", "maxLength": 2}), 2000);
    assert!(
        vs.iter()
            .all(|v| v.as_str().is_some_and(|x| x.chars().count() <= 2))
    );
}

#[test]
fn hostile_lists() {
    let h = hostile_strings();
    assert!(h.contains(&"") && h.contains(&"\u{0}") && h.contains(&"../../etc/passwd"));
    assert!(h.iter().any(|s| s.len() == LONG_LEN));
    assert!(h.iter().all(|s| is_safe_str(s)));
    for raw in hostile_raw_json() {
        assert!(raw.starts_with('"') && raw.contains("\\ud"));
        assert!(
            serde_json::from_str::<String>(raw).is_err(),
            "{raw} is not a Rust string"
        );
    }
}

// ---------------------------------------------------------------------------------------
// Shrinking.

#[test]
fn string_with_nul_shrinks_to_nul() {
    assert_eq!(
        shrunk(&json!({"type": "string"}), |v| v
            .as_str()
            .is_some_and(|s| s.contains('\0'))),
        json!("\u{0}")
    );
}

#[test]
fn integer_above_100_shrinks_to_101() {
    assert_eq!(
        shrunk(&json!({"type": "integer"}), |v| v
            .as_i64()
            .is_some_and(|x| x > 100)),
        json!(101)
    );
    assert_eq!(
        shrunk(
            &json!({"type": "integer", "minimum": 50, "maximum": 10_000}),
            |v| v.as_i64().is_some_and(|x| x > 100)
        ),
        json!(101)
    );
}

#[test]
fn objects_shrink_to_the_needed_property() {
    let s = json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}, "c": {"type": "boolean"}},
        "additionalProperties": false});
    assert_eq!(shrunk(&s, |v| v.get("b").is_some()), json!({"b": 0}));
}

#[test]
fn arrays_shrink_to_one_item() {
    let s = json!({"type": "array", "items": {"type": "integer", "minimum": 0}});
    assert_eq!(
        shrunk(&s, |v| v
            .as_array()
            .is_some_and(|a| a.iter().any(|x| x.as_i64() > Some(9)))),
        json!([10])
    );
}

// ---------------------------------------------------------------------------------------
// Unsatisfiable schemas are reported, never looped on.

#[test]
fn unsatisfiable_schemas() {
    for s in [
        json!(false),
        json!({"type": "integer", "minimum": 5, "maximum": 4}),
        json!({"type": "number", "exclusiveMinimum": 1, "exclusiveMaximum": 1}),
        json!({"type": "integer", "minimum": 0.1, "maximum": 0.9}),
        json!({"type": "integer", "multipleOf": 10, "minimum": 1, "maximum": 9}),
        json!({"type": "string", "minLength": 5, "maxLength": 4}),
        json!({"allOf": [{"type": "string"}, {"type": "integer"}]}),
        json!({"type": "object", "properties": {"a": false}, "required": ["a"]}),
        json!({"type": "object", "required": ["a"], "additionalProperties": false}),
        json!({"type": "object", "required": ["a", "b"], "maxProperties": 1}),
        json!({"type": "object", "required": ["ABC"], "propertyNames": {"pattern": "^[a-z]+$"}}),
        json!({"type": "string", "enum": [1, 2]}),
        json!({"enum": ["a"], "minLength": 3, "type": "string"}),
        json!({"type": "array", "items": {"type": "boolean"}, "uniqueItems": true, "minItems": 3}),
        json!({"type": "array", "prefixItems": [{}], "items": false, "minItems": 2}),
        json!({"type": "array", "contains": false}),
        json!({"not": true}),
        json!({"oneOf": [false, false]}),
        json!({"type": "string", "pattern": "^a{3}$", "maxLength": 2}),
        json!({"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"], "not": {"required": ["a"]}}),
    ] {
        match err(&s) {
            GenError::Unsatisfiable { reason } => assert!(!reason.is_empty()),
            other => panic!("{s}: expected Unsatisfiable, got {other:?}"),
        }
    }
}

#[test]
fn optional_unsatisfiable_branch_is_only_dropped() {
    let s = json!({"type": "object", "properties": {"bad": {"type": "integer", "minimum": 2, "maximum": 1}, "ok": {"type": "string"}}});
    assert!(values(&s, 100).iter().all(|v| v.get("bad").is_none()));
}

// ---------------------------------------------------------------------------------------
// Loopback only.

#[test]
fn loopback_only_even_with_public_defaults() {
    let s = json!({"type": "object", "properties": {
        "url": {"type": "string", "default": "https://example.com/x", "examples": ["https://evil.test"]},
        "endpoint": {"type": "string"}, "callback_url": {"type": "string"}, "imageUrl": {"type": "string"},
        "site": {"type": "string", "format": "uri", "default": "http://10.0.0.1/"},
        "host": {"type": "string"}, "mail": {"type": "string", "format": "email"},
        "ip": {"type": "string", "format": "ipv4"}, "ip6": {"type": "string", "format": "ipv6"},
        "mirror": {"enum": ["https://mirror.example.org", "http://localhost:1/m"]},
        "free": {"type": "string", "pattern": "^https?://[a-z]+\\.[a-z]{2,3}/$"}},
        "required": ["url", "endpoint", "site", "mirror"]});
    let g = generator(&s);
    assert!(g.notes().iter().any(|n| n.kind == NoteKind::UnsafeDropped));
    let vs = values(&s, 2000);
    let mut all = Vec::new();
    for v in &vs {
        strings(v, &mut all);
        for k in ["url", "endpoint", "site"] {
            assert!(v[k].as_str().is_some_and(default_base_url), "{k}: {v}");
        }
        assert_eq!(v["mirror"], json!("http://localhost:1/m"));
        if let Some(h) = v.get("host") {
            assert!(h.as_str().is_some_and(is_loopback_host), "{h}");
        }
    }
    assert!(all.iter().all(|s| is_safe_str(s)));
    // Invalid and boundary cases obey the rule too.
    let inv = g.invalid().expect("invalid");
    let mut runner = TestRunner::deterministic();
    for _ in 0..300 {
        let (v, _) = inv.new_tree(&mut runner).expect("case").current();
        assert!(is_loopback_safe(&v), "{v}");
    }
    assert!(
        g.boundary()
            .expect("boundary")
            .iter()
            .all(|c| is_loopback_safe(c.value()))
    );
}

#[test]
fn url_base_is_honoured_and_checked() {
    let s = json!({"type": "object", "properties": {"url": {"type": "string"}, "u": {"type": "string", "format": "uri"}}, "required": ["url", "u"]});
    let opts = GenOptions::with_url_base("http://127.0.0.1:8765/up");
    for v in values_with(&s, 300, &opts) {
        assert!(
            v["url"]
                .as_str()
                .is_some_and(|x| x.starts_with("http://127.0.0.1:8765/up/"))
        );
        assert!(
            v["u"]
                .as_str()
                .is_some_and(|x| x.starts_with("http://127.0.0.1:8765/up/"))
        );
    }
    let e = Generator::new(&s, &GenOptions::with_url_base("https://example.com")).err();
    assert!(matches!(e, Some(GenError::UnsafeUrlBase { .. })), "{e:?}");
}

#[test]
fn forced_public_url_is_reported() {
    let s = json!({"type": "object", "properties": {"url": {"const": "https://api.example.com/v1"}}, "required": ["url"]});
    assert!(matches!(err(&s), GenError::UnsafeForced { .. }));
    let s = json!({"type": "string", "enum": ["http://8.8.8.8/", "mailto:a@b.org"]});
    assert!(matches!(err(&s), GenError::UnsafeForced { .. }));
    // A pattern that only admits public hosts cannot produce a value: reported, not emitted.
    let s = json!({"type": "string", "format": "hostname", "pattern": "^api\\.example\\.com$"});
    assert!(Generator::new(&s, &GenOptions::default()).is_err());
}

// ---------------------------------------------------------------------------------------
// $ref recursion.

fn depth_of(v: &Value) -> usize {
    match v {
        Value::Array(a) => 1 + a.iter().map(depth_of).max().unwrap_or(0),
        Value::Object(m) => 1 + m.values().map(depth_of).max().unwrap_or(0),
        _ => 0,
    }
}

#[test]
fn ref_recursion_is_bounded() {
    let s = json!({"$defs": {"n": {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/n"}}},
        "additionalProperties": false}}, "$ref": "#/$defs/n"});
    for bound in [1usize, 2, 4] {
        let opts = GenOptions {
            max_ref_depth: bound,
            ..GenOptions::default()
        };
        let vs = values_with(&s, 300, &opts);
        let deepest = vs.iter().map(depth_of).max().unwrap_or(0);
        // Each expansion adds an object and an array level.
        assert!(deepest <= 2 * bound + 1, "bound {bound}: depth {deepest}");
    }
    let g = generator(&s);
    assert!(g.notes().iter().any(|n| n.kind == NoteKind::RecursionCut));
    let list = json!({"type": "object", "properties": {"v": {"type": "integer"}, "next": {"$ref": "#"}}, "required": ["v"]});
    values(&list, 200);
}

#[test]
fn required_infinite_recursion_and_cycles_are_reported() {
    let s = json!({"type": "object", "properties": {"next": {"$ref": "#"}}, "required": ["next"]});
    assert!(matches!(
        err(&s),
        GenError::TooComplex { .. } | GenError::Unsatisfiable { .. }
    ));
    for s in [
        json!({"$ref": "#"}),
        json!({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}),
    ] {
        // Never hangs or panics; either values or a report.
        if let Ok(g) = Generator::new(&s, &GenOptions::default()) {
            let _ = g.valid();
        }
    }
}

// ---------------------------------------------------------------------------------------
// Hostile schemas never panic.

#[test]
fn hostile_schemas_are_reported() {
    let mut deep = json!({"type": "string"});
    for _ in 0..300 {
        deep = json!({"type": "object", "properties": {"a": deep}, "required": ["a"]});
    }
    assert!(matches!(err(&deep), GenError::TooComplex { .. }));
    let huge = json!({"type": "object", "properties": {"s": {"type": "string", "minLength": 1_000_000_000_000u64}}, "required": ["s"]});
    assert!(matches!(err(&huge), GenError::TooLarge { .. }));
    let optional_huge = json!({"type": "object", "properties": {"s": {"type": "string", "minLength": 1_000_000_000_000u64}, "t": {"type": "integer"}}});
    assert!(
        values(&optional_huge, 50)
            .iter()
            .all(|v| v.get("s").is_none())
    );
    let items = json!({"type": "array", "minItems": 1_000_000_000_000u64});
    assert!(matches!(err(&items), GenError::TooLarge { .. }));
    assert!(matches!(
        err(&json!({"type": "string", "pattern": "(unclosed"})),
        GenError::InvalidSchema { .. }
    ));
    assert!(matches!(
        err(&json!({"$ref": "https://example.com/schema.json"})),
        GenError::InvalidSchema { .. }
    ));
    assert!(matches!(
        err(&json!({"$schema": "https://example.com/custom"})),
        GenError::InvalidSchema { .. }
    ));
    // Catastrophic-backtracking pattern: bounded by the validator's backtrack limit.
    let g = Generator::new(
        &json!({"type": "string", "pattern": "^(a+)+\\1$"}),
        &GenOptions::default(),
    );
    if let Ok(g) = g {
        let _ = g.example();
    }
    values(&json!({"type": "string", "maxLength": 1e300}), 50);
    values(
        &json!({"type": "integer", "minimum": -1e300, "maximum": 1e300}),
        50,
    );
}

// ---------------------------------------------------------------------------------------
// invalid(), boundary(), example().

#[test]
fn invalid_cases_break_one_named_constraint() {
    let s = json!({"type": "object", "properties": {"city": {"type": "string", "minLength": 1, "maxLength": 10},
        "days": {"type": "integer", "minimum": 1, "maximum": 7}, "unit": {"enum": ["c", "f"]}},
        "required": ["city"], "additionalProperties": false});
    let g = generator(&s);
    let inv = g.invalid().expect("invalid");
    let mut runner = TestRunner::deterministic();
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..600 {
        let (v, viol) = inv.new_tree(&mut runner).expect("case").current();
        assert!(!g.is_valid(&v) && g.confirms(&v, &viol), "{v} {viol:?}");
        seen.insert((viol.keyword.clone(), viol.pointer.clone()));
    }
    for want in [
        ("type", ""),
        ("required", ""),
        ("additionalProperties", ""),
        ("minLength", "/city"),
        ("maxLength", "/city"),
        ("type", "/city"),
        ("minimum", "/days"),
        ("maximum", "/days"),
        ("enum", "/unit"),
    ] {
        assert!(
            seen.contains(&(want.0.to_string(), want.1.to_string())),
            "{want:?} missing from {seen:?}"
        );
    }
    let json = serde_json::to_value(Violation {
        keyword: "type".into(),
        pointer: String::new(),
        description: "x".into(),
    })
    .expect("serializes");
    assert_eq!(
        json,
        json!({"keyword": "type", "pointer": "", "description": "x"})
    );
    assert!(matches!(
        Generator::new(&json!(true), &GenOptions::default()).map(|g| g.invalid().err()),
        Ok(Some(GenError::NoInvalidCases { .. }))
    ));
}

#[test]
fn boundary_phase_edges() {
    let s = json!({"type": "object", "properties": {"name": {"type": "string", "minLength": 2, "maxLength": 4},
        "n": {"type": "integer", "exclusiveMinimum": 0, "maximum": 10}, "mode": {"enum": ["a", "b"]},
        "list": {"type": "array", "minItems": 1, "maxItems": 2, "items": {"type": "boolean"}}},
        "required": ["name"]});
    let g = generator(&s);
    let cases = g.boundary().expect("boundary");
    assert_eq!(cases, g.boundary().expect("boundary"), "deterministic");
    let has_valid = |v: Value| {
        cases
            .iter()
            .any(|c| matches!(c, Case::Valid { value, .. } if *value == v))
    };
    let has_invalid = |kw: &str, v: Value| {
        cases.iter().any(|c| matches!(c, Case::Invalid { value, violation } if *value == v && violation.keyword == kw))
    };
    assert!(has_valid(json!({"name": "aa"})), "required only");
    assert!(has_valid(json!({"name": "aaaa"})));
    assert!(has_invalid("minLength", json!({"name": "a"})));
    assert!(has_invalid("maxLength", json!({"name": "aaaaa"})));
    assert!(has_valid(json!({"name": "aa", "n": 1})) && has_valid(json!({"name": "aa", "n": 10})));
    assert!(has_invalid(
        "exclusiveMinimum",
        json!({"name": "aa", "n": 0})
    ));
    assert!(has_invalid("maximum", json!({"name": "aa", "n": 11})));
    assert!(
        has_valid(json!({"name": "aa", "mode": "a"}))
            && has_valid(json!({"name": "aa", "mode": "b"}))
    );
    assert!(has_invalid("minItems", json!({"name": "aa", "list": []})));
    assert!(has_invalid(
        "maxItems",
        json!({"name": "aa", "list": [false, true, false]})
    ));
    assert!(has_invalid("required", json!({})));
    assert!(cases.iter().any(|c| matches!(c, Case::Valid { value, .. } if value.as_object().is_some_and(|m| m.len() == 4))), "all optional present");
    for c in &cases {
        match c {
            Case::Valid { value, .. } => assert!(g.is_valid(value)),
            Case::Invalid { value, violation } => assert!(g.confirms(value, violation)),
        }
    }
}

#[test]
fn example_is_small_and_deterministic() {
    let s = json!({"type": "object", "properties": {"q": {"type": "string", "minLength": 3}, "k": {"enum": ["x", "y"]},
        "opt": {"type": "integer"}}, "required": ["q", "k"]});
    let opts = GenOptions::default();
    assert_eq!(
        example(&s, &opts).expect("example"),
        json!({"q": "aaa", "k": "x"})
    );
    assert_eq!(
        example(&json!({"type": "integer", "minimum": 5}), &opts).expect("example"),
        json!(5)
    );
    assert_eq!(
        example(&json!({"type": "string", "format": "uri"}), &opts).expect("example"),
        json!("http://127.0.0.1:9/")
    );
}

#[test]
fn url_properties_with_patterns_stay_on_loopback() {
    let s = json!({"type": "object", "properties": {
        "url": {"type": "string", "pattern": "^https://"},
        "site": {"type": "string", "format": "uri", "pattern": "^https?://[^/]+/v1/"}}, "required": ["url", "site"]});
    for v in values(&s, 300) {
        assert!(
            v["url"]
                .as_str()
                .is_some_and(|x| x.starts_with("https://127.0.0.1:9/")),
            "{v}"
        );
        assert!(
            v["site"].as_str().is_some_and(|x| x.contains("/v1/")),
            "{v}"
        );
    }
}

#[test]
fn generator_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Generator>();
    assert_send_sync::<GenError>();
    assert_send_sync::<Violation>();
}

#[test]
fn moderately_deep_schema_works_on_a_test_thread() {
    let mut deep = json!({"type": "string", "minLength": 1});
    for _ in 0..40 {
        deep = json!({"type": "object", "properties": {"a": deep}, "required": ["a"]});
    }
    let vs = values(&deep, 20);
    assert!(vs.iter().all(|v| depth_of(v) >= 40));
    let g = generator(&deep);
    assert!(!g.boundary().expect("boundary").is_empty());
    let _ = g.invalid().expect("invalid");
}

// ---------------------------------------------------------------------------------------
// Robustness: random schemas never panic or hang.

fn arb_schema() -> impl Strategy<Value = Value> {
    let types = proptest::sample::select(vec![
        "string", "integer", "number", "boolean", "null", "array", "object",
    ]);
    let leaf = prop_oneof![
        Just(json!({})),
        Just(json!(true)),
        Just(json!(false)),
        types.prop_map(|t| json!({ "type": t })),
        (0u64..6, 0u64..9)
            .prop_map(|(a, b)| json!({"type": "string", "minLength": a, "maxLength": b})),
        (-5i64..5, -5i64..5, 0u8..3).prop_map(|(a, b, m)| match m {
            0 => json!({"type": "integer", "minimum": a, "maximum": b}),
            1 => json!({"type": "number", "exclusiveMinimum": a, "maximum": b, "multipleOf": 0.5}),
            _ => json!({"type": "integer", "multipleOf": (a.abs() + 1), "exclusiveMaximum": b}),
        }),
        proptest::sample::select(vec![
            "^[a-z]+$",
            "^\\d{2,4}$",
            "x",
            "^(?!a)\\w*$",
            "^(a|b)\\1$",
            "^.{3}$"
        ])
        .prop_map(|p| json!({"type": "string", "pattern": p})),
        proptest::sample::select(vec![
            "date",
            "uri",
            "email",
            "ipv4",
            "uuid",
            "hostname",
            "date-time"
        ])
        .prop_map(|f| json!({"type": "string", "format": f})),
        Just(json!({"enum": [1, "a", null, "http://example.com"]})),
        Just(json!({"const": {"k": [1, 2]}})),
    ];
    leaf.prop_recursive(3, 24, 3, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 1..3).prop_map(|v| json!({ "allOf": v })),
            proptest::collection::vec(inner.clone(), 1..3).prop_map(|v| json!({ "anyOf": v })),
            proptest::collection::vec(inner.clone(), 1..3).prop_map(|v| json!({ "oneOf": v })),
            inner.clone().prop_map(|v| json!({ "not": v })),
            (inner.clone(), inner.clone(), inner.clone())
                .prop_map(|(i, t, e)| json!({"if": i, "then": t, "else": e})),
            (proptest::collection::vec(inner.clone(), 0..4), any::<u8>(), any::<bool>()).prop_map(
                |(props, req, closed)| {
                    let mut m = serde_json::Map::new();
                    let mut required = Vec::new();
                    for (i, p) in props.into_iter().enumerate() {
                        let name = format!("p{i}");
                        if req & (1 << i) != 0 {
                            required.push(Value::String(name.clone()));
                        }
                        m.insert(name, p);
                    }
                    json!({"type": "object", "properties": m, "required": required, "additionalProperties": !closed})
                }
            ),
            (inner, 0u64..3, 0u64..4, any::<bool>()).prop_map(|(i, a, b, u)| {
                json!({"type": "array", "items": i, "minItems": a, "maxItems": b, "uniqueItems": u})
            }),
        ]
    })
}

proptest! {
    #![proptest_config(Config { cases: 100, failure_persistence: None, ..Config::default() })]

    /// Any schema built from the supported keywords either yields a generator whose valid,
    /// invalid and boundary outputs hold, or a reported error; never a panic or a hang.
    #[test]
    fn random_schemas_never_panic(schema in arb_schema()) {
        if let Ok(g) = Generator::new(&schema, &GenOptions::default()) {
            let mut runner = TestRunner::deterministic();
            if let Ok(s) = g.valid() {
                for _ in 0..10 {
                    if let Ok(t) = s.new_tree(&mut runner) {
                        let v = t.current();
                        prop_assert!(g.is_valid(&v), "{} for {}", v, schema);
                    }
                }
            }
            if let Ok(s) = g.invalid() {
                for _ in 0..5 {
                    if let Ok(t) = s.new_tree(&mut runner) {
                        let (v, viol) = t.current();
                        prop_assert!(g.confirms(&v, &viol), "{} {:?} for {}", v, viol, schema);
                    }
                }
            }
            for c in g.boundary().unwrap_or_default() {
                match &c {
                    Case::Valid { value, .. } => prop_assert!(g.is_valid(value)),
                    Case::Invalid { value, violation } => prop_assert!(g.confirms(value, violation)),
                }
            }
            let _ = g.example();
        }
    }
}

/// An `Unsatisfiable` verdict is never contradicted by a value the validator accepts (checked
/// against a pool of simple and random values).
#[test]
fn unsatisfiable_verdicts_are_sound() {
    let mut runner = TestRunner::deterministic();
    let any = super::any::AnyJson { depth: 3 };
    let mut pool: Vec<Value> = vec![
        json!(null),
        json!(true),
        json!(false),
        json!(0),
        json!(1),
        json!(-1),
        json!(0.5),
        json!(2),
        json!(-2),
        json!(""),
        json!("a"),
        json!("abc"),
        json!("aaaa"),
        json!([]),
        json!({}),
        json!([1]),
        json!({"p0": 0}),
        json!({"p0": "a"}),
        json!({"p0": null}),
    ];
    for _ in 0..1000 {
        pool.push(any.new_tree(&mut runner).expect("value").current());
    }
    let schemas = arb_schema();
    let mut verdicts = 0;
    for _ in 0..300 {
        let schema = schemas.new_tree(&mut runner).expect("schema").current();
        if let Err(GenError::Unsatisfiable { reason }) =
            Generator::new(&schema, &GenOptions::default())
        {
            verdicts += 1;
            let v = jsonschema::options()
                .should_validate_formats(true)
                .build(&schema)
                .expect("compiles");
            if let Some(c) = pool.iter().find(|c| v.is_valid(c)) {
                panic!("{schema} called unsatisfiable ({reason}) but {c} is valid");
            }
        }
    }
    assert!(verdicts > 0);
}

// Budgets (issue 12): a schema within every budget generates as before, with no budget note;
// one over a budget is cut, and the note (or error) names the budget.

/// An object schema of `n` required string properties `p0000`, `p0001`, ...
fn required_props(n: usize) -> Value {
    let props: serde_json::Map<String, Value> = (0..n)
        .map(|i| {
            (
                format!("p{i:04}"),
                json!({"type": "string", "maxLength": 8}),
            )
        })
        .collect();
    let req: Vec<String> = (0..n).map(|i| format!("p{i:04}")).collect();
    json!({"type": "object", "properties": props, "required": req})
}

fn enum_schema(n: usize) -> Value {
    let values: Vec<String> = (0..n).map(|i| format!("v{i}")).collect();
    json!({"type": "object", "properties": {"choice": {"type": "string", "enum": values}},
           "required": ["choice"]})
}

#[test]
fn a_small_enum_is_used_whole_and_noted_nowhere() {
    let g = generator(&enum_schema(10));
    assert!(g.budget_notes().is_empty(), "{:?}", g.budget_notes());
    let seen: std::collections::HashSet<String> = values(&enum_schema(10), 200)
        .iter()
        .map(|v| v["choice"].as_str().expect("a string").to_owned())
        .collect();
    assert_eq!(
        seen.len(),
        10,
        "every value of a small enum is generated: {seen:?}"
    );
}

#[test]
fn an_enum_over_max_enum_values_is_sampled_evenly_with_a_budget_note() {
    let opts = GenOptions {
        max_enum_values: 8,
        ..GenOptions::default()
    };
    let schema = enum_schema(1000);
    let g = Generator::new(&schema, &opts).expect("a generator");
    let notes = g.budget_notes();
    assert!(
        notes.iter().any(|n| n.keyword == "enum"
            && n.message.contains("1000 values")
            && n.pointer == "#/properties/choice"),
        "{notes:?}"
    );
    let seen: std::collections::HashSet<String> = values_with(&schema, 200, &opts)
        .iter()
        .map(|v| v["choice"].as_str().expect("a string").to_owned())
        .collect();
    assert!(seen.len() <= 8, "{seen:?}");
    // Spread over the enum: its first and last values are in the sample.
    assert!(seen.contains("v0") && seen.contains("v999"), "{seen:?}");
}

#[test]
fn a_contradiction_after_sampling_an_enum_is_too_complex_not_unsatisfiable() {
    let opts = GenOptions {
        max_enum_values: 4,
        ..GenOptions::default()
    };
    // v1 is in both enums, but not in the 4-value sample of the first one.
    let values: Vec<String> = (0..100).map(|i| format!("v{i}")).collect();
    let schema = json!({"allOf": [{"enum": values}, {"enum": ["v1"]}]});
    assert!(Generator::new(&schema, &GenOptions::default()).is_ok());
    let err = Generator::new(&schema, &opts).expect_err("the sample misses v1");
    assert!(
        matches!(&err, GenError::TooComplex { reason } if reason.contains("max_enum_values")),
        "{err}"
    );
    assert!(err.is_budget());
}

#[test]
fn a_few_properties_keep_every_case_site() {
    let g = generator(&required_props(3));
    let cases = g.boundary().expect("cases");
    let _ = g.invalid().expect("invalid cases");
    assert!(g.budget_notes().is_empty(), "{:?}", g.budget_notes());
    for p in ["p0000", "p0001", "p0002"] {
        assert!(
            cases
                .iter()
                .any(|c| matches!(c, Case::Invalid { violation, .. }
                if violation.description.contains(p) || violation.pointer == format!("/{p}"))),
            "no boundary case for {p}"
        );
    }
}

#[test]
fn a_thousand_required_properties_get_sites_sampled_within_max_site_work() {
    let schema = required_props(1000);
    let g = generator(&schema);
    let cases = g.boundary().expect("cases");
    let _ = g.invalid().expect("invalid cases");
    let notes = g.budget_notes();
    for kw in ["boundary", "invalid"] {
        assert!(
            notes
                .iter()
                .any(|n| n.keyword == kw && n.message.contains("max_site_work")),
            "{kw}: {notes:?}"
        );
    }
    // About max_site_work / 800 (the mean site cost) sites instead of 400, spread over the
    // properties (not the first few only).
    assert!(cases.len() <= 32, "{} cases", cases.len());
    let described: Vec<String> = cases
        .iter()
        .map(|c| match c {
            Case::Invalid { violation, .. } => {
                format!("{} {}", violation.pointer, violation.description)
            }
            Case::Valid { label, .. } => label.clone(),
        })
        .collect();
    let late = described.iter().any(|d| d.contains("/p09"));
    assert!(late, "no case reaches the last properties: {described:?}");
}

#[test]
fn a_passed_deadline_cuts_lowering_with_too_complex() {
    let opts = GenOptions {
        deadline: Some(std::time::Instant::now()),
        ..GenOptions::default()
    };
    let err = Generator::new(&required_props(3), &opts).expect_err("the deadline passed");
    assert!(
        matches!(&err, GenError::TooComplex { reason } if reason.contains("deadline")),
        "{err}"
    );
    assert!(err.is_budget());
    let later = GenOptions {
        deadline: Some(std::time::Instant::now() + std::time::Duration::from_secs(60)),
        ..GenOptions::default()
    };
    let g = Generator::new(&required_props(3), &later).expect("within the deadline");
    assert!(!g.boundary().expect("cases").is_empty());
    assert!(g.budget_notes().is_empty());
}

#[test]
fn unsatisfiable_is_not_a_budget_error() {
    let err = Generator::new(
        &json!({"type": "integer", "minimum": 5, "maximum": 1}),
        &GenOptions::default(),
    )
    .expect_err("unsatisfiable");
    assert!(!err.is_budget(), "{err}");
}
