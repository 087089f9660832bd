"""Every fault kind, the concurrency limit, the request log, and the HTTP control plane."""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from googleapiclient.errors import HttpError
from googleapiclient.http import BatchHttpRequest

from server.emulator import Emulator
from server.tests.support.emulator import control, gmail_service

PROFILE = "/gmail/v1/users/me/profile"


@pytest.fixture
def token_file(emulator: Emulator, tmp_path: Path) -> Path:
    return emulator.write_token(tmp_path / "token.json")


@pytest.fixture
def gmail(emulator: Emulator, token_file: Path) -> Any:
    service = gmail_service(emulator, token_file)
    service.users().getProfile(userId="me").execute()  # refresh up front so faults hit the API calls
    return service


def _error(caught: pytest.ExceptionInfo[HttpError]) -> dict[str, Any]:
    return json.loads(caught.value.content)["error"]


def _settled(emulator: Emulator, timeout_s: float = 2.0) -> list[dict[str, Any]]:
    """The log once no entry is in flight (hung or aborted requests finish a moment after the client)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        entries = emulator.requests()
        if all(entry["duration_ms"] is not None for entry in entries):
            return entries
        time.sleep(0.01)
    raise AssertionError("requests still in flight")


def test_status_fault_with_retry_after(emulator: Emulator, gmail: Any) -> None:
    emulator.add_fault(status=429, retry_after=7, path_regex="/profile$", count=2)
    for _ in range(2):
        with pytest.raises(HttpError) as caught:
            gmail.users().getProfile(userId="me").execute()
        assert caught.value.resp.status == 429 and caught.value.resp["retry-after"] == "7"
        error = _error(caught)
        assert error["errors"][0]["reason"] == "rateLimitExceeded" and error["status"] == "RESOURCE_EXHAUSTED"
        assert error["errors"][0]["domain"] == "usageLimits"
    assert gmail.users().getProfile(userId="me").execute()["emailAddress"]  # count used up


def test_status_fault_custom_reason_and_method_match(emulator: Emulator, gmail: Any) -> None:
    emulator.add_fault(status=403, reason="dailyLimitExceeded", message="Daily Limit Exceeded", method="POST")
    assert gmail.users().getProfile(userId="me").execute()  # GET does not match
    emulator.reset()
    emulator.add_fault(status=403, reason="dailyLimitExceeded", message="Daily Limit Exceeded", method="GET")
    with pytest.raises(HttpError) as caught:
        gmail.users().labels().list(userId="me").execute()
    assert _error(caught)["errors"][0] == {
        "message": "Daily Limit Exceeded",
        "domain": "usageLimits",
        "reason": "dailyLimitExceeded",
    }
    for code, reason in ((500, "backendError"), (503, "backendError"), (400, "badRequest")):
        emulator.add_fault(status=code)
        with pytest.raises(HttpError) as caught:
            gmail.users().getProfile(userId="me").execute()
        assert (caught.value.resp.status, _error(caught)["errors"][0]["reason"]) == (code, reason)


def test_latency_fault_only_on_matching_requests(emulator: Emulator, gmail: Any) -> None:
    fault = emulator.add_fault(latency_ms=150, path_regex="/labels$")
    gmail.users().getProfile(userId="me").execute()
    started = time.perf_counter()
    gmail.users().labels().list(userId="me").execute()
    assert time.perf_counter() - started >= 0.15
    profile, labels = emulator.requests()[-2:]
    assert profile["fault"] is None and labels["fault"] == fault["id"]
    assert labels["duration_ms"] >= 150


def test_hang_until_client_gives_up(emulator: Emulator, token_file: Path) -> None:
    impatient = gmail_service(emulator, token_file, timeout=0.3)
    impatient.users().getProfile(userId="me").execute()
    emulator.add_fault(hang=True, path_regex="/labels$")
    with pytest.raises(TimeoutError):  # the hang is endless: only the client's timeout ends the call
        impatient.users().labels().list(userId="me").execute()
    hung = _settled(emulator)[-1]
    assert hung["path"].endswith("/labels") and hung["status"] is None
    assert hung["duration_ms"] >= 250  # settled: the server noticed the client leave (an endless hang never settles)


def test_hang_with_a_cap_drops_the_connection(emulator: Emulator, gmail: Any) -> None:
    emulator.add_fault(hang=0.1, path_regex="/labels$", count=2)  # httplib2 retries a dropped connection once
    with pytest.raises(Exception) as caught:
        gmail.users().labels().list(userId="me").execute()
    assert not isinstance(caught.value, HttpError)


def test_reset_fault_resets_the_connection(emulator: Emulator, gmail: Any) -> None:
    emulator.add_fault(reset=True, path_regex="/labels$")
    with pytest.raises(ConnectionResetError):
        gmail.users().labels().list(userId="me").execute()
    assert gmail.users().labels().list(userId="me").execute()["labels"]  # client reconnects
    assert [e["status"] for e in _settled(emulator)[-2:]] == [None, 200]


def test_concurrency_limit_on_single_requests(emulator: Emulator, gmail: Any, token_file: Path) -> None:
    emulator.set_concurrency_limit(1)
    emulator.add_fault(latency_ms=400, path_regex="/labels$")
    other = gmail_service(emulator, token_file)
    other.users().getProfile(userId="me").execute()
    slow = threading.Thread(target=lambda: gmail.users().labels().list(userId="me").execute())
    slow.start()
    deadline = time.monotonic() + 2
    while emulator.info()["in_flight"] == 0 and time.monotonic() < deadline:
        time.sleep(0.005)
    with pytest.raises(HttpError) as caught:
        other.users().getProfile(userId="me").execute()
    slow.join()
    assert caught.value.resp.status == 429
    assert _error(caught)["message"] == "Too many concurrent requests for user"
    assert other.users().getProfile(userId="me").execute()  # slot free again


def test_global_latency_is_per_outer_round_trip(make_emulator: Callable[..., Emulator], tmp_path: Path) -> None:
    slow = make_emulator(latency_ms=100)
    gmail = gmail_service(slow, slow.write_token(tmp_path / "token.json"))
    started = time.perf_counter()
    gmail.users().getProfile(userId="me").execute()  # /token + profile: two round trips
    assert time.perf_counter() - started >= 0.2
    batch = BatchHttpRequest(batch_uri=slow.url + "/batch/gmail/v1")
    for message in slow.store.messages[:5]:
        batch.add(gmail.users().messages().get(userId="me", id=message.id, format="minimal"))
    batch.execute(http=gmail._http)
    outer = slow.requests()[-1]
    # One latency for five parts: a latency per part would take 500 ms at the least.
    assert outer["batch_parts"] == 5 and 100 <= outer["duration_ms"] < 500


def test_request_log_entries(emulator: Emulator, gmail: Any) -> None:
    gmail.users().messages().list(userId="me", q="in:inbox", maxResults=3).execute()
    entry = emulator.requests()[-1]
    assert entry["method"] == "GET" and entry["path"] == "/gmail/v1/users/me/messages"
    assert "q=in%3Ainbox" in entry["query"] and "maxResults=3" in entry["query"]
    assert entry["status"] == 200 and entry["batch_parts"] is None and entry["parts"] == []
    assert entry["duration_ms"] >= 0 and entry["started_at"] > 1_600_000_000
    assert emulator.requests(since=entry["seq"]) == []
    seqs = [e["seq"] for e in emulator.requests()]
    assert seqs == sorted(seqs)


def test_http_control_plane(emulator: Emulator, gmail: Any) -> None:
    fault = control(emulator, "POST", "faults", {"match": {"path_regex": "/labels$"}, "count": 1, "status": 500})
    assert fault["fault"]["remaining"] == 1 and fault["fault"]["status"] == 500
    assert len(control(emulator, "GET", "faults")["faults"]) == 1
    with pytest.raises(HttpError):
        gmail.users().labels().list(userId="me").execute()
    log = control(emulator, "GET", "requests")["requests"]
    assert log[-1]["status"] == 500 and log[-1]["fault"] == fault["fault"]["id"]
    assert control(emulator, "POST", "concurrency-limit", {"limit": 3}) == {"limit": 3}
    assert control(emulator, "GET", "info")["concurrency_limit"] == 3
    assert control(emulator, "POST", "expire-tokens") == {"ok": True}
    assert control(emulator, "POST", "revoke") == {"ok": True}
    assert control(emulator, "POST", "reset") == {"ok": True}
    assert control(emulator, "GET", "requests") == {"requests": []}
    assert control(emulator, "GET", "info")["concurrency_limit"] is None
    assert gmail.users().getProfile(userId="me").execute()  # refresh works again after reset
    for bad in ({"count": 1}, {"status": 200}, {"status": 500, "bogus": 1}, {"reset": True, "count": 0}):
        with pytest.raises(urllib.error.HTTPError) as caught:
            control(emulator, "POST", "faults", bad)
        assert caught.value.code == 400
    with pytest.raises(urllib.error.HTTPError) as caught:
        control(emulator, "GET", "nothing-here")
    assert caught.value.code == 404


def test_unknown_paths_and_unsupported_writes(emulator: Emulator, gmail: Any) -> None:
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(emulator.url + "/nowhere", timeout=5)
    assert caught.value.code == 404
    assert json.loads(caught.value.read())["error"]["status"] == "NOT_FOUND"
    with pytest.raises(HttpError) as raised:
        # messages.batchDelete (a permanent delete of many) is not emulated: no tool of this server needs it.
        gmail.users().messages().batchDelete(userId="me", body={"ids": [emulator.store.messages[0].id]}).execute()
    assert raised.value.resp.status == 405
