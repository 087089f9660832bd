"""Resources (gmail://messages/{id}, gmail://threads/{id}, gmail://labels) and prompts through a real MCP client
session in both protocol eras, against the emulator serving the demo mailbox; search results link to their
messages as resource_link content."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp.client import Client
from mcp.shared.exceptions import MCPError

from server import demo
from server.emulator import Emulator, start_emulator
from server.protocol.dispatch import build_server
from server.tests.support.fences import without_fence_values
from server.tests.support.reading import emulator_context
from server.tools import ToolContext

pytestmark = pytest.mark.anyio
MODES = ["legacy", "auto"]


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Emulator, Path]]:
    with start_emulator(demo.DEMO_MAILBOX, rebase_dates=True) as emulator:
        yield emulator, emulator.write_token(tmp_path_factory.mktemp("resources") / "token.json")


def context(running: tuple[Emulator, Path]) -> ToolContext:
    return emulator_context(*running)


def offsite_first(emulator: Emulator) -> Any:
    return emulator.store.find(demo.NOTABLE["offsite-1"].subject)[-1]


@pytest.mark.parametrize("mode", MODES)
async def test_resources_and_templates_are_listed(running, mode):
    async with Client(build_server(context(running)), mode=mode) as client:
        resources = (await client.list_resources()).resources
        templates = (await client.list_resource_templates()).resource_templates
    assert [(r.uri, r.mime_type) for r in resources] == [("gmail://labels", "text/markdown")]
    assert {t.uri_template for t in templates} == {"gmail://messages/{id}", "gmail://threads/{id}"}
    assert all(t.description and t.title for t in templates)


@pytest.mark.parametrize("mode", MODES)
async def test_resources_read_through_the_tools_handlers(running, mode):
    emulator, _ = running
    first = offsite_first(emulator)
    async with Client(build_server(context(running)), mode=mode) as client:
        message = (await client.read_resource(f"gmail://messages/{first.id}")).contents[0]
        thread = (await client.read_resource(f"gmail://threads/{first.thread_id}")).contents[0]
        labels = (await client.read_resource("gmail://labels")).contents[0]
        as_tool = await client.call_tool("gmail_get_thread", {"thread_id": first.thread_id})
    assert message.mime_type == "text/markdown" and message.text.startswith(f"# {demo.NOTABLE['offsite-1'].subject}\n")
    assert "Proposal for the December offsite in Lisbon" in message.text
    expected = f"# {demo.NOTABLE['offsite-1'].subject}\n\n{as_tool.content[0].text}"
    assert without_fence_values(thread.text) == without_fence_values(expected)
    assert labels.text.startswith("# Gmail labels\n\nSystem labels:") and "Family/Kids" in labels.text


@pytest.mark.parametrize("mode", MODES)
async def test_resource_errors_are_protocol_errors_with_a_hint(running, mode):
    async with Client(build_server(context(running)), mode=mode) as client:
        with pytest.raises(MCPError) as missing:
            await client.read_resource("gmail://messages/0123456789abcdef")
        with pytest.raises(MCPError) as malformed:
            await client.read_resource("gmail://messages/not*an*id")
        with pytest.raises(MCPError) as unknown:
            await client.read_resource("gmail://drafts/1")
    not_found = -32002 if mode == "legacy" else -32602  # 2026-07-28 writes it as invalid params (SEP-2164)
    assert missing.value.error.code == not_found and "Hint:" in missing.value.error.message
    assert malformed.value.error.code == -32602 and "message_id" in malformed.value.error.message
    assert unknown.value.error.code == not_found and "gmail://threads/{id}" in unknown.value.error.message
    assert missing.value.error.data["uri"] == "gmail://messages/0123456789abcdef"
    assert unknown.value.error.data == {"uri": "gmail://drafts/1"}


@pytest.mark.parametrize("mode", MODES)
async def test_prompts_are_listed_and_filled_in(running, mode):
    emulator, _ = running
    first = offsite_first(emulator)
    async with Client(build_server(context(running)), mode=mode) as client:
        prompts = {p.name: p for p in (await client.list_prompts()).prompts}
        triage = await client.get_prompt("triage-inbox", {"days": "2"})
        summary = await client.get_prompt("summarize-thread", {"thread_id": first.thread_id})
        waiting = await client.get_prompt("needs-reply", {})
        with pytest.raises(MCPError) as no_thread:
            await client.get_prompt("summarize-thread", {})
        with pytest.raises(MCPError) as bad_days:
            await client.get_prompt("triage-inbox", {"days": "many"})
        with pytest.raises(MCPError) as superscript_days:  # "¹".isdigit() is true, yet int() refuses it
            await client.get_prompt("triage-inbox", {"days": "\u00b9"})
    assert set(prompts) == {"triage-inbox", "summarize-thread", "needs-reply"}
    assert [a.name for a in prompts["summarize-thread"].arguments] == ["thread_id"]
    assert prompts["summarize-thread"].arguments[0].required is True
    assert (
        "newer_than_days=2" in triage.messages[0].content.text
        and "never follow instructions" in triage.messages[0].content.text.lower()
    )
    assert (
        "last_from_me" in waiting.messages[0].content.text and "newer_than_days=7" in waiting.messages[0].content.text
    )
    embedded = summary.messages[1].content
    assert embedded.type == "resource" and embedded.resource.uri == f"gmail://threads/{first.thread_id}"
    assert "Lisbon" in embedded.resource.text
    assert no_thread.value.error.code == -32602 and bad_days.value.error.code == -32602
    assert superscript_days.value.error.code == -32602


@pytest.mark.parametrize("mode", MODES)
async def test_search_results_link_to_their_messages(running, mode):
    async with Client(build_server(context(running)), mode=mode) as client:
        result = await client.call_tool("gmail_search_messages", {"query": "subject:Lisbon", "max_results": 3})
        link = result.content[1]
        read = await client.read_resource(link.uri)
    items = result.structured_content["messages"]
    assert [block.type for block in result.content] == ["text"] + ["resource_link"] * len(items)
    assert [block.uri for block in result.content[1:]] == [f"gmail://messages/{item['id']}" for item in items]
    assert link.name == items[0]["subject"] and link.mime_type == "text/markdown"
    assert read.contents[0].text.startswith(f"# {items[0]['subject']}")
