"""Several mailboxes in one emulator: each token reaches its owner's mailbox only, as Google accounts do."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from google.auth.exceptions import RefreshError
from googleapiclient.errors import HttpError

from server.emulator import Emulator
from server.tests.support.accounts import WORK_OWNER, WORK_SUBJECTS, two_account_emulator
from server.tests.support.emulator import OWNER, control, gmail_service


@pytest.fixture(scope="module")
def emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Emulator]:
    with two_account_emulator(tmp_path_factory.mktemp("mailboxes")) as running:
        yield running


@pytest.fixture(autouse=True)
def clean(emulator: Emulator) -> Iterator[None]:
    emulator.reset()
    yield
    emulator.reset()


def subjects(service) -> set[str]:
    listed = service.users().messages().list(userId="me", maxResults=100).execute().get("messages", [])
    found = set()
    for ref in listed:
        message = service.users().messages().get(userId="me", id=ref["id"], format="metadata").execute()
        found |= {h["value"] for h in message["payload"]["headers"] if h["name"] == "Subject"}
    return found


def test_users_me_is_the_tokens_owner(emulator: Emulator, tmp_path: Path) -> None:
    personal = gmail_service(emulator, emulator.write_token(tmp_path / "personal.json"))
    work = gmail_service(emulator, emulator.write_token(tmp_path / "work.json", user=WORK_OWNER))
    assert personal.users().getProfile(userId="me").execute()["emailAddress"] == OWNER
    assert work.users().getProfile(userId="me").execute()["emailAddress"] == WORK_OWNER
    assert subjects(work) == set(WORK_SUBJECTS)
    assert not subjects(personal) & set(WORK_SUBJECTS)
    assert emulator.info()["mailboxes"] == [OWNER, WORK_OWNER]


def test_a_token_cannot_read_another_users_mailbox(emulator: Emulator, tmp_path: Path) -> None:
    work = gmail_service(emulator, emulator.write_token(tmp_path / "work.json", user=WORK_OWNER))
    with pytest.raises(HttpError) as caught:
        work.users().messages().list(userId=OWNER).execute()
    assert caught.value.resp.status == 403
    # Its own address works like "me".
    assert work.users().messages().list(userId=WORK_OWNER.upper()).execute()["messages"]


def test_token_files_record_their_owner(emulator: Emulator, tmp_path: Path) -> None:
    import json

    assert json.loads(emulator.write_token(tmp_path / "w.json", user=WORK_OWNER).read_text())["account"] == WORK_OWNER
    assert emulator.mailbox(WORK_OWNER).email_address == WORK_OWNER
    with pytest.raises(ValueError, match="no mailbox owner"):
        emulator.write_token(tmp_path / "x.json", user="nobody@example.com")


def test_revoking_one_users_refresh_token_leaves_the_other_working(emulator: Emulator, tmp_path: Path) -> None:
    emulator.revoke_refresh_tokens(WORK_OWNER)
    with pytest.raises(RefreshError):
        gmail_service(emulator, emulator.write_token(tmp_path / "work.json", user=WORK_OWNER)).users().getProfile(
            userId="me"
        ).execute()
    personal = gmail_service(emulator, emulator.write_token(tmp_path / "personal.json"))
    assert personal.users().getProfile(userId="me").execute()["emailAddress"] == OWNER
    # Over the control plane too, by address; an unknown address is refused rather than revoking anyone.
    emulator.reset()
    assert control(emulator, "POST", "revoke", {"user": OWNER}) == {"ok": True}
    with pytest.raises(RefreshError):
        gmail_service(emulator, emulator.write_token(tmp_path / "p2.json")).users().getProfile(userId="me").execute()
    work = gmail_service(emulator, emulator.write_token(tmp_path / "w2.json", user=WORK_OWNER))
    assert work.users().getProfile(userId="me").execute()["emailAddress"] == WORK_OWNER
    with pytest.raises(Exception, match="400"):
        control(emulator, "POST", "revoke", {"user": "nobody@example.com"})
