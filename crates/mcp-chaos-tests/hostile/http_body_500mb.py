"""Streamable HTTP: answers tools/list with a 500 MiB application/json body, generated as it is
sent: with its Content-Length (default), or with --chunked as Transfer-Encoding: chunked (no
length known up front). Everything else is answered correctly."""

import json
import sys

import mcpbase

MIB = 1 << 20
SIZE_MIB = 500
CHUNKED = "--chunked" in sys.argv[1:]


class Body(mcpbase.Handler):
    def reply(self, mcp, msg, answer, headers):
        if msg.get("method") != "tools/list":
            return super().reply(mcp, msg, answer, headers)
        head = b'{"jsonrpc":"2.0","id":' + json.dumps(msg["id"]).encode() + b',"result":{"tools":[],"x":"'
        tail = b'"}}'
        chunk = b"a" * MIB
        self.close_connection = True
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        if CHUNKED:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", str(len(head) + SIZE_MIB * MIB + len(tail)))
        self.send_header("Connection", "close")
        self.end_headers()
        parts = [head] + [chunk] * SIZE_MIB + [tail]
        try:
            for part in parts:
                if CHUNKED:
                    self.wfile.write(b"%x\r\n" % len(part) + part + b"\r\n")
                else:
                    self.wfile.write(part)
            if CHUNKED:
                self.wfile.write(b"0\r\n\r\n")
        except OSError:
            pass


mcpbase.serve_http(handler=Body)
