"""End to end with writing turned on: `python -m server.main` as a subprocess over stdio (both protocol eras),
configured only through its environment, against the emulator with a token held to its scopes.

Checks the wiring a unit test cannot: GMAIL_MCP_WRITE_TOOLS and the token file's scopes decide the listing, the
start-up warning names the consent command, the confirmation flow works over a real transport (a code without
elicitation, an accepted elicitation with it), audit lines are JSON on stderr and in GMAIL_MCP_AUDIT_LOG, and
nothing but the protocol reaches stdout.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from server.runtime.config import PROJECT_ROOT
from server.tests.support.emulator import build_mailbox
from server.toolsets import ALWAYS_ON_TOOLS

pytestmark = [pytest.mark.anyio, pytest.mark.slow]  # server subprocesses: the slow tier (`pytest -m slow`)
MODES = ["legacy", "auto"]


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture(scope="module")
def emulator(tmp_path_factory: pytest.TempPathFactory):
    from server.emulator import start_emulator

    with start_emulator(build_mailbox(tmp_path_factory.mktemp("e2e-writes") / "mail")) as running:
        yield running


def env_for(emulator: Any, tmp_path: Path, scopes: list[str], **extra: str) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": str(PROJECT_ROOT),
        "GMAIL_API_ENDPOINT": emulator.url,
        "GMAIL_TOKEN_URI": emulator.token_uri,
        "GMAIL_TOKEN_PATH": str(emulator.write_token(tmp_path / "token.json", scopes=scopes)),
        "GMAIL_MCP_LOG_LEVEL": "INFO",
        "GMAIL_MCP_WRITE_TOOLS": "drafts,labels,send",
        "GMAIL_MCP_AUDIT_LOG": str(tmp_path / "audit.jsonl"),
        **extra,
    }


def client(env: dict[str, str], mode: str, errlog: Any, **options: Any) -> Client:
    params = StdioServerParameters(command=sys.executable, args=["-m", "server.main"], env=env, cwd="/")
    return Client(stdio_client(params, errlog=errlog), mode=mode, **options)


def sends(emulator: Any) -> list[dict[str, Any]]:
    return [e for e in emulator.requests() if e["method"] == "POST" and e["path"].endswith("/drafts/send")]


@pytest.mark.parametrize("mode", MODES)
async def test_reply_and_send_with_a_code_over_stdio(emulator, tmp_path: Path, mode: str):
    before = len(sends(emulator))
    invoice = next(m for m in emulator.store.messages if m.subject == "Invoice 42")
    env = env_for(emulator, tmp_path, ["readonly", "compose", "modify"])
    with open(tmp_path / "stderr.log", "w") as errlog:
        async with client(env, mode, errlog) as session:
            tools = {t.name for t in (await session.list_tools()).tools}
            assert {"gmail_create_draft", "gmail_send_draft", "gmail_modify_messages"} <= tools
            draft = await session.call_tool(
                "gmail_create_draft", {"reply_to_message_id": invoice.id, "body": "Paid today."}
            )
            draft_id = draft.structured_content["draft_id"]
            first = await session.call_tool("gmail_send_draft", {"draft_id": draft_id})
            assert first.structured_content["status"] == "confirmation_required" and len(sends(emulator)) == before
            code = first.structured_content["confirmation_code"]
            sent = await session.call_tool("gmail_send_draft", {"draft_id": draft_id, "confirmation_code": code})
            assert sent.structured_content["status"] == "sent"
            archived = await session.call_tool("gmail_modify_messages", {"message_ids": [invoice.id], "archive": True})
            assert "INBOX" not in archived.structured_content["label_ids"]
    assert len(sends(emulator)) == before + 1
    sent_message = emulator.store.by_id[sent.structured_content["message_id"]]
    assert sent_message.thread_id == invoice.thread_id and "SENT" in sent_message.label_ids
    stderr = [json.loads(line) for line in (tmp_path / "stderr.log").read_text().splitlines()]  # JSON only
    audit = [line["audit"] for line in stderr if line.get("event") == "audit"]
    assert [(a["tool"], a["outcome"]) for a in audit] == [
        ("gmail_create_draft", "done"),
        ("gmail_send_draft", "done"),
        ("gmail_modify_messages", "done"),
    ]
    assert audit[1]["recipients"] == ["bi***@vendor.example"] and "Paid today" not in json.dumps(stderr)
    in_file = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    assert [entry["action"] for entry in in_file] == ["drafts.create", "drafts.send", "modify"]


@pytest.mark.parametrize("mode", MODES)
async def test_an_accepted_elicitation_sends_once_over_stdio(emulator, tmp_path: Path, mode: str):
    before = len(sends(emulator))
    asked: list[str] = []

    async def person(_ctx: Any, params: Any) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"confirm": True})

    env = env_for(emulator, tmp_path, ["readonly", "compose"])
    with open(tmp_path / "stderr.log", "w") as errlog:
        async with client(env, mode, errlog, elicitation_callback=person) as session:
            draft = await session.call_tool(
                "gmail_create_draft", {"to": ["Zoë <zoe@x.example>"], "subject": "Hi", "body": "Hello"}
            )
            sent = await session.call_tool("gmail_send_draft", {"draft_id": draft.structured_content["draft_id"]})
    assert sent.structured_content["status"] == "sent" and len(sends(emulator)) == before + 1
    assert len(asked) == 1 and "To: Zoë <zoe@x.example>" in asked[0]


async def test_enabled_without_the_scope_warns_and_lists_nothing_that_would_fail(emulator, tmp_path: Path):
    env = env_for(emulator, tmp_path, ["readonly"])
    with open(tmp_path / "stderr.log", "w") as errlog:
        async with client(env, "auto", errlog) as session:
            assert {t.name for t in (await session.list_tools()).tools} == set(ALWAYS_ON_TOOLS)
    warnings = [json.loads(line) for line in (tmp_path / "stderr.log").read_text().splitlines()]
    text = " ".join(line["event"] for line in warnings if line["level"] == "WARNING")
    assert "'drafts' tools are enabled but the token lacks their scope" in text and "--scopes readonly,compose" in text
    assert "'labels'" in text and "--scopes readonly,modify" in text
