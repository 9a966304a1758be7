"""stdio: once initialized, sends sampling/createMessage and roots/list requests to the client
in a tight loop, never waiting for the answers (which it reads and drops), while answering
every request correctly. Single-threaded, as most servers are: while a write to stdout blocks,
it reads nothing."""

import mcpbase


def requests():
    n = 0
    sampling = {
        "messages": [{"role": "user", "content": {"type": "text", "text": "Say hi."}}],
        "maxTokens": 16,
    }
    while True:
        n += 1
        yield mcpbase.line(
            {"jsonrpc": "2.0", "id": f"srv-{n}", "method": "sampling/createMessage",
             "params": sampling}
        )
        n += 1
        yield mcpbase.line({"jsonrpc": "2.0", "id": f"srv-{n}", "method": "roots/list"})


class Loop(mcpbase.Mcp):
    def on_initialized(self):
        self.pump = requests()


mcpbase.serve_stdio(Loop("server-request-loop"))
