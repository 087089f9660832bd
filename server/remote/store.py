"""The state store: what the authorization server keeps, behind one small key-value interface with expiry.

Everything the remote mode remembers (registered clients, authorization codes, tokens, consents, Google grants,
pending authorization requests) is a JSON object under a (kind, key) pair, and every entry expires. The operations
are the ones a shared store offers atomically, so a Redis or Valkey implementation is a small class later
(`SET EX`, `SET NX EX`, `GET`, `GETDEL`, `DEL`; its sweep a no-op since such stores expire keys themselves):

- `put(kind, key, value, ttl_s)`: write or overwrite;
- `add(kind, key, value, ttl_s)`: write only if no live entry is there; True if this call wrote it (the one
  winner among racing writers);
- `get(kind, key)`: the live value or None (an expired entry is never returned, swept or not);
- `take(kind, key)`: get and delete in one step: among threads or processes racing for the same key, exactly one
  receives the value (single-use codes, pending requests);
- `delete(kind, key)`: True if a live entry was removed;
- `sweep()`: removes expired entries; returns how many.

Keys are strings chosen by the caller; secrets never become keys as they are (the ledger hashes tokens first).
Values are JSON objects; the store does not interpret them. Times come from the store's injected clock (wall-clock
seconds, so entries keep their meaning across restarts).
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from typing import Any

# The kinds of entries, one namespace each. Default lifetimes live with the modules that write them.
CLIENT = "client"  # registered OAuth clients (dynamic registration) and fetched metadata documents (CIMD cache)
CODE = "code"  # authorization codes, by hash
SPENT_CODE = "spent_code"  # a redeemed code's hash -> its grant, so a replay can revoke what it issued
ACCESS = "access"  # access tokens, by hash
REFRESH = "refresh"  # refresh tokens, by hash
ROTATED = "rotated"  # a refresh token just rotated, by hash -> the pair it was exchanged for (grace window)
GRANT = "grant"  # one sign-in of one person for one client: the family its tokens belong to
CONSENT = "consent"  # a person's consent for a client and scopes
GOOGLE = "google"  # a person's Google grant (refresh token sealed with Fernet)
PENDING = "pending"  # authorization requests in flight (state), until the browser comes back
KINDS = (CLIENT, CODE, SPENT_CODE, ACCESS, REFRESH, ROTATED, GRANT, CONSENT, GOOGLE, PENDING)


def secret_key(secret: str) -> str:
    """The key an opaque secret (a token, a code) is stored under: its SHA-256, hex. The secret itself is never
    stored; tokens are random (`secrets.token_urlsafe`), so a plain hash cannot be reversed by guessing."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def check_kind(kind: str) -> str:
    if kind not in KINDS:
        raise ValueError(f"unknown kind of state entry {kind!r}; known: {', '.join(KINDS)}")
    return kind


def check_ttl(ttl_s: float) -> float:
    if not ttl_s > 0:
        raise ValueError(f"every state entry expires: ttl_s must be positive, got {ttl_s!r}")
    return float(ttl_s)


class StateStore(ABC):
    """The interface; see the module docstring for each operation's contract. Implementations are thread-safe."""

    @abstractmethod
    def put(self, kind: str, key: str, value: dict[str, Any], ttl_s: float) -> None: ...

    @abstractmethod
    def add(self, kind: str, key: str, value: dict[str, Any], ttl_s: float) -> bool: ...

    @abstractmethod
    def get(self, kind: str, key: str) -> dict[str, Any] | None: ...

    @abstractmethod
    def take(self, kind: str, key: str) -> dict[str, Any] | None: ...

    @abstractmethod
    def delete(self, kind: str, key: str) -> bool: ...

    @abstractmethod
    def sweep(self) -> int: ...

    def close(self) -> None:  # noqa: B027 - optional for implementations without resources
        """Releases connections; the store is not used afterwards."""
