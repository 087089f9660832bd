"""Cleanup previews in the shared state store (issue 23): a preview made on one replica is run, continued and undone
on another, its progress never repeated, one call at a time across replicas, each person's own. Each test runs on
the embedded SQLite store and on a real redis-server (`any_store`); "another replica" is a second store object on
the same data (`any_store.replica()`), as a second process would open it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from server.errors import InvalidInputError
from server.remote.shared_cleanups import SharedCleanupBook, pack_ids, unpack_ids
from server.remote.shared_confirmations import SharedConfirmationBook
from server.remote.store import CLEANUP, StateStore, secret_key
from server.runtime.cleanup_book import DEFAULT_TTL_S, CleanupPlan
from server.tests.support.cleanup import DAY, cleanup_stack, last_seq, log_of
from server.tests.support.redis_server import StoreUnderTest
from server.tests.support.writes import WriteStack
from server.tools import ConfirmationRequest, ToolContext
from server.toolsets.cleanup.models import CleanupPreviewInput, CleanupRunInput, CleanupRunResult, CleanupUndoInput
from server.toolsets.cleanup.preview import preview
from server.toolsets.cleanup.run import cleanup_run, cleanup_undo

OWNER = "person-tag\0me@example.com"
MAX_IDS = 25_000  # gmail_cleanup_preview's cap (toolsets/cleanup/preview.py)


def gmail_ids(count: int) -> tuple[str, ...]:
    """Ids shaped as Gmail's: 16 hex digits (e.g. "18c7a2f3b4d5e6f7")."""
    return tuple(hashlib.sha256(str(n).encode()).hexdigest()[:16] for n in range(count))


def plan(count: int = 3_500) -> CleanupPlan:
    return CleanupPlan(
        preview_id="", query="category:promotions", action="archive", ids=gmail_ids(count), remove=("INBOX",)
    )


def books(any_store: StoreUnderTest, owner: str = OWNER, **book: object) -> tuple[SharedCleanupBook, SharedCleanupBook]:
    return (
        SharedCleanupBook(any_store.store, owner, wall=any_store.clock, **book),  # type: ignore[arg-type]
        SharedCleanupBook(any_store.replica(), owner, wall=any_store.clock, **book),  # type: ignore[arg-type]
    )


def test_a_preview_made_on_one_replica_is_read_whole_on_another(any_store: StoreUnderTest) -> None:
    a, b = books(any_store)
    made = a.add(plan())
    read = b.get(made.preview_id)
    assert read is not None and read is not made
    assert (read.query, read.action, read.ids, read.remove) == (made.query, made.action, made.ids, ("INBOX",))
    assert (read.done, read.undone, read.confirmed, read.label_id) == (0, 0, False, None)


def test_a_preview_is_its_persons_and_accounts_own(any_store: StoreUnderTest) -> None:
    a, _ = books(any_store)
    made = a.add(plan())
    stranger = SharedCleanupBook(any_store.replica(), "other-person\0me@example.com")
    other_account = SharedCleanupBook(any_store.replica(), "person-tag\0work@example.com")
    assert stranger.get(made.preview_id) is None and other_account.get(made.preview_id) is None
    assert not any_store.store.get(CLEANUP, made.preview_id)  # nothing stored under the bare id either


def test_a_run_continued_on_another_replica_resumes_where_the_first_stopped(any_store: StoreUnderTest) -> None:
    a, b = books(any_store)
    on_a = a.get(a.add(plan()).preview_id)
    assert on_a is not None and a.claim(on_a)
    on_a.confirmed, on_a.label_id, on_a.label_name = True, "Label_9", "gmail-mcp/cleanup-2026-11-26-1"
    on_a.done = 1_000  # one chunk sent
    a.save(on_a)
    a.release(on_a)
    on_b = b.get(on_a.preview_id)
    assert on_b is not None and b.claim(on_b)
    assert (on_b.done, on_b.confirmed, on_b.label_id) == (1_000, True, "Label_9")  # the cursor: no chunk again
    on_b.done = 2_000
    b.save(on_b)
    b.release(on_b)
    stale = a.get(on_a.preview_id)  # A sees B's progress too (undo goes back from there)
    assert stale is not None and stale.done == 2_000


def test_claiming_reads_progress_saved_after_the_plan_was_read(any_store: StoreUnderTest) -> None:
    a, b = books(any_store)
    made = a.add(plan())
    read_early = b.get(made.preview_id)  # B read the plan before A's call moved on
    assert read_early is not None and a.claim(made)
    made.done = 1_000
    a.save(made)
    a.release(made)
    read_early.confirmed = True  # the yes B's own call just got
    assert b.claim(read_early)
    assert read_early.done == 1_000 and read_early.confirmed


def test_one_call_at_a_time_across_replicas(any_store: StoreUnderTest) -> None:
    a, b = books(any_store)
    made = a.add(plan())
    on_b = b.get(made.preview_id)
    assert on_b is not None
    assert a.claim(made)
    assert not b.claim(on_b) and not a.claim(a.get(made.preview_id) or made)  # the lease is held: refused
    a.release(made)
    assert b.claim(on_b)
    b.release(on_b)


def test_a_lease_left_by_a_call_that_died_ends_with_its_lifetime(any_store: StoreUnderTest) -> None:
    a, b = books(any_store, call_budget_s=120.0)
    made = a.add(plan())
    assert a.claim(made)  # the replica dies here: no release
    lease = secret_key(f"{OWNER}\0{made.preview_id}\0lease")
    left = any_store.remaining_ms(CLEANUP, lease)
    assert left is not None and 120_000 < left <= 240_000  # the call budget and a margin
    any_store.expire(CLEANUP, lease)
    on_b = b.get(made.preview_id)
    assert on_b is not None and b.claim(on_b)


def test_ids_are_stored_compactly_and_live_as_long_as_in_process(any_store: StoreUnderTest) -> None:
    a, b = books(any_store)
    made = a.add(plan(MAX_IDS))
    stored = any_store.store.get(CLEANUP, secret_key(f"{OWNER}\0{made.preview_id}\0ids"))
    assert stored is not None and len(stored["ids"]) < 0.65 * len(",".join(made.ids))
    assert unpack_ids(stored["ids"]) == made.ids
    for part in ("ids", "state"):
        left = any_store.remaining_ms(CLEANUP, secret_key(f"{OWNER}\0{made.preview_id}\0{part}"))
        assert left is not None and DEFAULT_TTL_S * 1000 - 60_000 < left <= DEFAULT_TTL_S * 1000
    read = b.get(made.preview_id)
    assert read is not None and read.count == MAX_IDS


def test_an_expired_preview_is_unknown_on_every_replica(any_store: StoreUnderTest) -> None:
    a, b = books(any_store)
    made = a.add(plan())
    any_store.expire(CLEANUP, secret_key(f"{OWNER}\0{made.preview_id}\0state"))
    assert a.get(made.preview_id) is None and b.get(made.preview_id) is None


def test_at_most_max_entries_previews_per_account_the_oldest_unused_goes(any_store: StoreUnderTest) -> None:
    a, b = books(any_store, max_entries=2)
    first = a.add(plan(10))
    any_store.clock.now += 1
    second = b.add(plan(10))
    any_store.clock.now += 1
    assert a.get(first.preview_id) is not None  # used again: now the second is the oldest unused
    any_store.clock.now += 1
    third = b.add(plan(10))
    assert b.get(second.preview_id) is None
    assert a.get(first.preview_id) is not None and a.get(third.preview_id) is not None


@pytest.mark.parametrize("count", [0, 1, 999, 1_001])
def test_packing_keeps_every_id_in_order(count: int) -> None:
    ids = gmail_ids(count)
    assert unpack_ids(pack_ids(ids)) == ids
    other = (*ids, "Message-Not-Hex_1")  # an id of another shape is kept as it is, in its place
    assert unpack_ids(pack_ids(other)) == other


NEWSLETTERS = 5_000


def replica_context(stack: WriteStack, store: StateStore) -> ToolContext:
    """The stack's mailbox as a replica serves it: the cleanup book and codes in `store`, a call ending after two
    chunks (GMAIL_MCP_CLEANUP_CHUNKS_PER_CALL's hook)."""
    book = SharedCleanupBook(store, OWNER, chunks_per_call=2, clock=stack.clock, today=lambda: DAY)
    codes = SharedConfirmationBook(store, OWNER, 300.0, clock=stack.clock)
    return replace(stack.ctx, safety=replace(stack.ctx.safety, cleanups=book, confirmations=codes))


def touched(stack: WriteStack, since: int) -> list[list[str]]:
    return [ids for entry in log_of(stack, since) for ids in entry.get("modified_ids", [])]


@pytest.mark.slow  # 5,000 generated newsletters: a few seconds
def test_a_run_moves_between_replicas_chunk_by_chunk_without_repeats_and_undo_restores(
    any_store: StoreUnderTest, tmp_path: Path
) -> None:
    """The real run and undo tools against the emulator (Gmail's 1,000-id batchModify limit, gmail-api-wire.md),
    each call landing on the other replica: every message is changed exactly once, in order, and undone."""
    with cleanup_stack(tmp_path, newsletters=NEWSLETTERS) as stack:
        before = {m.id: tuple(sorted(m.label_ids)) for m in stack.emulator.store.messages}
        a, b = replica_context(stack, any_store.store), replica_context(stack, any_store.replica())
        made = preview(a, CleanupPreviewInput(query="category:promotions", action="archive"))
        assert made.preview_id and made.message_count == NEWSLETTERS
        asked = cleanup_run(b, CleanupRunInput(preview_id=made.preview_id))
        assert isinstance(asked, ConfirmationRequest)
        code = asked.without_asking(b).confirmation_code
        since = last_seq(stack)
        first = cleanup_run(a, CleanupRunInput(preview_id=made.preview_id, confirmation_code=code))
        assert isinstance(first, CleanupRunResult) and (first.status, first.done_count) == ("paused", 2_000)
        on_b = b.safety.cleanups.get(made.preview_id)
        assert on_b is not None and b.safety.cleanups.claim(on_b)  # a call working on it on B right now
        with pytest.raises(InvalidInputError, match="Another call is running this cleanup"):
            cleanup_run(a, CleanupRunInput(preview_id=made.preview_id))
        b.safety.cleanups.release(on_b)
        second = cleanup_run(b, CleanupRunInput(preview_id=made.preview_id))  # no new code: the yes is shared
        third = cleanup_run(a, CleanupRunInput(preview_id=made.preview_id))
        assert isinstance(second, CleanupRunResult) and isinstance(third, CleanupRunResult)
        assert (second.done_count, third.status, third.done_count) == (4_000, "done", NEWSLETTERS)
        batches = touched(stack, since)
        assert [len(ids) for ids in batches] == [1_000] * 5
        assert [i for ids in batches for i in ids] == list(b.safety.cleanups.get(made.preview_id).ids)  # type: ignore[union-attr]
        undo_since, turn, undone = last_seq(stack), 0, None
        while undone is None or undone.status == "paused":
            undone = cleanup_undo((b, a)[turn % 2], CleanupUndoInput(preview_id=made.preview_id))
            turn += 1
        assert (undone.status, undone.restored_count, turn) == ("undone", NEWSLETTERS, 3)
        assert len(touched(stack, undo_since)) == 5
        assert {m.id: tuple(sorted(m.label_ids)) for m in stack.emulator.store.messages} == before


class SaveAfterRead(StateStore):
    """Replica B's store, on the same data: right after B reads an entry, `then` runs once (replica A's chunk
    landing between B's read and whatever B writes next), the interleaving that lost a cursor."""

    def __init__(self, inner: StateStore, then: Callable[[], None]) -> None:
        self.inner, self.then = inner, then

    def get(self, kind: str, key: str) -> dict[str, Any] | None:
        value = self.inner.get(kind, key)
        then, self.then = self.then, lambda: None
        then()
        return value

    def put(self, kind: str, key: str, value: dict[str, Any], ttl_s: float) -> None:
        self.inner.put(kind, key, value, ttl_s)

    def add(self, kind: str, key: str, value: dict[str, Any], ttl_s: float) -> bool:
        return self.inner.add(kind, key, value, ttl_s)

    def take(self, kind: str, key: str) -> dict[str, Any] | None:
        return self.inner.take(kind, key)

    def delete(self, kind: str, key: str) -> bool:
        return self.inner.delete(kind, key)

    def incr(self, kind: str, key: str, amount: int, ttl_s: float) -> int:
        return self.inner.incr(kind, key, amount, ttl_s)

    def sweep(self) -> int:
        return self.inner.sweep()

    def ping(self) -> None:
        self.inner.ping()


def test_reading_a_preview_while_another_replica_runs_it_never_puts_its_cursor_back(any_store: StoreUnderTest) -> None:
    a, _ = books(any_store)
    made = a.add(plan())
    assert a.claim(made)

    def chunk_on_a() -> None:
        made.done = 1_000
        a.save(made)

    b = SharedCleanupBook(SaveAfterRead(any_store.replica(), chunk_on_a), OWNER, wall=any_store.clock)
    assert b.get(made.preview_id) is not None  # B read the cursor at 0; A moved it to 1,000 meanwhile
    a.release(made)
    after = b.get(made.preview_id)
    assert after is not None and b.claim(after) and after.done == 1_000  # not put back to 0: no chunk again
