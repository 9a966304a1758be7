//! Scoped faults: one [`Fault`] and the [`Scope`] of upstream requests it hits.
//!
//! A tool call may make several upstream requests: a `robots.txt` or metadata request, then
//! the real one; a page of results, then the next. A [`ScopedFault`] says which of them fail:
//! every request, only the first, only the n-th, only those to one path (the others answer
//! healthy), or each with a seeded probability, and path combined with any of the others.
//! It is a value (comparable, printable, serializable) that becomes one [`Rule`] of a fault
//! plan ([`ScopedFault::rule`]), so it can be installed on a
//! [`FakeUpstream`](crate::FakeUpstream) for one tool call, named in a finding, and written to
//! a replay file.
//!
//! ```
//! use mcp_chaos_faults::{Fault, Scope, ScopedFault};
//!
//! let robots = ScopedFault::new(Fault::unavailable(), Scope::every().on_path("/robots.txt"));
//! assert_eq!(robots.to_string(), "unavailable on every request to /robots.txt");
//! let first = Fault::not_found().scoped(Scope::first());
//! assert_eq!(first.to_string(), "not-found on the first request only");
//! // Scenario files and replay files carry the same keys:
//! let json = serde_json::to_value(&first).expect("serializable");
//! assert_eq!(json, serde_json::json!({"fault": "not-found", "only": "first"}));
//! assert_eq!(serde_json::from_value::<ScopedFault>(json).expect("valid"), first);
//! ```
//!
//! Counting scopes count the requests their path matches (all requests without a path),
//! from 1, from the moment the rule is installed: install the scoped fault right before the
//! tool call ([`FakeUpstream::set_scoped`](crate::FakeUpstream::set_scoped)) and "the first
//! request" is the call's first request to that path.
//!
//! # Shrink order
//!
//! Scopes are ordered from the simplest, the one a finding states most plainly and a reader
//! reproduces most easily, to the most particular ([`Scope::shrink_rank`]):
//!
//! | rank | scope | why there |
//! |---|---|---|
//! | 0 | every request | the plain fault: nothing about the call's shape needed |
//! | 1 | the first request only | one preflight request failing: the commonest partial failure |
//! | 2 | the n-th request only (n ≥ 2, smaller n first) | needs the call's request count |
//! | 3 | every request to a path | needs the server's URL layout |
//! | 4 | the first request to a path | |
//! | 5 | the n-th request to a path | |
//! | 6 | each request with a probability | random: readable only with its seed |
//! | 7 | each request to a path with a probability | |
//!
//! Deterministic scopes come before random ones, scopes without a path before scopes with
//! one, and among those every < first < n-th.

use std::fmt;

use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::fault::Fault;
use crate::journal::ordinal;
use crate::rule::{Matcher, Rule, matchers};
use crate::schedule::Schedule;

/// Which of the requests a [`Scope`] matches get the fault.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Requests {
    /// Every matched request.
    Every,
    /// Only the first matched request; the later ones get the healthy response.
    First,
    /// Only the n-th matched request (n ≥ 2; the first is [`Requests::First`]).
    Nth(u64),
    /// Each matched request independently, with probability `p`, from a seeded generator.
    Probability {
        /// Probability of the fault per request, in `[0, 1]`.
        p: f64,
        /// The generator's seed; `None`: the server's seed mixed with the rule's position
        /// (see [`Schedule::probability`]).
        seed: Option<u64>,
    },
}

/// The upstream requests a fault hits: an optional exact path, and which of the requests to
/// it (or of all requests) fail. Build one with [`Scope::every`], [`Scope::first`],
/// [`Scope::nth`], [`Scope::probability`] or [`Scope::probability_seeded`], narrowed with
/// [`Scope::on_path`].
#[derive(Debug, Clone, PartialEq)]
pub struct Scope {
    path: Option<String>,
    requests: Requests,
}

/// The kinds of scope, for choosing which ones a `strategy::FaultStrategy` (feature
/// `proptest`) draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ScopeKind {
    /// [`Scope::every`]
    Every,
    /// [`Scope::first`]
    First,
    /// [`Scope::nth`] with n ≥ 2
    Nth,
    /// [`Scope::on_path`]: combined with each of the other kinds drawn
    Path,
    /// [`Scope::probability_seeded`]
    Probability,
}

impl ScopeKind {
    /// Every kind, simplest first.
    pub const ALL: [ScopeKind; 5] = [
        ScopeKind::Every,
        ScopeKind::First,
        ScopeKind::Nth,
        ScopeKind::Path,
        ScopeKind::Probability,
    ];
}

impl Scope {
    /// Every request gets the fault.
    pub fn every() -> Scope {
        Scope {
            path: None,
            requests: Requests::Every,
        }
    }

    /// Only the first request gets the fault; the later ones get the healthy response.
    pub fn first() -> Scope {
        Scope {
            path: None,
            requests: Requests::First,
        }
    }

    /// Only the `n`-th request (1-based) gets the fault. `n` of 0 or 1 is
    /// [`Scope::first`].
    pub fn nth(n: u64) -> Scope {
        Scope {
            path: None,
            requests: if n <= 1 {
                Requests::First
            } else {
                Requests::Nth(n)
            },
        }
    }

    /// Each request gets the fault with probability `p` (clamped to `[0, 1]`, NaN is 0),
    /// drawn from a generator seeded with the server's seed.
    pub fn probability(p: f64) -> Scope {
        Scope {
            path: None,
            requests: Requests::Probability {
                p: clamp_probability(p),
                seed: None,
            },
        }
    }

    /// Like [`probability`](Scope::probability), with the generator's own seed: the same seed
    /// fails the same requests of a call, whatever server runs it.
    pub fn probability_seeded(p: f64, seed: u64) -> Scope {
        Scope {
            path: None,
            requests: Requests::Probability {
                p: clamp_probability(p),
                seed: Some(seed),
            },
        }
    }

    /// Narrows the scope to requests whose path (without the query) is exactly `path`;
    /// requests to other paths get the healthy response, and counting scopes count only the
    /// requests to `path`. A missing leading `/` is added.
    pub fn on_path(mut self, path: impl Into<String>) -> Scope {
        let path = path.into();
        self.path = Some(if path.starts_with('/') {
            path
        } else {
            format!("/{path}")
        });
        self
    }

    /// The path the scope is narrowed to, if any.
    pub fn path(&self) -> Option<&str> {
        self.path.as_deref()
    }

    /// Which of the matched requests get the fault.
    pub fn requests(&self) -> Requests {
        self.requests
    }

    /// Whether the scope is [`Scope::every`]: every request, whatever its path.
    pub fn is_every_request(&self) -> bool {
        self.path.is_none() && self.requests == Requests::Every
    }

    /// The scope's kinds: its requests' kind, plus [`ScopeKind::Path`] with a path.
    pub fn kinds(&self) -> Vec<ScopeKind> {
        let mut kinds = vec![match self.requests {
            Requests::Every => ScopeKind::Every,
            Requests::First => ScopeKind::First,
            Requests::Nth(_) => ScopeKind::Nth,
            Requests::Probability { .. } => ScopeKind::Probability,
        }];
        if self.path.is_some() {
            kinds.push(ScopeKind::Path);
        }
        kinds
    }

    /// The scope's place in the shrink order (see the [module docs](self)), from 0 (every
    /// request) to 7 (requests to a path, with a probability). Ties: a smaller n is simpler.
    pub fn shrink_rank(&self) -> u8 {
        let requests = match self.requests {
            Requests::Every => 0,
            Requests::First => 1,
            Requests::Nth(_) => 2,
            Requests::Probability { .. } => 6,
        };
        match (self.path.is_some(), requests) {
            (false, r) => r,
            (true, 6) => 7,
            (true, r) => r + 3,
        }
    }

    /// The request matcher of the scope's rule: [`matchers::path`] or [`matchers::any`].
    pub fn matcher(&self) -> Matcher {
        match &self.path {
            Some(path) => matchers::path(path.clone()),
            None => matchers::any(),
        }
    }

    /// The schedule of the scope's rule.
    pub fn schedule(&self) -> Schedule {
        match self.requests {
            Requests::Every => Schedule::always(),
            Requests::First => Schedule::first(),
            Requests::Nth(n) => Schedule::nth(n),
            Requests::Probability { p, seed: None } => Schedule::probability(p),
            Requests::Probability { p, seed: Some(s) } => Schedule::probability_seeded(p, s),
        }
    }
}

impl Default for Scope {
    /// [`Scope::every`].
    fn default() -> Scope {
        Scope::every()
    }
}

fn clamp_probability(p: f64) -> f64 {
    if p.is_nan() { 0.0 } else { p.clamp(0.0, 1.0) }
}

impl fmt::Display for Scope {
    /// `every request`, `the first request only`, `the third request to /data only`,
    /// `each request to /x with probability 0.3 (seed 7)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let to = self
            .path
            .as_deref()
            .map(|p| format!(" to {p}"))
            .unwrap_or_default();
        match self.requests {
            Requests::Every => write!(f, "every request{to}"),
            Requests::First => write!(f, "the first request{to} only"),
            Requests::Nth(n) => write!(f, "the {} request{to} only", ordinal(n)),
            Requests::Probability { p, seed } => {
                write!(f, "each request{to} with probability {p}")?;
                match seed {
                    Some(seed) => write!(f, " (seed {seed})"),
                    None => Ok(()),
                }
            }
        }
    }
}

/// A fault and the upstream requests of one tool call it hits.
///
/// See the [module docs](crate::scope) for the model, and [`ScopedFault::rule`] for how it
/// is installed. Serialized (serde) as the table scenario files use, `{fault = "unavailable",
/// path = "/robots.txt", only = "first"}`; read back from that table or from a bare fault
/// profile (`"not-found"`: every request).
#[derive(Debug, Clone, PartialEq)]
pub struct ScopedFault {
    fault: Fault,
    scope: Scope,
}

impl ScopedFault {
    /// `fault` on the requests `scope` names.
    pub fn new(fault: Fault, scope: Scope) -> ScopedFault {
        ScopedFault { fault, scope }
    }

    /// `fault` on every request.
    pub fn every(fault: Fault) -> ScopedFault {
        ScopedFault::new(fault, Scope::every())
    }

    /// The healthy upstream ([`Fault::ok_default`] on every request): the simplest value of
    /// a fault strategy.
    pub fn healthy() -> ScopedFault {
        ScopedFault::every(Fault::ok_default())
    }

    /// The fault served to the requests in scope.
    pub fn fault(&self) -> &Fault {
        &self.fault
    }

    /// The upstream requests the fault hits (an optional path, and which requests fail).
    pub fn scope(&self) -> &Scope {
        &self.scope
    }

    /// Whether no request can fail: the fault is not a failure (`ok`, `delay`, `slow-body`,
    /// `pass-through`), or the scope's probability is 0.
    pub fn is_harmless(&self) -> bool {
        !self.fault.is_failure()
            || matches!(self.scope.requests, Requests::Probability { p, .. } if p <= 0.0)
    }

    /// The fault plan rule that serves it: `Rule::given(scope matcher)`, responding with the
    /// fault on the scope's schedule, otherwise healthy. Install it alone (with
    /// `set_rules([scoped.rule()])`) so that requests outside the scope get the server's
    /// healthy response and counting starts at the install.
    pub fn rule(&self) -> Rule {
        Rule::given(self.scope.matcher())
            .respond_with(self.fault.clone())
            .schedule(self.scope.schedule())
    }
}

impl From<Fault> for ScopedFault {
    /// `fault` on every request.
    fn from(fault: Fault) -> ScopedFault {
        ScopedFault::every(fault)
    }
}

impl From<&ScopedFault> for Rule {
    fn from(scoped: &ScopedFault) -> Rule {
        scoped.rule()
    }
}

impl Fault {
    /// This fault on the requests `scope` names: `Fault::unavailable().scoped(Scope::first())`.
    pub fn scoped(self, scope: Scope) -> ScopedFault {
        ScopedFault::new(self, scope)
    }
}

impl fmt::Display for ScopedFault {
    /// `unavailable on the first request only`, `rate-limited=2 on every request to /v1/items`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} on {}", self.fault, self.scope)
    }
}

/// `only = "first"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schemars", schemars(rename = "ScopedFaultOnly"))]
#[serde(rename_all = "lowercase")]
pub(crate) enum Only {
    /// The first request (to `path`, when given) only.
    First,
}

/// A scoped fault as a table: the fault, and the upstream requests it hits (every request
/// unless `path`, `only`, `nth` or `probability` says otherwise).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[cfg_attr(
    feature = "schemars",
    schemars(rename = "ScopedFaultTable", title = "scoped fault")
)]
#[serde(deny_unknown_fields)]
pub(crate) struct Table {
    /// The fault profile: a name such as `unavailable`, or `NAME=PARAM` (`rate-limited=30`,
    /// `delay=500`); see `mcp-chaos run --help`, `--faults`.
    fault: String,
    /// Only requests whose path (without the query) is exactly this get the fault; requests
    /// to other paths get the healthy response (200). With `only`, `nth` or `probability`,
    /// those count only the requests to this path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    path: Option<String>,
    /// `"first"`: only the first request gets the fault, the later ones the healthy
    /// response. Excludes `nth` and `probability`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    only: Option<Only>,
    /// Only the n-th request (1-based; `nth = 1` is `only = "first"`) gets the fault.
    /// Excludes `only` and `probability`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schemars", schemars(range(min = 1)))]
    nth: Option<u64>,
    /// Each request gets the fault with this probability, from 0 to 1, drawn from a seeded
    /// generator (reproducible). Excludes `only` and `nth`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schemars", schemars(range(min = 0.0, max = 1.0)))]
    probability: Option<f64>,
    /// With `probability`: the generator's seed (default: the run's seed, mixed per rule).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    seed: Option<u64>,
}

impl From<&ScopedFault> for Table {
    fn from(s: &ScopedFault) -> Table {
        let mut table = Table {
            fault: s.fault.to_string(),
            path: s.scope.path.clone(),
            ..Table::default()
        };
        match s.scope.requests {
            Requests::Every => {}
            Requests::First => table.only = Some(Only::First),
            Requests::Nth(n) => table.nth = Some(n),
            Requests::Probability { p, seed } => {
                table.probability = Some(p);
                table.seed = seed;
            }
        }
        table
    }
}

impl TryFrom<Table> for ScopedFault {
    type Error = String;

    fn try_from(t: Table) -> Result<ScopedFault, String> {
        let fault: Fault = t.fault.parse().map_err(|e| format!("`fault`: {e}"))?;
        let given = [t.only.is_some(), t.nth.is_some(), t.probability.is_some()];
        if given.iter().filter(|g| **g).count() > 1 {
            return Err("`only`, `nth` and `probability` exclude each other; give one".into());
        }
        if t.seed.is_some() && t.probability.is_none() {
            return Err("`seed` goes with `probability`".into());
        }
        let mut scope = match (t.only, t.nth, t.probability) {
            (Some(Only::First), _, _) => Scope::first(),
            (_, Some(0), _) => return Err("`nth` counts requests from 1".into()),
            (_, Some(n), _) => Scope::nth(n),
            (_, _, Some(p)) if !(0.0..=1.0).contains(&p) => {
                return Err(format!(
                    "`probability` is {p}; it must be a number from 0 to 1"
                ));
            }
            (_, _, Some(p)) => match t.seed {
                Some(seed) => Scope::probability_seeded(p, seed),
                None => Scope::probability(p),
            },
            _ => Scope::every(),
        };
        if let Some(path) = t.path {
            if !path.starts_with('/') {
                return Err(format!(
                    "`path` {path:?} must start with '/' (it is compared with the request path, \
                     e.g. \"/robots.txt\")"
                ));
            }
            if path.contains('?') || path.contains('#') {
                return Err(format!(
                    "`path` {path:?} is compared with the request path without its query; \
                     drop the part from '?'"
                ));
            }
            scope = scope.on_path(path);
        }
        Ok(ScopedFault::new(fault, scope))
    }
}

impl Serialize for ScopedFault {
    /// The table form: `{"fault": "unavailable", "path": "/robots.txt", "only": "first"}`
    /// (keys that do not apply are left out).
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Table::from(self).serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ScopedFault {
    /// Reads the table form (unknown keys and contradictions are errors naming the key), or
    /// a bare fault profile string, which means every request.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TableOrProfile;

        impl<'de> Visitor<'de> for TableOrProfile {
            type Value = ScopedFault;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(
                    "a fault profile such as \"not-found\", or a table such as \
                     { fault = \"unavailable\", path = \"/robots.txt\" }",
                )
            }

            fn visit_str<E: de::Error>(self, spec: &str) -> Result<ScopedFault, E> {
                spec.parse::<Fault>()
                    .map(ScopedFault::every)
                    .map_err(E::custom)
            }

            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<ScopedFault, A::Error> {
                let table = Table::deserialize(de::value::MapAccessDeserializer::new(map))?;
                ScopedFault::try_from(table).map_err(de::Error::custom)
            }
        }

        deserializer.deserialize_any(TableOrProfile)
    }
}

#[cfg(feature = "schemars")]
impl schemars::JsonSchema for ScopedFault {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ScopedFault".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let table = generator.subschema_for::<Table>();
        let table = schemars::json_schema!({
            "allOf": [table],
            "not": {
                "anyOf": [
                    {"required": ["only", "nth"]},
                    {"required": ["only", "probability"]},
                    {"required": ["nth", "probability"]}
                ]
            },
            "dependentRequired": {"seed": ["probability"]}
        });
        schemars::json_schema!({
            "description": "An upstream fault: a fault profile (every request gets it), or a \
                table that scopes it to some requests.",
            "anyOf": [
                {
                    "type": "string",
                    "description": "A fault profile such as `not-found`, `rate-limited=30`, \
                        `hang`: every upstream request gets it."
                },
                table
            ]
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constructors_normalise_and_print() {
        assert_eq!(Scope::nth(1), Scope::first());
        assert_eq!(Scope::nth(0), Scope::first());
        assert_eq!(Scope::nth(3).requests(), Requests::Nth(3));
        assert_eq!(
            Scope::every().on_path("robots.txt").path(),
            Some("/robots.txt")
        );
        assert_eq!(
            Scope::probability(f64::NAN).requests(),
            Requests::Probability { p: 0.0, seed: None }
        );
        assert_eq!(
            Scope::probability_seeded(7.0, 1).requests(),
            Requests::Probability {
                p: 1.0,
                seed: Some(1)
            }
        );
        let printed: Vec<String> = [
            Scope::every(),
            Scope::first(),
            Scope::nth(3),
            Scope::every().on_path("/robots.txt"),
            Scope::first().on_path("/meta"),
            Scope::nth(2).on_path("/data"),
            Scope::probability(0.3),
            Scope::probability_seeded(0.5, 9).on_path("/x"),
        ]
        .iter()
        .map(ToString::to_string)
        .collect();
        assert_eq!(
            printed,
            [
                "every request",
                "the first request only",
                "the third request only",
                "every request to /robots.txt",
                "the first request to /meta only",
                "the second request to /data only",
                "each request with probability 0.3",
                "each request to /x with probability 0.5 (seed 9)",
            ]
        );
        assert_eq!(
            Fault::rate_limit(2)
                .scoped(Scope::every().on_path("/v1"))
                .to_string(),
            "rate-limited=2 on every request to /v1"
        );
    }

    #[test]
    fn the_shrink_rank_follows_the_documented_order() {
        let ordered = [
            Scope::every(),
            Scope::first(),
            Scope::nth(2),
            Scope::every().on_path("/a"),
            Scope::first().on_path("/a"),
            Scope::nth(2).on_path("/a"),
            Scope::probability_seeded(0.5, 1),
            Scope::probability_seeded(0.5, 1).on_path("/a"),
        ];
        let ranks: Vec<u8> = ordered.iter().map(Scope::shrink_rank).collect();
        assert_eq!(ranks, [0, 1, 2, 3, 4, 5, 6, 7]);
        assert!(Scope::every().is_every_request());
        assert!(!Scope::every().on_path("/a").is_every_request());
        assert_eq!(
            Scope::first().on_path("/a").kinds(),
            [ScopeKind::First, ScopeKind::Path]
        );
    }

    #[test]
    fn rules_match_the_scope_and_fire_on_its_schedule() {
        let rule = Fault::unavailable()
            .scoped(Scope::first().on_path("/robots.txt"))
            .rule();
        assert_eq!(rule.fault(), &Fault::Unavailable);
        assert_eq!(rule.schedule, Schedule::first());
        let headers = http::HeaderMap::new();
        let view = |path| crate::rule::RequestView {
            method: "GET",
            path,
            host: None,
            headers: &headers,
        };
        assert!(rule.matches(&view("/robots.txt")));
        assert!(!rule.matches(&view("/robots.txt.bak")));
        assert!(!rule.matches(&view("/data")));
        assert!(ScopedFault::healthy().is_harmless());
        assert!(Fault::delay(5).scoped(Scope::first()).is_harmless());
        assert!(
            Fault::Hang
                .scoped(Scope::probability_seeded(0.0, 1))
                .is_harmless()
        );
        assert!(!Fault::Hang.scoped(Scope::nth(4)).is_harmless());
    }

    #[test]
    fn serde_round_trips_through_json_and_toml() {
        let all = [
            ScopedFault::every(Fault::NotFound),
            Fault::unavailable().scoped(Scope::every().on_path("/robots.txt")),
            Fault::not_found().scoped(Scope::first()),
            Fault::Hang.scoped(Scope::nth(2).on_path("/data")),
            Fault::rate_limit(30).scoped(Scope::probability_seeded(0.25, 77)),
            Fault::delay(500).scoped(Scope::probability(0.5)),
            Fault::slow_body(4, 10).scoped(Scope::first().on_path("/a/b")),
        ];
        for scoped in all {
            let json = serde_json::to_string(&scoped).expect("serializable");
            let back: ScopedFault = serde_json::from_str(&json).expect(&json);
            assert_eq!(back, scoped, "{json}");
            #[derive(Serialize, Deserialize)]
            struct Doc {
                fault: ScopedFault,
            }
            let text = toml::to_string(&Doc {
                fault: scoped.clone(),
            })
            .expect("TOML");
            let back: Doc = toml::from_str(&text).expect(&text);
            assert_eq!(back.fault, scoped, "{text}");
        }
        assert_eq!(
            serde_json::to_value(Fault::Hang.scoped(Scope::nth(2).on_path("/data")))
                .expect("serializable"),
            serde_json::json!({"fault": "hang", "path": "/data", "nth": 2})
        );
        let bare: ScopedFault = serde_json::from_str("\"rate-limited=5\"").expect("a profile");
        assert_eq!(bare, ScopedFault::every(Fault::rate_limit(5)));
        let nth1: ScopedFault =
            serde_json::from_str(r#"{"fault": "gone", "nth": 1}"#).expect("valid");
        assert_eq!(nth1, Fault::Gone.scoped(Scope::first()));
    }

    #[test]
    fn bad_tables_are_errors_that_name_the_key() {
        let bad = [
            (r#"{"fault": "teapot"}"#, "`fault`"),
            (r#"{"fault": "hang", "pth": "/x"}"#, "unknown field `pth`"),
            (
                r#"{"fault": "hang", "only": "last"}"#,
                "unknown variant `last`",
            ),
            (
                r#"{"fault": "hang", "only": "first", "nth": 2}"#,
                "exclude each other",
            ),
            (
                r#"{"fault": "hang", "nth": 2, "probability": 0.5}"#,
                "exclude each other",
            ),
            (r#"{"fault": "hang", "nth": 0}"#, "from 1"),
            (r#"{"fault": "hang", "probability": 1.5}"#, "from 0 to 1"),
            (r#"{"fault": "hang", "seed": 3}"#, "`seed` goes with"),
            (
                r#"{"fault": "hang", "path": "robots.txt"}"#,
                "start with '/'",
            ),
            (
                r#"{"fault": "hang", "path": "/a?b=1"}"#,
                "without its query",
            ),
            (r#"{"path": "/a"}"#, "missing field `fault`"),
            ("\"teapot\"", "unknown fault"),
            ("3", "a fault profile"),
        ];
        for (json, wanted) in bad {
            let err = serde_json::from_str::<ScopedFault>(json)
                .expect_err(json)
                .to_string();
            assert!(err.contains(wanted), "{json}: {err}");
        }
    }
}
