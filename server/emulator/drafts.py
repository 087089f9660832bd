"""Drafts, sending, trash and the account's settings, over the change log (so each change is in the history).

Routes (below `users/{userId}/`):

    POST   drafts                {message: {raw, threadId?}} (or the upload path)
                                 -> {id, message: {id, threadId, labelIds}}
    PUT    drafts/{id}           the same body: replaces the draft's message (a new message id, as in Gmail)
    GET    drafts/{id}?format=   {id, message: <message in that format>}
    GET    drafts?q=&maxResults=&pageToken=   {drafts: [{id, message: {id, threadId}}], resultSizeEstimate}
    DELETE drafts/{id}           204 (the draft and its message are gone)
    POST   drafts/send           {id} -> the sent message {id, threadId, labelIds: [SENT]}; the draft is gone
    POST   messages/send         {raw, threadId?} (or the upload path) -> the sent message
    POST   messages/{id}/trash | /untrash   -> {id, threadId, labelIds}
    GET    settings/sendAs       {sendAs: [{sendAsEmail, displayName, signature, isPrimary, isDefault, ...}]}
    GET    settings/sendAs/{email}  one of them (404 for an address that is not one)
    POST   labels                {name} -> the new label (409 when the name exists)
    DELETE labels/{id}           204; the label leaves every message (a system label: 400; unknown: 404)

Threading follows Gmail's rule for drafts and sends: the message joins `threadId` only when it cites a message of
that thread in In-Reply-To/References AND its subject matches once Re:/Fwd: prefixes are set aside; otherwise
it starts a conversation of its own. A sent draft keeps the draft's thread id, whatever it is.

What Gmail does to the bytes and labels, as recorded (Nango integration-templates, tests/get-draft.test.json,
send-draft.test.json, 2026; the 2024 gmail.com mocks under mocks/nango/get/proxy/gmail/v1/users/me/messages):
- a draft or a sent message gets `Date` and `Message-Id` when it has none, and a `From` that is not one of the
  account's send-as addresses is replaced by the primary address (a draft "From: test@example.com" reads back
  "From: api@nango.dev"); a From naming the primary or an accepted alias is kept as written (display name too);
- `drafts.send` answers a message in the draft's own thread (the draft had started it: threadId != id);
- mail sent to one of the account's own addresses lands in INBOX and UNREAD as well as SENT;
- a send needs at least one recipient; Bcc never travels with the message.
"""

from __future__ import annotations

import email
import re
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from email.utils import format_datetime, getaddresses, make_msgid
from typing import Any
from urllib.parse import unquote

from .errors import ApiError, invalid_argument, not_found
from .labels import Label, user_label_id
from .mailbox_changes import ChangeLog
from .mailbox_store import StoredMessage, references
from .write_api import _b64url, _Request, minimal

Params = dict[str, Sequence[str]]
_PREFIX = re.compile(r"^\s*(?:re|fwd|fw|aw|sv|wg|tr|rv|enc|antw)\s*(?:\[\d+\])?\s*:\s*", re.I)
_MESSAGE_ID = re.compile(r"<[^<>\s]+>")


def _base_subject(subject: str) -> str:
    subject = " ".join(subject.split())
    while (match := _PREFIX.match(subject)) is not None:
        subject = subject[match.end() :]
    return subject.strip().lower()


class DraftRoutes:
    """Drafts and sending over one mailbox's change log; draft ids map to their current message."""

    def __init__(self, changes: ChangeLog, render: Callable[[StoredMessage, Params, str], dict[str, Any]]) -> None:
        self.changes = changes
        self.store = changes.store
        self.render = render
        self.aliases: list[dict[str, Any]] = []  # extra send-as addresses (tests: reply-all minus aliases)
        self.primary: dict[str, Any] = {"displayName": "", "signature": ""}  # the primary entry's own settings
        self._drafts: dict[str, str] = {}  # draft id -> message id
        self._counter = 0
        routes: list[tuple[str, str, Callable[..., dict[str, Any] | None]]] = [
            ("POST", r"^drafts$", self._create),
            ("POST", r"^drafts/send$", self._send_draft),
            ("PUT", r"^drafts/([^/]+)$", self._update),
            ("GET", r"^drafts/([^/]+)$", self._get),
            ("GET", r"^drafts$", self._list),
            ("DELETE", r"^drafts/([^/]+)$", self._delete),
            ("POST", r"^messages/send$", self._send_message),
            ("POST", r"^messages/([^/]+)/trash$", self._trash),
            ("POST", r"^messages/([^/]+)/untrash$", self._untrash),
            ("GET", r"^settings/sendAs$", self._send_as),
            ("GET", r"^settings/sendAs/([^/]+)$", self._send_as_one),
            ("POST", r"^labels$", self._create_label),
            ("DELETE", r"^labels/([^/]+)$", self._delete_label),
        ]
        self._routes = [(method, re.compile(pattern), handler) for method, pattern, handler in routes]
        self._uploads = {self._create, self._update, self._send_message}

    def route(self, method: str, rest: str, upload: bool) -> Callable[..., dict[str, Any] | None] | None:
        """The handler (bound to its path groups) for this request, or None when it is not one of these routes."""
        for route_method, pattern, handler in self._routes:
            match = pattern.match(rest)
            if match is not None and route_method == method.upper() and (not upload or handler in self._uploads):
                groups = match.groups()
                return lambda request, handler=handler, groups=groups: handler(request, *groups)
        return None

    def handle(
        self, method: str, rest: str, params: Params, body: bytes, content_type: str, *, upload: bool
    ) -> dict[str, Any] | None:
        handler = self.route(method, rest, upload)
        if handler is None:
            raise not_found()
        return handler(_Request(params, body, content_type, upload))

    # ---- drafts ----------------------------------------------------------------------------------------------

    def _new_draft_id(self) -> str:
        self._counter += 1
        return f"r{(self.store.history_id * 1000 + self._counter) % 10**19:019d}"

    def _draft_message(self, request: _Request) -> tuple[bytes, str | None]:
        if request.upload:
            raw, meta = request.message()
            message = meta.get("message") if isinstance(meta.get("message"), dict) else meta
        else:
            payload = request.json()
            message = payload.get("message")
            if not isinstance(message, dict):
                raise invalid_argument("Missing draft message")
            raw = _b64url(message.get("raw"))
        thread_id = message.get("threadId") if isinstance(message, dict) else None
        if thread_id is not None and not isinstance(thread_id, str):
            raise invalid_argument("Invalid thread_id value")
        return raw, thread_id

    def _draft_resource(self, draft_id: str, stored: StoredMessage) -> dict[str, Any]:
        return {"id": draft_id, "message": minimal(stored)}

    def _create(self, request: _Request) -> dict[str, Any]:
        raw, thread_id = self._draft_message(request)
        with self.changes.lock:
            stored = self._add(self._stamped(raw), ["DRAFT"], thread_id)
            draft_id = self._new_draft_id()
            self._drafts[draft_id] = stored.id
            return self._draft_resource(draft_id, stored)

    def _update(self, request: _Request, draft_id: str) -> dict[str, Any]:
        raw, thread_id = self._draft_message(request)
        with self.changes.lock:
            old = self._draft(draft_id)
            stored = self._add(self._stamped(raw), ["DRAFT"], thread_id)
            self.changes.delete(old.id)
            self._drafts[draft_id] = stored.id
            return self._draft_resource(draft_id, stored)

    def _get(self, request: _Request, draft_id: str) -> dict[str, Any]:
        stored = self._draft(draft_id)
        fmt = request.param("format", "full").lower()
        if fmt not in ("full", "metadata", "minimal", "raw"):
            raise invalid_argument(f"Invalid value for format: {fmt}")
        return {"id": draft_id, "message": self.render(stored, request.params, fmt)}

    def _list(self, request: _Request) -> dict[str, Any]:
        from .listing import ListRequest

        by_message = {message_id: draft_id for draft_id, message_id in self._drafts.items()}
        try:
            max_results = int(request.param("maxResults", "100"))
        except ValueError:
            raise invalid_argument("Invalid value for maxResults") from None
        if max_results < 1:
            raise invalid_argument("Invalid value for maxResults")
        listing = ListRequest(
            q=request.param("q", ""),
            label_ids=("DRAFT",),
            max_results=min(max_results, 500),
            page_token=request.param("pageToken", ""),
        )
        page = self.changes.index.list(listing, now_ms=int(self.changes.now() * 1000))
        drafts = [
            {"id": by_message[item["id"]], "message": item}
            for item in page.get("messages", [])  # type: ignore[union-attr]  # a list page always holds a list
            if item["id"] in by_message
        ]
        answer: dict[str, Any] = {"resultSizeEstimate": page.get("resultSizeEstimate", 0)}
        if drafts:
            answer["drafts"] = drafts
        if page.get("nextPageToken"):
            answer["nextPageToken"] = page["nextPageToken"]
        return answer

    def _delete(self, _request: _Request, draft_id: str) -> None:
        with self.changes.lock:
            stored = self._draft(draft_id)
            self.changes.delete(stored.id)
            del self._drafts[draft_id]
        return None

    def _send_draft(self, request: _Request) -> dict[str, Any]:
        payload = request.json()
        draft_id = payload.get("id")
        if not isinstance(draft_id, str) or not draft_id:
            raise invalid_argument("Missing draft id")
        with self.changes.lock:
            stored = self._draft(draft_id)
            sent = self._send(stored.raw, stored.thread_id, keep_thread=True)
            self.changes.delete(stored.id)
            del self._drafts[draft_id]
            return minimal(sent)

    def _draft(self, draft_id: str) -> StoredMessage:
        message_id = self._drafts.get(draft_id)
        stored = self.store.by_id.get(message_id) if message_id else None
        if stored is None:
            raise not_found()
        return stored

    # ---- sending ---------------------------------------------------------------------------------------------

    def _send_message(self, request: _Request) -> dict[str, Any]:
        raw, meta = request.message()
        thread_id = meta.get("threadId")
        if thread_id is not None and not isinstance(thread_id, str):
            raise invalid_argument("Invalid thread_id value")
        with self.changes.lock:
            return minimal(self._send(raw, thread_id))

    def _send(self, raw: bytes, thread_id: str | None, *, keep_thread: bool = False) -> StoredMessage:
        message = email.message_from_bytes(raw)
        recipients = {
            address.lower()
            for _, address in getaddresses(
                message.get_all("To", []) + message.get_all("Cc", []) + message.get_all("Bcc", [])
            )
            if address
        }
        if not recipients:
            raise invalid_argument("Recipient address required")
        head, separator, body = raw.partition(b"\r\n\r\n") if b"\r\n\r\n" in raw else raw.partition(b"\n\n")
        lines, in_bcc = [], False
        for line in head.splitlines():  # Bcc never travels with the message (folded lines included)
            in_bcc = line.lower().startswith(b"bcc:") or (in_bcc and line[:1] in (b" ", b"\t"))
            if not in_bcc:
                lines.append(line)
        sent_raw = self._stamped(b"\r\n".join(lines) + (separator or b"\r\n\r\n") + body)
        to_self = recipients & {address.lower() for address in self._own_addresses()}
        labels = ["SENT", "INBOX", "UNREAD"] if to_self else ["SENT"]
        return self._add(sent_raw, labels, thread_id, keep_thread=keep_thread)

    def _own_addresses(self) -> list[str]:
        return [self.store.email_address, *(str(alias.get("sendAsEmail") or "") for alias in self.aliases)]

    def _sendable(self) -> list[str]:
        """The addresses a From may name: the primary, and aliases whose verification was accepted."""
        accepted = [alias for alias in self.aliases if alias.get("verificationStatus") == "accepted"]
        return [self.store.email_address, *(str(alias.get("sendAsEmail") or "") for alias in accepted)]

    def _stamped(self, raw: bytes) -> bytes:
        """The bytes as Gmail keeps them (see the module docstring): Date and Message-Id added when missing, and
        a From that is not one of the account's send-as addresses replaced by the primary address."""
        message = email.message_from_bytes(raw)
        head, separator, body = raw.partition(b"\r\n\r\n") if b"\r\n\r\n" in raw else raw.partition(b"\n\n")
        senders = [address.lower() for _, address in getaddresses(message.get_all("From", []))]
        own = {address.lower() for address in self._sendable()}
        lines, in_from = [], False
        for line in head.splitlines():
            in_from = line.lower().startswith(b"from:") or (in_from and line[:1] in (b" ", b"\t"))
            if not (in_from and not (senders and set(senders) <= own)):
                lines.append(line)
        extra = []
        if not (senders and set(senders) <= own):
            extra.append(f"From: {self.store.email_address}".encode())
        if message.get("Date") is None:
            extra.append(
                f"Date: {format_datetime(datetime.fromtimestamp(self.changes.now(), tz=timezone.utc))}".encode()
            )
        if message.get("Message-ID") is None:
            extra.append(f"Message-Id: {make_msgid(domain='mail.gmail.com')}".encode())
        return b"\r\n".join([*extra, *lines]) + (separator or b"\r\n\r\n") + body

    def _add(self, raw: bytes, labels: list[str], thread_id: str | None, *, keep_thread: bool = False) -> StoredMessage:
        joined = thread_id if keep_thread else self._joinable(raw, thread_id)
        return self.changes.add_message(
            raw,
            label_ids=labels,
            thread_id=joined,
            system_labels=frozenset({"DRAFT", "SENT"}),
            thread_by_references=False,
        )

    def _joinable(self, raw: bytes, thread_id: str | None) -> str | None:
        """`thread_id` when Gmail would keep the message in that conversation (see the module docstring)."""
        if not thread_id:
            return None
        members = self.store.threads.get(thread_id.lower())
        if members is None:
            raise invalid_argument("Invalid thread_id value")
        message = email.message_from_bytes(raw)
        cited = set(references(message))
        own_ids = {
            found for member in members for found in _MESSAGE_ID.findall(str(member.message.get("Message-ID", "")))
        }
        subject = _base_subject(str(message.get("Subject", "")))
        if cited & own_ids and subject == _base_subject(members[0].subject):
            return thread_id.lower()
        return None

    # ---- trash, settings, labels -----------------------------------------------------------------------------

    def _trash(self, _request: _Request, message_id: str) -> dict[str, Any]:
        """Into Trash and out of INBOX; untrash takes TRASH off only, so the message comes back to All Mail
        (Nango tests/trash-message.test.json, trash-thread.test.json: a received message trashed reads
        [UNREAD, TRASH, CATEGORY_UPDATES]; untrash-thread.test.json: untrashed, it has no INBOX)."""
        return minimal(self._relabel(message_id, add=["TRASH"], remove=["INBOX"]))

    def _untrash(self, _request: _Request, message_id: str) -> dict[str, Any]:
        """Answered as format=minimal (snippet, sizeEstimate, historyId, internalDate too), where trash answers
        only {id, threadId, labelIds} (Nango tests/untrash-message.test.json, trash-message.test.json)."""
        return self.render(self._relabel(message_id, remove=["TRASH"]), {}, "minimal")

    def _relabel(self, message_id: str, *, add: Sequence[str] = (), remove: Sequence[str] = ()) -> StoredMessage:
        with self.changes.lock:
            stored = self.store.by_id.get(message_id.lower())
            if stored is None:
                raise not_found()
            if ("TRASH" in add and "TRASH" in stored.label_ids) or (
                "TRASH" in remove and "TRASH" not in stored.label_ids
            ):
                return stored  # already where it should be: Gmail answers the message unchanged
            return self.changes.modify(message_id, add=add, remove=remove)

    def _send_as(self, _request: _Request) -> dict[str, Any]:
        """The primary entry carries no verificationStatus: Google's SendAs reference says the field "only
        applies to custom 'from' aliases"."""
        primary = {
            "sendAsEmail": self.store.email_address,
            "displayName": self.primary.get("displayName", ""),
            "replyToAddress": "",
            "signature": self.primary.get("signature", ""),
            "isPrimary": True,
            "isDefault": True,
        }
        return {"sendAs": [primary, *self.aliases]}

    def _send_as_one(self, request: _Request, address: str) -> dict[str, Any]:
        wanted = unquote(address).lower()
        for entry in self._send_as(request)["sendAs"]:
            if str(entry.get("sendAsEmail", "")).lower() == wanted:
                return dict(entry)
        raise not_found()

    def _create_label(self, request: _Request) -> dict[str, Any]:
        payload = request.json()
        name = payload.get("name")
        if not isinstance(name, str) or not name.strip() or len(name) > 225:
            raise invalid_argument("Invalid label name")
        name = name.strip()
        with self.changes.lock:
            if any(
                label.name.lower() == name.lower() or label.id.lower() == name.lower()
                for label in self.store.labels.values()
            ):
                raise ApiError(409, "alreadyExists", "Label name exists or conflicts")
            label = Label(user_label_id(name), name, "user")
            self.store.labels = {**self.store.labels, label.id: label}
        return label.resource()

    def _delete_label(self, _request: _Request, label_id: str) -> None:
        """labels.delete answers 204 with no body (Nango integration-templates tests/delete-label.test.json, 2026);
        the label is taken off the messages that had it."""
        with self.changes.lock:
            label = self.store.labels.get(label_id)
            if label is None:
                raise not_found()
            if label.type != "user":
                raise invalid_argument("Invalid delete request")
            holders = [stored.id for stored in self.store.by_id.values() if label_id in stored.label_ids]
            if holders:
                self.changes.modify_many(holders, remove=[label_id])
            self.store.labels = {key: value for key, value in self.store.labels.items() if key != label_id}
        return None


def send_as_entry(
    address: str, display_name: str = "", signature: str = "", verification: str = "accepted"
) -> dict[str, Any]:
    """A send-as alias as settings.sendAs.list shows it (`signature` is HTML, as Gmail keeps it)."""
    return {
        "sendAsEmail": address,
        "displayName": display_name,
        "replyToAddress": "",
        "signature": signature,
        "isPrimary": False,
        "isDefault": False,
        "treatAsAlias": True,
        "verificationStatus": verification,
    }
