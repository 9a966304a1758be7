//! Findings and the invariant catalog: the stable, machine-readable surface of mcp-chaos.
//!
//! Every invariant has a stable code (`MC` + three digits), a kebab-case name, a one-line
//! summary and an explanation (what it means, why it matters to the model on the other side,
//! how to fix it). Codes and names change only on purpose; reports, baselines and SARIF rule
//! ids are keyed by them.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How bad a finding is.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// A deviation from a SHOULD, from descriptive spec text, or from robustness expectations.
    /// Reported; does not fail the run.
    Warning,
    /// A breach of a MUST (or of what JSON-RPC 2.0 requires), or a server that crashed or hung.
    /// Fails the run (exit code 1).
    Violation,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Warning => "warning",
            Severity::Violation => "violation",
        })
    }
}

/// One entry of the invariant catalog.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Invariant {
    /// Stable code, e.g. `MC101`.
    pub code: &'static str,
    /// Stable kebab-case name, e.g. `unknown-tool-not-protocol-error`.
    pub name: &'static str,
    /// One line: what must hold.
    pub summary: &'static str,
    /// Why it matters and how to fix it (several sentences; shown by `mcp-chaos explain`).
    pub explain: &'static str,
    /// The spec page the rule comes from, relative to the version's specification root
    /// (e.g. `server/tools#error-handling`), or an absolute URL.
    pub spec_page: &'static str,
}

macro_rules! catalog {
    ($($ident:ident = $code:literal, $name:literal, $page:literal, $summary:literal, $explain:literal;)*) => {
        $(
            #[doc = concat!("`", $code, "` `", $name, "`: ", $summary)]
            pub const $ident: Invariant = Invariant {
                code: $code,
                name: $name,
                summary: $summary,
                explain: $explain,
                spec_page: $page,
            };
        )*
        /// Every invariant mcp-chaos checks, in code order.
        pub const CATALOG: &[Invariant] = &[$($ident),*];
    };
}

catalog! {
    UNKNOWN_TOOL_NOT_PROTOCOL_ERROR = "MC101", "unknown-tool-not-protocol-error", "server/tools#error-handling",
        "tools/call of an unknown tool is a JSON-RPC error (-32602), not a CallToolResult.",
        "The spec lists unknown tools among protocol errors, and its example answers with -32602. \
         A server that answers with a CallToolResult tells the client the tool ran; answered with \
         isError:false it even reports an empty success. Fix: look the tool up before dispatching \
         and answer {\"code\":-32602,\"message\":\"Unknown tool: NAME\"}. Severity: a warning when \
         the result has isError:true (the spec text is descriptive), a violation when the call \
         claims success.";
    WRONG_ERROR_CODE = "MC102", "wrong-error-code", "basic/index#messages",
        "Protocol errors use the code JSON-RPC 2.0 assigns: -32700, -32600, -32601, -32602.",
        "Every MCP message must follow JSON-RPC 2.0, which assigns -32700 to a frame that is not \
         JSON, -32600 to JSON that is not a valid request, -32601 to an unknown method and -32602 to \
         invalid params. Clients branch on these codes: a -32603 for an unknown method reads as a \
         server crash, and a normal result for an invalid request hides a client bug. A method \
         gated behind a capability the server did not advertise (tools/call to a server without \
         `tools`) is a method it does not have: -32601 is owed there, and -32602 is accepted but never \
         demanded. Fix: validate the envelope before dispatch and map each failure to its code, \
         echoing the request id when it can be read (null otherwise).";
    NO_RESPONSE = "MC103", "no-response", "basic/index#responses",
        "Every request gets exactly one response before its deadline.",
        "A request without a response leaves the client waiting until its own timeout; the model \
         stalls. For requests with a readable id this is a violation. For frames the server could \
         not read (malformed JSON, invalid requests) JSON-RPC 2.0 still asks for an error response \
         with id null; silently dropping them is reported as a warning. Fix: answer every request, \
         on every path, including exceptions.";
    RESPONSE_ID_MISMATCH = "MC104", "response-id-mismatch", "basic/index#responses",
        "A response carries the id of the request it answers, with the same type.",
        "Clients match responses to requests by id. The integer 5 and the string \"5\" are different \
         ids; an answer with a wrong or null id (when the id was readable) is an answer to nothing, \
         and the real request times out. Fix: copy the id from the request unchanged.";
    MALFORMED_RESPONSE = "MC105", "malformed-response", "basic/index#responses",
        "Responses are valid JSON-RPC 2.0 and their results have the shape the schema requires.",
        "A response must carry jsonrpc:\"2.0\", exactly one of result and error, an integer error \
         code and a string message; a CallToolResult must have a content array whose blocks are \
         typed, and isError, if present, must be a boolean. Clients built on a strict SDK reject \
         anything else and the model sees a transport failure. Fix: build responses from the SDK's \
         types, or validate them against the protocol version's schema.json in your tests.";
    REPLY_TO_NOTIFICATION = "MC106", "reply-to-notification", "basic/index#notifications",
        "Notifications, known or unknown, get no reply.",
        "A notification has no id and the receiver MUST NOT reply. A reply to one is a response \
         to no request: clients log it as a protocol error or crash on it. Fix: dispatch messages \
         without an id to notification handlers and drop unknown ones silently.";
    STDOUT_NOT_PROTOCOL = "MC107", "stdout-not-protocol", "basic/transports#stdio",
        "A stdio server writes nothing but MCP messages to stdout.",
        "On stdio, stdout is the protocol channel: the server MUST NOT write anything to it that \
         is not a valid MCP message. A banner, a debug print or a progress bar on stdout corrupts \
         the stream; clients drop the line or the whole connection. Fix: log to stderr (any \
         logging, from 2025-11-25 on) and keep print statements away from stdout.";
    SERVER_DIED = "MC108", "server-died", "basic/lifecycle#shutdown",
        "The server survives every probe.",
        "A server process that exits on a malformed frame, an odd argument or a failing upstream \
         takes every session with it; the model sees every later tool fail. The finding names the \
         probe that killed it; mcp-chaos restarts the server and carries on. Fix: catch errors per \
         request and answer them; never let one request end the process.";
    NOT_ALIVE = "MC109", "not-alive", "basic/utilities/ping",
        "After every probe the server still answers ping within the deadline.",
        "The receiver of a ping MUST respond promptly. A server that is still running but no \
         longer answers is worse than a crash: nothing restarts it. The finding names the probe \
         after which it stopped answering. Fix: never block the message loop; time out upstream \
         calls; run tool work off the loop that reads stdin.";
    INITIALIZE_VERSION = "MC110", "initialize-version", "basic/lifecycle#version-negotiation",
        "initialize answers with a version the server speaks, echoing the client's when supported.",
        "If the server supports the requested protocol version it MUST answer with the same \
         version; otherwise it MUST answer with another version it supports (a result, not an \
         error). Echoing a version it cannot speak (for example an unknown date string) makes the \
         client believe in a protocol the server does not implement. Fix: keep a list of \
         supported versions and answer with the requested one or your latest.";
    OVERSIZE_FRAME = "MC111", "oversize-frame", "basic/transports#stdio",
        "No single frame exceeds the size limit (default 16 MiB).",
        "A frame larger than any client will buffer is dropped or kills the client with an \
         out-of-memory error; the model never sees the result. Fix: page or truncate large \
         results (resource links, pagination) instead of sending them inline.";
    SERVER_WEDGED = "MC114", "server-wedged", "basic/lifecycle#timeouts",
        "A server that stops answering recovers after a restart.",
        "A server that answers the handshake and then nothing (silence, answers with ids it was \
         never sent, unreadable frames, a closed stdout, an HTTP response that never ends) makes \
         every request wait out the client's timeout; the model stalls on every call. mcp-chaos \
         reports it when a request and the liveness ping after it went unanswered and a fresh \
         restart wedged the same way at its first ping; the finding names the request, and the \
         rest of the campaign is skipped instead of waiting a deadline per probe. A server that \
         is slow once, or recovers after the restart, gets not-alive instead. Fix: answer every \
         request after initialize on the same channel, with the request's own id, in UTF-8 \
         JSON; never close stdout while the process runs.";
    WIRE_ANSWER = "MC118", "wire-answer", "basic/index#messages",
        "Every frame gets the answer JSON-RPC owes it: one response per request, none per notification, one array per batch.",
        "The wire phase sends frames from the generator of mcp_chaos::fuzz (messages of the negotiated \
         version and near-misses: invalid UTF-8, deep nesting, odd ids, truncation) and judges each answer: one response per request with \
         its id, none per notification, one error (id null when unreadable) per invalid frame, \
         one array per batch. A request left unanswered is no-response (a warning, one per \
         class, for an unreadable or invalid frame, a batch where undefined, an undefined \
         member, or nesting past 64 levels, which RFC 8259 lets a parser refuse), a wrong id \
         response-id-mismatch, a reply to a notification reply-to-notification; this covers \
         the rest: two answers to one request, a batch answered element by element, an answer \
         where only an error is owed (a success for an invalid request is a warning). A frame \
         that kills or wedges the server is server-died, not-alive or server-wedged. Failing \
         frames are shrunk and replayable. Fix: reject what is not UTF-8 JSON with -32700, \
         validate the envelope, answer each request once.";
    NOTIFICATION_FLOOD = "MC112", "notification-flood", "server/utilities/logging#implementation-considerations",
        "A server does not flood the client with notifications (log messages SHOULD be rate-limited).",
        "Servers SHOULD rate-limit log messages (notifications/message), and progress \
         notifications SHOULD be rate-limited too. A server that sends thousands a second buries \
         the answers the client waits for, fills its log and costs it memory and CPU; a client \
         that cannot keep up drops the connection. mcp-chaos calls it a flood from 2000 \
         notifications in 2 s that are also 100 times the requests it sent in that time (a \
         server that logs a few lines per call is never one), keeps reading, keeps 256 messages \
         per exchange and counts the rest. Fix: log at the level the client set with \
         logging/setLevel, coalesce repeated messages, and cap the rate.";
    SERVER_REQUEST_FLOOD = "MC113", "server-request-flood", "client/sampling#security-considerations",
        "A server does not flood the client with requests (sampling, roots, elicitation, ping).",
        "A request to the client needs a reason: sampling happens inside a tool call or another \
         server feature, roots are asked once and cached (servers SHOULD cache root information), \
         and clients SHOULD rate-limit sampling. A server that sends requests in a loop keeps the \
         client busy answering and, on stdio, can deadlock a client that stops reading to write \
         its answers. mcp-chaos calls it a flood from 200 requests in 2 s that are also 20 times \
         the requests it sent in that time; it answers 200 per 2 s and leaves the rest \
         unanswered, with counts. Fix: ask for roots once and on \
         notifications/roots/list_changed, and send sampling or elicitation only while handling \
         a request that needs it.";
    SERVED_BEFORE_INITIALIZE = "MC115", "served-before-initialize", "basic/lifecycle#initialization",
        "A request sent before initialize is not served as if the session were initialized.",
        "The initialization phase MUST be the first interaction, and the client SHOULD NOT send \
         requests other than ping before initialize is answered (2024-11-05 to 2025-11-25). \
         mcp-chaos starts the server once more (stdio) and sends tools/list before initialize: \
         a normal result means the server serves a client that negotiated no version and \
         declared no capabilities, and hides a client that skips the handshake. The spec does \
         not say how a server must react, so this is a warning; an error or no answer is fine, \
         and ping before initialize is never reported. tools/list between the initialize \
         response and notifications/initialized, and a second initialize, are only checked for \
         the server surviving them (served or refused: both fine). Not over HTTP (a request \
         without a session id is http-status's) nor in 2026-07-28, which has no initialize (a \
         server that speaks both eras is judged under 2025-11-25). Fix: until initialize is \
         answered, answer requests other than ping with an error such as -32600 \"server not \
         initialized\".";
    STDIN_EOF_IGNORED = "MC117", "stdin-eof-ignored", "basic/lifecycle#shutdown",
        "A stdio server exits promptly once its stdin is closed.",
        "Closing the server's input is how a client ends a stdio session: the client closes \
         stdin, waits for the server to exit, and only then escalates to SIGTERM and SIGKILL \
         (basic/lifecycle#shutdown); from 2026-07-28 the stdio transport says servers SHOULD exit \
         promptly when stdin is closed or reads return end-of-file, the primary and only portable \
         graceful-shutdown signal. A server that keeps running makes every client wait out its \
         grace and then kill it, so its own cleanup (flushing, closing files, ending child \
         processes) never runs on the graceful path. mcp-chaos closes stdin and waits 2 s; a \
         server still running then is reported (a warning: it is a SHOULD), and later sessions of \
         the run are killed at once instead of waited for again. Fix: end the process when the \
         stdin reader sees end-of-file (in Node, also stop timers and intervals that keep the \
         event loop alive, or call process.exit on the stream's end event).";
    CONCURRENT_REQUESTS_MIXED = "MC119", "concurrent-requests-mixed", "basic/index#responses",
        "A server with several requests in flight answers each with its own id.",
        "Responses MUST include the same ID as the request they correspond to (basic/index \
         §Responses), and a client may have several requests outstanding at once: JSON-RPC ids \
         exist so that answers can be matched whatever order they come in. mcp-chaos keeps up to \
         --in-flight tools/call requests outstanding in the generated phase; an answer carrying \
         the id of a request already answered means the server mixed up two requests in flight \
         (a shared current-request variable, a response written for the wrong call). It is \
         reported once, and the rest of the phase runs one request at a time, so that nothing \
         false follows from the mix-up. Fix: keep each request's id with its own handler (no \
         shared state between calls in flight) and write its response with that id.";
    CONCURRENT_REQUESTS_DROPPED = "MC120", "concurrent-requests-dropped", "basic/index#responses",
        "A request sent while others are in flight is answered as it would be alone.",
        "A client may have several requests outstanding at once (JSON-RPC ids exist to match \
         the answers), and MCP clients do: a model calls tools in parallel, and progress and \
         cancellation presuppose a server that keeps reading while a call runs. mcp-chaos keeps \
         up to --in-flight tools/call requests outstanding in the generated phase; when a call \
         sent while others were in flight gets no response within its deadline, and reported \
         no progress, it is sent again alone on a fresh server. Answered then, the server dropped or stalled it because \
         of the others: it reads one request at a time and blocks on it, or loses a request \
         that arrives while another is pending. A warning (what a server owes a burst of \
         requests is not a MUST), reported once; the rest of the phase runs one request at a \
         time, so that nothing false follows from concurrency. Fix: handle each request in its \
         own task (async handlers, a worker per call), never block the read loop on a call's \
         work, and keep every pending request until it is answered.";
    BUSINESS_FAILURE_AS_PROTOCOL_ERROR = "MC201", "business-failure-as-protocol-error", "server/tools#error-handling",
        "A tool whose upstream failed answers with a CallToolResult (isError: true), not a JSON-RPC error.",
        "API failures and business logic errors are tool execution errors: they belong inside the \
         result with isError: true, so the model can see what happened and correct itself. As a \
         JSON-RPC error the failure goes to the client, which may not show it to the model at all, \
         and the model stalls or guesses. Fix: catch upstream errors in the tool handler and return \
         {\"content\":[{\"type\":\"text\",\"text\":\"...\"}],\"isError\":true}.";
    ERROR_MASKED_AS_SUCCESS = "MC202", "error-masked-as-success", "server/tools#error-handling",
        "A failed operation never comes back as a success, an empty result or a blank one.",
        "When every upstream request of a call failed, a result without isError: true tells the model \
         the call worked; an empty or blank success reads as 'there is no data', which the model then \
         reports as truth. A server that retried and then succeeded is fine (the upstream journal \
         shows it). A success whose text reads like a failure is a warning. The same holds for \
         resources/read and prompts/get whose handlers call the upstream: an empty contents or \
         messages array under a failed upstream is a masked error (they answer a JSON-RPC error \
         instead). Fix: set isError: true whenever the operation did not do what was asked, and \
         say what failed.";
    UNACTIONABLE_ERROR = "MC203", "unactionable-error", "server/tools#error-handling",
        "An error result says what failed and whether trying again can help.",
        "A tool error is for the model to act on. 'Error: failed' gives it nothing; raw exception \
         text ('NoneType' object has no attribute 'get', ENOENT, a bare path) was written for a \
         programmer and tells the model neither what was being done nor what to do next; a rate \
         limit or a timeout that does not say it can be retried makes the model give up; a 404 or \
         403 that invites a retry makes it loop. Fix: catch the exception in the tool handler and \
         name the operation, the argument or resource, the cause and the constraint, and say \
         whether to retry (and when: Retry-After) or what to change (the id, the permissions).";
    LEAKED_INTERNALS = "MC204", "leaked-internals", "server/tools#security-considerations",
        "Nothing the model reads carries stack traces, internal paths, SQL, private addresses, credentials, secrets or raw upstream bodies.",
        "Tool results, error messages and log notifications go to the model and often to the user. \
         A stack trace, a SQL statement, an internal hostname or a credential there helps an attacker \
         and confuses the model; a canary planted in the fake upstream's error body shows the server \
         passed the raw upstream response through. Servers MUST sanitize tool outputs, and log \
         messages MUST NOT contain secrets or internal details. A path derived from the request (the \
         caller's a.py answered as /srv/sandbox/a.py) is the caller's own value, not an internal; a \
         dependency path (site-packages, node_modules) always is one. Fix: log details to stderr and \
         return a short message of your own.";
    STRUCTURED_CONTENT_SCHEMA = "MC205", "structured-content-schema", "server/tools#output-schema",
        "When a tool declares outputSchema, a successful result carries structuredContent that validates.",
        "Servers MUST provide structured results that conform to the declared output schema; clients \
         SHOULD validate them and reject the result when they do not. A missing or invalid \
         structuredContent breaks every client that relies on the schema. With isError: true the spec \
         does not say (issue #569); an invalid payload there is only a warning, and so is an error \
         in which the server's SDK reports that the tool's own result failed the schema (\"Output \
         validation error: outputSchema defined but no structured output returned\"). Fix: build \
         structuredContent from the same type the schema is generated from, and test it against \
         the schema.";
    DEADLINE_EXCEEDED = "MC206", "deadline-exceeded", "basic/lifecycle#timeouts",
        "When the upstream hangs, the server still answers the call within the deadline.",
        "A tool call whose upstream never answers must not hang the call: the client times out, \
         the model sees nothing, and the server may pile up stuck work. Fix: put a timeout on every \
         upstream call, shorter than your clients' (mcp-chaos uses --timeout-ms), and answer \
         isError: true saying the upstream timed out and the call can be retried.";
    VALID_ARGS_REJECTED = "MC301", "valid-args-rejected", "server/tools#tool",
        "Arguments that satisfy the tool's inputSchema are not rejected as invalid.",
        "The inputSchema is the contract the model writes arguments against. A server that answers \
         schema-valid arguments with -32602 or an error blaming the arguments has a schema that \
         says less than its code checks: the model cannot know what to send and keeps failing. \
         Text about the tool's output (\"Output validation error: ...\") does not blame the \
         arguments: that is structured-content-schema (MC205). Fix: put every constraint the code enforces into the schema (minLength, pattern, enum, \
         bounds), or accept what the schema admits.";
    INVALID_ARGS_ACCEPTED = "MC302", "invalid-args-accepted", "server/tools#security-considerations",
        "Arguments that break the tool's inputSchema are not accepted as a success.",
        "Servers MUST validate all tool inputs. A call that breaks the schema (a missing required \
         property, a value out of range, a wrong type) and still succeeds shows the server does not \
         validate: garbage reaches the business logic, and the model learns that its mistakes work. \
         Fix: validate arguments against the inputSchema before running the tool and answer \
         isError: true naming the argument and the constraint.";
    INVALID_ARGS_WRONG_CHANNEL = "MC303", "invalid-args-wrong-channel", "server/tools#error-handling",
        "From 2025-11-25, input validation failures are tool execution errors (isError: true).",
        "SEP-1303 moved input validation errors into the result so the model can read them and \
         correct its arguments; a JSON-RPC -32602 goes to the client, which may not show it to the \
         model. Up to 2025-06-18 either channel is accepted (a protocol error should then be \
         -32602). Either way the text should name the argument and the constraint. Fix: return \
         {\"isError\": true, \"content\": [{\"type\": \"text\", \"text\": \"city: must not be empty\"}]}.";
    CRASH_ON_INPUT = "MC304", "crash-on-input", "server/tools#security-considerations",
        "No generated input (valid, invalid, or hostile) makes the server crash or hang.",
        "A server that dies or stops answering on one argument value (a NUL byte, a very long \
         string, an emoji, a huge number) is one model mistake away from an outage. The finding \
         carries the input shrunk to a minimal value and a replay file. Fix: validate and bound \
         inputs; never let a tool exception escape the request.";
    UNSATISFIABLE_INPUT_SCHEMA = "MC305", "unsatisfiable-input-schema", "server/tools#tool",
        "A tool's inputSchema admits at least one value (and only loopback-safe ones are forced).",
        "A schema no value satisfies (minimum above maximum, a required property that is also \
         forbidden, contradictory allOf branches) makes the tool impossible to call correctly; \
         the model will keep trying. Fix: correct the schema; test it with `mcp-chaos gen`.";
    HTTP_STATUS = "MC401", "http-status", "basic/transports#streamable-http",
        "Streamable HTTP answers with the status the version requires.",
        "Clients act on HTTP statuses before they read a body: 202 with no body for an accepted \
         notification or response; 400 for a missing or unsupported MCP-Protocol-Version header; \
         404 for an unknown or ended session (the client then starts a new one); 405 for an \
         unsupported GET or DELETE; in 2026-07-28, 404 with -32601 for an unknown method and 400 \
         with -32020/-32021/-32022 for header mismatches, missing capabilities and unsupported \
         versions. Any other status sends clients down the wrong recovery path. Fix: map each \
         case to its status in the HTTP layer of your server.";
    HTTP_CONTENT_TYPE = "MC402", "http-content-type", "basic/transports#sending-messages-to-the-server",
        "A response to a request is application/json or text/event-stream.",
        "The client MUST support both content types and nothing else; a body sent as text/plain or \
         text/html is not read as MCP and the request looks unanswered. Fix: set Content-Type \
         explicitly on every response.";
    HTTP_ORIGIN_NOT_VALIDATED = "MC403", "http-origin-not-validated", "basic/transports#security-warning",
        "A request with a foreign Origin is refused (403 from 2025-11-25 on).",
        "Servers MUST validate the Origin header on every request to stop DNS rebinding: without \
         it, any web page a user visits can drive a local MCP server. From 2025-11-25 a present \
         but invalid Origin MUST get 403. Fix: allow only your own origins (and localhost when \
         bound to loopback) and answer others with 403.";
    SESSION_ID_FORMAT = "MC404", "session-id-format", "basic/transports#session-management",
        "An Mcp-Session-Id holds only visible ASCII (0x21-0x7E).",
        "The session id travels in an HTTP header on every request; spaces, control characters \
         or non-ASCII bytes break clients and proxies, and the spec requires visible ASCII (and a \
         cryptographically secure value). Fix: use a UUID or a base64url token.";
    SSE_MALFORMED = "MC405", "sse-malformed", "basic/transports#streamable-http",
        "An SSE response is a well-formed event stream that a conforming client reads completely.",
        "A stream that ends inside an event, or that is not UTF-8, loses messages silently: a \
         conforming EventSource parser discards the unterminated event, so the response in it \
         never reaches the client. Fix: end every event with a blank line, flush before closing \
         the stream, and use an SSE library.";
    UNRESPONSIVE_DURING_CALL = "MC501", "unresponsive-during-call", "basic/utilities/ping",
        "While a tool call is in flight, ping (or server/discover) is still answered promptly.",
        "A server whose message loop waits for a tool to finish cannot answer anything else: pings \
         time out, cancellations are not read, and clients conclude it is dead. The ping receiver \
         MUST respond promptly. Fix: run tool work concurrently (spawn a task per call) and keep \
         the loop that reads requests free.";
    RESPONSE_AFTER_CANCEL = "MC502", "response-after-cancel", "basic/utilities/cancellation",
        "A cancelled request gets no response (and is not answered with a malformed error).",
        "After notifications/cancelled the receiver SHOULD stop work and not respond; in \
         2026-07-28 servers MUST NOT send further messages for a cancelled request. A late answer \
         is wasted work and confuses clients that have already moved on. An error whose code is 0 \
         or not an integer is no JSON-RPC error at all. Fix: track in-flight requests by id and \
         abort them on cancel.";
    EXPECTATION_FAILED = "MC601", "expectation-failed", "server/tools#error-handling",
        "A scenario step's expect (is_error, channel, error_code, content, structuredContent) holds.",
        "Scenario files state what the server owes for a given call: a missing file or an upstream \
         404 must come back as a CallToolResult with isError:true and an actionable text, a bad \
         argument as -32602 or isError:true depending on the protocol version. A failed \
         expectation means the server answered something else, and the model reading it will \
         stall or report a failure as a result. Fix the server, or correct the expectation if the \
         scenario asked for the wrong thing. The message names the step and what was expected.";
    RESOURCE_NOT_FOUND = "MC701", "resource-not-found", "server/resources#error-handling",
        "resources/read of an unknown URI is a JSON-RPC error: -32002 up to 2025-11-25, -32602 in 2026-07-28.",
        "A client reading a resource that does not exist must learn that it does not exist, by a \
         code it can branch on. Up to 2025-11-25 servers SHOULD answer -32002 (resource not found; \
         a warning otherwise). In 2026-07-28 servers MUST answer -32602 and MUST NOT emit the \
         retired -32002 (a violation either way). An internal error (-32603) for a missing \
         resource reads as a server crash and invites retries that cannot help. Fix: look the URI \
         up (listed resources, then templates) before reading and answer \
         {\"code\": -32002 or -32602, \"message\": \"Resource not found\", \"data\": {\"uri\": URI}}.";
    EMPTY_RESOURCE_CONTENTS = "MC702", "empty-resource-contents", "server/resources#error-handling",
        "resources/read of an unknown URI never succeeds with an empty contents array.",
        "An empty contents array is ambiguous: the resource may exist and be empty, or not exist at \
         all; the model then reasons from nothing as if it were data. 2026-07-28 says servers MUST \
         NOT return an empty contents array for a non-existent resource (a violation); earlier \
         versions ask for a JSON-RPC error (a warning). Fix: answer a URI that names no resource \
         with the resource-not-found error of the version.";
    PAGINATION_CURSOR = "MC703", "pagination-cursor", "server/utilities/pagination#error-handling",
        "List cursors end, and an invalid cursor is answered with -32602.",
        "resources/list, resources/templates/list and prompts/list page through opaque cursors; a \
         client follows nextCursor until there is none. A nextCursor that leads back to a page \
         already served makes the list endless: a client that follows cursors, as clients SHOULD, \
         never finishes (a violation; mcp-chaos stops at the repeated cursor, or after 50 pages \
         without a finding). Invalid cursors SHOULD get -32602 (a warning otherwise; a server \
         that never paginates may ignore one). Fix: make cursors encode a position that only \
         moves forward, and validate a cursor before using it.";
    PROMPT_ARGUMENT_ERRORS = "MC704", "prompt-argument-errors", "server/prompts#error-handling",
        "prompts/get (and completion/complete) of an unknown prompt, or without a required argument, is a -32602 error.",
        "Servers SHOULD answer an invalid prompt name and a missing required argument with -32602 \
         (invalid params), and SHOULD validate prompt arguments before processing. A -32603 or a \
         stack trace tells the client the server broke, not that its request was wrong; a \
         rendered prompt with the argument missing sends the model a message with a hole in it. \
         The same holds for a completion/complete whose ref names no prompt. Fix: check the name \
         and every required argument first and answer {\"code\": -32602, \"message\": \"prompt \
         translate needs the argument language\"}. Severity: a warning (SHOULD).";
    LOG_LEVEL_ERRORS = "MC705", "log-level-errors", "server/utilities/logging#error-handling",
        "logging/setLevel accepts the eight syslog levels and answers any other level with -32602.",
        "A server that advertises logging lets the client set the minimum level with \
         logging/setLevel (debug, info, notice, warning, error, critical, alert, emergency). An \
         invalid level SHOULD get -32602; accepting it silently leaves the client believing a \
         level it never set, and rejecting a valid one breaks every client that sets it. \
         2026-07-28 removes logging/setLevel: the level travels in each request's \
         _meta[\"io.modelcontextprotocol/logLevel\"], and a server MUST NOT send \
         notifications/message for a request without it (a violation). Fix: validate the level \
         against the eight names; in 2026-07-28 log only for requests that ask. Severity: a \
         warning (SHOULD), a violation for the 2026-07-28 MUST NOT.";
    CAPABILITY_GATING = "MC706", "capability-gating", "basic/lifecycle#capability-negotiation",
        "A request for a feature the server did not advertise is answered with -32601 (method not found).",
        "Capabilities say what a server offers; a method behind a capability the server did not \
         advertise (prompts/list without prompts, completion/complete without completions) is a \
         method it does not implement, and the spec documents -32601 for it (MethodNotFoundError \
         in the 2026-07-28 schema; \"Capability not supported\" on the completion page). Clients \
         probe optional features this way and branch on the code; a -32603 reads as a crash. \
         Fix: answer methods of unadvertised features like unknown methods. The other way \
         round, a server advertising resources.subscribe (up to 2025-11-25) serves \
         resources/subscribe and unsubscribe of its own resources. Severity: a warning (the \
         text gives no MUST).";
}

/// Looks an invariant up by code (`MC101`) or name (`wrong-error-code`), case-insensitively.
pub fn lookup(code_or_name: &str) -> Option<&'static Invariant> {
    CATALOG.iter().find(|i| {
        i.code.eq_ignore_ascii_case(code_or_name) || i.name.eq_ignore_ascii_case(code_or_name)
    })
}

/// One finding: an invariant that did not hold on one exchange. This is the JSON shape of a
/// finding in `--report-json` (field names and meanings are stable).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Finding {
    /// The invariant's code, e.g. `MC102`.
    pub code: String,
    /// The invariant's name, e.g. `wrong-error-code`.
    pub invariant: String,
    /// `violation` or `warning`.
    pub severity: Severity,
    /// The protocol version the exchange was judged under.
    pub protocol_version: String,
    /// The tool concerned, if any.
    pub tool: Option<String>,
    /// What went wrong, in one or two sentences.
    pub message: String,
    /// A link to the spec section the rule comes from.
    pub spec: String,
    /// The frame sent (excerpt), if the finding concerns one.
    pub request: Option<String>,
    /// The frame received (excerpt), if any.
    pub response: Option<String>,
    /// The fault injected upstream during the exchange, if any.
    pub fault: Option<Value>,
    /// The probe that produced the exchange, e.g. `malformed JSON`.
    pub probe: String,
    /// The replay file of this finding (generated cases, with `--replays DIR`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<String>,
    /// How many times this finding was seen in the run (identical findings are reported once).
    #[serde(default = "one")]
    pub occurrences: u64,
    /// Strings that must be redacted from the whole report (secrets and credentials this
    /// finding uncovered). Never serialized.
    #[serde(skip)]
    pub redact: Vec<String>,
    /// What makes this finding distinct within a run, when its message carries details that
    /// vary between occurrences (an excerpt, a fault name); see [`Finding::dedupe_key`].
    #[serde(skip)]
    pub group: Option<String>,
}

fn one() -> u64 {
    1
}

impl Finding {
    /// A finding of `invariant` at `severity` under `version`, with `message`; the spec link
    /// is built from the invariant's page.
    pub fn new(
        invariant: &Invariant,
        severity: Severity,
        version: mcp_chaos_proto::protocol::ProtocolVersion,
        message: impl Into<String>,
    ) -> Finding {
        let spec = if invariant.spec_page.starts_with("http") {
            invariant.spec_page.to_owned()
        } else {
            version.spec(invariant.spec_page)
        };
        Finding {
            code: invariant.code.to_owned(),
            invariant: invariant.name.to_owned(),
            severity,
            protocol_version: version.as_str().to_owned(),
            tool: None,
            message: message.into(),
            spec,
            request: None,
            response: None,
            fault: None,
            probe: String::new(),
            replay: None,
            occurrences: 1,
            redact: Vec::new(),
            group: None,
        }
    }

    /// The key under which identical findings are merged in a run: noise on stdout and
    /// oversize frames are one finding per run however often they happen; a finding with a
    /// [`Finding::group`] is distinct per group; anything else per tool, probe and message.
    pub fn dedupe_key(&self) -> String {
        if self.code == STDOUT_NOT_PROTOCOL.code || self.code == OVERSIZE_FRAME.code {
            format!("{}|{}", self.code, self.severity)
        } else if let Some(group) = &self.group {
            format!("{}|{}|{group}", self.code, self.severity)
        } else {
            format!(
                "{}|{}|{}|{}|{}",
                self.code,
                self.severity,
                self.tool.as_deref().unwrap_or(""),
                self.probe,
                self.message
            )
        }
    }

    /// Sets the spec link to a specific page of the version's specification.
    pub fn with_spec_page(mut self, page: &str) -> Finding {
        if let Ok(v) = self
            .protocol_version
            .parse::<mcp_chaos_proto::protocol::ProtocolVersion>()
        {
            self.spec = v.spec(page);
        }
        self
    }
}

/// The stable fingerprint of a finding: 16 hex digits of a 64-bit FNV-1a hash of its code,
/// severity, tool, probe label and upstream fault name (with its scope, when the fault hit
/// only some requests), none of which depends on timing, ports, paths or the message's
/// excerpts.
pub fn fingerprint(f: &Finding) -> String {
    let name = f
        .fault
        .as_ref()
        .and_then(|v| v.get("name"))
        .and_then(serde_json::Value::as_str)
        .unwrap_or("");
    let fault = match f
        .fault
        .as_ref()
        .and_then(|v| v.get("scope"))
        .and_then(serde_json::Value::as_str)
    {
        Some(scope) => format!("{name} on {scope}"),
        None => name.to_owned(),
    };
    let key = format!(
        "{}\u{1f}{}\u{1f}{}\u{1f}{}\u{1f}{}",
        f.code,
        f.severity,
        f.tool.as_deref().unwrap_or(""),
        f.probe,
        fault
    );
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in key.bytes() {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_and_names_are_unique_and_well_formed() {
        let mut codes = std::collections::HashSet::new();
        let mut names = std::collections::HashSet::new();
        for i in CATALOG {
            assert!(codes.insert(i.code), "duplicate code {}", i.code);
            assert!(names.insert(i.name), "duplicate name {}", i.name);
            assert!(i.code.len() == 5 && i.code.starts_with("MC"), "{}", i.code);
            assert!(
                i.name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
                "{}",
                i.name
            );
            assert!(!i.explain.is_empty() && !i.summary.is_empty());
        }
        assert_eq!(lookup("mc102").map(|i| i.name), Some("wrong-error-code"));
        assert_eq!(lookup("no-response").map(|i| i.code), Some("MC103"));
    }
}
