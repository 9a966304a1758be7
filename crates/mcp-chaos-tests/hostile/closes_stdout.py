"""stdio: closes its stdout at once, before initialize, and stays alive reading stdin until
it closes."""

import os

import mcpbase

os.close(1)


class Closed(mcpbase.Mcp):
    def handle(self, msg):
        return None


mcpbase.serve_stdio(Closed("closes-stdout"))
