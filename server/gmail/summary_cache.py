"""The message summary store `cache.CachedGmail` keeps: an LRU bounded by entries and bytes (split out of
`cache.py`, which holds the Gmail-facing logic, to keep modules small)."""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

SUMMARY_ENTRIES = 5_000
SUMMARY_BYTES = 8 * 1024 * 1024


class SummaryCache:
    """Message summaries by (message id, headers, fields); LRU, bounded by entries and bytes. Thread-safe."""

    def __init__(self, max_entries: int = SUMMARY_ENTRIES, max_bytes: int = SUMMARY_BYTES) -> None:
        self.max_entries, self.max_bytes = max_entries, max_bytes
        self._entries: OrderedDict[tuple[str, str], tuple[dict[str, Any], int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, message_id: str, profile: str) -> dict[str, Any] | None:
        with self._lock:
            found = self._entries.get((message_id, profile))
            if found is None:
                return None
            self._entries.move_to_end((message_id, profile))
            return found[0]

    def put(self, message_id: str, profile: str, resource: dict[str, Any]) -> None:
        if self.max_entries <= 0:  # turned off: not even the size is worth measuring
            return
        size = len(json.dumps(resource, ensure_ascii=False))
        if size > self.max_bytes:
            return
        with self._lock:
            old = self._entries.pop((message_id, profile), None)
            self._bytes += size - (old[1] if old else 0)
            self._entries[(message_id, profile)] = (resource, size)
            while len(self._entries) > self.max_entries or self._bytes > self.max_bytes:
                _, (_, dropped) = self._entries.popitem(last=False)
                self._bytes -= dropped

    def forget(self, message_ids: Sequence[str]) -> None:
        doomed = set(message_ids)
        with self._lock:
            for key in [key for key in self._entries if key[0] in doomed]:
                self._bytes -= self._entries.pop(key)[1]

    def __len__(self) -> int:
        return len(self._entries)
