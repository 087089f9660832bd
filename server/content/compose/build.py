"""An outgoing message as RFC 5322 bytes: headers, plain text, an optional HTML alternative, attachments. Pure.

The stdlib's `EmailMessage` with the SMTP policy does the encodings: display names and subjects outside ASCII
become RFC 2047 encoded words, attachment names RFC 2231 parameters, long headers are folded, lines end in CRLF.
Text parts are quoted-printable (7-bit safe, still readable in a raw view). No `Date` or `Message-ID`: Gmail
sets both when the message is saved or sent, and a stale Date on a draft sent days later would mislead.
"""

from __future__ import annotations

import email
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from email.message import EmailMessage
from email.policy import SMTP

from server.content.compose.addresses import Recipient, format_recipient
from server.content.sizes import human_size

MAX_MESSAGE_BYTES = 25 * 1024 * 1024  # Gmail refuses to send larger messages
_HEADER_UNSAFE = re.compile(r"[\r\n\x00]")


class MessageTooLargeError(ValueError):
    pass


@dataclass(frozen=True)
class Attachment:
    filename: str
    mime_type: str
    data: bytes
    content_id: str | None = None  # an inline image of the original keeps its cid so the HTML still finds it
    inline: bool = False


@dataclass(frozen=True)
class OutgoingMessage:
    to: Sequence[Recipient]
    cc: Sequence[Recipient] = ()
    bcc: Sequence[Recipient] = ()
    subject: str = ""
    text: str = ""
    html: str | None = None
    in_reply_to: str | None = None
    references: Sequence[str] = ()
    attachments: Sequence[Attachment] = field(default_factory=tuple)
    sender: Recipient | None = None  # None: Gmail uses the account's default send-as address


def clean_header_text(value: str) -> str:
    """Header text on one line: line breaks (header injection) become spaces, runs of blanks one space."""
    return " ".join(_HEADER_UNSAFE.sub(" ", value).split())


def _split_mime(mime_type: str) -> tuple[str, str]:
    main, _, sub = mime_type.lower().partition("/")
    if not main or not sub or not re.fullmatch(r"[a-z0-9!#$&^_.+-]+", main + sub):
        return "application", "octet-stream"
    return main, sub


def _attach_email(message: EmailMessage, data: bytes, filename: str) -> bool:
    try:
        inner = email.message_from_bytes(data, policy=SMTP)
        inner.as_bytes()  # a hostile inner message that cannot be written again goes as plain bytes instead
    except Exception:
        return False
    message.add_attachment(inner, disposition="attachment", filename=filename)
    return True


def build_message(spec: OutgoingMessage) -> bytes:
    """The message's bytes (CRLF line ends); raises MessageTooLargeError past Gmail's 25 MB."""
    message = EmailMessage(policy=SMTP)
    if spec.sender is not None:
        message["From"] = format_recipient(spec.sender)
    for name, recipients in (("To", spec.to), ("Cc", spec.cc), ("Bcc", spec.bcc)):
        if recipients:
            message[name] = ", ".join(format_recipient(recipient) for recipient in recipients)
    message["Subject"] = clean_header_text(spec.subject)
    if spec.in_reply_to:
        message["In-Reply-To"] = clean_header_text(spec.in_reply_to)
    if spec.references:
        message["References"] = " ".join(clean_header_text(reference) for reference in spec.references)
    text = spec.text.replace("\r\n", "\n").replace("\r", "\n")
    message.set_content(text if text.endswith("\n") else text + "\n", cte="quoted-printable")
    if spec.html is not None:
        message.add_alternative(spec.html, subtype="html", cte="quoted-printable")
    for attachment in spec.attachments:
        maintype, subtype = _split_mime(attachment.mime_type)
        filename = clean_header_text(attachment.filename) or "attachment"
        # A forwarded email stays an email (RFC 2046 forbids base64 on message/rfc822), named as it was.
        if (maintype, subtype) == ("message", "rfc822") and _attach_email(message, attachment.data, filename):
            continue
        if maintype == "message":  # other message/* types may not be base64 either: plain bytes are safe
            maintype, subtype = "application", "octet-stream"
        extra: dict[str, str] = {}
        if attachment.content_id:
            extra["cid"] = "<" + clean_header_text(attachment.content_id).strip("<>") + ">"
        message.add_attachment(
            attachment.data,
            maintype=maintype,
            subtype=subtype,
            filename=filename,
            disposition="inline" if attachment.inline else "attachment",
            **extra,
        )
    data = message.as_bytes()
    if len(data) > MAX_MESSAGE_BYTES:
        raise MessageTooLargeError(
            f"the message would be {human_size(len(data))}; Gmail sends at most 25 MB (attachments count "
            "about a third more once encoded)"
        )
    return data
