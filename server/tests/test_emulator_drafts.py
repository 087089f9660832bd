"""The emulator's drafts, sending, trash, send-as and label creation, through the real Google client, and tokens
held to their scopes (403 insufficientPermissions outside them, as Gmail answers)."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
from googleapiclient.errors import HttpError

from server.emulator import Emulator, start_emulator
from server.runtime.config import PROJECT_ROOT
from server.tests.support.emulator import OWNER, build_mailbox, gmail_service


@pytest.fixture
def emulator(tmp_path: Path) -> Iterator[Emulator]:
    with start_emulator(build_mailbox(tmp_path / "mail")) as running:
        yield running


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def reply_to(emulator: Emulator, subject: str, *, cite: bool = True, to: str = "alice@example.com") -> bytes:
    message = EmailMessage()
    message["To"], message["Subject"] = to, subject
    if cite:
        message["In-Reply-To"] = message["References"] = "<report-1@example.com>"
    message.set_content("Thanks!\n")
    return message.as_bytes()


def original(emulator: Emulator) -> Any:
    return next(m for m in emulator.store.messages if m.subject == "Quarterly report")


def history_types(service: Any, start: int) -> list[str]:
    records = service.users().history().list(userId="me", startHistoryId=str(start)).execute().get("history", [])
    return [key for record in records for key in record if key.endswith(("Added", "Deleted", "Removed"))]


def test_a_draft_is_created_read_listed_updated_sent_into_its_thread(emulator: Emulator, tmp_path: Path):
    service = gmail_service(emulator, emulator.write_token(tmp_path / "t.json", scopes=["readonly", "compose"]))
    drafts = service.users().drafts()
    start = emulator.info()["history_id"]
    thread = original(emulator).thread_id
    draft = drafts.create(
        userId="me", body={"message": {"raw": b64(reply_to(emulator, "Re: Quarterly report")), "threadId": thread}}
    ).execute()
    assert draft["message"]["threadId"] == thread and draft["message"]["labelIds"] == ["DRAFT"]
    got = drafts.get(userId="me", id=draft["id"], format="metadata").execute()
    assert got["id"] == draft["id"] and got["message"]["id"] == draft["message"]["id"]
    assert drafts.list(userId="me").execute()["drafts"] == [
        {"id": draft["id"], "message": {"id": draft["message"]["id"], "threadId": thread}}
    ]
    updated = drafts.update(
        userId="me",
        id=draft["id"],
        body={
            "message": {"raw": b64(reply_to(emulator, "Re: Quarterly report", to="bob@x.example")), "threadId": thread}
        },
    ).execute()
    assert (
        updated["id"] == draft["id"] and updated["message"]["id"] != draft["message"]["id"]
    )  # a new message, as Gmail
    assert draft["message"]["id"] not in emulator.store.by_id
    sent = drafts.send(userId="me", body={"id": draft["id"]}).execute()
    assert sent["labelIds"] == ["SENT"] and sent["threadId"] == thread
    stored = emulator.store.by_id[sent["id"]]
    # Gmail spells the header it adds "Message-Id" (Nango tests/get-draft.test.json)
    assert b"Message-Id: <" in stored.raw and b"Date: " in stored.raw and b"From: " + OWNER.encode() in stored.raw
    assert [m.id for m in emulator.store.threads[thread]][-1] == sent["id"]
    assert drafts.list(userId="me").execute().get("drafts") is None
    with pytest.raises(HttpError) as gone:
        drafts.send(userId="me", body={"id": draft["id"]}).execute()
    assert gone.value.status_code == 404
    assert history_types(service, start) == [
        "messagesAdded",
        "messagesAdded",
        "messagesDeleted",
        "messagesAdded",
        "messagesDeleted",
    ]
    posts = [
        (e["method"], e["path"].rsplit("/", 2)[-2:]) for e in emulator.requests() if e["method"] in ("POST", "PUT")
    ]
    assert posts[-2:] == [
        ("POST", ["drafts", "send"]),
        ("POST", ["drafts", "send"]),
    ]  # every write is in the request log


@pytest.mark.parametrize(
    "subject, cite, joins",
    [("Re: Quarterly report", True, True), ("Something else", True, False), ("Re: Quarterly report", False, False)],
)
def test_a_draft_joins_the_thread_only_by_gmails_rule(
    emulator: Emulator, tmp_path: Path, subject: str, cite: bool, joins: bool
):
    service = gmail_service(emulator, emulator.write_token(tmp_path / "t.json"))
    thread = original(emulator).thread_id
    body = {"message": {"raw": b64(reply_to(emulator, subject, cite=cite)), "threadId": thread}}
    draft = service.users().drafts().create(userId="me", body=body).execute()
    assert (draft["message"]["threadId"] == thread) is joins


def test_messages_send_needs_a_recipient_and_drops_bcc(emulator: Emulator, tmp_path: Path):
    service = gmail_service(emulator, emulator.write_token(tmp_path / "t.json", scopes=["send"]))
    message = EmailMessage()
    message["Subject"] = "No one"
    message.set_content("x")
    with pytest.raises(HttpError) as refused:
        service.users().messages().send(userId="me", body={"raw": b64(message.as_bytes())}).execute()
    assert refused.value.status_code == 400
    folded = b"To: a@x.example\r\nBcc: hidden@x.example,\r\n other@x.example\r\nSubject: Hi\r\n\r\nx\r\n"
    sent = service.users().messages().send(userId="me", body={"raw": b64(folded)}).execute()
    raw = emulator.store.by_id[sent["id"]].raw
    assert b"hidden@x.example" not in raw and b"other@x.example" not in raw and sent["labelIds"] == ["SENT"]


def test_trash_untrash_send_as_and_label_creation(emulator: Emulator, tmp_path: Path):
    emulator.add_send_as("alias@work.example", "Work me")
    service = gmail_service(emulator, emulator.write_token(tmp_path / "t.json", scopes=["readonly", "modify"]))
    messages = service.users().messages()
    target = original(emulator).id
    trashed = messages.trash(userId="me", id=target).execute()
    assert "TRASH" in trashed["labelIds"]
    assert messages.trash(userId="me", id=target).execute()["labelIds"] == trashed["labelIds"]  # idempotent
    listed = messages.list(userId="me", q="in:inbox").execute()
    assert target not in [m["id"] for m in listed.get("messages", [])]
    assert "TRASH" not in messages.untrash(userId="me", id=target).execute()["labelIds"]
    send_as = service.users().settings().sendAs().list(userId="me").execute()["sendAs"]
    assert [(e["sendAsEmail"], e["isPrimary"]) for e in send_as] == [(OWNER, True), ("alias@work.example", False)]
    label = service.users().labels().create(userId="me", body={"name": "Follow up"}).execute()
    assert label["name"] == "Follow up" and label["id"].startswith("Label_")
    with pytest.raises(HttpError) as exists:
        service.users().labels().create(userId="me", body={"name": "follow UP"}).execute()
    assert exists.value.status_code == 409
    messages.modify(userId="me", id=target, body={"addLabelIds": [label["id"]]}).execute()
    assert target in [m["id"] for m in messages.list(userId="me", q='label:"Follow up"').execute()["messages"]]


@pytest.mark.parametrize(
    "scopes, call, allowed",
    [
        (["readonly"], "drafts.create", False),
        (["readonly"], "messages.modify", False),
        (["readonly"], "messages.list", True),
        (["compose"], "drafts.create", True),
        (["compose"], "messages.modify", False),
        (["compose"], "messages.list", False),
        (["send"], "messages.send", True),
        (["send"], "drafts.create", False),
        (["modify"], "drafts.create", True),
        (["modify"], "messages.modify", True),
        (["modify"], "messages.delete", False),  # a permanent delete needs full access
        (["labels"], "labels.create", True),
        (["full"], "messages.delete", True),
    ],
)
def test_a_token_is_held_to_its_scopes(emulator: Emulator, tmp_path: Path, scopes: list[str], call: str, allowed: bool):
    service = gmail_service(emulator, emulator.write_token(tmp_path / "t.json", scopes=scopes))
    messages, target = service.users().messages(), original(emulator).id
    raw = {"raw": b64(reply_to(emulator, "x"))}
    request = {
        "drafts.create": lambda: service.users().drafts().create(userId="me", body={"message": raw}),
        "messages.modify": lambda: messages.modify(userId="me", id=target, body={"addLabelIds": ["STARRED"]}),
        "messages.list": lambda: messages.list(userId="me"),
        "messages.send": lambda: messages.send(userId="me", body=raw),
        "messages.delete": lambda: messages.delete(userId="me", id=target),
        "labels.create": lambda: service.users().labels().create(userId="me", body={"name": "New"}),
    }[call]()
    if allowed:
        request.execute()
        return
    with pytest.raises(HttpError) as refused:
        request.execute()
    error = json.loads(refused.value.content)["error"]
    assert refused.value.status_code == 403 and error["errors"][0]["reason"] == "insufficientPermissions"
    assert error["message"] == "Request had insufficient authentication scopes."


def test_the_token_file_records_its_scopes_and_the_grant_answers_them(emulator: Emulator, tmp_path: Path):
    info = json.loads(emulator.write_token(tmp_path / "t.json", scopes=["compose", "readonly"]).read_text())
    assert info["scopes"] == [
        "https://www.googleapis.com/auth/gmail.compose",
        "https://www.googleapis.com/auth/gmail.readonly",
    ]
    status, grant = emulator.app.tokens.grant(
        {
            "grant_type": "refresh_token",
            "client_id": info["client_id"],
            "client_secret": info["client_secret"],
            "refresh_token": info["refresh_token"],
        }
    )
    assert status == 200 and set(grant["scope"].split()) == set(info["scopes"])
    with pytest.raises(ValueError, match="unknown scope"):
        emulator.write_token(tmp_path / "bad.json", scopes=["everything"])


def test_cli_writes_a_scoped_token(tmp_path: Path):
    mailbox = build_mailbox(tmp_path / "mail")
    token = tmp_path / "token.json"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "server.emulator",
            "--mailbox",
            str(mailbox),
            "--write-token",
            str(token),
            "--scopes",
            "readonly,modify",
            "--alias",
            "me2@example.org",
        ],
        cwd=PROJECT_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert process.stdout is not None and process.stdout.readline().startswith("http://127.0.0.1:")
        scopes = json.loads(token.read_text())["scopes"]
        assert scopes == [
            "https://www.googleapis.com/auth/gmail.modify",
            "https://www.googleapis.com/auth/gmail.readonly",
        ]
    finally:
        process.terminate()
        process.communicate(timeout=10)
    bad = subprocess.run(
        [
            sys.executable,
            "-m",
            "server.emulator",
            "--mailbox",
            str(mailbox),
            "--write-token",
            str(token),
            "--scopes",
            "root",
        ],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and "unknown scope" in bad.stderr
