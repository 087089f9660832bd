"""The cleanup tools through a real MCP client against the emulator: a generated mailbox of 5,000 newsletters.

Judged by the emulator's request log: the preview costs its listing pages (500 ids a page, Gmail's largest
`messages.list` page) plus one batch of samples; the run is 5 `messages.batchModify` calls of 1,000 ids (Gmail's
limit, `gmail-api-wire.md`); a run that ends after 2,000 (GMAIL_MCP_CLEANUP_CHUNKS_PER_CALL's hook) continues with
the same preview id and changes no message twice; undo puts every label back; with the emulator's quota meter at
Gmail's 15,000 units per user per minute nothing is refused with 429.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from server.emulator import start_emulator
from server.emulator.newsletters import write_newsletters
from server.runtime.config import PROJECT_ROOT
from server.tests.support.cleanup import GROUPS, cleanup_stack, last_seq, log_of

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
MODES = ["legacy", "auto"]
COUNT = 5_000


@pytest.fixture
def anyio_backend():
    return "asyncio"


def labels_of(stack: Any) -> dict[str, tuple[str, ...]]:
    return {m.id: tuple(sorted(m.label_ids)) for m in stack.emulator.store.messages}


def modified(entries: list[dict[str, Any]]) -> list[list[str]]:
    return [ids for entry in entries for ids in entry.get("modified_ids", [])]


async def call(client: Client, name: str, arguments: dict[str, Any], **options: Any) -> Any:
    result = await client.call_tool(name, arguments, **options)
    assert not result.is_error, result.content[0].text
    return result.structured_content


@pytest.mark.parametrize("mode", MODES)
async def test_preview_costs_listing_pages_and_one_sample_batch(tmp_path: Path, mode: str):
    with cleanup_stack(tmp_path, newsletters=COUNT) as stack:
        async with Client(stack.server(GROUPS), mode=mode) as client:
            since = last_seq(stack)
            preview = await call(client, "gmail_cleanup_preview", {"query": "category:promotions", "action": "archive"})
            entries = [e for e in log_of(stack, since) if e["path"] != "/token"]  # Gmail API calls only
            lists = [e for e in entries if e["path"].endswith("/messages") and e["method"] == "GET"]
            batches = [e for e in entries if e["batch_parts"]]
            assert len(lists) == COUNT // 500 and all("maxResults=500" in e["query"] for e in lists)
            assert len(batches) == 1 and batches[0]["batch_parts"] == preview["sample_size"] == 10
            assert len(entries) == len(lists) + 1, [e["path"] for e in entries]
            assert preview["message_count"] == COUNT
            assert sum(s["count"] for s in preview["top_senders"]) == 10
            assert preview["newest"] > preview["oldest"]
            assert not modified(entries)  # a preview changes nothing
            senders = {s["from"] for s in preview["samples"] if s["id"] in preview["unsubscribe_message_ids"]}
            assert len(senders) == len(preview["unsubscribe_message_ids"]) == len(preview["top_senders"])


@pytest.mark.parametrize("mode", MODES)
async def test_interrupted_run_resumes_without_repeats_and_undo_restores(tmp_path: Path, mode: str):
    with cleanup_stack(tmp_path, newsletters=COUNT, chunks_per_call=2) as stack:
        before = labels_of(stack)
        async with Client(stack.server(GROUPS), mode=mode) as client:
            preview = await call(client, "gmail_cleanup_preview", {"query": "category:promotions", "action": "archive"})
            preview_id = preview["preview_id"]
            since = last_seq(stack)
            asked = await call(client, "gmail_cleanup_run", {"preview_id": preview_id})
            assert asked["status"] == "confirmation_required" and asked["done_count"] == 0
            assert not modified(log_of(stack, since))  # no code, no change
            updates: list[float] = []

            async def on_progress(done: float, total: float | None, message: str | None) -> None:
                updates.append(done)

            first = await call(
                client,
                "gmail_cleanup_run",
                {"preview_id": preview_id, "confirmation_code": asked["confirmation_code"]},
                progress_callback=on_progress,
            )
            assert first["status"] == "paused" and first["done_count"] == 2_000
            assert first["label"] == "gmail-mcp/cleanup-2026-11-26-1"
            assert updates == [1_000, 2_000]
            second = await call(client, "gmail_cleanup_run", {"preview_id": preview_id})  # no new code needed
            third = await call(client, "gmail_cleanup_run", {"preview_id": preview_id})
            assert (second["done_count"], third["status"], third["done_count"]) == (4_000, "done", COUNT)
            batches = modified(log_of(stack, since))
            assert [len(ids) for ids in batches] == [1_000] * 5
            touched = [message_id for ids in batches for message_id in ids]
            assert len(touched) == len(set(touched)) == COUNT
            after = labels_of(stack)
            label_id = next(k for k, v in stack.emulator.store.labels.items() if "cleanup" in str(v))  # type: ignore[attr-defined]
            assert all("INBOX" not in after[i] and label_id in after[i] for i in touched)
            again = await call(client, "gmail_cleanup_run", {"preview_id": preview_id})
            assert again["status"] == "done" and again["changed_this_call"] == 0
            undo_since = last_seq(stack)
            undone = await call(client, "gmail_cleanup_undo", {"preview_id": preview_id})
            undone_more = undone
            while undone_more["status"] == "paused":
                undone_more = await call(client, "gmail_cleanup_undo", {"preview_id": preview_id})
            assert undone_more["status"] == "undone" and undone_more["restored_count"] == COUNT
            assert len(modified(log_of(stack, undo_since))) == 5
        assert labels_of(stack) == before
        assert not [e for e in stack.emulator.requests() if e["status"] == 429]
        assert not [p for e in stack.emulator.requests() for p in e["parts"] if p["status"] == 429]


async def test_a_code_is_bound_to_its_preview(tmp_path: Path):
    with cleanup_stack(tmp_path, newsletters=30) as stack:
        async with Client(stack.server(GROUPS), mode="auto") as client:
            one = await call(client, "gmail_cleanup_preview", {"query": "category:promotions", "action": "mark_read"})
            two = await call(client, "gmail_cleanup_preview", {"query": "category:promotions", "action": "trash"})
            code = (await call(client, "gmail_cleanup_run", {"preview_id": one["preview_id"]}))["confirmation_code"]
            since = last_seq(stack)
            wrong = await client.call_tool(
                "gmail_cleanup_run", {"preview_id": two["preview_id"], "confirmation_code": code}
            )
            assert wrong.is_error and "Nothing was changed" in wrong.content[0].text
            assert not modified(log_of(stack, since))


@pytest.mark.parametrize("mode", MODES)
async def test_elicitation_accept_runs_and_decline_changes_nothing(tmp_path: Path, mode: str):
    with cleanup_stack(tmp_path, newsletters=30) as stack:
        answers = iter(["decline", "accept"])

        async def answer(_ctx: Any, params: Any) -> types.ElicitResult:
            action = next(answers)
            return types.ElicitResult(action=action, content={"confirm": True} if action == "accept" else None)

        async with Client(stack.server(GROUPS), mode=mode, elicitation_callback=answer) as client:
            preview = await call(client, "gmail_cleanup_preview", {"query": "category:promotions", "action": "trash"})
            since = last_seq(stack)
            declined = await call(client, "gmail_cleanup_run", {"preview_id": preview["preview_id"]})
            assert declined["status"] == "declined" and not modified(log_of(stack, since))
            done = await call(client, "gmail_cleanup_run", {"preview_id": preview["preview_id"]})
            assert done["status"] == "done" and done["done_count"] == 30
            assert all("TRASH" in m.label_ids for m in stack.emulator.store.messages)
            await call(client, "gmail_cleanup_undo", {"preview_id": preview["preview_id"]})
            assert not any("TRASH" in m.label_ids for m in stack.emulator.store.messages)


async def test_the_settings_reach_a_server_started_from_its_environment(tmp_path: Path):
    """`python -m server.main` over stdio, configured only by its environment: GMAIL_MCP_WRITE_TOOLS=cleanup lists
    the three tools, GMAIL_MCP_CLEANUP_CHUNKS_PER_CALL=1 ends each run call after one chunk of 1,000."""
    write_newsletters(tmp_path / "mail" / "newsletters.mbox", 1_500)
    with start_emulator(tmp_path / "mail") as emulator:
        env = {
            **os.environ,
            "PYTHONPATH": str(PROJECT_ROOT),
            "GMAIL_API_ENDPOINT": emulator.url,
            "GMAIL_TOKEN_URI": emulator.token_uri,
            "GMAIL_TOKEN_PATH": str(emulator.write_token(tmp_path / "token.json", scopes=["readonly", "modify"])),
            "GMAIL_MCP_WRITE_TOOLS": "cleanup",
            "GMAIL_MCP_CLEANUP_CHUNKS_PER_CALL": "1",
        }
        params = StdioServerParameters(command=sys.executable, args=["-m", "server.main"], env=env, cwd="/")
        with open(tmp_path / "stderr.log", "w") as errlog:
            async with Client(stdio_client(params, errlog=errlog), mode="auto") as client:
                tools = {tool.name for tool in (await client.list_tools()).tools}
                assert {"gmail_cleanup_preview", "gmail_cleanup_run", "gmail_cleanup_undo"} <= tools
                assert "gmail_unsubscribe" not in tools  # its own group, not enabled
                preview = await call(client, "gmail_cleanup_preview", {"query": "deals", "action": "mark_read"})
                asked = await call(client, "gmail_cleanup_run", {"preview_id": preview["preview_id"]})
                arguments = {"preview_id": preview["preview_id"], "confirmation_code": asked["confirmation_code"]}
                first = await call(client, "gmail_cleanup_run", arguments)
                second = await call(client, "gmail_cleanup_run", {"preview_id": preview["preview_id"]})
        assert (first["status"], first["done_count"]) == ("paused", 1_000)
        assert (second["status"], second["done_count"]) == ("done", 1_500)
        assert not any("UNREAD" in m.label_ids for m in emulator.store.messages)


async def test_a_failed_chunk_says_how_far_it_got_and_the_next_call_finishes(tmp_path: Path):
    """A batchModify Gmail refuses (an injected 400, not retried) ends the call with an error whose hint names the
    preview id to continue with; the next call sends that chunk and the rest, each message once."""
    with cleanup_stack(tmp_path, newsletters=2_500) as stack:
        async with Client(stack.server(GROUPS), mode="auto") as client:
            preview = await call(client, "gmail_cleanup_preview", {"query": "deals", "action": "archive"})
            preview_id = preview["preview_id"]
            code = (await call(client, "gmail_cleanup_run", {"preview_id": preview_id}))["confirmation_code"]
            since = last_seq(stack)
            stack.emulator.add_fault(status=400, method="POST", path_regex="batchModify$", count=1)
            failed = await client.call_tool("gmail_cleanup_run", {"preview_id": preview_id, "confirmation_code": code})
            assert failed.is_error and f"preview_id={preview_id}" in failed.meta["gmail-mcp/error"]["hint"]
            done = await call(client, "gmail_cleanup_run", {"preview_id": preview_id})
            assert done["status"] == "done" and done["done_count"] == 2_500
            touched = [message_id for ids in modified(log_of(stack, since)) for message_id in ids]
            assert len(touched) == len(set(touched)) == 2_500  # the refused request changed nothing
