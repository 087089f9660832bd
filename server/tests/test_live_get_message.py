"""Live read suite of the design document (5 cases); see test_live_search.py for how targets are chosen."""

from __future__ import annotations

import re

import pytest

from server.errors import NotFoundError
from server.toolsets.messages.read import GetMessageInput, get_message
from server.toolsets.messages.search import SearchMessagesInput, search_messages

pytestmark = pytest.mark.live
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


def read(live_gmail, **arguments):
    return get_message(live_gmail.context(), GetMessageInput(**arguments))


@pytest.fixture(scope="module")
def newest(live_gmail):
    result = search_messages(live_gmail.context(), SearchMessagesInput(query="in:inbox", max_results=1))
    if not result.messages:
        pytest.skip("the inbox is empty")
    return result.messages[0]


def test_full_read_has_headers_and_body(live_gmail, newest):
    message = read(live_gmail, message_id=newest.id, format="full")
    assert message.id == newest.id and message.headers.from_ and message.headers.date
    assert message.body_text is not None and message.body_chars_total is not None
    assert message.headers.subject == newest.subject  # search and read agree


def test_metadata_read_has_headers_and_snippet_but_no_body(live_gmail, newest):
    message = read(live_gmail, message_id=newest.id, format="metadata")
    assert message.headers.from_ and message.snippet is not None
    # Metadata cannot know the attachments: the field is left out, never an empty list read as "none".
    assert message.body_text is None and message.attachments is None


def test_nonexistent_id_is_not_found_with_a_hint(live_gmail):
    with pytest.raises(NotFoundError) as caught:
        read(live_gmail, message_id="nonexistent_12345")
    assert "gmail_search_messages" in caught.value.hint


def test_headers_are_complete(live_gmail):
    result = search_messages(live_gmail.context(), SearchMessagesInput(query="in:inbox -in:sent", max_results=10))
    for item in result.messages:
        message = read(live_gmail, message_id=item.id, format="metadata")
        if message.headers.to:
            assert message.headers.from_ and message.headers.subject is not None and message.headers.date
            return
    pytest.skip("no inbox message with a To header")


def test_cjk_or_html_body_is_decoded(live_gmail):
    context = live_gmail.context()
    candidates = search_messages(context, SearchMessagesInput(query="in:anywhere", max_results=50)).messages
    for item in candidates:
        message = get_message(context, GetMessageInput(message_id=item.id, max_body_chars=2000))
        if CJK.search(message.body_text or "") or message.body_source == "text/html":
            text = message.body_text
            assert text.strip(), item.id
            assert not re.search(r"[A-Za-z0-9+/]{80,}={0,2}", text), "base64 residue in body_text"
            assert "<html" not in text.lower() and "</" not in text
            return
    pytest.skip("no message with CJK text or an HTML-only body among the newest 50")
