"""A small MCP server over Streamable HTTP, written with the official Python SDK (`mcp` 2.x),
for mcp-chaos's real-server checks. Binds 127.0.0.1 only; the port comes from $PORT.

Tools: `add` (two numbers, structured output), `lookup` (a record by id; unknown ids are a
tool error), `fetch_status` (GETs a URL and reports its HTTP status; give it the fake upstream).
"""

import os
import urllib.error
import urllib.request

from mcp.server.mcpserver import MCPServer

mcp = MCPServer("mcp-chaos-py-http", version="1.0.0")

RECORDS = {1: "alpha", 2: "beta", 3: "gamma"}


@mcp.tool()
def add(a: float, b: float) -> dict:
    """Adds two numbers."""
    return {"sum": a + b}


@mcp.tool()
def lookup(record_id: int) -> str:
    """Returns the name of a record."""
    if record_id not in RECORDS:
        raise ValueError(f"No record with id {record_id}; known ids are 1, 2 and 3.")
    return RECORDS[record_id]


@mcp.tool()
def fetch_status(url: str) -> str:
    """GETs a URL (loopback only) and reports its HTTP status."""
    if not (url.startswith("http://127.0.0.1") or url.startswith("http://localhost")):
        raise ValueError("Only loopback URLs are allowed.")
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return f"{url} answered {response.status}"
    except urllib.error.HTTPError as e:
        raise ValueError(f"{url} answered {e.code}; check the URL.") from None
    except (urllib.error.URLError, TimeoutError) as e:
        raise ValueError(f"Could not reach {url} ({e}); retry later.") from None


if __name__ == "__main__":
    mcp.run(
        transport="streamable-http",
        host="127.0.0.1",
        port=int(os.environ.get("PORT", "8000")),
    )
