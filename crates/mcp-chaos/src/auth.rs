//! Extra HTTP request headers (`--header "NAME: VALUE"`, a scenario's `[server] headers`) and
//! what an HTTP server that refuses the handshake asks for.
//!
//! A header's value may name environment variables as `${NAME}`; they are expanded once, at
//! start ([`HeaderArg::resolve`]), and an unset one is an error naming it. The values are
//! credentials: mcp-chaos sends them on every request to the server and never prints them;
//! [`redactions`] gives the strings every report redacts.
//!
//! A `401 Unauthorized` or `403 Forbidden` answer to the first request is a [`Refusal`]: the
//! status, the server's `WWW-Authenticate` challenge and the protected-resource metadata URL it
//! names (`resource_metadata="…"`, RFC 9728 §5.1, which MCP's authorization spec uses from
//! 2025-06-18 on: <https://modelcontextprotocol.io/specification/2025-06-18/basic/authorization>).
//! This layer imports nothing of MCP.

use std::fmt;

/// Headers the transport sets itself; `--header` may not replace them.
pub const RESERVED: &[&str] = &[
    "accept",
    "connection",
    "content-length",
    "content-type",
    "host",
    "mcp-method",
    "mcp-name",
    "mcp-protocol-version",
    "mcp-session-id",
    "transfer-encoding",
];

/// One `--header`, as written: a name and a value template (which may hold `${NAME}`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderArg {
    /// The header name, as written (HTTP names are case-insensitive).
    pub name: String,
    /// The value as written, before `${NAME}` expansion.
    pub template: String,
}

impl std::str::FromStr for HeaderArg {
    type Err = String;

    /// Parses `NAME: VALUE` (spaces around the value are trimmed). Errors: no colon, an empty
    /// or invalid name, a name the transport sets itself ([`RESERVED`]).
    fn from_str(s: &str) -> Result<HeaderArg, String> {
        let Some((name, value)) = s.split_once(':') else {
            return Err(format!(
                "expected \"NAME: VALUE\", e.g. \"Authorization: Bearer ${{TOKEN}}\"; got a value without a colon (length {})",
                s.len()
            ));
        };
        let name = name.trim();
        check_name(name)?;
        Ok(HeaderArg {
            name: name.to_owned(),
            template: value.trim().to_owned(),
        })
    }
}

/// Checks a header name: a valid HTTP token, not one of the [`RESERVED`] headers.
///
/// # Errors
///
/// A sentence naming the problem: the name is empty, is not a valid HTTP header name, or is
/// a header the transport sets itself (compared case-insensitively).
pub fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("a header needs a name before the colon".into());
    }
    if reqwest::header::HeaderName::from_bytes(name.as_bytes()).is_err() {
        return Err(format!("{name:?} is not a valid HTTP header name"));
    }
    if RESERVED.contains(&name.to_ascii_lowercase().as_str()) {
        return Err(format!(
            "the {name} header is set by mcp-chaos's transport and cannot be replaced"
        ));
    }
    Ok(())
}

impl HeaderArg {
    /// The header with its value's `${NAME}` references expanded from `env` (a lookup such as
    /// `|n| std::env::var(n).ok()`).
    ///
    /// # Errors
    ///
    /// Any error of [`expand`], or an expanded value an HTTP header cannot carry (a newline or
    /// a control character), prefixed `--header NAME:`. Errors name the header and the
    /// variable, never the value.
    pub fn resolve(
        &self,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<(String, String), String> {
        let value =
            expand(&self.template, env).map_err(|e| format!("--header {}: {e}", self.name))?;
        if reqwest::header::HeaderValue::from_str(&value).is_err() {
            return Err(format!(
                "--header {}: the value (after expansion) holds characters an HTTP header cannot carry (a newline or a control character)",
                self.name
            ));
        }
        Ok((self.name.clone(), value))
    }
}

/// Expands every `${NAME}` in `template` with `env`.
///
/// # Errors
///
/// A sentence for an unterminated `${`, an empty name, or an unset variable (named in the
/// error).
pub fn expand(template: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let Some(end) = after.find('}') else {
            return Err("an unterminated ${ in the value".into());
        };
        let name = &after[..end];
        if name.is_empty() {
            return Err("an empty ${} in the value".into());
        }
        let value = env(name).ok_or_else(|| {
            format!("the environment variable {name} (named as ${{{name}}}) is not set")
        })?;
        out.push_str(&value);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The strings to redact for headers `headers` (`(name, value)`): each value, and its
/// credential part after an auth scheme (`Bearer abc` → `abc` too), when 4 characters or
/// longer (shorter ones would redact ordinary text).
pub fn redactions(headers: &[(String, String)]) -> Vec<String> {
    let mut out = Vec::new();
    for (_, value) in headers {
        let value = value.trim();
        if value.len() >= 4 {
            out.push(value.to_owned());
        }
        if let Some((_, credential)) = value.split_once(char::is_whitespace) {
            let credential = credential.trim();
            if credential.len() >= 4 {
                out.push(credential.to_owned());
            }
        }
    }
    out
}

/// What a file (a replay file) may keep of the header value template `template`: the template
/// itself when it names at least one environment variable (`${NAME}`) and what is left
/// without those references is at most an auth scheme word and spaces (`Bearer ${TOKEN}`,
/// `${API_KEY}`, `Basic ${CREDENTIALS}`); else `None`, for a value written literally holds
/// the credential itself (`Bearer abc123`, `Bearer abc${REST}`) and is never saved.
pub fn saved_template(template: &str) -> Option<String> {
    let mut literal = String::new();
    let mut rest = template;
    let mut references = 0;
    while let Some(at) = rest.find("${") {
        literal.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let end = after.find('}')?;
        if end == 0 {
            return None;
        }
        references += 1;
        literal.push(' ');
        rest = &after[end + 1..];
    }
    literal.push_str(rest);
    let mut words = literal.split_whitespace();
    let scheme_only = match (words.next(), words.next()) {
        (None, _) => true,
        (Some(scheme), None) => {
            scheme.chars().all(|c| c.is_ascii_alphabetic())
                && template.trim_start().starts_with(scheme)
                && template.trim_start()[scheme.len()..].starts_with(char::is_whitespace)
        }
        _ => false,
    };
    (references > 0 && scheme_only).then(|| template.to_owned())
}

/// A server's refusal of the first request: `401 Unauthorized` or `403 Forbidden`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The HTTP status (401 or 403).
    pub status: u16,
    /// The `WWW-Authenticate` header of the response, if any.
    pub www_authenticate: Option<String>,
    /// The names of the extra headers that were sent (`--header`), never their values.
    pub sent: Vec<String>,
}

impl Refusal {
    /// The protected-resource metadata URL of the challenge (`resource_metadata="…"`,
    /// RFC 9728 §5.1), if it names one.
    pub fn resource_metadata(&self) -> Option<String> {
        self.www_authenticate.as_deref().and_then(resource_metadata)
    }
}

/// The `resource_metadata` parameter of a `WWW-Authenticate` challenge (quoted or not).
pub fn resource_metadata(challenge: &str) -> Option<String> {
    let lower = challenge.to_ascii_lowercase();
    let mut from = 0;
    while let Some(at) = lower[from..].find("resource_metadata") {
        let start = from + at;
        from = start + "resource_metadata".len();
        // A parameter name starts the challenge or follows a space or a comma.
        let boundary = start == 0 || matches!(challenge.as_bytes()[start - 1], b' ' | b',' | b'\t');
        let rest = challenge[from..].trim_start();
        let Some(rest) = rest.strip_prefix('=') else {
            continue;
        };
        if !boundary {
            continue;
        }
        let rest = rest.trim_start();
        let value = match rest.strip_prefix('"') {
            Some(quoted) => quoted.split('"').next().unwrap_or_default(),
            None => rest
                .split(|c: char| c == ',' || c.is_whitespace())
                .next()
                .unwrap_or_default(),
        };
        if !value.is_empty() {
            return Some(value.to_owned());
        }
    }
    None
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let reason = if self.status == 401 {
            "401 Unauthorized"
        } else {
            "403 Forbidden"
        };
        write!(f, "the server refused the handshake with HTTP {reason}")?;
        match &self.www_authenticate {
            Some(challenge) => write!(f, "; it asks for: WWW-Authenticate: {challenge}")?,
            None => write!(f, " (no WWW-Authenticate header)")?,
        }
        if let Some(url) = self.resource_metadata() {
            write!(
                f,
                "; its protected-resource metadata (which authorization server issues tokens): {url}"
            )?;
        }
        if self.sent.is_empty() {
            write!(
                f,
                ". Send credentials with --header, e.g. --header \"Authorization: Bearer ${{TOKEN}}\" (the value is read from $TOKEN and never printed)"
            )
        } else if self.status == 401 {
            write!(
                f,
                ". The credentials sent (--header {}) were not accepted: check the token, its expiry and its audience",
                self.sent.join(", --header ")
            )
        } else {
            write!(
                f,
                ". The credentials sent (--header {}) were accepted but do not allow this (a missing scope or role?)",
                self.sent.join(", --header ")
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        (name == "TOKEN").then(|| "s3cr3t-token".to_owned())
    }

    #[test]
    fn parses_name_and_value() {
        let h: HeaderArg = "Authorization: Bearer ${TOKEN}".parse().unwrap();
        assert_eq!(h.name, "Authorization");
        assert_eq!(h.template, "Bearer ${TOKEN}");
        assert_eq!(
            h.resolve(&env).unwrap(),
            ("Authorization".into(), "Bearer s3cr3t-token".into())
        );
        let h: HeaderArg = "X-Api-Key:abc:def".parse().unwrap();
        assert_eq!(h.template, "abc:def");
    }

    #[test]
    fn bad_headers_are_refused_without_showing_the_value() {
        let e = "Authorization Bearer xyz-secret"
            .parse::<HeaderArg>()
            .unwrap_err();
        assert!(!e.contains("xyz-secret"), "{e}");
        assert!(": v".parse::<HeaderArg>().is_err());
        assert!("Bad Name: v".parse::<HeaderArg>().is_err());
        assert!("Content-Type: text/plain".parse::<HeaderArg>().is_err());
        assert!("mcp-session-id: x".parse::<HeaderArg>().is_err());
    }

    #[test]
    fn unset_variables_are_named() {
        let h: HeaderArg = "Authorization: Bearer ${NOPE}".parse().unwrap();
        let e = h.resolve(&env).unwrap_err();
        assert!(e.contains("NOPE") && e.contains("Authorization"), "{e}");
        assert!(expand("a ${B", &env).is_err());
        assert!(expand("${}", &env).is_err());
        assert_eq!(expand("plain", &env).unwrap(), "plain");
        assert_eq!(
            expand("${TOKEN}${TOKEN}", &env).unwrap(),
            "s3cr3t-tokens3cr3t-token"
        );
        let h: HeaderArg = "X-Key: a${TOKEN}\u{7}".parse().unwrap();
        let e = h.resolve(&env).unwrap_err();
        assert!(!e.contains("s3cr3t"), "{e}");
    }

    #[test]
    fn only_templates_naming_variables_are_saved() {
        for kept in [
            "Bearer ${TOKEN}",
            "${API_KEY}",
            "Basic ${B64}",
            "  Token   ${T} ",
        ] {
            assert_eq!(saved_template(kept).as_deref(), Some(kept), "{kept}");
        }
        for literal in [
            "Bearer abc123",
            "abc123",
            "Bearer abc${REST}",
            "${A}:${B}",
            "${T} suffix",
            "Bearer${T}",
            "",
            "Bearer ${}",
            "Bearer ${UNTERMINATED",
        ] {
            assert_eq!(saved_template(literal), None, "{literal}");
        }
    }

    #[test]
    fn redactions_cover_the_value_and_its_credential() {
        let r = redactions(&[
            ("Authorization".into(), "Bearer abcdefgh".into()),
            ("X-Short".into(), "ab".into()),
        ]);
        assert_eq!(r, vec!["Bearer abcdefgh".to_owned(), "abcdefgh".to_owned()]);
    }

    #[test]
    fn resource_metadata_is_read_from_the_challenge() {
        assert_eq!(
            resource_metadata(
                r#"Bearer error="invalid_token", resource_metadata="http://127.0.0.1:1/.well-known/oauth-protected-resource""#
            )
            .as_deref(),
            Some("http://127.0.0.1:1/.well-known/oauth-protected-resource")
        );
        assert_eq!(
            resource_metadata("Bearer resource_metadata=http://x/y, scope=a").as_deref(),
            Some("http://x/y")
        );
        assert_eq!(resource_metadata("Bearer realm=\"x\""), None);
        assert_eq!(
            resource_metadata("Bearer not_resource_metadata=\"x\""),
            None
        );
    }

    #[test]
    fn refusal_says_what_the_server_asked_for() {
        let r = Refusal {
            status: 401,
            www_authenticate: Some(r#"Bearer resource_metadata="http://h/m""#.into()),
            sent: vec![],
        };
        let text = r.to_string();
        assert!(text.contains("HTTP 401 Unauthorized"), "{text}");
        assert!(text.contains(r#"WWW-Authenticate: Bearer resource_metadata="http://h/m""#));
        assert!(text.contains("metadata (which authorization server issues tokens): http://h/m"));
        assert!(
            text.contains("--header \"Authorization: Bearer ${TOKEN}\""),
            "{text}"
        );
        let r = Refusal {
            status: 403,
            www_authenticate: None,
            sent: vec!["Authorization".into()],
        };
        let text = r.to_string();
        assert!(text.contains("403 Forbidden") && text.contains("--header Authorization"));
    }
}
