"""The lean batch writes and reads exactly what googleapiclient's BatchHttpRequest does, without `email`."""

from __future__ import annotations

import json
import re
from typing import Any

import httplib2
import pytest
from googleapiclient.errors import BatchError
from googleapiclient.http import BatchHttpRequest

from server.emulator.batch import PartResponse, render_batch
from server.gmail.batch import LeanBatchHttpRequest, split_batch_answer
from server.gmail.sessions import Session as _Session
from server.tests.support.fake_gmail import StaticCredentials, batch_response, metadata_resource

BASE_ID = "0b7e3c1e-1111-4222-8333-944455556666"


class Recorder:
    """An httplib2 stand-in that records the batch POST and answers with a canned multipart body."""

    def __init__(self, answer: tuple[dict[str, str], str | bytes]) -> None:
        self.answer = answer
        self.sent: dict[str, Any] = {}

    def request(self, uri: str, method: str = "GET", body: Any = None, headers: Any = None, **_: Any) -> Any:
        self.sent = {"uri": uri, "method": method, "body": body, "headers": dict(headers or {})}
        head, content = self.answer
        return httplib2.Response(head), content if isinstance(content, bytes) else content.encode()


def run(batch_class: type[BatchHttpRequest], answer: Any, ids: list[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Sends a metadata get per id plus one POST-with-body through `batch_class`; returns (sent, parsed parts)."""
    http = Recorder(answer)
    session = _Session(StaticCredentials().credentials, http, "http://127.0.0.1:9")
    batch = batch_class(callback=lambda *_: None, batch_uri="http://127.0.0.1:9/batch/gmail/v1")
    batch._base_id = BASE_ID
    for message_id in ids:
        batch.add(
            session.messages.get(userId="me", id=message_id, format="metadata", metadataHeaders=["From"]),
            request_id=message_id,
        )
    batch.add(session.messages.modify(userId="me", id="m9", body={"addLabelIds": ["STARRED"]}), request_id="post")
    try:
        batch.execute(http=session.http)
    except Exception as exc:  # both classes must fail alike
        return http.sent, {"raised": type(exc)}
    parsed = {
        request_id: (dict(response), response.status, response.reason, response.version, content)
        for request_id, (response, content) in batch._responses.items()
    }
    return http.sent, parsed


def emulator_answer(ids: list[str]) -> tuple[dict[str, str], bytes]:
    parts = [(f"{BASE_ID} + {mid}", PartResponse(200, json.dumps(metadata_resource(mid)).encode())) for mid in ids]
    parts.append((f"{BASE_ID} + post", PartResponse(404, b'{"error": {"code": 404, "message": "Not Found"}}')))
    content_type, body = render_batch(parts)
    return {"status": "200", "content-type": content_type}, body


def fake_answer(ids: list[str]) -> tuple[dict[str, str], str]:
    head, body = batch_response({mid: (200, metadata_resource(mid)) for mid in ids} | {"post": (429, {"x": 1})})
    return head, body.replace("response-x", f"response-{BASE_ID}")  # type: ignore[union-attr]


def test_request_body_is_the_librarys_byte_for_byte():
    ids = ["a1", "b2", "c3"]
    library, _ = run(BatchHttpRequest, emulator_answer(ids), ids)
    lean, _ = run(LeanBatchHttpRequest, emulator_answer(ids), ids)

    def normalized(sent: dict[str, Any]) -> tuple[str, str]:
        boundary = re.search(r'boundary="([^"]+)"', sent["headers"]["content-type"]).group(1)
        return sent["body"].replace(boundary, "B"), sent["headers"]["content-type"].replace(boundary, "B")

    assert normalized(lean) == normalized(library)
    assert lean["uri"] == library["uri"] and "content-length: 28" in lean["body"]  # the POST part keeps its body


@pytest.mark.parametrize("answer", [emulator_answer, fake_answer], ids=["emulator-crlf", "fake-gmail"])
def test_answers_are_read_exactly_as_the_library_reads_them(answer):
    ids = ["a1", "b2", "c3"]
    _, library = run(BatchHttpRequest, answer(ids), ids)
    _, lean = run(LeanBatchHttpRequest, answer(ids), ids)
    assert lean == library and set(lean) == {*ids, "post"}


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("multipart/mixed", "--x\r\nContent-ID: <a + 1>\r\n\r\nHTTP/1.1 200 OK\r\n\r\n{}\r\n--x--"),  # no boundary
        ("text/plain", "not a batch"),
        ("multipart/mixed; boundary=x", "--x\r\nContent-ID: <a + 1>\r\n\r\nHTTP/1.1 200 OK\r\n\r\n{}\r\n"),  # unclosed
        ("multipart/mixed; boundary=x", "--x\r\nContent-Type: application/http\r\n\r\nbody\r\n--x--"),  # no id
    ],
)
def test_anything_unusual_is_left_to_the_librarys_parser(content_type, body):
    assert split_batch_answer(content_type, body) is None
    answer = ({"status": "200", "content-type": content_type}, body)
    _, library = run(BatchHttpRequest, answer, ["a1"])
    _, lean = run(LeanBatchHttpRequest, answer, ["a1"])
    assert lean == library


def test_a_non_batch_answer_fails_the_same_way():
    answer = ({"status": "200", "content-type": "application/json"}, "{}")
    _, lean = run(LeanBatchHttpRequest, answer, ["a1"])
    assert lean == {"raised": BatchError}


@pytest.mark.parametrize("ids", [["m1"], ["18c2f0a1b2c3d4e5", "a_b-C", "m3"], []])
def test_requests_built_once_and_copied_equal_requests_built_per_id(ids):
    from server.gmail.batch import requests_per_id

    session = _Session(StaticCredentials().credentials, Recorder(({}, "")), "http://127.0.0.1:9")
    params = {"userId": "me", "format": "metadata", "metadataHeaders": ["From", "Subject"], "fields": "id,snippet"}
    copied = requests_per_id(lambda message_id: session.messages.get(id=message_id, **params), ids)
    built = [session.messages.get(id=message_id, **params) for message_id in ids]
    shape = lambda request: (request.uri, request.method, request.headers, request.body, request.methodId)  # noqa: E731
    assert [shape(request) for request in copied] == [shape(request) for request in built]
    if len(copied) > 1:  # each part owns its headers: credentials applied to one never leak into another
        copied[0].headers["authorization"] = "Bearer x"
        assert "authorization" not in copied[1].headers
