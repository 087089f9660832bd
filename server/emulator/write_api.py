"""The Gmail v1 routes that change the mailbox, and the delivery of a new message as if it had arrived.

Each route parses its request the way Gmail does and hands the change to the change log (`mailbox_changes.py`):

- `messages.insert` / `messages.import`: `POST .../messages[/import]` with a JSON body `{raw, labelIds?,
  threadId?}` (raw is base64url), or through the upload path `POST /upload/gmail/v1/users/{u}/messages[/import]`
  with `uploadType=multipart` (a JSON part, then the message/rfc822 part) or `uploadType=media` (the message
  alone). Insert files the message under the time it was received, import under its Date header (both follow
  `internalDateSource`). Answers `{id, threadId, labelIds}`.
- `messages.modify`: `POST .../messages/{id}/modify {addLabelIds, removeLabelIds}` -> the message as format=minimal
  (`{id, threadId, labelIds, snippet, sizeEstimate, historyId, internalDate}`: Nango tests/modify-message.test.json).
- `messages.batchModify`: `POST .../messages/batchModify {ids, addLabelIds, removeLabelIds}` -> empty answer
  (204), also for ids that name no message: those are passed over, as Gmail does.
- `messages.delete`: `DELETE .../messages/{id}` -> 204.

`deliver(...)` is the control plane's `POST /_emulator/deliver`: a message that arrives (INBOX, UNREAD unless
told otherwise), given as RFC 822 text or as a few fields.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid
from typing import Any

from .errors import ApiError, invalid_argument
from .mailbox_changes import ChangeLog
from .mailbox_store import StoredMessage

Params = dict[str, Sequence[str]]
NO_CONTENT = None  # what a route returns for Gmail's empty 204 answer
BATCH_MODIFY_LIMIT = 1000
_BOUNDARY = re.compile(r'boundary="?([^";\s]+)"?', re.IGNORECASE)


def minimal(stored: StoredMessage) -> dict[str, Any]:
    return {"id": stored.id, "threadId": stored.thread_id, "labelIds": list(stored.label_ids)}


class WriteRoutes:
    """POST and DELETE under `users/{userId}/` (the user already checked by the caller)."""

    def __init__(
        self, changes: ChangeLog, render: Callable[[StoredMessage, Params, str], dict[str, Any]] | None = None
    ) -> None:
        self.changes = changes
        self.render = render
        routes: list[tuple[str, str, Callable[..., dict[str, Any] | None]]] = [
            ("POST", r"^messages$", self._insert),
            ("POST", r"^messages/import$", self._import),
            ("POST", r"^messages/batchModify$", self._batch_modify),
            ("POST", r"^messages/([^/]+)/modify$", self._modify),
            ("DELETE", r"^messages/([^/]+)$", self._delete),
        ]
        self._routes = [(method, re.compile(pattern), handler) for method, pattern, handler in routes]

    def handle(
        self, method: str, rest: str, params: Params, body: bytes, content_type: str, *, upload: bool
    ) -> dict[str, Any] | None:
        for route_method, pattern, handler in self._routes:
            match = pattern.match(rest)
            if match is None or route_method != method.upper():
                continue
            if upload and handler not in (self._insert, self._import):
                break
            request = _Request(params, body, content_type, upload)
            return handler(request, *match.groups())
        raise ApiError(405 if not upload else 404, "methodNotAllowed", f"{method} is not supported on {rest}")

    def _insert(self, request: _Request) -> dict[str, Any]:
        raw, meta = request.message()
        date_ms = None if request.param("internalDateSource", "receivedTime") == "receivedTime" else _header(raw)
        return minimal(self._add(raw, meta, date_ms))

    def _import(self, request: _Request) -> dict[str, Any]:
        raw, meta = request.message()
        date_ms = _header(raw) if request.param("internalDateSource", "dateHeader") == "dateHeader" else None
        return minimal(self._add(raw, meta, date_ms))

    def _add(self, raw: bytes, meta: dict[str, Any], date_ms: int | None) -> StoredMessage:
        labels = _strings(meta.get("labelIds"), "labelIds")
        thread_id = meta.get("threadId")
        if thread_id is not None and not isinstance(thread_id, str):
            raise invalid_argument("Invalid thread_id value")
        return self.changes.add_message(raw, label_ids=labels, thread_id=thread_id, internal_date_ms=date_ms)

    def _modify(self, request: _Request, message_id: str) -> dict[str, Any]:
        payload = request.json()
        stored = self.changes.modify(
            message_id,
            add=_strings(payload.get("addLabelIds"), "addLabelIds"),
            remove=_strings(payload.get("removeLabelIds"), "removeLabelIds"),
        )
        return self.render(stored, {}, "minimal") if self.render is not None else minimal(stored)

    def _batch_modify(self, request: _Request) -> dict[str, Any] | None:
        payload = request.json()
        ids = _strings(payload.get("ids"), "ids")
        if not ids:
            raise invalid_argument("ids must not be empty")
        if len(ids) > BATCH_MODIFY_LIMIT:
            raise invalid_argument(f"Too many ids: {len(ids)} (at most {BATCH_MODIFY_LIMIT})")
        self.changes.modify_many(
            ids,
            add=_strings(payload.get("addLabelIds"), "addLabelIds"),
            remove=_strings(payload.get("removeLabelIds"), "removeLabelIds"),
        )
        return NO_CONTENT

    def _delete(self, _request: _Request, message_id: str) -> dict[str, Any] | None:
        self.changes.delete(message_id)
        return NO_CONTENT

    # ---- the control plane's delivery ----------------------------------------------------------------------

    def deliver(self, payload: dict[str, Any], owner: str) -> dict[str, Any]:
        """`POST /_emulator/deliver`: `{"raw": "<RFC 822 text>"}` or `{"from", "subject", "body"?, "to"?,
        "in_reply_to"?}`, plus `labelIds` (default INBOX, UNREAD) and `threadId`. Filed as received now."""
        raw_text = payload.get("raw")
        if raw_text is not None:
            if not isinstance(raw_text, str) or not raw_text.strip():
                raise ValueError("raw must be the message's RFC 822 text")
            raw = raw_text.encode("utf-8")
        else:
            raw = compose(payload, owner, now=self.changes.now())
        labels = payload.get("labelIds", ["INBOX", "UNREAD"])
        try:
            stored = self.changes.add_message(
                raw, label_ids=_strings(labels, "labelIds"), thread_id=payload.get("threadId"), source="delivery"
            )
        except ApiError as error:
            raise ValueError(error.message) from None
        return {**minimal(stored), "historyId": str(stored.history_id)}


class _Request:
    def __init__(self, params: Params, body: bytes, content_type: str, upload: bool) -> None:
        self.params, self.body, self.content_type, self.upload = params, body, content_type, upload

    def param(self, name: str, default: str) -> str:
        values = self.params.get(name)
        return values[-1] if values else default

    def json(self) -> dict[str, Any]:
        try:
            payload = json.loads(self.body or b"{}")
        except ValueError:
            raise invalid_argument("Invalid JSON payload received.") from None
        if not isinstance(payload, dict):
            raise invalid_argument("Invalid JSON payload received.")
        return payload

    def message(self) -> tuple[bytes, dict[str, Any]]:
        """The raw message and the JSON metadata of an insert or import, whichever way it was sent."""
        if not self.upload:
            meta = self.json()
            return _b64url(meta.get("raw")), meta
        upload_type = self.param("uploadType", "")
        if upload_type == "media":
            return self.body, {}
        if upload_type != "multipart":
            raise invalid_argument(f"Invalid uploadType: {upload_type or '(none)'}")
        parts = split_related(self.content_type, self.body)
        if len(parts) != 2:
            raise invalid_argument("A multipart upload needs a JSON part and a message part")
        try:
            meta = json.loads(parts[0] or b"{}")
        except ValueError:
            raise invalid_argument("Invalid JSON payload received.") from None
        return parts[1], meta if isinstance(meta, dict) else {}


def split_related(content_type: str, body: bytes) -> list[bytes]:
    """The payloads of a multipart/related body, byte for byte (headers of each part dropped)."""
    match = _BOUNDARY.search(content_type)
    if match is None or not content_type.lower().startswith("multipart/related"):
        raise invalid_argument("Multipart uploads must be multipart/related with a boundary")
    sections = body.split(b"--" + match.group(1).encode("latin-1"))
    payloads = []
    for section in sections[1:-1]:
        section = section.removeprefix(b"\r\n").removeprefix(b"\n")
        head_end = min((i for i in (section.find(b"\r\n\r\n"), section.find(b"\n\n")) if i >= 0), default=-1)
        if head_end < 0:
            raise invalid_argument("A multipart part has no header block")
        payload = section[head_end:].removeprefix(b"\r\n\r\n").removeprefix(b"\n\n")
        payloads.append(payload.removesuffix(b"\r\n") if payload.endswith(b"\r\n") else payload.removesuffix(b"\n"))
    return payloads


def compose(fields: dict[str, Any], owner: str, *, now: float) -> bytes:
    """An RFC 822 message from a few fields, dated now."""
    sender = fields.get("from")
    if not isinstance(sender, str) or not sender.strip():
        raise ValueError('deliver needs "raw", or at least "from" (and usually "subject")')
    message = EmailMessage()
    message["From"] = sender
    message["To"] = str(fields.get("to") or owner)
    message["Subject"] = str(fields.get("subject") or "")
    message["Date"] = format_datetime(datetime.fromtimestamp(now, tz=timezone.utc))
    message["Message-ID"] = str(fields.get("message_id") or make_msgid(domain="emulator.invalid"))
    if fields.get("in_reply_to"):
        message["In-Reply-To"] = str(fields["in_reply_to"])
        message["References"] = str(fields["in_reply_to"])
    message.set_content(str(fields.get("body") or ""))
    return message.as_bytes()


def _b64url(value: Any) -> bytes:
    if not isinstance(value, str) or not value:
        raise invalid_argument("Missing or empty message raw")
    try:
        return base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
    except (binascii.Error, ValueError):
        raise invalid_argument("Invalid value for raw: not base64url") from None


def _header(raw: bytes) -> int | None:
    return ChangeLog.header_date_ms(raw)


def _strings(value: Any, name: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise invalid_argument(f"Invalid value for {name}: expected a list of strings")
    return value
