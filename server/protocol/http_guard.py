"""The front door of HTTP mode: one ASGI middleware in front of the SDK's streamable HTTP app.

In order, for every request:
1. `/healthz` answers at once (no authentication, no data): 200, or 503 while shutting down (liveness);
   `/readyz` answers 200 when this replica can serve: not shutting down and, with a state store
   (`self.readiness`, `--auth oauth`), the store answers a ping; else 503 (load balancers take the replica out);
2. DNS-rebinding protection: on a loopback bind the Host header must name this machine (421 otherwise), and a
   browser `Origin` must be loopback or configured (403 otherwise), as the MCP transport spec requires;
3. authentication: `Authorization: Bearer <token>` or `X-API-Key: <token>`, compared in constant time against
   the configured tokens' digests; missing or wrong -> 401 with `WWW-Authenticate`, and nothing behind runs.
   A client that fails too often gets 429 until its window passes; failures are logged without the credential.
   With `--auth oauth` the gate of `oauth_guard.py` (`self.oauth`) takes this step's place: tokens this server
   issued for this resource, the authorization server's paths open, the same failure limit;
4. `/metrics` (Prometheus text) for authenticated callers, or for anyone when configured `open`;
5. a limit on POST requests served at once (503 with Retry-After beyond it; streams do not count);
6. the SDK app, with the credential's label as the authenticated user (sessions stay bound to the credential
   that opened them) and the accounts it reaches in the request state (read by `accounts_of`).

The credential goes no further than this module: tools, logs and Gmail never see it.
"""

from __future__ import annotations

import hmac
import json
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

import anyio
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken

from server.runtime.http_config import LOOPBACK_NAMES, HttpCredential, HttpSettings, digest, is_loopback
from server.runtime.observability import get_logger

log = get_logger("http")
Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
ACCOUNTS_STATE = "gmail_mcp_accounts"
FAILURE_WINDOW_S = 60.0
MAX_TRACKED_CLIENTS = 10_000


class FailedAuthLimiter:
    """Failed authentications per client address in a sliding window; a client over the limit is blocked
    until its oldest failure leaves the window. Thread-safe, with the clock injected for tests."""

    def __init__(self, limit: int, window_s: float = FAILURE_WINDOW_S, clock: Callable[[], float] = time.monotonic):
        self.limit, self.window_s, self._clock = limit, window_s, clock
        self._failures: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def blocked_for(self, client: str) -> float:
        """Seconds until `client` may try again (0.0: it may)."""
        with self._lock:
            failures = self._failures.get(client)
            if not failures or len(failures) < self.limit:
                return 0.0
            return max(0.0, failures[0] + self.window_s - self._clock())

    def fail(self, client: str) -> bool:
        """Records a failure; True when it is the one that blocks the client."""
        now = self._clock()
        with self._lock:
            if client not in self._failures and len(self._failures) >= MAX_TRACKED_CLIENTS:
                self._forget_idle(now)
            failures = self._failures.setdefault(client, deque(maxlen=self.limit))
            failures.append(now)
            return len(failures) == self.limit and now - failures[0] < self.window_s

    def _forget_idle(self, now: float) -> None:
        for client in [c for c, times in self._failures.items() if now - times[-1] >= self.window_s]:
            del self._failures[client]
        if len(self._failures) >= MAX_TRACKED_CLIENTS:  # a flood of fresh addresses: drop the oldest half
            for client in list(self._failures)[: MAX_TRACKED_CLIENTS // 2]:
                del self._failures[client]


def find_credential(presented: str, credentials: tuple[HttpCredential, ...]) -> HttpCredential | None:
    """The credential whose secret is `presented`: digests of equal length, compared in constant time, and
    every one compared (no early exit that would time which one matched)."""
    offered = digest(presented)
    found = None
    for credential in credentials:
        if hmac.compare_digest(offered, credential.digest):
            found = credential
    return found


def presented_secret(headers: dict[str, str]) -> str | None:
    scheme, _, value = headers.get("authorization", "").strip().partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    key = headers.get("x-api-key", "").strip()
    return key or None


def origin_allowed(origin: str, settings: HttpSettings) -> bool:
    value = origin.strip().lower().rstrip("/")
    if value in settings.allowed_origins:
        return True
    parts = urlsplit(value)
    return parts.scheme in ("http", "https") and is_loopback(parts.hostname or "") and not parts.path


def host_allowed(host: str, settings: HttpSettings) -> bool:
    value = host.strip().lower()
    if value in settings.allowed_hosts:
        return True
    name = value.rsplit("]", 1)[0].lstrip("[") if value.startswith("[") else value.split(":", 1)[0]
    return name in LOOPBACK_NAMES or name in settings.allowed_hosts


async def respond(
    send: Send, status: int, body: dict[str, Any] | bytes, headers: dict[str, str] | None = None, *, media: str = ""
) -> None:
    payload = body if isinstance(body, bytes) else json.dumps(body).encode()
    content_type = media or "application/json"
    raw_headers = [(b"content-type", content_type.encode()), (b"content-length", str(len(payload)).encode())]
    raw_headers += [(name.lower().encode(), value.encode()) for name, value in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": raw_headers})
    await send({"type": "http.response.body", "body": payload})


class HttpGuard:
    """The middleware described in the module docstring. `metrics` renders /metrics: (body, content type)."""

    def __init__(self, app: ASGIApp, settings: HttpSettings, metrics: Callable[[], tuple[bytes, str]]) -> None:
        self.app = app
        self.settings = settings
        self.metrics = metrics
        self.limiter = FailedAuthLimiter(settings.auth_failures_per_minute)
        self.in_flight = 0
        self.on_auth_failure: Callable[[str], None] = lambda reason: None
        # `--auth oauth`: an `oauth_guard.OAuthGate` that checks tokens this server issued instead of static ones.
        self.oauth: Any = None
        # Readiness beyond shutdown (`/readyz`): `--auth oauth` sets the state store's `ready`.
        self.readiness: Callable[[], bool] | None = None
        self._stopping = False
        self._stopping_event: anyio.Event | None = None  # made in the event loop, on first use

    @property
    def is_stopping(self) -> bool:
        return self._stopping

    def stop(self) -> None:
        """Shutdown has begun (call it in the event loop's thread): refuse new work, end idle streams."""
        self._stopping = True
        if self._stopping_event is not None:
            self._stopping_event.set()

    async def _serve_readiness(self, send: Send) -> None:
        if self._stopping:
            await respond(send, 503, {"status": "stopping"})
            return
        if self.readiness is not None and not await anyio.to_thread.run_sync(self.readiness):
            await respond(send, 503, {"status": "store_unreachable"}, {"Retry-After": "5"})
            return
        await respond(send, 200, {"status": "ready"})

    def _stop_event(self) -> anyio.Event:
        if self._stopping_event is None:
            self._stopping_event = anyio.Event()
            if self._stopping:
                self._stopping_event.set()
        return self._stopping_event

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)  # lifespan (websockets are not configured)
            return
        headers = {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in scope["headers"]}
        path = scope.get("path", "")
        if path == "/healthz":
            stopping = self._stopping
            await respond(send, 503 if stopping else 200, {"status": "stopping" if stopping else "ok"})
            return
        if path == "/readyz":
            await self._serve_readiness(send)
            return
        if self.settings.loopback and not host_allowed(headers.get("host", ""), self.settings):
            await respond(send, 421, {"error": "misdirected_request", "error_description": "Invalid Host header"})
            return
        origin = headers.get("origin")
        if origin is not None and not origin_allowed(origin, self.settings):
            log.warning("request from a foreign origin refused", extra={"client": _client(scope), "path": path})
            await respond(send, 403, {"error": "forbidden", "error_description": "Origin not allowed"})
            return
        if path == "/metrics" and self.settings.metrics == "open":
            await self._serve_metrics(send)
            return
        if self.oauth is not None:
            if path == "/metrics":  # no static token to show in oauth mode: served only when configured open
                await respond(send, 404, {"error": "not_found"})
                return
            admitted = await self.oauth.admit(scope, headers, receive, send, self.limiter)
            if admitted is None:
                return
            receive = admitted
            credential: HttpCredential | bool = True
        else:
            credential = await self._authenticate(scope, headers, send)
        if credential is False:
            return
        if path == "/metrics":
            if self.settings.metrics == "off":
                await respond(send, 404, {"error": "not_found"})
            else:
                await self._serve_metrics(send)
            return
        if isinstance(credential, HttpCredential):
            token = AccessToken(token=credential.label, client_id=credential.label, scopes=[])
            scope["user"] = AuthenticatedUser(token)
            scope.setdefault("state", {})[ACCOUNTS_STATE] = credential.accounts
        if self._stopping:
            await respond(send, 503, {"error": "shutting_down"}, {"Retry-After": "5", "Connection": "close"})
            return
        if scope.get("method") != "POST":
            await self.app(scope, self._until_stopping(receive), send)
            return
        if self.in_flight >= self.settings.max_concurrent:
            await respond(
                send, 503, {"error": "busy", "error_description": "Too many requests at once"}, {"Retry-After": "1"}
            )
            return
        self.in_flight += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.in_flight -= 1

    async def _authenticate(self, scope: Scope, headers: dict[str, str], send: Send) -> HttpCredential | bool:
        """The caller's credential; True when no token is configured (loopback only); False once answered."""
        if not self.settings.credentials:
            return True
        client = _client(scope)
        wait = self.limiter.blocked_for(client)
        if wait > 0:
            retry = str(max(1, round(wait)))
            await respond(send, 429, {"error": "too_many_failures"}, {"Retry-After": retry})
            return False
        secret = presented_secret(headers)
        credential = find_credential(secret, self.settings.credentials) if secret else None
        if credential is not None:
            return credential
        reason = "wrong" if secret else "missing"
        self.on_auth_failure(reason)
        fields = {"client": client, "path": scope.get("path", ""), "reason": reason}
        log.warning("authentication failed", extra=fields)
        if self.limiter.fail(client):
            log.warning("too many failed authentications: client blocked", extra={**fields, "for_s": FAILURE_WINDOW_S})
        challenge = 'Bearer realm="gmail-mcp"' + (', error="invalid_token"' if secret else "")
        description = "Bearer token or X-API-Key required" if not secret else "Invalid token"
        await respond(
            send, 401, {"error": "unauthorized", "error_description": description}, {"WWW-Authenticate": challenge}
        )
        return False

    async def _serve_metrics(self, send: Send) -> None:
        body, media = self.metrics()
        await respond(send, 200, body, media=media)

    def _until_stopping(self, receive: Receive) -> Receive:
        """A receive that reports the client gone once shutdown starts: long-lived GET streams end, so SIGTERM
        does not wait out its grace period on idle listeners."""
        stopping = self._stop_event()

        async def wrapped() -> dict[str, Any]:
            if stopping.is_set():
                return {"type": "http.disconnect"}
            result: dict[str, Any] = {"type": "http.disconnect"}
            async with anyio.create_task_group() as group:

                async def real() -> None:
                    nonlocal result
                    result = await receive()
                    group.cancel_scope.cancel()

                async def stop() -> None:
                    await stopping.wait()
                    group.cancel_scope.cancel()

                group.start_soon(real)
                group.start_soon(stop)
            return result

        return wrapped


def _client(scope: Scope) -> str:
    client = scope.get("client")
    return str(client[0]) if client else "unknown"


def accounts_of(request_context: Any) -> frozenset[str] | None:
    """The accounts a request's credential reaches (for `build_server(accounts_of=...)`); None: all of them."""
    request = getattr(request_context, "request", None)
    scope = getattr(request, "scope", None)
    state = scope.get("state") if isinstance(scope, dict) else None
    return state.get(ACCOUNTS_STATE) if isinstance(state, dict) else None
