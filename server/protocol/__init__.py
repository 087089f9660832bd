"""MCP adapters that know nothing of Gmail: tool dispatch, compact schemas, the stdio channel and its guard."""
