"""What the tools need from Gmail: the interface `gmail_client.GmailClient` implements.

Tools depend on this Protocol, not on the client, so tests can hand them an in-memory Gmail and the client can
grow endpoints without the tools importing its I/O. The registry hands the tools the client behind its caches
(`gmail/cache.py`'s `CachedGmail`), which implements the same Protocol.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol

from server.errors import GmailError

if TYPE_CHECKING:  # annotations only: the tools import this module without the batch machinery
    from server.gmail.batch_parts import ListAlongside


class GmailApi(Protocol):
    def list_messages(
        self,
        *,
        query: str,
        max_results: int,
        page_token: str | None = None,
        include_spam_trash: bool = False,
        label_ids: Sequence[str] = (),
    ) -> dict[str, Any]: ...

    def get_message(
        self, message_id: str, *, fmt: str = "full", metadata_headers: Sequence[str] | None = None
    ) -> dict[str, Any]: ...

    def get_messages_metadata(
        self, message_ids: Sequence[str], *, headers: Sequence[str], fields: str | None = None
    ) -> dict[str, dict[str, Any] | GmailError]: ...

    def get_thread(
        self, thread_id: str, *, fmt: str = "full", metadata_headers: Sequence[str] | None = None
    ) -> dict[str, Any]: ...

    def get_attachment(self, message_id: str, attachment_id: str) -> dict[str, Any]: ...

    def list_labels(self) -> dict[str, Any]: ...

    def get_labels(self, label_ids: Sequence[str]) -> dict[str, dict[str, Any] | GmailError]: ...

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

    # -- writes (`gmail/write_endpoints.py`): only the opt-in write toolsets call these --------------------------

    def create_draft(self, raw: bytes, *, thread_id: str | None = None) -> dict[str, Any]: ...

    def update_draft(self, draft_id: str, raw: bytes, *, thread_id: str | None = None) -> dict[str, Any]: ...

    def get_draft(self, draft_id: str, *, fmt: str = "raw") -> dict[str, Any]: ...

    def list_drafts(
        self, *, query: str = "", max_results: int = 20, page_token: str | None = None
    ) -> dict[str, Any]: ...

    def delete_draft(self, draft_id: str) -> None: ...

    def send_draft(self, draft_id: str) -> dict[str, Any]: ...

    def modify_message(
        self, message_id: str, *, add: Sequence[str] = (), remove: Sequence[str] = ()
    ) -> dict[str, Any]: ...

    def batch_modify(
        self, message_ids: Sequence[str], *, add: Sequence[str] = (), remove: Sequence[str] = ()
    ) -> None: ...

    def trash_message(self, message_id: str) -> dict[str, Any]: ...

    def untrash_message(self, message_id: str) -> dict[str, Any]: ...

    def create_label(self, name: str) -> dict[str, Any]: ...

    def list_send_as(self) -> list[dict[str, Any]]: ...

    # -- the account beyond its mail (`gmail/account_endpoints.py`): contacts and filters -------------------------

    def search_people(
        self, source: Literal["contacts", "other_contacts", "directory"], query: str, *, page_size: int = 30
    ) -> list[dict[str, Any]]: ...

    def people_refused(self) -> frozenset[str]: ...

    def list_filters(self) -> list[dict[str, Any]]: ...

    def create_filter(self, criteria: dict[str, Any], action: dict[str, Any]) -> dict[str, Any]: ...

    def delete_filter(self, filter_id: str) -> None: ...


class CachedClient(GmailApi, Protocol):
    """What `gmail/cache.py` needs of the client below it (`gmail_client.GmailClient`): the tools' interface, the
    warm-up, and summary fetches that can carry a search's list request in the same batch."""

    def warm_up(self) -> dict[str, Any]: ...

    def get_messages_metadata(
        self,
        message_ids: Sequence[str],
        *,
        headers: Sequence[str],
        fields: str | None = None,
        alongside: ListAlongside | None = None,
    ) -> dict[str, dict[str, Any] | GmailError]: ...
