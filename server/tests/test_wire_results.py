"""Tool answers are built in wire form (dicts with camelCase keys, `dispatch.call_tool`): each must be exactly the
`CallToolResult` the SDK would have dumped from a model, and reach every protocol version's client unchanged.

Real answers from the demo mailbox: a search with its resource links, a message, an image attachment, a thread,
an error, and a tool that exists but is not offered.
"""

from __future__ import annotations

import anyio
import mcp_types as types
import pytest
from mcp_types.methods import serialize_server_result
from mcp_types.version import SUPPORTED_PROTOCOL_VERSIONS

from server.app.accounts import AccountRegistry
from server.protocol.calls import ToolCatalog
from server.protocol.dispatch import call_tool
from server.runtime.observability import Metrics
from server.tests.support.emulator import emulator_settings

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture
def catalog(demo_emulator, tmp_path):
    registry = AccountRegistry.single(
        emulator_settings(demo_emulator, tmp_path, quota_units_per_s=0.0), metrics=Metrics()
    )
    return ToolCatalog(registry)


async def answers(catalog: ToolCatalog, version: str) -> list[dict]:
    search = await call_tool(catalog, "gmail_search_messages", {"query": "in:inbox", "max_results": 50}, version)
    first = search["structuredContent"]["messages"][0]
    image = await call_tool(
        catalog, "gmail_search_messages", {"query": "filename:casa-do-largo-main-room.png"}, version
    )
    calls = [
        ("gmail_get_message", {"message_id": first["id"]}),
        ("gmail_get_thread", {"thread_id": first["thread_id"]}),
        ("gmail_get_message", {"message_id": "0000000000000000"}),  # not found: an error result
        ("gmail_create_draft", {"to": ["a@example.com"], "subject": "x", "body": "y"}),  # not enabled
    ]
    for hit in image["structuredContent"]["messages"][:1]:
        message = await call_tool(catalog, "gmail_get_message", {"message_id": hit["id"]}, version)
        for attachment in message["structuredContent"]["attachments"]:
            if attachment["mime_type"] == "image/png":
                calls.append(("gmail_read_attachment", {"message_id": hit["id"], "attachment": attachment["part_id"]}))
    found = [search, image]
    for name, arguments in calls:
        found.append(await call_tool(catalog, name, arguments, version))
    return found


@pytest.mark.parametrize("version", sorted(SUPPORTED_PROTOCOL_VERSIONS))
async def test_wire_answers_are_what_the_model_would_dump_for_every_protocol_version(catalog, version):
    found = await answers(catalog, version)
    assert any(block["type"] == "resource_link" for answer in found for block in answer["content"]) == (
        version >= "2025-06-18"
    )
    assert any(answer["isError"] for answer in found)
    assert any(block["type"] == "image" for answer in found for block in answer["content"])
    for answer in found:
        model = types.CallToolResult.model_validate(answer)
        dumped = model.model_dump(by_alias=True, mode="json", exclude_none=True)
        assert dumped == answer  # every key known and typed as the model types it, nothing left out
        sent = serialize_server_result("tools/call", version, answer)
        assert sent == serialize_server_result("tools/call", version, dumped)
    await anyio.lowlevel.checkpoint()
