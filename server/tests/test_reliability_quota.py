"""The client-side quota limiter: token-bucket arithmetic on a fake clock, what each Gmail call costs, and that it
turns a burst into a queue instead of a 429 storm against the emulator's per-user concurrency limit.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from googleapiclient.http import HttpMockSequence

from server.errors import GmailError
from server.gmail.quota import UNITS_GET, QuotaLimiter
from server.gmail_client import GmailClient
from server.runtime.config import load_settings
from server.tests.support.emulator import emulator_settings
from server.tests.support.fake_gmail import StaticCredentials, gmail_error, json_response, list_page, metadata_batch
from server.tests.support.reliability import tally


class FakeTime:
    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(round(seconds, 6))
        self.now += seconds


def limiter(fake: FakeTime, rate: float = 100, burst: float = 250) -> QuotaLimiter:
    return QuotaLimiter(rate, burst, clock=fake.clock, sleep=fake.sleep)


def test_an_idle_client_spends_its_burst_without_waiting_then_queues_at_the_rate():
    fake = FakeTime()
    bucket = limiter(fake)
    assert [bucket.acquire(5) for _ in range(50)] == [0.0] * 50  # 250 units: 50 list/get calls at once
    assert bucket.acquire(5) == pytest.approx(0.05)  # then 100 units/s: one 5-unit call per 50 ms
    assert fake.sleeps == [0.05]


def test_the_bucket_refills_with_time_up_to_the_burst():
    fake = FakeTime()
    bucket = limiter(fake)
    bucket.acquire(250)
    fake.now += 1.0  # 100 units back
    assert [bucket.reserve(5) for _ in range(20)] == [0.0] * 20
    assert bucket.reserve(5) == pytest.approx(0.05)
    fake.now += 3600  # never more than the burst, however long the client idled
    bucket2 = limiter(FakeTime())
    assert bucket2.reserve(250) == 0.0 and bucket2.reserve(1) == pytest.approx(0.01)


def test_callers_queue_in_arrival_order_and_a_huge_request_still_goes_through():
    fake = FakeTime()
    bucket = limiter(fake)
    bucket.reserve(250)
    assert [bucket.reserve(5) for _ in range(3)] == pytest.approx([0.05, 0.10, 0.15])
    assert limiter(FakeTime(), burst=10).reserve(500) == pytest.approx(4.9)  # bigger than the burst: waits, no deadlock


@pytest.mark.parametrize("rate", [0, float("inf")])
def test_rate_zero_or_infinite_disables_the_limiter(rate):
    fake = FakeTime()
    bucket = limiter(fake, rate=rate)
    assert not bucket.enabled and all(bucket.acquire(250) == 0.0 for _ in range(10)) and fake.sleeps == []


def test_the_setting_comes_from_the_environment():
    assert load_settings(env={}, dotenv=False).quota_units_per_s == 100
    assert load_settings(env={"GMAIL_MCP_QUOTA_UNITS_PER_S": "0"}, dotenv=False).quota_units_per_s == 0
    with pytest.raises(ValueError):
        load_settings(env={"GMAIL_MCP_QUOTA_UNITS_PER_S": "-1"}, dotenv=False)


class RecordingQuota(QuotaLimiter):
    def __init__(self) -> None:
        super().__init__(0)
        self.spent: list[float] = []

    def acquire(self, units: float) -> float:
        self.spent.append(units)
        return 0.0


def test_each_gmail_call_and_each_batch_part_and_each_retry_is_charged():
    quota = RecordingQuota()
    mock = HttpMockSequence(
        [
            list_page(["a", "b", "c"]),
            gmail_error(500, "backendError", "Backend Error"),
            json_response({"id": "a", "threadId": "ta"}),
            metadata_batch(["a", "b", "c"], failures={"c": (429, "rateLimitExceeded", "slow down")}),
            metadata_batch(["c"]),
            json_response({"emailAddress": "me@example.com"}),
        ]
    )
    client = GmailClient(
        load_settings(env={}, dotenv=False),
        StaticCredentials(),
        sleep=lambda _s: None,
        http_factory=lambda: mock,
        quota=quota,
    )
    client.list_messages(query="x", max_results=3)
    client.get_message("a", fmt="minimal")  # a 500, then success: two attempts
    client.get_messages_metadata(["a", "b", "c"], headers=["From"])  # 3 parts, then the 429'd part again
    client.get_profile()
    assert quota.spent == [5, 5, 5, 15, 5, 1]


# -- against the emulator's per-user concurrency limit ----------------------------------------------------------


def burst_of_gets(emulator, directory, quota: QuotaLimiter, calls: int = 24) -> list[object]:
    settings = emulator_settings(emulator, directory, backoff_scale=0.001)
    from server.auth import TokenStore

    client = GmailClient(settings, TokenStore(settings), quota=quota)
    client.get_profile()  # refresh the token before the burst
    ids = [message.id for message in emulator.store.messages][:calls]
    start = threading.Barrier(calls)

    def one(message_id: str) -> object:
        start.wait()  # all threads fire together: the burst an assistant's parallel tool calls make
        try:
            return client.get_message(message_id, fmt="minimal")
        except GmailError as error:
            return error

    with ThreadPoolExecutor(max_workers=calls) as pool:
        return list(pool.map(one, ids))


def test_a_burst_queues_under_the_limiter_instead_of_earning_429s(emulator, tmp_path):
    emulator.set_concurrency_limit(3)
    emulator.add_fault(latency_ms=15, count=10_000)  # every call takes a moment, so unpaced calls pile up

    burst_of_gets(emulator, tmp_path, QuotaLimiter(0))
    unpaced_429s = sum(1 for entry in emulator.requests() if entry["status"] == 429)
    assert unpaced_429s > 0  # the problem: a burst of 24 overruns a 3-request concurrency limit

    emulator.reset()
    emulator.set_concurrency_limit(3)
    emulator.add_fault(latency_ms=15, count=10_000)
    waits: list[float] = []

    def sleep(seconds: float) -> None:  # the limiter's waits, counted; still slept, so the pacing is real
        waits.append(seconds)
        time.sleep(seconds)

    paced = burst_of_gets(emulator, tmp_path, QuotaLimiter(125, burst_units=5, sleep=sleep))  # one get per 40 ms
    assert all(isinstance(result, dict) for result in paced), [r for r in paced if not isinstance(r, dict)]
    assert [entry for entry in emulator.requests() if entry["status"] == 429] == []
    # Paced, not throttled: no call waits longer than the whole burst's units at the sustained rate require.
    assert waits and max(waits) <= len(paced) * UNITS_GET / 125, waits
    tally("quota_burst", len(paced), unpaced_429s=unpaced_429s, paced_429s=0)
