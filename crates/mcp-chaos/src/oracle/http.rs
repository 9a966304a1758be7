//! The Streamable HTTP invariants (`basic/transports` §Streamable HTTP; spec-notes §6.2),
//! judged on the [`HttpInfo`](crate::observed::HttpInfo) of each exchange:
//! - `http-status` (MC401): 202 and no body for an accepted notification; 400 for an
//!   unsupported `MCP-Protocol-Version` (2025-06-18 on); 404 for a deleted session (a never
//!   issued one SHOULD get 404 too: warning);
//!   an SSE stream or 405 for `GET`; in 2026-07-28, 404 for an unknown method and 400 with the
//!   header, capability and version errors (-32020/-32021/-32022) and with a missing `_meta`
//!   (-32602). A missing session id SHOULD get 400 (warning).
//! - `http-content-type` (MC402): a 2xx response with a body is `application/json` or
//!   `text/event-stream`.
//! - `http-origin-not-validated` (MC403): a foreign `Origin` is refused; with 403 from
//!   2025-11-25 on.
//! - `session-id-format` (MC404): `Mcp-Session-Id` is visible ASCII (0x21-0x7E).
//! - `sse-malformed` (MC405): an SSE body a conforming client reads completely.
//! - `http-status` also reports a redirect (3xx) from the MCP endpoint, as a warning: the
//!   spec defines no redirect for the endpoint (`basic/transports` §Streamable HTTP: the
//!   server answers each POST with JSON, an SSE stream or 202), and a client that followed it
//!   could be taken off the host it was pointed at (§Security Warning: bind to localhost).
//!   mcp-chaos never follows one; the finding names the `Location`.

use super::{Context, finding};
use crate::finding::{
    Finding, HTTP_CONTENT_TYPE, HTTP_ORIGIN_NOT_VALIDATED, HTTP_STATUS, SESSION_ID_FORMAT,
    SSE_MALFORMED, Severity,
};
use crate::session::{Exchange, HttpProbe, Probe};

/// Judges the HTTP exchange of `ex`, if it has one.
pub fn check(ctx: &Context<'_>, ex: &Exchange) -> Vec<Finding> {
    let Some(info) = ex.http() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let status = info.status;
    let mut status_finding = |severity: Severity, message: String| {
        out.push(finding(&HTTP_STATUS, severity, ctx, ex, message));
    };
    let rules = ctx.version.rules();
    let said = status.map_or_else(|| "no response".to_owned(), |s| format!("HTTP {s}"));
    let error_code = ex.response().and_then(|r| r.error()).map(|e| e.code);
    match &ex.probe {
        Probe::Notification { .. } | Probe::Initialized => {
            if let Some(s) = status
                && (200..300).contains(&s)
                && (s != 202 || info.body_bytes > 0)
            {
                status_finding(
                    Severity::Violation,
                    format!(
                        "an accepted notification was answered with HTTP {s}{}; it MUST get 202 Accepted with no body",
                        if info.body_bytes > 0 {
                            " and a body"
                        } else {
                            ""
                        }
                    ),
                );
            }
        }
        Probe::UnknownMethod { method } if !rules.handshake && status != Some(404) => {
            status_finding(
                Severity::Violation,
                format!(
                    "the unknown method {method:?} got {said}; in {} it MUST get HTTP 404 with -32601",
                    ctx.version
                ),
            );
        }
        Probe::MissingMeta if status != Some(400) => status_finding(
            Severity::Violation,
            format!(
                "a request without the required _meta fields got {said}; it MUST get HTTP 400 with -32602"
            ),
        ),
        Probe::VersionNegotiation { .. } if !rules.handshake && status != Some(400) => {
            status_finding(
                Severity::Violation,
                format!(
                    "a request for an unsupported protocol version got {said}; it MUST get HTTP 400 with -32022"
                ),
            );
        }
        Probe::Http { what } => match what {
            HttpProbe::BadVersionHeader if status != Some(400) => status_finding(
                Severity::Violation,
                format!(
                    "a request with MCP-Protocol-Version: 1999-01-01 got {said}; an invalid or unsupported version MUST get HTTP 400"
                ),
            ),
            // The MUST covers a session that ended ("after which it MUST respond to requests
            // containing that session ID with HTTP 404"); an id the server never issued is
            // best answered the same way, since a 404 is what makes a client start over.
            HttpProbe::UnknownSession if status != Some(404) => status_finding(
                Severity::Warning,
                format!(
                    "a request with a session id the server never issued got {said}; answering it like an ended session (404) is what makes a client start a new session (the spec's MUST 404 is for sessions that ended)"
                ),
            ),
            HttpProbe::DeletedSession if status != Some(404) => status_finding(
                Severity::Violation,
                format!(
                    "a request with the id of a session that was just deleted got {said}; the server MUST answer 404 so that the client starts a new session"
                ),
            ),
            HttpProbe::NoSession if status.is_some_and(|s| (200..300).contains(&s)) => {
                status_finding(
                    Severity::Warning,
                    format!(
                        "a request without the session id the server issued got {said}; it SHOULD get 400"
                    ),
                )
            }
            HttpProbe::Get => {
                let sse = info
                    .content_type
                    .as_deref()
                    .is_some_and(|c| c.starts_with("text/event-stream"));
                let ok = if rules.handshake {
                    status == Some(405) || (status == Some(200) && sse)
                } else {
                    status == Some(405)
                };
                if !ok {
                    let (severity, want) = if rules.handshake {
                        (
                            Severity::Violation,
                            "an SSE stream (200, text/event-stream) or 405 Method Not Allowed",
                        )
                    } else {
                        (
                            Severity::Warning,
                            "405 Method Not Allowed (2026-07-28 has no GET stream)",
                        )
                    };
                    status_finding(
                        severity,
                        format!("GET on the MCP endpoint got {said}; it should get {want}"),
                    );
                }
            }
            HttpProbe::Delete if status.is_some_and(|s| !(200..300).contains(&s) && s != 405) => {
                status_finding(
                    Severity::Warning,
                    format!(
                        "DELETE of the session got {said}; a server ends the session (2xx) or refuses with 405"
                    ),
                )
            }
            HttpProbe::MissingMethodHeader if status != Some(400) || error_code != Some(-32020) => {
                status_finding(
                    Severity::Violation,
                    format!(
                        "a 2026-07-28 request without the Mcp-Method header got {said}{}; it MUST get HTTP 400 with -32020",
                        error_code
                            .map(|c| format!(" and error {c}"))
                            .unwrap_or_default()
                    ),
                )
            }
            HttpProbe::ForeignOrigin => {
                if let Some(s) = status {
                    let accepted = (200..300).contains(&s);
                    if accepted || (rules.origin_403 && s != 403) {
                        out.push(finding(
                            &HTTP_ORIGIN_NOT_VALIDATED,
                            Severity::Violation,
                            ctx,
                            ex,
                            if accepted {
                                format!("a request with Origin: http://evil.example was accepted (HTTP {s}); servers MUST validate Origin to stop DNS rebinding")
                            } else {
                                format!("a request with Origin: http://evil.example got HTTP {s}; from 2025-11-25 an invalid Origin MUST get 403")
                            },
                        ));
                    }
                }
            }
            _ => {}
        },
        _ => {}
    }
    if let Some(s) = status
        && (300..400).contains(&s)
        && s != 304
    {
        out.push(finding(
            &HTTP_STATUS,
            Severity::Warning,
            ctx,
            ex,
            redirect_message(s, info.location.as_deref()),
        ));
    }
    // The spec-defined 2026-07-28 errors travel with HTTP 400.
    if !rules.handshake
        && let Some(code) = error_code
        && matches!(code, -32022..=-32020)
        && status != Some(400)
        && !matches!(
            ex.probe,
            Probe::Http { .. } | Probe::VersionNegotiation { .. }
        )
    {
        out.push(finding(
            &HTTP_STATUS,
            Severity::Violation,
            ctx,
            ex,
            format!("error {code} came with {said}; it MUST come with HTTP 400"),
        ));
    }
    if let Some(s) = status
        && (200..300).contains(&s)
        && s != 202
        && info.body_bytes > 0
        && !matches!(
            ex.probe,
            Probe::Http {
                what: HttpProbe::Get
            }
        )
    {
        let ok = info.content_type.as_deref().is_some_and(|c| {
            let c = c.trim_start().to_ascii_lowercase();
            c.starts_with("application/json") || c.starts_with("text/event-stream")
        });
        if !ok {
            out.push(finding(
                &HTTP_CONTENT_TYPE,
                Severity::Violation,
                ctx,
                ex,
                format!(
                    "a response body came as {}; it must be application/json or text/event-stream",
                    info.content_type.as_deref().unwrap_or("(no Content-Type)")
                ),
            ));
        }
    }
    if let Some(id) = &info.session_id
        && (id.is_empty() || !id.bytes().all(|b| (0x21..=0x7e).contains(&b)))
    {
        out.push(finding(
            &SESSION_ID_FORMAT,
            Severity::Violation,
            ctx,
            ex,
            format!("the Mcp-Session-Id {id:?} is not all visible ASCII (0x21-0x7E)"),
        ));
    }
    if !info.sse_anomalies.is_empty() {
        out.push(finding(
            &SSE_MALFORMED,
            Severity::Violation,
            ctx,
            ex,
            format!(
                "the SSE response is malformed: {}",
                info.sse_anomalies.join("; ")
            ),
        ));
    }
    out
}

/// What a redirect from the MCP endpoint says: the status, where it points (an excerpt), and
/// that it was not followed.
fn redirect_message(status: u16, location: Option<&str>) -> String {
    let target = match location {
        None => "with no Location".to_owned(),
        Some(l) => {
            let host = reqwest::Url::parse(l)
                .ok()
                .and_then(|u| u.host_str().map(str::to_owned));
            let off = match host {
                Some(h) if crate::observed::is_loopback_host(&h) => "",
                Some(_) => ", off loopback",
                None => "",
            };
            format!(
                "redirecting to {:?}{off}",
                crate::wire::excerpt(l.as_bytes(), 120)
            )
        }
    };
    format!(
        "the MCP endpoint answered with HTTP {status} {target}; mcp-chaos does not follow redirects \
         (an MCP endpoint answers at its own URL, and a client that follows could be sent to \
         another host)"
    )
}

/// This invariant as the oracle's [`judge`](super::judge) runs it on every exchange
/// ([`check`]), with the catalog entries it reports.
pub struct Rule;

impl super::Check for Rule {
    fn name(&self) -> &'static str {
        "http"
    }

    fn invariants(&self) -> &'static [crate::finding::Invariant] {
        &[
            crate::finding::HTTP_CONTENT_TYPE,
            crate::finding::HTTP_ORIGIN_NOT_VALIDATED,
            crate::finding::HTTP_STATUS,
            crate::finding::SESSION_ID_FORMAT,
            crate::finding::SSE_MALFORMED,
        ]
    }

    fn check(&self, ctx: &super::Context<'_>, ex: &crate::session::Exchange) -> Vec<Finding> {
        check(ctx, ex)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::observed::HttpInfo;
    use crate::protocol::ProtocolVersion;
    use crate::session::{Expect, Outcome, Received, ReceivedItem};
    use crate::wire::RequestId;

    fn initialize_answered_with(status: u16, location: Option<&str>) -> Exchange {
        let info = HttpInfo {
            post: 1,
            method: "POST".into(),
            status: Some(status),
            content_type: None,
            session_id: None,
            location: location.map(str::to_owned),
            body_bytes: 0,
            sse_events: 0,
            sse_priming: false,
            sse_anomalies: Vec::new(),
            error: None,
            www_authenticate: None,
            elapsed_ms: 1,
        };
        Exchange {
            probe: Probe::Initialize {
                requested: "2025-11-25".into(),
            },
            sent: b"{}".to_vec(),
            expect: Expect::Response {
                id: RequestId::from(1),
                or_null: false,
                fence: false,
            },
            received: vec![Received {
                at_ms: 1,
                item: ReceivedItem::Http(info),
            }],
            preceding: 0,
            outcome: Outcome::NoAnswer,
            elapsed: Duration::from_millis(1),
            timeout_ms: 1000,
            fault: None,
        }
    }

    #[test]
    fn a_redirect_is_a_warning_naming_its_target() {
        let ctx = Context::bare(ProtocolVersion::V2025_11_25);
        for status in [301, 302, 307, 308] {
            let ex = initialize_answered_with(status, Some("http://198.51.100.1/mcp"));
            let found = check(&ctx, &ex);
            assert_eq!(found.len(), 1, "{found:?}");
            assert_eq!(found[0].invariant, "http-status");
            assert_eq!(found[0].severity, Severity::Warning);
            assert!(
                found[0].message.contains(&format!("HTTP {status}"))
                    && found[0].message.contains("198.51.100.1")
                    && found[0].message.contains("off loopback")
                    && found[0].message.contains("does not follow"),
                "{}",
                found[0].message
            );
        }
        let ex = initialize_answered_with(307, Some("http://127.0.0.1:9/mcp"));
        let found = check(&ctx, &ex);
        assert!(!found[0].message.contains("off loopback"), "{found:?}");
        let ex = initialize_answered_with(307, None);
        assert!(check(&ctx, &ex)[0].message.contains("no Location"));
    }

    #[test]
    fn no_redirect_no_redirect_finding() {
        let ctx = Context::bare(ProtocolVersion::V2025_11_25);
        for status in [200, 202, 304, 400, 404, 500] {
            let ex = initialize_answered_with(status, None);
            assert!(
                check(&ctx, &ex)
                    .iter()
                    .all(|f| !f.message.contains("redirect")),
                "{status}"
            );
        }
    }
}
