"""A real Redis (or Valkey) server for the tests: started from PATH on a free loopback port, stopped after.

`redis_server` (session-scoped: one server per test worker) runs `valkey-server` or `redis-server` (the path in
GMAIL_MCP_TEST_REDIS_SERVER first) with no persistence (`--save ''`, no append-only file) in a temporary folder,
bound to 127.0.0.1 only. Where no binary is found, the tests that need one are skipped with the reason, except
in CI (`CI` set): there a missing server is a failure, since `.ci/run` installs it.

`RedisServer` is also used directly by tests that stop and restart their own server (on the same port), or start
one with a password or TLS. Each test gets its own key namespace (`fresh_namespace`), so tests sharing the
session's server never see each other's keys. The plugin comes through `remote_state.py`.
"""

from __future__ import annotations

import os
import shutil
import socket
import sqlite3
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from server.remote.redis_store import RedisStore
from server.remote.sqlite_store import SQLiteStore
from server.remote.store import StateStore
from server.tests.support.remote_state import Clock

BINARY_ENV = "GMAIL_MCP_TEST_REDIS_SERVER"
BINARIES = ("valkey-server", "redis-server")
START_ATTEMPTS = 3  # a free port can be taken by another process between our probe and the server's bind
READY_POLLS = 400  # polls 25 ms apart while the server starts (a start normally takes a few)


def server_binary() -> str | None:
    configured = os.environ.get(BINARY_ENV, "").strip()
    if configured:
        return configured
    return next((found for name in BINARIES if (found := shutil.which(name))), None)


def require_binary() -> str:
    """The server binary, else a skip (locally) or a failure (CI), with the reason."""
    found = server_binary()
    if found:
        return found
    reason = (
        "no valkey-server or redis-server on PATH (install Debian's redis-server, or set "
        f"{BINARY_ENV}): the shared-store tests need a real server"
    )
    if os.environ.get("CI"):
        pytest.fail(f"{reason}; CI must have it (.ci/run installs it)", pytrace=False)
    pytest.skip(reason)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def fresh_namespace() -> str:
    return f"test-{uuid.uuid4().hex[:12]}"


class RedisServer:
    """One `redis-server` process in `folder`; `start()` after `stop()` comes back on the same port. With `tls`
    (certificate file, key file), it speaks TLS only; `extra` arguments go to the server as they are."""

    def __init__(self, binary: str, folder: Path, *extra: str, tls: tuple[Path, Path] | None = None) -> None:
        self.binary = binary
        self.folder = folder
        self.extra = list(extra)
        self.tls = tls
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"{'rediss' if self.tls else 'redis'}://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        for _ in range(START_ATTEMPTS):
            port = self.port or free_port()
            if self._launch(port):
                self.port = port
                return self
        raise RuntimeError(f"redis-server did not start; its log:\n{self.log_tail()}")

    def _launch(self, port: int) -> bool:
        self.folder.mkdir(parents=True, exist_ok=True)
        argv = [self.binary, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--daemonize", "no"]
        argv += ["--dir", str(self.folder), "--logfile", str(self.folder / "server.log")]
        if self.tls is None:
            argv += ["--port", str(port)]
        else:
            certificate, key = self.tls
            argv += ["--port", "0", "--tls-port", str(port), "--tls-auth-clients", "no"]
            argv += ["--tls-cert-file", str(certificate), "--tls-key-file", str(key)]
        self.process = subprocess.Popen(
            [*argv, *self.extra], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        for _ in range(READY_POLLS):
            if self.process.poll() is not None:
                return False
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    return True
            except OSError:
                time.sleep(0.025)
        self.stop()
        return False

    def stop(self) -> None:
        """Stops the server (SIGTERM, then SIGKILL if it lingers); nothing survives, since nothing is saved."""
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def log_tail(self) -> str:
        log = self.folder / "server.log"
        return "\n".join(log.read_text(errors="replace").splitlines()[-20:]) if log.exists() else "(no log)"


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    server = RedisServer(require_binary(), tmp_path_factory.mktemp("redis")).start()
    yield server
    server.stop()


@pytest.fixture
def redis_namespace() -> str:
    return fresh_namespace()


@pytest.fixture
def redis_store(redis_server: RedisServer, redis_namespace: str) -> Iterator[RedisStore]:
    """A `RedisStore` on the session's server, in a namespace of its own."""
    opened = RedisStore(redis_server.url, redis_namespace)
    yield opened
    opened.close()


class StoreUnderTest:
    """A store plus what a contract test needs to look at it from outside: `expire` ends an entry now (as its
    lifetime running out would), `remaining_ms` reads its lifetime left, `replica()` opens a second store object on
    the same data (another process or replica)."""

    def __init__(self, name: str, store: StateStore, tmp_path: Path, clock: Clock, server: RedisServer | None):
        self.name, self.store, self._tmp_path, self.clock, self._server = name, store, tmp_path, clock, server
        self._opened: list[StateStore] = []
        self._raw_redis: redis.Redis | None = None
        self._raw_sqlite: sqlite3.Connection | None = None

    def expire(self, kind: str, key: str) -> None:
        if isinstance(self.store, RedisStore):
            if self._raw_redis is None:
                self._raw_redis = redis.Redis.from_url(self.server_url())
            self._raw_redis.pexpire(f"{self.store.namespace}:{kind}:{key}", 0)  # 0 ms: the key ends now
        else:
            assert isinstance(self.store, SQLiteStore)
            if self._raw_sqlite is None:
                self._raw_sqlite = sqlite3.connect(self.store.path, isolation_level=None)
            self._raw_sqlite.execute(
                "UPDATE entries SET expires_at = ? WHERE kind = ? AND key = ?", (self.clock(), kind, key)
            )

    def remaining_ms(self, kind: str, key: str) -> int | None:
        assert isinstance(self.store, (RedisStore, SQLiteStore))
        return self.store.remaining_ms(kind, key)

    def replica(self) -> StateStore:
        if isinstance(self.store, RedisStore):
            opened: StateStore = RedisStore(self.server_url(), self.store.namespace)
        else:
            assert isinstance(self.store, SQLiteStore)
            opened = SQLiteStore(self.store.path, clock=self.clock)
        self._opened.append(opened)
        return opened

    def server_url(self) -> str:
        assert self._server is not None
        return self._server.url

    def close(self) -> None:
        for opened in [*self._opened, self.store]:
            opened.close()
        if self._raw_redis is not None:
            self._raw_redis.close()
        if self._raw_sqlite is not None:
            self._raw_sqlite.close()


@pytest.fixture(params=["sqlite", "redis"])
def any_store(request: pytest.FixtureRequest, tmp_path: Path, clock: Clock) -> Iterator[StoreUnderTest]:
    """Each store implementation in turn (the contract holds for both): SQLite on the injected clock, Redis on the
    session's server in a namespace of its own."""
    if request.param == "sqlite":
        store: StateStore = SQLiteStore(tmp_path / "state.sqlite3", clock=clock)
        under_test = StoreUnderTest("sqlite", store, tmp_path, clock, None)
    else:
        server = request.getfixturevalue("redis_server")
        store = RedisStore(server.url, fresh_namespace())
        under_test = StoreUnderTest("redis", store, tmp_path, clock, server)
    yield under_test
    under_test.close()
