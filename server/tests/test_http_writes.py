"""Sending over streamable HTTP (`--http`): the person is asked wherever the transport can carry the question.

With event-stream answers a handshake-era client is asked mid-call (elicitation/create), a 2026-07-28 one through
an input-required round trip; with plain JSON answers (GMAIL_MCP_HTTP_JSON_RESPONSES=1) a handshake-era call
cannot carry a question, so it gets the code instead, and nothing is sent until the code comes back.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx2
import mcp_types as types
import pytest
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

from server.tests.support.emulator import build_mailbox, emulator_env
from server.tests.support.http_server import TEST_SERVER_ENV, http_server

pytestmark = [pytest.mark.anyio, pytest.mark.slow]  # HTTP server subprocesses: the slow tier (`pytest -m slow`)
TOKEN = "writes-token-0123456789abcdef0123"


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture(scope="module")
def emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from server.emulator import start_emulator

    scratch = tmp_path_factory.mktemp("http-writes")
    with start_emulator(build_mailbox(scratch / "mail")) as running:
        yield running, scratch


def client(url: str, mode: str, answers: list[str]) -> Client:
    async def person(_ctx: Any, _params: Any) -> types.ElicitResult:
        answers.append("asked")
        return types.ElicitResult(action="accept", content={"confirm": True})

    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=httpx2.Timeout(60.0))
    return Client(streamable_http_client(url, http_client=http), mode=mode, elicitation_callback=person)


def sends(emulator: Any) -> int:
    return sum(e["method"] == "POST" and e["path"].endswith("/drafts/send") for e in emulator.requests())


@pytest.mark.parametrize(
    "json_answers, mode, asked",
    [("0", "legacy", True), ("0", "auto", True), ("1", "legacy", False), ("1", "auto", True)],
)
async def test_the_person_is_asked_where_the_transport_allows_else_a_code(emulator, json_answers, mode, asked):
    running, scratch = emulator
    token = running.write_token(scratch / f"token-{json_answers}-{mode}.json", scopes=["readonly", "compose"])
    tokens = scratch / "http-tokens"
    tokens.write_text(TOKEN + "\n")
    env = emulator_env(
        running,
        token,
        **TEST_SERVER_ENV,
        GMAIL_MCP_HTTP_TOKEN_FILE=str(tokens),
        GMAIL_MCP_HTTP_JSON_RESPONSES=json_answers,
        GMAIL_MCP_WRITE_TOOLS="drafts,send",
    )
    answers: list[str] = []
    before = sends(running)
    with http_server(env) as server:
        async with client(server.url, mode, answers) as session:
            draft = await session.call_tool("gmail_create_draft", {"to": ["a@x.example"], "subject": "s", "body": "b"})
            draft_id = draft.structured_content["draft_id"]
            first = await session.call_tool("gmail_send_draft", {"draft_id": draft_id})
            if asked:
                assert first.structured_content["status"] == "sent" and answers == ["asked"]
            else:
                assert first.structured_content["status"] == "confirmation_required" and answers == []
                assert sends(running) == before
                code = first.structured_content["confirmation_code"]
                second = await session.call_tool("gmail_send_draft", {"draft_id": draft_id, "confirmation_code": code})
                assert second.structured_content["status"] == "sent"
    assert sends(running) == before + 1
