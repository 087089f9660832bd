"""Which Gmail filters this server created, per account: Gmail's filters carry no metadata to mark them.

A marker label used as the filter's action would need a label scope the filters group does not ask for, and would
tag every message the filter matches; a marker in the criteria would change what the filter matches. So the ids
are kept beside the account's token file (`.token.filters.json`, `tokens/<name>.filters.json`: mode 0600, ids
only, no mail content), read on every use so several server processes of one person agree. Without a path
(tests, embeddings) the record lives in memory.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

from server.runtime.observability import get_logger

log = get_logger("filters")


def record_path(token_path: Path) -> Path:
    """The record beside a token file (`work.json` -> `work.filters.json`; the dot keeps it out of the accounts)."""
    return token_path.with_name(f"{token_path.stem}.filters.json")


class FilterRecord:
    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._memory: set[str] = set()

    def ids(self) -> frozenset[str]:
        with self._lock:
            return frozenset(self._read())

    def add(self, filter_id: str) -> None:
        with self._lock:
            self._write(self._read() | {filter_id})

    def discard(self, filter_id: str) -> None:
        with self._lock:
            self._write(self._read() - {filter_id})

    def _read(self) -> set[str]:
        if self.path is None:
            return set(self._memory)
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return set()
        except (OSError, ValueError) as exc:
            log.warning("unreadable filter record", extra={"path": str(self.path), "error": type(exc).__name__})
            return set()
        created = data.get("created") if isinstance(data, dict) else None
        return {str(item) for item in created or [] if isinstance(item, str)}

    def _write(self, ids: set[str]) -> None:
        if self.path is None:
            self._memory = set(ids)
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_name(self.path.name + ".tmp")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            json.dump({"created": sorted(ids)}, handle)
        os.replace(temporary, self.path)
