"""How clients become known: dynamic registration (RFC 7591) with its redirect allow-list, rate limit per client
address, repeated registrations and what is kept; and Client ID Metadata Documents, whose fetch never reaches a
private address. In-process over httpx's ASGI transport; clocks injected.

Evidence: RFC 7591 3.2.1 (201 and the client information response) and 3.2.2 (`invalid_redirect_uri`,
`invalid_client_metadata`); RFC 8252 7.3 and 8.4 (loopback http redirects, no plain http elsewhere); the MCP
authorization spec (2025-11-25, 2026-07-28: DCR deprecated, CIMD preferred); /work/shared/notes/remote-auth.md
(Claude Code registers anew on every sign-in, so what is kept must be bounded); draft-ietf-oauth-client-id-
metadata-document-02 8.6 (SSRF).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from server.emulator import Emulator
from server.remote.client_metadata import ClientMetadataFetcher
from server.tests.support.accounts import two_account_emulator
from server.tests.support.oauth_browser import (
    APP_REDIRECT,
    authorize_params,
    build_server,
    http_client,
    start,
)

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Emulator]:
    with two_account_emulator(tmp_path_factory.mktemp("registration")) as running:
        yield running


async def test_registration_accepts_https_and_loopback_redirects_only_and_says_so(
    store, clock, emulator, client_file
) -> None:
    server = build_server(store, clock, emulator, client_file)
    async with http_client(server) as app:
        for uris in (
            ["ftp://app.example/callback"],
            ["file:///etc/passwd"],
            ["http://app.example/callback"],
            ["http://192.168.1.4:8080/callback"],
            [APP_REDIRECT, "https://app.example/cb#fragment"],
        ):
            refused = await app.post("/register", json={"redirect_uris": uris})
            assert refused.status_code == 400, uris
            assert refused.json()["error"] == "invalid_redirect_uri"
            assert "https URLs, http on a loopback address" in refused.json()["error_description"]
        missing = await app.post("/register", json={"client_name": "x"})
        assert missing.status_code == 400 and missing.json()["error"] == "invalid_client_metadata"
        assert (await app.post("/register", content=b"not json")).json()["error"] == "invalid_client_metadata"
        odd = await app.post("/register", json={"redirect_uris": [APP_REDIRECT], "token_endpoint_auth_method": "tls"})
        assert odd.status_code == 400 and odd.json()["error"] == "invalid_client_metadata"
        uris = ["https://claude.ai/api/mcp/auth_callback", "http://localhost:6274/cb", "http://[::1]:5000/cb"]
        accepted = await app.post("/register", json={"redirect_uris": uris, "token_endpoint_auth_method": "none"})
        assert accepted.status_code == 201 and accepted.headers["cache-control"] == "no-store"
        assert accepted.json()["redirect_uris"] == uris and accepted.json()["token_endpoint_auth_method"] == "none"


async def test_cursor_registers_its_three_callbacks_and_signs_in_with_its_own_scheme(
    store, clock, emulator, client_file
) -> None:
    """Cursor desktop's DCR body names three redirect URIs at once (public reports: erp-mafia/accounted#2225,
    soflyy/agent-connector-for-wp#111, 2026-09): its private-use scheme (RFC 8252 7.1), its https callback and a
    loopback one. Refusing one refused the set, so Cursor could never start. The scheme is matched exactly."""
    server = build_server(store, clock, emulator, client_file)
    own = "cursor://anysphere.cursor-mcp/oauth/callback"
    uris = [own, "https://www.cursor.com/agents/mcp/oauth/callback", "http://localhost:8787/callback"]
    body = {"client_name": "Cursor", "redirect_uris": uris, "token_endpoint_auth_method": "none"}
    async with http_client(server) as app:
        accepted = await app.post("/register", json=body)
        assert accepted.status_code == 201, accepted.text
        client_id = accepted.json()["client_id"]
        flow = authorize_params(client_id, redirect_uri=own)
        assert (await start(app, flow)).status_code == 302 and own in flow.consent_page
        other = authorize_params(client_id, redirect_uri=own + "x")
        refused = await app.get("/authorize", params=other.params)
        assert refused.status_code == 400 and "location" not in refused.headers


async def test_registrations_are_rate_limited_per_address_repeatable_and_bounded(
    store, clock, emulator, client_file
) -> None:
    server = build_server(store, clock, emulator, client_file, registrations_per_window=3, registration_window_s=600)
    body = {"client_name": "Claude Code", "redirect_uris": [APP_REDIRECT], "token_endpoint_auth_method": "none"}
    async with http_client(server, "203.0.113.9") as busy, http_client(server, "203.0.113.10") as other:
        ids = [(await busy.post("/register", json=body)).json()["client_id"] for _ in range(3)]
        assert len(set(ids)) == 3  # the same metadata again is a new client, as Claude Code expects
        limited = await busy.post("/register", json=body)
        assert limited.status_code == 429 and limited.json()["error"] == "too_many_requests"
        assert int(limited.headers["retry-after"]) == 601
        assert (await other.post("/register", json=body)).status_code == 201
        clock.now += 601
        assert (await busy.post("/register", json=body)).status_code == 201
        # A registration that never got tokens is forgotten after a day; until then it is usable.
        assert (await busy.get("/authorize", params=authorize_params(ids[0]).params)).status_code == 302
        clock.now += 24 * 3600 + 1
        forgotten = await busy.get("/authorize", params=authorize_params(ids[0]).params)
        assert forgotten.status_code == 400 and "register again" in forgotten.text
    assert server.records.client(ids[0]) is None


async def test_registration_can_be_turned_off(store, clock, emulator, client_file) -> None:
    server = build_server(store, clock, emulator, client_file, registration=False)
    assert "registration_endpoint" not in server.as_metadata()
    async with http_client(server) as app:
        assert (await app.post("/register", json={"redirect_uris": [APP_REDIRECT]})).status_code in (404, 405)


async def test_a_metadata_document_on_a_private_address_is_never_fetched(store, clock, emulator, client_file) -> None:
    asked: list[str] = []

    def resolver(host: str, port: int) -> list[str]:
        asked.append(host)
        return {"internal.example": ["10.0.0.5"], "meta.example": ["169.254.169.254"]}.get(host, ["192.168.0.1"])

    fetcher = ClientMetadataFetcher(store, resolver=resolver)  # production rules: no loopback, https only
    server = build_server(store, clock, emulator, client_file, fetcher=fetcher)
    async with http_client(server) as browser:
        for client_id in (
            "https://internal.example/client.json",
            "https://meta.example/latest/meta-data",
            "https://127.0.0.1/client.json",
            "http://app.example/client.json",
        ):
            refused = await browser.get("/authorize", params=authorize_params(client_id).params)
            assert refused.status_code == 400 and "location" not in refused.headers, client_id
            assert f"The client id {client_id} cannot be fetched" in refused.text
    assert "app.example" not in asked  # the http URL was refused before any lookup
