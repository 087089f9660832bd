"""The whole remote sign-in with the official MCP client's OAuth support (`mcp.client.auth.OAuthClientProvider`)
against the `--auth oauth` app on uvicorn on loopback, the emulator playing Google and Gmail, the test the browser.

Both ways a client identifies itself: a Client ID Metadata Document (served over https from a loopback server with
a certificate made for the test) and Dynamic Client Registration (RFC 7591). Each run lists tools, searches,
refreshes its token, and is refused after revoking it (RFC 7009); in both protocol eras (`legacy`: the handshake
and a session; `auto`: the 2026-07-28 stateless requests where the client and server agree on them).

Evidence: MCP authorization spec 2025-11-25 (PRM discovery from `WWW-Authenticate`, AS metadata, PKCE S256,
`resource`, CIMD); RFC 9207 (`iss` checked by the client).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp.client import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult

from server.emulator import Emulator
from server.runtime.config import PROJECT_ROOT
from server.tests.support.accounts import two_account_emulator
from server.tests.support.emulator import OWNER
from server.tests.support.oauth_browser import APP_REDIRECT, at_google, form_fields, path_of, query_of
from server.tests.support.remote_http import follow_once, remote_server
from server.tests.support.sdk_client import Memory, public_client
from server.tests.support.tls import https_documents

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Emulator]:
    with two_account_emulator(tmp_path_factory.mktemp("e2e")) as running:
        yield running


class Browser:
    """The person's browser: follows the authorization URL through consent and Google back to the client."""

    def __init__(self, base: str, user: str, *, demo: bool = False) -> None:
        self.base, self.user, self.demo = base, user, demo
        self.http = httpx2.AsyncClient(base_url=base, timeout=30.0)
        self.answers: list[dict[str, str]] = []

    async def redirect_handler(self, url: str) -> None:
        first = await self.http.get(path_of(url))
        assert first.status_code == 302, first.text
        page = await self.http.get(path_of(first.headers["location"]))
        assert page.status_code == 200 and "consent" in page.text.lower(), page.text
        to_google = await self.http.post("/oauth/consent", data={**form_fields(page.text), "decision": "allow"})
        assert to_google.status_code == 302, to_google.text
        if self.demo:  # the demo's account chooser (this server), then the emulator's consent
            back = follow_once(follow_once(to_google.headers["location"]))
        else:
            back = at_google(to_google.headers["location"], self.user)
        to_client = await self.http.get(path_of(back))
        assert to_client.status_code == 302, to_client.text
        assert to_client.headers["location"].startswith(APP_REDIRECT)
        self.answers.append(query_of(to_client.headers["location"]))

    async def callback_handler(self) -> AuthorizationCodeResult:
        answer = self.answers[-1]
        assert "code" in answer, answer
        return AuthorizationCodeResult(code=answer["code"], state=answer.get("state"), iss=answer.get("iss"))


def provider(url: str, browser: Browser, storage: Memory, metadata_url: str | None = None) -> OAuthClientProvider:
    return OAuthClientProvider(
        url,
        public_client("e2e test client"),
        storage,
        redirect_handler=browser.redirect_handler,
        callback_handler=browser.callback_handler,
        client_metadata_url=metadata_url,
    )


def client(url: str, auth: OAuthClientProvider, mode: str) -> Client:
    http = httpx2.AsyncClient(auth=auth, timeout=httpx2.Timeout(60.0))
    return Client(streamable_http_client(url, http_client=http), mode=mode)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
@pytest.mark.parametrize("registration", ["metadata document", "dynamic registration"])
async def test_the_official_client_signs_in_searches_refreshes_and_is_refused_after_revocation(
    emulator: Emulator, tmp_path: Path, mode: str, registration: str
) -> None:
    emulator.reset()
    documents: dict[str, dict[str, Any]] = {}
    with (
        https_documents(tmp_path, documents) as (doc_base, _, tls),
        remote_server(emulator, tmp_path / "server", authorization_server=True, metadata_tls=tls) as run,
    ):
        metadata_url = None
        if registration == "metadata document":
            metadata_url = doc_base + "/client.json"
            documents["/client.json"] = {
                "client_id": metadata_url,
                "client_name": "e2e test client",
                "redirect_uris": [APP_REDIRECT],
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
                "token_endpoint_auth_method": "none",
            }
        browser, storage = Browser(run.base, OWNER), Memory()
        auth = provider(run.url, browser, storage, metadata_url)
        async with client(run.url, auth, mode) as session:
            names = [tool.name for tool in (await session.list_tools()).tools]
            assert "gmail_search_messages" in names
            found = await session.call_tool("gmail_search_messages", {"query": "in:inbox"})
            assert not found.is_error and found.structured_content["mailbox"] == OWNER
        assert len(browser.answers) == 1 and browser.answers[0]["iss"] == run.base
        assert storage.client is not None
        if metadata_url:
            assert storage.client.client_id == metadata_url
        first = storage.tokens
        assert first is not None and first.refresh_token
        # The access token runs out: the client refreshes it (rotation: a new pair), no browser involved.
        auth.context.token_expiry_time = time.time() - 1
        async with client(run.url, auth, mode) as session:
            again = await session.call_tool("gmail_search_messages", {"query": "in:inbox"})
            assert not again.is_error
        second = storage.tokens
        assert second is not None and second.access_token != first.access_token and len(browser.answers) == 1
        # Revoked (RFC 7009, a public client: no secret): the token is refused from then on.
        async with httpx2.AsyncClient(base_url=run.base) as http:
            form = {"token": second.refresh_token or "", "client_id": storage.client.client_id}
            assert (await http.post("/revoke", data=form)).status_code == 200
            ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
            refused = await http.post("/mcp", json=ping, headers={"Authorization": f"Bearer {second.access_token}"})
            assert refused.status_code == 401 and "resource_metadata=" in refused.headers["www-authenticate"]
            form = {"grant_type": "refresh_token", "refresh_token": second.refresh_token or ""}
            stale = await http.post("/token", data={**form, "client_id": storage.client.client_id})
            assert stale.status_code == 400 and stale.json()["error"] == "invalid_grant"


@pytest.mark.slow  # a server subprocess, as the other HTTP subprocess tests
def test_the_demo_signs_a_person_in_without_a_google_cloud_project(tmp_path: Path) -> None:
    """`--demo --http --auth oauth` on loopback: the demo's emulator plays Google; the official client registers
    (DCR), the browser goes through consent and the demo's account chooser, and the demo mailbox answers."""
    clean = {name: value for name, value in os.environ.items() if not name.startswith("GMAIL_")}
    process = subprocess.Popen(
        [sys.executable, "-m", "server.main", "--demo", "--http", "127.0.0.1:0", "--auth", "oauth"],
        env={**clean, "PYTHONPATH": str(PROJECT_ROOT), "GMAIL_MCP_HOME": str(tmp_path)},
        cwd="/",
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        url = ""
        for line in process.stderr:
            if line.startswith("Add this URL to your MCP client"):
                url = line.rsplit(" ", 1)[-1].strip()
                break
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp"), url
        threading.Thread(target=process.stderr.read, daemon=True).start()  # a full pipe would stall the server

        async def sign_in_and_search() -> Any:
            browser = Browser(url.removesuffix("/mcp"), "", demo=True)
            async with client(url, provider(url, browser, Memory()), "auto") as session:
                return await session.call_tool("gmail_search_messages", {"query": "in:inbox"})

        found = anyio.run(sign_in_and_search)
        assert not found.is_error and found.structured_content["result_count"] > 0
    finally:
        process.terminate()
        process.wait(30)


async def test_the_first_search_after_sign_in_uses_the_access_token_of_the_code_exchange(
    emulator: Emulator, tmp_path: Path
) -> None:
    """Google's web-server flow returns an access token with the refresh token ("Using OAuth 2.0 for Web Server
    Applications", step 5: `access_token`, `expires_in`): it is kept with the grant, so the person's first Gmail
    call after signing in costs no token request. The emulator's request log counts Google's token endpoint."""
    emulator.reset()
    with remote_server(emulator, tmp_path / "server", authorization_server=True) as run:
        browser = Browser(run.base, OWNER)
        async with client(run.url, provider(run.url, browser, Memory()), "legacy") as session:
            found = await session.call_tool("gmail_search_messages", {"query": "in:inbox"})
        assert not found.is_error and found.structured_content["mailbox"] == OWNER
    log = emulator.requests()
    to_google_token = [entry for entry in log if entry["method"] == "POST" and entry["path"] == "/token"]
    assert len(to_google_token) == 1  # the code exchange; no refresh before the search
    assert any("/messages" in entry["path"] for entry in log)
