"""The state store on Redis or Valkey: what several replicas of one deployment share (`GMAIL_MCP_STORE=redis://...`).

Through the official client (`redis` on PyPI; it speaks to Valkey as well). Each entry is one string key,
`<namespace>:<kind>:<key>`, holding the value's JSON text, and every key is written with its lifetime in
milliseconds (`PX`), so the store cannot grow without bound and `sweep()` has nothing to do: Redis expires keys
itself. Needs Redis 6.2 or newer, or any Valkey (`GETDEL`).

Atomic where it matters, each operation being one command or one Lua script (Redis runs either alone):
`add` is `SET NX PX` (one winner among racing replicas), `take` is `GETDEL` (a code redeemed once even when two
replicas are asked at the same moment), `incr` is a script of `INCRBY` and, on a new counter only, `PEXPIRE` (the
window's end never moves, and no counter is ever left without one).

Time is the Redis server's own: the injected clock of the SQLite store is not used here, so replicas whose clocks
disagree still agree on what has expired.

Failures: a refused or dropped connection, a timeout, a server still loading its data or a replica turned read-only
by a failover raise `StoreUnavailable` (transient: the tool call may be retried). The client's connection pool
reconnects by itself, so the first call after the store is back succeeds on the same object. A command is resent
once, and only when the connection was found broken (the usual case after a restart: the pooled connection is
dead); a reply that timed out is never resent, since the command may have run. Where a connection breaks after
the server ran a command and before its answer arrived, the resend errs on the safe side: `take` then finds
nothing (the code is spent, not redeemed twice), `add` reports a loss, `incr` counts twice (a limit reached early).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import urlsplit

import redis
from redis.backoff import NoBackoff
from redis.exceptions import (
    ConnectionError as RedisConnectionError,
)
from redis.exceptions import (
    ReadOnlyError,
    RedisError,
    ResponseError,
)
from redis.exceptions import (
    TimeoutError as RedisTimeoutError,
)
from redis.retry import Retry

from .store import (
    StateStore,
    StoreUnavailable,
    check_amount,
    check_counter_kind,
    check_kind,
    check_ttl,
)

CONNECT_TIMEOUT_S = 5.0  # a store that does not accept a connection within this is unavailable
COMMAND_TIMEOUT_S = 5.0  # nor one that does not answer a command
# Errors Redis answers while it cannot serve for a moment (out of memory, failover, cluster reconfiguration).
TRANSIENT_REPLIES = ("OOM", "MASTERDOWN", "TRYAGAIN", "CLUSTERDOWN", "LOADING", "BUSY")
INCR_SCRIPT = """
local value = redis.call('INCRBY', KEYS[1], ARGV[1])
if redis.call('PTTL', KEYS[1]) < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return value
"""
T = TypeVar("T")


def describe_url(url: str) -> str:
    """The store's address for messages and logs: scheme, user, host, port and database, never the password."""
    parts = urlsplit(url)
    user = f"{parts.username}@" if parts.username else ""
    port = f":{parts.port}" if parts.port else ""
    database = parts.path if parts.path not in ("", "/") else ""
    return f"{parts.scheme}://{user}{parts.hostname or 'localhost'}{port}{database}"


def milliseconds(ttl_s: float) -> int:
    """A lifetime in whole milliseconds (Redis's unit); at least one, so an entry always expires."""
    return max(1, round(check_ttl(ttl_s) * 1000))


class RedisStore(StateStore):
    """`StateStore` on Redis or Valkey at `url` (`redis://` or `rediss://` for TLS; password and database number in
    the URL, client options in its query, e.g. `?ssl_ca_certs=/path/ca.pem`), keys under `namespace`."""

    def __init__(self, url: str, namespace: str) -> None:
        if not namespace or any(character.isspace() for character in namespace):
            raise ValueError(f"the store namespace must be a non-empty word without spaces, got {namespace!r}")
        self.namespace = namespace
        self.address = describe_url(url)
        options: dict[str, Any] = {
            "socket_connect_timeout": CONNECT_TIMEOUT_S,
            "socket_timeout": COMMAND_TIMEOUT_S,
            "retry": Retry(NoBackoff(), 1, supported_errors=(RedisConnectionError,)),
            "client_name": "gmail-mcp",
        }
        # The URL's own query (e.g. `?socket_timeout=2`) takes precedence over these defaults.
        self._client = redis.Redis.from_url(url, **options)
        self._incr = self._client.register_script(INCR_SCRIPT)
        self._counting = threading.Lock()
        self.round_trips = 0  # operations sent (a resend or a script loaded anew counts once): for benchmarks

    def _key(self, kind: str, key: str) -> str:
        return f"{self.namespace}:{kind}:{key}"

    def _call(self, command: Callable[[], T]) -> T:
        with self._counting:
            self.round_trips += 1
        try:
            return command()
        except (RedisConnectionError, RedisTimeoutError, ReadOnlyError) as exc:
            raise self._unavailable(exc) from exc
        except ResponseError as exc:
            if str(exc).startswith(TRANSIENT_REPLIES):
                raise self._unavailable(exc) from exc
            raise

    def _unavailable(self, exc: RedisError) -> StoreUnavailable:
        detail = (str(exc) or type(exc).__name__).rstrip(".")
        return StoreUnavailable(f"the state store at {self.address} cannot be reached: {detail}")

    def put(self, kind: str, key: str, value: dict[str, Any], ttl_s: float) -> None:
        name, text, lifetime = self._key(check_kind(kind), key), _dump(value), milliseconds(ttl_s)
        self._call(lambda: self._client.set(name, text, px=lifetime))

    def add(self, kind: str, key: str, value: dict[str, Any], ttl_s: float) -> bool:
        name, text, lifetime = self._key(check_kind(kind), key), _dump(value), milliseconds(ttl_s)
        return bool(self._call(lambda: self._client.set(name, text, px=lifetime, nx=True)))

    def get(self, kind: str, key: str) -> dict[str, Any] | None:
        name = self._key(check_kind(kind), key)
        return _load(self._call(lambda: self._client.get(name)))

    def get_many(self, items: list[tuple[str, str]]) -> list[dict[str, Any] | None]:
        names = [self._key(check_kind(kind), key) for kind, key in items]
        return [_load(raw) for raw in self._call(lambda: self._client.mget(names))] if names else []

    def take(self, kind: str, key: str) -> dict[str, Any] | None:
        name = self._key(check_kind(kind), key)
        return _load(self._call(lambda: self._client.getdel(name)))

    def delete(self, kind: str, key: str) -> bool:
        name = self._key(check_kind(kind), key)
        return bool(self._call(lambda: self._client.delete(name)))

    def incr(self, kind: str, key: str, amount: int, ttl_s: float) -> int:
        name = self._key(check_counter_kind(kind), key)
        arguments = [check_amount(amount), milliseconds(ttl_s)]
        return int(self._call(lambda: self._incr(keys=[name], args=arguments)))

    def sweep(self) -> int:
        return 0  # Redis removes expired keys itself

    def ping(self) -> None:
        self._call(self._client.ping)

    def remaining_ms(self, kind: str, key: str) -> int | None:
        """Milliseconds left to a live entry or counter, None for none (Redis's `PTTL`; -1 would be a key without
        expiry, which this store never writes). For tests and tools."""
        name = self._key(kind, key)
        left = int(self._call(lambda: self._client.pttl(name)))
        return None if left == -2 else left

    def close(self) -> None:
        self._client.close()


def _dump(value: dict[str, Any]) -> str:
    if not isinstance(value, dict):
        raise TypeError(f"state entries are JSON objects, not {type(value).__name__}")
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def _load(raw: Any) -> dict[str, Any] | None:
    if raw is None:
        return None
    loaded = json.loads(raw)
    return loaded if isinstance(loaded, dict) else None
