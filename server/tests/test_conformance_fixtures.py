"""The conformance suite's fixtures (`server/protocol/conformance_fixtures.py`) are TEST-ONLY: absent unless
GMAIL_MCP_CONFORMANCE_FIXTURES is exactly "1", in-process and over HTTP; with it, they answer as the suite
(@modelcontextprotocol/conformance 0.2.0-alpha.12) expects while every Gmail tool, resource and prompt stays as
it was. And conformance/expected-failures.yml lists only scenarios of optional features, each with its reason."""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp.client import Client
from mcp.shared.exceptions import MCPError

from server import demo
from server.emulator import Emulator, start_emulator
from server.protocol.conformance_fixtures import (
    FIXTURE_PROMPTS,
    FIXTURE_TOOLS,
    FLAG,
    asked,
    red_pixel_png,
    silent_wav,
)
from server.protocol.dispatch import build_server
from server.runtime.config import PROJECT_ROOT
from server.tests.support.emulator import emulator_env
from server.tests.support.http_server import TEST_SERVER_ENV, http_server, mcp_client
from server.tests.support.reading import emulator_context

pytestmark = pytest.mark.anyio
MODES = ["legacy", "auto"]
EXPECTED_FAILURES = PROJECT_ROOT / "conformance" / "expected-failures.yml"


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Emulator, Path]]:
    with start_emulator(demo.DEMO_MAILBOX, rebase_dates=True) as emulator:
        yield emulator, emulator.write_token(tmp_path_factory.mktemp("fixtures") / "token.json")


def test_only_exactly_1_asks_for_the_fixtures():
    assert asked({FLAG: "1"}) and asked({FLAG: " 1 "})
    assert not any(asked(env) for env in ({}, {FLAG: ""}, {FLAG: "0"}, {FLAG: "true"}, {FLAG: "yes"}))


async def listed(client: Client) -> set[str]:
    tools = {tool.name for tool in (await client.list_tools()).tools}
    prompts = {prompt.name for prompt in (await client.list_prompts()).prompts}
    resources = {str(resource.uri) for resource in (await client.list_resources()).resources}
    templates = {t.uri_template for t in (await client.list_resource_templates()).resource_templates}
    return tools | prompts | resources | templates


@pytest.mark.parametrize("mode", MODES)
async def test_without_the_flag_no_fixture_is_listed_or_answered(running, mode, monkeypatch):
    monkeypatch.delenv(FLAG, raising=False)
    async with Client(build_server(emulator_context(*running)), mode=mode) as client:
        names = await listed(client)
        with pytest.raises(MCPError) as tool:
            await client.call_tool("test_simple_text", {})
        with pytest.raises(MCPError) as resource:
            await client.read_resource("test://static-text")
        with pytest.raises(MCPError) as prompt:
            await client.get_prompt("test_simple_prompt")
    assert "gmail_search_messages" in names and "summarize-thread" in names
    assert not [name for name in names if "test" in name or "json_schema" in name]
    assert "Unknown tool 'test_simple_text'" in tool.value.error.message
    assert "Unknown resource" in resource.value.error.message
    assert "Unknown prompt" in prompt.value.error.message


@pytest.mark.parametrize("mode", MODES)
async def test_with_the_flag_the_fixtures_answer_beside_the_gmail_ones(running, mode, monkeypatch):
    async with Client(build_server(emulator_context(*running)), mode=mode) as client:
        plain = await listed(client)
    monkeypatch.setenv(FLAG, "1")
    async with Client(build_server(emulator_context(*running)), mode=mode) as client:
        names = await listed(client)
        text = await client.call_tool("test_simple_text", {})
        error = await client.call_tool("test_error_handling", {})
        mixed = await client.call_tool("test_multiple_content_types", {})
        binary = (await client.read_resource("test://static-binary")).contents[0]
        templated = (await client.read_resource("test://template/123/data")).contents[0]
        prompt = await client.get_prompt("test_prompt_with_arguments", {"arg1": "hello", "arg2": "world"})
        completed = await client.complete(
            types.PromptReference(type="ref/prompt", name="test_prompt_with_arguments"),
            {"name": "arg1", "value": "par"},
        )
        search = await client.call_tool("gmail_search_messages", {"query": "in:inbox", "max_results": 1})
    assert names - plain == {*FIXTURE_TOOLS, *FIXTURE_PROMPTS, "test://static-text", "test://static-binary"} | {
        "test://template/{id}/data"
    }
    assert text.content[0].text == "This is a simple text response for testing." and not text.is_error
    assert error.is_error and error.content[0].text == "This tool intentionally returns an error for testing"
    assert [block.type for block in mixed.content] == ["text", "image", "resource"]
    assert base64.b64decode(binary.blob) == red_pixel_png() and binary.mime_type == "image/png"
    assert templated.text == '{"id": "123", "templateTest": true, "data": "Data for ID: 123"}'
    assert prompt.messages[0].content.text == "Prompt with arguments: arg1='hello', arg2='world'"
    assert completed.completion.values == ["paris", "park", "party"]
    assert search.is_error is False and search.structured_content["result_count"] == 1


def person_answering(asked: list[str]) -> Any:
    async def callback(_ctx: Any, params: Any) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"name": "Ada", "username": "ada", "email": "a@x.example"})

    return callback


async def test_each_era_asks_the_person_its_own_way(running, monkeypatch):
    """2026-07-28: an InputRequiredResult the official client answers and repeats the call with (SEP-2322);
    the handshake era: an elicitation/create request mid-call, which a 2026-07-28 session cannot carry."""
    monkeypatch.setenv(FLAG, "1")
    asked: list[str] = []
    server = build_server(emulator_context(*running))
    async with Client(server, mode="auto", elicitation_callback=person_answering(asked)) as client:
        round_trip = await client.call_tool("test_input_required_result_elicitation", {})
        no_back_channel = await client.call_tool("test_elicitation", {"message": "Who are you?"})
    async with Client(server, mode="legacy", elicitation_callback=person_answering(asked)) as client:
        mid_call = await client.call_tool("test_elicitation", {"message": "Who are you?"})
    assert round_trip.content[0].text == "Hello, Ada!" and not round_trip.is_error
    assert no_back_channel.is_error
    assert mid_call.content[0].text.startswith("Elicitation completed: action=accept, content={")
    assert '"username": "ada"' in mid_call.content[0].text
    assert asked == ["What is your name?", "Who are you?"]


def test_the_media_fixtures_are_well_formed():
    png = red_pixel_png()
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and png.endswith(b"IEND\xaeB`\x82")
    wav = silent_wav()
    assert wav[:4] == b"RIFF" and wav[8:12] == b"WAVE" and int.from_bytes(wav[4:8], "little") == len(wav) - 8


async def test_over_http_the_fixtures_are_absent_by_default(tmp_path, demo_emulator, monkeypatch):
    monkeypatch.delenv(FLAG, raising=False)
    env = emulator_env(demo_emulator, demo_emulator.write_token(tmp_path / "token.json"), **TEST_SERVER_ENV)
    with http_server(env) as server:
        async with mcp_client(server.url, "auto") as client:
            tools = {tool.name for tool in (await client.list_tools()).tools}
            prompts = {prompt.name for prompt in (await client.list_prompts()).prompts}
    assert "gmail_search_messages" in tools and not tools & set(FIXTURE_TOOLS)
    assert not prompts & set(FIXTURE_PROMPTS)
    assert "conformance fixtures" not in server.log_text()


# What the MCP specification makes optional and this server does not offer, by the scenarios that test it.
OPTIONAL = {
    "Tasks extension (SEP-2663)": re.compile(r"tasks-[a-z-]+"),
    "logging capability": re.compile(r"logging-set-level|tools-call-with-logging"),
    "resources subscribe capability": re.compile(r"resources-(un)?subscribe"),
    "resumable SSE streams (SEP-1699)": re.compile(r"server-sse-polling:server-sse-[a-z-]+"),
}


def test_the_expected_failures_are_optional_features_each_with_its_reason():
    entries = [line for line in EXPECTED_FAILURES.read_text("utf-8").splitlines() if line.startswith("  - ")]
    assert entries, "the file lists the scenarios the suite runs and this server does not serve"
    for line in entries:
        match = re.fullmatch(r"  - ([a-z0-9:-]+)  # optional: (.{20,})", line)
        assert match, f"an entry needs a scenario and `# optional: reason`: {line!r}"
        assert any(pattern.fullmatch(match.group(1)) for pattern in OPTIONAL.values()), line
