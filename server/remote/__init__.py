"""The HTTP side that knows people: authorization server state, Google sign-in, token vault, state store.

One module per concern. Built so far: `store` (the small key-value interface every piece of authorization state
goes through: put, add-if-absent, get, take-once, delete, all with a time to live, and a sweep), `sqlite_store`
(its embedded implementation in `GMAIL_MCP_STATE_DIR`), `ledger` (authorization codes, access and refresh tokens
kept as SHA-256 hashes, rotation with a grace window, revocation by grant) and `records` (registered clients,
consents, pending authorization requests, and each person's Google grant sealed with Fernet).
"""
