"""What `history.list` says changed, per message, and whether a change could alter a cached search. Pure.

Gmail's history records come oldest first; each may carry `messagesAdded`, `messagesDeleted`, `labelsAdded`,
`labelsRemoved` entries naming a message as `{id, threadId, labelIds}` (its labels after the change), and a
`messages` list of every message it touched. `summarize` folds the records into one `MessageChange` per message:
added, deleted, the net labels added and removed (a label removed and added back is no change), and `touched`
for a record that names the message without a typed entry (a change of a kind not asked for).

Whether a change could alter a cached search answer (`affects_search`) is decided conservatively: a message
added could match any query, so any addition means a fresh search. The rest is proved irrelevant only cheaply:

- the fields a search result shows (sender, subject, date, snippet, thread) never change for a message, so
  only membership and order matter;
- a deleted message that was not in the answer cannot change a first page (it was not among the newest
  matches); on a later page (`paged`), deletions before it shift it, so any deletion counts;
- a label change can change membership only for a query that mentions labels (`is:`, `in:`, `label:`,
  `category:`, `has:` other than content) or when it moves a message into or out of SPAM or TRASH, which every
  search leaves out by default;
- a history that has more pages than were read counts as a change (what is unread may be relevant).

A query with a relative date (`newer_than:`, `older_than:`) also changes with the clock alone, which no history
shows; `is_time_relative` lets the cache keep such answers only briefly.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

HIDDEN_LABELS = frozenset({"SPAM", "TRASH"})
# `has:` values that describe content, not labels: anything else after `has:` (stars, userlabels) is a label.
_CONTENT_HAS = frozenset({"attachment", "drive", "document", "spreadsheet", "presentation", "youtube", "pdf"})
_OPERATOR = re.compile(r"(?i)(?<![\w.@])(is|in|label|l|category|has)\s*:\s*\(?\s*\"?([^\s\")}]*)")
_RELATIVE_DATE = re.compile(r"(?i)(?<![\w.@])(newer_than|older_than)\s*:")
_SHOWS_HIDDEN = re.compile(r"(?i)(?<![\w.@])(in|label|l)\s*:\s*\"?(spam|trash|anywhere)\b")


@dataclass
class MessageChange:
    """Everything that happened to one message over the records read."""

    id: str
    thread_id: str
    label_ids: tuple[str, ...] = ()  # after its last change (as of the newest record naming it with labels)
    added: bool = False
    deleted: bool = False
    touched: bool = False  # named by a record without a typed entry
    labels_added: list[str] = field(default_factory=list)  # net, in order of first change
    labels_removed: list[str] = field(default_factory=list)
    last_record: int = 0

    @property
    def relabeled(self) -> bool:
        return bool(self.labels_added or self.labels_removed)


@dataclass(frozen=True)
class HistoryDelta:
    """The records after `start`, folded per message (oldest change first), and where the mailbox stands."""

    start: int
    history_id: int  # the mailbox's current id, from the last page read
    changes: dict[str, MessageChange]
    records: int
    last_record_id: int | None  # the newest record read (never more than what was seen)
    complete: bool  # every page was read


def summarize(start: int, pages: Iterable[dict[str, Any]], *, complete: bool = True) -> HistoryDelta:
    changes: dict[str, MessageChange] = {}
    history_id, records, last = start, 0, None
    for page in pages:
        history_id = max(history_id, _int(page.get("historyId"), history_id))
        for record in page.get("history") or []:
            records += 1
            record_id = _int(record.get("id"), 0)
            last = record_id if last is None else max(last, record_id)
            typed = _apply_record(record, record_id, changes)
            for message in record.get("messages") or []:
                if isinstance(message, dict) and message.get("id") and message["id"] not in typed:
                    _change_for(changes, message, record_id).touched = True
    return HistoryDelta(start, history_id, changes, records, last, complete)


def _apply_record(record: dict[str, Any], record_id: int, changes: dict[str, MessageChange]) -> set[str]:
    """Folds one record's typed entries in; returns the ids they named."""
    named: set[str] = set()
    for kind in ("messagesAdded", "messagesDeleted", "labelsAdded", "labelsRemoved"):
        for entry in record.get(kind) or []:
            message = entry.get("message") if isinstance(entry, dict) else None
            if not isinstance(message, dict) or not message.get("id"):
                continue
            change = _change_for(changes, message, record_id)
            named.add(change.id)
            if kind == "messagesAdded":
                change.added = True
            elif kind == "messagesDeleted":
                change.deleted = True
            else:
                gained, lost = (
                    (change.labels_added, change.labels_removed)
                    if kind == "labelsAdded"
                    else (change.labels_removed, change.labels_added)
                )
                for label in entry.get("labelIds") or []:
                    if label in lost:
                        lost.remove(label)  # undone within the window: no net change
                    elif label not in gained:
                        gained.append(label)
    return named


def _change_for(changes: dict[str, MessageChange], message: dict[str, Any], record_id: int) -> MessageChange:
    change = changes.get(message["id"])
    if change is None:
        change = changes[message["id"]] = MessageChange(message["id"], str(message.get("threadId") or message["id"]))
    if "labelIds" in message:
        change.label_ids = tuple(str(label) for label in message.get("labelIds") or ())
    change.last_record = max(change.last_record, record_id)
    return change


def _int(value: Any, default: int) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


# -- cached searches ------------------------------------------------------------------------------------------


def depends_on_labels(query: str) -> bool:
    """True when a query's matches can change with labels (read state, inbox, stars, user labels, categories)."""
    for match in _OPERATOR.finditer(query):
        if match.group(1).lower() != "has" or match.group(2).lower() not in _CONTENT_HAS:
            return True
    return False


def is_time_relative(query: str) -> bool:
    """True for `newer_than:` / `older_than:`: the matches change as time passes, with no history record."""
    return bool(_RELATIVE_DATE.search(query))


def shows_hidden(query: str, include_spam_trash: bool = False) -> bool:
    return include_spam_trash or bool(_SHOWS_HIDDEN.search(query))


def affects_search(
    delta: HistoryDelta, *, query: str, result_ids: frozenset[str], paged: bool, include_spam_trash: bool = False
) -> bool:
    """Could the changes in `delta` alter the answer of `query` (whose results were `result_ids`)? When unsure,
    yes."""
    if not delta.complete:
        return True
    label_dependent = depends_on_labels(query)
    for change in delta.changes.values():
        if change.added:
            return True
        if change.deleted:
            if paged or change.id in result_ids:
                return True
            continue
        if change.relabeled:
            moved_hidden = HIDDEN_LABELS.intersection(change.labels_added + change.labels_removed)
            if label_dependent or (moved_hidden and not shows_hidden(query, include_spam_trash)):
                return True
        if change.touched and (label_dependent or change.id in result_ids):
            return True
    return False


def likely_new_matches(delta: HistoryDelta, *, query: str, limit: int, include_spam_trash: bool = False) -> list[str]:
    """Messages a fresh search may newly list (added, or relabelled under a label query), newest change first:
    worth fetching in parallel with the search itself. Deleted ones, and spam or trash the query hides, are not."""
    label_dependent = depends_on_labels(query)
    hidden_ok = shows_hidden(query, include_spam_trash)
    wanted = [
        change
        for change in delta.changes.values()
        if not change.deleted
        and (change.added or (label_dependent and change.relabeled))
        and (hidden_ok or not HIDDEN_LABELS.intersection(change.label_ids))
    ]
    wanted.sort(key=lambda change: change.last_record, reverse=True)
    return [change.id for change in wanted[:limit]]
