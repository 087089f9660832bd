"""The pieces under the caches, one by one: the summary cache's bounds, the per-call cost account, the adaptive
batch size (pure, and against the emulator's concurrency limit), the alert thresholds, and the rule that every
client endpoint is either cached or deliberately passed through."""

from __future__ import annotations

import contextvars
import inspect
import logging
import threading

import pytest

from server.auth import TokenStore
from server.gmail.batch_size import AdaptiveBatchSize
from server.gmail.cache import PASS_THROUGH, CachedGmail, SummaryCache
from server.gmail_client import GmailClient
from server.runtime import cost
from server.runtime.alerts import AlertMonitor
from server.runtime.config import load_settings
from server.runtime.observability import Metrics


def test_summary_cache_is_bounded_by_entries_and_bytes():
    by_count = SummaryCache(max_entries=2, max_bytes=10_000)
    for name in "abc":
        by_count.put(name, "p", {"id": name})
    assert by_count.get("a", "p") is None and by_count.get("c", "p") == {"id": "c"} and len(by_count) == 2
    by_size = SummaryCache(max_entries=100, max_bytes=130)  # each entry below is 55 bytes of JSON
    by_size.put("a", "p", {"snippet": "x" * 40})
    by_size.put("b", "p", {"snippet": "y" * 40})
    assert by_size.get("a", "p") is not None  # used: now the most recent
    by_size.put("c", "p", {"snippet": "z" * 40})
    assert by_size.get("b", "p") is None and by_size.get("a", "p") is not None
    by_size.put("huge", "p", {"snippet": "x" * 500})  # larger than the whole cache: not kept
    assert by_size.get("huge", "p") is None
    by_size.forget(["a"])
    assert by_size.get("a", "p") is None


def test_every_client_endpoint_is_cached_or_deliberately_passed_through():
    endpoints = {
        name
        for name, member in inspect.getmembers(GmailClient, inspect.isfunction)
        if not name.startswith("_") and name != "warm_up"
    }
    wrapped = {name for name in vars(CachedGmail) if not name.startswith("_")}
    undecided = endpoints - wrapped - PASS_THROUGH
    assert not undecided, (
        f"decide for {sorted(undecided)}: a read the cache leaves alone goes into gmail/cache.py PASS_THROUGH; "
        "a write gets a CachedGmail method that calls invalidate_searches() after the client's"
    )


def test_cost_reaches_threads_that_carry_the_context_and_nothing_outside_a_call():
    cost.record_request(5)  # outside a call: recorded nowhere, no error
    with cost.measuring() as spent:
        cost.record_request(5)
        worker = threading.Thread(target=contextvars.copy_context().run, args=(cost.record_request, 2))
        worker.start()
        worker.join()
        cost.record(cache_hits=3, token_requests=1)
        cost.record_request(5, retry=True)
    assert spent.as_meta() == {
        "requests": 3,
        "quota_units": 12,
        "retries": 1,
        "token_requests": 1,
        "cache_hits": 3,
        "history_checks": 0,
    }
    assert cost.current() is None


def test_adaptive_batch_size_shrinks_fast_and_grows_slowly():
    size = AdaptiveBatchSize(start=10, floor=2, ceiling=14, grow_after=3, step=2)
    size.record(sent=10, rate_limited=6)  # 4 went through
    assert size.size == 4
    size.record(sent=4, rate_limited=4)  # nothing went through: the floor
    assert size.size == 2
    for _ in range(3):
        size.record(sent=2, rate_limited=0)
    assert size.size == 4
    size.record(sent=1, rate_limited=0)  # a short last batch says nothing about the limit
    for _ in range(20):
        size.record(sent=size.size, rate_limited=0)
    assert size.size == 14
    with pytest.raises(ValueError):
        AdaptiveBatchSize(start=1, floor=2)


def test_a_concurrency_limit_shrinks_the_batch_and_only_failed_parts_are_sent_again(emulator, tmp_path):
    settings = load_settings(
        env={
            "GMAIL_API_ENDPOINT": emulator.url,
            "GMAIL_TOKEN_URI": emulator.token_uri,
            "GMAIL_TOKEN_PATH": str(emulator.write_token(tmp_path / "token.json")),
            "GMAIL_MCP_QUOTA_UNITS_PER_S": "0",
        },
        dotenv=False,
    )
    sleeps: list[float] = []
    client = GmailClient(settings, TokenStore(settings), sleep=sleeps.append, rand=lambda: 0.0)
    ids = [message.id for message in emulator.store.messages[:16]]
    emulator.set_concurrency_limit(4)
    results = client.get_messages_metadata(ids, headers=["Subject"])
    assert all(isinstance(results[message_id], dict) for message_id in ids)
    batches = [entry for entry in emulator.requests() if entry["batch_parts"]]
    # 10 (4 go through), the other 6 by 4; then the 6 that failed, again by 4
    assert [entry["batch_parts"] for entry in batches] == [10, 4, 2, 4, 2]
    assert sum(part["status"] == 429 for entry in batches for part in entry["parts"]) == 6
    assert client.batch_size.size == 4 and sleeps == [1.0]  # one retry round for the failed parts


def test_alerts_warn_once_when_a_condition_starts(caplog):
    caplog.set_level(logging.INFO)
    now = [0.0]
    monitor = AlertMonitor(logging.getLogger("test.alerts"), clock=lambda: now[0])
    for _ in range(3):
        monitor.rate_limited()
    assert not monitor.rate_limit.active
    for _ in range(5):  # the 4th within 5 minutes starts the condition; more do not repeat the warning
        monitor.rate_limited()
        now[0] += 1
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and warnings[0].alert == "rate_limited"
    now[0] += 400  # the window empties; the next event clears it
    monitor.search_finished(100)
    assert not monitor.rate_limit.active and any(r.getMessage() == "alert cleared" for r in caplog.records)
    for latency in (6000, 7000, 100):
        monitor.search_finished(latency)
    assert not monitor.slow_search.active  # 4 searches in the window: too few to call it a trend
    monitor.search_finished(8000)
    assert monitor.slow_search.active and monitor.slow_search.started == 1
    monitor.search_finished(9000)
    assert monitor.slow_search.started == 1
    assert sum(r.levelno == logging.WARNING for r in caplog.records) == 2


def test_metrics_summary_counts_cache_outcomes_and_history_checks():
    metrics = Metrics()
    metrics.record_cache("search", hits=3, misses=1)
    metrics.record_cache("search", refreshed=1)
    metrics.record_history_check()
    summary = metrics.summary()
    assert summary["cache"]["search"] == {"hits": 3, "misses": 1, "refreshed": 1, "hit_rate": 0.6}
    assert summary["history_checks"] == 1
    assert summary["alerts_started"] == {"rate_limited": 0, "search_p95": 0}


def test_writes_and_invalidation_forget_search_pages():
    client = GmailClient(load_settings(env={}, dotenv=False), TokenStore(load_settings(env={}, dotenv=False)))
    cached = CachedGmail(client)
    cached.searches.put(("q", 10, "", False), {"messages": [{"id": "a"}]}, 5, time_relative=False)
    cached.invalidate_searches()
    assert cached.searches.get(("q", 10, "", False)) is None
