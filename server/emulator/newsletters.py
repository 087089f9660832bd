"""A generated mailbox of many newsletter messages, for bulk tests (cleanup, unsubscribe) and benchmarks.

`write_newsletters(path, count)` writes a Takeout-style mbox (`X-Gmail-Labels`, `X-GM-THRID`) of `count`
newsletters from `senders` lists, newest first by date, one a minute apart, each in the Inbox and unread, with
`List-Unsubscribe` headers. Cheap to build: 5,000 messages are a few megabytes of text written at once.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from email.utils import format_datetime
from pathlib import Path

START = datetime(2026, 1, 1, tzinfo=timezone.utc)


def newsletter(index: int, *, senders: int = 5, owner: str = "me@example.com") -> bytes:
    sender = index % senders
    date = format_datetime(START + timedelta(minutes=index))
    lines = [
        f"From: Weekly Deals {sender} <deals{sender}@news{sender}.example>",
        f"To: {owner}",
        f"Subject: Deals of the week #{index}",
        f"Date: {date}",
        f"Message-ID: <nl-{index}@news{sender}.example>",
        f"List-Unsubscribe: <mailto:leave-{sender}@news{sender}.example?subject=unsubscribe>",
        "X-Gmail-Labels: Inbox,Unread,Category Promotions",
        f"X-GM-THRID: {1_800_000_000_000_000_000 + index}",
        "MIME-Version: 1.0",
        "Content-Type: text/plain; charset=utf-8",
        "",
        f"Newsletter number {index}: this week's deals.",
        "",
    ]
    return "\n".join(lines).encode()


def write_newsletters(path: Path, count: int, *, senders: int = 5, owner: str = "me@example.com") -> Path:
    """Writes the mbox at `path` (its folder created) and returns it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    chunks = []
    for index in range(count):
        chunks.append(b"From newsletter@xxx Thu Jan 01 00:00:00 +0000 2026\n")
        chunks.append(newsletter(index, senders=senders, owner=owner) + b"\n")
    path.write_bytes(b"".join(chunks))
    return path
