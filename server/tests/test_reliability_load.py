"""Load: concurrent tool calls in one stdio session against a slow Gmail, a ping and tools/list answered while a
call is stuck, and no `httplib2.Http` ever used by two threads at once.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from typing import ClassVar

import anyio
import httplib2
import pytest

from server.auth import TokenStore
from server.gmail_client import GmailClient
from server.protocol import dispatch
from server.runtime.observability import Metrics
from server.tests.support.emulator import emulator_settings, wait_until_in_flight
from server.tests.support.reliability import GET, SEARCH, StdoutWatch, mcp_over_stdio, result_text, server_env, tally
from server.tools import ToolContext
from server.toolsets import ALWAYS_ON_TOOLS

pytestmark = [pytest.mark.anyio, pytest.mark.slow]  # load with injected latency: the slow tier (`pytest -m slow`)
LATENCY_MS = 200  # per round trip, like a distant Gmail


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture
def slow_emulator(make_emulator):
    return make_emulator(latency_ms=LATENCY_MS)


def inbox_ids(emulator, count: int) -> list[str]:
    return [message.id for message in emulator.store.messages if "INBOX" in message.label_ids][:count]


@pytest.mark.filterwarnings("ignore:ping is removed")  # ping is a handshake-era method; this session is one
async def test_twenty_concurrent_calls_all_succeed_and_pings_stay_prompt(slow_emulator, tmp_path):
    env = server_env(slow_emulator, slow_emulator.write_token(tmp_path / "token.json"))
    ids = inbox_ids(slow_emulator, 10)
    calls = [(GET, {"message_id": message_id, "format": "metadata"}) for message_id in ids]
    calls += [(SEARCH, {"query": f"newer_than:{3650 + n}d", "max_results": 3}) for n in range(10)]
    results: dict[int, object] = {}
    watch = StdoutWatch()
    with open(tmp_path / "stderr.log", "w") as errlog, watch.watching():
        async with mcp_over_stdio(env, errlog) as client:
            await client.call_tool(SEARCH, {"query": "in:inbox", "max_results": 1})  # token refresh, imports

            async def one(index: int, tool: str, arguments: dict) -> None:
                results[index] = await client.call_tool(tool, arguments)

            started = time.monotonic()
            async with anyio.create_task_group() as group:
                for index, (tool, arguments) in enumerate(calls):
                    group.start_soon(one, index, tool, arguments)
            concurrent_s = time.monotonic() - started

            # One call stuck on a 1.5 s Gmail answer; the event loop must still answer at once.
            slow_emulator.add_fault(latency_ms=1500, path_regex=f"/messages/{ids[0]}$")
            pings: list[float] = []
            async with anyio.create_task_group() as group:
                group.start_soon(one, 99, GET, {"message_id": ids[0]})
                await anyio.to_thread.run_sync(wait_until_in_flight, slow_emulator, f"/messages/{ids[0]}$")
                for _ in range(3):
                    sent = time.monotonic()
                    await client.send_ping()
                    pings.append(time.monotonic() - sent)
                sent = time.monotonic()
                listed = await client.list_tools()
                list_s = time.monotonic() - sent
                slow_pending = 99 not in results
    assert len(results) == 21 and all(not result.is_error for result in results.values()), [
        result_text(r)[:300] for r in results.values() if r.is_error
    ]
    serial_s = (10 * 1 + 10 * 2) * LATENCY_MS / 1000  # a get is one round trip, a search two (list + batch)
    assert concurrent_s < serial_s / 3, f"20 calls took {concurrent_s:.2f} s; one at a time would take {serial_s} s"
    assert slow_pending and max(pings) < 0.5 and list_s < 0.5 and len(listed.tools) == len(ALWAYS_ON_TOOLS)
    assert watch.bad_lines == []
    tally("load", 20, concurrent_s=round(concurrent_s, 2), max_ping_ms=round(max(pings) * 1000, 1))


class WatchedHttp(httplib2.Http):
    """An httplib2.Http that records which threads use it and how many at the same time."""

    lock: ClassVar[threading.Lock] = threading.Lock()
    threads: ClassVar[dict[int, set[int]]] = defaultdict(set)  # id(http) -> thread idents that used it
    overlaps: ClassVar[list[int]] = []  # id(http) each time a second thread entered while one was inside

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.in_use = 0

    def request(self, *args, **kwargs):
        with WatchedHttp.lock:
            self.in_use += 1
            WatchedHttp.threads[id(self)].add(threading.get_ident())
            if self.in_use > 1:
                WatchedHttp.overlaps.append(id(self))
        try:
            return super().request(*args, **kwargs)
        finally:
            with WatchedHttp.lock:
                self.in_use -= 1


async def test_no_http_object_is_ever_shared_by_concurrent_threads(slow_emulator, tmp_path):
    settings = emulator_settings(slow_emulator, tmp_path, quota_units_per_s=0.0)
    metrics = Metrics()
    client = GmailClient(settings, TokenStore(settings), metrics=metrics, http_factory=lambda: WatchedHttp(timeout=10))
    ctx = ToolContext(gmail=client, enrich_top_k=3, metrics=metrics)
    ids = inbox_ids(slow_emulator, 10)
    outcomes: list[bool] = []
    used_by: set[int] = set()

    async def one(tool: str, arguments: dict) -> None:
        result = await dispatch.call_tool(ctx, tool, arguments)
        outcomes.append(not result["isError"])

    for _ in range(2):  # a second round reuses the connections of the first
        async with anyio.create_task_group() as group:
            for message_id in ids:
                group.start_soon(one, GET, {"message_id": message_id, "format": "metadata"})
                group.start_soon(one, SEARCH, {"query": "in:inbox", "max_results": 3})
    for threads in WatchedHttp.threads.values():
        used_by |= threads
    assert outcomes == [True] * 40
    assert len(WatchedHttp.threads) > 1 and len(used_by) > 1  # really concurrent: many threads, many connections
    assert WatchedHttp.overlaps == []  # but never one Http in two threads at the same moment
