"""Load over HTTP: 50 concurrent tool calls from 5 MCP clients (both protocol eras) to one `--http` server,
against an emulator that takes 100 ms per round trip. Every call must succeed with its own answer; the calls must
really overlap (requests in flight at once in the emulator's request log). Timings are printed, never asserted here
(bench/http_bench.py measures them)."""

from __future__ import annotations

import time

import anyio
import pytest

from server.demo import DEMO_MAILBOX
from server.tests.support.emulator import emulator_env
from server.tests.support.http_server import TEST_SERVER_ENV, http_server, mcp_client

pytestmark = [pytest.mark.anyio, pytest.mark.slow]  # HTTP servers under load: the slow tier (`pytest -m slow`)
TOKEN = "load-test-token-0123456789abcdef"
CLIENTS, CALLS_PER_CLIENT = 5, 10
SEARCH, GET = "gmail_search_messages", "gmail_get_message"


@pytest.fixture
def anyio_backend():
    return "asyncio"


def most_at_once(entries: list[dict]) -> int:
    """The largest number of requests the emulator was serving at the same moment (latency included)."""
    edges = []
    for entry in entries:
        edges += [(entry["started_at"], 1), (entry["started_at"] + (entry["duration_ms"] or 0) / 1000, -1)]
    peak = current = 0
    for _, change in sorted(edges, key=lambda edge: (edge[0], edge[1])):
        current += change
        peak = max(peak, current)
    return peak


async def test_fifty_concurrent_calls_from_five_clients_all_succeed(tmp_path, make_emulator):
    emulator = make_emulator(DEMO_MAILBOX, rebase_dates=True, latency_ms=100)
    ids = [message.id for message in emulator.store.messages if "INBOX" in message.label_ids][:25]
    env = emulator_env(
        emulator, emulator.write_token(tmp_path / "token.json"), **TEST_SERVER_ENV, GMAIL_MCP_HTTP_TOKEN=TOKEN
    )
    with http_server(env) as server:
        results: dict[tuple[int, int], object] = {}

        async def one_client(number: int) -> None:
            mode = "legacy" if number % 2 else "auto"
            async with mcp_client(server.url, mode, {"Authorization": f"Bearer {TOKEN}"}) as client:
                await client.list_tools()

                async def call(index: int) -> None:
                    if index % 2:
                        arguments = {"message_id": ids[(number * CALLS_PER_CLIENT + index) % len(ids)]}
                        results[number, index] = (GET, arguments, await client.call_tool(GET, arguments))
                    else:
                        arguments = {"query": f"newer_than:{3650 + index}d", "max_results": 5}
                        results[number, index] = (SEARCH, arguments, await client.call_tool(SEARCH, arguments))

                async with anyio.create_task_group() as calls:
                    for index in range(CALLS_PER_CLIENT):
                        calls.start_soon(call, index)

        started = time.monotonic()
        with anyio.fail_after(120):
            async with anyio.create_task_group() as clients:
                for number in range(CLIENTS):
                    clients.start_soon(one_client, number)
        elapsed = time.monotonic() - started
        peak = most_at_once(emulator.requests())
        ends = server.log_text().count('"tool end"')
    assert len(results) == CLIENTS * CALLS_PER_CLIENT
    for tool, arguments, result in results.values():
        assert result.is_error is False, result.content[0].text
        if tool == GET:
            assert result.structured_content["id"] == arguments["message_id"]  # its own answer, not another's
        else:
            assert result.structured_content["query"] == arguments["query"]
            assert result.structured_content["result_count"] == 5
    assert ends == CLIENTS * CALLS_PER_CLIENT
    assert peak >= 10  # the calls overlapped on the way to Gmail
    print(f"\n50 calls from 5 clients over HTTP in {elapsed:.2f} s (emulator peak in flight: {peak})")
