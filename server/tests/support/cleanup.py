"""A write stack over a generated mailbox of newsletters (`emulator/newsletters.py`), for the cleanup and
unsubscribe tools: the real GmailClient over HTTP against the emulator, a fake clock for confirmations and the
cleanup book, a fixed day for the dated labels, and the emulator's quota meter at Gmail's per-user limit."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date
from pathlib import Path
from typing import Any

from server import scopes as gmail_scopes
from server.auth import TokenStore
from server.emulator import start_emulator
from server.emulator.newsletters import write_newsletters
from server.emulator.quota_meter import GMAIL_UNITS_PER_MINUTE
from server.gmail_client import GmailClient
from server.runtime.audit import AuditLog
from server.runtime.cleanup_book import CleanupBook
from server.runtime.config import DEFAULT_QUOTA_UNITS_PER_S, load_settings
from server.runtime.confirmations import ConfirmationBook
from server.runtime.observability import Metrics
from server.runtime.send_guard import SendGuard
from server.runtime.write_safety import WriteSafety
from server.tests.support.writes import FakeClock, WriteStack
from server.tools import ToolContext

GROUPS = frozenset({"cleanup", "unsubscribe", "drafts", "send", "labels"})
DAY = date(2026, 11, 26)


def log_of(stack: WriteStack, since: int = 0) -> list[dict[str, Any]]:
    return [entry for entry in stack.emulator.requests() if entry["seq"] > since]


def last_seq(stack: WriteStack) -> int:
    entries = stack.emulator.requests()
    return entries[-1]["seq"] if entries else 0


@contextmanager
def cleanup_stack(
    root: Path,
    *,
    newsletters: int = 0,
    extra_messages: dict[str, bytes] | None = None,
    chunks_per_call: int = 0,
    allow_private: bool = False,
    quota_units_per_s: float = DEFAULT_QUOTA_UNITS_PER_S,
) -> Iterator[WriteStack]:
    mailbox = root / "mail"
    mailbox.mkdir(parents=True, exist_ok=True)
    if newsletters:
        write_newsletters(mailbox / "newsletters.mbox", newsletters)
    for name, data in (extra_messages or {}).items():
        (mailbox / name).write_bytes(data)
    with start_emulator(mailbox, email="me@example.com") as emulator:
        emulator.app.quota.set_limit(GMAIL_UNITS_PER_MINUTE)
        token = emulator.write_token(root / "token.json", scopes=["readonly", "compose", "modify"])
        settings = load_settings(env={}, dotenv=False).with_overrides(
            api_endpoint=emulator.url,
            token_uri=emulator.token_uri,
            token_path=token,
            backoff_scale=0.001,
            request_timeout_s=10.0,
            quota_units_per_s=quota_units_per_s,
        )
        clock = FakeClock()
        metrics = Metrics()
        safety = WriteSafety(
            confirmations=ConfirmationBook(300.0, clock=clock),
            send_guard=SendGuard(10, clock=clock),
            audit=AuditLog(root / "audit.jsonl"),
            cleanups=CleanupBook(chunks_per_call=chunks_per_call, clock=clock, today=lambda: DAY),
            unsubscribe_allow_private=allow_private,
        )
        client = GmailClient(settings, TokenStore(settings), metrics=metrics, sleep=lambda _s: None, rand=lambda: 0.0)
        ctx = ToolContext(gmail=client, enrich_top_k=10, metrics=metrics, safety=safety)
        granted = frozenset(gmail_scopes.BY_NAME[name] for name in ("readonly", "compose", "modify"))
        yield WriteStack(emulator, ctx, clock, granted, root)
