"""Batch requests through googleapiclient.http.BatchHttpRequest, the format the real client speaks."""

from __future__ import annotations

import json
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from googleapiclient.errors import HttpError
from googleapiclient.http import BatchHttpRequest

from server.emulator import CLIENT_ID, CLIENT_SECRET, REFRESH_TOKEN, Emulator
from server.tests.support.emulator import gmail_service


@pytest.fixture
def gmail(emulator: Emulator, tmp_path: Path) -> Any:
    return gmail_service(emulator, emulator.write_token(tmp_path / "token.json"))


def _run_batch(emulator: Emulator, gmail: Any, requests: list[Any]) -> dict[str, tuple[Any, Any]]:
    results: dict[str, tuple[Any, Any]] = {}

    def collect(request_id: str, response: Any, exception: Any) -> None:
        results[request_id] = (response, exception)

    batch = BatchHttpRequest(callback=collect, batch_uri=emulator.url + "/batch/gmail/v1")
    for request in requests:
        batch.add(request)
    batch.execute(http=gmail._http)
    return results


def test_batch_get_metadata_with_a_404_part(emulator: Emulator, gmail: Any) -> None:
    gmail.users().getProfile(userId="me").execute()  # token in hand, so the batch is one round trip
    wanted = [m.id for m in emulator.store.messages[:5]] + ["0123456789abcdef"]
    requests = [
        gmail.users().messages().get(userId="me", id=i, format="metadata", metadataHeaders=["Subject"]) for i in wanted
    ]
    before = len(emulator.requests())
    results = _run_batch(emulator, gmail, requests)
    assert len(results) == 6
    for index, message_id in enumerate(wanted[:5]):
        response, exception = results[str(index + 1)]
        assert exception is None and response["id"] == message_id
        assert [h["name"] for h in response["payload"]["headers"]] == ["Subject"]
    response, exception = results["6"]
    assert response is None and isinstance(exception, HttpError) and exception.resp.status == 404
    assert json.loads(exception.content)["error"]["errors"][0]["reason"] == "notFound"
    log = emulator.requests()[before:]
    assert [(e["path"], e["batch_parts"]) for e in log] == [("/batch/gmail/v1", 6)]
    assert [p["status"] for p in log[0]["parts"]] == [200] * 5 + [404]


def test_batch_on_bare_batch_path_and_mixed_resources(emulator: Emulator, gmail: Any) -> None:
    message = emulator.store.messages[0]
    results: dict[str, Any] = {}
    batch = BatchHttpRequest(callback=lambda i, r, e: results.update({i: (r, e)}), batch_uri=emulator.url + "/batch")
    batch.add(gmail.users().labels().list(userId="me"), request_id="labels")
    batch.add(gmail.users().threads().get(userId="me", id=message.thread_id, format="minimal"), request_id="t")
    batch.add(gmail.users().messages().list(userId="me", maxResults=3, q="in:inbox"), request_id="list")
    batch.execute(http=gmail._http)
    assert results["labels"][0]["labels"] and results["t"][0]["id"] == message.thread_id
    assert len(results["list"][0]["messages"]) == 3


def test_batch_refreshes_expired_parts(emulator: Emulator, gmail: Any) -> None:
    gmail.users().getProfile(userId="me").execute()
    emulator.expire_access_tokens()
    before = len(emulator.requests())
    results = _run_batch(emulator, gmail, [gmail.users().messages().get(userId="me", id=emulator.store.messages[0].id)])
    assert results["1"][1] is None and results["1"][0]["id"] == emulator.store.messages[0].id
    paths = [e["path"] for e in emulator.requests()[before:]]
    assert paths == ["/batch/gmail/v1", "/token", "/batch/gmail/v1"]  # 401 part -> refresh -> resend


def test_batch_part_faults_are_per_part(emulator: Emulator, gmail: Any) -> None:
    gmail.users().getProfile(userId="me").execute()
    target = emulator.store.messages[1].id
    emulator.add_fault(status=503, path_regex=f"/messages/{target}$")
    ids = [emulator.store.messages[0].id, target]
    results = _run_batch(emulator, gmail, [gmail.users().messages().get(userId="me", id=i) for i in ids])
    assert results["1"][1] is None
    assert results["2"][1].resp.status == 503


def test_batch_over_100_parts_fails_whole(emulator: Emulator, gmail: Any) -> None:
    gmail.users().getProfile(userId="me").execute()
    request_ids = [m.id for m in emulator.store.messages] * 3
    requests = [gmail.users().messages().get(userId="me", id=i, format="minimal") for i in request_ids[:101]]
    with pytest.raises(HttpError) as caught:
        _run_batch(emulator, gmail, requests)
    assert caught.value.resp.status == 400
    results = _run_batch(emulator, gmail, requests[:100])
    assert len(results) == 100 and all(e is None for _, e in results.values())


def test_concurrency_limit_applies_to_batch_parts(emulator: Emulator, gmail: Any) -> None:
    gmail.users().getProfile(userId="me").execute()
    emulator.set_concurrency_limit(2)
    ids = [m.id for m in emulator.store.messages[:4]]
    results = _run_batch(emulator, gmail, [gmail.users().messages().get(userId="me", id=i) for i in ids])
    statuses = [200 if results[str(n)][1] is None else results[str(n)][1].resp.status for n in range(1, 5)]
    assert statuses == [200, 200, 429, 429]
    reason = json.loads(results["3"][1].content)["error"]
    assert reason["message"] == "Too many concurrent requests for user" and reason["code"] == 429


def test_raw_crlf_batch_framing(emulator: Emulator) -> None:
    form = urllib.parse.urlencode(
        {
            "grant_type": "refresh_token",
            "client_id": CLIENT_ID,
            "client_secret": CLIENT_SECRET,
            "refresh_token": REFRESH_TOKEN,
        }
    ).encode()
    with urllib.request.urlopen(emulator.token_uri, data=form, timeout=5) as response:
        token = json.loads(response.read())["access_token"]
    message_id = emulator.store.messages[0].id
    parts = [
        ("abc + 1", f"GET /gmail/v1/users/me/messages/{message_id}?format=minimal HTTP/1.1", token),
        ("abc + 2", "GET /gmail/v1/users/me/profile HTTP/1.1", "expired-or-foreign"),
    ]
    body = (
        "".join(
            f"--XYZ\r\nContent-Type: application/http\r\nContent-ID: <{cid}>\r\n\r\n"
            f"{line}\r\nauthorization: Bearer {bearer}\r\n\r\n\r\n"
            for cid, line, bearer in parts
        )
        + "--XYZ--\r\n"
    )
    request = urllib.request.Request(
        emulator.url + "/batch/gmail/v1",
        data=body.encode(),
        headers={"Content-Type": 'multipart/mixed; boundary="XYZ"'},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=5) as response:
        content_type = response.headers["Content-Type"]
        payload = response.read().decode()
        assert int(response.headers["Content-Length"]) == len(payload.encode())
    boundary = content_type.split("boundary=")[1]
    chunks = [c for c in payload.split("--" + boundary) if c.strip() not in ("", "--")]
    assert len(chunks) == 2
    assert "Content-ID: <response-abc + 1>" in chunks[0]
    assert "\r\nHTTP/1.1 200 OK\r\nContent-Type: application/json; charset=UTF-8\r\n" in chunks[0]
    assert json.loads(chunks[0].split("\r\n\r\n", 2)[2])["id"] == message_id
    assert "Content-ID: <response-abc + 2>" in chunks[1] and "HTTP/1.1 401 Unauthorized" in chunks[1]
