"""Requests per tool call, counted by the emulator: a regression to N+1 requests, or to reconnecting, fails here.

The server is the real one (MCP dispatch in-process, worker threads, google-api-python-client over loopback
HTTP) against the emulator serving the demo mailbox. Timings are never asserted; bench/search_bench.py measures
them. The quota limiter is switched off: it paces calls, it does not change which requests are made.
"""

from __future__ import annotations

import json
import threading
from typing import Any, ClassVar
from urllib.parse import parse_qs

import httplib2
import pytest
from mcp.client import Client

from server.auth import TokenStore
from server.emulator import Emulator
from server.gmail_client import GmailClient
from server.protocol.dispatch import build_server
from server.runtime.config import Settings
from server.runtime.observability import Metrics
from server.tests.support.emulator import emulator_settings
from server.tools import ToolContext
from server.toolsets.messages.search import ENRICH_HEADERS

pytestmark = pytest.mark.anyio
SEARCH, GET = "gmail_search_messages", "gmail_get_message"
LIST_PATH, BATCH_PATH = "/gmail/v1/users/me/messages", "/batch/gmail/v1"
TOOLS_LIST_LIMIT = 10 * 1024  # every read tool together: what each conversation pays for tools/list


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture(scope="module")
def demo(demo_emulator: Emulator, tmp_path_factory: pytest.TempPathFactory) -> tuple[Emulator, Settings]:
    """The session's demo emulator, and settings pointing a server at it (one token file for the module)."""
    return demo_emulator, emulator_settings(demo_emulator, tmp_path_factory.mktemp("counts"), quota_units_per_s=0.0)


class RecordingHttp(httplib2.Http):
    """httplib2.Http that keeps the bodies it sends, to read the parts of a batch as they went on the wire."""

    sent: ClassVar[list[str]] = []

    def request(self, uri: str, method: str = "GET", body: Any = None, *args: Any, **kwargs: Any) -> Any:
        if body:
            self.sent.append(body)
        return super().request(uri, method, body, *args, **kwargs)


def new_server_context(settings: Settings) -> ToolContext:
    """What `python -m server.main` builds at start-up, pointed at the emulator (bodies sent are recorded)."""
    metrics = Metrics()
    client = GmailClient(
        settings, TokenStore(settings), metrics=metrics, http_factory=lambda: RecordingHttp(timeout=10)
    )
    return ToolContext(gmail=client, enrich_top_k=settings.enrich_top_k, metrics=metrics)


async def measured(client: Client, emulator: Any, tool: str, arguments: dict[str, Any]) -> tuple[Any, list[dict]]:
    """Calls a tool; returns its result and the requests the emulator saw during the call."""
    since = emulator.requests()[-1]["seq"] if emulator.requests() else 0
    result = await client.call_tool(tool, arguments)
    assert result.is_error is False, result.content[0].text
    return result, emulator.requests(since)


def shape(entries: list[dict]) -> list[tuple[str, str, int | None]]:
    return [(entry["method"], entry["path"], entry["batch_parts"]) for entry in entries]


def query_of(entry: dict) -> dict[str, list[str]]:
    return parse_qs(entry["query"])


async def warm(client: Client, emulator: Any) -> Any:
    """The first search of a new server; returns its result.

    It refreshes the access token unless an earlier server of this module saved a fresh one in the token file.
    """
    first, entries = await measured(client, emulator, SEARCH, {"query": "in:inbox", "max_results": 10})
    paths = [entry["path"] for entry in entries]
    assert paths in (["/token", LIST_PATH, BATCH_PATH], [LIST_PATH, BATCH_PATH])
    return first


def assert_enrichment_batch(entry: dict, result: Any, parts: int = 10) -> None:
    ids = [item["id"] for item in result.structured_content["messages"][:parts]]
    assert entry["batch_parts"] == parts and entry["status"] == 200
    assert [(part["method"], part["path"], part["status"]) for part in entry["parts"]] == [
        ("GET", f"{LIST_PATH}/{message_id}", 200) for message_id in ids
    ]


async def test_search_10_is_one_list_and_one_batch_of_10(demo):
    emulator, settings = demo
    async with Client(build_server(new_server_context(settings)), mode="legacy") as client:
        await warm(client, emulator)
        result, entries = await measured(client, emulator, SEARCH, {"query": "in:inbox", "max_results": 10})
    assert shape(entries) == [("GET", LIST_PATH, None), ("POST", BATCH_PATH, 10)]
    listing = query_of(entries[0])
    assert listing["maxResults"] == ["10"] and listing["fields"] == [
        "messages(id,threadId),nextPageToken,resultSizeEstimate"
    ]
    assert_enrichment_batch(entries[1], result)
    part_lines = [line for line in RecordingHttp.sent[-1].splitlines() if line.startswith("GET ")]
    assert len(part_lines) == 10
    for line in part_lines:  # metadata only, three headers, a partial response
        assert "format=metadata&metadataHeaders=From&metadataHeaders=Subject&metadataHeaders=Date" in line
        assert "fields=id%2CthreadId%2Csnippet%2CinternalDate%2Cpayload%2Fheaders" in line


async def test_search_50_is_one_list_of_50_and_one_batch_of_the_top_10(demo):
    emulator, settings = demo
    async with Client(build_server(new_server_context(settings)), mode="legacy") as client:
        await warm(client, emulator)
        result, entries = await measured(client, emulator, SEARCH, {"query": "in:inbox", "max_results": 50})
    assert result.structured_content["result_count"] == 50
    assert shape(entries) == [("GET", LIST_PATH, None), ("POST", BATCH_PATH, 10)]
    assert query_of(entries[0])["maxResults"] == ["50"]
    assert_enrichment_batch(entries[1], result)


async def test_a_page_token_search_is_one_list_and_one_batch(demo):
    emulator, settings = demo
    async with Client(build_server(new_server_context(settings)), mode="legacy") as client:
        first = await warm(client, emulator)
        page_token = first.structured_content["next_page_token"]
        arguments = {"query": "in:inbox", "max_results": 10, "page_token": page_token}
        result, entries = await measured(client, emulator, SEARCH, arguments)
    assert shape(entries) == [("GET", LIST_PATH, None), ("POST", BATCH_PATH, 10)]
    assert query_of(entries[0])["pageToken"] == [page_token]
    assert_enrichment_batch(entries[1], result)


@pytest.mark.parametrize("fmt", ["full", "metadata"])
async def test_get_message_is_exactly_one_request(demo, fmt):
    emulator, settings = demo
    async with Client(build_server(new_server_context(settings)), mode="legacy") as client:
        first = await warm(client, emulator)
        message_id = first.structured_content["messages"][0]["id"]
        _, entries = await measured(client, emulator, GET, {"message_id": message_id, "format": fmt})
    assert shape(entries) == [("GET", f"{LIST_PATH}/{message_id}", None)]
    params = query_of(entries[0])
    assert params["format"] == [fmt]
    if fmt == "metadata":
        assert set(ENRICH_HEADERS) <= set(params["metadataHeaders"])


async def test_later_calls_neither_refresh_the_token_nor_reconnect(demo):
    emulator, settings = demo
    context = new_server_context(settings)
    async with Client(build_server(context), mode="legacy") as client:
        first = await warm(client, emulator)
        connections = emulator.info()["connections_accepted"]
        since = emulator.requests()[-1]["seq"]
        for max_results in (10, 50, 5):
            await client.call_tool(SEARCH, {"query": "in:inbox", "max_results": max_results})
        await client.call_tool(GET, {"message_id": first.structured_content["messages"][0]["id"]})

        # anyio retires idle worker threads after 10 s: calls from brand-new threads must reuse the connection.
        def from_a_new_thread() -> None:
            context.gmail.list_messages(query="in:inbox", max_results=1)

        for _ in range(2):
            worker = threading.Thread(target=from_a_new_thread)
            worker.start()
            worker.join()
    assert "/token" not in [entry["path"] for entry in emulator.requests(since)]
    assert emulator.info()["connections_accepted"] == connections


async def test_tools_list_of_all_read_tools_fits_in_10_kb(demo):
    _, settings = demo
    async with Client(build_server(new_server_context(settings)), mode="legacy") as client:
        listed = await client.list_tools()
    wire = json.dumps(listed.model_dump(mode="json", by_alias=True, exclude_none=True), separators=(",", ":"))
    assert len(wire.encode("utf-8")) <= TOOLS_LIST_LIMIT
