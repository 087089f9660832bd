"""`gmail_changes_since` through the real server and an emulator whose mailbox changes between calls."""

from __future__ import annotations

import jsonschema
import pytest

from server.tests.support.mailbox_stack import (
    BATCH_PATH,
    CHANGES,
    HISTORY_PATH,
    PROFILE_PATH,
    SEARCH,
    changing_mailbox,
    cost_of,
    shape,
)
from server.toolsets.changes import decode_checkpoint, encode_checkpoint

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend():
    return "asyncio"


async def checkpoint_now(stack) -> str:
    result, requests = await stack.call(CHANGES, {})
    assert shape(requests) == [(PROFILE_PATH, None)]
    assert result.structured_content == {
        "checkpoint": result.structured_content["checkpoint"],
        "messages": [],
        "deleted": [],
        "added_count": 0,
        "relabeled_count": 0,
        "deleted_count": 0,
        "more": False,
        "expired": False,
        "first_checkpoint": True,
        "mailbox": stack.emulator.store.email_address,  # every result says whose mail it holds
    }
    assert "Pass it as checkpoint later" in result.content[0].text
    return result.structured_content["checkpoint"]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_one_new_message_is_two_requests_with_sender_and_subject(tmp_path, mode):
    async with changing_mailbox(tmp_path, mode=mode) as stack:
        checkpoint = await checkpoint_now(stack)
        arrived = stack.emulator.deliver(**{"from": "Nina Park <nina@example.org>", "subject": "Lunch on Friday?"})
        result, requests = await stack.call(CHANGES, {"checkpoint": checkpoint})
        tools = {tool.name: tool for tool in (await stack.client.list_tools()).tools}
    assert shape(requests) == [(HISTORY_PATH, None), (BATCH_PATH, 1)]
    assert cost_of(result)["requests"] == 2 and cost_of(result)["quota_units"] == 2 + 5
    jsonschema.validate(result.structured_content, tools[CHANGES].output_schema)
    (item,) = result.structured_content["messages"]
    assert item["id"] == arrived["id"] and item["change"] == "added"
    assert item["from_email"] == "nina@example.org" and item["from_name"] == "Nina Park"
    assert item["subject"] == "Lunch on Friday?" and item["label_ids"] == ["INBOX", "UNREAD"]
    assert result.structured_content["added_count"] == 1
    assert decode_checkpoint(result.structured_content["checkpoint"]) == int(arrived["historyId"])
    text = result.content[0].text
    assert "1 new, 0 re-labelled, 0 deleted" in text and "Nina Park <nina@example.org> | Lunch on Friday?" in text


async def test_no_changes_is_one_request(tmp_path):
    async with changing_mailbox(tmp_path) as stack:
        checkpoint = await checkpoint_now(stack)
        result, requests = await stack.call(CHANGES, {"checkpoint": checkpoint})
    assert shape(requests) == [(HISTORY_PATH, None)]
    assert result.structured_content["checkpoint"] == checkpoint
    assert result.content[0].text.startswith("No changes since the checkpoint.")


async def test_read_archived_and_deleted_messages_are_reported(tmp_path):
    async with changing_mailbox(tmp_path) as stack:
        search, _ = await stack.call(SEARCH, {"query": "is:unread", "max_results": 3})  # caches their summaries
        read, archived, deleted = [item["id"] for item in search.structured_content["messages"]]
        checkpoint = await checkpoint_now(stack)
        stack.emulator.modify(read, remove=["UNREAD"])
        stack.emulator.modify(archived, remove=["INBOX", "UNREAD"], add=["STARRED"])
        stack.emulator.modify(archived, add=["UNREAD"])  # read and then unread again: no net change of UNREAD
        stack.emulator.delete(deleted)
        result, requests = await stack.call(CHANGES, {"checkpoint": checkpoint})
    # Both summaries were cached by the search; the label list (user labels by name) once per cache period.
    assert shape(requests) == [(HISTORY_PATH, None), ("/gmail/v1/users/me/labels", None)]
    content = result.structured_content
    assert content["deleted"] == [deleted] and content["relabeled_count"] == 2 and content["added_count"] == 0
    by_id = {item["id"]: item for item in content["messages"]}
    assert by_id[read]["labels_removed"] == ["UNREAD"] and "labels_added" not in by_id[read]
    assert by_id[archived]["labels_added"] == ["STARRED"] and by_id[archived]["labels_removed"] == ["INBOX"]
    assert "INBOX" not in by_id[archived]["label_ids"] and by_id[archived]["subject"]
    assert f"Deleted: {deleted}" in result.content[0].text and "[+STARRED -INBOX]" in result.content[0].text


async def test_a_label_filter_keeps_changes_touching_the_label(tmp_path):
    async with changing_mailbox(tmp_path) as stack:
        checkpoint = await checkpoint_now(stack)
        inbox = stack.emulator.deliver(**{"from": "a@example.org", "subject": "to the inbox"})
        stack.emulator.deliver(**{"from": "b@example.org", "subject": "filed away"}, labelIds=["CATEGORY_UPDATES"])
        result, requests = await stack.call(CHANGES, {"checkpoint": checkpoint, "label": "inbox"})
    assert [item["id"] for item in result.structured_content["messages"]] == [inbox["id"]]
    assert "labelId=INBOX" in requests[0]["query"]


async def test_a_too_old_checkpoint_is_an_answer_with_a_fresh_checkpoint(tmp_path):
    async with changing_mailbox(tmp_path) as stack:
        checkpoint = await checkpoint_now(stack)
        stack.emulator.deliver(**{"from": "a@example.org", "subject": "x"})
        stack.emulator.expire_history()
        result, requests = await stack.call(CHANGES, {"checkpoint": checkpoint})
        current = stack.emulator.info()["history_id"]
    assert result.is_error is False and result.structured_content["expired"] is True
    assert [(entry["path"], entry["status"]) for entry in requests] == [(HISTORY_PATH, 404), (PROFILE_PATH, 200)]
    assert "after:" in result.structured_content["hint"] and "gmail_search_messages" in result.content[0].text
    assert decode_checkpoint(result.structured_content["checkpoint"]) == current


async def test_many_changes_follow_pages_and_list_the_newest_first(tmp_path):
    async with changing_mailbox(tmp_path) as stack:
        checkpoint = await checkpoint_now(stack)
        arrived = [stack.emulator.deliver(**{"from": "x@example.org", "subject": f"n{n}"})["id"] for n in range(12)]
        result, requests = await stack.call(CHANGES, {"checkpoint": checkpoint, "max_results": 5})
    content = result.structured_content
    assert content["added_count"] == 12 and [item["id"] for item in content["messages"]] == arrived[::-1][:5]
    assert shape(requests) == [(HISTORY_PATH, None), (BATCH_PATH, 5)]


async def test_a_message_added_and_deleted_since_is_not_reported(tmp_path):
    async with changing_mailbox(tmp_path) as stack:
        checkpoint = await checkpoint_now(stack)
        brief = stack.emulator.deliver(**{"from": "x@example.org", "subject": "gone soon"})
        stack.emulator.delete(brief["id"])
        result, _ = await stack.call(CHANGES, {"checkpoint": checkpoint})
    assert result.structured_content["added_count"] == result.structured_content["deleted_count"] == 0


@pytest.mark.parametrize(
    "arguments, complaint",
    [
        ({"checkpoint": "12345"}, "not a checkpoint this server gave"),
        ({"checkpoint": encode_checkpoint(5)[:-2] + "!!"}, "not a checkpoint this server gave"),
        ({"label": ""}, "at least 1 character"),
        ({"max_results": 0}, "max_results"),
    ],
)
async def test_bad_arguments_are_input_errors(tmp_path, arguments, complaint):
    async with changing_mailbox(tmp_path, warm=False, GMAIL_MCP_WARM_UP="0") as stack:
        result, requests = await stack.call(CHANGES, arguments, ok=False)
    assert result.is_error and result.meta["gmail-mcp/error"]["category"] == "invalid_input"
    assert complaint in result.meta["gmail-mcp/error"]["message"] and requests == []


def test_checkpoints_round_trip_and_look_opaque():
    checkpoint = encode_checkpoint(1234567)
    assert decode_checkpoint(checkpoint) == 1234567 and "1234567" not in checkpoint
