"""Writing as the person over stdio: `python -m server.main` as a subprocess (both protocol eras) against the
emulator with a send-as alias and its signature. A reply to mail sent to the alias is drafted from it with its
signature, the person is asked with the From and the account in front of them, and the send goes out from it.
"""

from __future__ import annotations

import email
import email.policy
import os
import sys
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from server.runtime.config import PROJECT_ROOT
from server.tests.support.emulator import OWNER, build_mailbox

pytestmark = [pytest.mark.anyio, pytest.mark.slow]  # server subprocesses: the slow tier (`pytest -m slow`)
ALIAS = "help@shop.example"


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_reply_to_an_alias_is_asked_and_sent_from_it_over_stdio(tmp_path: Path, mode: str):
    from server.emulator import start_emulator

    asked: list[str] = []

    async def person(_ctx: Any, params: Any) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"confirm": True})

    with start_emulator(build_mailbox(tmp_path / "mail")) as emulator:
        emulator.add_send_as(ALIAS, "Shop Help", "<p>The Shop team</p>")
        original = emulator.deliver(
            f"From: Cy <cy@buyer.example>\r\nTo: {ALIAS}\r\nSubject: Refund\r\nMessage-ID: <r1@buyer.example>\r\n"
            "Date: Tue, 02 Apr 2024 10:00:00 +0000\r\n\r\nWhere is my refund?\r\n"
        )["id"]
        env = {
            **os.environ,
            "PYTHONPATH": str(PROJECT_ROOT),
            "GMAIL_API_ENDPOINT": emulator.url,
            "GMAIL_TOKEN_URI": emulator.token_uri,
            "GMAIL_TOKEN_PATH": str(emulator.write_token(tmp_path / "token.json", scopes=["readonly", "compose"])),
            "GMAIL_MCP_WRITE_TOOLS": "drafts,send",
        }
        params = StdioServerParameters(command=sys.executable, args=["-m", "server.main"], env=env, cwd="/")
        with open(tmp_path / "stderr.log", "w") as errlog:
            async with Client(stdio_client(params, errlog=errlog), mode=mode, elicitation_callback=person) as session:
                draft = await session.call_tool(
                    "gmail_create_draft", {"reply_to_message_id": original, "body": "It left today."}
                )
                sent = await session.call_tool("gmail_send_draft", {"draft_id": draft.structured_content["draft_id"]})
        assert draft.structured_content["from_address"] == f"Shop Help <{ALIAS}>"
        assert sent.structured_content["status"] == "sent", sent.content[0].text
        assert len(asked) == 1 and f"From: Shop Help <{ALIAS}> (account {OWNER})" in asked[0]
        message = email.message_from_bytes(
            emulator.store.by_id[sent.structured_content["message_id"]].raw, policy=email.policy.default
        )
        assert message["From"] == f"Shop Help <{ALIAS}>"
        text = message.get_body(("plain",)).get_content()
        assert text.replace("\r\n", "\n").startswith("It left today.\n\n-- \nThe Shop team\n\nOn ")
