"""`gmail_modify_messages` through MCP sessions against the emulator: the changes show in later searches.

Labels by name or id, archive, read/unread, star, trash and restore; one request per call (batchModify for many
ids); creating a label only when asked; unknown ids named; retried like any idempotent call; dry run changes
nothing; Gmail-only labels refused.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from mcp.client import Client

from server.tests.support.emulator import gmail_service
from server.tests.support.writes import WriteStack, write_stack

pytestmark = pytest.mark.anyio
MODES = ["legacy", "auto"]


@pytest.fixture
def anyio_backend():
    return "asyncio"


async def search(client: Client, query: str) -> set[str]:
    result = await client.call_tool("gmail_search_messages", {"query": query, "max_results": 50})
    assert not result.is_error, result.content[0].text
    return {m["id"] for m in result.structured_content["messages"]}


def ids_of(stack: WriteStack, *subjects: str) -> list[str]:
    return [next(m.id for m in stack.emulator.store.messages if m.subject == subject) for subject in subjects]


def writes(stack: WriteStack) -> list[dict[str, Any]]:
    return [e for e in stack.emulator.requests() if e["method"] == "POST" and "/messages/" in e["path"]]


@pytest.mark.parametrize("mode", MODES)
async def test_archive_read_star_and_labels_show_in_later_searches(tmp_path: Path, mode: str):
    with write_stack(tmp_path) as stack:
        report, invoice = ids_of(stack, "Quarterly report", "Invoice 42")
        async with Client(stack.server(), mode=mode) as client:
            assert {report, invoice} <= await search(client, "in:inbox")
            result = await client.call_tool(
                "gmail_modify_messages",
                {"message_ids": [report, invoice], "archive": True, "mark_read": True, "add_labels": ["Work"]},
            )
            assert not result.is_error, result.content[0].text
            data = result.structured_content
            assert (
                data["message_count"] == 2 and data["added"] == ["Work"] and set(data["removed"]) == {"INBOX", "UNREAD"}
            )
            assert not {report, invoice} & await search(client, "in:inbox")
            assert {report, invoice} <= await search(client, "label:Work")
            assert report not in await search(client, "is:unread")
            starred = await client.call_tool("gmail_modify_messages", {"message_ids": [report], "star": True})
            assert "STARRED" in starred.structured_content["label_ids"]
            assert report in await search(client, "is:starred")
            back = await client.call_tool(
                "gmail_modify_messages", {"message_ids": [report], "remove_labels": ["work"], "mark_read": False}
            )
            assert set(back.structured_content["removed"]) == {"Work"} and back.structured_content["added"] == [
                "UNREAD"
            ]
            assert report in await search(client, "is:unread") and report not in await search(client, "label:Work")
        assert [e["path"].rsplit("/", 1)[-1] for e in writes(stack)] == ["batchModify", "modify", "modify"]


async def test_trash_and_restore_show_in_searches_and_nothing_is_deleted(tmp_path: Path):
    with write_stack(tmp_path) as stack:
        report, invoice, launch = ids_of(stack, "Quarterly report", "Invoice 42", "Product launch")
        async with Client(stack.server(), mode="auto") as client:
            one = await client.call_tool("gmail_modify_messages", {"message_ids": [report], "trash": True})
            assert one.structured_content["trashed"] == 1 and "TRASH" in one.structured_content["label_ids"]
            many = await client.call_tool("gmail_modify_messages", {"message_ids": [invoice, launch], "trash": True})
            assert many.structured_content["trashed"] == 2
            assert not {report, invoice, launch} & await search(client, "in:inbox")
            assert {report, invoice, launch} <= await search(client, "in:trash")
            restored = await client.call_tool(
                "gmail_modify_messages", {"message_ids": [report, invoice], "trash": False}
            )
            assert restored.structured_content["restored"] == 2
            assert {report, invoice} <= await search(client, "in:inbox") and launch in await search(client, "in:trash")
        assert len(stack.emulator.store.by_id) == stack.emulator.info()["messages"]
        assert not any(e["method"] == "DELETE" for e in stack.emulator.requests())
        assert [e["path"].rsplit("/", 1)[-1] for e in writes(stack)] == ["trash", "batchModify", "batchModify"]


async def test_labels_are_created_only_when_asked(tmp_path: Path):
    with write_stack(tmp_path) as stack:
        [report] = ids_of(stack, "Quarterly report")
        async with Client(stack.server(), mode="auto") as client:
            refused = await client.call_tool(
                "gmail_modify_messages", {"message_ids": [report], "add_labels": ["Follow up"]}
            )
            assert refused.is_error and "No label named 'Follow up'" in refused.content[0].text
            assert "gmail_list_labels" in refused.content[0].text
            typo = await client.call_tool("gmail_modify_messages", {"message_ids": [report], "add_labels": ["Wrok"]})
            assert "Did you mean 'Work'" in typo.content[0].text
            made = await client.call_tool(
                "gmail_modify_messages",
                {"message_ids": [report], "add_labels": ["Follow up"], "create_missing_labels": True},
            )
            assert made.structured_content["created_labels"] == ["Follow up"]
            assert report in await search(client, 'label:"Follow up"')
            again = await client.call_tool(
                "gmail_modify_messages",
                {"message_ids": [report], "add_labels": ["follow UP"], "create_missing_labels": True},
            )
            assert again.structured_content["created_labels"] == []  # found by name: not created twice


async def test_gmail_only_labels_and_contradictions_are_refused(tmp_path: Path):
    with write_stack(tmp_path) as stack:
        [report] = ids_of(stack, "Quarterly report")
        async with Client(stack.server(), mode="auto") as client:
            for arguments, expected in [
                ({"add_labels": ["SENT"]}, "cannot be set"),
                ({"add_labels": ["trash"]}, "cannot be set"),
                ({"remove_labels": ["SPAM"]}, "cannot be set"),
                ({"add_labels": ["STARRED"], "star": False}, "both added and removed"),
                ({}, "nothing to change"),
            ]:
                result = await client.call_tool("gmail_modify_messages", {"message_ids": [report], **arguments})
                assert result.is_error and expected in result.content[0].text, (arguments, result.content[0].text)
        assert writes(stack) == []


async def test_ids_that_name_no_message_are_named_and_the_rest_are_changed(tmp_path: Path):
    """Gmail's batchModify answers 204 and passes over ids that match nothing (Nango integration-templates
    tests/batch-modify-messages.test.json; taylorwilsdon/google_workspace_mcp PR #1047: "Changed 3 messages" when
    one id matched nothing). The tool checks the ids in one batched read and says exactly what changed."""
    with write_stack(tmp_path) as stack:
        report, invoice = ids_of(stack, "Quarterly report", "Invoice 42")
        stale = "abcdef0123456789"
        async with Client(stack.server(), mode="auto") as client:
            await client.call_tool("gmail_list_labels", {})
            before = len(stack.emulator.requests())
            result = await client.call_tool(
                "gmail_modify_messages", {"message_ids": [report, stale, invoice], "star": True}
            )
            assert not result.is_error, result.content[0].text
            data = result.structured_content
            assert data["message_count"] == 2 and data["not_found"] == [stale]
            text = result.content[0].text
            assert text.startswith("Changed 2 messages") and stale in text and "thread id" in text
            calls = stack.emulator.requests()[before:]  # /batch/gmail/v1 (a 3-part read), one batchModify
            assert [entry["path"].rsplit("/", 1)[-1] for entry in calls] == ["v1", "batchModify"]
            assert len(calls[0]["parts"]) == 3
            assert {report, invoice} <= await search(client, "is:starred")
            nothing = await client.call_tool(
                "gmail_modify_messages", {"message_ids": [stale, "0123456789abcdef"], "star": True}
            )
            assert nothing.meta["gmail-mcp/error"]["category"] == "not_found"
            assert stale in nothing.content[0].text and "nothing was changed" in nothing.content[0].text
            one = await client.call_tool("gmail_modify_messages", {"message_ids": [stale], "star": True})
            assert one.is_error and stale in one.content[0].text
        assert [entry["path"].rsplit("/", 1)[-1] for entry in writes(stack)] == ["batchModify", "modify"]


async def test_a_thread_id_given_as_a_message_id_is_named_not_counted(tmp_path: Path):
    """Nango tests/send-draft.test.json: a sent draft keeps the draft's thread id, which then names no message
    (the draft is gone). Given as a message id, Gmail's batchModify passes over it; the tool names it."""
    with write_stack(tmp_path) as stack:
        [report] = ids_of(stack, "Quarterly report")
        service = gmail_service(stack.emulator, stack.emulator.write_token(tmp_path / "other.json"))
        raw = base64.urlsafe_b64encode(b"To: bob@example.com\r\nSubject: Lunch\r\n\r\nNoon?\r\n").decode()
        draft = service.users().drafts().create(userId="me", body={"message": {"raw": raw}}).execute()
        sent = service.users().drafts().send(userId="me", body={"id": draft["id"]}).execute()
        thread_id = sent["threadId"]
        assert thread_id != sent["id"] and thread_id not in stack.emulator.store.by_id
        async with Client(stack.server(), mode="auto") as client:
            result = await client.call_tool(
                "gmail_modify_messages", {"message_ids": [report, thread_id], "add_labels": ["Work"]}
            )
            data = result.structured_content
            assert data["message_count"] == 1 and data["not_found"] == [thread_id]
            assert result.content[0].text.startswith("Changed 1 message;") and "thread id" in result.content[0].text


async def test_restore_puts_messages_back_where_they_were_when_trashed(tmp_path: Path):
    """Gmail's trash takes INBOX off and untrash takes only TRASH off (Nango tests/trash-thread.test.json,
    untrash-thread.test.json): a bare untrash lands in All Mail. The tool reads the history (the INBOX removal
    recorded with the trash) and puts back in the Inbox only what was there: one history.list, bounded."""
    with write_stack(tmp_path) as stack:
        report, invoice = ids_of(stack, "Quarterly report", "Invoice 42")
        async with Client(stack.server(), mode="auto") as client:
            await client.call_tool("gmail_modify_messages", {"message_ids": [invoice], "archive": True})
            trashed = await client.call_tool("gmail_modify_messages", {"message_ids": [report, invoice], "trash": True})
            assert trashed.structured_content["trashed"] == 2
            assert not {report, invoice} & await search(client, "in:inbox")
            before = len(stack.emulator.requests())
            restored = await client.call_tool(
                "gmail_modify_messages", {"message_ids": [report, invoice], "trash": False}
            )
            data = restored.structured_content
            assert data["restored"] == 2 and data["back_in_inbox"] == 1, restored.content[0].text
            assert "1 message back in the Inbox, where it was when trashed" in restored.content[0].text
            assert "not in the Inbox when trashed" in restored.content[0].text
            paths = [entry["path"].rsplit("/", 1)[-1] for entry in stack.emulator.requests()[before:]]
            assert paths == ["v1", "history", "batchModify", "batchModify"]
            inbox = await search(client, "in:inbox")
            assert report in inbox and invoice not in inbox
            assert not {report, invoice} & await search(client, "in:trash")
            single = await client.call_tool("gmail_modify_messages", {"message_ids": [report], "trash": True})
            assert "INBOX" not in single.structured_content["label_ids"]
            before = len(stack.emulator.requests())
            back = await client.call_tool("gmail_modify_messages", {"message_ids": [report], "trash": False})
            paths = [entry["path"].rsplit("/", 1)[-1] for entry in stack.emulator.requests()[before:]]
            assert paths == ["v1", "history", "modify"]  # read, history, then out of Trash into the Inbox at once
            assert (
                "INBOX" in back.structured_content["label_ids"] and "TRASH" not in back.structured_content["label_ids"]
            )
            await client.call_tool("gmail_modify_messages", {"message_ids": [report], "trash": True})
            stack.emulator.expire_history()  # Gmail keeps about a week of history
            unknown = await client.call_tool("gmail_modify_messages", {"message_ids": [report], "trash": False})
            assert not unknown.is_error and "history read does not show" in unknown.content[0].text
            assert "INBOX" not in unknown.structured_content["label_ids"]
            writes_before = len(writes(stack))
            idle = await client.call_tool("gmail_modify_messages", {"message_ids": [report], "trash": False})
            assert idle.structured_content["restored"] == 0 and "1 message not in Trash" in idle.content[0].text
            assert len(writes(stack)) == writes_before  # nothing to untrash: no write at all


async def test_labels_now_names_user_labels(tmp_path: Path):
    """An assistant reads "Labels now": a user label by its name, never a bare Label_ id."""
    with write_stack(tmp_path) as stack:
        [report] = ids_of(stack, "Quarterly report")
        async with Client(stack.server(), mode="auto") as client:
            result = await client.call_tool("gmail_modify_messages", {"message_ids": [report], "add_labels": ["Work"]})
            text = result.content[0].text
            assert "Work" in result.structured_content["label_ids"] and "Label_" not in text, text


async def test_label_changes_are_retried_like_reads(tmp_path: Path):
    with write_stack(tmp_path) as stack:
        report, invoice = ids_of(stack, "Quarterly report", "Invoice 42")
        stack.emulator.add_fault(path_regex=r"/batchModify$", status=503)
        async with Client(stack.server(), mode="auto") as client:
            result = await client.call_tool("gmail_modify_messages", {"message_ids": [report, invoice], "star": True})
            assert not result.is_error, result.content[0].text
            assert {report, invoice} <= await search(client, "is:starred")
        assert [e["status"] for e in writes(stack)] == [503, 204]


async def test_dry_run_resolves_but_changes_nothing(tmp_path: Path):
    with write_stack(tmp_path, dry_run=True) as stack:
        ids = ids_of(stack, "Quarterly report", "Invoice 42")
        async with Client(stack.server(), mode="auto") as client:
            result = await client.call_tool(
                "gmail_modify_messages",
                {
                    "message_ids": ids,
                    "archive": True,
                    "trash": True,
                    "add_labels": ["New one"],
                    "create_missing_labels": True,
                },
            )
            data = result.structured_content
            assert data["dry_run"] and data["trashed"] == 2 and data["created_labels"] == ["New one"]
            assert "Dry run" in result.content[0].text
            assert set(ids) <= await search(client, "in:inbox")
        assert writes(stack) == [] and not any(
            e["path"].endswith("/labels") and e["method"] == "POST" for e in stack.emulator.requests()
        )
        audit = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text(encoding="utf-8").splitlines()]
        assert audit[-1]["outcome"] == "dry_run" and audit[-1]["ids"] == ids


async def test_a_thousand_ids_go_in_one_batch_modify(tmp_path: Path):
    with write_stack(tmp_path) as stack:
        ids = [m.id for m in stack.emulator.store.messages]
        padded = (ids * (1000 // len(ids) + 1))[:1000]  # repeats are sent once
        async with Client(stack.server(), mode="auto") as client:
            result = await client.call_tool("gmail_modify_messages", {"message_ids": padded, "mark_read": True})
            assert result.structured_content["message_count"] == len(ids)
            too_many = await client.call_tool(
                "gmail_modify_messages", {"message_ids": [*padded, "abc"], "mark_read": True}
            )
            assert too_many.is_error and "1000" in too_many.content[0].text
        assert len(writes(stack)) == 1


def test_the_summary_cache_never_keeps_what_a_write_changes(tmp_path: Path):
    """The restore reads each message's historyId (its last change): a cached one would be stale after any
    change, so such reads go to Gmail every time; the summary profile stays cached."""
    from server.gmail.cache import SUMMARY_FIELDS, SUMMARY_HEADERS, CachedGmail

    with write_stack(tmp_path) as stack:
        [report] = ids_of(stack, "Quarterly report")
        cached = CachedGmail(stack.ctx.gmail)
        first = cached.get_messages_metadata([report], headers=(), fields="id,historyId")[report]
        stack.emulator.modify(report, add=["STARRED"])
        again = cached.get_messages_metadata([report], headers=(), fields="id,historyId")[report]
        assert int(again["historyId"]) > int(first["historyId"])
        for _ in range(2):
            cached.get_messages_metadata([report], headers=SUMMARY_HEADERS, fields=SUMMARY_FIELDS)
        assert sum(entry["path"] == "/batch/gmail/v1" for entry in stack.emulator.requests()) == 3


@pytest.mark.parametrize(
    "changes, expected",
    [
        ([(["TRASH"], ["INBOX"])], True),  # one record, as the emulator writes it
        ([(["TRASH"], []), ([], ["INBOX"])], True),  # should Gmail split the two, the next record
        ([([], ["INBOX"]), (["TRASH"], [])], False),  # archived earlier, then trashed: not back to the Inbox
        ([(["TRASH"], ["INBOX"]), ([], ["TRASH"])], None),  # restored since: the history read does not say
        ([(["TRASH"], ["INBOX"]), ([], ["TRASH"]), (["TRASH"], [])], False),  # the last trash decides
        ([([], ["UNREAD"])], None),  # no trash seen
    ],
)
def test_where_a_message_was_when_trashed(changes: list[tuple[list[str], list[str]]], expected: bool | None):
    from server.toolsets.restore import _was_in_inbox

    def entry(labels: list[str]) -> list[dict]:
        return [{"message": {"id": "m1", "threadId": "t1"}, "labelIds": labels}] if labels else []

    other = {"id": "1", "labelsAdded": [{"message": {"id": "m2"}, "labelIds": ["TRASH"]}]}
    records = [other] + [
        {"id": str(n + 2), "labelsAdded": entry(added), "labelsRemoved": entry(removed)}
        for n, (added, removed) in enumerate(changes)
    ]
    assert _was_in_inbox(records, "m1") is expected
