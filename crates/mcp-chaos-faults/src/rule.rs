//! Rules: a request matcher, a fault, a schedule and a healthy fallback.

use crate::fault::Fault;
use crate::schedule::Schedule;

/// What a matcher sees of a request.
#[derive(Debug, Clone)]
pub(crate) struct RequestView<'a> {
    pub(crate) method: &'a str,
    /// Path without the query; empty for `CONNECT`.
    pub(crate) path: &'a str,
    /// Host from the absolute URI, the `CONNECT` authority or the `Host` header, without
    /// the port.
    pub(crate) host: Option<&'a str>,
    pub(crate) headers: &'a http::HeaderMap,
}

/// One condition on a request. Build matchers with the functions in
/// [`matchers`](crate::matchers); combine them with [`RuleBuilder::and`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Matcher(MatcherKind);

#[derive(Debug, Clone, PartialEq, Eq)]
enum MatcherKind {
    Any,
    Method(String),
    PathPrefix(String),
    Path(String),
    Header { name: String, value: Option<String> },
    Host(String),
}

impl Matcher {
    pub(crate) fn matches(&self, req: &RequestView<'_>) -> bool {
        match &self.0 {
            MatcherKind::Any => true,
            MatcherKind::Method(m) => req.method.eq_ignore_ascii_case(m),
            MatcherKind::PathPrefix(p) => req.path.starts_with(p.as_str()),
            MatcherKind::Path(p) => req.path == p,
            MatcherKind::Header { name, value } => {
                let mut values = req.headers.get_all(name.as_str()).iter();
                match value {
                    None => values.next().is_some(),
                    Some(v) => values.any(|h| h.as_bytes() == v.as_bytes()),
                }
            }
            MatcherKind::Host(h) => req.host.is_some_and(|rh| rh.eq_ignore_ascii_case(h)),
        }
    }
}

/// Matcher constructors, in the spirit of wiremock's `matchers` module.
pub mod matchers {
    use super::{Matcher, MatcherKind};

    /// Matches every request.
    pub fn any() -> Matcher {
        Matcher(MatcherKind::Any)
    }

    /// Matches the HTTP method, ASCII case-insensitively (`"GET"`, `"POST"`, `"CONNECT"`).
    pub fn method(method: impl Into<String>) -> Matcher {
        Matcher(MatcherKind::Method(method.into()))
    }

    /// Matches when the request path (without the query) starts with `prefix`. This is a
    /// plain string prefix: `"/v1"` matches `/v1/users` and also `/v10`. `CONNECT`
    /// requests have an empty path, so only `""` matches them.
    pub fn path_prefix(prefix: impl Into<String>) -> Matcher {
        Matcher(MatcherKind::PathPrefix(prefix.into()))
    }

    /// Matches when the request path (without the query) is exactly `path`.
    pub fn path(path: impl Into<String>) -> Matcher {
        Matcher(MatcherKind::Path(path.into()))
    }

    /// Matches when header `name` (case-insensitive) is present with exactly `value`.
    pub fn header(name: impl Into<String>, value: impl Into<String>) -> Matcher {
        Matcher(MatcherKind::Header {
            name: name.into().to_ascii_lowercase(),
            value: Some(value.into()),
        })
    }

    /// Matches when header `name` (case-insensitive) is present, whatever its value.
    pub fn header_exists(name: impl Into<String>) -> Matcher {
        Matcher(MatcherKind::Header {
            name: name.into().to_ascii_lowercase(),
            value: None,
        })
    }

    /// Matches the target host, without port, ASCII case-insensitively: the host of an
    /// absolute-form proxy request (`GET http://api.example.test/…`), the authority of a
    /// `CONNECT`, or else the `Host` header.
    pub fn host(host: impl Into<String>) -> Matcher {
        Matcher(MatcherKind::Host(host.into()))
    }
}

/// The first half of a [`Rule`]: matchers waiting for a fault.
///
/// ```
/// use mcp_chaos_faults::{Fault, Rule, Schedule, matchers::{method, path_prefix}};
///
/// let rule: Rule = Rule::given(method("GET"))
///     .and(path_prefix("/v1/forecast"))
///     .respond_with(Fault::unavailable())
///     .schedule(Schedule::first_n(2))
///     .otherwise(Fault::ok(r#"{"temp":21}"#))
///     .named("forecast-flaps");
/// ```
#[derive(Debug, Clone)]
#[must_use = "a RuleBuilder does nothing until respond_with turns it into a Rule"]
pub struct RuleBuilder {
    matchers: Vec<Matcher>,
}

impl RuleBuilder {
    /// Adds another condition; a rule matches when all of its conditions do.
    pub fn and(mut self, matcher: Matcher) -> RuleBuilder {
        self.matchers.push(matcher);
        self
    }

    /// Finishes the rule with the fault it serves (on every matched request until a
    /// [`schedule`](Rule::schedule) says otherwise).
    pub fn respond_with(self, fault: Fault) -> Rule {
        Rule {
            matchers: self.matchers,
            fault,
            schedule: Schedule::Always,
            otherwise: None,
            name: None,
        }
    }
}

/// One entry of a fault plan: which requests it applies to, the fault it serves, when
/// ([`Schedule`]), and what it serves when the schedule says "healthy".
///
/// Rules are tried in order; the **first** rule whose matchers all match a request
/// handles it, whatever its schedule decides. A request no rule matches gets the server's
/// unmatched response (by default the healthy response).
#[derive(Debug, Clone)]
#[must_use = "a Rule does nothing until it is added to a server builder or set_rules"]
pub struct Rule {
    pub(crate) matchers: Vec<Matcher>,
    pub(crate) fault: Fault,
    pub(crate) schedule: Schedule,
    pub(crate) otherwise: Option<Fault>,
    pub(crate) name: Option<String>,
}

impl Rule {
    /// Starts a rule that applies to requests matching `matcher`.
    pub fn given(matcher: Matcher) -> RuleBuilder {
        RuleBuilder {
            matchers: vec![matcher],
        }
    }

    /// Starts a rule that applies to every request.
    pub fn any() -> RuleBuilder {
        Rule::given(matchers::any())
    }

    /// Sets when the fault is served; the default is [`Schedule::Always`].
    pub fn schedule(mut self, schedule: Schedule) -> Rule {
        self.schedule = schedule;
        self
    }

    /// Sets the healthy response served when the schedule does not fire, and the body
    /// that body-shaping faults (`delay`, `slow-body`, `truncated-body`,
    /// `reset-mid-body`) shape. The default is the server's healthy response
    /// (`Fault::ok_default()` for a [`FakeUpstream`](crate::FakeUpstream),
    /// `Fault::PassThrough` for a [`ForwardProxy`](crate::ForwardProxy)).
    pub fn otherwise(mut self, healthy: Fault) -> Rule {
        self.otherwise = Some(healthy);
        self
    }

    /// Names the rule; the name appears in [`JournalEntry::rule_name`](crate::JournalEntry).
    pub fn named(mut self, name: impl Into<String>) -> Rule {
        self.name = Some(name.into());
        self
    }

    /// The fault this rule serves when its schedule fires.
    pub fn fault(&self) -> &Fault {
        &self.fault
    }

    /// The rule's name, if it has one.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    pub(crate) fn matches(&self, req: &RequestView<'_>) -> bool {
        self.matchers.iter().all(|m| m.matches(req))
    }
}

#[cfg(test)]
mod tests {
    use super::matchers::*;
    use super::*;

    fn view<'a>(
        method: &'a str,
        path: &'a str,
        host: Option<&'a str>,
        headers: &'a http::HeaderMap,
    ) -> RequestView<'a> {
        RequestView {
            method,
            path,
            host,
            headers,
        }
    }

    #[test]
    fn matchers_combine_with_and() {
        let mut headers = http::HeaderMap::new();
        headers.insert("x-api-key", http::HeaderValue::from_static("k1"));
        let rule = Rule::given(method("get"))
            .and(path_prefix("/v1"))
            .and(header("X-Api-Key", "k1"))
            .and(host("API.example.test"))
            .respond_with(Fault::NotFound);
        assert!(rule.matches(&view("GET", "/v1/x", Some("api.example.test"), &headers)));
        assert!(!rule.matches(&view("POST", "/v1/x", Some("api.example.test"), &headers)));
        assert!(!rule.matches(&view("GET", "/v2", Some("api.example.test"), &headers)));
        assert!(!rule.matches(&view("GET", "/v1", None, &headers)));
        let empty = http::HeaderMap::new();
        assert!(!rule.matches(&view("GET", "/v1", Some("api.example.test"), &empty)));
        assert!(
            Rule::given(header_exists("x-api-key"))
                .respond_with(Fault::Hang)
                .matches(&view("GET", "/", None, &headers))
        );
        assert!(
            Rule::given(path("/v1/x"))
                .respond_with(Fault::Hang)
                .matches(&view("GET", "/v1/x", None, &headers))
        );
        assert!(
            !Rule::given(path("/v1"))
                .respond_with(Fault::Hang)
                .matches(&view("GET", "/v1/x", None, &headers))
        );
    }
}
