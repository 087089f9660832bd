"""The authorization server of `--auth oauth`: one object that builds every OAuth route the HTTP app mounts.

Why these endpoints are this project's own Starlette handlers over the ledger, and not the SDK's or authlib's:
- The SDK's embedded authorization server (mcp 2.3.0 `mcp/server/auth/handlers`) falls short where the MCP spec and
  the clients need it: it has no Client ID Metadata Documents (its `get_client` hook runs after it has parsed the
  client id as a registration), its authorization responses carry no `iss` (RFC 9207, which 2026-07-28 clients
  MUST check; its error redirects are built inside the handler, out of reach), and its revocation request model
  requires a `client_secret`, so a public client's revocation gets 400. Patching those from outside would mean
  depending on its private structure.
- authlib implements the RFCs, but its authorization server integrations are Flask and Django; over Starlette it
  would need a request/response adapter of our own plus grant subclasses for CIMD, `iss`, the grace window and the
  browser-bound consent: more code than the endpoints themselves, on a library the project does not yet depend on.
So: the handlers here only parse, check and answer; what they reuse is well-kept code: the SDK's pydantic models
(`OAuthClientMetadata` validates a registration) and `construct_redirect_uri`; Starlette's forms and cookies;
`secrets` for every random value; the ledger for codes and tokens (256-bit `secrets.token_urlsafe`, stored as
SHA-256, rotation, revocation); Fernet for what is sealed; google-auth for Google's ID token. PKCE is RFC 7636's
one-line S256 transform compared with `secrets.compare_digest`. No token format, signature or cipher is invented.

Routes (paths below the issuer's path; the Google callback at `google.redirect_uri`'s path):
`/authorize` (GET, POST), `/oauth/consent` (GET page, POST decision), `/oauth/google/callback`, `/token`,
`/revoke`, `/register` (when `registration`), the RFC 8414 metadata at every `authorization_server_metadata_paths`
path and the RFC 9728 document at every `protected_resource_metadata_paths` path.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from server.runtime.observability import get_logger

from . import metadata
from .callback import google_callback
from .client_metadata import ClientMetadataFetcher
from .clients import ClientDirectory, RegistrationRefused
from .consent import authorize, consent_get, consent_post
from .google_upstream import GoogleSignIn
from .ledger import Cipher, Ledger, Lifetimes
from .oauth_common import CONSENT_PATH, NO_STORE, AllowedUsers, AuthCore, oauth_error
from .records import RecordLifetimes, Records
from .store import StateStore
from .token_endpoint import revoke, token

__all__ = ["AllowedUsers", "AuthorizationServer"]
log = get_logger("remote.register")
Handler = Callable[[AuthCore, Request], Awaitable[Response]]
CORS_PREFLIGHT = {
    "Access-Control-Allow-Origin": "*",
    "Access-Control-Allow-Methods": "POST, OPTIONS",
    "Access-Control-Allow-Headers": "Authorization, Content-Type, MCP-Protocol-Version",
    "Access-Control-Max-Age": "600",
}


def cross_origin(endpoint: Callable[[Request], Awaitable[Response]]) -> Callable[[Request], Awaitable[Response]]:
    """CORS for the endpoints a browser-based client (the MCP Inspector, web IDEs) calls with `fetch`: token,
    revocation, registration. They use no cookies, so any origin may call them; the consent page and `/authorize`
    are navigations and get no CORS."""

    async def wrapped(request: Request) -> Response:
        if request.method == "OPTIONS":
            return Response(status_code=204, headers=CORS_PREFLIGHT)
        response = await endpoint(request)
        response.headers["Access-Control-Allow-Origin"] = "*"
        return response

    return wrapped


class AuthorizationServer:
    """Everything the OAuth side needs, built once by the wiring; `.routes()` for the Starlette app.

    `AuthorizationServer(store, cipher, *, resource_url, issuer, google, fetcher, allowed_users, mcp_scopes,
    google_scopes_for, clock=time.time, registration=True)`; optional keywords beyond that (defaults suit
    production): `lifetimes` and `record_lifetimes` (the ledger's and the records'), `registrations_per_window`
    and `registration_window_s` (the DCR rate limit per client address), `unused_registration_s` (how long a
    registration that never got tokens is kept), `google_login_hint` (demo mode only: the emulator's Google has no
    account chooser and signs in the address this names). `resource_url` is the MCP endpoint's public URL (the RFC 8707
    audience of every token), `issuer` the public URL the OAuth endpoints hang below (usually the same origin).
    """

    def __init__(
        self,
        store: StateStore,
        cipher: Cipher,
        *,
        resource_url: str,
        issuer: str,
        google: GoogleSignIn,
        fetcher: ClientMetadataFetcher,
        allowed_users: AllowedUsers,
        mcp_scopes: list[str],
        google_scopes_for: Callable[[Iterable[str]], list[str]],
        clock: Callable[[], float] = time.time,
        registration: bool = True,
        lifetimes: Lifetimes | None = None,
        record_lifetimes: RecordLifetimes | None = None,
        registrations_per_window: int = 20,
        registration_window_s: float = 3600.0,
        unused_registration_s: float = 24 * 3600.0,
        google_login_hint: str | None = None,
    ) -> None:
        self.ledger = Ledger(store, cipher, lifetimes)
        self.records = Records(store, cipher, record_lifetimes)
        self.clients = ClientDirectory(
            self.records,
            fetcher,
            clock=clock,
            registration=registration,
            registrations_per_window=registrations_per_window,
            window_s=registration_window_s,
            unused_s=unused_registration_s,
        )
        self.core = AuthCore(
            store=store,
            cipher=cipher,
            ledger=self.ledger,
            records=self.records,
            clients=self.clients,
            google=google,
            allowed_users=allowed_users,
            resource_url=resource_url,
            issuer=issuer,
            mcp_scopes=list(mcp_scopes),
            google_scopes_for=google_scopes_for,
            clock=clock,
            login_hint=google_login_hint,
        )
        self.registration = registration
        self.resource_url = resource_url
        self.issuer = issuer

    def as_metadata(self) -> dict[str, Any]:
        return metadata.authorization_server_metadata(self.issuer, self.core.mcp_scopes, registration=self.registration)

    def pr_metadata(self) -> dict[str, Any]:
        return metadata.protected_resource_metadata(self.resource_url, self.issuer, self.core.mcp_scopes)

    def routes(self) -> list[Route]:
        base = self.core.base_path

        def bound(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
            async def endpoint(request: Request) -> Response:
                return await handler(self.core, request)

            return endpoint

        def document(content: Callable[[], dict[str, Any]]) -> Callable[[Request], Awaitable[Response]]:
            async def endpoint(request: Request) -> Response:
                headers = {"Cache-Control": "public, max-age=3600", "Access-Control-Allow-Origin": "*"}
                return JSONResponse(content(), headers=headers)

            return endpoint

        routes = [
            Route(base + metadata.AUTHORIZE_PATH, bound(authorize), methods=["GET", "POST"]),
            Route(base + CONSENT_PATH, bound(consent_get), methods=["GET"]),
            Route(base + CONSENT_PATH, bound(consent_post), methods=["POST"]),
            Route(urlsplit(self.core.google.redirect_uri).path, bound(google_callback), methods=["GET"]),
            Route(base + metadata.TOKEN_PATH, cross_origin(bound(token)), methods=["POST", "OPTIONS"]),
            Route(base + metadata.REVOKE_PATH, cross_origin(bound(revoke)), methods=["POST", "OPTIONS"]),
        ]
        if self.registration:
            register = cross_origin(self._register)
            routes.append(Route(base + metadata.REGISTER_PATH, register, methods=["POST", "OPTIONS"]))
        for path in metadata.authorization_server_metadata_paths(self.issuer):
            routes.append(Route(path, document(self.as_metadata), methods=["GET"]))
        for path in metadata.protected_resource_metadata_paths(self.resource_url):
            routes.append(Route(path, document(self.pr_metadata), methods=["GET"]))
        return routes

    async def _register(self, request: Request) -> Response:
        address = request.client.host if request.client else "unknown"
        try:
            payload = json.loads(await request.body())
        except ValueError:
            return oauth_error("invalid_client_metadata", "The registration must be JSON.")
        try:
            answer = self.clients.register(payload, address)
        except RegistrationRefused as refused:
            if refused.retry_after is not None:
                log.warning("registration refused: rate limit", extra={"client": address})
            headers = {"Retry-After": str(refused.retry_after)} if refused.retry_after is not None else None
            return oauth_error(refused.error, refused.description, refused.status, headers)
        log.info("client registered", extra={"client_id": answer["client_id"], "client": address})
        return JSONResponse(answer, status_code=201, headers=NO_STORE)
