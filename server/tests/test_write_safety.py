"""The pieces that keep writes safe, one by one: confirmation codes, the send limit, the audit trail, the folder
local attachments come from, and the settings that configure them. Time is a fake clock moved by the test."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from server.errors import ConfirmationError, InvalidInputError, SendLimitError
from server.runtime.audit import AuditLog
from server.runtime.config import load_settings
from server.runtime.confirmations import MAX_WRONG_CODES, ConfirmationBook, normalize_code
from server.runtime.send_guard import SendGuard
from server.runtime.write_safety import WriteSafety
from server.tests.support.writes import FakeClock


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def book(clock: FakeClock) -> ConfirmationBook:
    return ConfirmationBook(ttl_s=300, clock=clock)


def test_a_code_works_once_for_its_draft_in_its_state(book):
    issued = book.issue("r1", "digest-a")
    assert issued.expires_in_s == 300 and len(normalize_code(issued.code)) == 8 and "-" in issued.code
    book.redeem(issued.code.lower().replace("-", " "), "r1", "digest-a")  # how a person may type it back
    with pytest.raises(ConfirmationError, match="already used"):
        book.redeem(issued.code, "r1", "digest-a")


def test_a_code_expires(book, clock):
    issued = book.issue("r1", "d")
    clock.advance(299.9)
    key = book.redeem(issued.code, "r1", "d")
    book.restore(key)
    clock.advance(0.2)
    with pytest.raises(ConfirmationError, match="expired"):
        book.redeem(issued.code, "r1", "d")


def test_a_code_is_bound_to_the_draft_and_to_its_content(book):
    issued = book.issue("r1", "d1")
    with pytest.raises(ConfirmationError, match="another draft"):
        book.redeem(issued.code, "r2", "d1")
    with pytest.raises(ConfirmationError, match="changed"):
        book.redeem(issued.code, "r1", "d2")
    with pytest.raises(ConfirmationError, match="already used"):  # a changed draft voids the code for good
        book.redeem(issued.code, "r1", "d1")


def test_restore_gives_a_code_back_only_before_it_expires(book, clock):
    issued = book.issue("r1", "d")
    key = book.redeem(issued.code, "r1", "d")
    book.restore(key)
    key = book.redeem(issued.code, "r1", "d")
    clock.advance(301)
    book.restore(key)
    with pytest.raises(ConfirmationError, match="expired"):
        book.redeem(issued.code, "r1", "d")


def test_guessing_codes_voids_every_outstanding_one(book):
    issued = book.issue("r1", "d")
    for _ in range(MAX_WRONG_CODES - 1):
        with pytest.raises(ConfirmationError, match="not valid"):
            book.redeem("AAAA-AAAA", "r1", "d")
    with pytest.raises(ConfirmationError, match="void"):
        book.redeem("AAAA-AAAA", "r1", "d")
    with pytest.raises(ConfirmationError, match="not valid"):
        book.redeem(issued.code, "r1", "d")


def test_held_questions_are_taken_once_and_expire(book, clock):
    token = book.hold("question")
    assert book.take(token, str) == "question"
    assert book.take(token, str) is None
    other = book.hold("late")
    clock.advance(301)
    assert book.take(other, str) is None
    typed = book.hold(42)
    assert book.take(typed, str) is None  # the wrong kind is never handed out
    assert book.take("forged", str) is None


def test_send_guard_allows_n_per_rolling_hour(clock):
    guard = SendGuard(3, clock=clock)
    for _ in range(3):
        guard.check()
        guard.take()
        clock.advance(60)
    assert guard.remaining() == 0
    with pytest.raises(SendLimitError, match="3 emails were already sent in the last hour") as caught:
        guard.take()
    assert "about 57 min" in caught.value.message
    clock.advance(3600 - 180)
    guard.take()  # the first send left the window
    assert guard.remaining() == 0


def test_audit_lines_mask_recipients_and_go_to_the_file_with_mode_600(tmp_path):
    path = tmp_path / "sub" / "audit.jsonl"
    log = AuditLog(path, clock=lambda: 0)
    entry = log.record(
        "gmail_send_draft", "drafts.send", outcome="done", ids=["r1", "m1"], recipients=["alice@example.com"]
    )
    assert (
        entry["recipients"] == ["al***@example.com"]
        and entry["ids"] == ["r1", "m1"]
        and entry["ts"] == "1970-01-01T00:00:00Z"
    )
    [line] = path.read_text(encoding="utf-8").splitlines()
    assert json.loads(line) == entry
    if os.name == "posix":
        assert path.stat().st_mode & 0o777 == 0o600


def test_local_attachments_come_only_from_the_configured_folder(tmp_path):
    folder = tmp_path / "attach"
    (folder / "sub").mkdir(parents=True)
    (folder / "report.pdf").write_bytes(b"%PDF")
    (folder / "sub" / "notes.txt").write_text("hi", encoding="utf-8")
    (folder / ".hidden").write_text("x", encoding="utf-8")
    secret = tmp_path / "secret.txt"
    secret.write_text("nope", encoding="utf-8")
    if os.name == "posix":
        (folder / "link.txt").symlink_to(secret)
    safety = WriteSafety(attach_dir=folder)
    found = safety.read_local_attachment("report.pdf")
    assert (found.name, found.mime_type, found.data) == ("report.pdf", "application/pdf", b"%PDF")
    assert safety.read_local_attachment("sub/notes.txt").data == b"hi"
    for bad in ["../secret.txt", str(secret), "sub/../../secret.txt", ".hidden", "C:\\x.txt", "", "sub"]:
        with pytest.raises(InvalidInputError):
            safety.read_local_attachment(bad)
    if os.name == "posix":
        with pytest.raises(InvalidInputError, match="outside"):
            safety.read_local_attachment("link.txt")
    with pytest.raises(InvalidInputError, match=r"missing\.pdf") as caught:
        safety.read_local_attachment("missing.pdf")
    assert "report.pdf" in caught.value.hint  # a missing file: the hint lists what is there
    with pytest.raises(InvalidInputError, match="no attachment folder") as caught:
        WriteSafety().read_local_attachment("report.pdf")
    assert "GMAIL_MCP_ATTACH_DIR" in caught.value.hint


def test_settings_of_the_write_tools(tmp_path: Path):
    settings = load_settings(
        env={
            "GMAIL_MCP_HOME": str(tmp_path),
            "GMAIL_MCP_DRY_RUN": "1",
            "GMAIL_MCP_AUDIT_LOG": "audit.jsonl",
            "GMAIL_MCP_ATTACH_DIR": "outbox",
            "GMAIL_MCP_SEND_LIMIT_PER_HOUR": "3",
            "GMAIL_MCP_WRITE_TOOLS": "drafts, send",
        },
        dotenv=False,
    )
    assert settings.dry_run and settings.send_limit_per_hour == 3
    assert settings.audit_log_path == tmp_path.resolve() / "audit.jsonl"
    assert settings.attach_dir == tmp_path.resolve() / "outbox"
    assert settings.write_tools == {"drafts", "send"}
    defaults = load_settings(env={}, dotenv=False)
    assert not defaults.dry_run and defaults.send_limit_per_hour == 10 and defaults.attach_dir is None
    for name, value in [("GMAIL_MCP_DRY_RUN", "maybe"), ("GMAIL_MCP_SEND_LIMIT_PER_HOUR", "0")]:
        with pytest.raises(ValueError, match=name):
            load_settings(env={name: value}, dotenv=False)
    safety = WriteSafety.from_settings(settings)
    assert safety.dry_run and safety.send_guard.limit == 3 and safety.audit.path == settings.audit_log_path
