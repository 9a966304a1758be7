"""A correct MCP server over stdio (the zoo's control row): two tools, echo and add."""

import mcpbase

mcpbase.serve_stdio(mcpbase.Mcp("correct"))
