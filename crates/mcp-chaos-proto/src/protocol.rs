//! MCP protocol versions and the per-version rule table.
//!
//! Every protocol rule mcp-chaos judges by is written once, here, in [`Rules`], and named by the
//! spec section it comes from. Invariants never compare version strings themselves: they ask
//! [`ProtocolVersion::rules`]. The facts come from the specification repository
//! (`modelcontextprotocol/modelcontextprotocol`, `docs/specification/<version>/` and
//! `schema/<version>/schema.ts`), published at <https://modelcontextprotocol.io/specification>.

use std::fmt;
use std::str::FromStr;

/// The eight log levels (RFC 5424 severities), least severe first: the
/// values of `LoggingLevel` in every schema version (server/utilities/logging).
pub const LOG_LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

/// A released MCP protocol version, oldest first (so `<` means "older than").
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ProtocolVersion {
    /// 2024-11-05: the first release (HTTP+SSE transport, draft-07 schemas).
    V2024_11_05,
    /// 2025-03-26: Streamable HTTP, JSON-RPC batches, tool annotations.
    V2025_03_26,
    /// 2025-06-18: structured tool output (`outputSchema`/`structuredContent`), elicitation,
    /// batches removed, `MCP-Protocol-Version` header.
    V2025_06_18,
    /// 2025-11-25: input validation errors become tool execution errors (SEP-1303), JSON Schema
    /// 2020-12 as the default dialect (SEP-1613), 403 for a bad `Origin`.
    V2025_11_25,
    /// 2026-07-28: stateless; no `initialize`, no `ping`; `server/discover`; `_meta` protocol
    /// version on every request.
    V2026_07_28,
}

impl ProtocolVersion {
    /// Every version mcp-chaos speaks, oldest first.
    pub const ALL: [ProtocolVersion; 5] = [
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2026_07_28,
    ];

    /// The newest version that still has the `initialize` handshake.
    pub const LATEST_WITH_INITIALIZE: ProtocolVersion = ProtocolVersion::V2025_11_25;

    /// The version string used on the wire, e.g. `"2025-11-25"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ProtocolVersion::V2024_11_05 => "2024-11-05",
            ProtocolVersion::V2025_03_26 => "2025-03-26",
            ProtocolVersion::V2025_06_18 => "2025-06-18",
            ProtocolVersion::V2025_11_25 => "2025-11-25",
            ProtocolVersion::V2026_07_28 => "2026-07-28",
        }
    }

    /// The rules of this version.
    pub fn rules(self) -> &'static Rules {
        match self {
            ProtocolVersion::V2024_11_05 => &RULES[0],
            ProtocolVersion::V2025_03_26 => &RULES[1],
            ProtocolVersion::V2025_06_18 => &RULES[2],
            ProtocolVersion::V2025_11_25 => &RULES[3],
            ProtocolVersion::V2026_07_28 => &RULES[4],
        }
    }

    /// A link to a page of this version's specification, e.g.
    /// `spec("server/tools#error-handling")` →
    /// `https://modelcontextprotocol.io/specification/2025-11-25/server/tools#error-handling`.
    pub fn spec(self, page: &str) -> String {
        format!(
            "https://modelcontextprotocol.io/specification/{}/{}",
            self.as_str(),
            page
        )
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error for a version string that is not one of [`ProtocolVersion::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown MCP protocol version {0:?} (known: 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28)"
)]
pub struct UnknownVersion(pub String);

impl FromStr for ProtocolVersion {
    type Err = UnknownVersion;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ProtocolVersion::ALL
            .into_iter()
            .find(|v| v.as_str() == s)
            .ok_or_else(|| UnknownVersion(s.to_owned()))
    }
}

/// Where a tool's input validation failure belongs (`server/tools` §Error Handling).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputValidationChannel {
    /// Up to 2025-06-18 the text lists "Invalid arguments" as a protocol error and "Invalid
    /// input data" as a tool execution error; either channel is accepted.
    Either,
    /// From 2025-11-25 (SEP-1303): input validation errors are tool execution errors
    /// (`isError: true`); a JSON-RPC -32602 is a deviation.
    ToolResult,
}

/// The JSON Schema dialect a tool schema has when it declares no `$schema`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchemaDialect {
    /// Draft-07: the dialect of the 2024-11-05 … 2025-06-18 `schema.json` files.
    Draft07,
    /// 2020-12: the default from 2025-11-25 on (SEP-1613).
    Draft202012,
}

/// What one protocol version requires, in the terms mcp-chaos judges by. One row per version in
/// [`ProtocolVersion::rules`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rules {
    /// The version these rules belong to.
    pub version: ProtocolVersion,
    /// The `initialize` request and `notifications/initialized` exist (`basic/lifecycle`);
    /// false for the stateless 2026-07-28.
    pub handshake: bool,
    /// `ping` exists and MUST be answered promptly with an empty result
    /// (`basic/utilities/ping`); removed in 2026-07-28, where `server/discover` is the probe.
    pub ping: bool,
    /// JSON-RPC batches are part of the protocol and MUST be accepted (2025-03-26 only,
    /// `basic/index` §Batching); elsewhere a batch is only a robustness probe.
    pub batches: bool,
    /// `Tool.outputSchema` and `CallToolResult.structuredContent` exist, and a declared output
    /// schema MUST be honoured (`server/tools` §Output Schema, 2025-06-18 on).
    pub structured_content: bool,
    /// `structuredContent` may be any JSON value rather than an object (SEP-2106, 2026-07-28).
    pub structured_content_any_json: bool,
    /// Where input validation failures belong (`server/tools` §Error Handling).
    pub input_validation: InputValidationChannel,
    /// An error response may omit `id` when the request's id could not be read (the
    /// `JSONRPCErrorResponse` schema of 2025-11-25 on makes `id` optional; earlier schemas
    /// require it, and JSON-RPC 2.0 §5 says `null`).
    pub error_id_may_be_absent: bool,
    /// `elicitation/create` exists (2025-06-18 on).
    pub elicitation: bool,
    /// The dialect of a tool schema without `$schema`.
    pub schema_dialect: SchemaDialect,
    /// Over HTTP, the client sends `MCP-Protocol-Version` after initialization and the server
    /// MUST answer 400 to an invalid one (`basic/transports`, 2025-06-18 on).
    pub http_version_header: bool,
    /// A present but invalid `Origin` MUST get HTTP 403 (2025-11-25 on; earlier: MUST validate).
    pub origin_403: bool,
    /// Over HTTP, `Mcp-Session-Id` sessions exist (2025-03-26 … 2025-11-25).
    pub http_sessions: bool,
    /// Every result MUST carry `resultType` (`Result` in the 2026-07-28 schema: "Servers
    /// implementing this protocol version MUST include this field").
    pub result_type: bool,
    /// `resources/subscribe` and `resources/unsubscribe` exist, behind
    /// `resources.subscribe` (`server/resources` §Subscriptions, up to 2025-11-25; 2026-07-28
    /// replaces them with `subscriptions/listen`).
    pub resource_subscribe: bool,
    /// `logging/setLevel` sets the session's log level (`server/utilities/logging`, up to
    /// 2025-11-25); 2026-07-28 removes it: the level is per request, in
    /// `_meta["io.modelcontextprotocol/logLevel"]`, and a server MUST NOT emit
    /// `notifications/message` for a request without it.
    pub set_level: bool,
}

const fn row(version: ProtocolVersion) -> Rules {
    use ProtocolVersion::*;
    let v = version as u8;
    Rules {
        version,
        handshake: v <= V2025_11_25 as u8,
        ping: v <= V2025_11_25 as u8,
        batches: v == V2025_03_26 as u8,
        structured_content: v >= V2025_06_18 as u8,
        structured_content_any_json: v >= V2026_07_28 as u8,
        input_validation: if v >= V2025_11_25 as u8 {
            InputValidationChannel::ToolResult
        } else {
            InputValidationChannel::Either
        },
        error_id_may_be_absent: v >= V2025_11_25 as u8,
        elicitation: v >= V2025_06_18 as u8,
        schema_dialect: if v >= V2025_11_25 as u8 {
            SchemaDialect::Draft202012
        } else {
            SchemaDialect::Draft07
        },
        http_version_header: v >= V2025_06_18 as u8,
        origin_403: v >= V2025_11_25 as u8,
        http_sessions: v >= V2025_03_26 as u8 && v <= V2025_11_25 as u8,
        result_type: v >= V2026_07_28 as u8,
        resource_subscribe: v <= V2025_11_25 as u8,
        set_level: v <= V2025_11_25 as u8,
    }
}

static RULES: [Rules; 5] = [
    row(ProtocolVersion::V2024_11_05),
    row(ProtocolVersion::V2025_03_26),
    row(ProtocolVersion::V2025_06_18),
    row(ProtocolVersion::V2025_11_25),
    row(ProtocolVersion::V2026_07_28),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_round_trip_and_order() {
        for v in ProtocolVersion::ALL {
            assert_eq!(v.as_str().parse::<ProtocolVersion>().unwrap(), v);
            assert_eq!(v.rules().version, v);
        }
        assert!(ProtocolVersion::V2024_11_05 < ProtocolVersion::V2026_07_28);
        assert!("1999-01-01".parse::<ProtocolVersion>().is_err());
    }

    #[test]
    fn rule_table_matches_the_spec_notes() {
        use ProtocolVersion::*;
        assert!(V2025_03_26.rules().batches);
        assert!(!V2025_06_18.rules().batches && !V2024_11_05.rules().batches);
        assert!(!V2024_11_05.rules().structured_content);
        assert!(V2025_06_18.rules().structured_content);
        assert_eq!(
            V2025_06_18.rules().input_validation,
            InputValidationChannel::Either
        );
        assert_eq!(
            V2025_11_25.rules().input_validation,
            InputValidationChannel::ToolResult
        );
        assert!(V2025_11_25.rules().handshake && V2025_11_25.rules().ping);
        assert!(!V2026_07_28.rules().handshake && !V2026_07_28.rules().ping);
        assert!(!V2024_11_05.rules().http_sessions && V2025_11_25.rules().http_sessions);
        assert_eq!(V2025_06_18.rules().schema_dialect, SchemaDialect::Draft07);
        assert_eq!(
            V2025_11_25.rules().schema_dialect,
            SchemaDialect::Draft202012
        );
    }
}
