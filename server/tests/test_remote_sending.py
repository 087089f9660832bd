"""Sending in `--auth oauth` mode: nothing leaves without the person's yes, and a confirmation belongs to one person.

A client without elicitation (claude.ai as of 2026-04: no elicitation, so the single-use code path) gets a code;
a 2026-07-28 client gets the question as an input-required round trip. Codes are kept per person and account: a
code issued to one person is no use to another, even one who reaches the same mailbox (a shared Google account
connected by both).

Evidence: /work/shared/notes/remote-auth.md (claude.ai has no elicitation; 2026-07-28 input-required results).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

import httpx2
import mcp_types as types
import pytest
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from server.emulator import Emulator
from server.remote.mailboxes import person_tag
from server.tests.support.accounts import WORK_OWNER, two_account_emulator
from server.tests.support.emulator import OWNER
from server.tests.support.remote_http import DRAFT, RemoteRun, sends

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Emulator]:
    with two_account_emulator(tmp_path_factory.mktemp("sending")) as running:
        yield running


def session(run: RemoteRun, token: str, mode: str, asked: list[str] | None = None) -> Client:
    async def person(_ctx: Any, _params: Any) -> types.ElicitResult:
        assert asked is not None
        asked.append("asked")
        return types.ElicitResult(action="accept", content={"confirm": True})

    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=httpx2.Timeout(60.0))
    callback = person if asked is not None else None
    return Client(streamable_http_client(run.url, http_client=http), mode=mode, elicitation_callback=callback)


async def test_a_code_issued_to_one_person_cannot_be_redeemed_by_another(
    remote: RemoteRun, emulator: Emulator, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    me = remote.sign_in(OWNER)
    other = remote.sign_in(WORK_OWNER)
    remote.sign_in(OWNER, to=other)  # the other person connected the same mailbox (a shared account)
    before = sends(emulator)
    async with session(remote, remote.token_for(me).access_token, "legacy") as mine:
        draft = await mine.call_tool("gmail_create_draft", DRAFT)
        draft_id = draft.structured_content["draft_id"]
        first = await mine.call_tool("gmail_send_draft", {"draft_id": draft_id})
        assert first.structured_content["status"] == "confirmation_required"
        code = first.structured_content["confirmation_code"]
        async with session(remote, remote.token_for(other).access_token, "legacy") as theirs:
            stolen = await theirs.call_tool(
                "gmail_send_draft", {"draft_id": draft_id, "confirmation_code": code, "account": OWNER}
            )
        assert (stolen.structured_content or {}).get("status") != "sent" and sends(emulator) == before
        mine_sent = await mine.call_tool("gmail_send_draft", {"draft_id": draft_id, "confirmation_code": code})
        assert mine_sent.structured_content["status"] == "sent"
    assert sends(emulator) == before + 1
    # Audit lines name the person by a stable hash, never by address; each line is the person's own.
    lines = [record.audit for record in caplog.records if hasattr(record, "audit")]
    assert lines and {line["person"] for line in lines} <= {person_tag(me), person_tag(other)}
    assert any(line["person"] == person_tag(me) and line["action"] == "drafts.send" for line in lines)
    assert OWNER not in json.dumps(lines)
    # The server's own log lines (the SDK's DEBUG lines echo whole messages, results included) never hold the code.
    ours = [record for record in caplog.records if record.name.startswith(("gmail_mcp", "uvicorn"))]
    logged = "\n".join(record.getMessage() + json.dumps(record.__dict__, default=str) for record in ours)
    assert ours and code not in logged and code.replace("-", "") not in logged


async def test_a_2026_client_is_asked_through_an_input_required_round_trip(
    remote: RemoteRun, emulator: Emulator
) -> None:
    me = remote.sign_in(OWNER)
    asked: list[str] = []
    before = sends(emulator)
    async with session(remote, remote.token_for(me).access_token, "auto", asked) as mine:
        draft = await mine.call_tool("gmail_create_draft", DRAFT)
        sent = await mine.call_tool("gmail_send_draft", {"draft_id": draft.structured_content["draft_id"]})
    assert sent.structured_content["status"] == "sent" and asked == ["asked"]
    assert sends(emulator) == before + 1


class _Replayer(httpx2.AsyncBaseTransport):
    """Sends every request with A's token except the answer to the input-required question, which goes out with
    B's: person B presenting the `requestState` issued to person A."""

    def __init__(self, other_token: str) -> None:
        self.inner = httpx2.AsyncHTTPTransport()
        self.other = other_token
        self.replayed = 0

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content or b"{}") if request.method == "POST" else {}
        if isinstance(body, dict) and "requestState" in (body.get("params") or {}):
            request.headers["Authorization"] = f"Bearer {self.other}"
            self.replayed += 1
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


async def test_a_request_state_issued_to_one_person_is_refused_when_another_presents_it(
    remote: RemoteRun, emulator: Emulator
) -> None:
    """MCP 2026-07-28 input-required results: the `requestState` is bound to the principal it was issued to (the
    SDK's `RequestStateSecurity.bind_principal`). Both people reach the same mailbox (a shared account). The
    tool's own per-person confirmation would refuse too, so the refusal asked for here is the SDK boundary's
    JSON-RPC error, before any tool runs."""
    me, other = remote.sign_in(OWNER), remote.sign_in(WORK_OWNER)
    remote.sign_in(OWNER, to=other)  # B connected A's mailbox too (a shared account)
    replayer = _Replayer(remote.token_for(other).access_token)
    http = httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {remote.token_for(me).access_token}"},
        transport=replayer,
        timeout=httpx2.Timeout(60.0),
    )
    asked: list[str] = []

    async def person(_ctx: Any, _params: Any) -> types.ElicitResult:
        asked.append("asked")
        return types.ElicitResult(action="accept", content={"confirm": True})

    before = sends(emulator)
    async with Client(
        streamable_http_client(remote.url, http_client=http), mode="auto", elicitation_callback=person
    ) as mine:
        draft = await mine.call_tool("gmail_create_draft", {**DRAFT, "account": OWNER})
        named = {"draft_id": draft.structured_content["draft_id"], "account": OWNER}
        with pytest.raises(MCPError, match="requestState"):  # refused by the boundary, before the tool runs
            await mine.call_tool("gmail_send_draft", named)
    assert asked == ["asked"] and replayer.replayed == 1
    assert sends(emulator) == before
