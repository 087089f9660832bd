"""Batch requests: the multipart/mixed format google-api-python-client's BatchHttpRequest speaks.

Request: each part is `Content-Type: application/http` with a `Content-ID` and an embedded HTTP request
(`GET /gmail/v1/... HTTP/1.1`, its own headers including `authorization`), lines ending in bare LF.

Response: each part is `Content-Type: application/http` with `Content-ID: <response-ORIGINAL>` around an
embedded `HTTP/1.1 200 OK` response. The client finds the embedded body by splitting on CRLF CRLF, so the
embedded headers must end with exactly that.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from email.message import Message
from email.parser import BytesHeaderParser, BytesParser
from http import HTTPStatus
from urllib.parse import urlsplit

from .errors import ApiError

MAX_PARTS = 100


@dataclass(frozen=True)
class BatchPart:
    """One embedded request."""

    content_id: str  # without the angle brackets
    method: str
    path: str
    query: str
    headers: dict[str, str]  # lower-cased names
    body: bytes = b""


@dataclass
class PartResponse:
    """One embedded response, before it is framed."""

    status: int
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)


def parse_batch(content_type: str, body: bytes) -> list[BatchPart]:
    """Splits a batch POST into its parts; 400 when it is not a batch or holds more than 100 parts."""
    if not content_type.lower().startswith("multipart/"):
        raise ApiError(400, "badRequest", "Batch requests must be multipart/mixed")
    envelope = BytesParser().parsebytes(b"Content-Type: " + content_type.encode("latin-1") + b"\r\n\r\n" + body)
    payload = envelope.get_payload()
    if not envelope.is_multipart() or not isinstance(payload, list) or not payload:
        raise ApiError(400, "badRequest", "Batch request has no parts")
    if len(payload) > MAX_PARTS:
        raise ApiError(400, "badRequest", f"Too many requests in batch: {len(payload)} (at most {MAX_PARTS})")
    return [_parse_part(part) for part in payload if isinstance(part, Message)]


def _parse_part(part: Message) -> BatchPart:
    content_id = str(part.get("Content-ID", "")).strip()
    if content_id.startswith("<") and content_id.endswith(">"):
        content_id = content_id[1:-1]
    inner = part.get_payload()
    raw = inner.encode("utf-8", "surrogateescape") if isinstance(inner, str) else b""
    request_line, _, rest = raw.partition(b"\n")
    pieces = request_line.decode("latin-1").strip().split()
    if len(pieces) < 2:
        raise ApiError(400, "badRequest", "Batch part is not an HTTP request")
    head, body = _split_head(rest)
    headers = BytesHeaderParser().parsebytes(head + b"\n\n")
    target = urlsplit(pieces[1])
    return BatchPart(
        content_id=content_id,
        method=pieces[0].upper(),
        path=target.path,
        query=target.query,
        headers={name.lower(): str(value) for name, value in headers.items()},
        body=body,
    )


def _split_head(rest: bytes) -> tuple[bytes, bytes]:
    for separator in (b"\r\n\r\n", b"\n\n"):
        head, found, body = rest.partition(separator)
        if found:
            return head, body
    return rest, b""


def render_batch(responses: list[tuple[str, PartResponse]]) -> tuple[str, bytes]:
    """Frames the embedded responses; returns (Content-Type header value, body)."""
    boundary = "batch_" + secrets.token_hex(16)
    chunks: list[bytes] = []
    for content_id, response in responses:
        chunks.append(
            f"--{boundary}\r\nContent-Type: application/http\r\nContent-ID: <response-{content_id}>\r\n\r\n".encode()
        )
        reason = _reason(response.status)
        head = [f"HTTP/1.1 {response.status} {reason}", "Content-Type: application/json; charset=UTF-8"]
        head += [f"{name}: {value}" for name, value in response.headers.items()]
        head.append(f"Content-Length: {len(response.body)}")
        chunks.append(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + response.body + b"\r\n")
    chunks.append(f"--{boundary}--\r\n".encode())
    return f"multipart/mixed; boundary={boundary}", b"".join(chunks)


def _reason(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"
