"""stdio: answers tools/list with a 200 MB line that never ends: the start of a response, then
200 MiB of "a", no newline, ever. It then stays alive, reading and ignoring stdin, writing
nothing more (anything it wrote would only lengthen the same line)."""

import mcpbase

MIB = 1 << 20
SIZE_MIB = 200


def endless_line(id_):
    yield b'{"jsonrpc":"2.0","id":' + mcpbase.json.dumps(id_).encode() + b',"result":{"tools":[],"x":"'
    chunk = b"a" * MIB
    for _ in range(SIZE_MIB):
        yield chunk


class Unterminated(mcpbase.Mcp):
    muted = False

    def handle(self, msg):
        if self.muted:
            return None
        if isinstance(msg, dict) and msg.get("method") == "tools/list" and "id" in msg:
            self.muted = True
            self.pump = endless_line(msg["id"])
            return None
        return super().handle(msg)


mcpbase.serve_stdio(Unterminated("unterminated-line"))
