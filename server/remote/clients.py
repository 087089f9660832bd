"""Who the OAuth clients are: a Client ID Metadata Document (an https `client_id`) or a dynamic registration.

- Lookup: an https client id names its own metadata document, fetched through the guarded fetcher
  (`client_metadata.py`: SSRF rules, size and time limits, cache) in a worker thread; any other client id is a
  registration this server made (RFC 7591), kept in the records.
- Redirect URIs match the document or registration exactly; only a loopback one (RFC 8252 7.3) may differ in port.
- Dynamic Client Registration (RFC 7591), deprecated by the 2026 MCP revision but still what Cursor, Copilot CLI
  and Claude Code use: redirect URIs on an allow-list (https, or http on a loopback address: a custom scheme or
  plain http elsewhere is refused, and the error says so); a rate limit per client address (a sliding window on
  the injected clock); and what is kept is bounded (Claude Code registers anew on every sign-in): a registration
  never used is forgotten after `unused_s` (a day), one that got tokens lives `records.lifetimes.client_s` from
  its last use. Repeated registration with the same metadata is simply a new client, answered 201 like the first.
- Client authentication at the token and revocation endpoints: public clients (`none`) name their client id only;
  a confidential registration's secret is kept as its SHA-256 and compared in constant time.
"""

from __future__ import annotations

import base64
import secrets
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

from mcp.shared.auth import OAuthClientMetadata
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool

from .client_metadata import LOOPBACK_HOSTS, ClientMetadataError, ClientMetadataFetcher, redirect_uri_allowed
from .records import Records
from .store import secret_key

AUTH_METHODS = ("none", "client_secret_post", "client_secret_basic")
GRANT_TYPES = ("authorization_code", "refresh_token")
REDIRECT_RULE = "redirect URIs must be https URLs, or http on a loopback address (127.0.0.1, [::1], localhost)"


class UnknownClient(Exception):
    """No such client (or its document cannot be used); the message is safe to show the person signing in."""


class RegistrationRefused(Exception):
    def __init__(self, error: str, description: str, status: int = 400, retry_after: int | None = None) -> None:
        super().__init__(description)
        self.error = error
        self.description = description
        self.status = status
        self.retry_after = retry_after


@dataclass(frozen=True)
class Client:
    client_id: str
    name: str  # as the client describes itself (untrusted: escaped wherever shown)
    redirect_uris: tuple[str, ...]
    secret_hash: str | None  # a confidential registration's secret, hashed; None for public clients
    by_document: bool  # True: a metadata document vouched for by its https host

    @property
    def host(self) -> str:
        """Where the client's identity comes from: the document's host, or (registered clients) the redirects'."""
        source = self.client_id if self.by_document else (self.redirect_uris[0] if self.redirect_uris else "")
        return urlsplit(source).hostname or "unknown"

    def redirect_allowed(self, redirect_uri: str) -> bool:
        return redirect_uri_allowed({"redirect_uris": list(self.redirect_uris)}, redirect_uri)


class ClientDirectory:
    def __init__(
        self,
        records: Records,
        fetcher: ClientMetadataFetcher,
        *,
        clock: Callable[[], float],
        registration: bool = True,
        registrations_per_window: int = 20,
        window_s: float = 3600.0,
        unused_s: float = 24 * 3600.0,
    ) -> None:
        self.records = records
        self.fetcher = fetcher
        self.clock = clock
        self.registration = registration
        self.registrations_per_window = registrations_per_window
        self.window_s = window_s
        self.unused_s = unused_s
        self._recent: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def is_document_id(self, client_id: str) -> bool:
        allowed = ("https://", "http://") if self.fetcher.allow_loopback_http else ("https://",)
        return client_id.startswith(allowed)

    async def find(self, client_id: str) -> Client:
        """The client, or UnknownClient saying why not."""
        if not client_id:
            raise UnknownClient("The request names no client_id.")
        if self.is_document_id(client_id):
            try:
                document = await run_in_threadpool(self.fetcher.fetch, client_id)
            except ClientMetadataError as error:
                raise UnknownClient(str(error)) from None
            return Client(
                client_id=client_id,
                name=str(document.get("client_name") or client_id),
                redirect_uris=tuple(str(uri) for uri in document.get("redirect_uris", [])),
                secret_hash=None,
                by_document=True,
            )
        if client_id.startswith("http://"):
            raise UnknownClient(f"The client id {client_id} cannot be fetched: a client id URL must use https.")
        kept = self.records.client(client_id)
        if kept is None:
            raise UnknownClient(
                f"The client {client_id!r} is not registered here (registrations unused for a while are "
                "forgotten): the app should register again."
            )
        return Client(
            client_id=client_id,
            name=str(kept.get("client_name") or "an unnamed app"),
            redirect_uris=tuple(kept.get("redirect_uris", [])),
            secret_hash=kept.get("secret_hash"),
            by_document=False,
        )

    def keep(self, client: Client) -> None:
        """A registration that got tokens is kept for the full lifetime from now (documents have their cache)."""
        if not client.by_document:
            kept = self.records.client(client.client_id)
            if kept is not None:
                self.records.save_client(client.client_id, kept)

    # ---- authentication (token and revocation endpoints)
    @staticmethod
    def credentials(form: dict[str, str], authorization: str | None) -> tuple[str, str | None]:
        """(client_id, client_secret or None) from HTTP Basic (RFC 6749 2.3.1) or the form."""
        if authorization and authorization[:6].lower() == "basic ":
            try:
                decoded = base64.b64decode(authorization[6:].strip(), validate=True).decode("utf-8")
            except (ValueError, UnicodeDecodeError):
                return "", None
            name, _, secret = decoded.partition(":")
            return unquote(name), unquote(secret)
        return form.get("client_id", ""), form.get("client_secret") or None

    @staticmethod
    def authenticated(client: Client, secret: str | None) -> bool:
        if client.secret_hash is None:
            return True  # a public client: the client id is all it has (PKCE and rotation protect it)
        return secret is not None and secrets.compare_digest(secret_key(secret), client.secret_hash)

    # ---- dynamic registration (RFC 7591)
    def register(self, payload: Any, address: str) -> dict[str, Any]:
        """The client information response (RFC 7591 3.2.1) or RegistrationRefused."""
        if not self.registration:
            raise RegistrationRefused("invalid_request", "Dynamic registration is disabled here.", 404)
        if not isinstance(payload, dict):
            raise RegistrationRefused("invalid_client_metadata", "The registration must be a JSON object.")
        try:
            metadata = OAuthClientMetadata.model_validate(payload)
        except ValidationError as error:
            fields = ", ".join(sorted({str(item["loc"][0]) for item in error.errors() if item["loc"]}))
            raise RegistrationRefused("invalid_client_metadata", f"Invalid client metadata ({fields}).") from None
        uris = [str(uri) for uri in payload.get("redirect_uris") or []]
        refused = [uri for uri in uris if not registrable_redirect(uri)]
        if refused:
            raise RegistrationRefused("invalid_redirect_uri", f"Refused {', '.join(refused)}: {REDIRECT_RULE}.")
        method = metadata.token_endpoint_auth_method or "client_secret_basic"
        if method not in AUTH_METHODS:
            raise RegistrationRefused(
                "invalid_client_metadata", f"token_endpoint_auth_method must be one of {', '.join(AUTH_METHODS)}."
            )
        if "authorization_code" not in metadata.grant_types or set(metadata.response_types) - {"code"}:
            raise RegistrationRefused("invalid_client_metadata", "Only the authorization code flow is offered.")
        self._count(address)
        now = int(self.clock())
        client_id = "gmcp-" + secrets.token_urlsafe(24)
        secret = secrets.token_urlsafe(32) if method != "none" else None
        kept = {
            "client_name": (metadata.client_name or "")[:200],
            "redirect_uris": uris,
            "token_endpoint_auth_method": method,
            "grant_types": [grant for grant in metadata.grant_types if grant in GRANT_TYPES],
            "scope": metadata.scope,
            "issued_at": now,
            "secret_hash": secret_key(secret) if secret else None,
        }
        self.records.save_client(client_id, kept, self.unused_s)
        answer = {key: value for key, value in kept.items() if key not in ("secret_hash", "issued_at")}
        answer.update(client_id=client_id, client_id_issued_at=now, response_types=["code"])
        if secret:
            answer.update(client_secret=secret, client_secret_expires_at=0)
        return {key: value for key, value in answer.items() if value is not None}

    def _count(self, address: str) -> None:
        now = self.clock()
        with self._lock:
            if len(self._recent) > 10_000:  # bound the table: drop addresses with nothing in the window
                horizon = now - self.window_s
                for stale in [key for key, times in self._recent.items() if not times or times[-1] <= horizon]:
                    del self._recent[stale]
            times = self._recent.setdefault(address, deque())
            while times and times[0] <= now - self.window_s:
                times.popleft()
            if len(times) >= self.registrations_per_window:
                wait = int(times[0] + self.window_s - now) + 1
                raise RegistrationRefused(
                    "too_many_requests",
                    f"Too many registrations from this address; try again in {wait} s.",
                    429,
                    wait,
                )
            times.append(now)


def registrable_redirect(uri: str) -> bool:
    """The DCR allow-list: https with a host, or http on a loopback address; no fragment."""
    parts = urlsplit(uri)
    if parts.fragment or not parts.hostname or parts.username or parts.password:
        return False
    if parts.scheme == "https":
        return True
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return parts.scheme == "http" and host in LOOPBACK_HOSTS
