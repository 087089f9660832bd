"""Unit tests for the pieces the reliability suites added: the single-attempt token request, the answers to
malformed stdin lines, and the caps on what a hostile message can put in a result.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import mcp_types as types
import pytest
from pydantic import ValidationError

from server.errors import AuthError, TransientError
from server.protocol.stdio_guard import error_for_malformed
from server.runtime.config import load_settings
from server.tests.support.fake_gmail import json_response, token_store
from server.toolsets.common import MAX_ITEM_FIELD_CHARS, bounded
from server.toolsets.messages.search import summarize_metadata


@pytest.fixture
def settings(tmp_path):
    settings = load_settings(env={"GMAIL_TOKEN_PATH": str(tmp_path / "token.json")}, dotenv=False)
    expired = (datetime.utcnow() - timedelta(hours=2)).replace(microsecond=0).isoformat()
    settings.token_path.write_text(
        json.dumps({"client_id": "c", "client_secret": "s", "refresh_token": "r", "token": "old", "expiry": expired})
    )
    return settings


@pytest.mark.parametrize("status", [429, 500, 503, 504])
def test_a_failing_token_endpoint_is_asked_once_not_three_times_with_sleeps(settings, monkeypatch, status):
    from google.auth import _exponential_backoff

    sleeps: list[float] = []
    monkeypatch.setattr(_exponential_backoff.time, "sleep", sleeps.append)
    store, mock = token_store(settings, [json_response({"error": "server_error"}, status)] * 3)
    with pytest.raises(TransientError):
        store.get()
    assert len(mock.request_sequence) == 1 and sleeps == []  # the client's own retry loop decides what next


def test_invalid_grant_still_reaches_the_seven_day_explanation(settings):
    store, _ = token_store(settings, [json_response({"error": "invalid_grant"}, 400)])
    with pytest.raises(AuthError) as caught:
        store.get()
    assert "7 days" in caught.value.message


def parse_failure(line: str) -> Exception:
    try:
        types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValidationError as exc:
        return exc
    raise AssertionError(f"{line!r} parsed")


@pytest.mark.parametrize(
    "line, code",
    [
        ("not json", -32700),
        ('{"jsonrpc": "2.0", "id": 1, "meth', -32700),
        ("[]", -32600),
        ("42", -32600),
        ('{"jsonrpc": "1.0", "id": 1, "method": "ping"}', -32600),
        ('{"jsonrpc": "2.0", "id": 1}', -32600),
    ],
)
def test_malformed_lines_get_the_json_rpc_error_the_spec_names(line, code):
    answer = error_for_malformed(parse_failure(line))
    assert answer is not None and answer.id is None and answer.error.code == code
    assert line[:5] not in answer.error.message  # the input is never echoed


@pytest.mark.parametrize("line", ["", "   ", "\t\r"])
def test_blank_lines_are_not_answered(line):
    assert error_for_malformed(parse_failure(line)) is None


def test_any_other_transport_exception_is_an_invalid_request():
    answer = error_for_malformed(UnicodeDecodeError("utf-8", b"\xff", 0, 1, "bad"))
    assert answer is not None and answer.error.code == -32600


def test_bounded_cuts_and_says_how_much():
    assert bounded(None) is None and bounded("short") == "short"
    assert bounded("x" * 10, 4) == "xxxx… [6 more characters]"


def test_a_search_line_stays_small_whatever_the_headers_hold():
    resource = {
        "id": "m1",
        "threadId": "t1",
        "snippet": "s" * 10_000,
        "payload": {
            "headers": [
                {"name": "From", "value": ", ".join(f'"{"N" * 900}" <u{n}@example.com>' for n in range(2_000))},
                {"name": "Subject", "value": "S" * 1_000_000},
            ]
        },
    }
    item = summarize_metadata({"id": "m1", "threadId": "t1"}, resource)
    limit = MAX_ITEM_FIELD_CHARS + 30
    assert len(item.subject or "") < limit and len(item.snippet or "") < limit and len(item.from_name or "") < limit
