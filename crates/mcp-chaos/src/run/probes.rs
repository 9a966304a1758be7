//! The protocol probe catalog: each probe ([`Step`]) the campaign sends to judge the server's
//! protocol handling (ping, unknown method, malformed frames, invalid requests and params,
//! notifications, batches, ...), in the order [`protocol_steps`] gives for a version, and
//! how one is carried out on a session ([`execute`]).

use serde_json::{Value, json};

use crate::protocol::ProtocolVersion;
use crate::session::{Exchange, Expect, Probe, Session};
use crate::wire::{self, RequestId};

/// The version string used to probe version negotiation; no MCP release has it.
pub const BOGUS_VERSION: &str = "1999-01-01";
/// The tool name used for the unknown-tool probe.
pub const UNKNOWN_TOOL: &str = "mcp_chaos_no_such_tool";
/// The method used for the unknown-method probe.
pub const UNKNOWN_METHOD: &str = "mcp-chaos/no-such-method";

/// One probe of the campaign.
#[derive(Debug, Clone)]
pub enum Step {
    /// `ping`, judged for its result shape.
    Ping,
    /// A request for a method that does not exist.
    UnknownMethod,
    /// A frame that is not JSON.
    ParseError,
    /// JSON that is not a valid request.
    InvalidRequest(InvalidRequest),
    /// A notification.
    Notification {
        /// The notification's method, e.g. `notifications/cancelled`.
        method: &'static str,
        /// Whether MCP defines the method (`false` for a made-up one).
        known: bool,
    },
    /// `tools/call` of an unknown tool.
    UnknownTool,
    /// `tools/call` with params that fail the `CallToolRequest` schema.
    InvalidCallParams(InvalidCallParams),
    /// A batch of two pings.
    Batch,
    /// An HTTP-level probe (Streamable HTTP only).
    Http(crate::session::HttpProbe),
    /// A 2026-07-28 request without the `_meta` fields.
    MissingMeta,
    /// `tools/call` of a listed tool.
    CallTool {
        /// The tool's name, as listed.
        tool: String,
        /// The `arguments` object sent.
        arguments: Value,
    },
}

impl Step {
    /// A short human label, e.g. `unknown method`, `tools/call echo`.
    pub fn label(&self) -> String {
        match self {
            Step::Ping => "ping".into(),
            Step::UnknownMethod => "unknown method".into(),
            Step::ParseError => "malformed JSON".into(),
            Step::InvalidRequest(kind) => format!("invalid request ({})", kind.describe()),
            Step::Notification { method, .. } => format!("notification {method}"),
            Step::UnknownTool => "unknown tool".into(),
            Step::InvalidCallParams(kind) => format!("tools/call ({})", kind.describe()),
            Step::Batch => "batch".into(),
            Step::Http(what) => format!("HTTP {}", what.label()),
            Step::MissingMeta => "request without _meta".into(),
            Step::CallTool { tool, .. } => format!("tools/call {tool}"),
        }
    }
}

/// Ways to make a request invalid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InvalidRequest {
    /// No `jsonrpc` member.
    NoJsonrpc,
    /// `jsonrpc: "1.0"`.
    WrongJsonrpc,
    /// `id: null`.
    NullId,
    /// No `method` member.
    NoMethod,
    /// `method` is a number.
    MethodNotString,
    /// A JSON number instead of an object.
    NotAnObject,
}

impl InvalidRequest {
    /// Every kind.
    pub const ALL: [InvalidRequest; 6] = [
        InvalidRequest::NoJsonrpc,
        InvalidRequest::WrongJsonrpc,
        InvalidRequest::NullId,
        InvalidRequest::NoMethod,
        InvalidRequest::MethodNotString,
        InvalidRequest::NotAnObject,
    ];

    fn describe(self) -> &'static str {
        match self {
            InvalidRequest::NoJsonrpc => "no jsonrpc member",
            InvalidRequest::WrongJsonrpc => "jsonrpc is \"1.0\"",
            InvalidRequest::NullId => "id is null",
            InvalidRequest::NoMethod => "no method member",
            InvalidRequest::MethodNotString => "method is a number",
            InvalidRequest::NotAnObject => "a JSON number, not an object",
        }
    }

    /// The frame, and the id it carries if one can be read.
    fn frame(self, id: RequestId) -> (Value, Option<RequestId>) {
        let idv = id.to_value();
        match self {
            InvalidRequest::NoJsonrpc => (json!({"id": idv, "method": "ping"}), Some(id)),
            InvalidRequest::WrongJsonrpc => (
                json!({"jsonrpc": "1.0", "id": idv, "method": "ping"}),
                Some(id),
            ),
            InvalidRequest::NullId => (
                json!({"jsonrpc": "2.0", "id": null, "method": "ping"}),
                None,
            ),
            InvalidRequest::NoMethod => (json!({"jsonrpc": "2.0", "id": idv}), Some(id)),
            InvalidRequest::MethodNotString => {
                (json!({"jsonrpc": "2.0", "id": idv, "method": 42}), Some(id))
            }
            InvalidRequest::NotAnObject => (json!(42), None),
        }
    }
}

/// Ways to make `tools/call` params fail the `CallToolRequest` schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InvalidCallParams {
    /// `arguments` is a string.
    ArgumentsString,
    /// `arguments` is an array.
    ArgumentsArray,
    /// No `name`.
    NoName,
    /// No `params` at all.
    NoParams,
}

impl InvalidCallParams {
    /// Every kind.
    pub const ALL: [InvalidCallParams; 4] = [
        InvalidCallParams::ArgumentsString,
        InvalidCallParams::ArgumentsArray,
        InvalidCallParams::NoName,
        InvalidCallParams::NoParams,
    ];

    fn describe(self) -> &'static str {
        match self {
            InvalidCallParams::ArgumentsString => "arguments is a string",
            InvalidCallParams::ArgumentsArray => "arguments is an array",
            InvalidCallParams::NoName => "no name",
            InvalidCallParams::NoParams => "no params",
        }
    }

    fn params(self, tool: &str) -> Option<Value> {
        match self {
            InvalidCallParams::ArgumentsString => {
                Some(json!({"name": tool, "arguments": "not an object"}))
            }
            InvalidCallParams::ArgumentsArray => Some(json!({"name": tool, "arguments": [1, 2]})),
            InvalidCallParams::NoName => Some(json!({"arguments": {}})),
            InvalidCallParams::NoParams => None,
        }
    }
}

/// The protocol probes, in the order they run, for the negotiated `version`, over HTTP or not,
/// with or without an HTTP session.
pub fn protocol_steps(version: ProtocolVersion, http: bool, session: bool) -> Vec<Step> {
    use crate::session::HttpProbe;
    let mut steps = vec![Step::Ping, Step::UnknownMethod, Step::ParseError];
    if !version.rules().handshake {
        steps.push(Step::MissingMeta);
    }
    if http {
        steps.push(Step::Http(HttpProbe::ForeignOrigin));
        if version.rules().http_version_header {
            steps.push(Step::Http(HttpProbe::BadVersionHeader));
        }
        if session {
            steps.push(Step::Http(HttpProbe::UnknownSession));
            steps.push(Step::Http(HttpProbe::NoSession));
        }
        steps.push(Step::Http(HttpProbe::Get));
        if !version.rules().handshake {
            steps.push(Step::Http(HttpProbe::MissingMethodHeader));
        }
    }
    steps.extend(InvalidRequest::ALL.into_iter().map(Step::InvalidRequest));
    steps.push(Step::Notification {
        method: "notifications/mcp-chaos-unknown",
        known: false,
    });
    steps.push(Step::Notification {
        method: "notifications/cancelled",
        known: true,
    });
    steps.push(Step::UnknownTool);
    steps.extend(
        InvalidCallParams::ALL
            .into_iter()
            .map(Step::InvalidCallParams),
    );
    steps.push(Step::Batch);
    steps
}

/// Executes one step on `session` and returns its exchange.
pub async fn execute(session: &mut Session, step: &Step, first_tool: Option<&str>) -> Exchange {
    match step {
        // `ping` is gone in 2026-07-28: there it is an unknown method (HTTP 404 + -32601).
        Step::Ping if session.stateless() => {
            let probe = Probe::UnknownMethod {
                method: "ping".into(),
            };
            session.request(probe, "ping", None).await
        }
        Step::Ping => session.request(Probe::Liveness, "ping", None).await,
        Step::Http(what) => match session.http_probe(*what).await {
            Some(ex) => ex,
            None => session.liveness().await,
        },
        Step::MissingMeta => {
            let id = session.next_id();
            let frame = wire::to_line(&wire::request(&id, "tools/list", None));
            let expect = Expect::Response {
                id,
                or_null: true,
                fence: true,
            };
            session.send(Probe::MissingMeta, frame, expect).await
        }
        Step::UnknownMethod => {
            session
                .request(
                    Probe::UnknownMethod {
                        method: UNKNOWN_METHOD.into(),
                    },
                    UNKNOWN_METHOD,
                    None,
                )
                .await
        }
        Step::ParseError => {
            let id = session.next_id();
            let frame = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\n");
            session
                .send(Probe::ParseError, frame.into_bytes(), Expect::Fenced)
                .await
        }
        Step::InvalidRequest(kind) => {
            let id = session.next_id();
            let (frame, readable) = kind.frame(id);
            let expect = match &readable {
                Some(id) => Expect::Response {
                    id: id.clone(),
                    or_null: true,
                    fence: true,
                },
                None => Expect::Fenced,
            };
            let probe = Probe::InvalidRequest {
                what: kind.describe(),
                id: readable,
            };
            session.send(probe, wire::to_line(&frame), expect).await
        }
        Step::Notification { method, known } => {
            let params = (*method == "notifications/cancelled")
                .then(|| json!({"requestId": "mcp-chaos-never-sent", "reason": "mcp-chaos probe"}));
            let probe = Probe::Notification {
                method: (*method).to_owned(),
                known: *known,
            };
            session.notify(probe, method, params).await
        }
        Step::UnknownTool => {
            let probe = Probe::UnknownTool {
                name: UNKNOWN_TOOL.into(),
            };
            session.call_tool(probe, UNKNOWN_TOOL, &json!({})).await
        }
        Step::InvalidCallParams(kind) => {
            let probe = Probe::InvalidCallParams {
                what: kind.describe(),
            };
            let tool = first_tool.unwrap_or(UNKNOWN_TOOL);
            session
                .request(probe, "tools/call", kind.params(tool))
                .await
        }
        Step::Batch => {
            let (a, b) = (session.next_id(), session.next_id());
            let frame = json!([
                wire::request(&a, "ping", None),
                wire::request(&b, "ping", None)
            ]);
            let defined = session.version().rules().batches;
            let probe = Probe::Batch {
                ids: vec![a, b],
                defined,
            };
            session
                .send(probe, wire::to_line(&frame), Expect::Fenced)
                .await
        }
        Step::CallTool { tool, arguments } => {
            let probe = Probe::ToolCall {
                tool: tool.clone(),
                arguments: arguments.clone(),
            };
            session.call_tool(probe, tool, arguments).await
        }
    }
}
