"""The emulator's writes answer as recorded real Gmail does, through the real Google client.

Evidence (read, not copied): Nango integration-templates `integrations/google-mail/tests/*.test.json` (2026, a
Workspace account) and the 2024 gmail.com mocks under `mocks/nango/get/proxy/gmail/v1/users/me/messages/`.
"""

from __future__ import annotations

import base64
import email
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from server.emulator import Emulator, start_emulator
from server.tests.support.emulator import OWNER, build_mailbox, gmail_service


@pytest.fixture
def emulator(tmp_path: Path) -> Iterator[Emulator]:
    with start_emulator(build_mailbox(tmp_path / "mail")) as running:
        yield running


@pytest.fixture
def service(emulator: Emulator, tmp_path: Path) -> Any:
    return gmail_service(emulator, emulator.write_token(tmp_path / "t.json"))


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def inbox_message(emulator: Emulator) -> Any:
    return next(m for m in emulator.store.messages if m.subject == "Quarterly report")


def test_batch_modify_passes_over_ids_it_does_not_know_and_answers_204(emulator: Emulator, service: Any):
    """tests/batch-modify-messages.test.json: batchModify answers 204 with an empty body; field report
    taylorwilsdon/google_workspace_mcp PR #1047: an id that matches nothing does not fail the batch."""
    known = inbox_message(emulator)
    answer = (
        service.users()
        .messages()
        .batchModify(userId="me", body={"ids": [known.id, "0123456789abcdef"], "addLabelIds": ["STARRED"]})
        .execute()
    )
    assert answer in ("", b"", None, {})
    assert "STARRED" in emulator.store.by_id[known.id].label_ids
    assert [e["status"] for e in emulator.requests() if e["path"].endswith("/batchModify")] == [204]


def test_trash_takes_inbox_off_and_untrash_takes_only_trash_off(emulator: Emulator, service: Any):
    """tests/trash-message.test.json, trash-thread.test.json (a received message trashed reads [UNREAD, TRASH,
    CATEGORY_UPDATES]: no INBOX) and untrash-thread.test.json (untrashed, no INBOX): restored mail is in All Mail.
    The history keeps the INBOX removal with the trash (what the server's restore reads)."""
    target = inbox_message(emulator)
    start = emulator.info()["history_id"]
    messages = service.users().messages()
    trashed = messages.trash(userId="me", id=target.id).execute()
    assert "TRASH" in trashed["labelIds"] and "INBOX" not in trashed["labelIds"]
    untrashed = messages.untrash(userId="me", id=target.id).execute()
    assert not {"TRASH", "INBOX"} & set(untrashed["labelIds"])
    records = service.users().history().list(userId="me", startHistoryId=str(start)).execute()["history"]
    trash_record = records[0]
    assert [entry["labelIds"] for entry in trash_record["labelsAdded"]] == [["TRASH"]]
    assert [entry["labelIds"] for entry in trash_record["labelsRemoved"]] == [["INBOX"]]


def test_a_draft_gets_date_message_id_and_the_accounts_own_from(emulator: Emulator, service: Any):
    """tests/create-draft.test.json + get-draft.test.json: a draft saved with "From: test@example.com" and no Date
    or Message-Id reads back with the account's address as From, a Date and a Message-Id."""
    raw = b"From: test@example.com\r\nTo: recipient@example.com\r\nSubject: Test Draft\r\n\r\nBody.\r\n"
    draft = service.users().drafts().create(userId="me", body={"message": {"raw": b64(raw)}}).execute()
    stored = email.message_from_bytes(emulator.store.by_id[draft["message"]["id"]].raw)
    assert stored["From"] == OWNER and stored["Date"] and stored["Message-Id"].startswith("<")
    assert draft["message"]["threadId"] == draft["message"]["id"]
    emulator.add_send_as("alias@work.example", "Work me")
    own = b"From: Work me <alias@work.example>\r\nTo: r@example.com\r\nSubject: Mine\r\n\r\nBody.\r\n"
    kept = service.users().drafts().create(userId="me", body={"message": {"raw": b64(own)}}).execute()
    assert email.message_from_bytes(emulator.store.by_id[kept["message"]["id"]].raw)["From"] == (
        "Work me <alias@work.example>"
    )


def test_a_sent_draft_keeps_the_drafts_thread_id(emulator: Emulator, service: Any):
    """tests/send-draft.test.json: drafts.send answers a message whose threadId is not its own id (the draft's
    thread, which the draft had started)."""
    raw = b"To: someone@example.com\r\nSubject: A new conversation\r\n\r\nHello.\r\n"
    draft = service.users().drafts().create(userId="me", body={"message": {"raw": b64(raw)}}).execute()
    sent = service.users().drafts().send(userId="me", body={"id": draft["id"]}).execute()
    assert sent["threadId"] == draft["message"]["threadId"] != sent["id"]
    assert sent["labelIds"] == ["SENT"]
    assert [m.id for m in emulator.store.threads[sent["threadId"]]] == [sent["id"]]


def test_mail_sent_to_oneself_lands_in_inbox_unread(emulator: Emulator, service: Any):
    """2024 gmail.com mocks (messages/1926a...): a message the owner sent to themself has labelIds [UNREAD,
    IMPORTANT, SENT, INBOX]; tests/send-message.test.json: to someone else, [SENT] only."""
    to_self = f"To: {OWNER.upper()}\r\nSubject: Note to self\r\n\r\nRemember.\r\n".encode()
    sent = service.users().messages().send(userId="me", body={"raw": b64(to_self)}).execute()
    assert set(sent["labelIds"]) == {"SENT", "INBOX", "UNREAD"}
    other = b"To: test@example.com\r\nSubject: Test Email\r\n\r\nBody.\r\n"
    assert service.users().messages().send(userId="me", body={"raw": b64(other)}).execute()["labelIds"] == ["SENT"]


def test_modify_and_untrash_answer_the_minimal_message_trash_only_its_labels(emulator: Emulator, service: Any):
    """tests/modify-message.test.json and untrash-message.test.json answer {id, threadId, labelIds, snippet,
    sizeEstimate, historyId, internalDate}; tests/trash-message.test.json answers {id, threadId, labelIds}."""
    target = inbox_message(emulator).id
    messages = service.users().messages()
    minimal = {"id", "threadId", "labelIds", "snippet", "sizeEstimate", "historyId", "internalDate"}
    assert set(messages.modify(userId="me", id=target, body={"addLabelIds": ["STARRED"]}).execute()) == minimal
    assert set(messages.trash(userId="me", id=target).execute()) == {"id", "threadId", "labelIds"}
    assert set(messages.untrash(userId="me", id=target).execute()) == minimal
