"""The HTTP side that knows people: authorization server state, Google sign-in, token vault, state store.

One module per concern. Built so far: `store` (the small key-value interface every piece of authorization state
goes through: put, add-if-absent, get, take-once, delete, all with a time to live, and a sweep), `sqlite_store`
(its embedded implementation in `GMAIL_MCP_STATE_DIR`), `ledger` (authorization codes, access and refresh tokens
kept as SHA-256 hashes, rotation with a grace window, revocation by grant), `records` (registered clients,
consents, pending authorization requests, and each person's Google grants sealed with Fernet), `metadata` (the
RFC 9728 and RFC 8414 discovery documents and the `WWW-Authenticate` challenge), `address_guard` (where the server
may fetch from) `client_metadata` (Client ID Metadata Documents: fetched through the guard, checked, cached) and
`google_upstream` (the person's Google sign-in: the operator's Web client, PKCE, the ID token verified).
"""
