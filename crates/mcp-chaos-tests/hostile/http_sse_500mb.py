"""Streamable HTTP: answers tools/list with a 500 MiB text/event-stream, generated as it is
sent. `--shape`:
  one-event    (default) a single event whose one data line is a 500 MiB JSON-RPC response;
  many-events  500 events of 1 MiB each (notifications/message), then the real response.
Everything else is answered correctly."""

import json

import mcpbase

MIB = 1 << 20
SIZE_MIB = 500
shape = mcpbase.arg("shape", "one-event")
if shape not in ("one-event", "many-events"):
    raise SystemExit(f"unknown --shape {shape}; shapes: one-event, many-events")


def one_event(id_):
    yield b'event: message\ndata: {"jsonrpc":"2.0","id":' + json.dumps(id_).encode()
    yield b',"result":{"tools":[],"x":"'
    chunk = b"a" * MIB
    for _ in range(SIZE_MIB):
        yield chunk
    yield b'"}}\n\n'


def many_events(id_, tools):
    text = "a" * (MIB - 100)
    for n in range(SIZE_MIB):
        note = mcpbase.notification("notifications/message",
                                    {"level": "info", "logger": "sse", "data": f"{n} {text}"})
        yield b"event: message\ndata: " + json.dumps(note).encode() + b"\n\n"
    yield b"event: message\ndata: " + json.dumps(mcpbase.response(id_, {"tools": tools})).encode()
    yield b"\n\n"


class Sse(mcpbase.Handler):
    def reply(self, mcp, msg, answer, headers):
        if msg.get("method") != "tools/list":
            return super().reply(mcp, msg, answer, headers)
        self.close_connection = True
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        if shape == "one-event":
            body = one_event(msg["id"])
        else:
            body = many_events(msg["id"], answer.get("result", {}).get("tools", []))
        try:
            for chunk in body:
                self.wfile.write(chunk)
        except OSError:
            pass


mcpbase.serve_http(lambda: mcpbase.Mcp("sse-500mb", capabilities={"tools": {}, "logging": {}}),
                   Sse)
