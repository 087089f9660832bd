"""Which state store a deployment uses: `GMAIL_MCP_STORE` decides, at start-up, once.

- unset or empty: the embedded SQLite store in `GMAIL_MCP_STATE_DIR` (one process, or several on one machine
  sharing the file);
- `redis://[[user]:password@]host[:port][/db]` or `rediss://...` (TLS): Redis or Valkey, shared by every replica.
  Client options may follow in the query, e.g. `rediss://:pw@store:6380/0?ssl_ca_certs=/etc/gmail-mcp/ca.pem`.

Keys in Redis are namespaced per deployment: `GMAIL_MCP_STORE_NAMESPACE`, else `gmail-mcp:` plus the host and path
of `GMAIL_MCP_PUBLIC_URL` (the replicas of one deployment share that URL, since tokens are issued for it), else
`gmail-mcp`. Two deployments on one Redis then never read each other's entries.

A store that cannot be reached at start-up raises `StoreUnavailable` with a message that says so (the caller exits
non-zero); a value that is not a store URL raises `ValueError`. Neither message carries the password.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable, Mapping
from urllib.parse import urlsplit

from .sqlite_store import FILE_NAME, open_state_store, state_dir
from .store import StateStore, StoreUnavailable

STORE_ENV = "GMAIL_MCP_STORE"
NAMESPACE_ENV = "GMAIL_MCP_STORE_NAMESPACE"
PUBLIC_URL_ENV = "GMAIL_MCP_PUBLIC_URL"
DEFAULT_NAMESPACE = "gmail-mcp"
MAX_NAMESPACE = 200
SCHEMES = ("redis", "rediss")


def store_namespace(env: Mapping[str, str]) -> str:
    """The prefix of every key this deployment writes to a shared store (see the module docstring)."""
    configured = (env.get(NAMESPACE_ENV) or "").strip()
    if configured:
        if len(configured) > MAX_NAMESPACE or any(character.isspace() for character in configured):
            raise ValueError(f"{NAMESPACE_ENV} must be one word of at most {MAX_NAMESPACE} characters, without spaces")
        return configured
    public = urlsplit((env.get(PUBLIC_URL_ENV) or "").strip())
    if not public.hostname:
        return DEFAULT_NAMESPACE
    port = f":{public.port}" if public.port else ""
    return f"{DEFAULT_NAMESPACE}:{public.hostname.lower()}{port}{public.path.rstrip('/')}"


def store_url(env: Mapping[str, str]) -> str | None:
    """`GMAIL_MCP_STORE` checked: None for the embedded store, else a redis:// or rediss:// URL."""
    url = (env.get(STORE_ENV) or "").strip()
    if not url:
        return None
    scheme = urlsplit(url).scheme.lower()
    if scheme not in SCHEMES:
        shown = f"starts with {scheme}://" if scheme else "is not a URL"
        raise ValueError(
            f"{STORE_ENV} must be a redis:// or rediss:// URL (Redis or Valkey), or unset for the embedded SQLite "
            f"store; the value given {shown}"
        )
    return url


def open_store(env: Mapping[str, str] | None = None, clock: Callable[[], float] = time.time) -> StateStore:
    """The state store `env` names, checked to answer now. `clock` times the SQLite store only (Redis keeps time
    by its own clock)."""
    env = dict(os.environ) if env is None else dict(env)
    url = store_url(env)
    if url is None:
        try:
            return open_state_store(env, clock)
        except (OSError, sqlite3.Error, StoreUnavailable) as exc:
            raise StoreUnavailable(
                f"the embedded state store {state_dir(env) / FILE_NAME} cannot be opened at start-up: {exc}. "
                f"Make {state_dir(env)} writable for this server, or point GMAIL_MCP_STATE_DIR elsewhere."
            ) from exc
    from .redis_store import RedisStore  # the client is imported only by deployments that use it

    store = RedisStore(url, store_namespace(env))
    try:
        store.ping()
    except TypeError as exc:  # an option in the URL's query that the client does not take (seen on connecting)
        store.close()
        raise ValueError(f"{STORE_ENV} names an option the Redis client does not take: {exc}") from exc
    except StoreUnavailable as exc:
        store.close()
        detail = str(exc.__cause__ or exc).rstrip(".")
        raise StoreUnavailable(
            f"the state store at {store.address} ({STORE_ENV}) cannot be reached at start-up ({detail}). "
            f"Start it or fix {STORE_ENV}; this server does not start without its store."
        ) from exc
    return store
