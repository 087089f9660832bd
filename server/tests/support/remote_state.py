"""The remote side's test kit: an injected clock and a SQLite state store on it, one per test; for the
authorization server's tests, the Google web client file for the module's `emulator` (`client_file`) and a
loopback server for client metadata documents (`docs`, filled with oauth_browser.py `cimd_client`); and the
remote server with the drafts and send tools (`remote`).

The fixtures reach every test through `pytest_plugins` in server/tests/conftest.py; a module that needs another
store (a path of its own) defines its own `store`, which takes precedence. The shared-store fixtures come from
`redis_server.py` through this plugin."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from server.emulator import Emulator
from server.remote.sqlite_store import SQLiteStore
from server.tests.support.oauth_browser import CALLBACK, document_server
from server.tests.support.remote_http import RemoteRun, remote_server

# The real Redis server and the fixtures that run a test on each store (`redis_server`, `redis_store`, `any_store`).
pytest_plugins = ["server.tests.support.redis_server"]


class Clock:
    """Seconds on a clock the test moves (`clock.now += 61`)."""

    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(tmp_path: Path, clock: Clock) -> Iterator[SQLiteStore]:
    opened = SQLiteStore(tmp_path / "state.sqlite3", clock=clock)
    yield opened
    opened.close()


@pytest.fixture
def client_file(emulator: Emulator, tmp_path: Path) -> Path:
    """The emulator (the requesting module's, usually `two_account_emulator`) clean, and its web client file with
    the authorization server's Google callback."""
    emulator.reset()
    return emulator.web_client_file(tmp_path / "client.json", CALLBACK)


@pytest.fixture
def docs() -> Iterator[tuple[str, dict]]:
    """A loopback server for client metadata documents: (base URL, path -> document table)."""
    with document_server() as served:
        yield served


@pytest.fixture
def remote(emulator: Emulator, tmp_path: Path) -> Iterator[RemoteRun]:
    """The remote server (remote_http.py) over the requesting module's `emulator`, cleaned first, with the drafts
    and send tools."""
    emulator.reset()
    with remote_server(emulator, tmp_path, write_tools=frozenset({"drafts", "send"})) as run:
        yield run
