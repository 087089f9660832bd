"""The Gmail endpoints that change a mailbox, as methods of `gmail_client.GmailClient` (mixed in).

Two request paths, chosen per endpoint:
- `_call` (the one retry loop): reads, and writes that are safe to repeat: drafts.update (same content again),
  drafts.delete, messages.modify / batchModify, trash / untrash, labels.create (a repeat answers "exists");
- `_call_once` (`gmail/single_attempt.py`): drafts.create and drafts.send. Never repeated, by us or by
  httplib2; a failure after the request may have reached Gmail is `unknown_outcome`.

After each write the client's write listeners hear `(kind, ids)` (the caches of the change-feed work drop what a
write made stale); a listener that fails is logged and never fails the write.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from server.errors import NotFoundError
from server.runtime.observability import get_logger

log = get_logger("gmail.writes")

# Gmail's quota units (https://developers.google.com/gmail/api/reference/quota)
UNITS_DRAFT_CREATE = 10
UNITS_DRAFT_UPDATE = 15
UNITS_DRAFT_READ = 5
UNITS_DRAFT_DELETE = 10
UNITS_SEND = 100
UNITS_MODIFY = 5
UNITS_BATCH_MODIFY = 50
UNITS_LABELS = 1
UNITS_LABEL_CREATE = 5
UNITS_SETTINGS = 1
UPLOAD_OVER_BYTES = 1_000_000  # larger messages go through the upload endpoint (multipart), not JSON `raw`

WriteListener = Callable[[str, tuple[str, ...]], None]


def _b64url(raw: bytes) -> str:
    import base64

    return base64.urlsafe_b64encode(raw).decode("ascii")


class WriteEndpoints:
    """Mixin: needs `_call(endpoint, make_request, units)` and `_call_once(...)` from GmailClient."""

    _call: Callable[..., dict[str, Any]]
    _call_once: Callable[..., dict[str, Any]]
    _write_listeners: list[WriteListener]
    _settings: Any

    def _on_endpoint(self, request: Any) -> Any:
        """An upload request to the configured endpoint's own scheme: the library moves only the host of upload
        URLs to `api_endpoint` and keeps https, which a plain-http endpoint (the local emulator) cannot answer."""
        endpoint = str(self._settings.endpoint)
        if endpoint.startswith("http://") and request.uri.startswith("https://" + endpoint.removeprefix("http://")):
            request.uri = "http://" + request.uri.removeprefix("https://")
        return request

    def add_write_listener(self, listener: WriteListener) -> None:
        """`listener(kind, ids)` runs after every write: kind names it, ids are the message ids it touched."""
        self._write_listeners.append(listener)

    def _wrote(self, kind: str, ids: Sequence[str]) -> None:
        for listener in list(self._write_listeners):
            try:
                listener(kind, tuple(ids))
            except Exception:
                log.exception("write listener failed", extra={"kind": kind})

    @staticmethod
    def _message_body(raw: bytes, thread_id: str | None) -> tuple[dict[str, Any], Any]:
        """The request body and media of a message: `raw` in JSON when small, an upload when large."""
        message: dict[str, Any] = {"threadId": thread_id} if thread_id else {}
        if len(raw) <= UPLOAD_OVER_BYTES:
            return {"message": {**message, "raw": _b64url(raw)}}, None
        from googleapiclient.http import MediaInMemoryUpload

        return {"message": message}, MediaInMemoryUpload(raw, mimetype="message/rfc822", resumable=False)

    # -- drafts -------------------------------------------------------------------------------------------------

    def create_draft(self, raw: bytes, *, thread_id: str | None = None) -> dict[str, Any]:
        """drafts.create, one attempt: `{"id", "message": {"id", "threadId", "labelIds"}}`."""
        body, media = self._message_body(raw, thread_id)
        extra = {"media_body": media} if media is not None else {}
        draft = self._call_once(
            "drafts.create",
            lambda session: self._on_endpoint(session.users.drafts().create(userId="me", body=body, **extra)),
            units=UNITS_DRAFT_CREATE,
        )
        self._wrote("draft_created", [str((draft.get("message") or {}).get("id", ""))])
        return draft

    def update_draft(self, draft_id: str, raw: bytes, *, thread_id: str | None = None) -> dict[str, Any]:
        """drafts.update (the whole draft replaced; safe to repeat): the draft with its new message id."""
        body, media = self._message_body(raw, thread_id)
        body["id"] = draft_id
        extra = {"media_body": media} if media is not None else {}
        draft = self._call(
            "drafts.update",
            lambda session: self._on_endpoint(
                session.users.drafts().update(userId="me", id=draft_id, body=body, **extra)
            ),
            units=UNITS_DRAFT_UPDATE,
        )
        self._wrote("draft_updated", [str((draft.get("message") or {}).get("id", ""))])
        return draft

    def get_draft(self, draft_id: str, *, fmt: str = "raw") -> dict[str, Any]:
        return self._call(
            f"drafts.get({fmt})",
            lambda session: session.users.drafts().get(userId="me", id=draft_id, format=fmt),
            units=UNITS_DRAFT_READ,
        )

    def list_drafts(self, *, query: str = "", max_results: int = 20, page_token: str | None = None) -> dict[str, Any]:
        params: dict[str, Any] = {"userId": "me", "maxResults": max_results}
        if query:
            params["q"] = query
        if page_token:
            params["pageToken"] = page_token
        return self._call("drafts.list", lambda session: session.users.drafts().list(**params), units=UNITS_DRAFT_READ)

    def delete_draft(self, draft_id: str) -> None:
        """drafts.delete; a repeat that finds the draft gone (the first attempt worked) counts as done."""
        try:
            self._call(
                "drafts.delete",
                lambda session: session.users.drafts().delete(userId="me", id=draft_id),
                units=UNITS_DRAFT_DELETE,
            )
        except NotFoundError as error:
            if not error.retry_count:
                raise
        self._wrote("draft_deleted", [])

    def send_draft(self, draft_id: str) -> dict[str, Any]:
        """drafts.send, one attempt: the sent message `{"id", "threadId", "labelIds"}`."""
        sent = self._call_once(
            "drafts.send",
            lambda session: session.users.drafts().send(userId="me", body={"id": draft_id}),
            units=UNITS_SEND,
        )
        self._wrote("draft_sent", [str(sent.get("id", ""))])
        return sent

    # -- labels on messages ---------------------------------------------------------------------------------------

    def modify_message(self, message_id: str, *, add: Sequence[str] = (), remove: Sequence[str] = ()) -> dict[str, Any]:
        body = {"addLabelIds": list(add), "removeLabelIds": list(remove)}
        result = self._call(
            "messages.modify",
            lambda session: session.messages.modify(userId="me", id=message_id, body=body),
            units=UNITS_MODIFY,
        )
        self._wrote("messages_modified", [message_id])
        return result

    def batch_modify(self, message_ids: Sequence[str], *, add: Sequence[str] = (), remove: Sequence[str] = ()) -> None:
        """messages.batchModify for up to 1,000 ids (Gmail answers nothing)."""
        body = {"ids": list(message_ids), "addLabelIds": list(add), "removeLabelIds": list(remove)}
        self._call(
            "messages.batchModify",
            lambda session: session.messages.batchModify(userId="me", body=body),
            units=UNITS_BATCH_MODIFY,
        )
        self._wrote("messages_modified", list(message_ids))

    def trash_message(self, message_id: str) -> dict[str, Any]:
        result = self._call(
            "messages.trash", lambda session: session.messages.trash(userId="me", id=message_id), units=UNITS_MODIFY
        )
        self._wrote("messages_trashed", [message_id])
        return result

    def untrash_message(self, message_id: str) -> dict[str, Any]:
        result = self._call(
            "messages.untrash",
            lambda session: session.messages.untrash(userId="me", id=message_id),
            units=UNITS_MODIFY,
        )
        self._wrote("messages_untrashed", [message_id])
        return result

    # -- labels and settings --------------------------------------------------------------------------------------

    def list_labels(self) -> list[dict[str, Any]]:
        answer = self._call("labels.list", lambda session: session.users.labels().list(userId="me"), units=UNITS_LABELS)
        labels = answer.get("labels")
        return [label for label in labels if isinstance(label, dict)] if isinstance(labels, list) else []

    def create_label(self, name: str) -> dict[str, Any]:
        body = {"name": name, "labelListVisibility": "labelShow", "messageListVisibility": "show"}
        label = self._call(
            "labels.create",
            lambda session: session.users.labels().create(userId="me", body=body),
            units=UNITS_LABEL_CREATE,
        )
        self._wrote("label_created", [])
        return label

    def list_send_as(self) -> list[dict[str, Any]]:
        """settings.sendAs.list: the account's own addresses (primary and aliases)."""
        answer = self._call(
            "settings.sendAs.list",
            lambda session: session.users.settings().sendAs().list(userId="me"),
            units=UNITS_SETTINGS,
        )
        entries = answer.get("sendAs")
        return [entry for entry in entries if isinstance(entry, dict)] if isinstance(entries, list) else []
