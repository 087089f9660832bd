"""Contract: what Gmail adds to and changes in a draft. Runs against the emulator (`pytest`) and a real inbox
(`pytest -m live`). Nothing is sent to a real inbox: the drafts are deleted at cleanup, and the one sending check
is marked EMULATOR ONLY and skips itself against real Gmail.
"""

from __future__ import annotations

import re
from email.utils import parseaddr, parsedate_to_datetime

import pytest

from server.tests.support.contract import ContractGmail, b64url, header


def draft_headers(gmail: ContractGmail, draft_id: str) -> dict[str, str]:
    message = gmail.users.drafts().get(userId="me", id=draft_id, format="full").execute()["message"]
    return {name: header(message, name) or "" for name in ("From", "Date", "Message-Id")}


def bare_draft(gmail: ContractGmail, sender: str) -> bytes:
    return (
        f"From: {sender}\r\nTo: {gmail.owner}\r\nSubject: draft contract {gmail.marker}\r\n\r\n"
        f"A draft of the Gmail contract suite; never sent.\r\n{gmail.marker}\r\n"
    ).encode()


def test_a_draft_gets_a_date_and_a_message_id(gmail: ContractGmail) -> None:
    """drafts.create of a message without Date and Message-ID: Gmail adds both.

    Evidence: Nango tests/create-draft.test.json (raw From/To/Subject only) and tests/get-draft.test.json
    (2026, Workspace): the stored draft has `Date` and `Message-Id: <...@mail.gmail.com>`.
    """
    draft = gmail.create_draft(bare_draft(gmail, gmail.owner))

    headers = draft_headers(gmail, draft["id"])
    assert parsedate_to_datetime(headers["Date"]).tzinfo is not None, headers
    assert re.fullmatch(r"<[^<>@\s]+@[^<>@\s]+>", headers["Message-Id"]), headers


def test_a_from_that_is_not_a_send_as_address_becomes_the_primary_address(gmail: ContractGmail) -> None:
    """drafts.create with a From the account cannot send as: Gmail stores the primary address instead.

    Evidence: Nango tests/create-draft.test.json (From: test@example.com) and tests/get-draft.test.json (the
    stored draft: From: api@nango.dev, the account) (2026, Workspace).
    """
    foreign = f"Not The Owner <{gmail.marker}@example.invalid>"
    draft = gmail.create_draft(bare_draft(gmail, foreign))

    assert parseaddr(draft_headers(gmail, draft["id"])["From"])[1].lower() == gmail.owner.lower()


def test_sending_files_the_mail_as_sent_from_the_primary_address(gmail: ContractGmail) -> None:
    """EMULATOR ONLY (it sends mail; the live suite never does): messages.send of a message with a From the account
    cannot send as files it under SENT alone, From the primary address.

    Evidence: Nango tests/send-message.test.json (2026, Workspace: raw `From: test@example.com`, answer labelIds
    ["SENT"]) and the draft recordings above (the same From rewrite on drafts.create).
    """
    if gmail.target != "emulator":
        pytest.skip("sends mail: this check runs against the emulator only")
    raw = bare_draft(gmail, f"Not The Owner <{gmail.marker}@example.invalid>").replace(
        f"To: {gmail.owner}".encode(), b"To: nobody@example.invalid"
    )
    sent = gmail.users.messages().send(userId="me", body={"raw": b64url(raw)}).execute()
    gmail.messages.append(sent["id"])

    assert sent["labelIds"] == ["SENT"]
    stored = gmail.get(sent["id"], format="metadata", metadataHeaders=["From"])
    assert parseaddr(header(stored, "From") or "")[1].lower() == gmail.owner.lower()
