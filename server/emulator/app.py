"""The request pipeline between the socket and the Gmail routes, shared by single requests and batch parts.

For every Gmail API call (a single request or one batch part), in this order:
1. a concurrency slot (taken by the caller: one per request, one per batch part, for the whole batch);
   none left -> 429 "Too many concurrent requests for user";
2. the first matching injected fault (latency, then hang / reset / error status);
3. the Bearer token check -> 401 in Gmail's format; the token picks the mailbox (its owner's: `users/me` is
   the token's user, and another user's address answers 403 like Gmail's "Delegation denied");
4. the route -> 200 JSON or the route's ApiError.

`--latency-ms` is added once per outer round trip, before anything else, so a batch of 50 costs one latency
like a real network round trip does. The control plane (`/_emulator/...`) bypasses all of this.
"""

from __future__ import annotations

import json
import logging
import re
import select
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

from . import scopes
from .batch import PartResponse, parse_batch, render_batch
from .errors import ApiError, unauthenticated
from .faults import ConcurrencyGate, Fault, FaultBook, RequestLog
from .gmail_api import GmailApi
from .google_oauth import GoogleOAuth
from .quota_meter import QuotaMeter, units_of
from .tokens import INVALID_GRANT, INVALID_RAPT, TokenAuthority

LOG = logging.getLogger("server.emulator")
BATCH_PATHS = ("/batch", "/batch/gmail/v1")
PEOPLE_PREFIX = "/v1/"  # the People API (emulator/people.py), served beside Gmail as the contacts tool needs
API_PREFIXES = ("/gmail/v1/", "/upload/gmail/v1/", PEOPLE_PREFIX)
JSON_TYPE = "application/json; charset=UTF-8"
_CALL_PATH = re.compile(r"^(?:/upload)?/gmail/v1/users/[^/]+/(.*)$")


class AbortConnection(Exception):
    """Close the connection without answering (reset=True sends a TCP RST instead of a FIN)."""

    def __init__(self, *, reset: bool) -> None:
        super().__init__("reset" if reset else "hang")
        self.reset = reset


@dataclass
class Response:
    status: int
    body: bytes
    content_type: str = JSON_TYPE
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Exchange:
    """One outer HTTP request as the pipeline needs it."""

    method: str
    path: str
    query: str
    headers: dict[str, str]  # lower-cased names
    body: bytes
    connection: socket.socket | None = None  # to notice a client that gives up during a hang


def json_response(status: int, data: object, headers: dict[str, str] | None = None) -> Response:
    return Response(status, json.dumps(data, ensure_ascii=False).encode("utf-8"), headers=dict(headers or {}))


def error_response(error: ApiError) -> Response:
    return Response(error.code, error.body_bytes(), headers=dict(error.headers))


class EmulatorApp:
    """Everything behind the socket: Gmail routes, OAuth, faults, concurrency limit, request log."""

    def __init__(self, api: GmailApi, tokens: TokenAuthority, latency_ms: float = 0) -> None:
        self.api = api  # the primary mailbox
        self.tokens = tokens
        self.mailboxes: dict[str, GmailApi] = {}  # further mailboxes by their owner's lower-cased address
        tokens.primary_owner = api.store.email_address.lower()
        self.latency_ms = latency_ms
        self.faults = FaultBook()
        self.gate = ConcurrencyGate()
        self.quota = QuotaMeter()  # off unless set: Gmail's per-user units per minute (quota_meter.py)
        self.log = RequestLog()
        self.stopping = threading.Event()
        self.connections_accepted = 0  # TCP connections, to check that clients keep them alive
        self.google = GoogleOAuth(tokens, self.google_user)  # Google's sign-in for a Web client (google_oauth.py)

    # ---- outer requests
    def serve(self, exchange: Exchange, entry: dict[str, Any]) -> Response:
        """Answers one outer request (not the control plane); raises AbortConnection to drop it."""
        if self.latency_ms:
            self.stopping.wait(self.latency_ms / 1000)
        if exchange.path in BATCH_PATHS and exchange.method == "POST":
            return self._serve_batch(exchange, entry)
        if exchange.path == "/token":
            return self._serve_token(exchange, entry)
        google = self.google.route(exchange.method, exchange.path, exchange.query, exchange.headers, exchange.body)
        if google is not None:
            status, content, headers = google
            if isinstance(content, dict):
                return json_response(status, content, headers)
            return Response(status, content.encode("utf-8"), "text/plain; charset=utf-8", headers)
        if not exchange.path.startswith(API_PREFIXES):
            return error_response(ApiError(404, "notFound", f"Not found: {exchange.path}"))
        granted = self.gate.acquire(1)
        try:
            return self._call(exchange, entry, has_slot=granted > 0)
        finally:
            self.gate.release(granted)

    def _serve_batch(self, exchange: Exchange, entry: dict[str, Any]) -> Response:
        fault = self._take_fault(exchange, entry)
        if fault is not None:
            return fault
        try:
            parts = parse_batch(exchange.headers.get("content-type", ""), exchange.body)
        except ApiError as error:
            return error_response(error)
        entry["batch_parts"] = len(parts)
        granted = self.gate.acquire(len(parts))
        try:
            answers: list[tuple[str, PartResponse]] = []
            for index, part in enumerate(parts):
                inner = Exchange(part.method, part.path, part.query, part.headers, part.body, exchange.connection)
                if not part.path.startswith(API_PREFIXES):
                    response = error_response(ApiError(404, "notFound", f"Not found: {part.path}"))
                else:
                    response = self._call(inner, entry, has_slot=index < granted)
                self.log.add_part(entry, part.method, part.path, response.status)
                answers.append((part.content_id, PartResponse(response.status, response.body, response.headers)))
        finally:
            self.gate.release(granted)
        content_type, body = render_batch(answers)
        return Response(200, body, content_type=content_type)

    def _call(self, exchange: Exchange, entry: dict[str, Any], *, has_slot: bool) -> Response:
        """One Gmail API call (a single request or a batch part): slot, fault, auth, route."""
        if not has_slot:
            return error_response(ApiError(429, "rateLimitExceeded", "Too many concurrent requests for user"))
        faulted = self._take_fault(exchange, entry)
        if faulted is not None:
            return faulted
        authorization = exchange.headers.get("authorization")
        user = self.tokens.user_of(authorization)
        if user is None:
            return error_response(unauthenticated())
        granted = self.tokens.scopes_of(authorization)
        if granted is not None and not self._allowed(exchange, granted):
            return error_response(
                ApiError(403, "insufficientPermissions", "Request had insufficient authentication scopes.")
            )
        api = self.mailboxes.get(user, self.api) if user else self.api
        call = _CALL_PATH.match(exchange.path)
        if not self.quota.spend(user or "", units_of(exchange.method, call.group(1) if call else exchange.path)):
            message = "Quota exceeded for quota metric 'Queries' and limit 'Queries per minute per user'"
            return error_response(ApiError(429, "rateLimitExceeded", message))
        try:
            params = parse_qs(exchange.query, keep_blank_values=True)
            content_type = exchange.headers.get("content-type", "")
            handle = api.people.handle if exchange.path.startswith(PEOPLE_PREFIX) else api.handle
            answer = handle(exchange.method, exchange.path, params, exchange.body, content_type)
            if call is not None and call.group(1) == "messages/batchModify":  # which ids, for tests that count
                entry.setdefault("modified_ids", []).append(json.loads(exchange.body or b"{}").get("ids"))
            return Response(204, b"") if answer is None else json_response(200, answer)
        except ApiError as error:
            return error_response(error)

    @staticmethod
    def _allowed(exchange: Exchange, granted: frozenset[str]) -> bool:
        match = _CALL_PATH.match(exchange.path)
        if match is None:
            return scopes.people_allowed(exchange.path, granted)
        return not granted.isdisjoint(scopes.required(exchange.method, match.group(1)))

    def _serve_token(self, exchange: Exchange, entry: dict[str, Any]) -> Response:
        fault = self.faults.take(exchange.method, exchange.path)
        if fault is not None:
            entry["fault"] = fault.id
            self._delay(fault, exchange)
            if fault.invalid_grant:
                return json_response(400, INVALID_GRANT)
            if fault.invalid_rapt:
                return json_response(400, INVALID_RAPT)
            if fault.status:
                error = {"error": fault.reason or "server_error", "error_description": fault.message or "Fault"}
                return json_response(fault.status, error, _retry_after(fault))
        if exchange.method != "POST":
            return json_response(405, {"error": "invalid_request", "error_description": "Use POST"})
        form = {k: v[-1] for k, v in parse_qs(exchange.body.decode("utf-8", "replace")).items()}
        authorization = exchange.headers.get("authorization")
        if self.google.handles(form, authorization):
            status, body = self.google.grant(form, authorization)
            return json_response(status, body, {"Cache-Control": "no-cache, no-store, max-age=0, must-revalidate"})
        status, body = self.tokens.grant(form)
        return json_response(status, body)

    def google_user(self, email: str) -> tuple[str, str] | None:
        """A Google account of this emulator: (its mailbox key, "" for the primary; its address); None if none."""
        key = email.strip().lower()
        if key == self.api.store.email_address.lower():
            return "", self.api.store.email_address
        api = self.mailboxes.get(key)
        return None if api is None else (key, api.store.email_address)

    def add_mailbox(self, api: GmailApi) -> str:
        """Serves another mailbox to its owner's tokens; returns the refresh token that reaches it."""
        owner = api.store.email_address.lower()
        if owner == self.api.store.email_address.lower() or owner in self.mailboxes:
            raise ValueError(f"a mailbox for {owner} is already served")
        self.mailboxes[owner] = api
        return self.tokens.add_user(owner)

    # ---- faults
    def _take_fault(self, exchange: Exchange, entry: dict[str, Any]) -> Response | None:
        fault = self.faults.take(exchange.method, exchange.path)
        if fault is None:
            return None
        entry["fault"] = fault.id
        self._delay(fault, exchange)
        if fault.status:
            error = ApiError(fault.status, fault.reason or "", fault.message or "", _retry_after(fault))
            return error_response(error)
        return None

    def _delay(self, fault: Fault, exchange: Exchange) -> None:
        """Latency, then hang or reset; raises AbortConnection for the last two."""
        if fault.latency_ms:
            self.stopping.wait(fault.latency_ms / 1000)
        if fault.hang_s:
            wait_until_client_leaves(exchange.connection, fault.hang_s, self.stopping.is_set)
            raise AbortConnection(reset=False)
        if fault.reset:
            raise AbortConnection(reset=True)

    # ---- control plane (mirrored by the Emulator handle's methods)
    def reset(self) -> None:
        """Back to a clean slate between tests: no faults, no log, no limit, refresh token valid again."""
        self.faults.clear()
        self.log.clear()
        self.gate.set_limit(None)
        self.quota.set_limit(None)
        self.tokens.restore_refresh_tokens()
        self.google.reset()

    def control(self, method: str, path: str, query: str, body: bytes) -> Response:
        """`/_emulator/...` endpoints (JSON in, JSON out)."""
        try:
            payload = json.loads(body or b"{}") if method == "POST" else {}
            if not isinstance(payload, dict):
                raise ValueError("body must be a JSON object")
            return json_response(200, self._control(method, path.removeprefix("/_emulator/"), query, payload))
        except KeyError:
            return json_response(404, {"error": f"no control endpoint {method} {path}"})
        except (ValueError, TypeError) as exc:
            return json_response(400, {"error": str(exc)})

    def _control(self, method: str, name: str, query: str, payload: dict[str, Any]) -> dict[str, Any]:
        if (method, name) == ("GET", "requests"):
            since = int(parse_qs(query).get("since", ["0"])[-1])
            return {"requests": self.log.entries(since)}
        if (method, name) == ("POST", "faults"):
            return {"fault": self.faults.add(payload).as_json()}
        if (method, name) == ("GET", "faults"):
            return {"faults": self.faults.live()}
        if (method, name) == ("POST", "reset"):
            self.reset()
        elif (method, name) == ("POST", "concurrency-limit"):
            limit = payload.get("limit")
            self.gate.set_limit(None if limit is None else int(limit))
            return {"limit": self.gate.limit}
        elif (method, name) == ("POST", "quota-limit"):
            units = payload.get("units_per_minute")
            self.quota.set_limit(None if units is None else int(units))
            return {"units_per_minute": self.quota.limit}
        elif (method, name) == ("POST", "revoke"):
            self.tokens.revoke_refresh_tokens(payload.get("user"))
        elif (method, name) == ("POST", "expire-tokens"):
            self.tokens.expire_access_tokens()
        elif (method, name) == ("GET", "info"):
            return self.info()
        elif (method, name) == ("POST", "deliver"):
            return {"message": self.api.writes.deliver(payload, self.api.store.email_address)}
        elif (method, name) == ("POST", "expire-history"):
            self.api.changes.expire_history()
        elif (method, name) == ("POST", "oauth/redirect-uris"):
            self.google.register_redirect_uri(str(payload.get("uri", "")))
        elif (method, name) == ("POST", "oauth/decline"):
            self.google.decline(str(payload.get("user", "")))
        else:
            raise KeyError(name)
        return {"ok": True}

    def info(self) -> dict[str, Any]:
        store = self.api.store
        return {
            "email": store.email_address,
            "mailboxes": [store.email_address, *(api.store.email_address for api in self.mailboxes.values())],
            "messages": len(store.messages),
            "threads": len(store.threads),
            "history_id": store.history_id,
            "concurrency_limit": self.gate.limit,
            "in_flight": self.gate.in_flight,
            "peak_in_flight": self.gate.peak,
            "connections_accepted": self.connections_accepted,
        }


def _retry_after(fault: Fault) -> dict[str, str]:
    return {"Retry-After": fault.retry_after} if fault.retry_after else {}


def wait_until_client_leaves(
    connection: socket.socket | None, limit_s: float, stopping: Callable[[], bool], poll_s: float = 0.02
) -> None:
    """Sleeps until the peer closes the connection, `limit_s` passes, or the server stops."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline and not stopping():
        if connection is None:
            time.sleep(poll_s)
            continue
        try:
            readable, _, _ = select.select([connection], [], [], poll_s)
            if readable and not connection.recv(1, socket.MSG_PEEK):
                return
            if readable:
                time.sleep(poll_s)  # the client sent more bytes; it is still there
        except (OSError, ValueError):
            return
