"""The remote side's test kit: an injected clock and a SQLite state store on it, one per test.

The fixtures reach every test through `pytest_plugins` in server/tests/conftest.py; a module that needs another
store (a path of its own) defines its own `store`, which takes precedence. The shared-store fixtures come from
`redis_server.py` through this plugin."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from server.remote.sqlite_store import SQLiteStore

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
