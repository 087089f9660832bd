"""One contract, two stores: every test here runs on the SQLite store and on a real Redis server (`any_store`).

Lifetimes are checked without waiting: an entry's time left is read (`remaining_ms`: the SQLite row's expiry on the
injected clock, Redis's `PTTL`) and its end is brought forward from outside (`expire`: the row's expiry set to now,
Redis's `PEXPIRE key 0`), which is what its lifetime running out does. The races put two store objects (two
replicas) on the same data and check that every single-use entry has exactly one winner, many times over.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import Any

import pytest

from server.errors import TransientError
from server.remote.redis_store import RedisStore
from server.remote.sqlite_store import SQLiteStore
from server.remote.store import (
    CODE,
    CONFIRM,
    CONSENT,
    COUNTER_KINDS,
    KEYRING,
    KINDS,
    PENDING,
    QUOTA,
    SENT,
    StoreUnavailable,
)
from server.runtime.config import PROJECT_ROOT
from server.tests.support.redis_server import StoreUnderTest


def race(workers: list[Callable[[], Any]]) -> list[Any]:
    """Runs each worker on its own thread, all released at once; their results in worker order."""
    barrier = threading.Barrier(len(workers))
    results: list[Any] = [None] * len(workers)

    def run(index: int) -> None:
        barrier.wait()
        results[index] = workers[index]()

    threads = [threading.Thread(target=run, args=(index,)) for index in range(len(workers))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def test_put_get_overwrite_and_kinds_are_separate(any_store: StoreUnderTest) -> None:
    store = any_store.store
    value = {"scopes": ["gmail.readonly"], "name": "Zoë 你好", "nested": {"n": 1, "none": None}}
    store.put(CONSENT, "k", value, ttl_s=60)
    assert store.get(CONSENT, "k") == value
    assert store.get(PENDING, "k") is None and store.get(CONSENT, "other") is None
    store.put(CONSENT, "k", {"v": 2}, ttl_s=60)
    assert store.get(CONSENT, "k") == {"v": 2}


def test_get_many_reads_each_entry_in_order_and_none_for_what_is_not_there(any_store: StoreUnderTest) -> None:
    store = any_store.store
    store.put(CONSENT, "k", {"v": 1}, ttl_s=60)
    store.put(PENDING, "p", {"v": 2}, ttl_s=60)
    wanted = [(PENDING, "p"), (CONSENT, "missing"), (CONSENT, "k"), (PENDING, "k")]
    assert store.get_many(wanted) == [{"v": 2}, None, {"v": 1}, None]
    assert store.get_many([]) == []
    any_store.expire(CONSENT, "k")
    assert store.get_many([(CONSENT, "k")]) == [None]


def test_an_entry_lives_for_its_lifetime_and_then_is_gone_everywhere(any_store: StoreUnderTest) -> None:
    store = any_store.store
    store.put(CODE, "k", {"v": 1}, ttl_s=60)
    assert 0 < any_store.remaining_ms(CODE, "k") <= 60_000
    any_store.expire(CODE, "k")
    assert store.get(CODE, "k") is None and store.take(CODE, "k") is None
    assert store.delete(CODE, "k") is False
    assert any_store.remaining_ms(CODE, "k") is None
    assert store.add(CODE, "k", {"v": 2}, ttl_s=60) is True  # an ended entry is no obstacle
    assert store.get(CODE, "k") == {"v": 2}


def test_put_renews_the_lifetime(any_store: StoreUnderTest) -> None:
    any_store.store.put(CONSENT, "k", {"v": 1}, ttl_s=10)
    assert any_store.remaining_ms(CONSENT, "k") <= 10_000
    any_store.store.put(CONSENT, "k", {"v": 2}, ttl_s=3600)
    assert any_store.remaining_ms(CONSENT, "k") > 10_000


def test_add_writes_only_over_nothing(any_store: StoreUnderTest) -> None:
    store = any_store.store
    assert store.add(KEYRING, "2026-11", {"key": "first"}, ttl_s=60) is True
    assert store.add(KEYRING, "2026-11", {"key": "second"}, ttl_s=3600) is False
    assert store.get(KEYRING, "2026-11") == {"key": "first"}
    assert any_store.remaining_ms(KEYRING, "2026-11") <= 60_000  # the loser did not renew it either


def test_take_once_and_delete_says_what_it_did(any_store: StoreUnderTest) -> None:
    store = any_store.store
    store.put(CONFIRM, "c", {"send": "draft-1"}, ttl_s=60)
    assert store.take(CONFIRM, "c") == {"send": "draft-1"}
    assert store.take(CONFIRM, "c") is None and store.get(CONFIRM, "c") is None
    store.put(PENDING, "p", {"v": 1}, ttl_s=60)
    assert store.delete(PENDING, "p") is True and store.delete(PENDING, "p") is False


def test_counters_count_in_a_window_that_does_not_move(any_store: StoreUnderTest) -> None:
    store = any_store.store
    assert store.incr(SENT, "person", 1, ttl_s=60) == 1
    assert store.incr(SENT, "person", 4, ttl_s=3600) == 5
    assert store.incr(SENT, "person", -2, ttl_s=60) == 3  # a refund
    assert store.incr(SENT, "person", 0, ttl_s=60) == 3  # a read
    assert 0 < any_store.remaining_ms(SENT, "person") <= 60_000  # later increments left the window's end alone
    assert store.incr(QUOTA, "person", 7, ttl_s=60) == 7  # counter kinds are separate too
    any_store.expire(SENT, "person")
    assert store.incr(SENT, "person", 2, ttl_s=30) == 2  # a new window
    assert 0 < any_store.remaining_ms(SENT, "person") <= 30_000


def test_every_entry_expires_and_kinds_are_checked(any_store: StoreUnderTest) -> None:
    store = any_store.store
    for ttl in (0, -1, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="expires"):
            store.put(CODE, "k", {}, ttl_s=ttl)
        with pytest.raises(ValueError, match="expires"):
            store.incr(SENT, "k", 1, ttl_s=ttl)
    with pytest.raises(ValueError, match="unknown kind"):
        store.put("sessions", "k", {}, ttl_s=1)
    with pytest.raises(ValueError, match="unknown kind of counter"):
        store.incr(CODE, "k", 1, ttl_s=1)  # entries and counters never share a kind
    with pytest.raises(ValueError, match="unknown kind"):
        store.put(SENT, "k", {}, ttl_s=1)
    with pytest.raises(TypeError):
        store.put(CODE, "k", ["not", "an", "object"], ttl_s=1)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        store.incr(SENT, "k", 1.5, ttl_s=1)  # type: ignore[arg-type]
    assert not set(KINDS) & set(COUNTER_KINDS)
    assert store.get(CODE, "k") is None


def test_the_store_answers_ping_and_readiness(any_store: StoreUnderTest) -> None:
    any_store.store.ping()
    assert any_store.store.ready() is True
    assert issubclass(StoreUnavailable, TransientError) and StoreUnavailable("x").retryable


def test_two_replicas_racing_for_the_same_codes_redeem_each_once(any_store: StoreUnderTest) -> None:
    """200 codes, 8 takers on two store objects: every code is redeemed exactly once (200 races)."""
    replicas = [any_store.store, any_store.replica()]
    for index in range(200):
        any_store.store.put(CONFIRM, f"code-{index}", {"index": index}, ttl_s=60)

    def taker(replica_index: int) -> Callable[[], list[int]]:
        store = replicas[replica_index]
        return lambda: [won["index"] for i in range(200) if (won := store.take(CONFIRM, f"code-{i}"))]

    won = race([taker(index % 2) for index in range(8)])
    assert sorted(index for taken in won for index in taken) == list(range(200))
    assert all(store.get(CONFIRM, "code-0") is None for store in replicas)


def test_racing_adds_have_one_winner_each_time(any_store: StoreUnderTest) -> None:
    replicas = [any_store.store, any_store.replica()]
    for round_index in range(40):
        key = f"period-{round_index}"
        results = race([lambda i=i, key=key: replicas[i % 2].add(KEYRING, key, {"by": i}, ttl_s=60) for i in range(6)])
        assert results.count(True) == 1, results
        assert any_store.store.get(KEYRING, key) == {"by": results.index(True)}


def test_counters_lose_no_increment_among_racing_replicas(any_store: StoreUnderTest) -> None:
    """8 threads on two replicas add 1 a hundred times each: the total is exact and every value was seen once."""
    replicas = [any_store.store, any_store.replica()]
    seen = race(
        [lambda i=i: [replicas[i % 2].incr(QUOTA, "budget", 1, ttl_s=60) for _ in range(100)] for i in range(8)]
    )
    assert sorted(value for values in seen for value in values) == list(range(1, 801))
    assert any_store.store.incr(QUOTA, "budget", 0, ttl_s=60) == 800


# A replica in its own process: opens the store named on its command line, waits for "go" on stdin, takes every
# code it can and prints the indexes it won.
TAKER = """
import json, sys
from server.remote.redis_store import RedisStore
from server.remote.sqlite_store import SQLiteStore
kind, where, extra, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
store = RedisStore(where, extra) if kind == "redis" else SQLiteStore(where, clock=lambda: float(extra))
store.ping()
print("ready", flush=True)
sys.stdin.readline()
won = [taken["index"] for i in range(count) if (taken := store.take("confirm", f"code-{i}"))]
print(json.dumps(won), flush=True)
"""


def test_two_processes_racing_for_the_same_codes_redeem_each_once(any_store: StoreUnderTest) -> None:
    """Two replica processes released at once on 300 codes: each code is redeemed by exactly one of them."""
    store = any_store.store
    for index in range(300):
        store.put(CONFIRM, f"code-{index}", {"index": index}, ttl_s=600)
    if isinstance(store, RedisStore):
        where, extra = any_store.server_url(), store.namespace
    else:
        assert isinstance(store, SQLiteStore)
        where, extra = str(store.path), repr(any_store.clock())
    argv = [sys.executable, "-c", TAKER, any_store.name, where, extra, "300"]
    replicas = [
        subprocess.Popen(argv, cwd=PROJECT_ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    try:
        for replica in replicas:
            assert replica.stdout is not None and replica.stdout.readline().strip() == "ready"
        for replica in replicas:
            assert replica.stdin is not None
            replica.stdin.write("go\n")
            replica.stdin.flush()
        won = [json.loads(replica.communicate(timeout=120)[0]) for replica in replicas]
    finally:
        for replica in replicas:
            if replica.poll() is None:
                replica.kill()
    assert sorted(won[0] + won[1]) == list(range(300))
    assert all(replica.returncode == 0 for replica in replicas)
