"""Starts the Gmail MCP server inside the Claude Desktop extension (MCPB, server type `uv`).

The host runs `uv run --directory <extension folder> gmail_mcp_extension.py`; uv installs the dependencies
of pyproject.toml, and this folder (the `server` package beside this file) is on the path. The same as the
`gmail-mcp` command: nothing but MCP on stdout, logs on stderr.
"""

from server.main import console_main

if __name__ == "__main__":
    console_main()
