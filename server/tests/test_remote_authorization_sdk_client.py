"""The official MCP Python client's OAuth (`mcp.client.auth.OAuthClientProvider`) signs in against these routes,
both with a metadata-document client id (served over https by the test, with its own certificate authority) and
with dynamic registration; the test is the browser, the emulator Google. The resource side here is a stand-in
(a route that answers 401 with the RFC 9728 challenge unless the ledger verifies the bearer for this resource):
the real MCP endpoint is wired elsewhere. The client then refreshes, and is refused after revoking.

Evidence: the MCP authorization spec (2025-11-25: PRM discovery from `WWW-Authenticate`, RFC 8414 discovery, CIMD
when `client_id_metadata_document_supported`, else DCR; PKCE S256; `resource`); the SDK 2.3.0 client itself
checks `iss` (RFC 9207) against the metadata's issuer (`validate_authorization_response_iss`).
"""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import AuthorizationCodeResult
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from server.emulator import Emulator
from server.emulator.google_identity import subject_of
from server.remote.authorization import AuthorizationServer
from server.remote.client_metadata import ClientMetadataFetcher
from server.remote.metadata import www_authenticate
from server.tests.support.accounts import two_account_emulator
from server.tests.support.emulator import OWNER
from server.tests.support.oauth_browser import (
    APP_REDIRECT,
    RESOURCE,
    at_google,
    base_of,
    build_server,
    decide,
    path_of,
    query_of,
    start,
)
from server.tests.support.oauth_browser import Authorization as Flow
from server.tests.support.sdk_client import Memory, public_client
from server.tests.support.tls import https_documents as served_over_https

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Emulator]:
    with two_account_emulator(tmp_path_factory.mktemp("sdk-client")) as running:
        yield running


def app_for(server: AuthorizationServer) -> Starlette:
    async def mcp(request: Request) -> Response:
        header = request.headers.get("authorization", "")
        access = server.ledger.verify_access(header.removeprefix("Bearer "), RESOURCE) if header else None
        if access is None:
            return Response(status_code=401, headers={"WWW-Authenticate": www_authenticate(RESOURCE)})
        return JSONResponse({"subject": access.subject, "scopes": sorted(access.scopes)})

    return Starlette(routes=[*server.routes(), Route("/mcp", mcp, methods=["GET", "POST"])])


def provider(server: AuthorizationServer, browser: httpx2.AsyncClient, storage: Memory, **extra: Any):
    answers: list[AuthorizationCodeResult] = []

    async def redirect_handler(url: str) -> None:
        flow = Flow("", "", query_of(url))
        assert (await start(browser, flow)).status_code == 302 and flow.consent_page
        to_google = await decide(browser, flow)
        back = await browser.get(path_of(at_google(to_google.headers["location"], OWNER)))
        location = back.headers["location"]
        assert base_of(location) == APP_REDIRECT
        params = query_of(location)
        answers.append(AuthorizationCodeResult(code=params["code"], state=params.get("state"), iss=params.get("iss")))

    async def callback_handler() -> AuthorizationCodeResult:
        return answers.pop()

    metadata = public_client("SDK test client", scope="gmail.read")
    return OAuthClientProvider(RESOURCE, metadata, storage, redirect_handler, callback_handler, **extra)


@pytest.fixture
def https_documents(tmp_path: Path) -> Iterator[tuple[str, dict[str, Any], ssl.SSLContext]]:
    """An https server for `client.test` (resolved to loopback by the test's resolver): (base, table, trust)."""
    with served_over_https(tmp_path, host="client.test") as served:
        yield served


async def test_the_sdk_client_signs_in_with_a_metadata_document_refreshes_and_is_refused_after_revoking(
    store, clock, emulator: Emulator, client_file: Path, https_documents
) -> None:
    base, table, trust = https_documents
    client_id = base + "/oauth/mcp-client.json"
    table["/oauth/mcp-client.json"] = {
        "client_id": client_id,
        "client_name": "SDK test client",
        "redirect_uris": [APP_REDIRECT],
        "token_endpoint_auth_method": "none",
    }
    fetcher = ClientMetadataFetcher(
        store, resolver=lambda host, port: ["127.0.0.1"], allow_loopback_http=True, tls=trust
    )
    server = build_server(store, clock, emulator, client_file, fetcher=fetcher)
    storage = Memory()
    transport = httpx2.ASGITransport(app=app_for(server))
    async with (
        httpx2.AsyncClient(transport=transport, base_url="http://mcp.test") as browser,
        httpx2.AsyncClient(
            transport=transport, auth=provider(server, browser, storage, client_metadata_url=client_id)
        ) as client,
    ):
        answer = await client.get(RESOURCE)
        assert answer.status_code == 200, answer.text
        # With no scope in the challenge the client asks for every scope the resource metadata lists.
        assert answer.json() == {"subject": subject_of(OWNER), "scopes": ["gmail.drafts", "gmail.read"]}
        assert storage.tokens is not None and storage.client is not None
        assert storage.client.client_id == client_id  # no registration happened
        first = storage.tokens
        # Refresh: the access token expires, the client rotates its refresh token.
        clock.now += 3601
        assert (await client.get(RESOURCE)).status_code == 200
        assert storage.tokens.refresh_token != first.refresh_token
        assert server.ledger.verify_access(first.access_token, RESOURCE) is None
        # Revocation (RFC 7009) by the public client, with its client id only.
        app = httpx2.AsyncClient(transport=transport, base_url="http://mcp.test")
        revoked = await app.post("/revoke", data={"token": storage.tokens.refresh_token, "client_id": client_id})
        assert revoked.status_code == 200
        assert server.ledger.verify_access(storage.tokens.access_token, RESOURCE) is None
        plain = await app.get("/mcp", headers={"Authorization": f"Bearer {storage.tokens.access_token}"})
        assert plain.status_code == 401
        await app.aclose()


async def test_the_sdk_client_signs_in_by_dynamic_registration(store, clock, emulator, client_file) -> None:
    server = build_server(store, clock, emulator, client_file)
    storage = Memory()
    transport = httpx2.ASGITransport(app=app_for(server))
    async with (
        httpx2.AsyncClient(transport=transport, base_url="http://mcp.test") as browser,
        httpx2.AsyncClient(transport=transport, auth=provider(server, browser, storage)) as client,
    ):
        answer = await client.get(RESOURCE)
        assert answer.status_code == 200, answer.text
        assert storage.client is not None and storage.client.client_id.startswith("gmcp-")
        assert server.records.client(storage.client.client_id) is not None
