"""The change log: the one place the mailbox changes, so every change is in its history.

Every mutation (a message added by insert, import or delivery; labels modified; a message deleted; and the
operations still to come, trash, drafts and send, built on these) takes the lock, changes the store and the
search index, and commits one history record per message changed through `_commit`, which gives the record the
next history id and makes it the message's and the mailbox's `historyId`. Nothing else writes to the store.

Readers never take the lock: the store and the index replace their tuples whole (see `MailStore`), so a
request that is listing or rendering meanwhile sees the mailbox before or after a change, never half of one.
"""

from __future__ import annotations

import email
import re
import threading
import time
from collections.abc import Callable, Iterable, Sequence

from .errors import invalid_argument, not_found
from .history import Change, HistoryLog, HistoryRecord
from .listing import MessageIndex
from .mailbox_store import MailStore, StoredMessage, internal_date_of, message_id_for, references

_MESSAGE_ID = re.compile(r"<[^<>\s]+>")
# Labels only Gmail itself sets: a modify may not add or remove them (drafts and sending do, later).
SYSTEM_ONLY_LABELS = frozenset({"DRAFT", "SENT", "CHAT"})


class ChangeLog:
    """Applies changes to one mailbox and records them. Thread-safe."""

    def __init__(
        self, store: MailStore, index: MessageIndex, history: HistoryLog, clock: Callable[[], float] = time.time
    ) -> None:
        self.store = store
        self.index = index
        self.history = history
        self._clock = clock
        self.lock = threading.RLock()

    # ---- messages arriving -------------------------------------------------------------------------------------

    def add_message(
        self,
        raw: bytes,
        *,
        label_ids: Sequence[str] = (),
        thread_id: str | None = None,
        internal_date_ms: int | None = None,
        source: str = "api",
        system_labels: frozenset[str] = frozenset({"SENT", "CHAT"}),
        thread_by_references: bool = True,
    ) -> StoredMessage:
        """A new message (insert, import, delivery): threaded by `thread_id` or by the messages it references.

        `internal_date_ms` None means now (Gmail's `receivedTime`); `import` passes the Date header's time.
        `system_labels`: the Gmail-only labels this path may set (drafts set DRAFT). Without `thread_by_references`
        a message given no `thread_id` starts its own thread (drafts and sends: Gmail threads those by threadId).
        """
        if not raw.strip():
            raise invalid_argument("Missing or empty message raw")
        labels = self._existing(label_ids, allowed_system_only=system_labels)
        with self.lock:
            parsed = email.message_from_bytes(raw)
            occurrence = 0
            while message_id_for(raw, occurrence) in self.store.by_id:
                occurrence += 1  # the same bytes delivered twice are two messages, as in Gmail
            stored = StoredMessage(
                id=message_id_for(raw, occurrence),
                raw=raw,
                message=parsed,
                label_ids=labels,
                internal_date=int(self._clock() * 1000) if internal_date_ms is None else internal_date_ms,
                source=source,
            )
            stored.thread_id = self._thread_for(stored, thread_id) if thread_id or thread_by_references else stored.id
            self._place(stored)
            self.index.add(stored)
            self._commit([Change("messageAdded", stored.id, stored.thread_id, stored.label_ids)])
            return stored

    def now(self) -> float:
        return self._clock()

    @staticmethod
    def header_date_ms(raw: bytes) -> int | None:
        """The Date header's time (what `import` files a message under by default), None when it has none."""
        return internal_date_of(email.message_from_bytes(raw)) or None

    # ---- labels --------------------------------------------------------------------------------------------------

    def modify(self, message_id: str, *, add: Iterable[str] = (), remove: Iterable[str] = ()) -> StoredMessage:
        """messages.modify: one record with the labels actually added and removed (none for a no-op)."""
        added, removed = self._label_change(add, remove)
        with self.lock:
            stored = self._get(message_id)
            self._relabel(stored, added, removed)
            return stored

    def modify_many(self, message_ids: Sequence[str], *, add: Iterable[str] = (), remove: Iterable[str] = ()) -> None:
        """messages.batchModify: one record per message that changed. Ids that name no message are passed over
        without a word, as Gmail does (Nango integration-templates tests/batch-modify-messages.test.json: 204
        and nothing else; a stale id does not fail the batch)."""
        added, removed = self._label_change(add, remove)
        with self.lock:
            targets = [self.store.by_id.get(message_id.lower()) for message_id in dict.fromkeys(message_ids)]
            changed = [stored for stored in targets if stored is not None and self._relabel(stored, added, removed, 0)]
            self.index.relabel_many(changed)  # one pass over the index for the whole batch

    def _relabel(self, stored: StoredMessage, add: tuple[str, ...], remove: tuple[str, ...], reindex: int = 1) -> bool:
        gained = tuple(label for label in add if label not in stored.label_ids)
        lost = tuple(label for label in remove if label in stored.label_ids)
        if not gained and not lost:
            return False
        stored.label_ids = tuple(label for label in stored.label_ids if label not in lost) + gained
        if reindex:
            self.index.relabel(stored)
        after = (stored.id, stored.thread_id, stored.label_ids)
        changes = [Change("labelAdded", *after, gained)] if gained else []
        changes += [Change("labelRemoved", *after, lost)] if lost else []
        self._commit(changes)
        return True

    def _label_change(self, add: Iterable[str], remove: Iterable[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
        added = self._existing(add, allowed_system_only=frozenset())
        removed = self._existing(remove, allowed_system_only=frozenset())
        both = set(added) & set(removed)
        if both:
            raise invalid_argument(f"Label {sorted(both)[0]} cannot be both added and removed")
        if not added and not removed:
            raise invalid_argument("No label add or removes specified")
        return added, removed

    # ---- messages leaving ----------------------------------------------------------------------------------------

    def delete(self, message_id: str) -> None:
        """messages.delete (permanent): gone from the store, the index and its thread; one messageDeleted record."""
        with self.lock:
            stored = self._get(message_id)
            self.store.messages = tuple(m for m in self.store.messages if m is not stored)
            self.store.by_id.pop(stored.id, None)
            siblings = tuple(m for m in self.store.threads.get(stored.thread_id, ()) if m is not stored)
            if siblings:
                self.store.threads[stored.thread_id] = siblings
            else:
                self.store.threads.pop(stored.thread_id, None)
            self.index.remove(stored.id)
            self._commit([Change("messageDeleted", stored.id, stored.thread_id, stored.label_ids)])

    # ---- the one commit ------------------------------------------------------------------------------------------

    def _commit(self, changes: list[Change]) -> int:
        """Records the changes of one message as the next history record; returns its id. Call under the lock."""
        record_id = self.store.history_id + 1
        self.history.append(HistoryRecord(record_id, tuple(changes)))
        for message_id in {change.message_id for change in changes}:
            stored = self.store.by_id.get(message_id)
            if stored is not None:
                stored.history_id = record_id
        self.store.history_id = record_id
        return record_id

    def expire_history(self) -> None:
        """Forgets all history: older start ids now answer 404 (a client must fall back to a full sync)."""
        with self.lock:
            self.history.expire(self.store.history_id)

    # ---- helpers -------------------------------------------------------------------------------------------------

    def _get(self, message_id: str) -> StoredMessage:
        stored = self.store.by_id.get(message_id.lower())
        if stored is None:
            raise not_found()
        return stored

    def _existing(self, label_ids: Iterable[str], *, allowed_system_only: frozenset[str]) -> tuple[str, ...]:
        found: list[str] = []
        for label_id in label_ids:
            label_id = label_id.upper() if label_id.upper() in self.store.labels else label_id
            if label_id not in self.store.labels or (
                label_id in SYSTEM_ONLY_LABELS and label_id not in allowed_system_only
            ):
                raise invalid_argument(f"Invalid label: {label_id}")
            if label_id not in found:
                found.append(label_id)
        return tuple(found)

    def _thread_for(self, stored: StoredMessage, thread_id: str | None) -> str:
        if thread_id:
            if thread_id.lower() not in self.store.threads:
                raise invalid_argument("Invalid thread_id value")
            return thread_id.lower()
        cited = set(references(stored.message))
        if cited:
            for message in self.store.messages:  # newest first: a reply joins the latest matching conversation
                if cited.intersection(_MESSAGE_ID.findall(str(message.message.get("Message-ID", "")))):
                    return message.thread_id
        return stored.id

    def _place(self, stored: StoredMessage) -> None:
        """Puts a new message into the store: newest first overall, oldest first in its thread."""

        def order(message: StoredMessage) -> tuple[int, str]:
            return message.internal_date, message.id

        self.store.messages = tuple(sorted((*self.store.messages, stored), key=order, reverse=True))
        self.store.by_id[stored.id] = stored
        self.store.threads[stored.thread_id] = tuple(
            sorted((*self.store.threads.get(stored.thread_id, ()), stored), key=order)
        )
