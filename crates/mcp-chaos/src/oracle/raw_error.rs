//! Raw exception text: the rule table behind the raw-text half of `unactionable-error` (MC203).
//!
//! A message an interpreter, a runtime or the operating system wrote for a programmer
//! (`'NoneType' object has no attribute 'get'`, `Cannot read properties of undefined (reading
//! 'id')`, `[Errno 2] No such file or directory`, `ENOENT: no such file or directory, open
//! '…'`), or an exception's bare class, key or path standing as the whole message, tells the
//! model neither what the tool was trying to do nor what to do next. MCP's `server/tools`
//! §Error Handling asks for "actionable feedback" in tool execution errors so that the model
//! can self-correct; such text is the server's bug escaping unhandled.
//!
//! Two kinds of rule:
//! - *anywhere* rules match text the runtime generates, wherever it appears in the message;
//! - *whole-message* rules match what is left once the wrappers SDKs add (`Error executing tool
//!   NAME:`, `Error:`, `MCP error -32603:`) are removed: a bare path, a bare exception class
//!   (`KeyError`, `ValueError('x')`) or a bare quoted key (Python's `str(KeyError('id'))`).
//!
//! Validation dumps (pydantic's "1 validation error for …", zod's issue arrays) are not raw
//! text in this sense: they name the argument and the constraint it broke, which is what the
//! model needs. Each rule has a true and a false example in this module's tests.

use std::sync::LazyLock;

use regex::{Regex, RegexSet};

/// One rule of the table ([`RULES`]): a regular expression for raw exception text, anywhere
/// in the message or as the whole unwrapped message.
#[derive(Debug, Clone, Copy)]
pub struct RawRule {
    /// Stable id, e.g. `python-attribute-error`.
    pub id: &'static str,
    /// What the text is, for the finding's message (e.g. "a Python AttributeError").
    pub label: &'static str,
    /// Whether the pattern must match the whole unwrapped message (else: anywhere).
    pub whole: bool,
    /// The pattern (Rust `regex` syntax).
    pub pattern: &'static str,
}

/// The built-in rules, *anywhere* and *whole-message* ones together, each with a true and a
/// false example in this module's tests.
pub const RULES: &[RawRule] = &[
    RawRule {
        id: "python-attribute-error",
        label: "a Python AttributeError",
        whole: false,
        pattern: r"'[\w.]+' object has no attribute '[^'\n]+'",
    },
    RawRule {
        id: "python-type-error",
        label: "a Python TypeError",
        whole: false,
        pattern: r"'[\w.]+' object is not (?:subscriptable|callable|iterable)|object of type '[\w.]+' has no len\(\)|unsupported operand type\(s\) for|can only concatenate (?:str|list|tuple) \(not|argument of type '[\w.]+' is not iterable|missing \d+ required (?:positional|keyword-only) arguments?: '|takes \d+ positional arguments? but \d+ (?:were|was) given|got an unexpected keyword argument '|expected string or bytes-like object|Object of type \w+ is not JSON serializable",
    },
    RawRule {
        id: "python-index-error",
        label: "a Python IndexError",
        whole: false,
        pattern: r"\b(?:list|string|tuple) index out of range\b",
    },
    RawRule {
        id: "python-name-error",
        label: "a Python NameError",
        whole: false,
        pattern: r"\bname '\w+' is not defined\b|local variable '\w+' referenced before assignment|cannot access local variable '\w+'",
    },
    RawRule {
        id: "python-value-error",
        label: "a Python ValueError",
        whole: false,
        pattern: r"invalid literal for int\(\) with base \d+|could not convert string to float: |^(?:ZeroDivisionError: )?(?:integer |float )?division (?:or modulo )?by zero$|maximum recursion depth exceeded|No module named '",
    },
    RawRule {
        id: "python-errno",
        label: "a Python OSError (errno text)",
        whole: false,
        pattern: r"\[Errno \d+\] ",
    },
    RawRule {
        id: "exception-repr",
        label: "an exception's repr",
        whole: false,
        pattern: r#"\b[A-Z]\w*(?:Error|Exception)\((?:'|"|\d|\))"#,
    },
    RawRule {
        id: "js-type-error",
        label: "a JavaScript TypeError",
        whole: false,
        pattern: r"Cannot (?:read|set) propert(?:y|ies) of (?:undefined|null)|\b[\w$.\[\]]+ is not a (?:function|constructor)\b|^(?:TypeError|ReferenceError|RangeError|SyntaxError): ",
    },
    RawRule {
        id: "js-json-error",
        label: "a JavaScript JSON.parse error",
        whole: false,
        pattern: r"Unexpected token .{1,40} in JSON at position \d+|Unexpected end of JSON input|is not valid JSON$",
    },
    RawRule {
        id: "js-stack-overflow",
        label: "a JavaScript RangeError",
        whole: false,
        pattern: r"Maximum call stack size exceeded",
    },
    RawRule {
        id: "errno-code",
        label: "an operating-system errno string",
        whole: false,
        pattern: r"\b(?:ENOENT|EISDIR|ENOTDIR|EACCES|EPERM|EEXIST|ENOTEMPTY|EMFILE|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|EADDRINUSE|EHOSTUNREACH|ENOTFOUND|EAI_AGAIN):|\(os error \d+\)",
    },
    RawRule {
        id: "jvm-exception",
        label: "a JVM or .NET exception",
        whole: false,
        pattern: r"\bjava\.(?:lang|io|util)\.\w+(?:Exception|Error)\b|\bNullPointerException\b|\bSystem\.\w+Exception\b",
    },
    RawRule {
        id: "go-runtime-error",
        label: "a Go runtime error",
        whole: false,
        pattern: r"runtime error: (?:invalid memory address|index out of range|nil map|slice bounds)",
    },
    RawRule {
        id: "bare-exception-class",
        label: "a bare exception class",
        whole: true,
        pattern: r#"^[A-Z][A-Za-z0-9_.]*(?:Error|Exception)(?:\(.{0,200}\))?$"#,
    },
    RawRule {
        id: "bare-key",
        label: "a bare quoted key (a Python KeyError)",
        whole: true,
        pattern: r"^(?:KeyError: )?'[^'\n]{1,80}'$",
    },
    RawRule {
        id: "bare-path",
        label: "a bare path",
        whole: true,
        pattern: r"^(?:[A-Za-z]:\\[^\n]*|(?:/[^\s/]+)+/?)$",
    },
];

static ANYWHERE: LazyLock<Option<RegexSet>> =
    LazyLock::new(|| RegexSet::new(RULES.iter().filter(|r| !r.whole).map(|r| r.pattern)).ok());
static WHOLE: LazyLock<Option<RegexSet>> =
    LazyLock::new(|| RegexSet::new(RULES.iter().filter(|r| r.whole).map(|r| r.pattern)).ok());
/// The prefixes SDKs and servers wrap an exception's text in.
static WRAPPER: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"^(?i:(?:mcp error -?\d+:\s*|error executing tool [^\s:]+:\s*|(?:tool )?error:\s*|failed:\s*)+)").ok()
});

/// A match of the table in a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawText {
    /// The id of the rule that matched (a [`RULES`] id, e.g. `python-attribute-error`).
    pub rule: &'static str,
    /// The rule's label, e.g. "a Python AttributeError".
    pub label: &'static str,
    /// The message, trimmed and cut to at most 160 bytes (at a character boundary).
    pub excerpt: String,
}

/// The message with the wrappers SDKs add removed and whitespace trimmed.
pub fn unwrap(text: &str) -> &str {
    let t = text.trim();
    match WRAPPER.as_ref().and_then(|w| w.find(t)) {
        Some(m) => t[m.end()..].trim(),
        None => t,
    }
}

/// The first rule that `text` (an error message the model reads) matches, if any.
pub fn raw_text(text: &str) -> Option<RawText> {
    let t = text.trim();
    if t.is_empty() {
        return None;
    }
    let anywhere: Vec<&RawRule> = RULES.iter().filter(|r| !r.whole).collect();
    let whole: Vec<&RawRule> = RULES.iter().filter(|r| r.whole).collect();
    let rule = ANYWHERE
        .as_ref()
        .and_then(|set| set.matches(t).iter().next().map(|i| anywhere[i]))
        .or_else(|| {
            // Each line on its own too, so that `^…$` anchors see an unwrapped line.
            let inner = unwrap(t);
            WHOLE
                .as_ref()
                .and_then(|set| set.matches(inner).iter().next().map(|i| whole[i]))
        })?;
    let mut excerpt = t.to_owned();
    if excerpt.len() > 160 {
        let mut cut = 160;
        while !excerpt.is_char_boundary(cut) {
            cut -= 1;
        }
        excerpt.truncate(cut);
        excerpt.push('…');
    }
    Some(RawText {
        rule: rule.id,
        label: rule.label,
        excerpt,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(text: &str) -> Option<&'static str> {
        raw_text(text).map(|r| r.rule)
    }

    #[test]
    fn every_rule_compiles() {
        for r in RULES {
            assert!(Regex::new(r.pattern).is_ok(), "{}", r.id);
        }
        assert!(ANYWHERE.is_some() && WHOLE.is_some() && WRAPPER.is_some());
    }

    /// One true example per rule, as real servers wrote them.
    #[test]
    fn raw_texts_are_recognised() {
        let cases = [
            (
                "'str' object has no attribute 'message'",
                "python-attribute-error",
            ),
            (
                "Error executing tool lookup: 'NoneType' object is not subscriptable",
                "python-type-error",
            ),
            (
                "Error executing tool get: list index out of range",
                "python-index-error",
            ),
            ("name 'client' is not defined", "python-name-error"),
            (
                "invalid literal for int() with base 10: 'abc'",
                "python-value-error",
            ),
            (
                "[Errno 2] No such file or directory: 'a.py'",
                "python-errno",
            ),
            ("Error: KeyError('id')", "exception-repr"),
            (
                "Cannot read properties of undefined (reading 'id')",
                "js-type-error",
            ),
            ("TypeError: client.fetch is not a function", "js-type-error"),
            ("Unexpected token < in JSON at position 0", "js-json-error"),
            ("Maximum call stack size exceeded", "js-stack-overflow"),
            (
                "Error: ENOENT: no such file or directory, open '/tmp/x/a.txt'",
                "errno-code",
            ),
            (
                "failed to open file: No such file or directory (os error 2)",
                "errno-code",
            ),
            ("java.lang.NullPointerException at Foo.bar", "jvm-exception"),
            (
                "runtime error: invalid memory address or nil pointer dereference",
                "go-runtime-error",
            ),
            (
                "Error executing tool lookup: KeyError",
                "bare-exception-class",
            ),
            ("InvalidGitRepositoryError", "bare-exception-class"),
            ("'user_id'", "bare-key"),
            (
                "Error executing tool git_status: /tmp/mcp-chaos-repo/nope",
                "bare-path",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(rule(text), Some(want), "{text}");
        }
    }

    /// Messages that say what failed and what to do, and validation dumps that name the
    /// argument and the constraint: not raw text.
    #[test]
    fn actionable_texts_are_not_raw() {
        let cases = [
            "The records service has no record 7 (404). Check the id; retrying will not help.",
            "The weather service is rate limiting requests (429). Retry after 30 seconds.",
            "Error executing tool fetch: Failed to fetch http://127.0.0.1:9/x - status code 404",
            "1 validation error for get_current_timeArguments\ntimezone\n  Field required [type=missing, input_value={}, input_type=dict]",
            r#"MCP error -32602: Invalid arguments for tool echo: [{"code":"invalid_type","expected":"string","received":"number","path":["message"],"message":"Expected string, received number"}]"#,
            "Invalid timezone: 'Mars/Olympus'. Use an IANA name such as Europe/Paris.",
            "Path /etc/passwd is outside the allowed directories: /tmp/sandbox",
            "Access denied - path outside allowed directories: /x not in /tmp/a",
            "Unknown tool: nope",
            "The argument 'limit' is not a number: use an integer from 1 to 100.",
            "Error: failed",
            "The file a.txt is not defined in this workspace; list files with list_files first.",
            "ValueError is raised when the date is not YYYY-MM-DD; send 2026-01-31.",
        ];
        for text in cases {
            assert_eq!(rule(text), None, "{text}");
        }
    }

    #[test]
    fn wrappers_are_removed_and_excerpts_cut() {
        assert_eq!(unwrap("Error executing tool git_status: /a/b"), "/a/b");
        assert_eq!(unwrap("MCP error -32603: Error: KeyError"), "KeyError");
        let long = format!(
            "'NoneType' object has no attribute 'get' {}",
            "é".repeat(200)
        );
        let r = raw_text(&long).expect("raw");
        assert!(r.excerpt.len() <= 160 + '…'.len_utf8());
        assert!(r.excerpt.ends_with('…'));
    }
}
