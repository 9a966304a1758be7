"""stdio: the tool `big` answers with a 32 MiB line (twice the default --max-frame-bytes),
well formed and newline-terminated. Everything else is correct; answers that come due while a
giant line is being written are queued, in order, and written after it."""

import mcpbase

MIB = 1 << 20
SIZE_MIB = 32

BIG = {"name": "big", "description": "Answers with a 32 MiB text.",
       "inputSchema": {"type": "object", "properties": {}}}


def giant(id_):
    yield (b'{"jsonrpc":"2.0","id":' + mcpbase.json.dumps(id_).encode()
           + b',"result":{"content":[{"type":"text","text":"')
    chunk = b"a" * MIB
    for _ in range(SIZE_MIB):
        yield chunk
    yield b'"}],"isError":false}}\n'


class Giant(mcpbase.Mcp):
    def __init__(self):
        super().__init__("giant-line", mcpbase.DEFAULT_TOOLS + [(BIG, mcpbase.accept)])
        self.queue = []  # ("big", id) or an answer, in order

    def drain(self):
        while self.queue:
            item = self.queue.pop(0)
            if isinstance(item, tuple):
                yield from giant(item[1])
            else:
                yield mcpbase.line(item)

    def handle(self, msg):
        is_big = (isinstance(msg, dict) and msg.get("jsonrpc") == "2.0"
                  and msg.get("method") == "tools/call" and isinstance(msg.get("params"), dict)
                  and msg["params"].get("name") == "big" and isinstance(msg.get("id"), (int, str)))
        answer = None if is_big else super().handle(msg)
        if is_big:
            self.queue.append(("big", msg["id"]))
        elif answer is not None and self.pump is not None:
            self.queue.append(answer)
        else:
            return answer
        if self.pump is None:
            self.pump = self.drain()
        return None


mcpbase.serve_stdio(Giant())
