//! The leak scanner behind `leaked-internals` (MC204): a rule table of what a server's internals
//! look like when they reach the model — stack traces, source and home paths, SQL statements
//! and driver errors, private addresses and internal hostnames, credential-shaped strings —
//! plus exact canaries (planted by the fake upstream) and secrets (given to the server).
//!
//! Text is scanned as written and, once, after decoding base64 runs and `\uXXXX` escapes, so
//! that a leak is found even when the server encoded it. A match that also appears in what
//! mcp-chaos sent (an echoed argument) is not a leak, and neither is a source or home path
//! derived from the request: one that ends with a path the request gave (`a.py` answered as
//! `/srv/sandbox/a.py`, the caller's own argument resolved against the server's root) — see
//! [`derived_from_request`]. A dependency path (`node_modules`, `site-packages`) is the
//! server's installation whatever its last components are, and stays a leak. Each match names
//! its rule and carries an excerpt in which the matched text itself is redacted.
//!
//! No spec sentence forbids stack traces in tool errors; the rule rests on `server/tools`
//! §Security Considerations ("sanitize tool outputs", MUST) and `server/utilities/logging`
//! §Security (log messages MUST NOT contain secrets or internal details).

use std::sync::LazyLock;

use base64::Engine;
use regex::{Regex, RegexSet};

/// A family of leak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LeakKind {
    /// A canary planted in the fake upstream's error bodies: the raw upstream response leaked.
    Canary,
    /// A secret the server was given (`--secret-env`).
    Secret,
    /// A stack trace or stack frame.
    StackTrace,
    /// A source-code, dependency or home-directory path.
    Path,
    /// A SQL statement or SQL driver error.
    Sql,
    /// A private IP address or internal hostname.
    Network,
    /// A credential-shaped string: a provider key or token (AWS, GitHub, Slack, Stripe,
    /// OpenAI, Google), a JWT, a private key, a bearer token, or a high-entropy secret.
    Credential,
}

impl LeakKind {
    /// The family's name in finding messages: `canary`, `secret`, `stack trace`,
    /// `internal path`, `SQL`, `internal network address` or `credential`.
    pub fn name(self) -> &'static str {
        match self {
            LeakKind::Canary => "canary",
            LeakKind::Secret => "secret",
            LeakKind::StackTrace => "stack trace",
            LeakKind::Path => "internal path",
            LeakKind::Sql => "SQL",
            LeakKind::Network => "internal network address",
            LeakKind::Credential => "credential",
        }
    }
}

/// One rule of the table ([`RULES`]): a regular expression and the family it reports.
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    /// Stable id, e.g. `python-traceback`.
    pub id: &'static str,
    /// The family of leak the rule finds.
    pub kind: LeakKind,
    /// The pattern (Rust `regex` syntax).
    pub pattern: &'static str,
    /// Minimum Shannon entropy (bits per character) of the first capture group, for generic
    /// credential patterns; 0 for none.
    pub min_entropy: f64,
}

/// The built-in rules. Each has a true and a false example in this module's tests.
pub const RULES: &[Rule] = &[
    Rule {
        id: "python-traceback",
        kind: LeakKind::StackTrace,
        pattern: r"Traceback \(most recent call last\)",
        min_entropy: 0.0,
    },
    Rule {
        id: "python-frame",
        kind: LeakKind::StackTrace,
        pattern: r#"File "[^"\n]+", line \d+"#,
        min_entropy: 0.0,
    },
    Rule {
        id: "node-frame",
        kind: LeakKind::StackTrace,
        pattern: r"\bat (?:async )?(?:[\w$.<>\[\]]+ )?\(?(?:file://|node:|/|[A-Za-z]:\\)[^\s()]*:\d+:\d+\)?",
        min_entropy: 0.0,
    },
    Rule {
        id: "java-frame",
        kind: LeakKind::StackTrace,
        pattern: r"\bat (?:java|javax|jdk|sun|com|org|net|io)\.[\w$.]+\([\w$.]*(?::\d+)?\)|\bCaused by: [\w.$]+(?:Exception|Error)\b",
        min_entropy: 0.0,
    },
    Rule {
        id: "go-panic",
        kind: LeakKind::StackTrace,
        pattern: r"\bgoroutine \d+ \[running\]",
        min_entropy: 0.0,
    },
    Rule {
        id: "rust-panic",
        kind: LeakKind::StackTrace,
        pattern: r"\bpanicked at [^\n]*?:\d+:\d+",
        min_entropy: 0.0,
    },
    Rule {
        id: "dotnet-frame",
        kind: LeakKind::StackTrace,
        pattern: r"\bat [\w.`<>]+\([^)\n]*\) in [^\n]+:line \d+",
        min_entropy: 0.0,
    },
    Rule {
        id: "ruby-frame",
        kind: LeakKind::StackTrace,
        pattern: r"\bfrom /[^\s:]+\.rb:\d+:in\b",
        min_entropy: 0.0,
    },
    Rule {
        id: "php-frame",
        kind: LeakKind::StackTrace,
        pattern: r"#\d+ /[^\s(]+\.php\(\d+\)",
        min_entropy: 0.0,
    },
    Rule {
        id: "source-path",
        kind: LeakKind::Path,
        pattern: r"(?:/[\w.@+-]+)+/[\w.@+-]+\.(?:py|js|mjs|cjs|ts|rb|go|java|rs|cs|php|kt|scala|exs?)\b",
        min_entropy: 0.0,
    },
    Rule {
        id: "dependency-path",
        kind: LeakKind::Path,
        pattern: r"[\w./\\-]*(?:node_modules|site-packages|dist-packages)[/\\][\w.@/\\-]+",
        min_entropy: 0.0,
    },
    Rule {
        id: "home-path",
        kind: LeakKind::Path,
        pattern: r"(?:/home/[\w.-]+/|/Users/[\w.-]+/|/root/|[A-Za-z]:\\Users\\[\w.-]+\\)[\w./\\-]*",
        min_entropy: 0.0,
    },
    Rule {
        id: "sql-statement",
        kind: LeakKind::Sql,
        pattern: r"\b(?:SELECT\s+(?:\*|[\w.,\s()]+?)\s+FROM\s+[\w.`\x22]+|INSERT\s+INTO\s+[\w.`\x22]+|UPDATE\s+[\w.`\x22]+\s+SET\s+\w+|DELETE\s+FROM\s+[\w.`\x22]+)",
        min_entropy: 0.0,
    },
    Rule {
        id: "sql-error",
        kind: LeakKind::Sql,
        pattern: r"\bSQLSTATE\b|\bORA-\d{5}\b|syntax error at or near|You have an error in your SQL syntax|\bsqlite3\.\w*Error\b|\bpsycopg2?\.\w*Error\b|\bPG::\w+Error\b|\bSQLException\b|\bER_[A-Z_]{4,}\b",
        min_entropy: 0.0,
    },
    Rule {
        id: "private-ip",
        kind: LeakKind::Network,
        pattern: r"\b(?:10\.\d{1,3}\.\d{1,3}\.\d{1,3}|172\.(?:1[6-9]|2\d|3[01])\.\d{1,3}\.\d{1,3}|192\.168\.\d{1,3}\.\d{1,3})\b",
        min_entropy: 0.0,
    },
    Rule {
        id: "internal-hostname",
        kind: LeakKind::Network,
        pattern: r"\b[a-z0-9][\w-]*(?:\.[\w-]+)*\.(?:internal|corp|intranet|lan|cluster\.local|svc\.cluster)\b",
        min_entropy: 0.0,
    },
    Rule {
        id: "aws-access-key",
        kind: LeakKind::Credential,
        pattern: r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
        min_entropy: 0.0,
    },
    Rule {
        id: "github-token",
        kind: LeakKind::Credential,
        pattern: r"\bgh[pousr]_[A-Za-z0-9]{36,}\b",
        min_entropy: 0.0,
    },
    Rule {
        id: "slack-token",
        kind: LeakKind::Credential,
        pattern: r"\bxox[abprs]-[A-Za-z0-9-]{10,}",
        min_entropy: 0.0,
    },
    Rule {
        id: "stripe-key",
        kind: LeakKind::Credential,
        pattern: r"\b[sr]k_(?:live|test)_[0-9A-Za-z]{16,}\b",
        min_entropy: 0.0,
    },
    Rule {
        id: "openai-key",
        kind: LeakKind::Credential,
        pattern: r"\bsk-(?:proj-)?[A-Za-z0-9_-]{32,}",
        min_entropy: 0.0,
    },
    Rule {
        id: "google-api-key",
        kind: LeakKind::Credential,
        pattern: r"\bAIza[0-9A-Za-z_-]{35}\b",
        min_entropy: 0.0,
    },
    Rule {
        id: "jwt",
        kind: LeakKind::Credential,
        pattern: r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
        min_entropy: 0.0,
    },
    Rule {
        id: "private-key",
        kind: LeakKind::Credential,
        pattern: r"-----BEGIN (?:RSA |EC |DSA |OPENSSH |PGP |ENCRYPTED )?PRIVATE KEY",
        min_entropy: 0.0,
    },
    Rule {
        id: "bearer-token",
        kind: LeakKind::Credential,
        pattern: r"(?i)\bbearer\s+([A-Za-z0-9._~+/-]{20,}=*)",
        min_entropy: 3.5,
    },
    Rule {
        id: "generic-secret",
        kind: LeakKind::Credential,
        pattern: r#"(?i)\b(?:api[_-]?key|apikey|secret|token|passw(?:or)?d|access[_-]?key|client[_-]?secret)\b["']?\s*[:=]\s*["']?([A-Za-z0-9/+_.-]{16,})"#,
        min_entropy: 3.5,
    },
];

struct Compiled {
    set: RegexSet,
    each: Vec<Regex>,
    base64_run: Regex,
    unicode_escape: Regex,
}

static COMPILED: LazyLock<Option<Compiled>> = LazyLock::new(|| {
    let set = RegexSet::new(RULES.iter().map(|r| r.pattern)).ok()?;
    let each = RULES
        .iter()
        .map(|r| Regex::new(r.pattern).ok())
        .collect::<Option<Vec<_>>>()?;
    Some(Compiled {
        set,
        each,
        base64_run: Regex::new(r"[A-Za-z0-9+/_-]{24,}={0,2}").ok()?,
        unicode_escape: Regex::new(r"\\u([0-9a-fA-F]{4})").ok()?,
    })
});

/// One leak found by the scanner: which rule matched, and a redacted excerpt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leak {
    /// The rule id (`canary`, `secret`, or a [`RULES`] id).
    pub rule: String,
    /// The family of the rule that matched.
    pub kind: LeakKind,
    /// The text around the match, with the matched text replaced by `[REDACTED]` for
    /// credentials, secrets and canaries (other matches are shown, cut to 80 characters).
    pub excerpt: String,
    /// Whether the match was found only after decoding (base64 or `\u` escapes).
    pub decoded: bool,
    /// The matched text (not for reports: used to redact it elsewhere).
    pub matched: String,
}

/// Scans `text` for leaks. `sent` is what mcp-chaos sent in the exchange: a match that appears
/// in it is an echo, not a leak. `exact` lists canaries and secrets, with their kind.
pub fn scan(text: &str, sent: &str, exact: &[(LeakKind, &str)]) -> Vec<Leak> {
    let request = Request {
        raw: sent,
        strings: std::cell::OnceCell::new(),
    };
    let mut leaks = scan_once(text, &request, exact, false);
    for decoded in decodings(text) {
        for leak in scan_once(&decoded, &request, exact, true) {
            if !leaks
                .iter()
                .any(|l| l.rule == leak.rule && l.matched == leak.matched)
            {
                leaks.push(leak);
            }
        }
    }
    leaks
}

/// What mcp-chaos sent in the exchange: the raw frames, and the string values of their
/// `params` (read from the frames only when a path match needs them).
struct Request<'a> {
    raw: &'a str,
    strings: std::cell::OnceCell<Vec<String>>,
}

impl Request<'_> {
    /// The string values of the `params` sent ([`request_strings`]).
    fn strings(&self) -> &[String] {
        self.strings.get_or_init(|| request_strings(self.raw))
    }
}

/// The string values under `params` of each JSON-RPC message in `sent` (one per line; a
/// batch's items each), at any depth: the arguments of a `tools/call`.
fn request_strings(sent: &str) -> Vec<String> {
    fn walk(v: &serde_json::Value, out: &mut Vec<String>) {
        match v {
            serde_json::Value::String(s) => out.push(s.clone()),
            serde_json::Value::Array(items) => items.iter().for_each(|i| walk(i, out)),
            serde_json::Value::Object(map) => map.values().for_each(|i| walk(i, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for line in sent.lines() {
        let Ok(message) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let messages = match &message {
            serde_json::Value::Array(items) => items.iter().collect(),
            one => vec![one],
        };
        for m in messages {
            if let Some(params) = m.get("params") {
                walk(params, &mut out);
            }
        }
    }
    out
}

/// The characters a path token is made of, for extending a match to the token's end.
fn is_path_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '.' | '@' | '+' | '-' | '/')
}

/// Whether the path matched at `start..end` of `text` is derived from the request: a string
/// value of the request (less a leading `./` or `/` and trailing `/`s; not empty) starts
/// inside the match, right after a `/`, covers the rest of the match, and ends the path there
/// (only `/`s, then the end of the text or a character no path is made of, follow). `a.py`
/// answered as `/srv/x/sandbox/a.py`, `docs/a.py` as `/home/u/sandbox/docs/a.py`, `my file.py`
/// as `/srv/x/my file.py`: the server told the caller where its own argument led. A path that
/// merely contains an argument (`/home/u/app/a.py.bak` for `a.py`) is not derived, and neither
/// is one that the value does not end (`/opt/app/a.py/handler.py` for `a.py`).
pub fn derived_from_request(text: &str, start: usize, end: usize, strings: &[String]) -> bool {
    let end = start + text[start..end].trim_end_matches('/').len();
    strings.iter().any(|value| {
        let value = value.trim_start_matches("./").trim_start_matches('/');
        let value = value.trim_end_matches('/');
        if value.is_empty() {
            return false;
        }
        text[start..end].match_indices('/').any(|(slash, _)| {
            let at = start + slash + 1;
            let after = at + value.len();
            at <= end
                && after >= end
                && text[at..].starts_with(value)
                && text[after..]
                    .trim_start_matches('/')
                    .chars()
                    .next()
                    .is_none_or(|c| !is_path_char(c))
        })
    })
}

fn scan_once(
    text: &str,
    request: &Request<'_>,
    exact: &[(LeakKind, &str)],
    decoded: bool,
) -> Vec<Leak> {
    let sent = request.raw;
    let mut leaks = Vec::new();
    for (kind, needle) in exact {
        if needle.len() >= 4
            && let Some(at) = text.find(needle)
        {
            leaks.push(Leak {
                rule: kind.name().to_owned(),
                kind: *kind,
                excerpt: excerpt(text, at, at + needle.len(), *kind == LeakKind::Secret),
                decoded,
                matched: (*needle).to_owned(),
            });
        }
    }
    let Some(compiled) = COMPILED.as_ref() else {
        return leaks;
    };
    for index in compiled.set.matches(text).iter() {
        let rule = &RULES[index];
        for m in compiled.each[index].captures_iter(text) {
            let whole = m.get(0).map_or("", |g| g.as_str());
            let value = m.get(1).map_or(whole, |g| g.as_str());
            if rule.min_entropy > 0.0 && entropy(value) < rule.min_entropy {
                continue;
            }
            if sent.contains(value) || sent.contains(whole) {
                continue;
            }
            let Some(span) = m.get(0) else { continue };
            if matches!(rule.id, "source-path" | "home-path")
                && derived_from_request(text, span.start(), span.end(), request.strings())
            {
                continue;
            }
            let redact = matches!(rule.kind, LeakKind::Credential);
            leaks.push(Leak {
                rule: rule.id.to_owned(),
                kind: rule.kind,
                excerpt: excerpt(text, span.start(), span.end(), redact),
                decoded,
                matched: whole.to_owned(),
            });
            break;
        }
    }
    leaks
}

/// The decoded forms of `text` worth scanning: `\uXXXX` escapes resolved, and each base64 run
/// that decodes to printable UTF-8.
fn decodings(text: &str) -> Vec<String> {
    let Some(compiled) = COMPILED.as_ref() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if compiled.unicode_escape.is_match(text) {
        let unescaped = compiled
            .unicode_escape
            .replace_all(text, |c: &regex::Captures<'_>| {
                u32::from_str_radix(&c[1], 16)
                    .ok()
                    .and_then(char::from_u32)
                    .map_or_else(|| c[0].to_owned(), String::from)
            })
            .into_owned();
        out.push(unescaped);
    }
    for run in compiled.base64_run.find_iter(text).take(64) {
        let s = run.as_str();
        let engines = [
            &base64::engine::general_purpose::STANDARD,
            &base64::engine::general_purpose::URL_SAFE,
            &base64::engine::general_purpose::STANDARD_NO_PAD,
            &base64::engine::general_purpose::URL_SAFE_NO_PAD,
        ];
        if let Some(bytes) = engines.iter().find_map(|e| e.decode(s).ok())
            && let Ok(decoded) = String::from_utf8(bytes)
            && decoded
                .chars()
                .all(|c| !c.is_control() || c == '\n' || c == '\t' || c == '\r')
        {
            out.push(decoded);
        }
    }
    out
}

/// Shannon entropy of `s` in bits per character.
pub fn entropy(s: &str) -> f64 {
    let mut counts = std::collections::HashMap::new();
    let mut n = 0usize;
    for c in s.chars() {
        *counts.entry(c).or_insert(0usize) += 1;
        n += 1;
    }
    if n == 0 {
        return 0.0;
    }
    counts
        .values()
        .map(|&k| {
            let p = k as f64 / n as f64;
            -p * p.log2()
        })
        .sum()
}

fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'/' | b'+' | b'=')
}

fn excerpt(text: &str, start: usize, end: usize, redact: bool) -> String {
    let bytes = text.as_bytes();
    // Widen the window to whole tokens (by at most 64 bytes) so that a credential is never
    // cut in half, where the scrubber could no longer recognise it.
    let mut before_start = floor_boundary(text, start.saturating_sub(40));
    let limit = before_start.saturating_sub(64);
    while before_start > limit && before_start > 0 && is_token_byte(bytes[before_start - 1]) {
        before_start -= 1;
    }
    let mut after_end = ceil_boundary(text, (end + 40).min(text.len()));
    let limit = (after_end + 64).min(text.len());
    while after_end < limit && is_token_byte(bytes[after_end]) {
        after_end += 1;
    }
    let before_start = floor_boundary(text, before_start);
    let after_end = ceil_boundary(text, after_end);
    let middle = if redact {
        "[REDACTED]".to_owned()
    } else {
        let m = &text[start..end];
        if m.chars().count() > 80 {
            format!("{}…", m.chars().take(80).collect::<String>())
        } else {
            m.to_owned()
        }
    };
    let flat = |s: &str| scrub(&s.replace(['\n', '\r'], " "));
    format!(
        "{}{}{}{}{}",
        if before_start > 0 { "…" } else { "" },
        flat(&text[before_start..start]),
        middle,
        flat(&text[end..after_end]),
        if after_end < text.len() { "…" } else { "" }
    )
}

fn floor_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_boundary(s: &str, mut i: usize) -> usize {
    while i < s.len() && !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// Replaces every credential-shaped string in `text` (the [`LeakKind::Credential`] rules) with
/// `[REDACTED:rule]`, so that no report ever carries one.
pub fn scrub(text: &str) -> String {
    let Some(compiled) = COMPILED.as_ref() else {
        return text.to_owned();
    };
    let mut out = text.to_owned();
    for index in compiled.set.matches(text).iter() {
        let rule = &RULES[index];
        if rule.kind != LeakKind::Credential {
            continue;
        }
        let replacement = format!("[REDACTED:{}]", rule.id);
        out = compiled.each[index]
            .replace_all(&out, |c: &regex::Captures<'_>| {
                let whole = c.get(0).map_or("", |m| m.as_str());
                let value = c.get(1).map_or(whole, |m| m.as_str());
                if rule.min_entropy > 0.0 && entropy(value) < rule.min_entropy {
                    whole.to_owned()
                } else {
                    replacement.clone()
                }
            })
            .into_owned();
    }
    out
}

/// Replaces every occurrence of each secret in `text` with `[REDACTED]`.
pub fn redact(text: &str, secrets: &[String]) -> String {
    let mut out = text.to_owned();
    for secret in secrets.iter().filter(|s| s.len() >= 4) {
        out = out.replace(secret.as_str(), "[REDACTED]");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(text: &str) -> Vec<String> {
        scan(text, "", &[]).into_iter().map(|l| l.rule).collect()
    }

    /// Every rule has a text it must match and a near miss it must not.
    #[test]
    fn each_rule_has_a_true_and_a_false_example() {
        let cases: &[(&str, &str, &str)] = &[
            (
                "python-traceback",
                "Traceback (most recent call last):\n  x",
                "the traceback was clean",
            ),
            (
                "python-frame",
                "  File \"/srv/app/main.py\", line 12, in run",
                "File name: report.txt, line 3 of the form",
            ),
            (
                "node-frame",
                "    at fetchWeather (/app/dist/server.js:41:13)",
                "meet at noon (by the river)",
            ),
            (
                "java-frame",
                "\tat com.acme.Api.get(Api.java:88)",
                "look at com.example for docs",
            ),
            (
                "go-panic",
                "goroutine 1 [running]:\nmain.main()",
                "a goroutine is running",
            ),
            (
                "rust-panic",
                "thread 'main' panicked at src/main.rs:4:5:",
                "nobody panicked at all",
            ),
            (
                "dotnet-frame",
                "   at Acme.Api.Get(String id) in C:\\src\\Api.cs:line 42",
                "at home in the evening",
            ),
            (
                "ruby-frame",
                "from /app/lib/client.rb:10:in `get'",
                "from the ruby store",
            ),
            (
                "php-frame",
                "#0 /var/www/app/index.php(12): main()",
                "#0 is the first item",
            ),
            (
                "source-path",
                "failed in /opt/service/handlers/weather.py",
                "see the weather page",
            ),
            (
                "dependency-path",
                "at /app/node_modules/axios/lib/core.js",
                "install the modules",
            ),
            (
                "home-path",
                "config at /home/deploy/.config/app.toml",
                "go home now",
            ),
            (
                "sql-statement",
                "query failed: SELECT id, email FROM users WHERE id = 7",
                "Please select a city from the list",
            ),
            (
                "sql-error",
                "ERROR: syntax error at or near \"FROM\"",
                "an error in the syntax of your request",
            ),
            (
                "private-ip",
                "could not reach 10.2.33.4:5432",
                "version 1.10.2 of the API",
            ),
            (
                "internal-hostname",
                "connect to db-7f3a.internal.corp failed",
                "the internal error was logged",
            ),
            (
                "aws-access-key",
                "key AKIAIOSFODNN7EXAMPLE used",
                "AKIA is a prefix",
            ),
            (
                "github-token",
                "token ghp_0123456789abcdefghijABCDEFGHIJ0123456789",
                "ghp_short",
            ),
            (
                "slack-token",
                "xoxb-123456789012-abcdefghij",
                "xox is not a token",
            ),
            (
                "stripe-key",
                "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
                "sk_live_ is the prefix",
            ),
            (
                "openai-key",
                "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789AB",
                "sk-learn is a library",
            ),
            (
                "google-api-key",
                "AIzaSyA1234567890abcdefghijklmnopqrstuv",
                "AIza is a prefix",
            ),
            (
                "jwt",
                "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
                "eyJ alone",
            ),
            (
                "private-key",
                "-----BEGIN RSA PRIVATE KEY-----\nMIIE",
                "-----BEGIN CERTIFICATE-----",
            ),
            (
                "bearer-token",
                "Authorization: Bearer 9f8A7b6C5d4E3f2G1h0IjKlMnOp",
                "bearer of bad news aaaaaaaaaaaaaaaaaaaaaa",
            ),
            (
                "generic-secret",
                "api_key=Zx81QpL0m2Vb7Rt5Yw3Nk9Ds",
                "api_key=xxxxxxxxxxxxxxxxxxxx",
            ),
        ];
        for rule in RULES {
            let (_, yes, no) = cases
                .iter()
                .find(|(id, _, _)| *id == rule.id)
                .unwrap_or_else(|| panic!("rule {} has no examples", rule.id));
            assert!(
                rules(yes).contains(&rule.id.to_owned()),
                "{} missed {yes:?}",
                rule.id
            );
            assert!(
                !rules(no).contains(&rule.id.to_owned()),
                "{} matched {no:?}",
                rule.id
            );
        }
    }

    #[test]
    fn echoed_input_is_not_a_leak() {
        let text = "Failed to fetch http://10.0.0.5/x";
        assert!(scan(text, r#"{"url":"http://10.0.0.5/x"}"#, &[]).is_empty());
        assert_eq!(scan(text, "{}", &[]).len(), 1);
    }

    /// A source or home path that ends with the caller's own path argument is derived from
    /// the request; another path in the same text, a path that only contains the argument, and
    /// a dependency path still leak.
    #[test]
    fn a_path_derived_from_the_request_is_not_a_leak() {
        let sent = |path: &str| {
            format!(
                "{}\n",
                serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                    "params": {"name": "read_file", "arguments": {"path": path}}})
            )
        };
        let rules = |text: &str, path: &str| -> Vec<String> {
            scan(text, &sent(path), &[])
                .into_iter()
                .map(|l| l.rule)
                .collect()
        };
        let none: Vec<String> = Vec::new();
        assert_eq!(
            rules("No such file: /tmp/mcp-x1/sandbox/a.py", "a.py"),
            none
        );
        assert_eq!(
            rules(
                "ENOENT: no such file or directory, open '/home/u/sandbox/docs/a.py'",
                "./docs/a.py"
            ),
            none
        );
        assert_eq!(rules("Not found: /home/u/sandbox/a.py/", "/a.py"), none);
        // Without the argument, the same text leaks.
        assert_eq!(
            rules("No such file: /home/u/sandbox/a.py", "b.py"),
            ["source-path", "home-path"]
        );
        // A real internal next to the derived path is still found.
        assert_eq!(
            rules(
                "No such file: /tmp/sandbox/a.py (raised in /opt/fixture/server/files.py)",
                "a.py"
            ),
            ["source-path"]
        );
        // Containing the argument is not ending with it; a part of a name is not a name.
        assert_eq!(
            rules("No such file: /opt/app/a.py.bak/x.py", "a.py"),
            ["source-path"]
        );
        assert_eq!(rules("failed in /opt/app/data.py", "a.py"), ["source-path"]);
        assert_eq!(rules("failed in /opt/app/x.py", "x.py"), none);
        assert_eq!(
            rules("No such file: /opt/app/a.py/handler.py", "a.py"),
            ["source-path"]
        );
        // A value with characters no path token has still ends the path it made.
        assert_eq!(
            rules(
                "No file at /home/u/sandbox/my notes.py: none",
                "my notes.py"
            ),
            none
        );
        assert_eq!(rules("No file at /home/u/sandbox/x\ny.py", "x\ny.py"), none);
        // An empty value derives nothing: the root alone is not the caller's.
        assert_eq!(rules("No file at /home/u/sandbox/", ""), ["home-path"]);
        // A dependency path is the server's installation, whatever it ends with.
        let tz = "Mars/Olympus_Mons";
        assert_eq!(
            rules(
                &format!(
                    "[Errno 36] File name too long: '/opt/venv/lib/python3.11/site-packages/tzdata/zoneinfo/{tz}'"
                ),
                tz
            ),
            ["dependency-path"]
        );
    }

    #[test]
    fn canaries_and_secrets_are_found_even_when_encoded() {
        let secret = "s3cr3t-value-123";
        let encoded = base64::engine::general_purpose::STANDARD.encode(format!("key is {secret}"));
        let leaks = scan(
            &format!("blob: {encoded}"),
            "",
            &[(LeakKind::Secret, secret)],
        );
        assert_eq!(leaks.len(), 1);
        assert!(leaks[0].decoded);
        assert!(!leaks[0].excerpt.contains(secret));
        let leaks = scan(r"Trace\u0062ack (most recent call last)", "", &[]);
        assert_eq!(leaks[0].rule, "python-traceback");
    }

    #[test]
    fn scrub_removes_whole_credentials_even_near_a_cut() {
        let text = format!(
            "{}\"credential\":\"sk_live_4eC39HqLyjWDarjtT1zdp7dc\" and more",
            "x".repeat(30)
        );
        let leaks = scan(&text, "", &[(LeakKind::Canary, "credential")]);
        assert!(!leaks[0].excerpt.contains("4eC39"), "{}", leaks[0].excerpt);
        assert_eq!(
            scrub("key sk_live_4eC39HqLyjWDarjtT1zdp7dc."),
            "key [REDACTED:stripe-key]."
        );
        assert_eq!(
            scrub("api_key=xxxxxxxxxxxxxxxxxxxx"),
            "api_key=xxxxxxxxxxxxxxxxxxxx"
        );
    }

    #[test]
    fn credentials_are_redacted_in_excerpts() {
        let leaks = scan("boom: AKIAIOSFODNN7EXAMPLE leaked", "", &[]);
        assert_eq!(leaks[0].excerpt, "boom: [REDACTED] leaked");
        assert_eq!(
            redact("a AKIAIOSFODNN7EXAMPLE b", &[leaks[0].matched.clone()]),
            "a [REDACTED] b"
        );
    }
}
