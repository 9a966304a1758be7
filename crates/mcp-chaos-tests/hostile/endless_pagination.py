"""stdio: tools/list never ends: every page holds one new tool (tool_N) and a nextCursor to the
next page, forever. Each listed tool is real: calling it checks its arguments and answers."""

import mcpbase

SCHEMA = {
    "type": "object",
    "properties": {"n": {"type": "integer", "minimum": 0, "maximum": 100}},
    "required": ["n"],
    "additionalProperties": False,
}


def tool(n):
    return {"name": f"tool_{n}", "description": f"Tool number {n}.", "inputSchema": SCHEMA}


class Endless(mcpbase.Mcp):
    def tools_list(self, params):
        cursor = (params or {}).get("cursor") or "page-0"
        try:
            n = int(str(cursor).removeprefix("page-"))
        except ValueError:
            raise mcpbase.RpcError(mcpbase.INVALID_PARAMS, f"tools/list: unknown cursor {cursor!r}")
        return {"tools": [tool(n)], "nextCursor": f"page-{n + 1}"}

    def tools_call(self, params):
        name = params.get("name") if isinstance(params, dict) else None
        if isinstance(name, str) and name.startswith("tool_") and name[5:].isdigit():
            self.by_name[name] = (tool(int(name[5:])), mcpbase.accept)
        return super().tools_call(params)


mcpbase.serve_stdio(Endless("endless-pagination", tools=[]))
