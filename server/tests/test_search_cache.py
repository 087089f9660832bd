"""The search cache is never stale, and a repeat costs one history check: pinned through the real server.

Each test runs the real server (registry, caches, MCP dispatch in-process) against an emulator of its own, makes
the mailbox change between two identical searches the way another Gmail client would (a message arrives, one
is read, a label goes, one is deleted), and checks the repeat shows the new state, with the requests the
emulator logged pinned. Timings are bench/cache_bench.py's business.
"""

from __future__ import annotations

import pytest

from server.tests.support.fences import without_fence_values
from server.tests.support.mailbox_stack import (
    BATCH_PATH,
    HISTORY_PATH,
    LIST_PATH,
    PROFILE_PATH,
    SEARCH,
    changing_mailbox,
    cost_of,
    ids_of,
    shape,
)

pytestmark = pytest.mark.anyio
INBOX = {"query": "in:inbox", "max_results": 10}
UNREAD = {"query": "is:unread", "max_results": 20}


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_repeated_search_is_one_history_check(tmp_path, mode):
    async with changing_mailbox(tmp_path, mode=mode) as stack:
        first, first_requests = await stack.call(SEARCH, INBOX)
        # The batch of the 10 summaries also lists the next 3 ids (one part, 5 units, no extra round trip).
        assert shape(first_requests) == [(LIST_PATH, None), (BATCH_PATH, 11)]
        assert first_requests[1]["parts"][-1]["path"] == LIST_PATH
        assert cost_of(first) == {
            "requests": 2,
            "quota_units": 60,
            "retries": 0,
            "token_requests": 0,
            "cache_hits": 0,
            "history_checks": 0,
        }
        again, requests = await stack.call(SEARCH, INBOX)
    assert shape(requests) == [(HISTORY_PATH, None)]
    assert again.structured_content == first.structured_content
    # nothing about the cache in what the model reads (the fence's random value aside)
    assert without_fence_values(again.content[0].text) == without_fence_values(first.content[0].text)
    assert cost_of(again) == {
        "requests": 1,
        "quota_units": 2,
        "retries": 0,
        "token_requests": 0,
        "cache_hits": 11,  # the page and the 10 summaries
        "history_checks": 1,
    }
    summary = stack.metrics.summary()
    assert summary["cache"]["search"]["hits"] == 1 and summary["history_checks"] == 1


async def test_a_new_message_shows_at_once_in_two_round_trips(tmp_path):
    async with changing_mailbox(tmp_path) as stack:
        before, _ = await stack.call(SEARCH, INBOX)
        arrived = stack.emulator.deliver(**{"from": "Nina <nina@example.org>", "subject": "Lunch on Friday?"})
        after, requests = await stack.call(SEARCH, INBOX)
    assert ids_of(after) == [arrived["id"], *ids_of(before)[:9]]
    assert after.structured_content["messages"][0]["subject"] == "Lunch on Friday?"
    # history, then the list with the new message's summary fetched alongside it (the history named it)
    assert shape(requests) == [(HISTORY_PATH, None), (LIST_PATH, None), (BATCH_PATH, 1)] or shape(requests) == [
        (HISTORY_PATH, None),
        (BATCH_PATH, 1),
        (LIST_PATH, None),
    ]
    history, *rest = requests
    assert all(entry["started_at"] >= history["started_at"] + history["duration_ms"] / 1000 for entry in rest)
    batch = next(entry for entry in rest if entry["path"] == BATCH_PATH)
    assert batch["parts"][0]["path"].endswith(arrived["id"])
    assert after.structured_content["enriched_count"] == 10


@pytest.mark.parametrize("size", [10, 20])
async def test_a_message_read_elsewhere_leaves_is_unread_at_once(tmp_path, size):
    query = {"query": "is:unread", "max_results": size}  # 12 unread: the 11th moves up into the enriched top 10
    async with changing_mailbox(tmp_path) as stack:
        before, _ = await stack.call(SEARCH, query)
        read = ids_of(before)[0]
        stack.emulator.modify(read, remove=["UNREAD"])
        after, requests = await stack.call(SEARCH, query)
        assert ids_of(after)[:9] == ids_of(before)[1:10] and read not in ids_of(after)
        assert after.structured_content["enriched_count"] == 10
        # history; then the list, with the summary of the message moving up fetched alongside it (it was on the
        # page, or in the look-ahead listed with the first page's summaries)
        assert shape(requests)[0] == (HISTORY_PATH, None)
        assert sorted(shape(requests)[1:]) == [(BATCH_PATH, 1), (LIST_PATH, None)]
        history, *rest = requests
        assert all(entry["started_at"] >= history["started_at"] + history["duration_ms"] / 1000 for entry in rest)
        stack.emulator.modify(read, add=["UNREAD"])  # and marked unread again
        again, _ = await stack.call(SEARCH, query)
    assert ids_of(again) == ids_of(before)


async def test_a_removed_label_leaves_a_label_search(tmp_path):
    async with changing_mailbox(tmp_path) as stack:
        query = {"query": "", "label_ids": ["Work"], "max_results": 30}
        before, _ = await stack.call(SEARCH, query)
        gone = ids_of(before)[3]
        stack.emulator.modify(gone, remove=[stack.emulator.store.label_id("Work")])
        after, requests = await stack.call(SEARCH, query)
    assert gone not in ids_of(after) and len(ids_of(after)) == len(ids_of(before)) - 1
    assert shape(requests)[:2] in ([(HISTORY_PATH, None), (LIST_PATH, None)], [(HISTORY_PATH, None), (BATCH_PATH, 1)])


async def test_a_deleted_message_leaves_the_results(tmp_path):
    async with changing_mailbox(tmp_path) as stack:
        before, _ = await stack.call(SEARCH, INBOX)
        stack.emulator.delete(ids_of(before)[0])
        after, requests = await stack.call(SEARCH, INBOX)
    assert ids_of(after)[:9] == ids_of(before)[1:]
    assert [path for path, _ in shape(requests)][:1] == [HISTORY_PATH] and LIST_PATH in [e["path"] for e in requests]


async def test_a_change_that_cannot_matter_keeps_the_cached_answer(tmp_path):
    async with changing_mailbox(tmp_path) as stack:
        query = {"query": "subject:meeting", "max_results": 10}
        before, _ = await stack.call(SEARCH, query)
        stack.emulator.modify(ids_of(before)[0], add=["STARRED"], remove=["UNREAD"])  # labels: not in the query
        outsider = next(m.id for m in stack.emulator.store.messages if m.id not in ids_of(before))
        stack.emulator.delete(outsider)  # not in the answer, and this is a first page
        after, requests = await stack.call(SEARCH, query)
    assert shape(requests) == [(HISTORY_PATH, None)] and ids_of(after) == ids_of(before)


async def test_trash_moves_hide_messages_from_any_query(tmp_path):
    async with changing_mailbox(tmp_path) as stack:
        query = {"query": "subject:meeting", "max_results": 10}
        before, _ = await stack.call(SEARCH, query)
        stack.emulator.modify(ids_of(before)[1], add=["TRASH"])
        after, requests = await stack.call(SEARCH, query)
    assert ids_of(before)[1] not in ids_of(after)
    assert LIST_PATH in [entry["path"] for entry in requests]


async def test_a_later_page_is_run_again_after_any_deletion(tmp_path):
    async with changing_mailbox(tmp_path) as stack:
        first, _ = await stack.call(SEARCH, INBOX)
        page_two = {**INBOX, "page_token": first.structured_content["next_page_token"]}
        before, _ = await stack.call(SEARCH, page_two)
        cached, requests = await stack.call(SEARCH, page_two)
        assert shape(requests) == [(HISTORY_PATH, None)] and ids_of(cached) == ids_of(before)
        stack.emulator.delete(ids_of(first)[0])  # on page one: page two shifts by one
        after, requests = await stack.call(SEARCH, page_two)
    assert LIST_PATH in [entry["path"] for entry in requests]
    assert ids_of(after)[:9] == ids_of(before)[1:]


async def test_history_too_old_means_a_fresh_search(tmp_path):
    async with changing_mailbox(tmp_path) as stack:
        await stack.call(SEARCH, INBOX)
        arrived = stack.emulator.deliver(**{"from": "x@example.org", "subject": "while history expired"})
        stack.emulator.expire_history()
        after, requests = await stack.call(SEARCH, INBOX)
        # the fresh search, and alongside it the mailbox's position for the next ones; the page is not kept
        assert {(e["path"], e["status"]) for e in requests[1:]} >= {(LIST_PATH, 200), (PROFILE_PATH, 200)}
        assert (requests[0]["path"], requests[0]["status"]) == (HISTORY_PATH, 404)
        assert ids_of(after)[0] == arrived["id"]
        _, requests = await stack.call(SEARCH, INBOX)
        assert shape(requests) == [(LIST_PATH, None)]  # anchored anew (summaries cached)
        again, requests = await stack.call(SEARCH, INBOX)
    assert shape(requests) == [(HISTORY_PATH, None)] and ids_of(again) == ids_of(after)


async def test_pages_expire_and_the_lru_keeps_ten(tmp_path):
    async with changing_mailbox(tmp_path, GMAIL_MCP_SEARCH_CACHE_TTL_S="300") as stack:
        clock = [1000.0]
        stack.gmail.searches._clock = lambda: clock[0]
        await stack.call(SEARCH, INBOX)
        clock[0] += 299
        _, requests = await stack.call(SEARCH, INBOX)
        assert shape(requests) == [(HISTORY_PATH, None)]
        clock[0] += 302
        _, requests = await stack.call(SEARCH, INBOX)
        assert shape(requests) == [(LIST_PATH, None)]  # expired: searched again (summaries still cached)
        relative = {"query": "newer_than:30d", "max_results": 5}
        await stack.call(SEARCH, relative)
        clock[0] += 61  # a relative date moves with the clock: such pages live one minute
        _, requests = await stack.call(SEARCH, relative)
        assert LIST_PATH in [entry["path"] for entry in requests]
        for size in range(11, 22):  # eleven other searches push the first ones out
            await stack.call(SEARCH, {"query": "in:inbox", "max_results": size})
        _, requests = await stack.call(SEARCH, INBOX)
    assert LIST_PATH in [entry["path"] for entry in requests]


async def test_caches_can_be_turned_off(tmp_path):
    async with changing_mailbox(
        tmp_path, GMAIL_MCP_SEARCH_CACHE_SIZE="0", GMAIL_MCP_SUMMARY_CACHE_ENTRIES="0"
    ) as stack:
        await stack.call(SEARCH, INBOX)
        _, requests = await stack.call(SEARCH, INBOX)
    assert shape(requests) == [(LIST_PATH, None), (BATCH_PATH, 10)]


async def test_a_failed_history_check_falls_back_to_a_fresh_search(tmp_path):
    async with changing_mailbox(tmp_path, GMAIL_MCP_BACKOFF_SCALE="0.001") as stack:
        before, _ = await stack.call(SEARCH, INBOX)
        stack.emulator.add_fault(status=500, reason="backendError", path_regex="/history$", count=10)
        after, requests = await stack.call(SEARCH, INBOX)
    assert ids_of(after) == ids_of(before)
    assert [e["path"] for e in requests].count(HISTORY_PATH) == 3 and requests[-1]["path"] == LIST_PATH
