"""Pure content: a Gmail message resource or attachment bytes in, bounded readable text out. No I/O, no MCP SDK."""
