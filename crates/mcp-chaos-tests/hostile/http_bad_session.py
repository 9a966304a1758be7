"""Streamable HTTP: answers initialize with an unusable Mcp-Session-Id. `--id`:
  control   a session id with control characters (0x01, 0x7F): not a valid header value;
  unknown   a well-formed id that the server then does not recognise: every later request
            carrying it gets 404 (as if the session had ended at once);
  non-ascii a session id with non-ASCII bytes (UTF-8 "é").
Everything else is answered as the correct HTTP server does."""

import mcpbase

KINDS = {"control": "s-\x01bad\x7fid", "unknown": "s-forgotten", "non-ascii": "s-caf\u00e9"}
kind = mcpbase.arg("id", "control")
if kind not in KINDS:
    raise SystemExit(f"unknown --id {kind}; kinds: {', '.join(KINDS)}")


class BadSession(mcpbase.Handler):
    def reply(self, mcp, msg, answer, headers):
        if msg.get("method") == "initialize":
            headers = [(k, v) for k, v in headers if k != "Mcp-Session-Id"]
            headers.append(("Mcp-Session-Id", KINDS[kind]))
        return super().reply(mcp, msg, answer, headers)


mcpbase.serve_http(handler=BadSession)
