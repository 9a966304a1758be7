"""stdio: exits (code 3, a traceback-like line on stderr) when asked tools/list. By default only
the first time across restarts (a file in $HOSTILE_STATE_DIR remembers it), so a client that
lists the tools again after the restart can test them; with --always, on every tools/list."""

import os
import sys

import mcpbase

STATE = os.path.join(os.environ.get("HOSTILE_STATE_DIR", "."), "exit-on-tools-list.crashed")
ALWAYS = "--always" in sys.argv[1:]


class ExitOnList(mcpbase.Mcp):
    def request(self, method, params, id_):
        if method == "tools/list" and (ALWAYS or not os.path.exists(STATE)):
            open(STATE, "w").close()
            print("Traceback (most recent call last):\n  RuntimeError: tools/list crashed",
                  file=sys.stderr, flush=True)
            os._exit(3)
        return super().request(method, params, id_)


mcpbase.serve_stdio(ExitOnList("exit-on-tools-list"))
