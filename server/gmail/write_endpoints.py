"""The Gmail endpoints that change a mailbox, as methods of `gmail_client.GmailClient` (mixed in).

Two request paths, chosen per endpoint:
- `_call` (the client's one retry loop): reads, and writes that are safe to repeat: drafts.update (the same
  content again), drafts.delete, messages.modify / batchModify, trash / untrash, labels.create (a repeat
  answers "exists");
- `_call_once` (below, with `gmail/single_attempt.py`): drafts.create and drafts.send. Never repeated, by us or
  by httplib2; a failure after the request may have reached Gmail is `unknown_outcome`.

Every method named in `WRITE_METHODS` is wrapped by `gmail/cache.py`'s CachedGmail, which forgets the cached
search pages after it (whatever its outcome: an unknown one may have changed the mailbox too).
"""

from __future__ import annotations

import base64
import time
from collections.abc import Callable, Sequence
from typing import Any

from server.errors import InternalError, NotFoundError, UnknownOutcomeError
from server.gmail.single_attempt import SingleAttemptUnavailable, single_attempt_error, single_attempt_http
from server.runtime import cost
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
UNITS_LABEL_CREATE = 5
UNITS_SETTINGS = 1
UPLOAD_OVER_BYTES = 1_000_000  # larger messages go through the upload endpoint (multipart), not JSON `raw`

WRITE_METHODS = (
    "create_draft",
    "update_draft",
    "delete_draft",
    "send_draft",
    "modify_message",
    "batch_modify",
    "trash_message",
    "untrash_message",
    "create_label",
)


def empty_is_done(response: Any) -> Any:
    """An empty 204 answer (batchModify, drafts.delete) comes back as b"": success with nothing to say."""
    return {} if response in (b"", "", None) else response


def _b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode("ascii")


class WriteEndpoints:
    """Mixin: needs `_call(endpoint, make_request, units)` and `_call_once(...)` from GmailClient."""

    _call: Callable[..., dict[str, Any]]
    _settings: Any
    _quota: Any
    _sessions: Any
    _single_attempt_factory: Callable[[], Any] | None
    _map_exception: Callable[[Exception, str], Any]
    _log_request: Callable[..., None]

    def _call_once(self, endpoint: str, make_request: Callable[[Any], Any], units: int) -> dict[str, Any]:
        """Exactly one attempt on a fresh connection, never repeated (see `gmail/single_attempt.py`).

        Before the request is written (token refresh, connecting) a failure means nothing happened: the usual
        error. After it, a reset, a timeout, a connection closed without an answer or a 5xx answer mean Gmail
        may have acted: UnknownOutcomeError. A 4xx answer is Gmail refusing: mapped as usual.
        """
        from google_auth_httplib2 import AuthorizedHttp

        from server.auth import single_attempt_request

        self._quota.acquire(units)
        try:
            factory = self._single_attempt_factory
            http = factory() if factory is not None else single_attempt_http(self._settings.request_timeout_s)
        except SingleAttemptUnavailable as exc:
            raise InternalError(
                f"{endpoint} was not attempted: this httplib2 version cannot be made to try a request only once "
                f"({exc}), and a repeated send could mail twice.",
                hint="Install the httplib2 version in requirements.txt (pip install -r requirements.txt).",
            ) from None
        with self._sessions.checkout() as session:  # a valid access token, and the resource objects
            cost.record_request(units)
            authorized = AuthorizedHttp(session.credentials, http=http)
            # Its refresh-after-401 in one attempt (see Session in sessions.py; allowed in test_dependency_patches)
            authorized._request = single_attempt_request(http)
            started = time.perf_counter()
            try:
                response = empty_is_done(make_request(session).execute(http=authorized, num_retries=0))
                if not isinstance(response, dict):
                    raise UnknownOutcomeError(f"Gmail's answer to {endpoint} was not JSON; it may have been done.")
            except Exception as exc:
                error = single_attempt_error(exc, endpoint, self._map_exception)
                self._log_request(endpoint, started, error, single_attempt=True)
                log.error(
                    "single-attempt request failed",
                    extra={"endpoint": endpoint, "category": error.code, "gmail_api_status": error.status},
                )
                raise error from exc
            finally:
                close = getattr(http, "close", None)
                if callable(close):
                    close()
        self._log_request(endpoint, started, single_attempt=True)
        return response

    def _on_endpoint(self, request: Any) -> Any:
        """An upload request to the configured endpoint's own scheme: the library moves only the host of upload
        URLs to `api_endpoint` and keeps https, which a plain-http endpoint (the local emulator) cannot answer."""
        endpoint = str(self._settings.endpoint)
        if endpoint.startswith("http://") and request.uri.startswith("https://" + endpoint.removeprefix("http://")):
            request.uri = "http://" + request.uri.removeprefix("https://")
        return request

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
        return self._call_once(
            "drafts.create",
            lambda session: self._on_endpoint(session.users.drafts().create(userId="me", body=body, **extra)),
            units=UNITS_DRAFT_CREATE,
        )

    def update_draft(self, draft_id: str, raw: bytes, *, thread_id: str | None = None) -> dict[str, Any]:
        """drafts.update (the whole draft replaced; safe to repeat): the draft with its new message id."""
        body, media = self._message_body(raw, thread_id)
        body["id"] = draft_id
        extra = {"media_body": media} if media is not None else {}
        return self._call(
            "drafts.update",
            lambda session: self._on_endpoint(
                session.users.drafts().update(userId="me", id=draft_id, body=body, **extra)
            ),
            units=UNITS_DRAFT_UPDATE,
        )

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

    def send_draft(self, draft_id: str) -> dict[str, Any]:
        """drafts.send, one attempt: the sent message `{"id", "threadId", "labelIds"}`."""
        return self._call_once(
            "drafts.send",
            lambda session: session.users.drafts().send(userId="me", body={"id": draft_id}),
            units=UNITS_SEND,
        )

    # -- labels on messages ---------------------------------------------------------------------------------------

    def modify_message(self, message_id: str, *, add: Sequence[str] = (), remove: Sequence[str] = ()) -> dict[str, Any]:
        body = {"addLabelIds": list(add), "removeLabelIds": list(remove)}
        return self._call(
            "messages.modify",
            lambda session: session.messages.modify(userId="me", id=message_id, body=body),
            units=UNITS_MODIFY,
        )

    def batch_modify(self, message_ids: Sequence[str], *, add: Sequence[str] = (), remove: Sequence[str] = ()) -> None:
        """messages.batchModify for up to 1,000 ids (Gmail answers nothing)."""
        body = {"ids": list(message_ids), "addLabelIds": list(add), "removeLabelIds": list(remove)}
        self._call(
            "messages.batchModify",
            lambda session: session.messages.batchModify(userId="me", body=body),
            units=UNITS_BATCH_MODIFY,
        )

    def trash_message(self, message_id: str) -> dict[str, Any]:
        return self._call(
            "messages.trash", lambda session: session.messages.trash(userId="me", id=message_id), units=UNITS_MODIFY
        )

    def untrash_message(self, message_id: str) -> dict[str, Any]:
        return self._call(
            "messages.untrash",
            lambda session: session.messages.untrash(userId="me", id=message_id),
            units=UNITS_MODIFY,
        )

    # -- labels and settings --------------------------------------------------------------------------------------

    def create_label(self, name: str) -> dict[str, Any]:
        body = {"name": name, "labelListVisibility": "labelShow", "messageListVisibility": "show"}
        return self._call(
            "labels.create",
            lambda session: session.labels.create(userId="me", body=body),
            units=UNITS_LABEL_CREATE,
        )

    def list_send_as(self) -> list[dict[str, Any]]:
        """settings.sendAs.list: the account's own addresses (primary and aliases)."""
        answer = self._call(
            "settings.sendAs.list",
            lambda session: session.users.settings().sendAs().list(userId="me"),
            units=UNITS_SETTINGS,
        )
        entries = answer.get("sendAs")
        return [entry for entry in entries if isinstance(entry, dict)] if isinstance(entries, list) else []
