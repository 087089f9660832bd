"""The state store on SQLite: embedded, so `--http --auth oauth` runs with nothing else installed.

One file, `auth-state.sqlite3` in `GMAIL_MCP_STATE_DIR` (default: `state/` in the server's home folder), created
with mode 0600 in a folder created 0700 (SQLite gives its `-wal` and `-shm` files the database file's mode). WAL
journaling lets readers go on while one writer writes; every write is one statement or one `BEGIN IMMEDIATE`
transaction, so `add` and `take` stay atomic among threads (one connection per thread) and among processes sharing
the file. Expired rows are invisible at once and removed by `sweep()`. Counters (`incr`) are rows too, their value a
JSON integer. An `OperationalError` (the file locked past the busy timeout, a full or vanished disk) is raised as
`StoreUnavailable`, like an unreachable Redis.
"""

from __future__ import annotations

import functools
import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

from server.runtime.config import home_dir

from .store import (
    StateStore,
    StoreUnavailable,
    check_amount,
    check_counter_kind,
    check_kind,
    check_ttl,
)

STATE_DIR_ENV = "GMAIL_MCP_STATE_DIR"
FILE_NAME = "auth-state.sqlite3"
BUSY_TIMEOUT_S = 30.0
SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    expires_at REAL NOT NULL,
    PRIMARY KEY (kind, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS entries_by_expiry ON entries (expires_at);
"""


def state_dir(env: Mapping[str, str] | None = None) -> Path:
    """`GMAIL_MCP_STATE_DIR`, else `state/` in the home folder (GMAIL_MCP_HOME or the per-user config folder)."""
    env = dict(os.environ) if env is None else dict(env)
    configured = (env.get(STATE_DIR_ENV) or "").strip()
    return Path(configured).expanduser() if configured else home_dir(env) / "state"


def open_state_store(env: Mapping[str, str] | None = None, clock: Callable[[], float] = time.time) -> SQLiteStore:
    return SQLiteStore(state_dir(env) / FILE_NAME, clock=clock)


P = ParamSpec("P")
R = TypeVar("R")


def _reachable(method: Callable[Concatenate[SQLiteStore, P], R]) -> Callable[Concatenate[SQLiteStore, P], R]:
    """Raises SQLite's operational failures as `StoreUnavailable` (transient, retryable)."""

    @functools.wraps(method)
    def wrapper(self: SQLiteStore, *args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(self, *args, **kwargs)
        except sqlite3.OperationalError as exc:
            raise StoreUnavailable(f"the state store {self.path} cannot be used now: {exc}") from exc

    return wrapper


def _private_file(path: Path) -> None:
    """Creates the folder (0700) and the database file (0600) before SQLite opens it; tightens an existing file."""
    if not path.parent.exists():
        path.parent.mkdir(parents=True, mode=0o700)
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    os.close(descriptor)
    os.chmod(path, 0o600)


class SQLiteStore(StateStore):
    """`StateStore` on one SQLite file; `clock` gives wall-clock seconds (injected by tests)."""

    def __init__(self, path: str | Path, clock: Callable[[], float] = time.time) -> None:
        self.path = Path(path)
        self._clock = clock
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._closed = False
        _private_file(self.path)
        connection = self._connection()
        connection.execute("PRAGMA journal_mode=WAL")
        connection.executescript(SCHEMA)

    def _connection(self) -> sqlite3.Connection:
        if self._closed:
            raise RuntimeError("the state store is closed")
        connection = getattr(self._local, "connection", None)
        if connection is None:
            # Autocommit mode: each statement commits by itself; multi-statement steps open BEGIN IMMEDIATE.
            # Used by this thread only; `close()` may close it from another (hence check_same_thread=False).
            connection = sqlite3.connect(
                self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
            )
            connection.execute("PRAGMA synchronous=NORMAL")
            self._local.connection = connection
            with self._lock:
                self._connections.append(connection)
        return connection

    @_reachable
    def put(self, kind: str, key: str, value: dict[str, Any], ttl_s: float) -> None:
        expires_at = self._clock() + check_ttl(ttl_s)
        self._connection().execute(
            "INSERT INTO entries (kind, key, value, expires_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (kind, key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at",
            (check_kind(kind), key, _dump(value), expires_at),
        )

    @_reachable
    def add(self, kind: str, key: str, value: dict[str, Any], ttl_s: float) -> bool:
        now = self._clock()
        cursor = self._connection().execute(
            "INSERT INTO entries (kind, key, value, expires_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (kind, key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at "
            "WHERE entries.expires_at <= ?",
            (check_kind(kind), key, _dump(value), now + check_ttl(ttl_s), now),
        )
        return cursor.rowcount == 1

    @_reachable
    def get(self, kind: str, key: str) -> dict[str, Any] | None:
        row = (
            self._connection()
            .execute(
                "SELECT value FROM entries WHERE kind = ? AND key = ? AND expires_at > ?",
                (check_kind(kind), key, self._clock()),
            )
            .fetchone()
        )
        return None if row is None else json.loads(row[0])

    @_reachable
    def take(self, kind: str, key: str) -> dict[str, Any] | None:
        connection = self._connection()
        connection.execute("BEGIN IMMEDIATE")  # the write lock first: no other taker reads the row in between
        try:
            row = connection.execute(
                "SELECT value FROM entries WHERE kind = ? AND key = ? AND expires_at > ?",
                (check_kind(kind), key, self._clock()),
            ).fetchone()
            if row is not None:
                connection.execute("DELETE FROM entries WHERE kind = ? AND key = ?", (kind, key))
            connection.execute("COMMIT")
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        return None if row is None else json.loads(row[0])

    @_reachable
    def delete(self, kind: str, key: str) -> bool:
        cursor = self._connection().execute(
            "DELETE FROM entries WHERE kind = ? AND key = ? AND expires_at > ?", (check_kind(kind), key, self._clock())
        )
        return cursor.rowcount == 1

    @_reachable
    def sweep(self) -> int:
        cursor = self._connection().execute("DELETE FROM entries WHERE expires_at <= ?", (self._clock(),))
        return cursor.rowcount

    @_reachable
    def incr(self, kind: str, key: str, amount: int, ttl_s: float) -> int:
        check_counter_kind(kind)
        check_amount(amount)
        lifetime = check_ttl(ttl_s)
        connection = self._connection()
        connection.execute("BEGIN IMMEDIATE")  # read and write under the write lock: no increment is lost
        try:
            now = self._clock()
            row = connection.execute(
                "SELECT value FROM entries WHERE kind = ? AND key = ? AND expires_at > ?", (kind, key, now)
            ).fetchone()
            if row is None:  # a new window: starts at `amount`, ends `ttl_s` from now
                value = amount
                connection.execute(
                    "INSERT INTO entries (kind, key, value, expires_at) VALUES (?, ?, ?, ?) ON CONFLICT (kind, key) "
                    "DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at",
                    (kind, key, json.dumps(value), now + lifetime),
                )
            else:  # the window goes on: its end does not move
                value = int(json.loads(row[0])) + amount
                connection.execute(
                    "UPDATE entries SET value = ? WHERE kind = ? AND key = ?", (json.dumps(value), kind, key)
                )
            connection.execute("COMMIT")
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        return value

    @_reachable
    def ping(self) -> None:
        self._connection().execute("SELECT count(*) FROM entries WHERE 0").fetchone()

    @_reachable
    def remaining_ms(self, kind: str, key: str) -> int | None:
        """Milliseconds left to a live entry or counter on the store's clock, None for none. For tests and tools."""
        now = self._clock()
        row = (
            self._connection()
            .execute("SELECT expires_at FROM entries WHERE kind = ? AND key = ? AND expires_at > ?", (kind, key, now))
            .fetchone()
        )
        return None if row is None else round((row[0] - now) * 1000)

    def count(self, kind: str | None = None) -> int:
        """Rows held, expired or not (for tests and metrics)."""
        if kind is None:
            return self._connection().execute("SELECT count(*) FROM entries").fetchone()[0]
        return self._connection().execute("SELECT count(*) FROM entries WHERE kind = ?", (kind,)).fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._closed = True
            connections, self._connections = self._connections, []
        for connection in connections:
            connection.close()


def _dump(value: dict[str, Any]) -> str:
    if not isinstance(value, dict):
        raise TypeError(f"state entries are JSON objects, not {type(value).__name__}")
    return json.dumps(value, separators=(",", ":"), sort_keys=True)
