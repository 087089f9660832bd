"""The two stores answer alike: random sequences of operations run on the SQLite store, on Redis and on a plain
model (a dict), and every answer is compared. Expiry is brought forward from outside (`StoreUnderTest.expire`),
so no sequence waits for a clock."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from server.remote.redis_store import RedisStore
from server.remote.sqlite_store import SQLiteStore
from server.remote.store import CODE, CONSENT, QUOTA, SENT
from server.tests.support.redis_server import RedisServer, StoreUnderTest, fresh_namespace
from server.tests.support.remote_state import Clock

KEYS = ("a", "b")
ENTRY_KINDS = (CODE, CONSENT)
COUNTER_KINDS = (SENT, QUOTA)
values = st.fixed_dictionaries({"v": st.integers(-5, 5)}, optional={"s": st.text(max_size=5)})
entry_ops = st.tuples(
    st.sampled_from(["put", "add", "get", "take", "delete", "expire"]),
    st.sampled_from(ENTRY_KINDS),
    st.sampled_from(KEYS),
    values,
)
counter_ops = st.tuples(
    st.sampled_from(["incr", "expire"]), st.sampled_from(COUNTER_KINDS), st.sampled_from(KEYS), st.integers(-3, 3)
)
operations = st.lists(st.one_of(entry_ops, counter_ops), max_size=25)


class Model:
    """What the contract says, with nothing in the way: live entries in a dict, expired ones simply gone."""

    def __init__(self) -> None:
        self.entries: dict[tuple[str, str], Any] = {}

    def apply(self, op: str, kind: str, key: str, argument: Any) -> Any:
        slot = (kind, key)
        if op == "put":
            self.entries[slot] = argument
            return None
        if op == "add":
            if slot in self.entries:
                return False
            self.entries[slot] = argument
            return True
        if op == "get":
            return self.entries.get(slot)
        if op in ("take", "delete"):
            taken = self.entries.pop(slot, None)
            return taken if op == "take" else taken is not None
        if op == "incr":
            self.entries[slot] = self.entries.get(slot, 0) + argument
            return self.entries[slot]
        assert op == "expire"
        self.entries.pop(slot, None)
        return None


def apply(under_test: StoreUnderTest, prefix: str, op: str, kind: str, key: str, argument: Any) -> Any:
    store, key = under_test.store, f"{prefix}{key}"
    if op == "put":
        return store.put(kind, key, argument, ttl_s=60)
    if op == "add":
        return store.add(kind, key, argument, ttl_s=60)
    if op == "incr":
        return store.incr(kind, key, argument, ttl_s=60)
    if op == "expire":
        return under_test.expire(kind, key)
    return getattr(store, op)(kind, key)


@pytest.fixture
def both(redis_server: RedisServer, tmp_path: Path, clock: Clock) -> Iterator[list[StoreUnderTest]]:
    stores = [
        StoreUnderTest("sqlite", SQLiteStore(tmp_path / "state.sqlite3", clock=clock), tmp_path, clock, None),
        StoreUnderTest("redis", RedisStore(redis_server.url, fresh_namespace()), tmp_path, clock, redis_server),
    ]
    yield stores
    for under_test in stores:
        under_test.close()


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sequence=operations)
def test_sqlite_redis_and_the_model_answer_every_operation_alike(
    both: list[StoreUnderTest], sequence: list[tuple[str, str, str, Any]]
) -> None:
    prefix = f"{uuid.uuid4().hex[:8]}-"  # each example on keys of its own
    model = Model()
    for step, (op, kind, key, argument) in enumerate(sequence):
        expected = model.apply(op, kind, key, argument)
        for under_test in both:
            got = apply(under_test, prefix, op, kind, key, argument)
            assert got == expected, f"step {step}: {op}({kind}, {key}) on {under_test.name}"
    for under_test in both:  # and what is left agrees too
        for kind in ENTRY_KINDS:
            for key in KEYS:
                assert under_test.store.get(kind, f"{prefix}{key}") == model.entries.get((kind, key))
