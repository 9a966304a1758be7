"""A correct MCP server over Streamable HTTP (the zoo's HTTP control row)."""

import mcpbase

mcpbase.serve_http()
