"""stdio: answers initialize correctly, then wedges. `--mode`:
  silent         reads everything, answers nothing;
  wrong-ids      answers every request, each with an id it was never sent;
  invalid-utf8   answers every request with a frame carrying invalid UTF-8 bytes;
  closed-stdout  closes its stdout, and goes on reading stdin until it closes.
The process stays alive in every mode until stdin closes."""

import os

import mcpbase

MODES = ("silent", "wrong-ids", "invalid-utf8", "closed-stdout")
mode = mcpbase.arg("mode", "silent")
if mode not in MODES:
    raise SystemExit(f"unknown --mode {mode}; modes: {', '.join(MODES)}")


class Wedge(mcpbase.Mcp):
    wedged = False

    def handle_frame(self, raw):
        if self.wedged and mode == "invalid-utf8" and raw.lstrip().startswith(b"["):
            return b"\xff\xfe\n"  # a batch: one unreadable line
        return super().handle_frame(raw)

    def handle(self, msg):
        if not self.wedged:
            answer = super().handle(msg)
            if isinstance(msg, dict) and msg.get("method") == "initialize" and "result" in answer:
                self.wedged = True
                if mode == "closed-stdout":
                    os.write(1, mcpbase.line(answer))
                    os.close(1)
                    return None
            return answer
        answer = super().handle(msg)
        if answer is None or mode in ("silent", "closed-stdout"):
            return None
        if mode == "wrong-ids":
            id_ = answer.get("id")
            answer["id"] = id_ + 1_000_000 if isinstance(id_, int) else f"{id_}-not-yours"
            return answer
        # invalid-utf8: the right id, an unreadable body.
        return (b'{"jsonrpc":"2.0","id":' + mcpbase.json.dumps(answer.get("id")).encode()
                + b',"result":{"text":"\xff\xfe\xc3\x28"}}\n')


mcpbase.serve_stdio(Wedge("wedge"))
