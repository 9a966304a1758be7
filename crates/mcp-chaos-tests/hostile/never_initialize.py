"""stdio: never answers anything, initialize included: it reads stdin and stays silent until
stdin closes."""

import mcpbase


class Never(mcpbase.Mcp):
    def handle(self, msg):
        return None


mcpbase.serve_stdio(Never("never-initialize"))
