"""Live reading suite: a conversation, the labels and an attachment of the live target (a real inbox with a token,
or the emulator serving the demo mailbox with GMAIL_LIVE_TARGET=emulator). Read-only; targets are discovered."""

from __future__ import annotations

import pytest

from server.toolsets.attachments import ReadAttachmentInput, read_attachment
from server.toolsets.labels import ListLabelsInput, list_labels
from server.toolsets.messages.read import GetMessageInput, get_message
from server.toolsets.messages.search import SearchMessagesInput, search_messages
from server.toolsets.threads.get_thread import get_thread
from server.toolsets.threads.models import GetThreadInput

pytestmark = pytest.mark.live


def test_a_conversation_reads_in_date_order_with_a_reply_context(live_gmail):
    context = live_gmail.context()
    found = search_messages(context, SearchMessagesInput(query="in:inbox", max_results=20)).messages
    if not found:
        pytest.skip("the inbox is empty")
    thread = get_thread(context, GetThreadInput(thread_id=found[0].thread_id))
    assert thread.message_count >= 1 and thread.messages and thread.reply is not None
    dates = [item.date for item in thread.messages if item.date]
    assert found[0].id in {item.id for item in thread.messages} or thread.notes
    assert thread.account_address and thread.account_address not in " ".join(thread.reply.to + thread.reply.cc)
    assert len(dates) == len(thread.messages)


def test_labels_list_with_counts(live_gmail):
    result = list_labels(live_gmail.context(), ListLabelsInput(labels=["INBOX"]))
    (inbox,) = result.labels
    assert inbox.id == "INBOX" and inbox.messages_total is not None and inbox.messages_total >= 0


def test_an_attachment_reads_as_text_or_says_why_not(live_gmail):
    context = live_gmail.context()
    found = search_messages(context, SearchMessagesInput(query="has:attachment", max_results=10)).messages
    for item in found:
        message = get_message(context, GetMessageInput(message_id=item.id))
        if message.attachments:
            part = message.attachments[0]
            result = read_attachment(
                context, ReadAttachmentInput(message_id=item.id, attachment=part.part_id, max_chars=2000)
            )
            assert result.filename == part.filename and result.kind in ("text", "image", "unsupported")
            assert result.text or result.notes
            return
    pytest.skip("no message with an attachment among the newest 10")
