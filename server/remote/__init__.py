"""The HTTP side that knows people: authorization server state, Google sign-in, token vault, state store.

One module per concern. Built so far: `store` (the small key-value interface every piece of authorization state
goes through: put, add-if-absent, get, take-once, delete, all with a time to live, and a sweep), `sqlite_store`
(its embedded implementation in `GMAIL_MCP_STATE_DIR`), `ledger` (authorization codes, access and refresh tokens
kept as SHA-256 hashes, rotation with a grace window, revocation by grant), `records` (registered clients,
consents, pending authorization requests, and each person's Google grants sealed with Fernet), `metadata` (the
RFC 9728 and RFC 8414 discovery documents and the `WWW-Authenticate` challenge), `address_guard` (where the server
may fetch from) `client_metadata` (Client ID Metadata Documents: fetched through the guard, checked, cached) and
`google_upstream` (the person's Google sign-in: the operator's Web client, PKCE, the ID token verified).
The authorization server over them: `authorization` (`AuthorizationServer`, the one entry point: its routes),
`oauth_common` (shared settings, `AllowedUsers`, the browser cookie, error answers), `clients` (CIMD or DCR
clients, registration, client authentication), `consent` (`/authorize` and the browser-bound consent page),
`callback` (Google's return: allow-list, sealed grant, our code), `token_endpoint` (token and revocation) and
`pages` (the HTML, escaped).
"""
