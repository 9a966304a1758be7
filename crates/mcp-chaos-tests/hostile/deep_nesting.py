"""stdio: a tools/list that is valid JSON nested 500 levels deep: `--tools N` (default 20)
plain tools, and one tool, `deep`, whose inputSchema nests an object property 250 schema
levels deep (each level is two JSON levels: the schema and its `properties`). Every level is
optional, so {} is valid. The plain tools must still be tested."""

import mcpbase

LEVELS = 250


def deep_schema():
    schema = {"type": "object"}
    for _ in range(LEVELS):
        schema = {"type": "object", "properties": {"n": schema}}
    return schema


PLAIN = {
    "type": "object",
    "properties": {"n": {"type": "integer", "minimum": 0, "maximum": 100}},
    "required": ["n"],
    "additionalProperties": False,
}
count = int(mcpbase.arg("tools", "20"))
tools = [({"name": f"plain_{i:02}", "description": "A plain tool.", "inputSchema": PLAIN},
          mcpbase.accept) for i in range(count)]
tools.append(({"name": "deep", "description": "A deeply nested schema.",
               "inputSchema": deep_schema()}, mcpbase.accept))

mcpbase.serve_stdio(mcpbase.Mcp("deep-nesting", tools))
