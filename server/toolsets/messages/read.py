"""`gmail_get_message`: one message by id, as headers, readable body text in slices, and its attachment list.

One `messages.get` request (`full`, or `metadata` with the detail headers); parsing is the pure `content` layer.
Every result carries the trust envelope (`server/toolsets/envelope.py`): a `security` object, and the message's
own text fenced in the rendered answer.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any, Literal

from pydantic import Field

from server.content.message import ParsedMessage, parse_message, slice_body, strip_quoted_reply
from server.content.reply import message_id_header, references_header
from server.content.sizes import human_size
from server.content.text.snippets import clean_snippet
from server.errors import InvalidInputError
from server.tools import ToolContext, ToolSpec
from server.toolsets.common import (
    MAX_ITEM_FIELD_CHARS,
    MESSAGE_ID_PATTERN,
    UNTRUSTED_CONTENT,
    Count,
    ToolInput,
    ToolOutput,
    bounded,
    short_date,
)
from server.toolsets.envelope import SECURITY_HEADERS, Fence, Security, security_line, security_of
from server.toolsets.messages.label_filter import LabelFilter

DEFAULT_MAX_BODY_CHARS = 20_000
DETAIL_HEADERS = ("From", "To", "Cc", "Reply-To", "Subject", "Date", "Message-ID", "References", *SECURITY_HEADERS)
MAX_LISTED_ATTACHMENTS = 100  # the rest are counted in a note


class GetMessageInput(ToolInput):
    message_id: str = Field(pattern=MESSAGE_ID_PATTERN, description="An id from gmail_search_messages.")
    format: Literal["full", "metadata"] = Field(
        "full",
        description='"full": headers, body text, attachments. "metadata": headers and snippet only (small).',
    )
    max_body_chars: Count = Field(DEFAULT_MAX_BODY_CHARS, ge=200, le=200_000)
    offset: Count = Field(0, ge=0, description="Pass next_offset to read on.")
    include_html: bool = Field(False, description="Also return the HTML source (large).")
    strip_quoted: bool = Field(False, description='Drop quoted reply history ("On ... wrote:" in any language).')
    include_hidden: bool = Field(False, description="Keep hidden HTML text in body_text, marked.")


class MessageHeaders(ToolOutput):
    from_: str | None = Field(None, alias="from")
    to: str | None = None
    cc: str | None = None
    reply_to: str | None = None
    subject: str | None = None
    date: str | None = None


class AttachmentItem(ToolOutput):
    filename: str
    mime_type: str
    size: int
    part_id: str = Field(description="Pass with the message id to gmail_read_attachment to read the file.")
    inline: bool = False


class GetMessageResult(ToolOutput):
    id: str
    thread_id: str
    label_ids: list[str]
    labels: list[str] = Field(default_factory=list, description="label_ids with user labels by name.")
    snippet: str
    headers: MessageHeaders
    date_iso: str | None = None
    message_id_header: str | None = Field(None, description="The Message-ID header: a reply's In-Reply-To.")
    references: str | None = Field(None, description="The References header (the ids of earlier messages).")
    format: Literal["full", "metadata"]
    body_text: str | None = Field(None, description="Readable text of the body (HTML converted when needed).")
    body_html: str | None = None
    body_source: str | None = None
    body_chars_total: int | None = None
    offset: int | None = None
    truncated: bool = False
    next_offset: int | None = Field(None, description="Pass as offset to read the rest of a cut body.")
    attachments: list[AttachmentItem] | None = Field(
        None,
        description='format="full" only (an empty list there means none); metadata results leave it out: they '
        "cannot tell whether the message has attachments.",
    )
    notes: list[str] = Field(default_factory=list)
    security: Security


_TNEF_TYPES = frozenset({"application/ms-tnef", "application/vnd.ms-tnef"})


def _winmail_to_fetch(parsed: ParsedMessage) -> str | None:
    """The attachment id of a winmail.dat (TNEF) worth fetching: the message has no other body, and Gmail kept
    the part's bytes apart (a `full` resource never carries them)."""
    if (parsed.body_text or "").strip():
        return None
    for item in parsed.attachments:
        if item.attachment_id and (item.mime_type.lower() in _TNEF_TYPES or item.filename.lower() == "winmail.dat"):
            return item.attachment_id
    return None


def _base64url(data: object) -> bytes:
    if not isinstance(data, str):
        return b""
    try:
        return base64.urlsafe_b64decode(data + "=" * (-len(data) % 4))
    except (binascii.Error, ValueError):
        return b""


def get_message(ctx: ToolContext, args: GetMessageInput) -> GetMessageResult:
    if args.format == "metadata":
        resource = ctx.gmail.get_message(args.message_id, fmt="metadata", metadata_headers=DETAIL_HEADERS)
    else:
        resource = ctx.gmail.get_message(args.message_id, fmt="full")
    parsed = parse_message(resource, include_hidden=args.include_hidden)
    winmail = _winmail_to_fetch(parsed) if args.format == "full" else None
    if winmail is not None:  # Outlook sent only a winmail.dat: its text is the body, one more request away
        fetched = ctx.gmail.get_attachment(parsed.id or args.message_id, winmail)
        data = _base64url(fetched.get("data"))
        if data:
            parsed = parse_message(resource, attachment_bytes={winmail: data}, include_hidden=args.include_hidden)
    result: dict[str, Any] = {
        "id": parsed.id or args.message_id,
        "thread_id": parsed.thread_id,
        "label_ids": list(parsed.label_ids),
        "labels": LabelFilter(ctx.cache).names(parsed.label_ids),
        "snippet": clean_snippet(parsed.snippet, MAX_ITEM_FIELD_CHARS) or "",
        "headers": MessageHeaders(
            from_=bounded(parsed.headers.get("from")),
            to=bounded(parsed.headers.get("to")),
            cc=bounded(parsed.headers.get("cc")),
            reply_to=bounded(parsed.headers.get("reply-to")),
            subject=bounded(parsed.subject),
            date=bounded(parsed.date_raw, MAX_ITEM_FIELD_CHARS),
        ),
        "date_iso": parsed.date_iso,
        "message_id_header": bounded(message_id_header(parsed), MAX_ITEM_FIELD_CHARS),
        "references": bounded(references_header(parsed)),
        "format": args.format,
        "notes": list(parsed.notes),
        "security": security_of(parsed, (resource.get("payload") or {}).get("headers")),
    }
    if args.format == "full":
        text = parsed.body_text or ""
        if args.strip_quoted:
            text = strip_quoted_reply(text)
        if args.offset and args.offset >= len(text):
            raise InvalidInputError(
                f"offset {args.offset} is past the end of the body ({len(text)} characters).",
                hint="Use the next_offset of the previous answer, or offset 0 to start over.",
            )
        body = slice_body(text, offset=args.offset, max_chars=args.max_body_chars)
        html = parsed.body_html if args.include_html else None
        if html is not None and len(html) > args.max_body_chars:
            html = html[: args.max_body_chars]
            result["notes"].append(f"body_html cut to its first {args.max_body_chars} characters")
        result.update(
            body_text=body.text,
            body_html=html,
            body_source=parsed.body_source,
            body_chars_total=body.total_chars,
            offset=body.offset,
            truncated=body.truncated,
            next_offset=body.next_offset,
            attachments=[
                AttachmentItem(
                    filename=bounded(item.filename, MAX_ITEM_FIELD_CHARS) or "",
                    mime_type=bounded(item.mime_type, MAX_ITEM_FIELD_CHARS) or "",
                    size=item.size,
                    part_id=item.part_id,
                    inline=item.inline,
                )
                for item in parsed.attachments[:MAX_LISTED_ATTACHMENTS]
            ],
        )
        if len(parsed.attachments) > MAX_LISTED_ATTACHMENTS:
            result["notes"].append(
                f"{len(parsed.attachments)} attachments: only the first {MAX_LISTED_ATTACHMENTS} are listed"
            )
    return GetMessageResult(**result)


def render_message(result: GetMessageResult) -> str:
    """Our lines (ids, labels, security, how to read on) outside the fence; the message's own text inside it."""
    ours = [
        f"Id: {result.id} | Thread: {result.thread_id} | Labels: {', '.join(result.labels or result.label_ids) or '-'}"
    ]
    warning = security_line(result.security)
    if warning:
        ours.append(warning)
    headers = result.headers
    lines = [
        f"{name}: {value}"
        for name, value in (
            ("From", headers.from_),
            ("To", headers.to),
            ("Cc", headers.cc),
            ("Reply-To", headers.reply_to),
            ("Date", short_date(result.date_iso) if result.date_iso else headers.date),
            ("Subject", headers.subject),
        )
        if value
    ]
    if result.message_id_header:
        lines.append(f"Message-ID: {result.message_id_header}")
    if result.attachments:
        lines.append(
            "Attachments: "
            + "; ".join(
                f"{a.filename} (part {a.part_id}, {a.mime_type}, {human_size(a.size)}{', inline' if a.inline else ''})"
                for a in result.attachments
            )
        )
    lines.extend(f"Note: {note}" for note in result.notes)
    if result.format == "metadata":
        lines.append(f"Snippet: {result.snippet}")
    else:
        lines.extend(["", result.body_text or "(no text body)"])
        if result.body_html:
            lines.extend(["", "HTML source:", result.body_html])
    ours.append(Fence().wrap("\n".join(lines)))
    if result.attachments:
        ours.append("Read an attachment with gmail_read_attachment (this message id and its part).")
    if result.truncated:
        ours.append(
            f"[Body cut: characters {result.offset}-{result.next_offset} of {result.body_chars_total}. "
            f"Call again with offset={result.next_offset} to read on.]"
        )
    return "\n".join(ours)


GET_MESSAGE = ToolSpec(
    name="gmail_get_message",
    title="Read a Gmail message",
    description=(
        "Read one message by an id from gmail_search_messages: headers, readable body text, attachment list "
        "and security warnings. Read a long body on with offset=next_offset. " + UNTRUSTED_CONTENT
    ),
    input_model=GetMessageInput,
    output_model=GetMessageResult,
    run=get_message,
    render=render_message,
)
