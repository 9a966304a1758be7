"""stdio: a correct server whose second thread writes log lines to stderr forever, as fast as
the pipe takes them."""

import os
import threading

import mcpbase


def flood():
    n = 0
    while True:
        lines = []
        for _ in range(256):
            n += 1
            lines.append(f"DEBUG stderr flood line {n}: lorem ipsum dolor sit amet\n")
        mcpbase.write_all(2, "".join(lines).encode())


threading.Thread(target=flood, daemon=True).start()
mcpbase.serve_stdio(mcpbase.Mcp("stderr-flood"))
