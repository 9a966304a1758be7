"""stdio: a correct server (echo and add) whose first tools/call, across restarts (a file in
$HOSTILE_STATE_DIR remembers it), blocks the whole server for 25 s before it is answered: slow
once, then healthy. With the default 10 s deadline the call and the liveness ping after it go
unanswered, the restarted server answers at once, and nothing is wedged."""

import os
import time

import mcpbase

STATE = os.path.join(os.environ.get("HOSTILE_STATE_DIR", "."), "slow-once.slept")


class SlowOnce(mcpbase.Mcp):
    def request(self, method, params, id_):
        if method == "tools/call" and not os.path.exists(STATE):
            open(STATE, "w").close()
            time.sleep(25)
        return super().request(method, params, id_)


mcpbase.serve_stdio(SlowOnce("slow-once"))
