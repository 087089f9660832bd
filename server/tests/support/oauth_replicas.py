"""`--auth oauth` replicas behind HAProxy (support/replicas.py) sharing one real redis-server, and a sign-in through
the load balancer with the official MCP client's `OAuthClientProvider`.

Every replica gets what one deployment shares (docs/replicas.md, "Running N replicas"): the same store
(`GMAIL_MCP_STORE`), public URL (the HAProxy address, chosen before the replicas start), token key, Google Web
client file (the emulator's, its redirect URI the public callback) and allowed people; each its own home and state
folder. The emulator plays Google: in-process (`web_client_file`) or a process (`bench.harness.emulator_process`,
its redirect URI registered through the control endpoint). Used by test_replicas_oauth.py and bench/replicas.py.
"""

from __future__ import annotations

import json
import os
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2
from cryptography.fernet import Fernet
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

from server.tests.support.replicas import ReplicaSet, free_port, replica_set

# The sign-in kit of the single-server end-to-end test: the browser (consent, Google, back to the client), the
# client's token storage and the provider with Dynamic Client Registration.
from server.tests.test_remote_end_to_end import APP_REDIRECT, Browser, Memory, provider  # noqa: F401


def web_client_file(emulator: Any, folder: Path, callback: str) -> Path:
    """The emulator's Google Web client as Cloud Console downloads it, `callback` among its redirect URIs."""
    if hasattr(emulator, "web_client_file"):
        return Path(emulator.web_client_file(folder / "web-client.json", callback))
    from server.emulator.google_oauth import AUTH_PATH, WEB_CLIENT_ID, WEB_CLIENT_SECRET

    request = urllib.request.Request(
        emulator.url + "/_emulator/oauth/redirect-uris",
        data=json.dumps({"uri": callback}).encode(),
        headers={"Content-Type": "application/json"},
    )
    urllib.request.urlopen(request, timeout=10).close()
    web = {
        "client_id": WEB_CLIENT_ID,
        "client_secret": WEB_CLIENT_SECRET,
        "auth_uri": emulator.url + AUTH_PATH,
        "token_uri": emulator.url + "/token",
        "redirect_uris": [callback],
    }
    path = folder / "web-client.json"
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        json.dump({"web": web}, handle)
    return path


@contextmanager
def oauth_replica_set(
    emulator: Any,
    scratch: Path,
    store_url: str,
    *,
    allowed: str,
    count: int = 3,
    sticky: bool = True,
    extra_env: dict[str, str] | None = None,
) -> Iterator[ReplicaSet]:
    """`count` replicas of `--http --auth oauth` on one store behind HAProxy; `.url` is the public URL."""
    scratch.mkdir(parents=True, exist_ok=True)
    front = free_port()
    public = f"http://127.0.0.1:{front}/mcp"
    client_file = web_client_file(emulator, scratch, f"http://127.0.0.1:{front}/oauth/google/callback")
    shared = {
        "GMAIL_MCP_STORE": store_url,
        "GMAIL_MCP_PUBLIC_URL": public,
        "GMAIL_MCP_TOKEN_KEY": Fernet.generate_key().decode("ascii"),
        "GMAIL_MCP_GOOGLE_CLIENT_FILE": str(client_file),
        "GMAIL_MCP_ALLOWED_USERS": allowed,
        **(extra_env or {}),
    }

    def own(index: int) -> dict[str, str]:
        return {"GMAIL_MCP_STATE_DIR": str(scratch / f"replica-{index}" / "state")}

    with replica_set(
        emulator,
        scratch,
        count=count,
        sticky=sticky,
        extra_env=shared,
        replica_env=own,
        args=("--auth", "oauth"),
        front_port=front,
    ) as replicas:
        assert replicas.url == public
        yield replicas


def oauth_client(url: str, auth: Any, mode: str) -> Client:
    """The official MCP client through `url` with the OAuth provider `auth` (`mode` "legacy" or "auto")."""
    http = httpx2.AsyncClient(auth=auth, timeout=httpx2.Timeout(60.0))
    return Client(streamable_http_client(url, http_client=http), mode=mode)


async def sign_in(url: str, user: str, mode: str = "auto") -> tuple[Memory, Any, Browser]:
    """Signs `user` in through the load balancer at `url` with the official client (DCR, PKCE, the browser through
    consent and Google); answers (the client's storage holding the pair, the provider, the browser)."""
    browser, storage = Browser(url.removesuffix("/mcp"), user), Memory()
    auth = provider(url, browser, storage)
    async with oauth_client(url, auth, mode) as session:
        await session.list_tools()
    assert storage.tokens is not None and storage.tokens.refresh_token
    return storage, auth, browser
