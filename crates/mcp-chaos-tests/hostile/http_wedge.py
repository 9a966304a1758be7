"""Streamable HTTP: answers initialize correctly (a session is issued; notifications get 202),
then wedges on every request. `--mode`:
  endless-sse  200 text/event-stream, then an SSE comment every 200 ms, forever, never the
               response;
  slowloris    the status line, then header bytes one every 500 ms, forever;
  silent       reads the request and never writes a byte, holding the connection open.
With --before-init the wedge starts at initialize itself (slowloris before initialize)."""

import sys
import time

import mcpbase

MODES = ("endless-sse", "slowloris", "silent")
mode = mcpbase.arg("mode", "silent")
if mode not in MODES:
    raise SystemExit(f"unknown --mode {mode}; modes: {', '.join(MODES)}")
BEFORE_INIT = "--before-init" in sys.argv[1:]


class Wedged(mcpbase.Handler):
    def reply(self, mcp, msg, answer, headers):
        if msg.get("method") == "initialize" and not BEFORE_INIT:
            return super().reply(mcp, msg, answer, headers)
        self.close_connection = True
        try:
            if mode == "endless-sse":
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                for k, v in headers:
                    self.send_header(k, v)
                self.end_headers()
                while True:
                    self.wfile.write(b": still working\n\n")
                    time.sleep(0.2)
            elif mode == "slowloris":
                self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Slow: ")
                while True:
                    self.wfile.write(b"a")
                    time.sleep(0.5)
            else:
                while True:
                    time.sleep(60)
        except OSError:
            pass


mcpbase.serve_http(handler=Wedged)
