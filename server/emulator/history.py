"""The mailbox's history: what `history.list` answers, kept as records that the change log appends.

Gmail's model, as the emulator keeps it: every change to the mailbox gets a history id larger than any before
it; the mailbox's `historyId` (profile, `history.list`) is the newest id, and a message's is the id of the last
change to it. `history.list(startHistoryId=S)` returns the records with an id above S, oldest first, paged, and
always the mailbox's current `historyId`, even when there are no records.

Each record here describes one change to one message (a `batchModify` of ten messages writes ten records) with
one or more typed entries: `messagesAdded`, `messagesDeleted`, `labelsAdded`, `labelsRemoved`; each entry
names the message as `{id, threadId, labelIds}` after the change. Filters, as the emulator interprets them:

- `historyTypes`: a record keeps only the entries of the requested types; one left with none is not listed.
- `labelId`: an entry is kept when its message carries the label after the change, or when the change added
  or removed that label (so "INBOX" lists what arrived in and what left the inbox).

History is retained for the last `limit` records (Gmail keeps about a week): a start id older than what is
retained answers 404, as Gmail does, and a client must fall back to a full search. `expire()` forgets it all,
for tests of that fallback. Start ids above the current id answer an empty list.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass

from .errors import ApiError, invalid_argument
from .page_tokens import PageTokens

HISTORY_TYPES = ("messageAdded", "messageDeleted", "labelAdded", "labelRemoved")
ENTRY_FIELDS = {
    "messageAdded": "messagesAdded",
    "messageDeleted": "messagesDeleted",
    "labelAdded": "labelsAdded",
    "labelRemoved": "labelsRemoved",
}
DEFAULT_RETAINED_RECORDS = 100_000
DEFAULT_PAGE_SIZE = 100
MAX_PAGE_SIZE = 500


@dataclass(frozen=True)
class Change:
    """One typed entry: the message as it is after the change, and the labels a label change added or removed."""

    kind: str  # one of HISTORY_TYPES
    message_id: str
    thread_id: str
    label_ids: tuple[str, ...]  # the message's labels after the change
    changed_labels: tuple[str, ...] = ()

    def matches_label(self, label_id: str) -> bool:
        return label_id in self.label_ids or label_id in self.changed_labels

    def resource(self) -> dict[str, object]:
        message: dict[str, object] = {"id": self.message_id, "threadId": self.thread_id}
        if self.label_ids:
            message["labelIds"] = list(self.label_ids)
        entry: dict[str, object] = {"message": message}
        if self.kind in ("labelAdded", "labelRemoved"):
            entry["labelIds"] = list(self.changed_labels)
        return entry


@dataclass(frozen=True)
class HistoryRecord:
    id: int
    changes: tuple[Change, ...]

    def resource(self, kinds: frozenset[str], label_id: str) -> dict[str, object] | None:
        """The record as history.list shows it under the filters, or None when nothing of it passes them."""
        kept = [c for c in self.changes if c.kind in kinds and (not label_id or c.matches_label(label_id))]
        if not kept:
            return None
        resource: dict[str, object] = {
            "id": str(self.id),
            "messages": list({c.message_id: {"id": c.message_id, "threadId": c.thread_id} for c in kept}.values()),
        }
        for kind in HISTORY_TYPES:
            entries = [change.resource() for change in kept if change.kind == kind]
            if entries:
                resource[ENTRY_FIELDS[kind]] = entries
        return resource


@dataclass(frozen=True)
class HistoryRequest:
    start_history_id: int
    kinds: frozenset[str]
    label_id: str = ""
    max_results: int = DEFAULT_PAGE_SIZE
    page_token: str = ""


class HistoryLog:
    """The retained records, oldest first. Not locked itself: the change log appends under its own lock, and
    readers work on the tuple they took (records are replaced, never changed in place)."""

    def __init__(self, floor: int, *, limit: int = DEFAULT_RETAINED_RECORDS, key: bytes | None = None) -> None:
        if limit < 1:
            raise ValueError("the history limit must be at least 1 record")
        self.floor = floor  # the oldest startHistoryId still answered
        self.limit = limit
        self.records: tuple[HistoryRecord, ...] = ()
        self._tokens = PageTokens(key)

    def append(self, record: HistoryRecord) -> None:
        records = (*self.records, record)
        if len(records) > self.limit:
            dropped, records = records[: len(records) - self.limit], records[len(records) - self.limit :]
            self.floor = dropped[-1].id  # changes after the newest forgotten one are still all here
        self.records = records

    def expire(self, current: int) -> None:
        """Forgets every record: any start id older than `current` now answers 404."""
        self.records = ()
        self.floor = current

    def list(self, request: HistoryRequest, *, current: int) -> dict[str, object]:
        """One page of history.list; 404 for a start id older than the retained window."""
        if request.start_history_id < self.floor:
            raise ApiError(404, "notFound", "Requested entity was not found.")
        after = request.start_history_id
        if request.page_token:
            after = max(after, self._tokens.read(request.page_token, _fingerprint(request)))
        shown: list[dict[str, object]] = []
        last_id, more = after, False
        for record in self.records:
            if record.id <= after:
                continue
            resource = record.resource(request.kinds, request.label_id)
            if resource is None:
                last_id = record.id
                continue
            if len(shown) == request.max_results:
                more = True
                break
            shown.append(resource)
            last_id = record.id
        response: dict[str, object] = {}
        if shown:
            response["history"] = shown
        if more:
            response["nextPageToken"] = self._tokens.mint(last_id, _fingerprint(request))
        response["historyId"] = str(current)
        return response


def _fingerprint(request: HistoryRequest) -> str:
    material = json.dumps([request.start_history_id, sorted(request.kinds), request.label_id])
    return hashlib.sha256(material.encode("utf-8")).hexdigest()[:16]


def parse_history_request(params: dict[str, Sequence[str]]) -> HistoryRequest:
    """Reads history.list parameters the way Gmail checks them (startHistoryId is required)."""
    start = _last(params, "startHistoryId")
    if not start:
        raise invalid_argument("Missing required parameter: startHistoryId")
    if not start.isdecimal():
        raise invalid_argument(f"Invalid value for startHistoryId: {start}")
    kinds = frozenset(params.get("historyTypes") or HISTORY_TYPES)
    unknown = kinds - set(HISTORY_TYPES)
    if unknown:
        raise invalid_argument(f"Invalid value for historyTypes: {sorted(unknown)[0]}")
    raw_max = _last(params, "maxResults")
    max_results = DEFAULT_PAGE_SIZE
    if raw_max:
        if not raw_max.isdecimal() or int(raw_max) < 1:
            raise invalid_argument(f"Invalid value for maxResults: {raw_max}")
        max_results = min(int(raw_max), MAX_PAGE_SIZE)
    return HistoryRequest(
        start_history_id=int(start),
        kinds=kinds,
        label_id=_last(params, "labelId"),
        max_results=max_results,
        page_token=_last(params, "pageToken"),
    )


def _last(params: dict[str, Sequence[str]], name: str) -> str:
    values = params.get(name)
    return values[-1] if values else ""
