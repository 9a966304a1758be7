//! The JSON-RPC 2.0 wire layer: a total parser and classifier for frames, plus builders for the
//! frames mcp-chaos sends.
//!
//! [`parse`] takes the raw bytes of one frame (one line on stdio, one HTTP body or SSE `data`)
//! and either classifies it as a [`Message`] (request, notification, success response, error
//! response, or batch) or says precisely what is wrong with it as a [`WireError`]. It never
//! panics, on any input: this is the parser `cargo fuzz` targets.
//!
//! Every classified message keeps its raw [`serde_json::Value`], so the oracle judges what the
//! server really sent rather than what a lenient typed model would make of it. Request ids are
//! strings or integers, as MCP's `RequestId` requires (JSON-RPC 2.0 §4 also allows fractional
//! numbers and null; MCP does not, so those are reported as [`WireError::IdWrongType`] and
//! [`WireError::NullRequestId`]).
//!
//! References: JSON-RPC 2.0 specification §4 (request), §4.1 (notification), §5 (response),
//! §5.1 (error object), §6 (batch); MCP `basic/index` §Messages for every protocol version.

pub mod answer;

use std::fmt;

use serde_json::{Map, Number, Value};

/// JSON-RPC 2.0 parse error: the frame is not valid JSON.
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC 2.0 invalid request: the JSON is not a valid request object.
pub const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC 2.0 method not found (§5.1): the method does not exist or is not available.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// JSON-RPC 2.0 invalid params (§5.1): the method's parameters are invalid.
pub const INVALID_PARAMS: i64 = -32602;
/// JSON-RPC 2.0 internal error (§5.1): the server failed internally.
pub const INTERNAL_ERROR: i64 = -32603;

/// The kind of a JSON value, used to say what was found where something else was expected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JsonKind {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool,
    /// An integer that fits `i64` or `u64`.
    Integer,
    /// A number with a fractional part or exponent that is not an integer.
    Float,
    /// A string.
    String,
    /// An array.
    Array,
    /// An object.
    Object,
}

impl JsonKind {
    /// The kind of `value`.
    pub fn of(value: &Value) -> JsonKind {
        match value {
            Value::Null => JsonKind::Null,
            Value::Bool(_) => JsonKind::Bool,
            Value::Number(n) if n.is_i64() || n.is_u64() => JsonKind::Integer,
            Value::Number(_) => JsonKind::Float,
            Value::String(_) => JsonKind::String,
            Value::Array(_) => JsonKind::Array,
            Value::Object(_) => JsonKind::Object,
        }
    }
}

impl fmt::Display for JsonKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            JsonKind::Null => "null",
            JsonKind::Bool => "a boolean",
            JsonKind::Integer => "an integer",
            JsonKind::Float => "a fractional number",
            JsonKind::String => "a string",
            JsonKind::Array => "an array",
            JsonKind::Object => "an object",
        })
    }
}

/// A JSON-RPC request id as MCP allows it: a string or an integer (`RequestId` in every MCP
/// schema). Equality is exact: the integer `5` and the string `"5"` are different ids.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RequestId {
    /// An integer id (`i64` or `u64` range).
    Number(IdNumber),
    /// A string id.
    String(String),
}

/// An integer request id, kept in the form it was written (`u64` above `i64::MAX`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum IdNumber {
    /// Fits `i64`.
    Signed(i64),
    /// Above `i64::MAX`.
    Unsigned(u64),
}

impl RequestId {
    /// Reads an id from a JSON value: `Ok(None)` for `null`, an error for any other non-id kind.
    fn from_value(value: &Value) -> Result<Option<RequestId>, JsonKind> {
        match value {
            Value::Null => Ok(None),
            Value::String(s) => Ok(Some(RequestId::String(s.clone()))),
            Value::Number(n) => number_id(n).map(Some).ok_or(JsonKind::Float),
            other => Err(JsonKind::of(other)),
        }
    }

    /// The id as a JSON value.
    pub fn to_value(&self) -> Value {
        match self {
            RequestId::Number(IdNumber::Signed(n)) => Value::from(*n),
            RequestId::Number(IdNumber::Unsigned(n)) => Value::from(*n),
            RequestId::String(s) => Value::String(s.clone()),
        }
    }
}

impl From<i64> for RequestId {
    fn from(n: i64) -> Self {
        RequestId::Number(IdNumber::Signed(n))
    }
}

impl From<&str> for RequestId {
    fn from(s: &str) -> Self {
        RequestId::String(s.to_owned())
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Number(IdNumber::Signed(n)) => write!(f, "{n}"),
            RequestId::Number(IdNumber::Unsigned(n)) => write!(f, "{n}"),
            RequestId::String(s) => write!(f, "{s:?}"),
        }
    }
}

fn number_id(n: &Number) -> Option<RequestId> {
    if let Some(i) = n.as_i64() {
        Some(RequestId::Number(IdNumber::Signed(i)))
    } else {
        n.as_u64().map(|u| RequestId::Number(IdNumber::Unsigned(u)))
    }
}

/// The `id` member of a response, which may legitimately be `null` or absent on an error
/// response when the request's id could not be read (JSON-RPC 2.0 §5 says `null`; MCP from
/// 2025-11-25 lets the member be omitted).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ResponseId {
    /// An id, which must equal the request's.
    Id(RequestId),
    /// `"id": null`.
    Null,
    /// No `id` member (accepted on error responses only).
    Absent,
}

impl ResponseId {
    /// The id, if the response carries one.
    pub fn id(&self) -> Option<&RequestId> {
        match self {
            ResponseId::Id(id) => Some(id),
            _ => None,
        }
    }
}

impl fmt::Display for ResponseId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ResponseId::Id(id) => id.fmt(f),
            ResponseId::Null => f.write_str("null"),
            ResponseId::Absent => f.write_str("(absent)"),
        }
    }
}

/// What is wrong with a frame that is not a valid JSON-RPC 2.0 message. `Display` gives one
/// precise sentence, suitable for a finding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WireError {
    /// The frame is empty or only whitespace.
    Empty,
    /// The bytes are not UTF-8 (MCP requires UTF-8). `valid_up_to` is the byte offset of the
    /// first invalid byte.
    NotUtf8 {
        /// Byte offset of the first invalid byte.
        valid_up_to: usize,
    },
    /// The text is not JSON, or is JSON that `serde_json` refuses (lone surrogate escapes,
    /// nesting deeper than 128 levels). `line` and `column` are 1-based.
    NotJson {
        /// 1-based line of the error.
        line: usize,
        /// 1-based column of the error.
        column: usize,
        /// `serde_json`'s error message, without its position (e.g. `EOF while parsing a value`).
        reason: String,
    },
    /// Valid JSON nested deeper than mcp-chaos reads ([`MAX_DEPTH`] arrays and objects). The
    /// spec sets no depth limit, so this is a limit of mcp-chaos, not a protocol error.
    TooDeep {
        /// How deep the JSON nests (arrays and objects), at least: the scan stops one level
        /// past [`MAX_DEPTH`].
        depth: usize,
    },
    /// The JSON is neither an object nor an array (JSON-RPC 2.0 §4, §6).
    NotAnObject {
        /// What was found instead.
        found: JsonKind,
    },
    /// An empty array: JSON-RPC 2.0 §6 says an empty batch is an invalid request.
    EmptyBatch,
    /// No `jsonrpc` member.
    MissingJsonrpc,
    /// `jsonrpc` is present but not exactly the string `"2.0"`.
    WrongJsonrpc {
        /// The member as JSON text.
        found: String,
    },
    /// `id` is not a string or an integer.
    IdWrongType {
        /// What was found instead.
        found: JsonKind,
    },
    /// A request (it has `method`) whose `id` is `null`: MCP forbids null request ids.
    NullRequestId,
    /// `method` is present but not a string.
    MethodNotString {
        /// What was found instead.
        found: JsonKind,
    },
    /// `params` is present but not an object or array (JSON-RPC 2.0 §4.2).
    ParamsWrongType {
        /// What was found instead.
        found: JsonKind,
    },
    /// A message with `method` also carries `result` or `error`.
    MethodWithResponseMembers,
    /// A response carries both `result` and `error` (JSON-RPC 2.0 §5 forbids it).
    ResultAndError,
    /// An object with none of `method`, `result`, `error`.
    NotAMessage,
    /// A success response (`result`) without an `id` member, or with `"id": null`.
    ResultWithoutId,
    /// `error` is not an object.
    ErrorNotObject {
        /// What was found instead.
        found: JsonKind,
    },
    /// The error object has no `code`.
    ErrorCodeMissing,
    /// The error object's `code` is not an integer (JSON-RPC 2.0 §5.1).
    ErrorCodeNotInteger {
        /// What was found instead.
        found: JsonKind,
    },
    /// The error object has no `message`.
    ErrorMessageMissing,
    /// The error object's `message` is not a string.
    ErrorMessageNotString {
        /// What was found instead.
        found: JsonKind,
    },
}

impl WireError {
    /// A stable kebab-case name for this kind of error, for reports and tests.
    pub fn kind(&self) -> &'static str {
        match self {
            WireError::Empty => "empty",
            WireError::NotUtf8 { .. } => "not-utf8",
            WireError::NotJson { .. } => "not-json",
            WireError::TooDeep { .. } => "too-deep",
            WireError::NotAnObject { .. } => "not-an-object",
            WireError::EmptyBatch => "empty-batch",
            WireError::MissingJsonrpc => "missing-jsonrpc",
            WireError::WrongJsonrpc { .. } => "wrong-jsonrpc",
            WireError::IdWrongType { .. } => "id-wrong-type",
            WireError::NullRequestId => "null-request-id",
            WireError::MethodNotString { .. } => "method-not-string",
            WireError::ParamsWrongType { .. } => "params-wrong-type",
            WireError::MethodWithResponseMembers => "method-with-response-members",
            WireError::ResultAndError => "result-and-error",
            WireError::NotAMessage => "not-a-message",
            WireError::ResultWithoutId => "result-without-id",
            WireError::ErrorNotObject { .. } => "error-not-object",
            WireError::ErrorCodeMissing => "error-code-missing",
            WireError::ErrorCodeNotInteger { .. } => "error-code-not-integer",
            WireError::ErrorMessageMissing => "error-message-missing",
            WireError::ErrorMessageNotString { .. } => "error-message-not-string",
        }
    }

    /// Whether the frame was at least JSON (the error is about the JSON-RPC envelope).
    pub fn is_json(&self) -> bool {
        !matches!(
            self,
            WireError::Empty | WireError::NotUtf8 { .. } | WireError::NotJson { .. }
        )
    }
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WireError::Empty => f.write_str("empty frame"),
            WireError::NotUtf8 { valid_up_to } => {
                write!(f, "not UTF-8: invalid byte at offset {valid_up_to}")
            }
            WireError::NotJson {
                line,
                column,
                reason,
            } => write!(f, "not JSON: {reason} at line {line} column {column}"),
            WireError::TooDeep { depth } => write!(
                f,
                "too deep for mcp-chaos: the JSON nests at least {depth} levels of arrays and objects, and mcp-chaos reads at most {MAX_DEPTH} (the spec sets no limit; this is mcp-chaos's, not a protocol error)"
            ),
            WireError::NotAnObject { found } => {
                write!(
                    f,
                    "not a JSON-RPC message: the JSON is {found}, not an object"
                )
            }
            WireError::EmptyBatch => f.write_str("empty batch: an empty array is not a message"),
            WireError::MissingJsonrpc => f.write_str("no \"jsonrpc\" member (must be \"2.0\")"),
            WireError::WrongJsonrpc { found } => {
                write!(f, "\"jsonrpc\" is {found}, must be exactly \"2.0\"")
            }
            WireError::IdWrongType { found } => {
                write!(f, "\"id\" is {found}, must be a string or an integer")
            }
            WireError::NullRequestId => f.write_str("request \"id\" is null, which MCP forbids"),
            WireError::MethodNotString { found } => {
                write!(f, "\"method\" is {found}, must be a string")
            }
            WireError::ParamsWrongType { found } => {
                write!(f, "\"params\" is {found}, must be an object or an array")
            }
            WireError::MethodWithResponseMembers => {
                f.write_str("has \"method\" and also \"result\" or \"error\"")
            }
            WireError::ResultAndError => f.write_str("response has both \"result\" and \"error\""),
            WireError::NotAMessage => {
                f.write_str("object has none of \"method\", \"result\" or \"error\"")
            }
            WireError::ResultWithoutId => {
                f.write_str("success response has no \"id\" (or \"id\": null)")
            }
            WireError::ErrorNotObject { found } => {
                write!(f, "\"error\" is {found}, must be an object")
            }
            WireError::ErrorCodeMissing => f.write_str("error object has no \"code\""),
            WireError::ErrorCodeNotInteger { found } => {
                write!(f, "error \"code\" is {found}, must be an integer")
            }
            WireError::ErrorMessageMissing => f.write_str("error object has no \"message\""),
            WireError::ErrorMessageNotString { found } => {
                write!(f, "error \"message\" is {found}, must be a string")
            }
        }
    }
}

impl std::error::Error for WireError {}

/// A classified JSON-RPC 2.0 message. Each variant keeps the raw JSON value it was read from.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// A request: `method` and a non-null `id`.
    Request(Request),
    /// A notification: `method` and no `id`.
    Notification(Notification),
    /// A response: `result` or `error`.
    Response(Response),
    /// A non-empty array of messages (JSON-RPC 2.0 §6), each classified on its own.
    Batch(Batch),
}

impl Message {
    /// The raw JSON value of the message (for a batch, the array is rebuilt from its items).
    pub fn to_value(&self) -> Value {
        match self {
            Message::Request(r) => r.raw.clone(),
            Message::Notification(n) => n.raw.clone(),
            Message::Response(r) => r.raw.clone(),
            Message::Batch(b) => Value::Array(b.items.iter().map(|i| i.raw().clone()).collect()),
        }
    }

    /// The message serialised as one compact JSON line, without the trailing newline.
    pub fn to_bytes(&self) -> Vec<u8> {
        // Serialised from the raw values in place (no copy). Serialising a `Value` cannot
        // fail: its keys are always strings.
        let result = match self {
            Message::Request(r) => serde_json::to_vec(&r.raw),
            Message::Notification(n) => serde_json::to_vec(&n.raw),
            Message::Response(r) => serde_json::to_vec(&r.raw),
            Message::Batch(b) => {
                serde_json::to_vec(&b.items.iter().map(BatchItem::raw).collect::<Vec<_>>())
            }
        };
        result.unwrap_or_default()
    }

    /// A short label: `request`, `notification`, `response`, `error response` or `batch`.
    pub fn class(&self) -> &'static str {
        match self {
            Message::Request(_) => "request",
            Message::Notification(_) => "notification",
            Message::Response(r) if r.is_error() => "error response",
            Message::Response(_) => "response",
            Message::Batch(_) => "batch",
        }
    }
}

/// A JSON-RPC request (JSON-RPC 2.0 §4).
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    id: RequestId,
    raw: Value,
}

impl Request {
    /// The request id: a string or an integer, as written.
    pub fn id(&self) -> &RequestId {
        &self.id
    }
    /// The `method` member, e.g. `tools/call`.
    pub fn method(&self) -> &str {
        self.raw
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }
    /// The `params` member, if present (an object or an array).
    pub fn params(&self) -> Option<&Value> {
        self.raw.get("params")
    }
    /// The whole JSON object as received, unknown members included.
    pub fn raw(&self) -> &Value {
        &self.raw
    }
}

/// A JSON-RPC notification (JSON-RPC 2.0 §4.1): a request without an `id`.
#[derive(Debug, Clone, PartialEq)]
pub struct Notification {
    raw: Value,
}

impl Notification {
    /// The `method` member, e.g. `notifications/initialized`.
    pub fn method(&self) -> &str {
        self.raw
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }
    /// The `params` member, if present.
    pub fn params(&self) -> Option<&Value> {
        self.raw.get("params")
    }
    /// The whole JSON object as received, unknown members included.
    pub fn raw(&self) -> &Value {
        &self.raw
    }
}

/// A JSON-RPC response (JSON-RPC 2.0 §5): a success (`result`) or an error (`error`).
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    id: ResponseId,
    code: Option<i64>,
    raw: Value,
}

impl Response {
    /// The response id (`Null`/`Absent` only on error responses).
    pub fn id(&self) -> &ResponseId {
        &self.id
    }
    /// Whether this is an error response.
    pub fn is_error(&self) -> bool {
        self.code.is_some()
    }
    /// The `result` member of a success response.
    pub fn result(&self) -> Option<&Value> {
        if self.is_error() {
            None
        } else {
            self.raw.get("result")
        }
    }
    /// The error object of an error response.
    pub fn error(&self) -> Option<ErrorObject<'_>> {
        let code = self.code?;
        let error = self.raw.get("error")?;
        Some(ErrorObject {
            code,
            message: error
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or_default(),
            data: error.get("data"),
        })
    }
    /// The whole JSON object as received, unknown members included.
    pub fn raw(&self) -> &Value {
        &self.raw
    }
}

/// A view of a JSON-RPC error object (JSON-RPC 2.0 §5.1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ErrorObject<'a> {
    /// The `code` member, e.g. `-32601` ([`METHOD_NOT_FOUND`]).
    pub code: i64,
    /// The `message` member.
    pub message: &'a str,
    /// The `data` member, if present (any JSON value).
    pub data: Option<&'a Value>,
}

/// One element of a batch: a classified message, or the element and what is wrong with it.
#[derive(Debug, Clone, PartialEq)]
pub enum BatchItem {
    /// A valid message.
    Valid(Message),
    /// An element that is not a valid message (a nested array is one).
    Invalid {
        /// What is wrong with it.
        error: WireError,
        /// The element as sent.
        raw: Value,
    },
}

impl BatchItem {
    /// The raw JSON value of the element.
    pub fn raw(&self) -> &Value {
        match self {
            BatchItem::Valid(Message::Request(r)) => &r.raw,
            BatchItem::Valid(Message::Notification(n)) => &n.raw,
            BatchItem::Valid(Message::Response(r)) => &r.raw,
            // Nested batches are classified as invalid elements, so this arm holds no value;
            // it is unreachable in practice and returns `null` rather than panicking.
            BatchItem::Valid(Message::Batch(_)) => &Value::Null,
            BatchItem::Invalid { raw, .. } => raw,
        }
    }
}

/// A JSON-RPC batch (JSON-RPC 2.0 §6): a non-empty array whose elements are classified one by
/// one. A nested array is an invalid element.
#[derive(Debug, Clone, PartialEq)]
pub struct Batch {
    items: Vec<BatchItem>,
}

impl Batch {
    /// The elements in the order sent (at least one).
    pub fn items(&self) -> &[BatchItem] {
        &self.items
    }
}

/// Parses and classifies one frame. Total: returns an error for anything that is not a valid
/// JSON-RPC 2.0 message and never panics.
///
/// Leading and trailing ASCII whitespace (including a `\r` before the newline) is ignored.
pub fn parse(frame: &[u8]) -> Result<Message, WireError> {
    let text = std::str::from_utf8(frame).map_err(|e| WireError::NotUtf8 {
        valid_up_to: e.valid_up_to(),
    })?;
    if text.trim_ascii().is_empty() {
        return Err(WireError::Empty);
    }
    let value: Value = match serde_json::from_str(text) {
        Ok(value) => value,
        // serde_json stops at 128 levels; deeper valid JSON is read up to MAX_DEPTH.
        Err(e) if is_recursion_limit(&e) => parse_deep(text)?,
        Err(e) => {
            return Err(WireError::NotJson {
                line: e.line(),
                column: e.column(),
                reason: json_reason(&e),
            });
        }
    };
    classify(value)
}

/// Whether [`parse`] reads `frame` as noise rather than as an attempt at a message (an
/// [`WireError::Empty`], [`WireError::NotUtf8`], [`WireError::NotJson`] or
/// [`WireError::NotAnObject`] error), told without building the frame's value: the same
/// parser reads it with the same checks (numbers in range, valid strings, serde_json's
/// nesting limit) and keeps nothing. `None` when only [`parse`] can tell (JSON nested past
/// serde_json's limit, which [`parse`] reads again without it).
pub fn reads_as_noise(frame: &[u8]) -> Option<bool> {
    let Ok(text) = std::str::from_utf8(frame) else {
        return Some(true);
    };
    if text.trim_ascii().is_empty() {
        return Some(true);
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let read = serde::de::DeserializeSeed::deserialize(Skim, &mut de).and_then(|container| {
        de.end()?;
        Ok(container)
    });
    match read {
        // An object or an array is a message, a batch or an attempt at one; a scalar is not.
        Ok(container) => Some(!container),
        Err(e) if is_recursion_limit(&e) => None,
        Err(_) => Some(true),
    }
}

/// A JSON value read as `serde_json::Value` reads it (keys as strings, everything else through
/// `deserialize_any`), keeping nothing: whether it is an object or an array.
#[derive(Clone, Copy)]
struct Skim;

impl<'de> serde::de::DeserializeSeed<'de> for Skim {
    type Value = bool;

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<bool, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Skim {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any valid JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_i64<E>(self, _: i64) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_u64<E>(self, _: u64) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_f64<E>(self, _: f64) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_str<E>(self, _: &str) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_unit<E>(self) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<bool, A::Error> {
        while seq.next_element_seed(Skim)?.is_some() {}
        Ok(true)
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
        while map.next_key_seed(SkimKey)?.is_some() {
            map.next_value_seed(Skim)?;
        }
        Ok(true)
    }
}

/// An object key read as `serde_json::Value` reads it (a string), keeping nothing.
struct SkimKey;

impl<'de> serde::de::DeserializeSeed<'de> for SkimKey {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl serde::de::Visitor<'_> for SkimKey {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string key")
    }

    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
}

/// The deepest nesting of arrays and objects [`parse`] reads. serde_json's default limit is
/// 128; MCP sets no limit, and a `tools/list` with a deep `inputSchema` is valid, so frames
/// up to this depth are read (with serde_json's limit lifted, on a thread with a stack large
/// enough for it); deeper ones are [`WireError::TooDeep`].
pub const MAX_DEPTH: usize = 512;

/// Stack for parsing a frame deeper than serde_json's limit, in bytes (serde_json's
/// deserializer recurses once per level; debug builds use a few KiB per level).
const DEEP_STACK_BYTES: usize = 64 * 1024 * 1024;

fn is_recursion_limit(e: &serde_json::Error) -> bool {
    e.is_syntax() && json_reason(e) == "recursion limit exceeded"
}

/// How deep `text` nests arrays and objects (outside strings), stopping once past `limit`.
pub fn json_depth(text: &[u8], limit: usize) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let (mut in_string, mut escaped) = (false, false);
    for &b in text {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
                if deepest > limit {
                    return deepest;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// Parses JSON deeper than serde_json's default limit: [`WireError::TooDeep`] past
/// [`MAX_DEPTH`], else parsed with the limit lifted on a thread with [`DEEP_STACK_BYTES`].
fn parse_deep(text: &str) -> Result<Value, WireError> {
    parse_to_depth(text, MAX_DEPTH)
}

/// Parses one JSON value of at most `max_depth` levels of arrays and objects (deeper:
/// [`WireError::TooDeep`]), with serde_json's limit of 128 lifted, on a thread with a 64 MiB
/// stack; `max_depth` must stay below a few thousand. Other errors: [`WireError::NotJson`].
pub fn parse_to_depth(text: &str, max_depth: usize) -> Result<Value, WireError> {
    let depth = json_depth(text.as_bytes(), max_depth);
    if depth > max_depth {
        return Err(WireError::TooDeep { depth });
    }
    let parse = || {
        let mut de = serde_json::Deserializer::from_str(text);
        de.disable_recursion_limit();
        let value = <Value as serde::Deserialize>::deserialize(&mut de)?;
        de.end()?;
        Ok::<Value, serde_json::Error>(value)
    };
    let parsed = std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("mcp-chaos-deep-json".into())
            .stack_size(DEEP_STACK_BYTES)
            .spawn_scoped(scope, parse)
            .ok()
            .and_then(|t| t.join().ok())
    });
    match parsed {
        Some(Ok(value)) => Ok(value),
        Some(Err(e)) => Err(WireError::NotJson {
            line: e.line(),
            column: e.column(),
            reason: json_reason(&e),
        }),
        // No thread could be started: report the depth rather than risk the stack.
        None => Err(WireError::TooDeep { depth }),
    }
}

/// The parser's description without serde_json's trailing position, which [`WireError::NotJson`]
/// carries separately. serde_json displays an error as `{reason} at line {l} column {c}`;
/// formatting stops where the position begins, so the numbers are never formatted (this runs
/// for every frame that is not JSON, which is most of what a fuzzer sends).
fn json_reason(e: &serde_json::Error) -> String {
    const POSITION: &str = " at line ";
    struct UntilPosition(String);
    impl fmt::Write for UntilPosition {
        fn write_str(&mut self, s: &str) -> fmt::Result {
            if s == POSITION {
                // Ends the formatting: the rest is the position.
                return Err(fmt::Error);
            }
            self.0.push_str(s);
            Ok(())
        }
    }
    let mut reason = UntilPosition(String::with_capacity(64));
    let _ = fmt::write(&mut reason, format_args!("{e}"));
    let mut reason = reason.0;
    // Should serde_json ever write the position in one piece, cut it off here instead.
    if let Some(i) = reason.rfind(POSITION) {
        reason.truncate(i);
    }
    reason
}

/// Classifies an already-parsed JSON value as a message. Total, like [`parse`].
///
/// # Errors
/// The [`WireError`] of the first rule the value breaks (not an object or array, an empty
/// batch, a bad `jsonrpc`, `id`, `method`, `params` or `error` member, ...).
pub fn classify(value: Value) -> Result<Message, WireError> {
    match value {
        Value::Object(map) => classify_object(map),
        Value::Array(items) => {
            if items.is_empty() {
                return Err(WireError::EmptyBatch);
            }
            let items = items
                .into_iter()
                .map(|item| match item {
                    Value::Object(map) => match envelope(&map) {
                        Ok(envelope) => BatchItem::Valid(envelope.message(map)),
                        Err(error) => BatchItem::Invalid {
                            error,
                            raw: Value::Object(map),
                        },
                    },
                    other => BatchItem::Invalid {
                        error: WireError::NotAnObject {
                            found: JsonKind::of(&other),
                        },
                        raw: other,
                    },
                })
                .collect();
            Ok(Message::Batch(Batch { items }))
        }
        other => Err(WireError::NotAnObject {
            found: JsonKind::of(&other),
        }),
    }
}

fn classify_object(map: Map<String, Value>) -> Result<Message, WireError> {
    envelope(&map).map(|envelope| envelope.message(map))
}

/// What a valid object is, read from its members without taking it apart.
enum Envelope {
    Request(RequestId),
    Notification,
    Response(ResponseId, Option<i64>),
}

impl Envelope {
    /// The message, owning `map` (no copy).
    fn message(self, map: Map<String, Value>) -> Message {
        let raw = Value::Object(map);
        match self {
            Envelope::Request(id) => Message::Request(Request { id, raw }),
            Envelope::Notification => Message::Notification(Notification { raw }),
            Envelope::Response(id, code) => Message::Response(Response { id, code, raw }),
        }
    }
}

/// The JSON-RPC envelope of one object: which message it is, or the first thing wrong with it,
/// checked in a fixed order (`jsonrpc`, then `method` and its companions, then the response
/// members). The members are found in one pass over the object (no hashing: an envelope has
/// a handful of members).
fn envelope(map: &Map<String, Value>) -> Result<Envelope, WireError> {
    let (mut jsonrpc, mut method, mut params, mut id, mut result, mut error) =
        (None, None, None, None, None, None);
    for (key, value) in map {
        match key.as_str() {
            "jsonrpc" => jsonrpc = Some(value),
            "method" => method = Some(value),
            "params" => params = Some(value),
            "id" => id = Some(value),
            "result" => result = Some(value),
            "error" => error = Some(value),
            _ => {}
        }
    }
    match jsonrpc {
        None => return Err(WireError::MissingJsonrpc),
        Some(Value::String(s)) if s == "2.0" => {}
        Some(other) => {
            return Err(WireError::WrongJsonrpc {
                found: other.to_string(),
            });
        }
    }
    if let Some(method) = method {
        if !method.is_string() {
            return Err(WireError::MethodNotString {
                found: JsonKind::of(method),
            });
        }
        if result.is_some() || error.is_some() {
            return Err(WireError::MethodWithResponseMembers);
        }
        if let Some(params) = params
            && !(params.is_object() || params.is_array())
        {
            return Err(WireError::ParamsWrongType {
                found: JsonKind::of(params),
            });
        }
        return match id {
            None => Ok(Envelope::Notification),
            Some(id) => match RequestId::from_value(id) {
                Ok(Some(id)) => Ok(Envelope::Request(id)),
                Ok(None) => Err(WireError::NullRequestId),
                Err(found) => Err(WireError::IdWrongType { found }),
            },
        };
    }
    if result.is_some() && error.is_some() {
        return Err(WireError::ResultAndError);
    }
    let id = match id {
        None => ResponseId::Absent,
        Some(id) => match RequestId::from_value(id) {
            Ok(Some(id)) => ResponseId::Id(id),
            Ok(None) => ResponseId::Null,
            Err(found) => return Err(WireError::IdWrongType { found }),
        },
    };
    if result.is_some() {
        if !matches!(id, ResponseId::Id(_)) {
            return Err(WireError::ResultWithoutId);
        }
        return Ok(Envelope::Response(id, None));
    }
    if let Some(error) = error {
        let code = error_code(error)?;
        return Ok(Envelope::Response(id, Some(code)));
    }
    Err(WireError::NotAMessage)
}

/// Checks a JSON-RPC error object (JSON-RPC 2.0 §5.1) and returns its integer code.
fn error_code(error: &Value) -> Result<i64, WireError> {
    let Value::Object(error) = error else {
        return Err(WireError::ErrorNotObject {
            found: JsonKind::of(error),
        });
    };
    let code = match error.get("code") {
        None => return Err(WireError::ErrorCodeMissing),
        Some(Value::Number(n)) if n.is_i64() => n.as_i64().unwrap_or_default(),
        Some(other) => {
            return Err(WireError::ErrorCodeNotInteger {
                found: JsonKind::of(other),
            });
        }
    };
    match error.get("message") {
        None => Err(WireError::ErrorMessageMissing),
        Some(Value::String(_)) => Ok(code),
        Some(other) => Err(WireError::ErrorMessageNotString {
            found: JsonKind::of(other),
        }),
    }
}

/// The `method` of `frame` when [`parse`] classifies it as a request or a notification, `None`
/// for anything else: the same answer as matching on `parse(frame)`, but found without
/// building the frame's values (a `tools/call` frame's arguments are checked as JSON and
/// dropped as they are read, not built into maps and strings). Frames the quick reading
/// cannot settle (JSON nested deeper than serde_json's limit, anything serde_json refuses)
/// are parsed in full.
pub fn request_method(frame: &[u8]) -> Option<String> {
    let Ok(text) = std::str::from_utf8(frame) else {
        return None;
    };
    // Only an object can be a request or a notification.
    if text.trim_ascii_start().as_bytes().first() != Some(&b'{') {
        return None;
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let quick = <quick::Envelope as serde::Deserialize>::deserialize(&mut de)
        .and_then(|envelope| de.end().map(|()| envelope));
    match quick {
        Ok(envelope) => envelope.method(),
        Err(_) => match parse(frame) {
            Ok(Message::Request(r)) => Some(r.method().to_owned()),
            Ok(Message::Notification(n)) => Some(n.method().to_owned()),
            _ => None,
        },
    }
}

/// The envelope of one JSON object read by [`request_method`]: the members [`envelope`]
/// looks at, as much of them as it needs (the last of duplicate members wins, as in a parsed
/// [`Value`]), every other value checked by serde_json exactly as parsing it into a [`Value`]
/// would check it (escapes, number ranges, nesting), and dropped.
mod quick {
    use std::fmt;

    use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};

    use super::JsonKind;

    /// A member's value: its kind, and the string or integer when it is one.
    #[derive(Default)]
    pub(super) enum Member {
        #[default]
        Absent,
        Str(String),
        Integer,
        Other(JsonKind),
    }

    impl Member {
        fn kind(&self) -> Option<JsonKind> {
            match self {
                Member::Absent => None,
                Member::Str(_) => Some(JsonKind::String),
                Member::Integer => Some(JsonKind::Integer),
                Member::Other(kind) => Some(*kind),
            }
        }
    }

    #[derive(Default)]
    pub(super) struct Envelope {
        jsonrpc: Member,
        method: Member,
        params: Member,
        id: Member,
        result: Member,
        error: Member,
    }

    impl Envelope {
        /// The method when the object is a valid request or notification (the checks of
        /// [`super::envelope`] for an object with `method`).
        pub(super) fn method(self) -> Option<String> {
            if !matches!(&self.jsonrpc, Member::Str(v) if v == "2.0") {
                return None;
            }
            let Member::Str(method) = self.method else {
                return None;
            };
            if self.result.kind().is_some() || self.error.kind().is_some() {
                return None;
            }
            if !matches!(
                self.params.kind(),
                None | Some(JsonKind::Object | JsonKind::Array)
            ) {
                return None;
            }
            match self.id {
                Member::Absent | Member::Str(_) | Member::Integer => Some(method),
                Member::Other(_) => None,
            }
        }
    }

    impl<'de> de::Deserialize<'de> for Envelope {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            d.deserialize_any(EnvelopeVisitor)
        }
    }

    struct EnvelopeVisitor;

    impl<'de> Visitor<'de> for EnvelopeVisitor {
        type Value = Envelope;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a JSON object")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Envelope, A::Error> {
            let mut envelope = Envelope::default();
            while let Some(key) = map.next_key::<Key>()? {
                let slot = match key {
                    Key::Jsonrpc => &mut envelope.jsonrpc,
                    Key::Method => &mut envelope.method,
                    Key::Params => &mut envelope.params,
                    Key::Id => &mut envelope.id,
                    Key::Result => &mut envelope.result,
                    Key::Error => &mut envelope.error,
                    Key::Other => {
                        map.next_value::<Checked>()?;
                        continue;
                    }
                };
                *slot = map.next_value::<MemberValue>()?.0;
            }
            Ok(envelope)
        }
    }

    /// A member name, as the envelope sorts them.
    enum Key {
        Jsonrpc,
        Method,
        Params,
        Id,
        Result,
        Error,
        Other,
    }

    impl<'de> de::Deserialize<'de> for Key {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            d.deserialize_any(KeyVisitor)
        }
    }

    struct KeyVisitor;

    impl Visitor<'_> for KeyVisitor {
        type Value = Key;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a member name")
        }

        fn visit_str<E: de::Error>(self, key: &str) -> Result<Key, E> {
            Ok(match key {
                "jsonrpc" => Key::Jsonrpc,
                "method" => Key::Method,
                "params" => Key::Params,
                "id" => Key::Id,
                "result" => Key::Result,
                "error" => Key::Error,
                _ => Key::Other,
            })
        }
    }

    /// One envelope member's value.
    struct MemberValue(Member);

    impl<'de> de::Deserialize<'de> for MemberValue {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            d.deserialize_any(MemberVisitor)
        }
    }

    struct MemberVisitor;

    impl<'de> Visitor<'de> for MemberVisitor {
        type Value = MemberValue;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a JSON value")
        }

        fn visit_bool<E: de::Error>(self, _: bool) -> Result<MemberValue, E> {
            Ok(MemberValue(Member::Other(JsonKind::Bool)))
        }

        fn visit_i64<E: de::Error>(self, _: i64) -> Result<MemberValue, E> {
            Ok(MemberValue(Member::Integer))
        }

        fn visit_u64<E: de::Error>(self, _: u64) -> Result<MemberValue, E> {
            Ok(MemberValue(Member::Integer))
        }

        fn visit_f64<E: de::Error>(self, _: f64) -> Result<MemberValue, E> {
            Ok(MemberValue(Member::Other(JsonKind::Float)))
        }

        fn visit_str<E: de::Error>(self, v: &str) -> Result<MemberValue, E> {
            Ok(MemberValue(Member::Str(v.to_owned())))
        }

        fn visit_unit<E: de::Error>(self) -> Result<MemberValue, E> {
            Ok(MemberValue(Member::Other(JsonKind::Null)))
        }

        fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<MemberValue, A::Error> {
            CheckedVisitor.visit_seq(seq)?;
            Ok(MemberValue(Member::Other(JsonKind::Array)))
        }

        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<MemberValue, A::Error> {
            CheckedVisitor.visit_map(map)?;
            Ok(MemberValue(Member::Other(JsonKind::Object)))
        }
    }

    /// Any JSON value, read as serde_json reads one into a `Value` (so refused where that
    /// would be), and dropped.
    struct Checked;

    impl<'de> de::Deserialize<'de> for Checked {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            d.deserialize_any(CheckedVisitor)
        }
    }

    struct CheckedVisitor;

    impl<'de> Visitor<'de> for CheckedVisitor {
        type Value = Checked;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a JSON value")
        }

        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Checked, E> {
            Ok(Checked)
        }

        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Checked, E> {
            Ok(Checked)
        }

        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Checked, E> {
            Ok(Checked)
        }

        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Checked, E> {
            Ok(Checked)
        }

        fn visit_str<E: de::Error>(self, _: &str) -> Result<Checked, E> {
            Ok(Checked)
        }

        fn visit_unit<E: de::Error>(self) -> Result<Checked, E> {
            Ok(Checked)
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Checked, A::Error> {
            while seq.next_element::<Checked>()?.is_some() {}
            Ok(Checked)
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Checked, A::Error> {
            while map.next_key::<Checked>()?.is_some() {
                map.next_value::<Checked>()?;
            }
            Ok(Checked)
        }
    }
}

/// Builds a request frame value: `{"jsonrpc":"2.0","id":..,"method":..,"params":..}`.
pub fn request(id: &RequestId, method: &str, params: Option<Value>) -> Value {
    let mut map = Map::new();
    map.insert("jsonrpc".into(), Value::from("2.0"));
    map.insert("id".into(), id.to_value());
    map.insert("method".into(), Value::from(method));
    if let Some(params) = params {
        map.insert("params".into(), params);
    }
    Value::Object(map)
}

/// Builds a notification frame value: `{"jsonrpc":"2.0","method":..,"params":..}`.
pub fn notification(method: &str, params: Option<Value>) -> Value {
    let mut map = Map::new();
    map.insert("jsonrpc".into(), Value::from("2.0"));
    map.insert("method".into(), Value::from(method));
    if let Some(params) = params {
        map.insert("params".into(), params);
    }
    Value::Object(map)
}

/// Builds a success response frame value: `{"jsonrpc":"2.0","id":..,"result":..}`.
pub fn success(id: &RequestId, result: Value) -> Value {
    let mut map = Map::new();
    map.insert("jsonrpc".into(), Value::from("2.0"));
    map.insert("id".into(), id.to_value());
    map.insert("result".into(), result);
    Value::Object(map)
}

/// Builds an error response frame value. `id` is `None` for `"id": null` (the request's id
/// could not be read).
pub fn error(id: Option<&RequestId>, code: i64, message: &str, data: Option<Value>) -> Value {
    let mut err = Map::new();
    err.insert("code".into(), Value::from(code));
    err.insert("message".into(), Value::from(message));
    if let Some(data) = data {
        err.insert("data".into(), data);
    }
    let mut map = Map::new();
    map.insert("jsonrpc".into(), Value::from("2.0"));
    map.insert("id".into(), id.map_or(Value::Null, RequestId::to_value));
    map.insert("error".into(), Value::Object(err));
    Value::Object(map)
}

/// Serialises a frame value as one compact JSON line followed by `\n`, as the stdio transport
/// requires (no embedded newlines: `serde_json` escapes them inside strings).
pub fn to_line(value: &Value) -> Vec<u8> {
    let mut bytes = serde_json::to_vec(value).unwrap_or_default();
    bytes.push(b'\n');
    bytes
}

/// Renders a frame for a report: the text, cut to at most `max` bytes on a character boundary,
/// with `…` and the total size appended when cut.
pub fn excerpt(bytes: &[u8], max: usize) -> String {
    excerpt_of(bytes, max, bytes.len())
}

/// [`excerpt`] of the first bytes of a frame of `total` bytes (`bytes` may be only its
/// start): the text cut at `max` bytes, the size given as `total`.
pub fn excerpt_of(bytes: &[u8], max: usize, total: usize) -> String {
    let text = String::from_utf8_lossy(bytes);
    let text = text.trim_end_matches(['\n', '\r']);
    if text.len() <= max && total <= bytes.len() {
        return text.to_owned();
    }
    let mut end = max.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({total} bytes)", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn err(frame: &str) -> WireError {
        match parse(frame.as_bytes()) {
            Err(e) => e,
            Ok(m) => panic!("expected an error for {frame}, got {m:?}"),
        }
    }

    #[test]
    fn classifies_the_five_kinds() {
        let m = parse(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).unwrap();
        assert!(
            matches!(&m, Message::Request(r) if r.id() == &RequestId::from(1) && r.method() == "ping")
        );
        let m = parse(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).unwrap();
        assert!(
            matches!(&m, Message::Notification(n) if n.method() == "notifications/initialized")
        );
        let m = parse(br#"{"jsonrpc":"2.0","id":"a","result":{}}"#).unwrap();
        assert!(
            matches!(&m, Message::Response(r) if !r.is_error() && r.id() == &ResponseId::Id("a".into()))
        );
        let m =
            parse(br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}"#).unwrap();
        match &m {
            Message::Response(r) => {
                assert_eq!(r.id(), &ResponseId::Null);
                assert_eq!(r.error().unwrap().code, PARSE_ERROR);
            }
            other => panic!("{other:?}"),
        }
        let m = parse(br#"[{"jsonrpc":"2.0","id":1,"result":{}}, 3]"#).unwrap();
        match &m {
            Message::Batch(b) => {
                assert_eq!(b.items().len(), 2);
                assert!(matches!(
                    b.items()[0],
                    BatchItem::Valid(Message::Response(_))
                ));
                assert!(matches!(
                    b.items()[1],
                    BatchItem::Invalid {
                        error: WireError::NotAnObject { .. },
                        ..
                    }
                ));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn error_response_id_may_be_absent() {
        let m = parse(br#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"bad"}}"#).unwrap();
        assert!(matches!(&m, Message::Response(r) if r.id() == &ResponseId::Absent));
    }

    /// The reason is serde_json's description without its position (kept apart), and the
    /// display puts the position back once.
    #[test]
    fn not_json_reason_has_no_position() {
        let e = err("{\"jsonrpc\": tru}");
        assert_eq!(
            e,
            WireError::NotJson {
                line: 1,
                column: 16,
                reason: "expected ident".into()
            }
        );
        assert_eq!(
            e.to_string(),
            "not JSON: expected ident at line 1 column 16"
        );
        let WireError::NotJson { reason, .. } = err("[1,\n2") else {
            panic!("not NotJson");
        };
        assert_eq!(reason, "EOF while parsing a list");
    }

    #[test]
    fn names_what_is_wrong() {
        assert_eq!(err(""), WireError::Empty);
        assert_eq!(err("  \r"), WireError::Empty);
        assert!(matches!(err("{\"jsonrpc\":"), WireError::NotJson { .. }));
        assert_eq!(
            err("42"),
            WireError::NotAnObject {
                found: JsonKind::Integer
            }
        );
        assert_eq!(err("[]"), WireError::EmptyBatch);
        assert_eq!(
            err(r#"{"id":1,"method":"ping"}"#),
            WireError::MissingJsonrpc
        );
        assert_eq!(
            err(r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#),
            WireError::WrongJsonrpc {
                found: "\"1.0\"".into()
            }
        );
        assert_eq!(
            err(r#"{"jsonrpc":2.0,"id":1,"method":"ping"}"#),
            WireError::WrongJsonrpc {
                found: "2.0".into()
            }
        );
        assert_eq!(
            err(r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#),
            WireError::NullRequestId
        );
        assert_eq!(
            err(r#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#),
            WireError::IdWrongType {
                found: JsonKind::Object
            }
        );
        assert_eq!(
            err(r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#),
            WireError::IdWrongType {
                found: JsonKind::Float
            }
        );
        assert_eq!(
            err(r#"{"jsonrpc":"2.0","id":1,"method":7}"#),
            WireError::MethodNotString {
                found: JsonKind::Integer
            }
        );
        assert_eq!(
            err(r#"{"jsonrpc":"2.0","id":1,"method":"x","params":"s"}"#),
            WireError::ParamsWrongType {
                found: JsonKind::String
            }
        );
        assert_eq!(
            err(r#"{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":""}}"#),
            WireError::ResultAndError
        );
        assert_eq!(err(r#"{"jsonrpc":"2.0","id":1}"#), WireError::NotAMessage);
        assert_eq!(
            err(r#"{"jsonrpc":"2.0","result":{}}"#),
            WireError::ResultWithoutId
        );
        assert_eq!(
            err(r#"{"jsonrpc":"2.0","id":1,"error":{"message":"x"}}"#),
            WireError::ErrorCodeMissing
        );
        assert_eq!(
            err(r#"{"jsonrpc":"2.0","id":1,"error":{"code":"-32600","message":"x"}}"#),
            WireError::ErrorCodeNotInteger {
                found: JsonKind::String
            }
        );
        assert_eq!(
            err(r#"{"jsonrpc":"2.0","id":1,"error":{"code":-1.5,"message":"x"}}"#),
            WireError::ErrorCodeNotInteger {
                found: JsonKind::Float
            }
        );
        assert_eq!(
            err(r#"{"jsonrpc":"2.0","id":1,"error":{"code":1}}"#),
            WireError::ErrorMessageMissing
        );
        assert_eq!(
            err(r#"{"jsonrpc":"2.0","id":1,"error":"boom"}"#),
            WireError::ErrorNotObject {
                found: JsonKind::String
            }
        );
        assert_eq!(
            err(r#"{"jsonrpc":"2.0","id":1,"method":"x","result":{}}"#),
            WireError::MethodWithResponseMembers
        );
        assert_eq!(
            parse(&[b'{', 0xff, b'}']).unwrap_err(),
            WireError::NotUtf8 { valid_up_to: 1 }
        );
    }

    #[test]
    fn lone_surrogates_and_deep_nesting_are_errors_not_panics() {
        assert!(matches!(
            err(r#"{"jsonrpc":"2.0","id":"\ud800","method":"x"}"#),
            WireError::NotJson { .. }
        ));
        let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        assert_eq!(
            err(&deep),
            WireError::TooDeep {
                depth: MAX_DEPTH + 1
            }
        );
        assert!(err(&deep).to_string().contains("too deep for mcp-chaos"));
        // Deep but broken JSON is still not JSON.
        let broken = format!("{}{}", "[".repeat(300), "]".repeat(299));
        assert!(matches!(err(&broken), WireError::NotJson { .. }));
    }

    #[test]
    fn json_deeper_than_serde_jsons_limit_is_read_up_to_max_depth() {
        fn nested(levels: usize) -> String {
            let mut inner = r#"{"type":"object"}"#.to_owned();
            for _ in 1..levels {
                inner = format!(r#"{{"p":{inner},"s":"[{{\"]}}"}}"#);
            }
            format!(r#"{{"jsonrpc":"2.0","id":1,"result":{inner}}}"#)
        }
        for levels in [100, 200, MAX_DEPTH - 1] {
            let frame = nested(levels);
            assert_eq!(json_depth(frame.as_bytes(), usize::MAX), levels + 1);
            assert!(
                matches!(parse(frame.as_bytes()), Ok(Message::Response(_))),
                "{levels}"
            );
        }
        assert_eq!(
            err(&nested(MAX_DEPTH + 10)),
            WireError::TooDeep {
                depth: MAX_DEPTH + 1
            }
        );
    }

    #[test]
    fn request_method_names_what_parse_reads_of_long_strings() {
        fn by_parse(frame: &[u8]) -> Option<String> {
            match parse(frame) {
                Ok(Message::Request(r)) => Some(r.method().to_owned()),
                Ok(Message::Notification(n)) => Some(n.method().to_owned()),
                _ => None,
            }
        }
        let long = "x".repeat(4096);
        let deep = format!(
            r#"{{"jsonrpc":"2.0","method":"deep","params":{{"a":{}1{}}}}}"#,
            "[".repeat(200),
            "]".repeat(200)
        );
        let frames: Vec<String> = vec![
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"_meta":{{"p":"{long}"}}}}}}"#
            ),
            format!(r#"{{"jsonrpc":"2.0","method":"notifications/x","params":["{long}"]}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{long}"}}"#),
            format!(r#"{{"jsonrpc":"{long}","id":1,"method":"ping"}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":"{long}","method":"ping"}}"#),
            format!(r#"[{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"s":"{long}"}}}}]"#),
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":"{long}"}}"#),
            // Duplicate members: the last one counts, as in `parse`.
            r#"{"jsonrpc":"2.0","id":1,"method":"a","method":"b"}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"a","params":{},"params":3}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","result":{}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"n":1e999}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"} x"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#.to_owned(),
            "  ".to_owned(),
            deep,
        ];
        for frame in &frames {
            assert_eq!(
                request_method(frame.as_bytes()),
                by_parse(frame.as_bytes()),
                "{}",
                excerpt(frame.as_bytes(), 120)
            );
        }
        assert_eq!(
            request_method(frames[0].as_bytes()).as_deref(),
            Some("ping")
        );
        assert_eq!(request_method(frames[7].as_bytes()).as_deref(), Some("b"));
        assert_eq!(
            request_method(frames[15].as_bytes()).as_deref(),
            Some("deep")
        );
        assert_eq!(
            request_method(b"{\"jsonrpc\":\"2.0\",\"method\":\"\xff\"}"),
            None
        );
    }

    #[test]
    fn reads_as_noise_tells_what_parse_calls_noise() {
        fn by_parse(frame: &[u8]) -> bool {
            matches!(
                parse(frame),
                Err(WireError::Empty
                    | WireError::NotUtf8 { .. }
                    | WireError::NotJson { .. }
                    | WireError::NotAnObject { .. })
            )
        }
        let long = "x".repeat(100_000);
        let frames: Vec<Vec<u8>> = vec![
            format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"tools":["{long}"]}}}}"#).into(),
            format!(r#""{long}""#).into(),
            b"".to_vec(),
            b" \r".to_vec(),
            b"garbage".to_vec(),
            b"\xff\xfe".to_vec(),
            b"42".to_vec(),
            b"null".to_vec(),
            b"[]".to_vec(),
            b"[1,2]".to_vec(),
            b"{}".to_vec(),
            br#"{"a":1e999}"#.to_vec(),
            br#"[1e999]"#.to_vec(),
            br#"{"a":"\ud800"}"#.to_vec(),
            br#"{"a":"\u00e9\n"}"#.to_vec(),
            br#"{"a":1} {"b":2}"#.to_vec(),
            br#"{"a":1,}"#.to_vec(),
            br#"{"a" 1}"#.to_vec(),
            br#"{1:2}"#.to_vec(),
            b"{\"a\":\"\x01\"}".to_vec(),
            b"  {\"jsonrpc\":\"2.0\",\"method\":\"x\"}\r".to_vec(),
        ];
        for frame in &frames {
            assert_eq!(
                reads_as_noise(frame),
                Some(by_parse(frame)),
                "{}",
                excerpt(frame, 80)
            );
        }
        // Past serde_json's nesting limit only `parse` can tell.
        let deep = format!("{}{}", "[".repeat(300), "]".repeat(300));
        assert_eq!(reads_as_noise(deep.as_bytes()), None);
    }

    #[test]
    fn ids_compare_exactly() {
        assert_ne!(RequestId::from(5), RequestId::from("5"));
        let big = parse(br#"{"jsonrpc":"2.0","id":18446744073709551615,"result":{}}"#).unwrap();
        assert!(
            matches!(big, Message::Response(r) if matches!(r.id(), ResponseId::Id(RequestId::Number(IdNumber::Unsigned(u64::MAX)))))
        );
    }

    #[test]
    fn builders_round_trip() {
        let id = RequestId::from(3);
        let frames = [
            request(&id, "tools/list", Some(json!({"cursor": "c"}))),
            notification("notifications/initialized", None),
            success(&id, json!({})),
            error(Some(&id), METHOD_NOT_FOUND, "no", Some(json!({"m": 1}))),
            error(None, PARSE_ERROR, "bad", None),
        ];
        for frame in frames {
            let line = to_line(&frame);
            assert_eq!(line.last(), Some(&b'\n'));
            let m = parse(&line).unwrap();
            assert_eq!(m.to_value(), frame);
            assert_eq!(parse(&m.to_bytes()).unwrap(), m);
        }
    }

    #[test]
    fn excerpt_cuts_on_char_boundary() {
        assert_eq!(excerpt(b"abc\n", 10), "abc");
        let s = "é".repeat(10);
        let e = excerpt(s.as_bytes(), 5);
        assert!(e.starts_with("éé…"), "{e}");
    }

    fn method_by_parse(frame: &[u8]) -> Option<String> {
        match parse(frame) {
            Ok(Message::Request(r)) => Some(r.method().to_owned()),
            Ok(Message::Notification(n)) => Some(n.method().to_owned()),
            _ => None,
        }
    }

    #[test]
    fn request_method_agrees_with_parse() {
        let deep = |n: usize| {
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"deep","params":{{"a":{}{}}}}}"#,
                "[".repeat(n),
                "]".repeat(n)
            )
        };
        let mut frames: Vec<Vec<u8>> = [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":1.5e300,"b":[{}]}}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1.0,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":-0,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":-9223372036854775809,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":18446744073709551615,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":18446744073709551616,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":"a","method":7}"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#,
            r#"{"jsonrpc":2,"id":1,"method":"ping"}"#,
            r#"{"id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":3}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":null}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","error":null}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"a","method":"b"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"a","method":5}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":5,"method":"a"}"#,
            r#"{"jsonrpc":"2.0","id":null,"id":2,"method":"a"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"p\u0069ng\n"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"s":"\ud800"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"s":"\ud83d\ude00"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"n":1e400}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"n":-1e-400}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","\ud800":1}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"} x"#,
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\n",
            "  \t{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}",
            r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","x":{"\u00e9":[1,{"y":null}],"k":1,"k":2}}"#,
            r#"{"jsonr\u0070c":"2.0","id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping",}"#,
            r#"{"jsonrpc":"2.0","id":01,"method":"ping"}"#,
            "",
            "   ",
            "{",
            "null",
            "{}",
        ]
        .iter()
        .map(|f| f.as_bytes().to_vec())
        .collect();
        frames.extend([deep(100), deep(200), deep(600)].map(String::into_bytes));
        frames.push(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}".to_vec());
        for frame in &frames {
            assert_eq!(
                request_method(frame),
                method_by_parse(frame),
                "{}",
                String::from_utf8_lossy(frame)
            );
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config {
            cases: 2000,
            failure_persistence: None,
            ..proptest::test_runner::Config::default()
        })]

        /// Frames put together from pieces of envelopes (most of them near-misses) get the
        /// same method, or none, from [`request_method`] as from [`parse`].
        #[test]
        fn request_method_agrees_with_parse_on_near_misses(
            pieces in proptest::collection::vec(proptest::sample::select(vec![
                "{", "}", "[", "]", ",", ":", " ", "\"jsonrpc\"", "\"2.0\"", "\"method\"",
                "\"ping\"", "\"id\"", "1", "-1", "1.5", "1e400", "null", "true", "\"params\"",
                "\"result\"", "\"error\"", "\"\\ud800\"", "\"\\u0041\"", "\"x\"", "{}", "[]",
                "\"jsonrpc\":\"2.0\",", "\"method\":\"a\",", "\"id\":7,",
            ]), 0..16),
            prefix in proptest::bool::ANY,
        ) {
            let mut frame = if prefix { "{\"jsonrpc\":\"2.0\",".to_owned() } else { String::new() };
            frame.extend(pieces);
            proptest::prop_assert_eq!(
                request_method(frame.as_bytes()),
                method_by_parse(frame.as_bytes()),
                "{}", frame
            );
        }
    }
}
