"""What the tools need from Gmail: the interface `gmail_client.GmailClient` implements.

Tools depend on this Protocol, not on the client, so tests can hand them an in-memory Gmail and the client can
grow endpoints without the tools importing its I/O. The registry hands the tools the client behind its caches
(`gmail/cache.py`'s `CachedGmail`), which implements the same Protocol.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from server.errors import GmailError


class GmailApi(Protocol):
    def list_messages(
        self, *, query: str, max_results: int, page_token: str | None = None, include_spam_trash: bool = False
    ) -> dict[str, Any]: ...

    def get_message(
        self, message_id: str, *, fmt: str = "full", metadata_headers: Sequence[str] | None = None
    ) -> dict[str, Any]: ...

    def get_messages_metadata(
        self, message_ids: Sequence[str], *, headers: Sequence[str], fields: str | None = None
    ) -> dict[str, dict[str, Any] | GmailError]: ...

    def get_profile(self) -> dict[str, Any]: ...

    def list_history(
        self,
        *,
        start_history_id: int,
        label_id: str | None = None,
        history_types: Sequence[str] = ...,
        max_results: int = 500,
        page_token: str | None = None,
    ) -> dict[str, Any]:
        """history.list; NotFoundError when `start_history_id` is older than the history Gmail keeps."""
        ...
