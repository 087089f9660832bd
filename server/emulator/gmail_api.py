"""The Gmail v1 REST surface, as a function of (method, path, query parameters, body) -> JSON or ApiError.

No sockets, auth or faults here (the HTTP layer does those, once for single requests and batch parts alike),
so every route is one small function over the store. Reads are here; writes (insert, import, modify,
batchModify, delete) are in `write_api.py` and go through the change log, which also keeps the history that
`history.list` reads.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import unquote

from . import fields as schemas
from .drafts import DraftRoutes
from .errors import ApiError, invalid_argument, not_found
from .fields import apply_fields
from .filters import FilterRoutes
from .history import DEFAULT_RETAINED_RECORDS, HistoryLog, parse_history_request
from .labels import SYSTEM_LABELS
from .listing import MessageIndex, parse_list_request
from .mailbox_changes import ChangeLog
from .mailbox_store import FIRST_HISTORY_ID, MailStore, StoredMessage
from .payloads import PayloadBuilder, thread_resource
from .people import PeopleRoutes
from .write_api import WriteRoutes

Params = dict[str, Sequence[str]]
Route = Callable[[list[str], Params], dict[str, Any]]
_ID = re.compile(r"^[0-9a-fA-F]{1,16}$")
_USER_PATH = re.compile(r"^(/upload)?/gmail/v1/users/([^/]+)(?:/(.*))?$")


class GmailApi:
    """Routes `/gmail/v1/users/{userId}/...` requests to handlers over one mailbox.

    `history_limit` is how many history records are retained (older start ids answer 404).
    """

    def __init__(
        self,
        store: MailStore,
        payloads: PayloadBuilder,
        index: MessageIndex | None = None,
        clock: Callable[[], float] = time.time,
        history_limit: int = DEFAULT_RETAINED_RECORDS,
    ) -> None:
        self.store = store
        self.payloads = payloads
        self.index = index or MessageIndex(store)
        self._clock = clock
        self.changes = ChangeLog(store, self.index, HistoryLog(FIRST_HISTORY_ID, limit=history_limit), clock)
        self.writes = WriteRoutes(self.changes, self._render_as)
        self.drafts = DraftRoutes(self.changes, self._render_as)
        self.filters = FilterRoutes(store)  # settings.filters
        self.people = PeopleRoutes(store)  # the People API searches (served at /v1/..., see app.py)
        # (pattern over the path below users/{userId}/, handler, response schema for fields=)
        self._routes: list[tuple[re.Pattern[str], Route, schemas.Schema]] = [
            (re.compile(r"^messages$"), self._list_messages, schemas.MESSAGE_LIST),
            (re.compile(r"^messages/([^/]+)$"), self._get_message, schemas.MESSAGE),
            (re.compile(r"^messages/([^/]+)/attachments/([^/]+)$"), self._get_attachment, schemas.ATTACHMENT),
            (re.compile(r"^threads/([^/]+)$"), self._get_thread, schemas.THREAD),
            (re.compile(r"^labels$"), self._list_labels, schemas.LABEL_LIST),
            (re.compile(r"^labels/([^/]+)$"), self._get_label, schemas.LABEL),
            (re.compile(r"^profile$"), self._profile, schemas.PROFILE),
            (re.compile(r"^history$"), self._list_history, schemas.HISTORY_LIST),
        ]

    def handle(
        self, method: str, path: str, params: Params, body: bytes = b"", content_type: str = ""
    ) -> dict[str, Any] | None:
        """Answers one API call: a JSON resource, or None for an empty 204; raises ApiError for the rest."""
        user_match = _USER_PATH.match(path)
        if user_match is None:
            raise not_found()
        upload, user, rest = bool(user_match.group(1)), unquote(user_match.group(2)), user_match.group(3) or ""
        if self.drafts.route(method, rest, upload) is not None:
            self._check_user(user)
            return self.drafts.handle(method, rest, params, body, content_type, upload=upload)
        if not upload and self.filters.handles(rest):
            self._check_user(user)
            return self.filters.handle(method, rest, body)
        if method.upper() != "GET" or upload:
            self._check_user(user)
            return self.writes.handle(method, rest, params, body, content_type, upload=upload)
        for pattern, handler, schema in self._routes:
            route_match = pattern.match(rest)
            if route_match is None:
                continue
            self._check_user(user)
            resource = handler([unquote(g) for g in route_match.groups()], params)
            return apply_fields(resource, _last(params, "fields"), schema)
        raise not_found()

    def _check_user(self, user: str) -> None:
        if user != "me" and user.lower() != self.store.email_address.lower():
            raise ApiError(403, "forbidden", f"Delegation denied for {user}")

    def _message(self, message_id: str) -> StoredMessage:
        if not _ID.match(message_id):
            raise invalid_argument("Invalid id value")
        stored = self.store.by_id.get(message_id.lower())
        if stored is None:
            raise not_found()
        return stored

    def _list_messages(self, _: list[str], params: Params) -> dict[str, Any]:
        return self.index.list(parse_list_request(params), now_ms=int(self._clock() * 1000))

    def _render(self, stored: StoredMessage, params: Params, default: str = "full") -> dict[str, Any]:
        return self.payloads.message(
            stored,
            self.index.snippets.get(stored.id, ""),  # a message deleted meanwhile still renders
            fmt=(_last(params, "format") or default).lower(),
            metadata_headers=params.get("metadataHeaders", ()),
        )

    def _render_as(self, stored: StoredMessage, params: Params, fmt: str) -> dict[str, Any]:
        return self._render(stored, {**params, "format": [fmt]})

    def _get_message(self, groups: list[str], params: Params) -> dict[str, Any]:
        return self._render(self._message(groups[0]), params)

    def _get_attachment(self, groups: list[str], _: Params) -> dict[str, Any]:
        return self.payloads.attachment(self._message(groups[0]), groups[1])

    def _get_thread(self, groups: list[str], params: Params) -> dict[str, Any]:
        thread_id = groups[0]
        if not _ID.match(thread_id):
            raise invalid_argument("Invalid id value")
        messages = self.store.threads.get(thread_id.lower())
        if messages is None:
            raise not_found()
        fmt = (_last(params, "format") or "full").lower()
        if fmt not in ("full", "metadata", "minimal"):
            raise invalid_argument(f"Invalid value for format: {fmt}")
        rendered = [self._render(stored, params) for stored in messages]
        return thread_resource(thread_id.lower(), rendered, max(m.history_id for m in messages))

    def _list_labels(self, _: list[str], __: Params) -> dict[str, Any]:
        return {"labels": [label.resource() for label in self.store.labels.values()]}

    def _get_label(self, groups: list[str], _: Params) -> dict[str, Any]:
        label = self.store.labels.get(groups[0])
        if label is None and groups[0].upper() in SYSTEM_LABELS:  # system ids are case-insensitive
            label = self.store.labels.get(groups[0].upper())
        if label is None:
            raise not_found()
        resource = label.resource()
        tagged = [m for m in self.store.messages if label.id in m.label_ids]
        unread = [m for m in tagged if "UNREAD" in m.label_ids]
        resource.update(
            messagesTotal=len(tagged),
            messagesUnread=len(unread),
            threadsTotal=len({m.thread_id for m in tagged}),
            threadsUnread=len({m.thread_id for m in unread}),
        )
        return resource

    def _list_history(self, _: list[str], params: Params) -> dict[str, Any]:
        request = parse_history_request(params)
        with self.changes.lock:  # the records and the mailbox's current id, from the same moment
            return self.changes.history.list(request, current=self.store.history_id)

    def _profile(self, _: list[str], __: Params) -> dict[str, Any]:
        return {
            "emailAddress": self.store.email_address,
            "messagesTotal": len(self.store.messages),
            "threadsTotal": len(self.store.threads),
            "historyId": str(self.store.history_id),
        }


def _last(params: Params, name: str) -> str:
    values = params.get(name)
    return values[-1] if values else ""
