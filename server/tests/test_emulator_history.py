"""The emulator's mailbox changes and history.list, through the real google-api-python-client over HTTP.

Every change (insert, import, modify, batchModify, delete, a delivery through the control plane) must show in
history.list with the right typed entries, move the mailbox's historyId (profile, messages, threads), and be
seen by search at once. Each test gets its own emulator: the changes would leak into other suites.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
from googleapiclient.errors import HttpError
from googleapiclient.http import MediaIoBaseUpload

from server.emulator import Emulator, start_emulator
from server.tests.support.emulator import OWNER, build_mailbox, control, gmail_service


@pytest.fixture
def mailbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Emulator, Any]]:
    root = tmp_path_factory.mktemp("history")
    with start_emulator(build_mailbox(root / "mail"), history_limit=50) as emulator:
        yield emulator, gmail_service(emulator, emulator.write_token(root / "token.json"))


def raw_message(subject: str, *, sender: str = "Carol <carol@example.net>", extra: dict | None = None) -> bytes:
    message = EmailMessage()
    message["From"], message["To"], message["Subject"] = sender, OWNER, subject
    message["Date"] = "Tue, 02 Apr 2024 10:00:00 +0000"
    message["Message-ID"] = f"<{subject.replace(' ', '-')}@example.net>"
    for name, value in (extra or {}).items():
        message[name] = value
    message.set_content(f"Body of {subject}.\n")
    return message.as_bytes()


def b64url(data: bytes) -> str:
    import base64

    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def history(service: Any, start: str | int, **params: Any) -> dict[str, Any]:
    return service.users().history().list(userId="me", startHistoryId=str(start), **params).execute()


def profile_history_id(service: Any) -> int:
    return int(service.users().getProfile(userId="me").execute()["historyId"])


def ids_for(service: Any, query: str) -> list[str]:
    listed = service.users().messages().list(userId="me", q=query, maxResults=500).execute()
    return [ref["id"] for ref in listed.get("messages", [])]


def test_no_changes_answers_no_records_and_the_current_history_id(mailbox):
    _, service = mailbox
    start = profile_history_id(service)
    answer = history(service, start)
    assert answer == {"historyId": str(start)}


def test_insert_with_json_raw_is_a_message_added_record(mailbox):
    emulator, service = mailbox
    start = profile_history_id(service)
    body = {"raw": b64url(raw_message("Inserted note")), "labelIds": ["INBOX", "UNREAD"]}
    inserted = service.users().messages().insert(userId="me", body=body).execute()
    assert set(inserted) == {"id", "threadId", "labelIds"} and inserted["labelIds"] == ["INBOX", "UNREAD"]

    answer = history(service, start)
    (record,) = answer["history"]
    assert int(record["id"]) > start and answer["historyId"] == record["id"]
    assert record["messagesAdded"] == [
        {"message": {"id": inserted["id"], "threadId": inserted["threadId"], "labelIds": ["INBOX", "UNREAD"]}}
    ]
    assert record["messages"] == [{"id": inserted["id"], "threadId": inserted["threadId"]}]
    fetched = service.users().messages().get(userId="me", id=inserted["id"], format="metadata").execute()
    assert fetched["historyId"] == record["id"] and profile_history_id(service) == int(record["id"])
    assert inserted["id"] in ids_for(service, "is:unread subject:(inserted note)")
    assert emulator.info()["history_id"] == int(record["id"])


@pytest.mark.parametrize("how", ["multipart", "media"])
def test_insert_and_import_through_the_upload_path(mailbox, how):
    emulator, service = mailbox
    raw = raw_message(f"Uploaded {how}")
    media = MediaIoBaseUpload(io.BytesIO(raw), mimetype="message/rfc822")
    messages = service.users().messages()
    if how == "multipart":
        request = messages.import_(userId="me", body={"labelIds": ["INBOX"]}, media_body=media)
    else:
        request = messages.insert(userId="me", media_body=media)
    # The library moves only the host of upload URLs to api_endpoint and keeps https (discovery.py,
    # _fix_up_media_path_base_url): against a plain-http endpoint the scheme must be put right by hand.
    assert request.uri.startswith("https://127.0.0.1:")
    request.uri = "http://" + request.uri.removeprefix("https://")
    added = request.execute()
    stored = emulator.store.by_id[added["id"]]
    assert stored.raw == raw  # byte for byte through the multipart/related framing
    assert stored.label_ids == (("INBOX",) if how == "multipart" else ())
    requests = [entry for entry in emulator.requests() if entry["method"] == "POST"]
    assert requests[-1]["path"].startswith("/upload/gmail/v1/users/me/messages")
    # import files a message under its Date header, insert under the time it arrived
    header_ms = 1712052000000
    assert (stored.internal_date == header_ms) is (how == "multipart")


def test_modify_and_batch_modify_record_label_changes_and_search_follows(mailbox):
    _, service = mailbox
    unread = ids_for(service, "is:unread")
    assert len(unread) >= 2
    first, second = unread[:2]
    start = profile_history_id(service)

    modified = (
        service.users()
        .messages()
        .modify(userId="me", id=first, body={"removeLabelIds": ["UNREAD"], "addLabelIds": ["STARRED"]})
        .execute()
    )
    assert "UNREAD" not in modified["labelIds"] and modified["labelIds"][-1] == "STARRED"
    answer = (
        service.users()
        .messages()
        .batchModify(userId="me", body={"ids": [second, first], "removeLabelIds": ["UNREAD"]})
        .execute()
    )
    assert answer == ""  # 204 (the library answers ""): `first` was read already, so only `second` changed

    records = history(service, start)["history"]
    assert len(records) == 2
    assert records[0]["labelsAdded"][0]["labelIds"] == ["STARRED"]
    assert records[0]["labelsRemoved"][0]["labelIds"] == ["UNREAD"]
    assert records[1]["labelsRemoved"][0]["message"]["id"] == second
    assert first not in ids_for(service, "is:unread") and second not in ids_for(service, "is:unread")
    assert first in ids_for(service, "is:starred")

    only_added = history(service, start, historyTypes=["labelAdded"])["history"]
    assert [set(record) for record in only_added] == [{"id", "messages", "labelsAdded"}]


def test_label_filter_keeps_changes_into_and_out_of_the_label(mailbox):
    emulator, service = mailbox
    start = profile_history_id(service)
    inbox_message = ids_for(service, "in:inbox")[0]
    emulator.modify(inbox_message, remove=["INBOX"])  # archived elsewhere
    starred = emulator.deliver(**{"from": "Dan <dan@example.org>", "subject": "Not for the inbox"}, labelIds=[])
    records = history(service, start, labelId="INBOX")["history"]
    assert [record["labelsRemoved"][0]["message"]["id"] for record in records] == [inbox_message]
    everything = history(service, start)["history"]
    assert {record["messages"][0]["id"] for record in everything} == {inbox_message, starred["id"]}


def test_delete_is_a_message_deleted_record(mailbox):
    emulator, service = mailbox
    victim = ids_for(service, "in:inbox")[0]
    thread = emulator.store.by_id[victim].thread_id
    start = profile_history_id(service)
    assert service.users().messages().delete(userId="me", id=victim).execute() == ""  # 204
    (record,) = history(service, start)["history"]
    assert record["messagesDeleted"][0]["message"]["id"] == victim
    assert victim not in ids_for(service, "in:anywhere")
    with pytest.raises(HttpError) as caught:
        service.users().messages().get(userId="me", id=victim).execute()
    assert caught.value.resp.status == 404
    assert all(message.id != victim for message in emulator.store.threads.get(thread, ()))


def test_delivery_threads_a_reply_and_moves_the_thread_history_id(mailbox):
    emulator, service = mailbox
    report = emulator.store.find("Quarterly report")[-1]  # the original, oldest
    reply = control(
        emulator,
        "POST",
        "deliver",
        {
            "from": "Alice Example <alice@example.com>",
            "subject": "Re: Quarterly report",
            "body": "One more thing.",
            "in_reply_to": "<report-1@example.com>",
        },
    )["message"]
    assert reply["threadId"] == report.thread_id and reply["labelIds"] == ["INBOX", "UNREAD"]
    thread = service.users().threads().get(userId="me", id=report.thread_id, format="minimal").execute()
    assert thread["messages"][-1]["id"] == reply["id"]  # the newest, last
    assert thread["historyId"] == reply["historyId"] == str(profile_history_id(service))
    newest = service.users().messages().list(userId="me", maxResults=1).execute()["messages"][0]
    assert newest["id"] == reply["id"]  # filed as received now: the newest message


def test_history_pages_follow_in_order(mailbox):
    emulator, service = mailbox
    start = profile_history_id(service)
    delivered = [emulator.deliver(**{"from": "x@example.org", "subject": f"Note {n}"})["id"] for n in range(5)]
    seen, token, pages = [], None, 0
    while True:
        answer = history(service, start, maxResults=2, **({"pageToken": token} if token else {}))
        pages += 1
        seen += [record["messagesAdded"][0]["message"]["id"] for record in answer["history"]]
        token = answer.get("nextPageToken")
        if not token:
            break
    assert seen == delivered and pages == 3
    with pytest.raises(HttpError) as caught:  # a page token replayed with another request
        history(service, start + 1, maxResults=2, pageToken=history(service, start, maxResults=2)["nextPageToken"])
    assert caught.value.resp.status == 400


def test_a_start_id_older_than_the_retained_history_answers_404(mailbox):
    emulator, service = mailbox
    start = profile_history_id(service)
    emulator.deliver(**{"from": "x@example.org", "subject": "before expiry"})
    control(emulator, "POST", "expire-history")
    with pytest.raises(HttpError) as caught:
        history(service, start)
    assert caught.value.resp.status == 404
    assert history(service, profile_history_id(service)) == {"historyId": str(profile_history_id(service))}


def test_retention_limit_moves_the_window(tmp_path: Path):
    with start_emulator(build_mailbox(tmp_path / "mail"), history_limit=2) as emulator:
        service = gmail_service(emulator, emulator.write_token(tmp_path / "token.json"))
        start = profile_history_id(service)
        for n in range(3):
            emulator.deliver(**{"from": "x@example.org", "subject": f"n{n}"})
        with pytest.raises(HttpError) as caught:
            history(service, start)  # the first record was dropped: this start id is no longer covered
        assert caught.value.resp.status == 404
        assert len(history(service, start + 1)["history"]) == 2


@pytest.mark.parametrize(
    "body, message",
    [
        ({"addLabelIds": ["NO_SUCH_LABEL"]}, "Invalid label: NO_SUCH_LABEL"),
        ({"addLabelIds": ["SENT"]}, "Invalid label: SENT"),
        ({"addLabelIds": ["STARRED"], "removeLabelIds": ["STARRED"]}, "cannot be both added and removed"),
        ({}, "No label add or removes specified"),
    ],
)
def test_bad_modify_requests_are_400_and_change_nothing(mailbox, body, message):
    _, service = mailbox
    target = ids_for(service, "in:inbox")[0]
    start = profile_history_id(service)
    with pytest.raises(HttpError) as caught:
        service.users().messages().modify(userId="me", id=target, body=body).execute()
    assert caught.value.resp.status == 400 and message in str(caught.value)
    assert profile_history_id(service) == start


def test_history_requires_a_numeric_start_and_known_types(mailbox):
    _, service = mailbox
    for start, extra in (("abc", ""), ("100000", "&historyTypes=messageMoved")):
        request = service.users().history().list(userId="me", startHistoryId=start)
        request.uri += extra  # the library itself refuses an unknown type: check the emulator does too
        with pytest.raises(HttpError) as caught:
            request.execute()
        assert caught.value.resp.status == 400


def test_history_works_inside_a_batch_and_with_fields(mailbox):
    emulator, service = mailbox
    start = profile_history_id(service)
    emulator.deliver(**{"from": "x@example.org", "subject": "batched"})
    answers: dict[str, Any] = {}
    batch = service.new_batch_http_request(callback=lambda rid, resp, exc: answers.setdefault(rid, (resp, exc)))
    batch._batch_uri = emulator.url + "/batch/gmail/v1"
    batch.add(
        service.users().history().list(userId="me", startHistoryId=str(start), fields="historyId"), request_id="h"
    )
    batch.execute()
    response, error = answers["h"]
    assert error is None and response == {"historyId": str(start + 1)}
