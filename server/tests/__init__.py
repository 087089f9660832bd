"""The test suite: pure functions, the client against the emulator over HTTP, the server through MCP sessions."""
