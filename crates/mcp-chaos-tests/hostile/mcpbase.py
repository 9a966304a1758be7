"""The MCP basics shared by the hostile servers (Python 3.11 standard library only).

A hostile server is a correct MCP server with one thing wrong, so that what mcp-chaos reports
against it is about that one thing. This module is the correct part:

- `Mcp`: the JSON-RPC 2.0 / MCP core. `initialize` for the version asked (2024-11-05 ..
  2025-11-25; anything else gets 2025-11-25, the latest this server speaks), `ping`,
  `tools/list` (with pagination when `page_size` is set), `tools/call` with arguments checked
  against the tool's `inputSchema` (a failure is an `isError` result, as 2025-11-25 asks), the
  JSON-RPC error codes (-32700, -32600, -32601, -32602), batches, notifications never answered,
  and before `initialize` nothing but `ping` served (-32600: `basic/lifecycle`). Subclasses override `request()` (one method) or the `on_initialized()` hook.
- `serve_stdio(mcp)`: newline-delimited JSON-RPC on stdin/stdout, single-threaded. When
  `mcp.pump` is set (an iterator of bytes), its chunks are written whenever stdin has nothing
  to read: that is how the floods are written lazily, with the pipe's own back-pressure.
- `serve_http(make_mcp, Handler)`: Streamable HTTP at http://127.0.0.1:PORT/mcp (PORT from
  `--port N` or the `PORT` environment variable), with sessions (`Mcp-Session-Id`: 400 when
  missing, 404 when unknown or deleted), `MCP-Protocol-Version` checked (400), a foreign
  `Origin` refused (403), GET answered 405, DELETE ending the session. Subclasses of `Handler`
  override `reply()` to answer a request their own way.

Nothing here connects anywhere: the HTTP server binds 127.0.0.1 only.
"""

import json
import os
import re
import secrets
import select
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

VERSIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]
LATEST = VERSIONS[-1]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602


class RpcError(Exception):
    """A JSON-RPC error to answer with."""

    def __init__(self, code, message, data=None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


def response(id_, result):
    return {"jsonrpc": "2.0", "id": id_, "result": result}


def error(id_, code, message, data=None):
    err = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": id_, "error": err}


def notification(method, params=None):
    msg = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def line(msg):
    """One stdio frame: compact JSON and a newline, as bytes."""
    return json.dumps(msg, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def text_result(text, is_error=False):
    return {"content": [{"type": "text", "text": text}], "isError": is_error}


# ---------------------------------------------------------------------------------------------
# inputSchema checks: the keywords the zoo's tools use (type, properties, required,
# additionalProperties, enum, const, minimum/maximum, minLength/maxLength, pattern, items,
# minItems/maxItems, local $ref). Returns None when the value is valid, else why not.


def _is_type(value, t):
    if t == "object":
        return isinstance(value, dict)
    if t == "array":
        return isinstance(value, list)
    if t == "string":
        return isinstance(value, str)
    if t == "boolean":
        return isinstance(value, bool)
    if t == "null":
        return value is None
    if t == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if t == "integer":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return False
        return isinstance(value, int) or value.is_integer()
    return True


def _pointer(root, ref):
    node = root
    for part in ref[2:].split("/") if ref.startswith("#/") else []:
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def _ecma(pattern):
    # ECMA `$` (without the m flag) matches only at the very end; Python's also before a
    # final newline.
    if pattern.endswith("$") and not pattern.endswith("\\$"):
        pattern = pattern[:-1] + r"\Z"
    return re.compile(pattern, re.ASCII)


def check(schema, value, root=None, where="arguments"):
    """Why `value` breaks `schema`, or None. Patterns listed in `SAFE_PATTERNS` are checked
    with their linear equivalent (the zoo's own server must not hang on its own ReDoS)."""
    root = schema if root is None else root
    if schema is True or schema == {}:
        return None
    if schema is False:
        return f"{where} is not allowed"
    if "$ref" in schema:
        return check(_pointer(root, schema["$ref"]), value, root, where)
    t = schema.get("type")
    if t is not None:
        types = t if isinstance(t, list) else [t]
        if not any(_is_type(value, x) for x in types):
            return f"{where} must be of type {' or '.join(types)}"
    if "enum" in schema and value not in schema["enum"]:
        return f"{where} must be one of the {len(schema['enum'])} listed values"
    if "const" in schema and value != schema["const"]:
        return f"{where} must be {json.dumps(schema['const'])}"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            return f"{where} must be at least {schema['minimum']}"
        if "maximum" in schema and value > schema["maximum"]:
            return f"{where} must be at most {schema['maximum']}"
    if isinstance(value, str):
        if "minLength" in schema and len(value) < schema["minLength"]:
            return f"{where} must be at least {schema['minLength']} characters long"
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            return f"{where} must be at most {schema['maxLength']} characters long"
        if "pattern" in schema:
            pattern = SAFE_PATTERNS.get(schema["pattern"], schema["pattern"])
            if not _ecma(pattern).search(value):
                return f"{where} must match the pattern {schema['pattern']}"
    if isinstance(value, list):
        if "minItems" in schema and len(value) < schema["minItems"]:
            return f"{where} must have at least {schema['minItems']} items"
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            return f"{where} must have at most {schema['maxItems']} items"
        if isinstance(schema.get("items"), dict):
            for i, item in enumerate(value):
                why = check(schema["items"], item, root, f"{where}[{i}]")
                if why:
                    return why
    if isinstance(value, dict):
        for name in schema.get("required", []):
            if name not in value:
                return f"{where}.{name} is required"
        props = schema.get("properties", {})
        for name, item in value.items():
            if name in props:
                why = check(props[name], item, root, f"{where}.{name}")
                if why:
                    return why
            elif schema.get("additionalProperties") is False:
                return f"{where}.{name} is not a known argument (known: {', '.join(props)})"
            elif isinstance(schema.get("additionalProperties"), dict):
                why = check(schema["additionalProperties"], item, root, f"{where}.{name}")
                if why:
                    return why
    return None


SAFE_PATTERNS = {"^(a+)+$": "^a+$"}


# ---------------------------------------------------------------------------------------------
# Tools


def echo(args):
    return text_result(args["text"])


def add(args):
    return text_result(str(args["a"] + args["b"]))


ECHO = {
    "name": "echo",
    "description": "Echoes its text.",
    "inputSchema": {
        "type": "object",
        "properties": {"text": {"type": "string", "minLength": 1, "maxLength": 200}},
        "required": ["text"],
        "additionalProperties": False,
    },
}
ADD = {
    "name": "add",
    "description": "Adds two numbers.",
    "inputSchema": {
        "type": "object",
        "properties": {
            "a": {"type": "number", "minimum": -1000000, "maximum": 1000000},
            "b": {"type": "number", "minimum": -1000000, "maximum": 1000000},
        },
        "required": ["a", "b"],
        "additionalProperties": False,
    },
}
DEFAULT_TOOLS = [(ECHO, echo), (ADD, add)]


def accept(args):
    return text_result("ok")


class Mcp:
    """A correct MCP server core (2024-11-05 .. 2025-11-25).

    `tools` is a list of (tool definition, handler) pairs; a handler takes the checked
    arguments and returns a `CallToolResult`. `page_size` splits `tools/list` into pages.
    """

    def __init__(self, name="hostile", tools=None, capabilities=None, page_size=None):
        self.name = name
        self.tools = list(DEFAULT_TOOLS if tools is None else tools)
        self.by_name = {t["name"]: (t, h) for t, h in self.tools}
        self.capabilities = {"tools": {}} if capabilities is None else capabilities
        self.page_size = page_size
        self.version = None
        self.pump = None  # for serve_stdio: an iterator of bytes written while stdin is idle

    # -- hooks --------------------------------------------------------------------------------

    def on_initialized(self):
        """Called once `notifications/initialized` arrives."""

    def request(self, method, params, id_):
        """The result of one request, or raises RpcError."""
        if method == "initialize":
            return self.initialize(params)
        if method == "ping":
            return {}
        if method == "tools/list":
            return self.tools_list(params)
        if method == "tools/call":
            return self.tools_call(params)
        raise RpcError(METHOD_NOT_FOUND, f"Method not found: {method}")

    # -- the methods --------------------------------------------------------------------------

    def initialize(self, params):
        if not isinstance(params, dict) or not isinstance(params.get("protocolVersion"), str):
            raise RpcError(INVALID_PARAMS, "initialize needs params.protocolVersion (a string)")
        asked = params["protocolVersion"]
        self.version = asked if asked in VERSIONS else LATEST
        return {
            "protocolVersion": self.version,
            "capabilities": self.capabilities,
            "serverInfo": {"name": self.name, "version": "0.1.0"},
        }

    def tool_list(self):
        return [t for t, _ in self.tools]

    def tools_list(self, params):
        tools = self.tool_list()
        if self.page_size is None:
            return {"tools": tools}
        cursor = (params or {}).get("cursor")
        try:
            start = int(cursor) if cursor is not None else 0
        except (TypeError, ValueError):
            raise RpcError(INVALID_PARAMS, f"tools/list: unknown cursor {cursor!r}")
        page = {"tools": tools[start : start + self.page_size]}
        if start + self.page_size < len(tools):
            page["nextCursor"] = str(start + self.page_size)
        return page

    def tools_call(self, params):
        if not isinstance(params, dict) or not isinstance(params.get("name"), str):
            raise RpcError(INVALID_PARAMS, "tools/call needs params.name (a string)")
        args = params.get("arguments", {})
        if not isinstance(args, dict):
            raise RpcError(INVALID_PARAMS, "tools/call: params.arguments must be an object")
        name = params["name"]
        if name not in self.by_name:
            known = ", ".join(sorted(self.by_name)[:10])
            raise RpcError(INVALID_PARAMS, f"Unknown tool: {name} (tools: {known})")
        tool, handler = self.by_name[name]
        try:
            why = check(tool["inputSchema"], args)
        except RecursionError:
            why = "arguments are nested too deeply"
        if why:
            return text_result(
                f"{name}: invalid arguments: {why}. Fix the arguments to match the tool's "
                "inputSchema; retrying the same call will fail again.",
                is_error=True,
            )
        return handler(args)

    # -- JSON-RPC -----------------------------------------------------------------------------

    def handle(self, msg):
        """The response to one parsed message (a dict), or None (notifications, responses)."""
        if not isinstance(msg, dict):
            return error(None, INVALID_REQUEST, "Invalid request: not a JSON object")
        id_ = msg.get("id")
        has_id = "id" in msg
        if has_id and not (
            isinstance(id_, str) or (isinstance(id_, int) and not isinstance(id_, bool))
        ):
            return error(None, INVALID_REQUEST, "Invalid request: id must be a string or integer")
        if msg.get("jsonrpc") != "2.0":
            return error(id_, INVALID_REQUEST, 'Invalid request: jsonrpc must be "2.0"')
        if "method" not in msg:
            if has_id and ("result" in msg or "error" in msg):
                return None  # a response to one of our requests
            return error(id_, INVALID_REQUEST, "Invalid request: no method")
        method = msg["method"]
        if not isinstance(method, str):
            return error(id_, INVALID_REQUEST, "Invalid request: method must be a string")
        if not has_id:
            if method == "notifications/initialized":
                self.on_initialized()
            return None
        params = msg.get("params")
        if params is not None and not isinstance(params, (dict, list)):
            return error(id_, INVALID_REQUEST, "Invalid request: params must be an object")
        if self.version is None and method not in ("initialize", "ping"):
            # basic/lifecycle: until initialize is answered, only ping is served.
            return error(id_, INVALID_REQUEST, f"Invalid request: {method} before initialize")
        try:
            return response(id_, self.request(method, params, id_))
        except RpcError as e:
            return error(id_, e.code, e.message, e.data)

    def handle_frame(self, raw):
        """The response(s) to one raw frame (bytes): a message, a list, or None."""
        try:
            msg = json.loads(raw)
        except (ValueError, RecursionError):
            return error(None, PARSE_ERROR, "Parse error: the frame is not JSON")
        if isinstance(msg, list):
            if not msg:
                return error(None, INVALID_REQUEST, "Invalid request: empty batch")
            out = [r for r in (self.handle(m) for m in msg) if r is not None]
            return out or None
        return self.handle(msg)


# ---------------------------------------------------------------------------------------------
# stdio


def write_all(fd, data):
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


class Stdio:
    """Newline-delimited frames on fd 0 / fd 1, read without Python's buffering (so that
    select() tells the truth)."""

    def __init__(self):
        self.buf = bytearray()
        self.eof = False

    def lines(self, block):
        """Reads what is available (waiting if `block`) and returns the complete lines."""
        if not self.eof:
            ready, _, _ = select.select([0], [], [], None if block else 0)
            if ready:
                chunk = os.read(0, 1 << 20)
                if chunk:
                    self.buf += chunk
                else:
                    self.eof = True
        out = []
        while True:
            i = self.buf.find(b"\n")
            if i < 0:
                break
            out.append(bytes(self.buf[:i]))
            del self.buf[: i + 1]
        return out

    def send(self, msg):
        write_all(1, msg if isinstance(msg, bytes) else line(msg))


def serve_stdio(mcp, stdio=None):
    """Serves `mcp` over stdio until stdin closes. Never returns on a broken pipe: exits."""
    stdio = stdio or Stdio()
    try:
        while not stdio.eof or mcp.pump is not None:
            for raw in stdio.lines(block=mcp.pump is None):
                if raw.strip():
                    answer = mcp.handle_frame(raw)
                    if answer is not None:
                        stdio.send(answer)
            if mcp.pump is not None:
                chunk = next(mcp.pump, None)
                if chunk is None:
                    mcp.pump = None
                else:
                    write_all(1, chunk)
    except BrokenPipeError:
        pass
    sys.exit(0)


# ---------------------------------------------------------------------------------------------
# Streamable HTTP


def port_from_args():
    argv = sys.argv[1:]
    if "--port" in argv:
        return int(argv[argv.index("--port") + 1])
    if "PORT" in os.environ:
        return int(os.environ["PORT"])
    sys.exit("usage: give the port as --port N or in the PORT environment variable")


def arg(name, default=None):
    """The value of `--name VALUE` on the command line, or `default`."""
    argv = sys.argv[1:]
    flag = f"--{name}"
    if flag in argv:
        return argv[argv.index(flag) + 1]
    return default


LOOPBACK_ORIGINS = re.compile(r"^https?://(127\.0\.0\.1|localhost|\[::1\])(:\d+)?$")


class Handler(BaseHTTPRequestHandler):
    """The MCP endpoint `/mcp`. `self.server.sessions` maps session ids to `Mcp` cores."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out as two writes

    def log_message(self, *args):
        pass

    # -- plain answers ------------------------------------------------------------------------

    def send_body(self, status, body=b"", content_type="application/json", headers=()):
        self.send_response(status)
        if body:
            self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        if body:
            self.wfile.write(body)

    def send_json(self, status, msg, headers=()):
        self.send_body(status, json.dumps(msg).encode(), headers=headers)

    def refuse(self, status, text):
        self.send_json(status, error(None, INVALID_REQUEST, text))

    # -- the hook -----------------------------------------------------------------------------

    def reply(self, mcp, msg, answer, headers):
        """Answers one POSTed request; `answer` is what the core would answer."""
        self.send_json(200, answer, headers)

    # -- the endpoint -------------------------------------------------------------------------

    def checked(self):
        """Checks path, Origin and MCP-Protocol-Version; answers and returns False if bad."""
        if self.path.split("?")[0] != "/mcp":
            self.send_body(404, b"not found", "text/plain")
            return False
        origin = self.headers.get("Origin")
        if origin is not None and not LOOPBACK_ORIGINS.match(origin):
            self.refuse(403, f"Forbidden: Origin {origin} is not allowed")
            return False
        version = self.headers.get("MCP-Protocol-Version")
        if version is not None and version not in VERSIONS:
            self.refuse(400, f"Bad Request: unsupported MCP-Protocol-Version {version}")
            return False
        return True

    def session(self):
        """The session of this request, or None after answering 400/404."""
        sid = self.headers.get("Mcp-Session-Id")
        if sid is None:
            self.refuse(400, "Bad Request: no Mcp-Session-Id header")
            return None
        mcp = self.server.sessions.get(sid)
        if mcp is None:
            self.refuse(404, "Not Found: unknown or ended session")
        return mcp

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        if not self.checked():
            return
        try:
            msg = json.loads(body)
        except (ValueError, RecursionError):
            self.send_json(400, error(None, PARSE_ERROR, "Parse error: the body is not JSON"))
            return
        headers = []
        if isinstance(msg, dict) and msg.get("method") == "initialize" and "id" in msg:
            mcp = self.server.make_mcp()
            answer = mcp.handle(msg)
            if "result" in answer:
                sid = "s-" + secrets.token_hex(16)
                self.server.sessions[sid] = mcp
                headers.append(("Mcp-Session-Id", sid))
            self.reply(mcp, msg, answer, headers)
            return
        mcp = self.session()
        if mcp is None:
            return
        answer = mcp.handle_frame(body) if isinstance(msg, list) else mcp.handle(msg)
        if answer is None:
            self.send_body(202)
        elif isinstance(answer, list):
            self.send_json(200, answer, headers)
        else:
            self.reply(mcp, msg, answer, headers)

    def do_GET(self):
        if self.checked() and self.session() is not None:
            self.send_body(405, headers=[("Allow", "POST, DELETE")])

    def do_DELETE(self):
        if not self.checked():
            return
        sid = self.headers.get("Mcp-Session-Id")
        if self.session() is not None:
            self.server.sessions.pop(sid, None)
            self.send_body(200)


def serve_http(make_mcp=Mcp, handler=Handler):
    """Serves Streamable HTTP on 127.0.0.1 (port from --port or PORT) until killed."""
    port = port_from_args()
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    server.daemon_threads = True
    server.sessions = {}
    server.make_mcp = make_mcp
    server.lock = threading.Lock()
    print(f"listening on http://127.0.0.1:{port}/mcp", file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
