"""The state store on SQLite: put/add/get/take/delete with expiry on an injected clock, atomic among threads."""

from __future__ import annotations

import os
import sqlite3
import stat
import sys
import threading
from pathlib import Path

import pytest

from server.remote.sqlite_store import FILE_NAME, SQLiteStore, open_state_store, state_dir
from server.remote.store import CODE, CONSENT, KINDS, PENDING, secret_key


class Clock:
    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(tmp_path: Path, clock: Clock):
    opened = SQLiteStore(tmp_path / "state" / FILE_NAME, clock=clock)
    yield opened
    opened.close()


def test_entries_live_until_their_time_to_live(store: SQLiteStore, clock: Clock) -> None:
    store.put(CONSENT, "k", {"scopes": ["a"]}, ttl_s=60)
    assert store.get(CONSENT, "k") == {"scopes": ["a"]}
    assert store.get(PENDING, "k") is None  # kinds are separate namespaces
    clock.now += 59.9
    assert store.get(CONSENT, "k") == {"scopes": ["a"]}
    clock.now += 0.1
    assert store.get(CONSENT, "k") is None and store.take(CONSENT, "k") is None
    assert store.delete(CONSENT, "k") is False
    assert store.count(CONSENT) == 1  # invisible, still on disk until the sweep
    assert store.sweep() == 1 and store.count() == 0


def test_put_overwrites_and_renews(store: SQLiteStore, clock: Clock) -> None:
    store.put(CONSENT, "k", {"v": 1}, ttl_s=10)
    clock.now += 9
    store.put(CONSENT, "k", {"v": 2}, ttl_s=10)
    clock.now += 9
    assert store.get(CONSENT, "k") == {"v": 2}


def test_add_writes_only_over_nothing_or_an_expired_entry(store: SQLiteStore, clock: Clock) -> None:
    assert store.add(CODE, "k", {"v": 1}, ttl_s=10) is True
    assert store.add(CODE, "k", {"v": 2}, ttl_s=10) is False
    assert store.get(CODE, "k") == {"v": 1}
    clock.now += 10
    assert store.add(CODE, "k", {"v": 3}, ttl_s=10) is True
    assert store.get(CODE, "k") == {"v": 3}


def test_take_returns_an_entry_once_and_delete_says_what_it_did(store: SQLiteStore) -> None:
    store.put(CODE, "k", {"v": 1}, ttl_s=10)
    assert store.take(CODE, "k") == {"v": 1}
    assert store.take(CODE, "k") is None and store.get(CODE, "k") is None
    store.put(PENDING, "p", {"v": 1}, ttl_s=10)
    assert store.delete(PENDING, "p") is True and store.delete(PENDING, "p") is False


def test_every_entry_expires_and_kinds_are_known(store: SQLiteStore) -> None:
    for ttl in (0, -1, float("nan")):
        with pytest.raises(ValueError, match="expires"):
            store.put(CODE, "k", {}, ttl_s=ttl)
    with pytest.raises(ValueError, match="unknown kind"):
        store.put("sessions", "k", {}, ttl_s=1)
    with pytest.raises(TypeError):
        store.put(CODE, "k", ["not", "an", "object"], ttl_s=1)  # type: ignore[arg-type]
    assert len(set(KINDS)) == len(KINDS)


def test_take_once_among_racing_threads(store: SQLiteStore) -> None:
    """Twenty threads race for each of twenty codes: every code goes to exactly one of them."""
    for index in range(20):
        store.put(CODE, f"code-{index}", {"index": index}, ttl_s=60)
    won: list[int] = []
    lock = threading.Lock()
    barrier = threading.Barrier(20)

    def racer() -> None:
        barrier.wait()
        for index in range(20):
            taken = store.take(CODE, f"code-{index}")
            if taken is not None:
                with lock:
                    won.append(taken["index"])

    threads = [threading.Thread(target=racer) for _ in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(won) == list(range(20))


def test_add_has_one_winner_among_racing_threads(store: SQLiteStore) -> None:
    results: list[bool] = []
    barrier = threading.Barrier(16)

    def racer(index: int) -> None:
        barrier.wait()
        results.append(store.add(PENDING, "the-key", {"by": index}, ttl_s=60))

    threads = [threading.Thread(target=racer, args=(index,)) for index in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results.count(True) == 1
    assert store.get(PENDING, "the-key")["by"] in range(16)


def test_take_once_across_two_stores_on_one_file(tmp_path: Path, clock: Clock) -> None:
    """Two processes (two stores, own connections) sharing the file: a code still goes to one of them."""
    first, second = SQLiteStore(tmp_path / "s.db", clock=clock), SQLiteStore(tmp_path / "s.db", clock=clock)
    try:
        for index in range(50):
            first.put(CODE, f"c{index}", {"i": index}, ttl_s=60)
        got: list[int] = []
        threads = [
            threading.Thread(target=lambda s=s: got.extend(x["i"] for i in range(50) if (x := s.take(CODE, f"c{i}"))))
            for s in (first, second, first, second)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sorted(got) == list(range(50))
    finally:
        first.close()
        second.close()


def test_the_file_is_private_journaled_and_survives_a_restart(tmp_path: Path, clock: Clock) -> None:
    path = tmp_path / "state" / FILE_NAME
    store = SQLiteStore(path, clock=clock)
    store.put(CONSENT, secret_key("person"), {"scopes": ["x"]}, ttl_s=60)
    store.close()
    if sys.platform != "win32":
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    again = SQLiteStore(path, clock=clock)
    assert again.get(CONSENT, secret_key("person")) == {"scopes": ["x"]}
    again.close()
    with pytest.raises(RuntimeError, match="closed"):
        again.get(CONSENT, secret_key("person"))


def test_an_existing_file_with_loose_permissions_is_tightened(tmp_path: Path, clock: Clock) -> None:
    if sys.platform == "win32":
        pytest.skip("POSIX modes")
    path = tmp_path / FILE_NAME
    path.touch()
    os.chmod(path, 0o644)
    SQLiteStore(path, clock=clock).close()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_the_state_folder_comes_from_the_environment(tmp_path: Path) -> None:
    assert state_dir({"GMAIL_MCP_STATE_DIR": str(tmp_path / "here")}) == tmp_path / "here"
    assert state_dir({"GMAIL_MCP_HOME": str(tmp_path / "home")}) == (tmp_path / "home").resolve() / "state"
    store = open_state_store({"GMAIL_MCP_STATE_DIR": str(tmp_path / "s")})
    store.close()
    assert (tmp_path / "s" / FILE_NAME).is_file()
