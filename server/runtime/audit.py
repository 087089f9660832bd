"""The audit trail of every write: one JSON line per change made (or attempted, or only simulated).

Lines go to stderr with the other logs (logger `gmail_mcp.audit`) and, when `GMAIL_MCP_AUDIT_LOG` names a file,
are appended there too (created with mode 0600). A line says what was done, on which ids, to which recipients
(masked: `ex***@gmail.com`), and how it ended. Never a body, a subject or an attachment's content: the trail
must be safe to keep and to share with whoever debugs it.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from server.runtime.observability import get_logger, mask_email

log = get_logger("audit")
_ANGLE = re.compile(r"<([^<>]*)>\s*$")
MAX_IDS = 1000


def _address_only(recipient: str) -> str:
    """`Name <addr>` -> `addr`: names are personal data the trail does not need."""
    inside = _ANGLE.search(recipient)
    return inside.group(1).strip() if inside else recipient.strip()


class AuditLog:
    def __init__(self, path: Path | None = None, clock: Any = time.time) -> None:
        self.path = path
        self._clock = clock
        self._lock = threading.Lock()

    def record(
        self,
        tool: str,
        action: str,
        *,
        outcome: str,
        ids: Sequence[str] = (),
        recipients: Sequence[str] = (),
        account: str = "default",
        dry_run: bool = False,
        **details: Any,
    ) -> dict[str, Any]:
        """Writes one audit line; returns it (tests read it back). `details` must hold no message content."""
        entry: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self._clock())),
            "tool": tool,
            "action": action,
            "account": account,
            "outcome": outcome,
            "dry_run": dry_run,
        }
        if ids:
            entry["ids"] = list(ids[:MAX_IDS])
            entry["id_count"] = len(ids)
        if recipients:
            entry["recipients"] = [mask_email(_address_only(recipient)) for recipient in recipients]
        entry.update(details)
        log.info("audit", extra={"audit": entry})
        if self.path is not None:
            self._append(json.dumps(entry, ensure_ascii=False))
        return entry

    def _append(self, line: str) -> None:
        assert self.path is not None
        with self._lock:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                descriptor = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
                with os.fdopen(descriptor, "a", encoding="utf-8") as handle:
                    handle.write(line + "\n")
            except OSError as exc:
                log.error("cannot write the audit log file", extra={"path": str(self.path), "error": exc.strerror})
