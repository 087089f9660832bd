"""The Gmail REST surface through the real google-api-python-client stack over loopback."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from googleapiclient.errors import HttpError

from server.emulator import Emulator
from server.tests.support.emulator import CHINESE_TEXT, FILLER_COUNT, OWNER, PDF_BYTES, decode_b64url, gmail_service

VISIBLE = 10 + FILLER_COUNT - 2  # everything but spam and trash


@pytest.fixture(scope="module")
def gmail(gmail_emulator: Emulator, tmp_path_factory: pytest.TempPathFactory) -> Any:
    return gmail_service(gmail_emulator, gmail_emulator.write_token(tmp_path_factory.mktemp("token") / "token.json"))


def _ids(response: dict[str, Any]) -> list[str]:
    return [item["id"] for item in response.get("messages", [])]


def _status(error: pytest.ExceptionInfo[HttpError]) -> tuple[int, str, str]:
    body = json.loads(error.value.content)["error"]
    return error.value.resp.status, body["errors"][0]["reason"], body["message"]


def test_list_default_newest_first_without_spam_and_trash(gmail: Any, emulator: Emulator) -> None:
    response = gmail.users().messages().list(userId="me").execute()
    visible = [m for m in emulator.store.messages if not {"SPAM", "TRASH"} & set(m.label_ids)]
    assert _ids(response) == [m.id for m in visible]
    assert response["resultSizeEstimate"] == VISIBLE and "nextPageToken" not in response
    assert set(response["messages"][0]) == {"id", "threadId"}


def test_list_include_spam_trash_and_label_ids(gmail: Any, emulator: Emulator) -> None:
    messages = gmail.users().messages()
    everything = messages.list(userId="me", includeSpamTrash=True).execute()
    assert everything["resultSizeEstimate"] == len(emulator.store.messages)
    spam = messages.list(userId="me", labelIds=["SPAM"]).execute()  # asking for SPAM shows it
    assert _ids(spam) == [m.id for m in emulator.store.find("You won a prize")]
    both = messages.list(userId="me", labelIds=["INBOX", "UNREAD"]).execute()  # all must match
    assert sorted(_ids(both)) == sorted(
        m.id for m in emulator.store.messages if {"INBOX", "UNREAD"} <= set(m.label_ids)
    )
    work = emulator.store.label_id("Work")
    assert _ids(messages.list(userId="me", labelIds=[work]).execute()) == [
        emulator.store.find("Quarterly report")[-1].id
    ]


def test_list_query(gmail: Any, emulator: Emulator) -> None:
    messages = gmail.users().messages()
    assert _ids(messages.list(userId="me", q="from:alice@example.com").execute()) == [
        emulator.store.find("Quarterly report")[-1].id
    ]
    assert _ids(messages.list(userId="me", q="has:attachment").execute()) == [emulator.store.find("Invoice")[0].id]
    assert _ids(messages.list(userId="me", q="prize").execute()) == []
    assert len(_ids(messages.list(userId="me", q="prize in:anywhere").execute())) == 2  # query asks for spam


def test_empty_result_has_no_messages_key(gmail: Any) -> None:
    assert gmail.users().messages().list(userId="me", q="subject:nothing-matches-this").execute() == {
        "resultSizeEstimate": 0
    }


def test_gmail_never_answers_invalid_query(gmail: Any) -> None:
    """Gmail never answers `Invalid query`: it searches what it cannot parse as words (amd/gaia #2161; Gmail Help
    answer 7190 documents has:yellow-star, which the emulator used to refuse)."""
    messages = gmail.users().messages()
    for q in ("(unbalanced", 'subject:"open', "after:2024-07-01", "newer_than:2w", "in:nowhere", "has:blue-info"):
        assert messages.list(userId="me", q=q).execute() == {"resultSizeEstimate": 0}, q
    starred = messages.list(userId="me", q="is:starred").execute()
    assert starred["messages"] and messages.list(userId="me", q="has:yellow-star").execute() == starred


def test_an_unknown_label_id_is_400_invalid_label(gmail: Any) -> None:
    """n8n-io/n8n #902 and the GAM-team wiki "Users - Gmail - Messages/Threads": Gmail answers an unknown
    labelIds entry with 400 `Invalid label: X`."""
    with pytest.raises(HttpError) as caught:
        gmail.users().messages().list(userId="me", labelIds=["INBOX", "Label_999"]).execute()
    assert _status(caught) == (400, "invalidArgument", "Invalid label: Label_999")


def test_labels_list_visibility_is_as_recorded(gmail: Any) -> None:
    """Nango integration-templates tests/list-labels.test.json and labels.test.json (2026, Workspace): INBOX,
    SENT, DRAFT, STARRED, UNREAD carry no visibility fields; CHAT, IMPORTANT, TRASH, SPAM, CATEGORY_* hide."""
    labels = {label["id"]: label for label in gmail.users().labels().list(userId="me").execute()["labels"]}
    for label_id in ("INBOX", "SENT", "DRAFT", "STARRED", "UNREAD"):
        assert set(labels[label_id]) == {"id", "name", "type"}, label_id
    for label_id in ("CHAT", "IMPORTANT", "TRASH", "SPAM", "CATEGORY_PERSONAL", "CATEGORY_PROMOTIONS"):
        assert labels[label_id]["messageListVisibility"] == "hide", label_id
        assert labels[label_id]["labelListVisibility"] == "labelHide", label_id
    user = [label for label in labels.values() if label["type"] == "user"]
    assert user and all(label["labelListVisibility"] == "labelShow" for label in user)


def test_paging_with_tokens(gmail: Any, emulator: Emulator) -> None:
    messages = gmail.users().messages()
    seen: list[str] = []
    token = None
    pages = 0
    while True:
        response = messages.list(userId="me", maxResults=10, pageToken=token).execute()
        seen += _ids(response)
        pages += 1
        token = response.get("nextPageToken")
        if not token:
            break
    assert pages == 4 and len(seen) == VISIBLE == len(set(seen))
    assert seen == _ids(messages.list(userId="me").execute())


def test_page_token_is_bound_to_its_query(gmail: Any) -> None:
    messages = gmail.users().messages()
    token = messages.list(userId="me", maxResults=5).execute()["nextPageToken"]
    for other in ({"q": "in:inbox"}, {"labelIds": ["INBOX"]}, {"includeSpamTrash": True}):
        with pytest.raises(HttpError) as caught:
            messages.list(userId="me", maxResults=5, pageToken=token, **other).execute()
        assert _status(caught)[:2] == (400, "invalidArgument")
    with pytest.raises(HttpError) as caught:
        messages.list(userId="me", pageToken="forged-token").execute()
    assert _status(caught)[:2] == (400, "invalidArgument")


def test_get_formats(gmail: Any, emulator: Emulator) -> None:
    messages = gmail.users().messages()
    report = emulator.store.find("Quarterly report")[-1]
    full = messages.get(userId="me", id=report.id).execute()
    assert full["payload"]["partId"] == "" and full["threadId"] == report.thread_id
    assert full["labelIds"] == list(report.label_ids) and full["historyId"].isdigit()
    assert full["internalDate"] == str(report.internal_date)
    assert "The quarterly report is attached below." in decode_b64url(full["payload"]["body"]["data"]).decode()
    metadata = messages.get(userId="me", id=report.id, format="metadata", metadataHeaders=["subject", "From"]).execute()
    assert {h["name"]: h["value"] for h in metadata["payload"]["headers"]} == {
        "From": "Alice Example <alice@example.com>",
        "Subject": "Quarterly report",
    }
    assert "body" not in metadata["payload"] and "parts" not in metadata["payload"]
    minimal = messages.get(userId="me", id=report.id, format="minimal").execute()
    assert "payload" not in minimal and minimal["snippet"].startswith("Hi, The quarterly report")
    raw = messages.get(userId="me", id=report.id, format="raw").execute()
    assert decode_b64url(raw["raw"]) == report.raw and raw["sizeEstimate"] == len(report.raw)


def test_get_chinese_body_is_utf8(gmail: Any, emulator: Emulator) -> None:
    chinese = gmail.users().messages().get(userId="me", id=emulator.store.find("中文")[0].id).execute()
    assert decode_b64url(chinese["payload"]["body"]["data"]).decode("utf-8").strip() == CHINESE_TEXT


def test_fields_partial_responses(gmail: Any, emulator: Emulator) -> None:
    messages = gmail.users().messages()
    listing = messages.list(
        userId="me", maxResults=2, fields="messages(id,threadId),nextPageToken,resultSizeEstimate"
    ).execute()
    assert set(listing) == {"messages", "nextPageToken", "resultSizeEstimate"}
    assert _ids(messages.list(userId="me", maxResults=2, fields="messages/id").execute()) == _ids(listing)
    report = emulator.store.find("Quarterly report")[-1]
    picked = messages.get(
        userId="me", id=report.id, fields="id,threadId,snippet,internalDate,payload/headers"
    ).execute()
    assert set(picked) == {"id", "threadId", "snippet", "internalDate", "payload"}
    assert set(picked["payload"]) == {"headers"}
    nested = messages.get(userId="me", id=report.id, format="metadata", fields="payload(headers)").execute()
    assert set(nested) == {"payload"} and nested["payload"]["headers"]
    with pytest.raises(HttpError) as caught:
        messages.get(userId="me", id=report.id, fields="payload/nonsense").execute()
    assert _status(caught)[0] == 400
    with pytest.raises(HttpError) as caught:
        messages.list(userId="me", fields="messages(id").execute()
    assert _status(caught)[0] == 400


def test_attachment_round_trip(gmail: Any, emulator: Emulator) -> None:
    invoice = emulator.store.find("Invoice")[0]
    full = gmail.users().messages().get(userId="me", id=invoice.id).execute()
    pdf = next(part for part in full["payload"]["parts"] if part["filename"] == "invoice-42.pdf")
    attachment = (
        gmail.users()
        .messages()
        .attachments()
        .get(userId="me", messageId=invoice.id, id=pdf["body"]["attachmentId"])
        .execute()
    )
    assert decode_b64url(attachment["data"]) == PDF_BYTES and attachment["size"] == len(PDF_BYTES)
    with pytest.raises(HttpError) as caught:
        gmail.users().messages().attachments().get(userId="me", messageId=invoice.id, id="bogus").execute()
    assert _status(caught)[0] == 400


def test_unknown_and_malformed_ids(gmail: Any) -> None:
    messages = gmail.users().messages()
    with pytest.raises(HttpError) as caught:
        messages.get(userId="me", id="0123456789abcdef").execute()
    assert _status(caught) == (404, "notFound", "Requested entity was not found.")
    with pytest.raises(HttpError) as caught:
        messages.get(userId="me", id="not-an-id!").execute()
    assert _status(caught) == (400, "invalidArgument", "Invalid id value")
    with pytest.raises(HttpError) as caught:
        gmail.users().threads().get(userId="me", id="zzzz").execute()
    assert _status(caught)[:2] == (400, "invalidArgument")


def test_threads(gmail: Any, emulator: Emulator) -> None:
    report, reply = emulator.store.find("Quarterly report")[-1], emulator.store.find("Re: Quarterly")[0]
    thread = gmail.users().threads().get(userId="me", id=report.thread_id).execute()
    assert thread["id"] == report.thread_id and [m["id"] for m in thread["messages"]] == [report.id, reply.id]
    metadata = gmail.users().threads().get(userId="me", id=report.thread_id, format="metadata").execute()
    assert "headers" in metadata["messages"][0]["payload"]
    minimal = gmail.users().threads().get(userId="me", id=report.thread_id, format="minimal").execute()
    assert "payload" not in minimal["messages"][1]
    with pytest.raises(HttpError) as caught:
        gmail.users().threads().get(userId="me", id="0123456789abcdef").execute()
    assert _status(caught)[0] == 404


def test_labels_and_profile(gmail: Any, emulator: Emulator) -> None:
    labels = gmail.users().labels().list(userId="me").execute()["labels"]
    by_name = {label["name"]: label for label in labels}
    assert by_name["INBOX"]["type"] == "system" and by_name["Work"]["type"] == "user"
    assert by_name["Work"]["id"] == emulator.store.label_id("Work")
    inbox = gmail.users().labels().get(userId="me", id="INBOX").execute()
    inbox_messages = [m for m in emulator.store.messages if "INBOX" in m.label_ids]
    assert inbox["messagesTotal"] == len(inbox_messages)
    assert inbox["messagesUnread"] == sum("UNREAD" in m.label_ids for m in inbox_messages)
    assert inbox["threadsTotal"] == len({m.thread_id for m in inbox_messages})
    profile = gmail.users().getProfile(userId="me").execute()
    assert profile == {
        "emailAddress": OWNER,
        "messagesTotal": len(emulator.store.messages),
        "threadsTotal": len(emulator.store.threads),
        "historyId": str(emulator.store.history_id),
    }
    assert gmail.users().getProfile(userId=OWNER).execute()["emailAddress"] == OWNER
    with pytest.raises(HttpError) as caught:
        gmail.users().getProfile(userId="someone@else.example").execute()
    assert _status(caught)[0] == 403


def test_max_results_clamps_to_500(make_emulator: Callable[..., Emulator], tmp_path: Path) -> None:
    lines = [
        f"From MAILER Mon Jan  1 00:00:00 2024\nFrom: bulk@x\nSubject: n{i}\n"
        f"Date: Mon, 01 Jan 2024 00:{i // 60 % 60:02d}:{i % 60:02d} +0000\n\nbody {i}\n"
        for i in range(510)
    ]
    (tmp_path / "big.mbox").write_text("".join(lines))
    big = make_emulator(tmp_path / "big.mbox")
    service = gmail_service(big, big.write_token(tmp_path / "token.json"))
    first = service.users().messages().list(userId="me", maxResults=1000).execute()
    assert len(first["messages"]) == 500 and first["resultSizeEstimate"] == 510
    rest = service.users().messages().list(userId="me", maxResults=1000, pageToken=first["nextPageToken"])
    assert len(rest.execute()["messages"]) == 10


def test_keep_alive_reuses_one_connection(emulator: Emulator, tmp_path: Path) -> None:
    before = emulator.info()["connections_accepted"]
    service = gmail_service(emulator, emulator.write_token(tmp_path / "token.json"))
    for _ in range(5):
        service.users().getProfile(userId="me").execute()  # one /token + five API calls
    assert emulator.info()["connections_accepted"] - before == 1


def test_emulator_bug_answers_500_not_a_dropped_connection(
    gmail: Any, emulator: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(emulator.app.api, "handle", broken)
    with pytest.raises(HttpError) as caught:
        gmail.users().getProfile(userId="me").execute()
    assert _status(caught)[:2] == (500, "backendError")


def test_thread_formats_and_metadata_headers(gmail: Any, emulator: Emulator) -> None:
    report = emulator.store.find("Quarterly report")[-1]
    threads = gmail.users().threads()
    full = threads.get(userId="me", id=report.thread_id).execute()
    assert set(full) == {"id", "historyId", "messages"} and full["messages"][0]["payload"]["partId"] == ""
    picked = threads.get(
        userId="me", id=report.thread_id, format="metadata", metadataHeaders=["From", "References"]
    ).execute()
    names = [{h["name"] for h in m["payload"]["headers"]} for m in picked["messages"]]
    assert names == [{"From"}, {"From", "References"}]  # only the headers asked for, where present
    assert "body" not in picked["messages"][0]["payload"] and "parts" not in picked["messages"][0]["payload"]
    minimal = threads.get(userId="me", id=report.thread_id, format="minimal").execute()
    assert all("payload" not in m and m["labelIds"] for m in minimal["messages"])
    assert [m["internalDate"] for m in minimal["messages"]] == sorted(m["internalDate"] for m in minimal["messages"])
    with pytest.raises(TypeError):  # the client knows threads.get has no raw format; so does the emulator:
        threads.get(userId="me", id=report.thread_id, format="raw")


def test_user_label_counts_come_from_labels_get_in_a_batch(gmail: Any, emulator: Emulator) -> None:
    from googleapiclient.http import BatchHttpRequest

    work, receipts = emulator.store.label_id("Work"), emulator.store.label_id("Receipts/2024")
    listed = gmail.users().labels().list(userId="me").execute()["labels"]
    assert all("messagesTotal" not in label for label in listed)  # labels.list carries no counts, as in Gmail
    answers: dict[str, Any] = {}
    batch = BatchHttpRequest(
        callback=lambda request_id, response, error: answers.update({request_id: response or error}),
        batch_uri=emulator.url + "/batch/gmail/v1",
    )
    for label_id in (work, receipts, "STARRED"):
        batch.add(gmail.users().labels().get(userId="me", id=label_id), request_id=label_id)
    batch.execute()
    tagged = {label_id: [m for m in emulator.store.messages if label_id in m.label_ids] for label_id in answers}
    for label_id, answer in answers.items():
        assert answer["messagesTotal"] == len(tagged[label_id]) > 0, label_id
        assert answer["messagesUnread"] == sum("UNREAD" in m.label_ids for m in tagged[label_id])
    assert answers[receipts]["name"] == "Receipts/2024" and answers[receipts]["type"] == "user"


def test_attachment_ids_change_on_every_fetch_and_each_one_works(gmail: Any, emulator: Emulator) -> None:
    invoice = emulator.store.find("Invoice")[0]

    def attachment_id() -> str:
        full = gmail.users().messages().get(userId="me", id=invoice.id).execute()
        return next(p for p in full["payload"]["parts"] if p["filename"] == "invoice-42.pdf")["body"]["attachmentId"]

    first, second = attachment_id(), attachment_id()
    assert first != second
    for token in (first, second):
        got = gmail.users().messages().attachments().get(userId="me", messageId=invoice.id, id=token).execute()
        assert decode_b64url(got["data"]) == PDF_BYTES
    other = emulator.store.find("Quarterly report")[-1]
    with pytest.raises(HttpError) as caught:  # an attachment id is bound to its message
        gmail.users().messages().attachments().get(userId="me", messageId=other.id, id=first).execute()
    assert _status(caught)[0] == 400
