"""Canned Gmail answers for `googleapiclient.http.HttpMockSequence`: the real client stack, no network.

Tests build a `GmailClient` whose every thread talks to one HttpMockSequence, then assert on what the client
sent (`mock.request_sequence`) and on what the tools made of the answers.
"""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from googleapiclient.http import HttpMockSequence

from server.auth import TokenStore
from server.gmail_client import GmailClient
from server.runtime.config import Settings, load_settings
from server.runtime.observability import Metrics

Response = tuple[dict[str, str], bytes | str]
BATCH_BOUNDARY = "batch_test_boundary"


def json_response(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return (
        {"status": str(status), "content-type": "application/json; charset=UTF-8", **(headers or {})},
        json.dumps(body),
    )


def gmail_error(status: int, reason: str, message: str, headers: dict[str, str] | None = None) -> Response:
    body = {
        "error": {
            "code": status,
            "message": message,
            "errors": [{"message": message, "domain": "global", "reason": reason}],
            "status": "X",
        }
    }
    return json_response(body, status, headers)


def list_page(ids: list[str], next_token: str | None = None, estimate: int | None = None) -> Response:
    body: dict[str, Any] = {"resultSizeEstimate": estimate if estimate is not None else len(ids)}
    if ids:
        body["messages"] = [{"id": mid, "threadId": f"t{mid}"} for mid in ids]
    if next_token:
        body["nextPageToken"] = next_token
    return json_response(body)


def metadata_resource(
    message_id: str,
    *,
    sender: str = "Alice Example <alice@example.com>",
    subject: str | None = None,
    date: str = "Tue, 3 Nov 2026 09:15:00 +0100",
    snippet: str = "Hello there",
) -> dict[str, Any]:
    return {
        "id": message_id,
        "threadId": f"t{message_id}",
        "snippet": snippet,
        "internalDate": "1793693700000",
        "payload": {
            "headers": [
                {"name": "From", "value": sender},
                {"name": "Subject", "value": subject or f"Subject {message_id}"},
                {"name": "Date", "value": date},
            ]
        },
    }


def batch_response(parts: dict[str, tuple[int, Any]]) -> Response:
    """A multipart/mixed batch answer in the format BatchHttpRequest parses (CRLF inside each part)."""
    chunks = []
    for request_id, (status, body) in parts.items():
        reason = "OK" if status == 200 else "Error"
        inner = f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n{json.dumps(body)}"
        chunks.append(
            f"--{BATCH_BOUNDARY}\r\nContent-Type: application/http\r\n"
            f"Content-ID: <response-x + {urllib.parse.quote(request_id)}>\r\n\r\n{inner}\r\n"
        )
    body_text = "".join(chunks) + f"--{BATCH_BOUNDARY}--\r\n"
    return ({"status": "200", "content-type": f"multipart/mixed; boundary={BATCH_BOUNDARY}"}, body_text)


def metadata_batch(ids: list[str], failures: dict[str, tuple[int, str, str]] | None = None) -> Response:
    parts: dict[str, tuple[int, Any]] = {}
    for mid in ids:
        if failures and mid in failures:
            status, reason, message = failures[mid]
            parts[mid] = (
                status,
                {"error": {"code": status, "message": message, "errors": [{"reason": reason, "message": message}]}},
            )
        else:
            parts[mid] = (200, metadata_resource(mid))
    return batch_response(parts)


class StaticCredentials:
    """A credential source with a valid, never-expiring access token (no refresh traffic)."""

    def __init__(self, token: str = "test-access-token") -> None:
        from google.oauth2.credentials import Credentials

        self.credentials = Credentials(token=token)

    def get(self) -> Any:
        return self.credentials


@dataclass
class FakeGmail:
    """A GmailClient over HttpMockSequence, its recorded sleeps, and the requests it sent."""

    responses: list[Response]
    settings: Settings = field(default_factory=lambda: load_settings(env={}, dotenv=False))
    credentials: Any = field(default_factory=StaticCredentials)
    sleeps: list[float] = field(default_factory=list)
    metrics: Metrics = field(default_factory=Metrics)
    rand: Callable[[], float] = lambda: 0.0  # waits exactly as the design's table says; jitter has its own test

    def __post_init__(self) -> None:
        self.mock = HttpMockSequence(self.responses)
        self.client = GmailClient(
            self.settings,
            self.credentials,
            metrics=self.metrics,
            sleep=self.sleeps.append,
            rand=self.rand,
            http_factory=lambda: self.mock,
            clock=lambda: 1_800_000_000.0,
        )

    def context(self, top_k: int = 10) -> Any:
        from server.tools import ToolContext  # the tools layer is imported only by tests that use it

        return ToolContext(gmail=self.client, enrich_top_k=top_k, metrics=self.metrics)

    @property
    def uris(self) -> list[str]:
        return [uri for uri, *_ in self.mock.request_sequence]

    def query_params(self, index: int) -> dict[str, list[str]]:
        return urllib.parse.parse_qs(urllib.parse.urlsplit(self.uris[index]).query)


def token_store(settings: Settings, token_responses: list[Response]) -> tuple[TokenStore, HttpMockSequence]:
    mock = HttpMockSequence(token_responses)
    return TokenStore(settings, http_factory=lambda: mock), mock
