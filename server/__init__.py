"""Gmail MCP server: search and read Gmail from an MCP client over stdio."""

__version__ = "0.1.0"
