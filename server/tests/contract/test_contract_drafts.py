"""Contract: what Gmail adds to and changes in a draft. Runs against the emulator (`pytest`) and a real inbox
(`pytest -m live`). Nothing is sent: the drafts are deleted at cleanup (sending checks stay in the emulator-only
suites, e.g. test_emulator_drafts.py).
"""

from __future__ import annotations

import re
from email.utils import parseaddr, parsedate_to_datetime

from server.tests.support.contract import ContractGmail, header


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
