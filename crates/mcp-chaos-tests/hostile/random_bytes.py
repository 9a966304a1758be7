"""stdio: writes random bytes to stdout forever, from the start (default) or, with
--after-init, once initialized (answering initialize correctly first). It reads and ignores
stdin meanwhile, so a client is never blocked writing to it."""

import os
import sys

import mcpbase


def noise():
    while True:
        yield os.urandom(1 << 16)


class Noise(mcpbase.Mcp):
    def on_initialized(self):
        self.pump = noise()

    def handle(self, msg):
        return None if self.pump is not None else super().handle(msg)


mcp = Noise("random-bytes")
if "--after-init" not in sys.argv[1:]:
    mcp.pump = noise()
mcpbase.serve_stdio(mcp)
