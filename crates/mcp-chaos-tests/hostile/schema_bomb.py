"""stdio: pathological inputSchemas. By default 5 000 tools: the first four carry a recursive
$ref, an enum of 100 000 values, the pattern ^(a+)+$ and 1 000 required properties, the other
4 996 a small plain schema. `--only KIND` lists just one kind: recursive-ref, enum, redos,
required (one tool each) or many-tools (5 000 plain tools). Every tool checks its arguments
(an isError result when they break the schema; the ReDoS pattern is checked with its linear
equivalent ^a+$) and answers "ok"."""

import mcpbase

RECURSIVE_REF = {
    "type": "object",
    "properties": {"tree": {"$ref": "#/$defs/node"}},
    "required": ["tree"],
    "$defs": {
        "node": {
            "type": "object",
            "properties": {
                "value": {"type": "string", "maxLength": 20},
                "children": {"type": "array", "items": {"$ref": "#/$defs/node"}},
            },
            "required": ["value", "children"],
        }
    },
}
ENUM = {
    "type": "object",
    "properties": {"choice": {"type": "string", "enum": [f"v{i}" for i in range(100_000)]}},
    "required": ["choice"],
}
REDOS = {
    "type": "object",
    "properties": {"word": {"type": "string", "pattern": "^(a+)+$"}},
    "required": ["word"],
}
REQUIRED = {
    "type": "object",
    "properties": {f"p{i:04}": {"type": "string", "maxLength": 8} for i in range(1000)},
    "required": [f"p{i:04}" for i in range(1000)],
}
PLAIN = {
    "type": "object",
    "properties": {"n": {"type": "integer", "minimum": 0, "maximum": 100}},
    "required": ["n"],
    "additionalProperties": False,
}
KINDS = {"recursive-ref": RECURSIVE_REF, "enum": ENUM, "redos": REDOS, "required": REQUIRED}


def tool(name, schema):
    return ({"name": name, "description": f"A tool with a {name} schema.",
             "inputSchema": schema}, mcpbase.accept)


only = mcpbase.arg("only")
if only in KINDS:
    tools = [tool(only.replace("-", "_"), KINDS[only])]
elif only == "many-tools":
    tools = [tool(f"plain_{i:04}", PLAIN) for i in range(5000)]
elif only is None:
    tools = [tool(k.replace("-", "_"), s) for k, s in KINDS.items()]
    tools += [tool(f"plain_{i:04}", PLAIN) for i in range(4, 5000)]
else:
    raise SystemExit(f"unknown --only {only}; kinds: {', '.join(KINDS)}, many-tools")

mcpbase.serve_stdio(mcpbase.Mcp("schema-bomb", tools))
