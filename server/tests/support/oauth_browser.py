"""The remote authorization server's test kit: the server built over a test's store and clock with the emulator as
Google, a browser (cookies kept, redirects followed by hand), an app (no cookies), and a loopback server for
client metadata documents.

The authorization server runs in-process behind httpx's ASGI transport (no sockets); Google is the emulator over
real HTTP, reached by the browser with urllib (its redirect read by hand, `login_hint` added as the person's own
choice of account on Google's page, since the emulator consents automatically for the hinted user).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import secrets
import threading
import urllib.error
import urllib.request
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit, urlunsplit

import httpx2
from cryptography.fernet import Fernet
from starlette.applications import Starlette

from server.emulator import Emulator
from server.remote.authorization import AllowedUsers, AuthorizationServer
from server.remote.client_metadata import ClientMetadataFetcher
from server.remote.google_upstream import GoogleSignIn, GoogleWebClient
from server.remote.store import StateStore

ISSUER = "http://mcp.test"
RESOURCE = ISSUER + "/mcp"
CALLBACK = ISSUER + "/oauth/google/callback"
GOOGLE = "https://www.googleapis.com/auth/"
GOOGLE_SCOPES = {"gmail.read": [GOOGLE + "gmail.readonly"], "gmail.drafts": [GOOGLE + "gmail.compose"]}
MCP_SCOPES = ["gmail.read", "gmail.drafts"]
APP_REDIRECT = "http://127.0.0.1:33418/callback"


def google_scopes_for(scopes: Iterable[str]) -> list[str]:
    return [google for scope in scopes for google in GOOGLE_SCOPES[scope]]


def build_server(
    store: StateStore,
    clock: Any,
    emulator: Emulator,
    client_file: Any,
    *,
    allowed: str = "me@example.com",
    fetcher: ClientMetadataFetcher | None = None,
    cipher: Any = None,
    **options: Any,
) -> AuthorizationServer:
    web = GoogleWebClient.from_file(client_file, certs_url=emulator.url + "/oauth2/v3/certs")
    return AuthorizationServer(
        store,
        cipher or Fernet(Fernet.generate_key()),
        resource_url=options.pop("resource_url", RESOURCE),
        issuer=options.pop("issuer", ISSUER),
        google=GoogleSignIn(web, CALLBACK),
        fetcher=fetcher or ClientMetadataFetcher(store, allow_loopback_http=True),
        allowed_users=AllowedUsers.parse(allowed),
        mcp_scopes=MCP_SCOPES,
        google_scopes_for=google_scopes_for,
        clock=clock,
        **options,
    )


def http_client(server: AuthorizationServer, address: str = "10.0.0.7", base: str = ISSUER) -> httpx2.AsyncClient:
    """A browser or an app: its own cookie jar, no redirects followed."""
    transport = httpx2.ASGITransport(app=Starlette(routes=server.routes()), client=(address, 5555))
    return httpx2.AsyncClient(transport=transport, base_url=base, timeout=httpx2.Timeout(30.0))


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def query_of(location: str) -> dict[str, str]:
    return {name: values[-1] for name, values in parse_qs(urlsplit(location).query).items()}


def base_of(location: str) -> str:
    parts = urlsplit(location)
    return f"{parts.scheme}://{parts.netloc}{parts.path}"


def path_of(location: str) -> str:
    parts = urlsplit(location)
    return parts.path + (f"?{parts.query}" if parts.query else "")


def form_fields(page: str) -> dict[str, str]:
    return dict(re.findall(r'<input type="hidden" name="([a-z]+)" value="([^"]*)">', page))


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def at_google(url: str, user: str | None, edit: Any = None) -> str:
    """The browser at Google's authorization URL, choosing `user`; returns Google's redirect (to our callback).
    `edit(params)` changes the parameters first (a person unticking a scope on Google's granular consent)."""
    parts = urlsplit(url)
    params = {name: values[-1] for name, values in parse_qs(parts.query).items()}
    if user is not None:
        params["login_hint"] = user
    if edit is not None:
        edit(params)
    target = urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(params), ""))
    try:
        urllib.request.build_opener(_NoRedirects).open(target, timeout=10)
    except urllib.error.HTTPError as answer:
        assert answer.code == 302, answer.read()
        return str(answer.headers["Location"])
    raise AssertionError("Google did not redirect")


@dataclass
class Authorization:
    """One run of the browser flow up to a given point."""

    verifier: str
    challenge: str
    params: dict[str, str]
    consent_page: str = ""
    redirect: str = ""  # where the browser was finally sent (the client's redirect URI, with its query)
    answer: dict[str, str] = field(default_factory=dict)


def authorize_params(client_id: str, redirect_uri: str = APP_REDIRECT, **extra: str) -> Authorization:
    verifier, challenge = pkce()
    params = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": redirect_uri,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "state": "st-" + secrets.token_urlsafe(6),
        "scope": "gmail.read",
        "resource": RESOURCE,
    }
    params.update(extra)
    return Authorization(verifier, challenge, {name: value for name, value in params.items() if value})


async def start(browser: httpx2.AsyncClient, flow: Authorization) -> httpx2.Response:
    """GET /authorize; on success the browser is at the consent page (`flow.consent_page`)."""
    response = await browser.get("/authorize", params=flow.params)
    if response.status_code == 302 and "/oauth/consent" in response.headers["location"]:
        page = await browser.get(response.headers["location"])
        assert page.status_code == 200, page.text
        flow.consent_page = page.text
    return response


async def decide(browser: httpx2.AsyncClient, flow: Authorization, decision: str = "allow") -> httpx2.Response:
    return await browser.post("/oauth/consent", data={**form_fields(flow.consent_page), "decision": decision})


async def sign_in(
    browser: httpx2.AsyncClient, flow: Authorization, user: str | None = "me@example.com", edit: Any = None
) -> httpx2.Response:
    """The whole browser flow; returns the callback's answer (a 302 to the client, or a page)."""
    first = await start(browser, flow)
    assert first.status_code == 302 and flow.consent_page, first.text
    to_google = await decide(browser, flow)
    assert to_google.status_code == 302, to_google.text
    back = at_google(to_google.headers["location"], user, edit)
    assert base_of(back) == CALLBACK
    answer = await browser.get(back)
    if answer.status_code == 302:
        flow.redirect = answer.headers["location"]
        flow.answer = query_of(flow.redirect)
    return answer


async def exchange(app: httpx2.AsyncClient, flow: Authorization, client_id: str, **extra: str) -> httpx2.Response:
    form = {
        "grant_type": "authorization_code",
        "code": flow.answer["code"],
        "redirect_uri": flow.params["redirect_uri"],
        "code_verifier": flow.verifier,
        "client_id": client_id,
        "resource": flow.params.get("resource", RESOURCE),
    }
    form.update(extra)
    return await app.post("/token", data={name: value for name, value in form.items() if value})


@contextmanager
def document_server(documents: dict[str, dict[str, Any]] | None = None) -> Iterator[tuple[str, dict[str, Any]]]:
    """Serves client metadata documents on loopback: (base URL, the path -> document table to fill)."""
    table: dict[str, Any] = dict(documents or {})

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            document = table.get(self.path)
            body = json.dumps(document).encode() if document is not None else b"{}"
            self.send_response(200 if document is not None else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", table
    finally:
        server.shutdown()
        server.server_close()
