"""Reading a raw message back for composing: its body text and HTML, and its attachments with their bytes. Pure.

Used on two kinds of input: the original of a forward (mail from the outside world: any shape, hostile
included, so every step is bounded and total) and a draft being edited or confirmed. Parsing is the stdlib's
lenient parser; nesting deeper than `MAX_DEPTH` and attachments past `MAX_ATTACHMENTS` are left out and counted.
"""

from __future__ import annotations

import email
import email.policy
from dataclasses import dataclass, field
from email.message import Message

from server.content.compose.build import Attachment

MAX_DEPTH = 20
MAX_ATTACHMENTS = 100


@dataclass(frozen=True)
class MessageContent:
    text: str
    html: str | None
    attachments: tuple[Attachment, ...]
    headers: dict[str, str]  # first value of each header, decoded, names lower-cased
    left_out: int = 0  # attachments beyond the limits
    notes: tuple[str, ...] = field(default_factory=tuple)


def _decoded_text(part: Message) -> str:
    data = part.get_payload(decode=True)
    if not isinstance(data, bytes):
        payload = part.get_payload()
        return payload if isinstance(payload, str) else ""
    charset = part.get_content_charset() or "utf-8"
    try:
        text = data.decode(charset, "replace")
    except LookupError:  # an unknown charset name
        text = data.decode("utf-8", "replace")
    return text.replace("\r\n", "\n")


def _filename(part: Message) -> str:
    try:
        name = part.get_filename()
    except Exception:  # a malformed RFC 2231 parameter
        name = None
    return " ".join(str(name).split()) if name else ""


def _is_attachment(part: Message) -> bool:
    disposition = (part.get_content_disposition() or "").lower()
    return disposition == "attachment" or bool(_filename(part)) or part.get_content_type() == "message/rfc822"


def _attachment(part: Message) -> Attachment:
    mime_type = part.get_content_type()
    if mime_type == "message/rfc822":
        inner = part.get_payload()
        inner_message = inner[0] if isinstance(inner, list) and inner and isinstance(inner[0], Message) else None
        data = inner_message.as_bytes() if isinstance(inner_message, Message) else b""
        name = _filename(part) or _inner_subject(inner_message) + ".eml"
    else:
        payload = part.get_payload(decode=True)
        data = payload if isinstance(payload, bytes) else b""
        name = _filename(part) or "attachment"
    content_id = str(part.get("Content-ID", "")).strip() or None
    inline = (part.get_content_disposition() or "").lower() == "inline"
    return Attachment(filename=name, mime_type=mime_type, data=data, content_id=content_id, inline=inline)


def _inner_subject(message: Message | None) -> str:
    subject = str(message.get("Subject", "")) if message is not None else ""
    return " ".join(subject.split())[:80] or "forwarded message"


def read_message(raw: bytes) -> MessageContent:
    """Body text (plain, else empty), HTML (None when absent), attachments with bytes, and headers; never raises."""
    try:
        root = email.message_from_bytes(raw, policy=email.policy.default)
    except Exception:
        return MessageContent(text="", html=None, attachments=(), headers={}, notes=("message could not be parsed",))
    headers: dict[str, str] = {}
    for name, value in root.items():
        try:
            headers.setdefault(name.lower(), " ".join(str(value).split()))
        except Exception:  # a header the modern parser cannot decode: keep its raw form
            headers.setdefault(name.lower(), " ".join(str(root.get_all(name, [""])[0]).split()))
    text: str | None = None
    html: str | None = None
    attachments: list[Attachment] = []
    left_out = 0
    notes: list[str] = []
    stack: list[tuple[Message, int]] = [(root, 0)]
    while stack:
        part, depth = stack.pop()
        try:
            if part.is_multipart() and part.get_content_type() != "message/rfc822":
                if depth >= MAX_DEPTH:
                    notes.append(f"parts nested deeper than {MAX_DEPTH} levels were left out")
                    continue
                children = part.get_payload()
                listed = children if isinstance(children, list) else []
                stack.extend((child, depth + 1) for child in reversed(listed) if isinstance(child, Message))
                continue
            if part is not root and _is_attachment(part):
                if len(attachments) >= MAX_ATTACHMENTS:
                    left_out += 1
                else:
                    attachments.append(_attachment(part))
                continue
            content_type = part.get_content_type()
            if content_type == "text/plain" and text is None:
                text = _decoded_text(part)
            elif content_type == "text/html" and html is None:
                html = _decoded_text(part)
            elif part is not root and content_type not in ("text/plain", "text/html"):
                # A leaf without a name that is not the body (an inline image, a calendar part): kept.
                if len(attachments) < MAX_ATTACHMENTS:
                    attachments.append(_attachment(part))
                else:
                    left_out += 1
        except Exception:  # one broken part must not lose the rest
            notes.append("a part could not be read and was left out")
    return MessageContent(
        text=text or "",
        html=html,
        attachments=tuple(attachments),
        headers=headers,
        left_out=left_out,
        notes=tuple(dict.fromkeys(notes)),
    )
