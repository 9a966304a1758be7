//! `format` values (JSON Schema 2020-12 validation §7.3), always on loopback.
//!
//! Generated formats: `date`, `date-time`, `time`, `duration`, `email`, `idn-email`,
//! `hostname`, `idn-hostname`, `ipv4`, `ipv6`, `uri`, `uri-reference`, `iri`,
//! `iri-reference`, `url` (not standard, common in MCP servers), `uri-template`, `uuid`,
//! `json-pointer`, `relative-json-pointer`, `regex`. URIs point under the URL base;
//! host names are `localhost` or `127.0.0.1`; e-mail domains are `localhost` or
//! `[127.0.0.1]`; IPv4 addresses are in `127.0.0.0/8`; IPv6 addresses are `::1` (spelled
//! `::1`, `0::1` or `0:0:0:0:0:0:0:1`). With the default URL base, URIs also use the
//! spellings `https://127.0.0.1:9`, `http://localhost:9` and `http://[::1]:9` of the same
//! closed port. Unknown formats return `None` (free-form strings are used, the
//! validator ignores unknown formats).

use std::sync::Arc;

use proptest::prelude::*;
use proptest::sample::select;

use super::chars::{Alphabet, Chars};

/// Which kind of loopback string a property *name* asks for, when the schema has no `format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Hint {
    /// `url`, `uri`, `endpoint`, `href`, `link`, `*_url`, `*Url`, `*_uri`, `*Uri`, ...
    Url,
    /// `host`, `hostname`, `domain`, `*_host`, `*Host`, ...
    Host,
    /// `ip`, `ip_address`, `ipAddress`, ...
    Ip,
    /// `email`, `*_email`, `*Email`.
    Email,
    /// `path`, `route`, `pathname`, `url_path`, `*_path`, `*Path`, `*_route`, or a
    /// description that speaks of a path or route ("Path of the page", "the API route"):
    /// path-shaped values (`/`, `/a`, `/robots.txt`, `/v1/items/1`) are mixed into its
    /// generated cases (a tool that builds `base_url + path` reaches its upstream only with
    /// one). Its simple example stays a plain string.
    Path,
}

/// The hint for a property name, if any.
pub(crate) fn hint_for_name(name: &str) -> Option<Hint> {
    let lower = name.to_ascii_lowercase();
    let ends = |suffixes: &[&str]| {
        suffixes.iter().any(|s| {
            lower.ends_with(&format!("_{s}"))
                || lower.ends_with(&format!("-{s}"))
                || (name.len() > s.len()
                    && name.ends_with(&capitalized(s))
                    && name[..name.len() - s.len()]
                        .chars()
                        .last()
                        .is_some_and(char::is_lowercase))
                || name.ends_with(&s.to_ascii_uppercase()) && name.len() > s.len()
        })
    };
    match lower.as_str() {
        "url" | "uri" | "endpoint" | "href" | "link" | "webhook" | "callback" | "iri" => {
            return Some(Hint::Url);
        }
        "host" | "hostname" | "domain" => return Some(Hint::Host),
        "ip" | "ipaddress" | "ip_address" | "ipv4" | "address_ip" => return Some(Hint::Ip),
        "email" | "e-mail" | "mail" => return Some(Hint::Email),
        "path" | "route" | "pathname" | "urlpath" | "url_path" | "uri_path" => {
            return Some(Hint::Path);
        }
        _ => {}
    }
    if ends(&["url", "uri", "endpoint", "href", "link", "webhook"]) {
        Some(Hint::Url)
    } else if ends(&["host", "hostname", "domain"]) {
        Some(Hint::Host)
    } else if ends(&["ip"]) {
        Some(Hint::Ip)
    } else if ends(&["email"]) {
        Some(Hint::Email)
    } else if ends(&["path", "route", "pathname"]) {
        Some(Hint::Path)
    } else {
        None
    }
}

/// The hint a property's `description` gives when its name gives none: a description that
/// speaks of a path or route ("Path of the page to fetch", "the API route", "URL path")
/// asks for [`Hint::Path`].
pub(crate) fn hint_for_description(description: &str) -> Option<Hint> {
    static PATH: std::sync::LazyLock<Option<::regex::Regex>> = std::sync::LazyLock::new(|| {
        ::regex::Regex::new(r"(?i)\b(?:path|paths|route|routes|pathname)\b").ok()
    });
    PATH.as_ref()
        .is_some_and(|r| r.is_match(description))
        .then_some(Hint::Path)
}

/// Path-shaped strings: `/`, then up to three segments, common ones (`robots.txt`, `v1`,
/// `items`, `index.html`) or short `[a-z0-9]` ones: `/`, `/a`, `/robots.txt`, `/v1/items/1`.
/// Never `//` (a scheme-relative URL) and never a dot segment.
pub(crate) fn path() -> BoxedStrategy<String> {
    let common = select(vec![
        "robots.txt",
        "index.html",
        "v1",
        "api",
        "items",
        "1",
        "a",
        "docs",
    ])
    .prop_map(String::from);
    let segment = prop_oneof![common, alnum(1, 8)];
    proptest::collection::vec(segment, 0..4)
        .prop_map(|v| format!("/{}", v.join("/")))
        .boxed()
}

fn capitalized(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
        .unwrap_or_default()
}

/// The `format` values the generator constructs values for (others are treated as
/// annotations).
pub const KNOWN: &[&str] = &[
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
];

fn alnum(lo: usize, hi: usize) -> BoxedStrategy<String> {
    Chars {
        alpha: Alphabet::Ranges(Arc::from([('0', '9'), ('a', 'z')].as_slice())),
        lo,
        hi,
    }
    .boxed()
}

fn seg() -> BoxedStrategy<String> {
    alnum(1, 8)
}

/// URLs under `base`. With the default base, other spellings of the same closed loopback
/// port are mixed in (`https`, `localhost`, `[::1]`), so `^https://` patterns can be met.
fn url(base: String) -> BoxedStrategy<String> {
    let bases: Vec<String> = if base == super::DEFAULT_URL_BASE {
        vec![
            base,
            "https://127.0.0.1:9".into(),
            "http://localhost:9".into(),
            "http://[::1]:9".into(),
        ]
    } else {
        vec![base]
    };
    let path = proptest::collection::vec(seg(), 0..3).prop_map(|v| v.join("/"));
    let query = (proptest::bool::weighted(0.25), seg(), seg());
    (select(bases), path, query)
        .prop_map(move |(base, p, (with_query, k, v))| {
            let mut s = format!("{base}/{p}");
            if with_query {
                s.push('?');
                s.push_str(&k);
                s.push('=');
                s.push_str(&v);
            }
            s
        })
        .boxed()
}

fn host() -> BoxedStrategy<String> {
    select(vec!["localhost", "127.0.0.1"])
        .prop_map(String::from)
        .boxed()
}

fn ipv4() -> BoxedStrategy<String> {
    (0u8..=255, 0u8..=255, 1u8..=254)
        .prop_map(|(a, b, c)| format!("127.{a}.{b}.{c}"))
        .boxed()
}

fn ipv6() -> BoxedStrategy<String> {
    select(vec!["::1", "0:0:0:0:0:0:0:1", "0::1"])
        .prop_map(String::from)
        .boxed()
}

/// Addresses on loopback: `@localhost`, and (for `email` only) the address literal
/// `@[127.0.0.1]`; validators disagree on address literals in `idn-email` (RFC 6531), so that
/// format stays on `localhost`.
fn email(literal: bool) -> BoxedStrategy<String> {
    let domains = if literal {
        vec!["localhost", "[127.0.0.1]"]
    } else {
        vec!["localhost"]
    };
    let local = (
        proptest::char::range('a', 'z'),
        alnum(0, 7),
        (proptest::bool::weighted(0.2), seg()).prop_map(|(with, s)| with.then_some(s)),
    );
    (local, select(domains))
        .prop_map(|((c, rest, dot), d)| {
            let mut l = String::from(c);
            l.push_str(&rest);
            if let Some(x) = dot {
                l.push('.');
                l.push_str(&x);
            }
            format!("{l}@{d}")
        })
        .boxed()
}

fn days_in_month(y: u32, m: u32) -> u32 {
    match m {
        2 if (y.is_multiple_of(4) && !y.is_multiple_of(100)) || y.is_multiple_of(400) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

fn date() -> BoxedStrategy<String> {
    (2000u32..=2099, 1u32..=12, 1u32..=31)
        .prop_map(|(y, m, d)| format!("{y:04}-{m:02}-{:02}", d.min(days_in_month(y, m))))
        .boxed()
}

fn time() -> BoxedStrategy<String> {
    let frac = (proptest::bool::weighted(0.2), 0u32..1000).prop_map(|(with, f)| with.then_some(f));
    let off = prop_oneof![
        3 => Just(String::from("Z")),
        1 => (0u32..=14, prop_oneof![Just(0u32), Just(30u32)], any::<bool>())
            .prop_map(|(h, m, neg)| format!("{}{h:02}:{m:02}", if neg { '-' } else { '+' })),
    ];
    (0u32..24, 0u32..60, 0u32..60, frac, off)
        .prop_map(|(h, m, s, f, o)| match f {
            Some(f) => format!("{h:02}:{m:02}:{s:02}.{f:03}{o}"),
            None => format!("{h:02}:{m:02}:{s:02}{o}"),
        })
        .boxed()
}

fn duration() -> BoxedStrategy<String> {
    prop_oneof![
        (1u32..400).prop_map(|d| format!("P{d}D")),
        (0u32..48, 0u32..60).prop_map(|(h, m)| format!("PT{h}H{m}M")),
        (1u32..10).prop_map(|w| format!("P{w}W")),
        (0u32..5, 1u32..12, 0u32..28).prop_map(|(y, m, d)| format!("P{y}Y{m}M{d}D")),
    ]
    .boxed()
}

fn uuid() -> BoxedStrategy<String> {
    any::<u128>()
        .prop_map(|x| {
            // Version 4, RFC 4122 variant.
            let x = (x & !(0xF << 76) & !(0x3 << 62)) | (0x4 << 76) | (0x2 << 62);
            let h = format!("{x:032x}");
            format!(
                "{}-{}-{}-{}-{}",
                &h[0..8],
                &h[8..12],
                &h[12..16],
                &h[16..20],
                &h[20..32]
            )
        })
        .boxed()
}

/// The strategy for a format, or `None` for formats this module does not know.
pub(crate) fn strategy(format: &str, base: &str) -> Option<BoxedStrategy<String>> {
    Some(match format {
        "date" => date(),
        "date-time" => (date(), time())
            .prop_map(|(d, t)| format!("{d}T{t}"))
            .boxed(),
        "time" => time(),
        "duration" => duration(),
        "email" => email(true),
        "idn-email" => email(false),
        "hostname" | "idn-hostname" => host(),
        "ipv4" => ipv4(),
        "ipv6" => ipv6(),
        "uri" | "uri-reference" | "iri" | "iri-reference" | "url" => url(base.to_string()),
        "uri-template" => {
            let b = base.to_string();
            seg().prop_map(move |s| format!("{b}/{s}/{{id}}")).boxed()
        }
        "uuid" => uuid(),
        "json-pointer" => proptest::collection::vec(seg(), 0..3)
            .prop_map(|v| v.iter().map(|s| format!("/{s}")).collect())
            .boxed(),
        "relative-json-pointer" => (0u32..3, proptest::collection::vec(seg(), 0..2))
            .prop_map(|(n, v)| {
                format!(
                    "{n}{}",
                    v.iter().map(|s| format!("/{s}")).collect::<String>()
                )
            })
            .boxed(),
        "regex" => select(vec!["^[a-z]+$", "a|b", "[0-9]{2,4}", ".*"])
            .prop_map(String::from)
            .boxed(),
        _ => return None,
    })
}

/// The strategy for a name hint.
pub(crate) fn hint_strategy(hint: Hint, base: &str) -> BoxedStrategy<String> {
    match hint {
        Hint::Url => url(base.to_string()),
        Hint::Host => host(),
        Hint::Ip => ipv4(),
        Hint::Email => email(true),
        Hint::Path => path(),
    }
}

/// A deterministic small example of a format (used by `example()` and the boundary phase).
pub(crate) fn example(format: &str, base: &str) -> Option<String> {
    Some(match format {
        "date" => "2024-01-01".into(),
        "date-time" => "2024-01-01T00:00:00Z".into(),
        "time" => "00:00:00Z".into(),
        "duration" => "P1D".into(),
        "email" | "idn-email" => "user@localhost".into(),
        "hostname" | "idn-hostname" => "localhost".into(),
        "ipv4" => "127.0.0.1".into(),
        "ipv6" => "::1".into(),
        "uri" | "uri-reference" | "iri" | "iri-reference" | "url" => format!("{base}/"),
        "uri-template" => format!("{base}/{{id}}"),
        "uuid" => "00000000-0000-4000-8000-000000000000".into(),
        "json-pointer" => "/a".into(),
        "relative-json-pointer" => "0".into(),
        "regex" => "^a$".into(),
        _ => return None,
    })
}

/// A deterministic example for a name hint.
pub(crate) fn hint_example(hint: Hint, base: &str) -> String {
    match hint {
        Hint::Url => format!("{base}/"),
        Hint::Host => "localhost".into(),
        Hint::Ip => "127.0.0.1".into(),
        Hint::Email => "user@localhost".into(),
        Hint::Path => "/a".into(),
    }
}

/// Strings that break a format (each is checked against the validator before use).
pub(crate) fn invalid_candidates(format: &str) -> &'static [&'static str] {
    match format {
        "date" => &["2024-13-45", "not-a-date", "2024-02-30", "20240101"],
        "date-time" => &[
            "2024-01-01 25:00",
            "not-a-date-time",
            "2024-01-01T25:00:00Z",
        ],
        "time" => &["25:61:61Z", "not-a-time", "12:00"],
        "duration" => &["P", "1D", "not-a-duration"],
        "email" | "idn-email" => &["not-an-email", "@localhost", "user@"],
        "hostname" | "idn-hostname" => &["-bad-.", "bad_host!", "a..b"],
        "ipv4" => &["127.0.0.256", "127.0.0", "not-an-ip"],
        "ipv6" => &[":::1", "::g", "not-an-ip"],
        "uri" | "iri" | "url" => &["not a uri", "no-scheme", "::"],
        "uri-reference" | "iri-reference" => &["not a uri\\", "\\\\", "%zz"],
        "uri-template" => &["{unclosed", "}{"],
        "uuid" => &["not-a-uuid", "00000000-0000-0000-0000-00000000000g"],
        "json-pointer" => &["a/b", "~2"],
        "relative-json-pointer" => &["-1", "/a", "01"],
        "regex" => &["(", "[a-", "*a"],
        _ => &[],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_hints() {
        for (n, h) in [
            ("url", Some(Hint::Url)),
            ("callback_url", Some(Hint::Url)),
            ("imageUrl", Some(Hint::Url)),
            ("baseURL", Some(Hint::Url)),
            ("href", Some(Hint::Url)),
            ("curl", None),
            ("hurl", None),
            ("hostname", Some(Hint::Host)),
            ("smtpHost", Some(Hint::Host)),
            ("ghost", None),
            ("user_email", Some(Hint::Email)),
            ("client_ip", Some(Hint::Ip)),
            ("zip", None),
            ("name", None),
            ("path", Some(Hint::Path)),
            ("route", Some(Hint::Path)),
            ("url_path", Some(Hint::Path)),
            ("pagePath", Some(Hint::Path)),
            ("api_route", Some(Hint::Path)),
            ("xpath", None),
            ("pathway", None),
        ] {
            assert_eq!(hint_for_name(n), h, "{n}");
        }
    }

    #[test]
    fn description_hints() {
        assert_eq!(
            hint_for_description("Path of the page to fetch, e.g. /docs"),
            Some(Hint::Path)
        );
        assert_eq!(hint_for_description("The API route"), Some(Hint::Path));
        assert_eq!(hint_for_description("A city name"), None);
        assert_eq!(hint_for_description("xpath expression"), None);
    }

    #[test]
    fn paths_are_path_shaped_and_loopback_safe() {
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        let st = path();
        for _ in 0..200 {
            let p = st
                .new_tree(&mut runner)
                .map(|t| proptest::strategy::ValueTree::current(&t))
                .unwrap_or_default();
            assert!(p.starts_with('/'), "{p}");
            assert!(!p.contains("//") && !p.contains("/../"), "{p}");
            assert!(super::super::safety::is_safe_str(&p), "{p}");
        }
    }
}
