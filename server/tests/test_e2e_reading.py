"""End to end over stdio: `python -m server.main` as a subprocess, the official MCP client (both protocol eras)
and raw JSON-RPC from an older client, against the emulator serving the demo mailbox plus a message carrying
every attachment type. The issue's acceptance checks, as a person's client would see them."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from server import demo
from server.emulator import Emulator, start_emulator
from server.runtime.config import PROJECT_ROOT
from server.tests.support.fences import without_fence_values
from server.tests.support.reading import api_calls, attachment_files, write_attachment_mailbox
from server.tests.support.reliability import RawServer, mcp_over_stdio, server_env

pytestmark = [pytest.mark.anyio, pytest.mark.slow]  # server subprocesses: the slow tier (`pytest -m slow`)
THREAD_PATH = re.compile(r"^/gmail/v1/users/me/threads/[0-9a-f]+$")


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Emulator, Path]]:
    root = tmp_path_factory.mktemp("e2e-reading")
    mail = write_attachment_mailbox(root / "mail")
    shutil.copy(demo.DEMO_MAILBOX, mail / "demo.mbox")
    with start_emulator(mail, rebase_dates=True, email=demo.DEMO_OWNER) as emulator:
        yield emulator, emulator.write_token(root / "token.json")


def since(emulator: Emulator) -> int:
    entries = emulator.requests()
    return entries[-1]["seq"] if entries else 0


def sentences(text: str) -> list[str]:
    return [" ".join(s.split()) for s in re.split(r"(?<=[.!?])\s+|\n+", text) if len(s.strip()) >= 25]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_threads_attachments_labels_resources_and_prompts_over_stdio(served, tmp_path, mode):
    emulator, token = served
    thread = emulator.store.find(demo.NOTABLE["offsite-1"].subject)[-1].thread_id
    every = emulator.store.find("Every attachment type")[0].id
    with open(tmp_path / "stderr.log", "w") as errlog:
        async with mcp_over_stdio(server_env(emulator, token), errlog, mode) as client:
            tools = {tool.name for tool in (await client.list_tools()).tools}
            assert {"gmail_get_thread", "gmail_read_attachment", "gmail_list_labels"} <= tools

            await client.call_tool("gmail_get_thread", {"thread_id": thread})  # asks the account's address once
            mark = since(emulator)
            result = await client.call_tool("gmail_get_thread", {"thread_id": thread})
            calls = api_calls(emulator.requests(mark))
            assert len(calls) == 1 and THREAD_PATH.match(calls[0][1])  # a thread of 8: one Gmail request
            messages = result.structured_content["messages"]
            assert len(messages) == demo.OFFSITE_THREAD_LENGTH
            said = [s for item in messages for s in sentences(item["body_text"])]
            assert len(said) == len(set(said))  # no quoted sentence twice

            for name, (_, _, phrase) in attachment_files().items():
                read = await client.call_tool("gmail_read_attachment", {"message_id": every, "attachment": name})
                assert read.is_error is False, (name, read.content[0].text)
                shown = "\n".join(block.text for block in read.content if block.type == "text")
                assert phrase in shown, (name, shown[:300])
            for name, (key, phrase) in demo.OFFSITE_ATTACHMENTS.items():
                message = next(
                    m for m in emulator.store.messages if m.message["Message-ID"] == demo.NOTABLE[key].message_id
                )
                read = await client.call_tool("gmail_read_attachment", {"message_id": message.id, "attachment": name})
                assert phrase in read.content[0].text, (name, read.content[0].text[:300])

            labels = await client.call_tool("gmail_list_labels", {})
            counted = {item["name"]: item.get("messages_total") for item in labels.structured_content["labels"]}
            assert counted["Travel"] == demo.LABEL_COUNTS["Travel"] and counted["INBOX"] >= demo.LABEL_COUNTS["Inbox"]

            assert [r.uri for r in (await client.list_resources()).resources] == ["gmail://labels"]
            assert len((await client.list_resource_templates()).resource_templates) == 2
            text = (await client.read_resource(f"gmail://threads/{thread}")).contents[0].text
            assert text.startswith(f"# {demo.NOTABLE['offsite-1'].subject}") and "Reply context" in text
            prompts = {prompt.name for prompt in (await client.list_prompts()).prompts}
            assert prompts == {"triage-inbox", "summarize-thread", "needs-reply"}
            summary = await client.get_prompt("summarize-thread", {"thread_id": thread})
            assert without_fence_values(summary.messages[1].content.resource.text) == without_fence_values(text)


def test_clients_older_than_resource_links_get_text_only_results(served, tmp_path):
    emulator, token = served
    with RawServer(server_env(emulator, token), tmp_path / "stderr.log") as server:
        server.initialize("2025-03-26")
        answer: dict[str, Any] = server.call_tool(
            "gmail_search_messages", {"query": "subject:Lisbon", "max_results": 2}
        )
        image = server.call_tool(
            "gmail_read_attachment",
            {"message_id": emulator.store.find("Every attachment type")[0].id, "attachment": "pixel.png"},
        )
        assert server.stdout_is_only_json_rpc()
    assert [block["type"] for block in answer["content"]] == ["text"]
    assert [block["type"] for block in image["content"]] == ["text", "image"]  # image content is that old


def test_the_demo_tour_shows_a_thread_and_an_attachment():
    completed = subprocess.run(
        [sys.executable, "-m", "server.cli", "--demo", "tour"],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**{k: v for k, v in os.environ.items() if not k.startswith("GMAIL_")}, "PYTHONPATH": str(PROJECT_ROOT)},
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
    out = completed.stdout
    assert "▶ The whole conversation" in out and ": 8 message(s), showing 6-8, oldest first" in out
    assert demo.NOTABLE["offsite-1"].subject in out
    assert "▶ Its first attachment, read as text" in out and "Lisbon offsite agenda (v2, final)" in out
    assert "▶ Labels and their counts" in out and "- INBOX: " in out
