"""Two Google accounts for multi-account tests: a second small mailbox, and an emulator serving both.

The primary mailbox is the usual test mailbox (`support/emulator.py`, owner me@example.com); the second belongs
to WORK_OWNER and holds messages no other mailbox has, so a search answered from the wrong mailbox is visible.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from email.message import EmailMessage
from pathlib import Path

from server.emulator import Emulator, start_emulator
from server.tests.support.emulator import build_mailbox

WORK_OWNER = "ada@work.example"
WORK_SUBJECTS = ("Roadmap review", "Budget 2025", "Offsite logistics")


def build_work_mailbox(root: Path) -> Path:
    """Three messages to WORK_OWNER, each with a subject only this mailbox has."""
    root.mkdir(parents=True, exist_ok=True)
    for number, subject in enumerate(WORK_SUBJECTS, 1):
        message = EmailMessage()
        message["From"] = f"Colleague {number} <colleague{number}@work.example>"
        message["To"] = WORK_OWNER
        message["Subject"] = subject
        message["Date"] = f"Mon, 0{number} Apr 2024 09:00:00 +0000"
        message["Message-ID"] = f"<work-{number}@work.example>"
        message["X-Gmail-Labels"] = "Inbox"
        message.set_content(f"Work message {number}: {subject}.\n")
        (root / f"work-{number}.eml").write_bytes(message.as_bytes())
    return root


@contextmanager
def two_account_emulator(scratch: Path, *, latency_ms: float = 0) -> Iterator[Emulator]:
    """An emulator serving the test mailbox (me@example.com) and the work mailbox (WORK_OWNER)."""
    personal = build_mailbox(scratch / "personal-mail")
    work = build_work_mailbox(scratch / "work-mail")
    with start_emulator(personal, mailboxes={WORK_OWNER: work}, latency_ms=latency_ms) as emulator:
        yield emulator
