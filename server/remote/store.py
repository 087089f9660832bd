"""The state store: what the authorization server keeps, behind one small key-value interface with expiry.

Everything the remote mode remembers (registered clients, authorization codes, tokens, consents, Google grants,
pending authorization requests, confirmation codes) is a JSON object under a (kind, key)
pair, and every entry expires. The operations are the ones a shared store offers atomically, so the same contract
holds on the embedded SQLite store (`sqlite_store.py`) and on Redis or Valkey (`redis_store.py`: `SET PX`,
`SET NX PX`, `GET`, `GETDEL`, `DEL`, a Lua `INCRBY` + `PEXPIRE`; its sweep a no-op since Redis expires keys
itself); `store_choice.open_store` picks one from `GMAIL_MCP_STORE`:

- `put(kind, key, value, ttl_s)`: write or overwrite;
- `add(kind, key, value, ttl_s)`: write only if no live entry is there; True if this call wrote it (the one
  winner among racing writers: also the primitive of a shared key ring, where the first replica to add a period's
  key wins and every other reads it);
- `get(kind, key)`: the live value or None (an expired entry is never returned, swept or not);
- `take(kind, key)`: get and delete in one step: among threads or processes racing for the same key, exactly one
  receives the value (single-use codes, pending requests);
- `delete(kind, key)`: True if a live entry was removed;
- `incr(kind, key, amount, ttl_s)`: an integer counter (counter kinds only), created at 0 with `ttl_s` on first
  use, then moved by `amount` without renewing its expiry (a fixed window: send limits, quota budgets); returns the
  new value, atomically among racing callers;
- `sweep()`: removes expired entries; returns how many;
- `ping()`: raises `StoreUnavailable` unless the store answers; `ready()` says the same as a bool (readiness).

Keys are strings chosen by the caller; secrets never become keys as they are (the ledger hashes tokens first).
Values are JSON objects; the store does not interpret them.

Time: the SQLite store measures lifetimes on its injected clock (wall-clock seconds, so entries keep their meaning
across restarts; tests move it). Redis measures them on the Redis server's own clock (milliseconds; the injected
clock is not used), so replicas whose clocks disagree still agree on what has expired.

Failures: a store that cannot be reached (Redis down, a network cut, SQLite's file locked past its timeout) raises
`StoreUnavailable`, a transient, retryable tool error with a hint; the next call after the store is back succeeds
on the same store object (the client reconnects by itself).
"""

from __future__ import annotations

import hashlib
import math
from abc import ABC, abstractmethod
from typing import Any

from server.errors import TransientError

# The kinds of entries, one namespace each. Default lifetimes live with the modules that write them.
CLIENT = "client"  # registered OAuth clients (dynamic registration) and fetched metadata documents (CIMD cache)
CODE = "code"  # authorization codes, by hash
SPENT_CODE = "spent_code"  # a redeemed code's hash -> its grant, so a replay can revoke what it issued
ACCESS = "access"  # access tokens, by hash
ISSUED = "issued"  # an access token's hash, kept past its expiry: an expired token is told from a made-up one
REFRESH = "refresh"  # refresh tokens, by hash
ROTATED = "rotated"  # a refresh token just rotated, by hash -> the pair it was exchanged for (grace window)
RETIRED = "retired"  # a rotated refresh token, by hash -> its grant: a use after the grace window revokes it
GRANT = "grant"  # one sign-in of one person for one client: the family its tokens belong to
CONSENT = "consent"  # a person's consent for a client and scopes
GOOGLE = "google"  # a person's Google grant (refresh token sealed with Fernet)
PENDING = "pending"  # authorization requests in flight (state), until the browser comes back
CONFIRM = "confirm"  # confirmation codes for sends and other writes, by hash: redeemed once (`take`)
CLEANUP = "cleanup"  # previewed cleanups (ids, progress, a run's lease), by hash of person, account and preview
KEYRING = "keyring"  # unused: the `requestState` ring is derived from the vault key instead (key_ring.py)
KINDS = (
    CLIENT,
    CODE,
    SPENT_CODE,
    ACCESS,
    ISSUED,
    REFRESH,
    ROTATED,
    RETIRED,
    GRANT,
    CONSENT,
    GOOGLE,
    PENDING,
    CONFIRM,
    CLEANUP,
    KEYRING,
)
# Counter kinds (`incr` only; their values are integers, not JSON objects).
SENT = "sent"  # sends per person per window (the send limit)
QUOTA = "quota"  # Gmail quota units spent per person per window (the quota budget)
RATE = "rate"  # requests per caller per window (e.g. dynamic registrations per address)
COUNTER_KINDS = (SENT, QUOTA, RATE)

STORE_HINT = (
    "The server's state store is unreachable for the moment: retry the call in a few seconds; the server "
    "reconnects by itself when the store is back. If it keeps failing, the operator should check the store named "
    "by GMAIL_MCP_STORE and the replica's readiness endpoint /readyz."
)


class StoreUnavailable(TransientError):
    """The state store could not be reached or did not answer; the call may be retried."""

    default_hint = STORE_HINT


def secret_key(secret: str) -> str:
    """The key an opaque secret (a token, a code) is stored under: its SHA-256, hex. The secret itself is never
    stored; tokens are random (`secrets.token_urlsafe`), so a plain hash cannot be reversed by guessing."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def check_kind(kind: str) -> str:
    if kind not in KINDS:
        raise ValueError(f"unknown kind of state entry {kind!r}; known: {', '.join(KINDS)}")
    return kind


def check_counter_kind(kind: str) -> str:
    if kind not in COUNTER_KINDS:
        raise ValueError(f"unknown kind of counter {kind!r}; known: {', '.join(COUNTER_KINDS)}")
    return kind


def check_amount(amount: int) -> int:
    if isinstance(amount, bool) or not isinstance(amount, int):
        raise TypeError(f"counters move by whole numbers, not {amount!r}")
    return amount


def check_ttl(ttl_s: float) -> float:
    if not (ttl_s > 0 and math.isfinite(ttl_s)):
        raise ValueError(f"every state entry expires: ttl_s must be positive and finite, got {ttl_s!r}")
    return float(ttl_s)


class StateStore(ABC):
    """The interface; see the module docstring for each operation's contract. Implementations are thread-safe."""

    @abstractmethod
    def put(self, kind: str, key: str, value: dict[str, Any], ttl_s: float) -> None: ...

    @abstractmethod
    def add(self, kind: str, key: str, value: dict[str, Any], ttl_s: float) -> bool: ...

    @abstractmethod
    def get(self, kind: str, key: str) -> dict[str, Any] | None: ...

    def get_many(self, items: list[tuple[str, str]]) -> list[dict[str, Any] | None]:
        """`get` of each (kind, key), in order; a store that can reads them in one round trip (Redis: MGET)."""
        return [self.get(kind, key) for kind, key in items]

    @abstractmethod
    def take(self, kind: str, key: str) -> dict[str, Any] | None: ...

    @abstractmethod
    def delete(self, kind: str, key: str) -> bool: ...

    @abstractmethod
    def incr(self, kind: str, key: str, amount: int, ttl_s: float) -> int: ...

    @abstractmethod
    def sweep(self) -> int: ...

    @abstractmethod
    def ping(self) -> None: ...

    def ready(self) -> bool:
        """Whether the store answers now (readiness: `/readyz`); never raises for an unreachable store."""
        try:
            self.ping()
        except StoreUnavailable:
            return False
        return True

    def close(self) -> None:  # noqa: B027 - optional for implementations without resources
        """Releases connections; the store is not used afterwards."""
