//! `wrong-error-code` (MC102): protocol errors carry the code JSON-RPC 2.0 assigns (every MCP
//! version: all messages MUST follow JSON-RPC 2.0, `basic/index` §Messages):
//! - a frame that is not JSON → -32700 (violation otherwise);
//! - JSON that is not a valid request (no `jsonrpc`, null id, no `method`, ...) → -32600
//!   (violation for another code; a warning when the server accepts it and answers a result);
//! - an unknown method → -32601 (violation otherwise);
//! - `tools/call` whose params fail the `CallToolRequest` schema, and an unknown tool → -32602
//!   (a warning otherwise: MCP gives -32602 only by example).
//!
//! A probe of a method gated behind a server capability the server did not advertise (a
//! `tools/call` to a server without `tools`, say) is a method the server does not offer: it
//! owes -32601 (method not found; the 2026-07-28 schema documents -32601 for "a method gated
//! behind a server capability that was not advertised"). -32602 is accepted there too (an SDK
//! that routes every method and then finds no such tool); any other code is judged as above
//! but against -32601, and the code a probe owes only because its method's parameters are wrong
//! (-32602) is never demanded of a server that offers no such method.

use serde_json::Value;

use super::{Context, finding};
use crate::finding::{Finding, Severity, WRONG_ERROR_CODE};
use crate::session::{Exchange, Probe};
use crate::wire::{
    self, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, Message, PARSE_ERROR, ResponseId,
};

/// The server capability (a key of `ServerCapabilities`) that gates `method`: `tools`,
/// `prompts`, `resources`, `completions`, `logging` or `tasks`; `None` for methods every server
/// serves (`initialize`, `ping`, `server/discover`, notifications) and for unknown methods.
pub fn gating_capability(method: &str) -> Option<&'static str> {
    let (family, _) = method.split_once('/')?;
    match family {
        "tools" => Some("tools"),
        "prompts" => Some("prompts"),
        "resources" => Some("resources"),
        "completion" => Some("completions"),
        "logging" => Some("logging"),
        "tasks" => Some("tasks"),
        _ => None,
    }
}

/// Whether `capabilities` (a `ServerCapabilities` object) advertises `capability`: its key is
/// present and neither `null` nor `false`. Unknown capabilities (`None`) advertise everything,
/// so that nothing is excused without evidence.
pub fn advertised(capabilities: Option<&Value>, capability: &str) -> bool {
    capabilities.is_none_or(|c| {
        c.get(capability)
            .is_some_and(|v| !matches!(v, Value::Null | Value::Bool(false)))
    })
}

/// The method a protocol probe calls, where that method can be gated behind a capability.
fn probed_method(probe: &Probe) -> Option<&'static str> {
    match probe {
        Probe::UnknownTool { .. } | Probe::InvalidCallParams { .. } => Some("tools/call"),
        Probe::MissingMeta => Some("tools/list"),
        _ => None,
    }
}

/// The capability `ex` probes that the server did not advertise, if any.
pub fn unadvertised(ctx: &Context<'_>, probe: &Probe) -> Option<&'static str> {
    probed_method(probe)
        .and_then(gating_capability)
        .filter(|c| !advertised(ctx.capabilities, c))
}

/// Judges the error code of the answer to each protocol probe.
pub fn check(ctx: &Context<'_>, ex: &Exchange) -> Vec<Finding> {
    let unadvertised = unadvertised(ctx, &ex.probe);
    let (want, wrong_code_severity, result_severity) = match &ex.probe {
        Probe::ParseError => (PARSE_ERROR, Severity::Violation, None),
        Probe::InvalidRequest { .. } => (
            INVALID_REQUEST,
            Severity::Violation,
            Some(Severity::Warning),
        ),
        Probe::UnknownMethod { .. } => (
            METHOD_NOT_FOUND,
            Severity::Violation,
            Some(Severity::Violation),
        ),
        // 2026-07-28: missing `_meta` fields MUST get -32602.
        Probe::MissingMeta => (
            INVALID_PARAMS,
            Severity::Violation,
            Some(Severity::Violation),
        ),
        Probe::InvalidCallParams { .. } => {
            (INVALID_PARAMS, Severity::Warning, Some(Severity::Warning))
        }
        // A result for an unknown tool is judged by unknown-tool-not-protocol-error.
        Probe::UnknownTool { .. } => (INVALID_PARAMS, Severity::Warning, None),
        _ => return Vec::new(),
    };
    // A method the server did not advertise is one it does not have: -32601. Missing `_meta`
    // fields still owe -32602 (MUST, whatever the method), but a server that looks its method
    // up first has answered truly too.
    let (want, also) = match unadvertised {
        Some(_) if matches!(ex.probe, Probe::MissingMeta) => (want, Some(METHOD_NOT_FOUND)),
        Some(_) => (METHOD_NOT_FOUND, Some(INVALID_PARAMS)),
        None => (want, None),
    };
    // The answer: the matched response, or, for fenced probes, the first response with a null
    // or absent id.
    let answer = ex.response().or_else(|| {
        ex.frames().find_map(|(_, f)| match &f.message {
            Ok(Message::Response(r)) if matches!(r.id(), ResponseId::Null | ResponseId::Absent) => {
                Some(r)
            }
            _ => None,
        })
    });
    let Some(answer) = answer else {
        return Vec::new();
    };
    let name = code_name(want);
    let why = match unadvertised {
        Some(capability) if want == METHOD_NOT_FOUND => {
            format!(" (the server did not advertise the {capability:?} capability)")
        }
        _ => String::new(),
    };
    let message = match answer.error() {
        Some(error) if error.code == want || Some(error.code) == also => return Vec::new(),
        Some(error) => (
            wrong_code_severity,
            format!(
                "{} was answered with error code {} ({}); JSON-RPC 2.0 assigns {want} ({name}){why}",
                ex.probe.label(),
                error.code,
                code_name(error.code),
            ),
        ),
        None => match result_severity {
            Some(severity) => (
                severity,
                format!(
                    "{} was answered with a result; it should be a JSON-RPC error {want} ({name}){why}",
                    ex.probe.label()
                ),
            ),
            None => return Vec::new(),
        },
    };
    let mut f = finding(&WRONG_ERROR_CODE, message.0, ctx, ex, message.1);
    f.response = Some(super::safe_excerpt(
        &serde_json::to_vec(answer.raw()).unwrap_or_default(),
    ));
    vec![f]
}

/// The JSON-RPC 2.0 name of a standard code.
pub fn code_name(code: i64) -> &'static str {
    match code {
        PARSE_ERROR => "parse error",
        INVALID_REQUEST => "invalid request",
        METHOD_NOT_FOUND => "method not found",
        INVALID_PARAMS => "invalid params",
        wire::INTERNAL_ERROR => "internal error",
        -32099..=-32000 => "implementation-defined server error",
        _ => "application error",
    }
}

/// This invariant as the oracle's [`judge`](super::judge) runs it on every exchange
/// ([`check`]), with the catalog entries it reports.
pub struct Rule;

impl super::Check for Rule {
    fn name(&self) -> &'static str {
        "error_codes"
    }

    fn invariants(&self) -> &'static [crate::finding::Invariant] {
        &[crate::finding::WRONG_ERROR_CODE]
    }

    fn check(&self, ctx: &super::Context<'_>, ex: &crate::session::Exchange) -> Vec<Finding> {
        check(ctx, ex)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::json;

    use super::*;
    use crate::observed::Frame;
    use crate::protocol::ProtocolVersion;
    use crate::session::{Expect, Outcome, Received, ReceivedItem};
    use crate::wire::{INTERNAL_ERROR, RequestId};

    /// `probe` (a `tools/call`) answered with error `code`.
    fn answered(probe: Probe, code: i64) -> Exchange {
        let id = RequestId::from(3);
        let sent = wire::to_line(&wire::request(
            &id,
            "tools/call",
            Some(json!({"name": "mcp_chaos_no_such_tool", "arguments": {}})),
        ));
        let answer = serde_json::to_vec(&wire::error(Some(&id), code, "no", None)).unwrap();
        Exchange {
            probe,
            sent,
            expect: Expect::Response {
                id,
                or_null: false,
                fence: false,
            },
            received: vec![Received {
                at_ms: 1,
                item: ReceivedItem::Frame(Frame::new(answer)),
            }],
            preceding: 0,
            outcome: Outcome::Answered { index: 0 },
            elapsed: Duration::from_millis(1),
            timeout_ms: 1000,
            fault: None,
        }
    }

    fn judged(capabilities: Option<&Value>, probe: Probe, code: i64) -> Vec<String> {
        let ctx = Context {
            capabilities,
            ..Context::bare(ProtocolVersion::V2025_11_25)
        };
        check(&ctx, &answered(probe, code))
            .into_iter()
            .map(|f| f.message)
            .collect()
    }

    fn unknown_tool() -> Probe {
        Probe::UnknownTool {
            name: "mcp_chaos_no_such_tool".into(),
        }
    }

    fn invalid_params() -> Probe {
        Probe::InvalidCallParams { what: "no params" }
    }

    #[test]
    fn methods_map_to_their_capabilities() {
        assert_eq!(gating_capability("tools/call"), Some("tools"));
        assert_eq!(gating_capability("prompts/get"), Some("prompts"));
        assert_eq!(
            gating_capability("resources/templates/list"),
            Some("resources")
        );
        assert_eq!(
            gating_capability("completion/complete"),
            Some("completions")
        );
        assert_eq!(gating_capability("logging/setLevel"), Some("logging"));
        assert_eq!(gating_capability("ping"), None);
        assert_eq!(gating_capability("server/discover"), None);
        assert_eq!(gating_capability("notifications/initialized"), None);
        let caps = json!({"tools": {}, "prompts": null, "logging": false});
        assert!(advertised(Some(&caps), "tools"));
        assert!(!advertised(Some(&caps), "prompts"));
        assert!(!advertised(Some(&caps), "logging"));
        assert!(!advertised(Some(&caps), "resources"));
        assert!(advertised(None, "resources"));
    }

    /// Without the `tools` capability, tools/call owes -32601 (and -32602 is accepted); with
    /// it, an unknown tool owes -32602 and -32601 is still a wrong code.
    #[test]
    fn a_method_the_server_did_not_advertise_owes_method_not_found() {
        let none = json!({"prompts": {}});
        let tools = json!({"tools": {"listChanged": false}});
        for probe in [unknown_tool(), invalid_params()] {
            assert!(judged(Some(&none), probe.clone(), METHOD_NOT_FOUND).is_empty());
            assert!(judged(Some(&none), probe.clone(), INVALID_PARAMS).is_empty());
            let wrong = judged(Some(&none), probe.clone(), INTERNAL_ERROR);
            assert_eq!(wrong.len(), 1, "{wrong:?}");
            assert!(
                wrong[0].contains("assigns -32601 (method not found)")
                    && wrong[0].contains("did not advertise the \"tools\" capability"),
                "{}",
                wrong[0]
            );
            // Advertised (or unknown) capabilities: -32602 is owed, -32601 is wrong.
            for caps in [Some(&tools), None] {
                assert!(judged(caps, probe.clone(), INVALID_PARAMS).is_empty());
                let wrong = judged(caps, probe.clone(), METHOD_NOT_FOUND);
                assert_eq!(wrong.len(), 1, "{wrong:?}");
                assert!(wrong[0].contains("assigns -32602"), "{}", wrong[0]);
            }
        }
        // Missing `_meta` fields owe -32602 whatever the method; without the capability a
        // -32601 is accepted, another code is not.
        assert!(judged(Some(&none), Probe::MissingMeta, METHOD_NOT_FOUND).is_empty());
        assert!(judged(Some(&none), Probe::MissingMeta, INVALID_PARAMS).is_empty());
        assert_eq!(
            judged(Some(&none), Probe::MissingMeta, INTERNAL_ERROR).len(),
            1
        );
        assert_eq!(
            judged(Some(&tools), Probe::MissingMeta, METHOD_NOT_FOUND).len(),
            1
        );
    }
}
