"""gmail_get_message through the real client stack over HttpMockSequence."""

from __future__ import annotations

import base64

import pytest
from pydantic import ValidationError

from server.errors import NotFoundError
from server.tests.support.fake_gmail import FakeGmail, gmail_error, json_response
from server.toolsets.messages.read import GetMessageInput, get_message, render_message


def b64(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


HEADERS = [
    {"name": "From", "value": "=?UTF-8?B?5byg5LiJ?= <zhang@example.com>"},
    {"name": "To", "value": "Alex Chen <alex.chen@example.com>"},
    {"name": "Cc", "value": "bob@example.com"},
    {"name": "Subject", "value": "Quarterly numbers"},
    {"name": "Date", "value": "Mon, 2 Nov 2026 08:00:00 +0800"},
]


def full_resource(body_text: str, html: str | None = None) -> dict:
    parts = [
        {
            "partId": "0",
            "mimeType": "text/plain",
            "filename": "",
            "headers": [],
            "body": {"size": len(body_text), "data": b64(body_text)},
        }
    ]
    if html is not None:
        parts.append(
            {
                "partId": "1",
                "mimeType": "text/html",
                "filename": "",
                "headers": [],
                "body": {"size": len(html), "data": b64(html)},
            }
        )
    return {
        "id": "18c0ffee00000001",
        "threadId": "18c0ffee00000000",
        "labelIds": ["INBOX", "UNREAD"],
        "snippet": "Numbers &amp; more",
        "internalDate": "1793577600000",
        "sizeEstimate": 2048,
        "payload": {
            "partId": "",
            "mimeType": "multipart/mixed",
            "filename": "",
            "headers": HEADERS,
            "body": {"size": 0},
            "parts": [
                {
                    "partId": "0",
                    "mimeType": "multipart/alternative",
                    "filename": "",
                    "headers": [],
                    "body": {"size": 0},
                    "parts": parts,
                },
                {
                    "partId": "1",
                    "mimeType": "application/pdf",
                    "filename": "q3.pdf",
                    "headers": [{"name": "Content-Disposition", "value": 'attachment; filename="q3.pdf"'}],
                    "body": {"size": 12345, "attachmentId": "ANGjdJ-att-1"},
                },
            ],
        },
    }


def fetch(fake: FakeGmail, **arguments):
    return get_message(fake.context(), GetMessageInput(**arguments))


def test_full_format_returns_headers_body_and_attachments():
    fake = FakeGmail([json_response(full_resource("Revenue is up 12%.\n\nThanks,\nZhang"))])
    result = fetch(fake, message_id="18c0ffee00000001")
    assert fake.query_params(0)["format"] == ["full"]
    assert result.headers.from_ == "张三 <zhang@example.com>"
    assert (result.headers.to, result.headers.cc) == ("Alex Chen <alex.chen@example.com>", "bob@example.com")
    assert result.headers.subject == "Quarterly numbers" and result.date_iso == "2026-11-02T08:00:00+08:00"
    assert result.body_text.startswith("Revenue is up 12%.") and result.truncated is False
    assert result.label_ids == ["INBOX", "UNREAD"] and result.snippet == "Numbers & more"
    # Addressed by part id: Gmail's attachmentId changes on every fetch, so it is not worth the model's tokens.
    assert [(a.filename, a.mime_type, a.size, a.part_id) for a in result.attachments] == [
        ("q3.pdf", "application/pdf", 12345, "1")
    ]
    assert "attachment_id" not in result.model_dump() and "part 1" in render_message(result)
    assert result.body_html is None  # HTML source only on request


def test_metadata_format_has_no_body_and_asks_only_for_needed_headers():
    resource = full_resource("unused")
    resource["payload"] = {"headers": HEADERS}
    fake = FakeGmail([json_response(resource)])
    result = fetch(fake, message_id="18c0ffee00000001", format="metadata")
    params = fake.query_params(0)
    assert params["format"] == ["metadata"] and "From" in params["metadataHeaders"]
    assert result.body_text is None and result.headers.subject == "Quarterly numbers"
    # Metadata cannot tell whether there are attachments: the field is absent, never an empty list read as "none".
    assert result.attachments is None and "attachments" not in result.model_dump(exclude_none=True)
    assert "Snippet: Numbers & more" in render_message(result) and "Attachments" not in render_message(result)


def test_html_only_mail_is_returned_as_text_and_html_on_request():
    html = "<html><body><h1>Sale</h1><p>Everything &amp; more</p><script>x()</script></body></html>"
    resource = full_resource("ignored")
    resource["payload"] = {
        "partId": "",
        "mimeType": "text/html",
        "headers": HEADERS,
        "body": {"size": len(html), "data": b64(html)},
    }
    fake = FakeGmail([json_response(resource)])
    result = fetch(fake, message_id="18c0ffee00000001", include_html=True)
    assert "Sale" in result.body_text and "Everything & more" in result.body_text
    assert "<" not in result.body_text and "x()" not in result.body_text
    assert result.body_html == html


def test_long_bodies_are_cut_and_can_be_read_on_with_offset():
    text = "\n\n".join(f"Paragraph {n}: " + " ".join(["word"] * 60) for n in range(100))
    fake = FakeGmail([json_response(full_resource(text))] * 2)
    first = fetch(fake, message_id="18c0ffee00000001", max_body_chars=5000)
    assert first.truncated and first.body_chars_total == len(text) and len(first.body_text) <= 5000
    second = fetch(fake, message_id="18c0ffee00000001", max_body_chars=200_000, offset=first.next_offset)
    assert first.body_text + second.body_text == text and second.truncated is False
    assert f"offset={first.next_offset}" in render_message(first)


@pytest.mark.parametrize(
    "answer",
    [
        gmail_error(404, "notFound", "Requested entity was not found."),
        gmail_error(400, "invalidArgument", "Invalid id value"),
    ],
)
def test_unknown_or_malformed_ids_are_not_found_with_a_hint(answer):
    fake = FakeGmail([answer])
    with pytest.raises(NotFoundError) as caught:
        fetch(fake, message_id="nonexistent_12345")
    assert caught.value.code == "not_found"
    assert "take it from gmail_search_messages" in caught.value.hint
    assert fake.sleeps == []  # not retried


@pytest.mark.parametrize("message_id", ["", "   ", "../labels", "a b", "x" * 129, "id?format=raw"])
def test_invalid_message_ids_fail_validation(message_id):
    with pytest.raises(ValidationError):
        GetMessageInput(message_id=message_id)


def test_format_must_be_full_or_metadata():
    with pytest.raises(ValidationError):
        GetMessageInput(message_id="18c0ffee00000001", format="raw")
