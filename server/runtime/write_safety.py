"""Everything that keeps the write tools safe, for one account: dry run, confirmations, send limit, audit, files.

Built once per account from the settings (`WriteSafety.from_settings`); the write handlers get it through their
ToolContext. Local files can be attached only from the folder the person configured (`GMAIL_MCP_ATTACH_DIR`), by
a name relative to it: no absolute paths, no `..`, no symbolic link leading out, no hidden files, size-bounded.
"""

from __future__ import annotations

import mimetypes
import os
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePath

from server.errors import InvalidInputError
from server.runtime.audit import AuditLog
from server.runtime.cleanup_book import CleanupBook
from server.runtime.config import DEFAULT_CONFIRMATION_TTL_S, DEFAULT_SEND_LIMIT_PER_HOUR, Settings
from server.runtime.confirmations import ConfirmationBook
from server.runtime.filter_record import FilterRecord, record_path
from server.runtime.send_guard import SendGuard

MAX_LOCAL_ATTACHMENT_BYTES = 25 * 1024 * 1024


@dataclass(frozen=True)
class LocalFile:
    name: str
    mime_type: str
    data: bytes


@dataclass
class WriteSafety:
    dry_run: bool = False
    attach_dir: Path | None = None
    confirmations: ConfirmationBook = field(default_factory=ConfirmationBook)
    send_guard: SendGuard = field(default_factory=lambda: SendGuard(DEFAULT_SEND_LIMIT_PER_HOUR))
    audit: AuditLog = field(default_factory=AuditLog)
    # The opt-in toolsets this server offers (settings.write_tools): a write tool's text names only tools offered.
    write_tools: frozenset[str] = frozenset({"drafts", "send", "labels"})
    filters: FilterRecord = field(default_factory=FilterRecord)  # the Gmail filters this server created
    cleanups: CleanupBook = field(default_factory=CleanupBook)  # previewed cleanups and how far each got
    unsubscribe_allow_private: bool = False  # GMAIL_MCP_UNSUBSCRIBE_ALLOW_PRIVATE (tests only)

    @classmethod
    def from_settings(cls, settings: Settings, *, clock: Callable[[], float] = time.monotonic) -> WriteSafety:
        return cls(
            dry_run=settings.dry_run,
            attach_dir=settings.attach_dir,
            confirmations=ConfirmationBook(settings.confirmation_ttl_s or DEFAULT_CONFIRMATION_TTL_S, clock=clock),
            send_guard=SendGuard(settings.send_limit_per_hour, clock=clock),
            audit=AuditLog(settings.audit_log_path),
            write_tools=settings.write_tools,
            filters=FilterRecord(record_path(settings.token_path)),
            cleanups=CleanupBook(
                call_budget_s=settings.cleanup_call_budget_s,
                chunks_per_call=settings.cleanup_chunks_per_call,
                clock=clock,
            ),
            unsubscribe_allow_private=settings.unsubscribe_allow_private,
        )

    def read_local_attachment(self, name: str) -> LocalFile:
        """A file of the attachment folder by its relative name; InvalidInputError for anything else."""
        if self.attach_dir is None:
            raise InvalidInputError(
                "Attaching local files is off: no attachment folder is configured.",
                hint="Send the file's bytes in attach_content instead, or leave attachments out; on their own "
                "computer the person can set GMAIL_MCP_ATTACH_DIR to the folder whose files may be attached (and "
                "restart the server).",
            )
        root = self.attach_dir.resolve()
        relative = PurePath(name.replace("\\", "/"))
        if (
            not name.strip()
            or relative.is_absolute()
            or any(part in ("..", "") or part.startswith(".") for part in relative.parts)
            or ":" in name
        ):
            raise InvalidInputError(
                f"{name[:200]!r} is not a file name inside the attachment folder.",
                hint=f"Give a name relative to {root} (no absolute paths, no '..', no hidden files).",
            )
        candidate = (root / relative).resolve()
        if root not in candidate.parents:
            raise InvalidInputError(
                f"{name[:200]!r} leads outside the attachment folder.", hint=f"Only files under {root} can be attached."
            )
        try:
            info = os.stat(candidate)
            if not stat.S_ISREG(info.st_mode):
                raise InvalidInputError(f"{name[:200]!r} is not a regular file in the attachment folder.")
            if info.st_size > MAX_LOCAL_ATTACHMENT_BYTES:
                raise InvalidInputError(f"{name[:200]!r} is larger than Gmail's 25 MB limit.")
            data = candidate.read_bytes()
        except FileNotFoundError:
            available = sorted(p.name for p in root.iterdir() if p.is_file() and not p.name.startswith("."))[:20]
            raise InvalidInputError(
                f"No file {name[:200]!r} in the attachment folder.",
                hint=f"Files there: {', '.join(available) or '(none)'}.",
            ) from None
        except OSError as exc:
            raise InvalidInputError(f"Cannot read {name[:200]!r}: {exc.strerror}.") from None
        mime_type = mimetypes.guess_type(candidate.name)[0] or "application/octet-stream"
        return LocalFile(name=candidate.name, mime_type=mime_type, data=data)
