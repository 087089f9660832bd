"""The tools through a real MCP client session (in-process), in both protocol eras."""

from __future__ import annotations

import jsonschema
import pytest
from mcp.client import Client
from mcp.shared.exceptions import MCPError

from server.protocol.dispatch import build_server
from server.tests.support.fake_gmail import FakeGmail, gmail_error, list_page, metadata_batch
from server.toolsets import ALWAYS_ON_TOOLS

pytestmark = pytest.mark.anyio
MODES = ["legacy", "auto"]


@pytest.fixture
def anyio_backend():
    return "asyncio"


def connect(fake: FakeGmail, mode: str) -> Client:
    return Client(build_server(fake.context()), mode=mode)


@pytest.mark.parametrize("mode", MODES)
async def test_tools_are_listed_with_schemas_and_read_only_annotations(mode):
    async with connect(FakeGmail([]), mode) as client:
        listed = (await client.list_tools()).tools
    by_name = {tool.name: tool for tool in listed}
    assert set(by_name) == set(ALWAYS_ON_TOOLS) >= {"gmail_search_messages", "gmail_get_message", "gmail_get_thread"}
    search = by_name["gmail_search_messages"]
    assert search.input_schema["required"] == ["query"]
    assert search.input_schema["properties"]["max_results"]["maximum"] == 50
    assert search.input_schema["additionalProperties"] is False
    assert "next_page_token" in search.output_schema["properties"]
    for tool in listed:
        assert tool.annotations.read_only_hint is True
        # Meaningless for a read-only tool (MCP spec), and open world is the default: left out, not sent.
        assert tool.annotations.destructive_hint is tool.annotations.open_world_hint is None
        assert "from:" in by_name["gmail_search_messages"].description
        jsonschema.Draft202012Validator.check_schema(tool.input_schema)
        jsonschema.Draft202012Validator.check_schema(tool.output_schema)


@pytest.mark.parametrize("mode", MODES)
async def test_search_result_is_structured_and_valid_against_its_output_schema(mode):
    fake = FakeGmail([list_page(["m1", "m2"]), metadata_batch(["m1", "m2"])])
    async with connect(fake, mode) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        result = await client.call_tool("gmail_search_messages", {"query": "in:inbox", "max_results": 2})
    assert result.is_error is False
    jsonschema.validate(result.structured_content, tools["gmail_search_messages"].output_schema)
    assert [m["id"] for m in result.structured_content["messages"]] == ["m1", "m2"]
    assert "Alice Example <alice@example.com>" in result.content[0].text


@pytest.mark.parametrize("mode", MODES)
async def test_invalid_arguments_are_tool_errors_the_model_can_fix(mode):
    fake = FakeGmail([])
    async with connect(fake, mode) as client:
        too_many = await client.call_tool("gmail_search_messages", {"query": "is:unread", "max_results": 500})
        nothing = await client.call_tool("gmail_search_messages", {"query": ""})
    for result in (too_many, nothing):
        assert result.is_error is True and result.meta["gmail-mcp/error"]["category"] == "invalid_input"
        # Errors carry no structuredContent: strict clients validate it against the outputSchema even on errors.
        assert result.structured_content is None
    assert "max_results: Input should be less than or equal to 50" in too_many.meta["gmail-mcp/error"]["message"]
    assert "in:inbox" in nothing.meta["gmail-mcp/error"]["message"]
    assert "Accepted arguments: query, max_results" in nothing.content[0].text
    assert fake.uris == []  # validated before any Gmail call


@pytest.mark.parametrize("mode", MODES)
async def test_gmail_failures_are_tool_errors_with_category_and_hint(mode):
    fake = FakeGmail([gmail_error(404, "notFound", "Requested entity was not found.")])
    async with connect(fake, mode) as client:
        result = await client.call_tool("gmail_get_message", {"message_id": "18c0ffee00000001"})
        assert result.is_error is True
        assert result.meta["gmail-mcp/error"]["category"] == "not_found"
        assert "Hint: Check the message_id" in result.content[0].text
        again = await client.call_tool("gmail_search_messages", {"query": "x"})  # the server keeps serving
    assert again.is_error is True


@pytest.mark.parametrize("mode", MODES)
async def test_unknown_tool_is_a_protocol_error(mode):
    async with connect(FakeGmail([]), mode) as client:
        with pytest.raises(MCPError) as caught:
            await client.call_tool("gmail_send_message", {})
    assert caught.value.code == -32602 and "gmail_search_messages" in caught.value.message


async def test_missing_token_is_an_auth_error_result(tmp_path):
    from server.auth import TokenStore
    from server.runtime.config import load_settings

    settings = load_settings(env={"GMAIL_TOKEN_PATH": str(tmp_path / "none.json")}, dotenv=False)
    fake = FakeGmail([], settings=settings, credentials=TokenStore(settings))
    async with connect(fake, "legacy") as client:
        result = await client.call_tool("gmail_search_messages", {"query": "in:inbox"})
    assert result.meta["gmail-mcp/error"]["category"] == "auth_error"
    assert "auth_cli.py" in result.meta["gmail-mcp/error"]["hint"]


async def test_a_bug_becomes_an_internal_error_result_not_a_crash():
    fake = FakeGmail([])

    def broken(**_kwargs):
        raise ZeroDivisionError("boom")

    fake.client.list_messages = broken
    async with connect(fake, "legacy") as client:
        result = await client.call_tool("gmail_search_messages", {"query": "x"})
        assert result.meta["gmail-mcp/error"]["category"] == "internal_error"
        assert "boom" not in result.content[0].text  # internals stay in the log
        assert len((await client.list_tools()).tools) == len(ALWAYS_ON_TOOLS)


async def test_a_huge_unknown_argument_name_is_not_echoed_back_whole():
    async with connect(FakeGmail([]), "legacy") as client:
        result = await client.call_tool("gmail_search_messages", {"query": "x", "k" * 1_000_000: 1})
    assert result.is_error and len(result.content[0].text) < 2_000
