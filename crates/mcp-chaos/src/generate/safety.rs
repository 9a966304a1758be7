//! The loopback-only rule: no generated value may name a host off this machine.
//!
//! Every value a generator emits passes [`is_loopback_safe`]: each string in it (object keys
//! included) is checked for URLs (`scheme://authority`, `scheme:\\authority`, scheme-relative
//! `//authority`, `http:host`), whole-string e-mail addresses, and whole-string IP addresses
//! or `ip:port` pairs. Their host must be `localhost`, an address in `127.0.0.0/8`, `::1`, or
//! an IPv4-mapped `::ffff:127.x.y.z`; an empty host (`file:///x`) is allowed.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use serde_json::Value;

/// `true` if `host` (without port; IPv6 with or without brackets) is on loopback.
#[must_use]
pub fn is_loopback_host(host: &str) -> bool {
    let h = host.trim_end_matches('.');
    if h.eq_ignore_ascii_case("localhost") {
        return true;
    }
    let inner = h
        .strip_prefix('[')
        .and_then(|x| x.strip_suffix(']'))
        .unwrap_or(h);
    // RFC 5321 address literals: `[127.0.0.1]`, `[IPv6:::1]`.
    let inner = inner
        .strip_prefix("IPv6:")
        .or_else(|| inner.strip_prefix("ipv6:"))
        .unwrap_or(inner);
    if let Ok(v4) = inner.parse::<Ipv4Addr>() {
        return v4.is_loopback();
    }
    if let Ok(v6) = inner.parse::<Ipv6Addr>() {
        return ipv6_loopback(&v6);
    }
    false
}

fn ipv6_loopback(v6: &Ipv6Addr) -> bool {
    v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
}

/// `true` if no string inside `v` (keys included) names a non-loopback host.
#[must_use]
pub fn is_loopback_safe(v: &Value) -> bool {
    match v {
        Value::String(s) => is_safe_str(s),
        Value::Array(a) => a.iter().all(is_loopback_safe),
        Value::Object(m) => m.iter().all(|(k, v)| is_safe_str(k) && is_loopback_safe(v)),
        _ => true,
    }
}

/// `true` if the string names no non-loopback host (see the module docs for what counts).
#[must_use]
pub fn is_safe_str(s: &str) -> bool {
    let b = s.as_bytes();
    // Fast path: nothing URL-, mail- or IP-like.
    let (has_colon, has_at, has_slash, has_backslash) = scan(b);
    let has_slashes = has_backslash || (has_slash && s.contains("//"));
    let ip_like = b.len() <= 64
        && b.first()
            .is_some_and(|c| c.is_ascii_digit() || *c == b':' || *c == b'[');
    if !has_colon && !has_at && !has_slashes && !ip_like {
        return true;
    }
    if has_colon && !urls_safe(s) {
        return false;
    }
    if let Some(rest) = s.strip_prefix("//")
        && !authority_safe(rest)
    {
        return false;
    }
    if has_at && !email_safe(s) {
        return false;
    }
    if ip_like && !ip_safe(s.trim()) {
        return false;
    }
    true
}

/// Which of `:`, `@`, `/`, `\\` occur, in one pass (branch-free folds over chunks, which the
/// compiler vectorises: a 1 MiB hostile string is scanned in tens of microseconds).
fn scan(b: &[u8]) -> (bool, bool, bool, bool) {
    let mut acc = 0u8;
    for chunk in b.chunks(1024) {
        let mut m = 0u8;
        for &x in chunk {
            m |= u8::from(x == b':')
                | (u8::from(x == b'@') << 1)
                | (u8::from(x == b'/') << 2)
                | (u8::from(x == b'\\') << 3);
        }
        acc |= m;
        if acc == 0b1111 {
            break;
        }
    }
    (acc & 1 != 0, acc & 2 != 0, acc & 4 != 0, acc & 8 != 0)
}

/// Schemes a URL parser may treat as "special" (host after any run of slashes, or none).
const SPECIAL_SCHEMES: &[&str] = &["http", "https", "ws", "wss", "ftp", "gopher"];

fn urls_safe(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    while let Some(off) = s[i..].find(':') {
        let colon = i + off;
        // Scheme: maximal run of [A-Za-z0-9+.-] before the colon, starting with a letter.
        let mut st = colon;
        while st > 0
            && (b[st - 1].is_ascii_alphanumeric() || matches!(b[st - 1], b'+' | b'.' | b'-'))
        {
            st -= 1;
        }
        while st < colon && !b[st].is_ascii_alphabetic() {
            st += 1;
        }
        let scheme = &s[st..colon];
        let after = &s[colon + 1..];
        let slashes = after
            .bytes()
            .take_while(|c| *c == b'/' || *c == b'\\')
            .count();
        let special = SPECIAL_SCHEMES
            .iter()
            .any(|x| x.eq_ignore_ascii_case(scheme));
        if !scheme.is_empty() && (slashes >= 2 || (special && !after.is_empty())) {
            // Special schemes skip any run of slashes before the host (WHATWG URL parsing);
            // others (`file:///x`) have exactly `//` before a possibly empty authority.
            let skip = if special { slashes } else { 2 };
            let auth = &after[skip..];
            if !authority_safe(auth) {
                return false;
            }
        }
        i = colon + 1;
    }
    true
}

/// Checks the host of an authority (`userinfo@host:port/...`).
fn authority_safe(rest: &str) -> bool {
    let end = rest
        .find(|c: char| matches!(c, '/' | '\\' | '?' | '#') || c.is_whitespace())
        .unwrap_or(rest.len());
    let auth = &rest[..end];
    let hostport = auth.rsplit_once('@').map_or(auth, |(_, h)| h);
    let host = if hostport.starts_with('[') {
        hostport.find(']').map_or(hostport, |e| &hostport[..=e])
    } else {
        hostport.split(':').next().unwrap_or("")
    };
    // Percent-encoded hosts are decoded by some parsers; refuse them unless plainly loopback.
    host.is_empty() || is_loopback_host(host)
}

fn email_safe(s: &str) -> bool {
    let t = s.trim();
    let t = t
        .strip_prefix("mailto:")
        .or_else(|| t.strip_prefix("MAILTO:"))
        .unwrap_or(t);
    if t.chars().any(char::is_whitespace) {
        return true;
    }
    let Some((local, domain)) = t.rsplit_once('@') else {
        return true;
    };
    if local.is_empty() || domain.is_empty() {
        return true;
    }
    let domain = domain.split(['?', '>']).next().unwrap_or(domain);
    let looks_like_domain = domain.starts_with('[')
        || domain
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '.' | '-'));
    !looks_like_domain || is_loopback_host(domain)
}

fn ip_safe(s: &str) -> bool {
    if let Ok(ip) = s.parse::<IpAddr>() {
        return match ip {
            IpAddr::V4(v4) => v4.is_loopback(),
            IpAddr::V6(v6) => ipv6_loopback(&v6),
        };
    }
    if let Ok(sa) = s.parse::<SocketAddr>() {
        return match sa.ip() {
            IpAddr::V4(v4) => v4.is_loopback(),
            IpAddr::V6(v6) => ipv6_loopback(&v6),
        };
    }
    if let Some(inner) = s.strip_prefix('[').and_then(|x| x.strip_suffix(']')) {
        return is_loopback_host(inner) || inner.parse::<Ipv6Addr>().is_err();
    }
    true
}

/// Replaces the authority (`host[:port]`, with any userinfo) of every `scheme://authority`
/// in `s` by the authority of `base` (a loopback URL base), so a pattern-generated URL points
/// at loopback.
pub(crate) fn loopback_rewrite(s: &str, base: &str) -> String {
    let base_auth = base.split_once("://").map_or("127.0.0.1:9", |(_, rest)| {
        rest.split(['/', '?', '#']).next().unwrap_or("127.0.0.1:9")
    });
    let mut out = String::with_capacity(s.len() + base_auth.len());
    let mut rest = s;
    while let Some(i) = rest.find("://") {
        out.push_str(&rest[..i + 3]);
        let after = &rest[i + 3..];
        let end = after
            .find(|c: char| matches!(c, '/' | '?' | '#') || c.is_whitespace())
            .unwrap_or(after.len());
        out.push_str(base_auth);
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

/// Validates and normalises a URL base: `http(s)://loopback[:port][/path]`, returned without
/// a trailing slash.
pub(crate) fn check_url_base(base: &str) -> Option<String> {
    let lower = base.to_ascii_lowercase();
    let rest = lower
        .strip_prefix("http://")
        .or_else(|| lower.strip_prefix("https://"))?;
    let host_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let hostport = &rest[..host_end];
    if hostport.contains('@') {
        return None;
    }
    let host = if hostport.starts_with('[') {
        &hostport[..=hostport.find(']')?]
    } else {
        hostport.split(':').next().unwrap_or("")
    };
    if !is_loopback_host(host) || !is_safe_str(base) {
        return None;
    }
    Some(base.trim_end_matches('/').to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts() {
        for h in [
            "localhost",
            "127.0.0.1",
            "127.1.2.3",
            "[::1]",
            "::1",
            "[::ffff:127.0.0.1]",
            "LOCALHOST.",
        ] {
            assert!(is_loopback_host(h), "{h}");
        }
        for h in [
            "example.com",
            "10.0.0.1",
            "[::2]",
            "0.0.0.0",
            "localhost.evil.com",
            "169.254.169.254",
        ] {
            assert!(!is_loopback_host(h), "{h}");
        }
    }

    #[test]
    fn strings() {
        for s in [
            "http://127.0.0.1:9/x",
            "https://[::1]:443/",
            "file:///etc/passwd",
            "../../etc/passwd",
            "x@localhost",
            "a@[127.0.0.1]",
            "hello world",
            "12:30",
            "C:\\Windows",
            "127.0.0.1:80",
            "@handle",
            "2024-01-01T00:00:00Z",
        ] {
            assert!(is_safe_str(s), "{s}");
        }
        for s in [
            "http://example.com",
            "see https://evil.test/x for details",
            "http:\\\\evil.com",
            "http:evil.com",
            "//evil.com/x",
            "ftp://user:pw@10.0.0.1/",
            "a@example.com",
            "mailto:a@b.org",
            "10.1.2.3",
            "8.8.8.8:53",
            "2001:db8::1",
            "http://127.0.0.1.evil.com/",
            "http://localhost@evil.com/",
            "http:///evil.com/",
            "file://evil.com/share",
        ] {
            assert!(!is_safe_str(s), "{s}");
        }
    }

    #[test]
    fn rewrite() {
        assert_eq!(
            loopback_rewrite("https://api.x.com:8/v1?q", "http://127.0.0.1:9"),
            "https://127.0.0.1:9/v1?q"
        );
        assert_eq!(loopback_rewrite("no url", "http://[::1]:1/p"), "no url");
    }

    #[test]
    fn url_base() {
        assert_eq!(
            check_url_base("http://127.0.0.1:8080/").as_deref(),
            Some("http://127.0.0.1:8080")
        );
        assert!(check_url_base("http://[::1]:1/api").is_some());
        assert!(check_url_base("https://example.com").is_none());
        assert!(check_url_base("http://127.0.0.1@evil.com").is_none());
        assert!(check_url_base("ftp://127.0.0.1").is_none());
    }
}
