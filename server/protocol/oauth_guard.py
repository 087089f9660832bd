"""The resource server's half of `--auth oauth`: who a request is for, checked before anything behind runs.

`HttpGuard` asks `OAuthGate.admit` in place of its static-token check when the server runs with `--auth oauth`:
1. the authorization server's endpoints, its pages and the discovery documents pass without a token (they are the
   way to get one);
2. everything else needs `Authorization: Bearer <token>` (the header only, RFC 6750 2.1; never the query) that this
   server issued FOR THIS RESOURCE (`Ledger.verify_access(token, resource=...)`, RFC 8707): a token issued for
   another resource, unknown, expired or revoked gets 401 with `WWW-Authenticate: Bearer resource_metadata=...`
   (RFC 9728 5.1), so the client finds the authorization server and signs in; only a token this server never
   issued counts towards the same per-address limit as static tokens (429 beyond it): a missing token starts every
   sign-in and an expired or revoked one (`Ledger.was_issued`) every refresh, and claude.ai or ChatGPT bring many
   people from a few shared addresses; the token is never logged; a state store that cannot be reached answers 503
   with Retry-After instead (nobody is signed out because the store blinked);
3. a person whose Google sign-in grant died (`PeopleSource.needs_sign_in`), or whom `GMAIL_MCP_ALLOWED_USERS` no
   longer admits (the operator removed them: a 30-day rolling grant must not outlive that), gets 401 too, and the
   client's grant is revoked, so its refresh token cannot keep the session alive: the client signs in again;
4. a `tools/call` of a write tool whose group the token's grant lacks gets 403 `insufficient_scope` with the scopes
   held and the one needed (MCP 2025-11-25 incremental consent; RFC 6750 3.1): the bounded body is read once and
   replayed to the app;
5. the request goes on with the SDK's `AuthenticatedUser` in `scope["user"]` (`person.py`'s contract: the person's
   Google `sub`, the client, the MCP scopes, the resource, the sign-in address and issuer in `claims`).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken

from server.protocol.http_guard import FailedAuthLimiter, respond
from server.remote.ledger import Access, Ledger
from server.remote.mailboxes import SCOPE_KEY, PeopleSource, PersonMailboxes, person_tag
from server.remote.metadata import (
    AUTHORIZE_PATH,
    OIDC_WELL_KNOWN,
    REGISTER_PATH,
    REVOKE_PATH,
    TOKEN_PATH,
    www_authenticate,
)
from server.remote.oauth_common import AllowedUsers
from server.remote.person import READ_SCOPE, group_scope
from server.remote.store import GOOGLE, StoreUnavailable
from server.runtime.observability import get_logger

log = get_logger("http")
Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
OPEN_PATHS = frozenset({AUTHORIZE_PATH, TOKEN_PATH, REGISTER_PATH, REVOKE_PATH})
OPEN_PREFIXES = ("/.well-known/", "/oauth/")
STORE_RETRY_AFTER_S = 5
STORE_DOWN = {
    "error": "temporarily_unavailable",
    "error_description": "The server's state store is unreachable for the moment: retry in a few seconds "
    "(operators: check GMAIL_MCP_STORE and this replica's /readyz).",
}


def is_open(path: str) -> bool:
    """Paths that serve the way to a token: the authorization server's endpoints, pages and documents."""
    return path in OPEN_PATHS or path.startswith(OPEN_PREFIXES) or path.endswith(OIDC_WELL_KNOWN)


def bearer_of(headers: dict[str, str]) -> str | None:
    scheme, _, value = headers.get("authorization", "").strip().partition(" ")
    return value.strip() or None if scheme.lower() == "bearer" else None


class OAuthGate:
    """See the module docstring. `write_groups`: tool name -> its write group (read tools absent)."""

    def __init__(
        self,
        ledger: Ledger,
        resource: str,
        issuer: str,
        people: PeopleSource,
        write_groups: dict[str, str],
        *,
        max_body_bytes: int,
        allowed_users: AllowedUsers | None = None,
    ) -> None:
        self.ledger = ledger
        self.resource = resource
        self.issuer = issuer
        self.people = people
        self.write_groups = write_groups
        self.max_body_bytes = max_body_bytes
        self.allowed_users = allowed_users

    async def admit(
        self, scope: Scope, headers: dict[str, str], receive: Receive, send: Send, limiter: FailedAuthLimiter
    ) -> Receive | None:
        """The receive to go on with (the body replayed when it was read), or None once answered."""
        path = scope.get("path", "")
        if is_open(path):
            return receive
        client = _client(scope)
        wait = limiter.blocked_for(client)
        if wait > 0:
            await respond(send, 429, {"error": "too_many_failures"}, {"Retry-After": str(max(1, round(wait)))})
            return None
        token = bearer_of(headers)
        try:
            # One trip off the event loop for the whole check: the token, its grant and the person's Google accounts
            # (two store round trips), the allow-list, and the person's mailboxes (built from what was just read).
            access, allowed, mailboxes = (
                await anyio.to_thread.run_sync(self._check, token) if token else (None, True, None)
            )
        except StoreUnavailable:  # the store blinked: nobody is signed out for it; the client retries
            log.warning("state store unreachable: token check deferred", extra={"client": client, "path": path})
            await respond(send, 503, STORE_DOWN, {"Retry-After": str(STORE_RETRY_AFTER_S)})
            return None
        if access is None:
            reason = await self._failure(token)
            log.warning("authentication failed", extra={"client": client, "path": path, "reason": reason})
            if reason == "wrong":
                limiter.fail(client)
            await self._challenge(send, 401, "invalid_token" if token else None, "Sign in to use this server")
            return None
        if not allowed:
            await self._challenge(send, 401, "invalid_token", "This account may no longer use this server")
            return None
        assert mailboxes is not None
        if not mailboxes.signed_in:
            self.ledger.revoke_grant(access.grant_id)
            log.warning(
                "google sign-in expired: the client must sign in again", extra={"person": person_tag(access.subject)}
            )
            await self._challenge(send, 401, "invalid_token", "The Google sign-in expired: sign in again")
            return None
        user = AccessToken(
            token=token or "",
            client_id=access.client_id,
            scopes=sorted(access.scopes),
            resource=access.resource,
            subject=access.subject,
            claims={"email": access.email or mailboxes.default_name, "iss": self.issuer},
        )
        scope["user"] = AuthenticatedUser(user)
        scope[SCOPE_KEY] = mailboxes  # the SDK middleware binds these: one store read of the person per request
        if scope.get("method") != "POST":
            return receive
        body = await _read_body(receive, self.max_body_bytes)
        if body is None:
            await respond(send, 413, {"error": "payload_too_large"})
            return None
        needed = self._scope_needed(body, access.scopes)
        if needed is not None:
            held = sorted(access.scopes)
            await self._challenge(send, 403, "insufficient_scope", f"This tool needs {needed}", [*held, needed])
            return None
        return _replay(body, receive)

    async def _failure(self, token: str | None) -> str:
        """Why a request has no live token: "missing" (every sign-in starts so), "stale" (a token this server
        issued, now expired or revoked: the client refreshes) or "wrong" (one it never issued: the only kind that
        counts towards the failed-authentication limit)."""
        if not token:
            return "missing"
        try:
            issued = await anyio.to_thread.run_sync(self.ledger.was_issued, token)
        except StoreUnavailable:
            issued = False
        return "stale" if issued else "wrong"

    def _check(self, token: str) -> tuple[Access | None, bool, PersonMailboxes | None]:
        """(the token's meaning, whether the allow-list still admits its person, their mailboxes). Blocking."""
        access, entry = self.ledger.verify_access_with(token, self.resource, GOOGLE)
        if access is None:
            return None, True, None
        if not self._still_allowed(access):
            return access, False, None
        return access, True, self.people.person(access.subject, entry)

    def _still_allowed(self, access: Access) -> bool:
        """Whether `GMAIL_MCP_ALLOWED_USERS` still admits the signed-in person (checked on every request: removing
        someone must not wait for their 30-day grant to lapse); if not, their grant is revoked here. Blocking."""
        allowed = self.allowed_users
        if allowed is None or not access.email or allowed.allows(access.email, access.hosted_domain):
            return True
        self.ledger.revoke_grant(access.grant_id)
        log.warning("signed-in person no longer allowed: grant revoked", extra={"person": person_tag(access.subject)})
        return False

    def _scope_needed(self, body: bytes, held: frozenset[str]) -> str | None:
        """The MCP scope a `tools/call` in `body` needs and the grant lacks; None when it may go on."""
        try:
            message = json.loads(body)
        except ValueError:
            return None  # the SDK answers the parse error
        for item in message if isinstance(message, list) else [message]:
            if not isinstance(item, dict) or item.get("method") != "tools/call":
                continue
            params = item.get("params")
            name = params.get("name") if isinstance(params, dict) else None
            group = self.write_groups.get(name) if isinstance(name, str) else None
            needed = READ_SCOPE if group is None else group_scope(group)
            if needed not in held:
                return needed
        return None

    async def _challenge(
        self, send: Send, status: int, error: str | None, description: str, scopes: list[str] | None = None
    ) -> None:
        challenge = www_authenticate(self.resource, error=error, scope=scopes, description=description)
        body = {"error": error or "unauthorized", "error_description": description}
        await respond(send, status, body, {"WWW-Authenticate": challenge})


async def _read_body(receive: Receive, limit: int) -> bytes | None:
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replayed() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed


def _client(scope: Scope) -> str:
    client = scope.get("client")
    return str(client[0]) if client else "unknown"
