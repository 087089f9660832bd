"""The content-fidelity corpus (server/tests/data) served by the emulator and read with the real client stack.

Shared by test_content_fidelity.py and test_content_tool.py: a mailbox directory holding the committed .eml
files plus the 5 MB case built on the spot, an emulator over it in one body-charset mode, a `GmailClient`
(google-api-python-client underneath) pointed at it, and `problems()`, which checks a parsed message against
the hand-written expectations of expected.json.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from server.auth import TokenStore
from server.content.message import ParsedMessage, parse_message
from server.emulator import Emulator, start_emulator
from server.gmail_client import GmailClient
from server.runtime.config import Settings
from server.tests.data.corpus_structure import large_case
from server.tests.data.make_corpus import CORPUS_DIR, EXPECTED
from server.tests.support.emulator import emulator_settings

MODES = ("utf8", "declared")
LARGE = large_case()


def entries() -> list[dict[str, Any]]:
    """expected.json: one {"file", "case", "what", "expect"} per committed message."""
    return json.loads(EXPECTED.read_text("utf-8"))


def corpus_mailbox(root: Path) -> Path:
    """The committed corpus plus the 5 MB case, as a mailbox directory under `root`."""
    root.mkdir(parents=True, exist_ok=True)
    for eml in sorted(CORPUS_DIR.glob("*.eml")):
        (root / eml.name).write_bytes(eml.read_bytes())
    (root / f"99-{LARGE.name}.eml").write_bytes(LARGE.raw)
    return root


def _never_sleep(seconds: float) -> None:
    raise AssertionError(f"the client tried to sleep {seconds} s: a retry or throttle the corpus should not need")


@dataclass
class Served:
    """One emulator over the corpus in one body-charset mode, with a real client pointed at it."""

    mode: str
    emulator: Emulator
    settings: Settings
    client: GmailClient
    ids: dict[str, str]  # case name -> Gmail message id
    _full: dict[str, ParsedMessage] = field(default_factory=dict)

    def full(self, case: str) -> ParsedMessage:
        """The case fetched in `full` format and parsed (fetched once per emulator)."""
        if case not in self._full:
            self._full[case] = parse_message(self.client.get_message(self.ids[case], fmt="full"))
        return self._full[case]


@contextmanager
def serve(mailbox: Path, mode: str, token_dir: Path) -> Iterator[Served]:
    with start_emulator(mailbox, body_charset=mode) as emulator:
        # The client-side quota budget would throttle a corpus-sized burst; tests never sleep.
        settings = emulator_settings(emulator, token_dir / mode, quota_units_per_s=0.0)
        client = GmailClient(settings, TokenStore(settings), sleep=_never_sleep)
        ids = {str(m.message["X-Corpus-Case"]): m.id for m in emulator.store.messages}
        yield Served(mode, emulator, settings, client, ids)


def problems(parsed: ParsedMessage, expect: dict[str, Any], mode: str) -> list[str]:
    """Every way `parsed` misses its expectations (see corpus_text.py for the keys); [] when it meets them."""
    found: list[str] = []
    text = parsed.body_text or ""
    wanted = list(expect.get("contains", [])) + (list(expect.get("contains_declared", [])) if mode != "utf8" else [])
    found += [f"body lacks {s!r}" for s in wanted if s not in text]
    found += [f"body has {s!r}" for s in expect.get("absent", []) if s in text]
    if expect.get("empty") and text:
        found.append(f"body should be empty: {text[:80]!r}")
    if len(text) < expect.get("min_chars", 0):
        found.append(f"body has only {len(text)} characters")
    actual: dict[str, object] = {
        "subject": parsed.subject,
        "from": [parsed.from_[0].name, parsed.from_[0].email] if parsed.from_ else None,
        "to": [a.email for a in parsed.to],
        "cc": [[a.name, a.email] for a in parsed.cc],
        "date_iso": parsed.date_iso,
        "source": parsed.body_source,
        "attachments": [[a.filename, a.mime_type, a.inline] for a in parsed.attachments],
    }
    found += [f"{key} is {actual[key]!r}" for key in actual if key in expect and expect[key] != actual[key]]
    found += [f"subject lacks {s!r}" for s in expect.get("subject_contains", []) if s not in (parsed.subject or "")]
    for name, value in expect.get("headers", {}).items():
        if parsed.headers.get(name) != value:
            found.append(f"header {name} is {parsed.headers.get(name)!r}")
    notes = " | ".join(parsed.notes)
    found += [f"no note with {s!r} in {notes!r}" for s in expect.get("notes", []) if s not in notes]
    return found
