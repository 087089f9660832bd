"""The small parts of cleanup, in the fast tier: the preview's sample positions, the cleanup book (expiry, bound,
one call at a time), the progress reporter, `auth_cli --scopes cleanup`, and the emulator's quota meter (Gmail's
15,000 units per user per minute, `gmail-api-wire.md` "Quota and limits"; batchModify 50 units)."""

from __future__ import annotations

import pytest

from server.auth_cli import requested_scopes
from server.emulator.quota_meter import QuotaMeter, units_of
from server.runtime import progress
from server.runtime.cleanup_book import CleanupBook, CleanupPlan
from server.scopes import MODIFY, READONLY
from server.tests.support.writes import FakeClock
from server.toolsets.cleanup.preview import sample_indexes


def test_samples_spread_over_the_result_with_both_ends():
    assert sample_indexes(5_000) == [0, 555, 1111, 1666, 2222, 2777, 3333, 3888, 4444, 4999]
    assert sample_indexes(3) == [0, 1, 2]
    assert sample_indexes(11)[0] == 0 and sample_indexes(11)[-1] == 10 and len(sample_indexes(11)) == 10


def plan(ids: int = 3) -> CleanupPlan:
    return CleanupPlan(preview_id="", query="q", action="archive", ids=tuple(str(i) for i in range(ids)))


def test_the_book_expires_unused_previews_and_keeps_a_bound():
    clock = FakeClock()
    book = CleanupBook(ttl_s=100.0, max_entries=2, clock=clock)
    first = book.add(plan())
    assert first.preview_id.startswith("cp_") and book.get(first.preview_id) is first
    clock.advance(101)
    assert book.get(first.preview_id) is None
    kept = [book.add(plan()) for _ in range(3)]
    assert book.get(kept[0].preview_id) is None and book.get(kept[2].preview_id) is kept[2]


def test_one_call_at_a_time_per_preview():
    book = CleanupBook()
    entry = book.add(plan())
    assert book.claim(entry) and not book.claim(entry)
    book.release(entry)
    assert book.claim(entry)


def test_progress_reports_only_inside_a_reporting_block_and_never_fails_the_work():
    seen: list[tuple[float, float | None, str | None]] = []
    progress.report(1, 2)  # no reporter: nothing
    with progress.reporting(lambda *args: seen.append(args)):
        progress.report(1, 2, "half")
    with progress.reporting(lambda *_args: 1 / 0):
        progress.report(2, 2)  # a broken channel does not stop the cleanup
    assert seen == [(1, 2, "half")]


def test_auth_cli_takes_the_write_group_names():
    assert requested_scopes("cleanup") == [MODIFY]  # modify reads too
    assert requested_scopes("readonly,unsubscribe") == [READONLY, MODIFY]
    with pytest.raises(ValueError, match="cleanup"):
        requested_scopes("tidy-up")


def test_the_emulator_meters_units_per_user_per_minute():
    clock = FakeClock()
    meter = QuotaMeter(clock=clock)
    assert meter.spend("me", 10_000_000)  # off by default
    meter.set_limit(15_000)
    assert units_of("POST", "messages/batchModify") == 50 and units_of("GET", "messages") == 5
    assert all(meter.spend("me", 50) for _ in range(300))  # 15,000 units
    assert not meter.spend("me", 1) and meter.spend("other@example.com", 5)
    clock.advance(60)
    assert meter.spend("me", 50)
