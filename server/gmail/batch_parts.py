"""What the client's batches are made of: a part per id, a list page riding along, and how failed parts rank.

Pure data and functions (no I/O): `gmail_client.py` sends the batches.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

from server.errors import GmailError, RateLimitedError
from server.gmail.sessions import Session


@dataclass(frozen=True)
class ListAlongside:
    """A small messages.list page sent as one more part of a metadata batch (no extra round trip); `deliver`
    receives its answer if it succeeded (the caches use it to look ahead of a search page)."""

    query: str
    page_token: str
    max_results: int
    deliver: Callable[[dict[str, Any]], None]
    include_spam_trash: bool = False
    label_ids: tuple[str, ...] = ()

    def request(self, session: Session) -> Any:
        params = list_params(self.query, self.max_results, self.page_token, self.include_spam_trash, self.label_ids)
        return session.messages.list(**params, fields="messages(id,threadId)")


def list_params(
    query: str, max_results: int, page_token: str | None, include_spam_trash: bool, label_ids: Sequence[str]
) -> dict[str, Any]:
    """messages.list's parameters; `labelIds` (all must match) needs no escaping, unlike a `label:` term."""
    params: dict[str, Any] = {"userId": "me", "q": query, "maxResults": max_results}
    params["includeSpamTrash"] = include_spam_trash
    if page_token:
        params["pageToken"] = page_token
    if label_ids:
        params["labelIds"] = list(label_ids)
    return params


ALONGSIDE_ID = "list-alongside"  # not a message id: those are hex digits


@dataclass(frozen=True)
class MakePart:
    """How to build a batch's part for an id on a session. Parts of one `shape` (a hashable naming the endpoint
    and every parameter but the id) differ only in the id, so a session builds one template per shape and copies
    it for each id (`Session.requests_for`): the discovery machinery costs more CPU than sending the part."""

    shape: Hashable
    build: Callable[[Session, str], Any]


def batch_name(endpoint: str) -> str:
    """`messages.get(metadata)` -> `messages.get(batch)`: how batch requests are logged."""
    return endpoint.split("(", 1)[0] + "(batch)"


def patience(error: GmailError) -> tuple[bool, float]:
    """Orders retryable errors by how long they ask to wait: rate limits first, then the longest Retry-After."""
    return isinstance(error, RateLimitedError), error.retry_after_s or 0.0
