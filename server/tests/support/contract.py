"""The Gmail contract suite's handle on a mailbox: the real google-api-python-client stack pointed at the emulator
or at a real inbox, and a ledger of everything one test created there, so that the test can be cleaned up after
and touches nothing else.

What a run may do to a real mailbox (docs/contract-tests.md says it to the user):
- insert messages with `messages.insert` (never sent: `messages.send` and `drafts.send` are not called), From and
  To the account itself, each carrying the run's marker word in its subject;
- create labels named `gmail-mcp-contract-<run id>...`, and drafts;
- change labels, trash and untrash only those messages, and delete only those labels and drafts.
Cleanup trashes the inserted messages (`gmail.modify` cannot delete them for good; Gmail empties Trash after 30
days), deletes the drafts and the labels. A step of cleanup that fails is reported as a test error naming what
was left behind, never swallowed.
"""

from __future__ import annotations

import base64
import json
import secrets
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from email.message import EmailMessage
from typing import Any, TypeVar

from googleapiclient.errors import HttpError

T = TypeVar("T")
LABEL_PREFIX = "gmail-mcp-contract-"
# Real Gmail indexes a message for search a moment after messages.insert answers; the emulator at once. A search
# that must find a new message is asked again, a bounded number of times (counted, not timed).
SEARCH_ATTEMPTS = 15
SEARCH_PAUSE_S = 2.0


def new_run_id() -> str:
    """Ten lowercase letters: one word to Gmail's search tokenizer (no digit to split it at), unlikely in real
    mail."""
    return "".join(secrets.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(10))


def letters(number: int) -> str:
    """A number spelled in letters a-j, so a marker word stays all letters."""
    return "".join("abcdefghij"[int(digit)] for digit in str(number))


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def unb64url(data: str) -> bytes:
    return base64.urlsafe_b64decode(data + "=" * (-len(data) % 4))


def error_of(exc: HttpError) -> tuple[int, str]:
    """(HTTP status, Gmail's error message) of an API error."""
    try:
        message = json.loads(exc.content)["error"]["message"]
    except (ValueError, KeyError, TypeError):
        message = exc.content.decode("utf-8", "replace") if isinstance(exc.content, bytes) else str(exc.content)
    return exc.resp.status, message


def status_of(request: Any) -> tuple[int, bytes]:
    """Sends a prepared `HttpRequest` through its own (authorized) http and returns the bare status and body, for
    the checks that are about the status itself (204 vs 200), which `execute()` does not show."""
    response, content = request.http.request(
        request.uri, method=request.method, body=request.body, headers=request.headers
    )
    return response.status, content


def header(resource: dict[str, Any], name: str) -> str | None:
    """The first header `name` (case-insensitive) of a message resource's top-level payload."""
    for item in resource.get("payload", {}).get("headers", []):
        if item["name"].lower() == name.lower():
            return item["value"]
    return None


@dataclass
class ContractGmail:
    """One test's view of the target mailbox. `target` is "emulator" or "gmail"; `owner` is the account's address;
    `marker` is a word that only this test's messages contain, so every search can be limited to them."""

    service: Any
    target: str
    owner: str
    run_id: str
    index: int
    sleep: Callable[[float], None] = time.sleep
    messages: list[str] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    drafts: list[str] = field(default_factory=list)

    @property
    def marker(self) -> str:
        return f"gmcpc{self.run_id}x{letters(self.index)}"

    @property
    def users(self) -> Any:
        return self.service.users()

    # ---- what a test creates (and cleanup undoes) -----------------------------------------------------------

    def compose(self, subject: str, body: str = "A message the Gmail contract suite inserted.\n") -> EmailMessage:
        """A plain text message from and to the account itself, its subject carrying the test's marker."""
        message = EmailMessage()
        message["From"] = self.owner
        message["To"] = self.owner
        message["Subject"] = f"{subject} {self.marker}"
        message.set_content(f"{body}\n{self.marker}\n")
        return message

    def insert(self, raw: bytes | EmailMessage, label_ids: Iterable[str] = ("INBOX", "UNREAD")) -> dict[str, Any]:
        """messages.insert (never a send); the message is trashed at cleanup."""
        data = raw.as_bytes() if isinstance(raw, EmailMessage) else raw
        if self.marker.encode() not in data:
            raise ValueError("an inserted message must carry the test's marker word")
        body = {"raw": b64url(data), "labelIds": list(label_ids)}
        created = self.users.messages().insert(userId="me", body=body).execute()
        self.messages.append(created["id"])
        return created

    def create_label(self, suffix: str = "") -> dict[str, Any]:
        """labels.create of `gmail-mcp-contract-<run id>-<n><suffix>`; deleted at cleanup."""
        name = f"{LABEL_PREFIX}{self.run_id}-{self.index}-{len(self.labels)}{suffix}"
        body = {"name": name, "labelListVisibility": "labelShow", "messageListVisibility": "show"}
        created = self.users.labels().create(userId="me", body=body).execute()
        self.labels.append(created["id"])
        return created

    def create_draft(self, raw: bytes) -> dict[str, Any]:
        """drafts.create; the draft is deleted at cleanup (it is never sent)."""
        created = self.users.drafts().create(userId="me", body={"message": {"raw": b64url(raw)}}).execute()
        self.drafts.append(created["id"])
        return created

    # ---- reading ----------------------------------------------------------------------------------------------

    def get(self, message_id: str, **params: Any) -> dict[str, Any]:
        return self.users.messages().get(userId="me", id=message_id, **params).execute()

    def list_ids(self, **params: Any) -> set[str]:
        """Ids of every page of messages.list(**params)."""
        ids: set[str] = set()
        token = None
        while True:
            page = self.users.messages().list(userId="me", pageToken=token, maxResults=500, **params).execute()
            ids.update(item["id"] for item in page.get("messages", []))
            token = page.get("nextPageToken")
            if not token:
                return ids

    def search_until(self, predicate: Callable[[set[str]], bool], **params: Any) -> set[str]:
        """messages.list until `predicate(ids)` holds (real Gmail indexes new mail a moment late), at most
        SEARCH_ATTEMPTS times; returns the last answer either way, for the test to assert on."""
        ids = self.list_ids(**params)
        for _ in range(SEARCH_ATTEMPTS - 1):
            if predicate(ids):
                break
            self.sleep(SEARCH_PAUSE_S if self.target == "gmail" else 0)
            ids = self.list_ids(**params)
        return ids

    # ---- cleanup ----------------------------------------------------------------------------------------------

    def cleanup(self) -> None:
        """Deletes this test's drafts, trashes its messages, deletes its labels; raises naming what is left."""
        left: list[str] = []
        for draft_id in self.drafts:
            left += self._attempt(f"draft {draft_id}", self.users.drafts().delete(userId="me", id=draft_id))
        for message_id in self.messages:
            left += self._attempt(f"message {message_id}", self.users.messages().trash(userId="me", id=message_id))
        for label_id in self.labels:
            left += self._attempt(f"label {label_id}", self.users.labels().delete(userId="me", id=label_id))
        if left:
            raise AssertionError(f"contract cleanup left behind in the {self.target} mailbox: " + "; ".join(left))

    @staticmethod
    def _attempt(what: str, request: Any) -> list[str]:
        try:
            request.execute()
        except HttpError as exc:
            status, message = error_of(exc)
            if status == 404:  # the test already removed it (a draft sent nowhere, a label deleted)
                return []
            return [f"{what} ({status} {message})"]
        return []
