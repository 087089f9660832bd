"""Gmail API resources (Message, MessagePart, Thread, attachment bodies) built from stored messages.

The shapes follow what Gmail sends: a part tree with `partId` "" at the top and "0", "1", "0.1" below,
header values decoded as Gmail serves them in the metadata and full formats (RFC 2047 words as text, raw 8-bit
bytes read as Latin-1, folding removed; `header_values="raw"` keeps them as written), `body.data` as URL-safe
base64 with
the transfer encoding already undone, attachments as `attachmentId` + `size` without data, multipart
containers with `body: {"size": 0}`, and a message/rfc822 part with one child: the inner message (its headers,
its part tree).

Text parts are converted to UTF-8 from their declared charset by default (`body_charset="utf8"`), even when
the bytes were valid UTF-8 already (iso-8859-1 read as Windows-1252), while their `Content-Type` header still
names the declared charset and `body.size` stays the original length, as recorded real Gmail does;
`"declared"` keeps the original bytes, so a client is tested against both behaviours.

Attachment ids are opaque and differ on every call, as Gmail's do: each one carries the message id, the part
id, a random nonce and a MAC under a per-process key, so forged or foreign ids are rejected.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from collections.abc import Iterable
from email.message import Message

from .errors import invalid_argument, not_found
from .mailbox_store import StoredMessage
from .mime import filename, gmail_body_text, is_attachment, leaf_bytes, raw_headers

BODY_CHARSETS = ("utf8", "declared")
HEADER_VALUES = ("decoded", "raw")
FORMATS = ("full", "metadata", "minimal", "raw")
_ATTACHMENT_PREFIX = "EMU"


def b64url(data: bytes) -> str:
    """URL-safe base64 with padding, as Gmail sends `body.data` and `raw`."""
    return base64.urlsafe_b64encode(data).decode("ascii")


class AttachmentIds:
    """Mints and checks opaque attachment ids bound to (message id, part id)."""

    def __init__(self, key: bytes | None = None) -> None:
        self._key = key or secrets.token_bytes(32)

    def mint(self, message_id: str, part_id: str) -> str:
        payload = json.dumps([message_id, part_id, secrets.token_hex(12)]).encode("utf-8")
        mac = hmac.new(self._key, payload, hashlib.sha256).digest()
        return _ATTACHMENT_PREFIX + base64.urlsafe_b64encode(mac + payload).decode("ascii").rstrip("=")

    def read(self, message_id: str, attachment_id: str) -> str:
        """The part id an attachment id names; 400 when it is not one of ours or names another message."""
        try:
            if not attachment_id.startswith(_ATTACHMENT_PREFIX):
                raise ValueError(attachment_id)
            token = attachment_id[len(_ATTACHMENT_PREFIX) :]
            blob = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
            mac, payload = blob[:32], blob[32:]
            if not hmac.compare_digest(mac, hmac.new(self._key, payload, hashlib.sha256).digest()):
                raise ValueError("bad mac")
            owner, part_id, _ = json.loads(payload)
        except (ValueError, TypeError):
            raise invalid_argument("Invalid attachment token") from None
        if owner != message_id:
            raise invalid_argument("Invalid attachment token")
        return str(part_id)


class PayloadBuilder:
    """Turns stored messages into the JSON resources messages.get, threads.get and attachments.get return."""

    def __init__(
        self, body_charset: str = "utf8", attachment_ids: AttachmentIds | None = None, header_values: str = "decoded"
    ) -> None:
        if body_charset not in BODY_CHARSETS:
            raise ValueError(f"body_charset must be one of {BODY_CHARSETS}, got {body_charset!r}")
        if header_values not in HEADER_VALUES:
            raise ValueError(f"header_values must be one of {HEADER_VALUES}, got {header_values!r}")
        self.body_charset = body_charset
        self.decoded_headers = header_values == "decoded"
        self.attachment_ids = attachment_ids or AttachmentIds()

    def message(
        self,
        stored: StoredMessage,
        snippet: str,
        fmt: str = "full",
        metadata_headers: Iterable[str] = (),
    ) -> dict[str, object]:
        """A Message resource in one of the four formats."""
        if fmt not in FORMATS:
            raise invalid_argument(f"Invalid value for format: {fmt}")
        resource: dict[str, object] = {"id": stored.id, "threadId": stored.thread_id}
        if stored.label_ids:
            resource["labelIds"] = list(stored.label_ids)
        resource["snippet"] = snippet
        if fmt == "full":
            resource["payload"] = self.part_tree(stored)
        elif fmt == "metadata":
            wanted = {name.lower() for name in metadata_headers}
            headers = [
                {"name": name, "value": value}
                for name, value in raw_headers(stored.message, decoded=self.decoded_headers)
                if not wanted or name.lower() in wanted
            ]
            resource["payload"] = {"mimeType": stored.message.get_content_type(), "headers": headers}
        resource["sizeEstimate"] = stored.size
        if fmt == "raw":
            resource["raw"] = b64url(stored.raw)
        resource["historyId"] = str(stored.history_id)
        resource["internalDate"] = str(stored.internal_date)
        return resource

    def part_tree(self, stored: StoredMessage) -> dict[str, object]:
        return self._part(stored.id, stored.message, "")

    def _part(self, message_id: str, part: Message, part_id: str) -> dict[str, object]:
        resource: dict[str, object] = {
            "partId": part_id,
            "mimeType": part.get_content_type(),
            "filename": filename(part),
            "headers": [
                {"name": name, "value": value} for name, value in raw_headers(part, decoded=self.decoded_headers)
            ],
        }
        children = _children(part)
        if children is not None:
            resource["body"] = {"size": 0}
            if part.get_content_type() == "message/rfc822":
                # Gmail shows a forwarded message as one child part holding the inner message's headers and
                # its own part tree; the rfc822 part keeps the size, and an attachmentId when it has a name.
                size = len(leaf_bytes(part))
                resource["body"] = {"size": size}
                if resource["filename"]:
                    resource["body"] = {"attachmentId": self.attachment_ids.mint(message_id, part_id), "size": size}
            resource["parts"] = [
                self._part(message_id, child, f"{part_id}.{index}" if part_id else str(index))
                for index, child in enumerate(children)
            ]
            return resource
        data = leaf_bytes(part)
        if is_attachment(part):
            resource["body"] = {"attachmentId": self.attachment_ids.mint(message_id, part_id), "size": len(data)}
            return resource
        size = len(data)  # Gmail reports the original length, not the converted text's
        if self.body_charset == "utf8" and part.get_content_maintype() == "text":
            data = gmail_body_text(data, part.get_content_charset()).encode("utf-8")
        resource["body"] = {"size": size, "data": b64url(data)} if data else {"size": 0}
        return resource

    def attachment(self, stored: StoredMessage, attachment_id: str) -> dict[str, object]:
        """attachments.get: the part's bytes (transfer encoding removed, charset untouched)."""
        part = find_part(stored.message, self.attachment_ids.read(stored.id, attachment_id))
        if part is None or (_children(part) is not None and part.get_content_type() != "message/rfc822"):
            raise not_found()
        data = leaf_bytes(part)
        return {"size": len(data), "data": b64url(data)}


def _children(part: Message) -> list[Message] | None:
    """Sub-parts of a multipart container, or the one inner message of a message/rfc822 part; None for a leaf."""
    if not part.is_multipart():
        return None
    children = [child for child in part.get_payload() if isinstance(child, Message)]
    if part.get_content_type() == "message/rfc822" and len(children) != 1:
        return None  # not a parsable inner message: served as a leaf of raw bytes
    return children


def find_part(message: Message, part_id: str) -> Message | None:
    """The part at a Gmail partId ("" = the message itself, "1.0" = first child of the second child)."""
    part = message
    for piece in part_id.split(".") if part_id else []:
        children = _children(part)
        if children is None or not piece.isdecimal() or int(piece) >= len(children):
            return None
        part = children[int(piece)]
    return part


def thread_resource(thread_id: str, messages: list[dict[str, object]], history_id: int) -> dict[str, object]:
    """A Thread resource: messages oldest first, as threads.get returns them."""
    return {"id": thread_id, "historyId": str(history_id), "messages": messages}
