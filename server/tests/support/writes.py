"""The write tools against a real emulator through the real client stack, with the clock in the test's hand.

`WriteStack` starts an emulator over the test mailbox, writes a token held to the given scopes, and builds the
tool context the server would (real GmailClient over HTTP) with a `WriteSafety` on a fake clock, so code expiry
and the hourly send limit are tested by moving time. `sends()` reads the emulator's request log: the one place
that says whether a send reached "Gmail".
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from server import scopes as gmail_scopes
from server.auth import TokenStore
from server.emulator import Emulator, start_emulator
from server.gmail_client import GmailClient
from server.protocol.dispatch import build_server
from server.runtime.audit import AuditLog
from server.runtime.config import load_settings
from server.runtime.confirmations import ConfirmationBook
from server.runtime.observability import Metrics
from server.runtime.send_guard import SendGuard
from server.runtime.write_safety import WriteSafety
from server.tests.support.emulator import build_mailbox
from server.tools import ToolContext

WRITE_GROUPS = frozenset({"drafts", "labels", "send"})
SEND_PATHS = ("/gmail/v1/users/me/drafts/send", "/gmail/v1/users/me/messages/send")


class FakeClock:
    def __init__(self, start: float = 1_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@dataclass
class ScopedSource:
    """The ready context as a ContextSource whose token holds `granted` (what AccountRegistry reads from the token
    file); everything else is the context's own (one account, no warm-up)."""

    ctx: ToolContext
    granted: frozenset[str] | None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.ctx, name)

    def granted_scopes(self, account: str | None) -> frozenset[str] | None:
        return self.granted


@dataclass
class WriteStack:
    emulator: Emulator
    ctx: ToolContext
    clock: FakeClock
    granted: frozenset[str]
    root: Path
    extra: dict[str, Any] = field(default_factory=dict)

    def server(self, enabled: frozenset[str] = WRITE_GROUPS) -> Any:
        self.ctx.safety.write_tools = enabled  # what the server offers, as from_settings gives it in production
        return build_server(ScopedSource(self.ctx, self.granted), enabled=enabled)

    def sends(self) -> list[dict[str, Any]]:
        return [e for e in self.emulator.requests() if e["method"] == "POST" and e["path"] in SEND_PATHS]

    def sent_ok(self) -> list[dict[str, Any]]:
        return [entry for entry in self.sends() if entry["status"] == 200]

    def raw_of(self, message_id: str) -> bytes:
        return self.emulator.store.by_id[message_id].raw

    def message(self, subject_contains: str) -> Any:
        return self.emulator.store.find(subject_contains)[0]


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


@contextmanager
def write_stack(
    root: Path,
    *,
    scopes: tuple[str, ...] = ("readonly", "compose", "modify"),
    dry_run: bool = False,
    send_limit: int = 10,
    ttl_s: float = 300.0,
    attach_dir: Path | None = None,
    download_dir: Path | None = None,
    timeout_s: float = 5.0,
) -> Iterator[WriteStack]:
    mailbox = build_mailbox(root / "mail")
    with start_emulator(mailbox) as emulator:
        token = emulator.write_token(root / "token.json", scopes=list(scopes))
        settings = load_settings(env={}, dotenv=False).with_overrides(
            api_endpoint=emulator.url,
            token_uri=emulator.token_uri,
            token_path=token,
            backoff_scale=0.001,
            request_timeout_s=timeout_s,
            quota_units_per_s=0.0,
        )
        clock = FakeClock()
        metrics = Metrics()
        safety = WriteSafety(
            dry_run=dry_run,
            attach_dir=attach_dir,
            confirmations=ConfirmationBook(ttl_s, clock=clock),
            send_guard=SendGuard(send_limit, clock=clock),
            audit=AuditLog(root / "audit.jsonl"),
        )
        client = GmailClient(settings, TokenStore(settings), metrics=metrics, sleep=lambda _s: None, rand=lambda: 0.0)
        ctx = ToolContext(gmail=client, enrich_top_k=10, metrics=metrics, safety=safety, download_dir=download_dir)
        granted = frozenset(gmail_scopes.BY_NAME[name] for name in scopes)
        yield WriteStack(emulator, ctx, clock, granted, root)
