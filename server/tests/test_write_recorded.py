"""Drafts and sending through real MCP sessions, against an emulator that answers as recorded Gmail does; and
the answers an assistant reads: no HTML entities in draft snippets, no tool named that the server does not offer.

Evidence (read, not copied): Nango integration-templates `integrations/google-mail/tests/` send-draft, get-draft,
create-draft, send-message, untrash-thread `.test.json` (2026, Workspace) and the 2024 gmail.com message mocks.
"""

from __future__ import annotations

import base64
import email
import re
from pathlib import Path
from typing import Any

import mcp.types as types
import pytest
from mcp.client import Client

from server.tests.support.emulator import OWNER, gmail_service
from server.tests.support.writes import WriteStack, write_stack

pytestmark = pytest.mark.anyio
TOOL_NAME = re.compile(r"\bgmail_[a-z_]+\b")


@pytest.fixture
def anyio_backend():
    return "asyncio"


async def accept(_ctx: Any, _params: Any) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"confirm": True})


def original(stack: WriteStack) -> Any:
    return next(m for m in stack.emulator.store.messages if m.subject == "Quarterly report")


async def call(client: Client, tool: str, arguments: dict[str, Any]) -> Any:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content[0].text
    return result


async def test_a_sent_draft_keeps_its_thread_and_mail_to_oneself_lands_in_the_inbox_unread(tmp_path: Path):
    """send-draft.test.json: the sent message keeps the draft's thread id (not its own id); 2024 mocks: mail the
    owner sent to themself reads [UNREAD, IMPORTANT, SENT, INBOX]; get-draft.test.json: a draft reads back with
    the account's From, a Date and a Message-Id that the client never wrote."""
    with write_stack(tmp_path) as stack:
        async with Client(stack.server(), mode="auto", elicitation_callback=accept) as client:
            made = await call(
                client, "gmail_create_draft", {"to": [OWNER], "subject": "Note to self", "body": "Buy milk"}
            )
            draft = made.structured_content
            stored = email.message_from_bytes(stack.raw_of(draft["message_id"]))
            assert stored["From"] == OWNER and stored["Date"] and stored["Message-Id"]
            sent = (await call(client, "gmail_send_draft", {"draft_id": draft["draft_id"]})).structured_content
            assert sent["status"] == "sent" and sent["thread_id"] == draft["thread_id"] != sent["message_id"]
            unread = await call(client, "gmail_search_messages", {"query": "in:inbox is:unread subject:(Note to self)"})
            assert [m["id"] for m in unread.structured_content["messages"]] == [sent["message_id"]]
            thread = await call(client, "gmail_get_thread", {"thread_id": sent["thread_id"]})
            assert sent["message_id"] in thread.content[0].text


async def test_only_a_reply_with_its_headers_and_subject_joins_a_conversation(tmp_path: Path):
    """The rule chosen (Gmail API threading guide: threadId + In-Reply-To/References + matching Subject; the
    sender's own mailbox in the Nango recordings: a draft created without a threadId started its own thread, and
    sending kept it): a reply draft joins the original's conversation; a new draft with the same Re: subject
    does not; each stays in its thread when sent."""
    with write_stack(tmp_path) as stack:
        thread = original(stack).thread_id
        async with Client(stack.server(), mode="auto", elicitation_callback=accept) as client:
            reply = await call(client, "gmail_create_draft", {"reply_to_message_id": original(stack).id, "body": "Ok"})
            lookalike = await call(
                client,
                "gmail_create_draft",
                {"to": ["alice@example.com"], "subject": "Re: Quarterly report", "body": "Ok"},
            )
            assert reply.structured_content["thread_id"] == thread
            assert lookalike.structured_content["thread_id"] != thread
            for made in (reply, lookalike):
                draft = made.structured_content
                sent = (await call(client, "gmail_send_draft", {"draft_id": draft["draft_id"]})).structured_content
                assert sent["thread_id"] == draft["thread_id"]
        assert [m.subject for m in stack.emulator.store.threads[thread]][-1] == "Re: Quarterly report"


async def test_draft_snippets_are_shown_without_html_entities(tmp_path: Path):
    """Gmail's snippets are HTML-escaped (untrash-thread.test.json: "wasn&#39;t delivered"); the emulator's are
    too. gmail_list_drafts shows the text as written."""
    with write_stack(tmp_path) as stack:
        async with Client(stack.server(), mode="auto") as client:
            await call(client, "gmail_create_draft", {"to": ["a@x.example"], "body": "Don't cancel Q&A <today>"})
            listed = await call(client, "gmail_list_drafts", {})
            [item] = listed.structured_content["drafts"]
            assert item["snippet"] == "Don't cancel Q&A <today>", item["snippet"]
            assert "&#39;" not in listed.content[0].text and "&amp;" not in listed.content[0].text


def named_tools(result: Any) -> set[str]:
    text = result.content[0].text
    return set(TOOL_NAME.findall(text))


@pytest.mark.parametrize(
    "enabled", [frozenset({"drafts"}), frozenset({"send"}), frozenset({"drafts", "send"}), frozenset({"labels"})]
)
async def test_write_answers_name_only_tools_the_server_offers(tmp_path: Path, enabled: frozenset[str]):
    """Drafts without send: no answer points to gmail_send_draft; send without drafts: none to gmail_update_draft
    or gmail_list_drafts; labels alone: only read tools. Every answer and hint is checked against tools/list."""
    with write_stack(tmp_path) as stack:
        # a draft without recipients, saved by another Gmail client (as the person would in Gmail)
        service = gmail_service(stack.emulator, stack.emulator.write_token(tmp_path / "other.json"))
        body = {"message": {"raw": base64.urlsafe_b64encode(b"Subject: Nobody yet\r\n\r\nText\r\n").decode()}}
        empty_draft = service.users().drafts().create(userId="me", body=body).execute()["id"]
        async with Client(stack.server(enabled=enabled), mode="auto") as client:
            offered = {tool.name for tool in (await client.list_tools()).tools}
            answers = []
            if "gmail_create_draft" in offered:
                made = await call(client, "gmail_create_draft", {"to": ["a@x.example"], "body": "Hi"})
                draft_id = made.structured_content["draft_id"]
                answers.append(made)
                answers.append(await call(client, "gmail_update_draft", {"draft_id": draft_id, "body": "Hello"}))
                answers.append(await call(client, "gmail_list_drafts", {}))
                answers.append(await client.call_tool("gmail_update_draft", {"draft_id": "r0000000000000000001"}))
                answers.append(await call(client, "gmail_create_draft", {"body": "no one"}))
                answers.append(await call(client, "gmail_delete_draft", {"draft_id": draft_id}))
            if "gmail_send_draft" in offered:
                answers.append(await client.call_tool("gmail_send_draft", {"draft_id": empty_draft}))
                answers.append(await client.call_tool("gmail_send_draft", {"draft_id": "r0000000000000000001"}))
            if "gmail_modify_messages" in offered:
                stale = "abcdef0123456789"
                for arguments in (
                    {"message_ids": [original(stack).id, stale], "star": True},
                    {"message_ids": [stale], "star": True},
                    {"message_ids": [original(stack).id], "add_labels": ["No such label"]},
                    {"message_ids": [original(stack).id], "trash": False},
                ):
                    answers.append(await client.call_tool("gmail_modify_messages", arguments))
            assert answers
            for answer in answers:
                assert named_tools(answer) <= offered, (answer.content[0].text, offered)
            if "gmail_send_draft" in offered and "gmail_create_draft" in offered:
                assert "gmail_send_draft with draft_id=" in answers[0].content[0].text
