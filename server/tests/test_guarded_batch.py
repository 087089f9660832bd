"""The guarded batch is googleapiclient's BatchHttpRequest, but for a part missing from the answer (a 503 for that
part, not a KeyError for all). Its refresh of a 401 part: test_gmail_client.py. Part templates: `requests_per_id`."""

from __future__ import annotations

import functools
import json
from typing import Any

import httplib2
import pytest
from googleapiclient.errors import BatchError
from googleapiclient.http import BatchHttpRequest

from server.emulator.batch import PartResponse, render_batch
from server.gmail.batch import MISSING_PART_BODY, GuardedBatch, is_compatible
from server.gmail.sessions import Session as _Session
from server.tests.support.fake_gmail import StaticCredentials, metadata_resource

BASE_ID = "0b7e3c1e-1111-4222-8333-944455556666"
guarded_batch = functools.partial(GuardedBatch, refresh_request=None)


class Recorder:
    """An httplib2 stand-in that records the batch POST and answers with a canned multipart body."""

    def __init__(self, answer: tuple[dict[str, str], str | bytes]) -> None:
        self.answer = answer
        self.sent: dict[str, Any] = {}

    def request(self, uri: str, method: str = "GET", body: Any = None, headers: Any = None, **_: Any) -> Any:
        self.sent = {"uri": uri, "method": method, "body": body, "headers": dict(headers or {})}
        head, content = self.answer
        return httplib2.Response(head), content if isinstance(content, bytes) else content.encode()


def run(batch_class: Any, answer: Any, ids: list[str]) -> tuple[dict[str, Any], dict[str, Any]]:
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


def emulator_answer(ids: list[str], *, left_out: tuple[str, ...] = ()) -> tuple[dict[str, str], bytes]:
    parts = [
        (f"{BASE_ID} + {mid}", PartResponse(200, json.dumps(metadata_resource(mid)).encode()))
        for mid in ids
        if mid not in left_out
    ]
    parts.append((f"{BASE_ID} + post", PartResponse(404, b'{"error": {"code": 404, "message": "Not Found"}}')))
    content_type, body = render_batch(parts)
    return {"status": "200", "content-type": content_type}, body


def test_a_whole_answer_is_read_as_the_library_reads_it():
    ids = ["a1", "b2", "c3"]
    library_sent, library = run(BatchHttpRequest, emulator_answer(ids), ids)
    sent, guarded = run(guarded_batch, emulator_answer(ids), ids)
    assert guarded == library and set(guarded) == {*ids, "post"}
    assert sent["uri"] == library_sent["uri"] and "content-length: 28" in sent["body"]  # the library's own body


def test_a_part_missing_from_the_answer_is_a_503_for_that_part_not_a_keyerror_for_the_batch():
    ids = ["a1", "b2", "c3"]
    _, library = run(BatchHttpRequest, emulator_answer(ids, left_out=("b2",)), ids)
    _, guarded = run(guarded_batch, emulator_answer(ids, left_out=("b2",)), ids)
    assert library == {"raised": KeyError}  # what the fix is for
    assert guarded["b2"][1] == 503 and guarded["b2"][4] == MISSING_PART_BODY
    assert {key: value for key, value in guarded.items() if key != "b2"}.keys() == {"a1", "c3", "post"}


def test_a_non_batch_answer_fails_as_the_librarys_does():
    answer = ({"status": "200", "content-type": "application/json"}, "{}")
    assert run(guarded_batch, answer, ["a1"])[1] == run(BatchHttpRequest, answer, ["a1"])[1] == {"raised": BatchError}


def test_this_googleapiclient_has_what_the_guarded_batch_overrides():
    assert is_compatible()


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
