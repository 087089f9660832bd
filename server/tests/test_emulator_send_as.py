"""The emulator's send-as identities (`settings.sendAs.list/get`, `--alias ADDRESS[:SIGNATURE]`), the `settings`
scope, and the From Gmail keeps on a draft, through the real Google client.

Evidence:
- Google's reference for users.settings.sendAs.list and .get (developers.google.com/workspace/gmail/api/reference/
  rest/v1/users.settings.sendAs/list): "Requires one of the following OAuth scopes: gmail.settings.basic,
  mail.google.com, gmail.modify, gmail.readonly"; the SendAs resource: `signature` is HTML, `verificationStatus`
  "only applies to custom 'from' aliases" (the primary entry has none), `pending` until the owner verifies it.
- Nango integration-templates tests/create-draft.test.json + get-draft.test.json (2026, Workspace): a draft saved
  with "From: test@example.com" (not one of the account's addresses) reads back "From: api@nango.dev", the
  account's primary address.
"""

from __future__ import annotations

import base64
import email
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from googleapiclient.errors import HttpError

from server.emulator import Emulator, start_emulator
from server.runtime.config import PROJECT_ROOT
from server.tests.support.emulator import OWNER, build_mailbox, gmail_service

SIGNATURE = "<b>Ana</b> | Support"


@pytest.fixture
def emulator(tmp_path: Path) -> Iterator[Emulator]:
    with start_emulator(build_mailbox(tmp_path / "mail")) as running:
        yield running


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def test_send_as_lists_and_gets_identities_with_their_signatures(emulator: Emulator, tmp_path: Path):
    emulator.add_send_as(OWNER, "Me", "<i>Me</i>")  # the primary's own name and signature
    emulator.add_send_as("ana@alias.example", "Ana", SIGNATURE)
    emulator.add_send_as("new@alias.example", verification="pending")
    service = gmail_service(emulator, emulator.write_token(tmp_path / "t.json", scopes=["readonly"]))
    send_as = service.users().settings().sendAs()
    listed = send_as.list(userId="me").execute()["sendAs"]
    assert [(e["sendAsEmail"], e["displayName"], e["signature"], e["isDefault"]) for e in listed] == [
        (OWNER, "Me", "<i>Me</i>", True),
        ("ana@alias.example", "Ana", SIGNATURE, False),
        ("new@alias.example", "", "", False),
    ]
    assert "verificationStatus" not in listed[0] and listed[2]["verificationStatus"] == "pending"
    one = send_as.get(userId="me", sendAsEmail="Ana@Alias.example").execute()
    assert one == listed[1]
    with pytest.raises(HttpError) as missing:
        send_as.get(userId="me", sendAsEmail="nobody@alias.example").execute()
    assert missing.value.status_code == 404


@pytest.mark.parametrize(
    ("scopes", "allowed"),
    [(["settings"], True), (["readonly"], True), (["modify"], True), (["compose"], False), (["send"], False)],
)
def test_listing_send_as_needs_a_settings_or_read_scope(
    emulator: Emulator, tmp_path: Path, scopes: list[str], allowed: bool
):
    service = gmail_service(emulator, emulator.write_token(tmp_path / "t.json", scopes=scopes))
    call = service.users().settings().sendAs().list(userId="me")
    if allowed:
        assert call.execute()["sendAs"][0]["sendAsEmail"] == OWNER
    else:
        with pytest.raises(HttpError) as refused:
            call.execute()
        assert refused.value.status_code == 403 and b"insufficientPermissions" in refused.value.content


def test_settings_basic_alone_reads_no_mail_nor_the_profile(emulator: Emulator, tmp_path: Path):
    """getProfile's reference lists the mail scopes, not gmail.settings.basic."""
    service = gmail_service(emulator, emulator.write_token(tmp_path / "t.json", scopes=["settings"]))
    for call in (service.users().getProfile(userId="me"), service.users().messages().list(userId="me")):
        with pytest.raises(HttpError) as refused:
            call.execute()
        assert refused.value.status_code == 403


def test_a_draft_keeps_a_from_of_an_accepted_alias_only(emulator: Emulator, tmp_path: Path):
    emulator.add_send_as("ana@alias.example", "Ana")
    emulator.add_send_as("new@alias.example", verification="pending")
    service = gmail_service(emulator, emulator.write_token(tmp_path / "t.json", scopes=["readonly", "compose"]))
    froms = {}
    for sender in ("Ana Lima <ana@alias.example>", "new@alias.example", "boss@elsewhere.example"):
        raw = f"From: {sender}\r\nTo: r@example.com\r\nSubject: Hi\r\n\r\nBody.\r\n".encode()
        draft = service.users().drafts().create(userId="me", body={"message": {"raw": b64(raw)}}).execute()
        froms[sender] = email.message_from_bytes(emulator.store.by_id[draft["message"]["id"]].raw)["From"]
    assert froms == {
        "Ana Lima <ana@alias.example>": "Ana Lima <ana@alias.example>",  # as written, display name too
        "new@alias.example": OWNER,  # not verified: not the account's to send from
        "boss@elsewhere.example": OWNER,
    }


def test_cli_alias_with_a_signature_and_the_settings_scope(tmp_path: Path):
    mailbox = build_mailbox(tmp_path / "mail")
    token = tmp_path / "token.json"
    command = [sys.executable, "-m", "server.emulator", "--mailbox", str(mailbox), "--write-token", str(token)]
    command += ["--scopes", "settings", "--alias", f"ana@alias.example:{SIGNATURE}", "--alias", "b@alias.example"]
    process = subprocess.Popen(
        command,
        cwd=PROJECT_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")

        class Address:
            def __init__(self, url: str) -> None:
                self.url, self.token_uri = url, url + "/token"

        service = gmail_service(Address(url), token)  # type: ignore[arg-type]  # only url and token_uri are read
        listed = service.users().settings().sendAs().list(userId="me").execute()["sendAs"]
        assert [(e["sendAsEmail"], e["signature"]) for e in listed[1:]] == [
            ("ana@alias.example", SIGNATURE),
            ("b@alias.example", ""),
        ]
    finally:
        process.terminate()
        process.communicate(timeout=10)
