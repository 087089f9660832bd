"""The remote mode in-process for tests: the HTTP app of `--auth oauth` on uvicorn on loopback (a thread), over the
emulator playing Google and Gmail, with people signed in to Google by the test playing the browser.

`RemoteRun.sign_in(email)` gets a real Google grant from the emulator (the Web client's authorization endpoint,
auto-consent for `login_hint`, the code exchanged with PKCE, the ID token verified) and saves it as the
authorization server does (`Records.save_google_account`); `RemoteRun.token_for(person)` issues the MCP access
token the authorization server would (`Ledger.issue_tokens`), for this resource unless told otherwise.
"""

from __future__ import annotations

import asyncio
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from server.emulator import Emulator
from server.protocol import http
from server.protocol.oauth_app import Remote, build_remote
from server.remote.google_upstream import GoogleIdentity, GoogleSignIn
from server.remote.ledger import TokenPair
from server.remote.oauth_config import load_oauth_settings
from server.remote.records import GoogleAccount
from server.remote.store import StateStore
from server.runtime.http_config import load_http_settings
from server.tests.support.emulator import emulator_settings
from server.toolsets import ALL_TOOLSETS


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def follow_once(url: str) -> str:
    """GETs `url` as a browser would and answers the Location of its redirect."""
    opener = urllib.request.build_opener(_NoRedirects)
    try:
        answer = opener.open(url, timeout=10)
    except urllib.error.HTTPError as redirect:
        assert redirect.code in (302, 303, 307), (redirect.code, redirect.read()[:300])
        return str(redirect.headers["Location"])
    raise AssertionError(f"expected a redirect from {url}, got {answer.status}")


@dataclass
class RemoteRun:
    remote: Remote
    emulator: Emulator
    url: str  # the public URL: the resource, http://127.0.0.1:PORT/mcp
    google: GoogleSignIn

    @property
    def base(self) -> str:
        return self.url.removesuffix("/mcp")

    def google_identity(self, email: str, scopes: list[str]) -> GoogleIdentity:
        url, verifier = self.google.authorization_url("test-state", scopes, login_hint=email)
        location = urlsplit(follow_once(url))
        callback = {name: values[-1] for name, values in parse_qs(location.query).items()}
        return self.google.finish(callback, verifier)

    def sign_in(self, email: str, *, to: str | None = None, scopes: list[str] | None = None) -> str:
        """Signs `email` in with Google and saves the grant for the person `to` (default: themselves, as the
        authorization server's callback does); answers the person's subject."""
        identity = self.google_identity(email, scopes or self.remote_google_scopes())
        subject = to or identity.sub
        assert identity.refresh_token
        account = GoogleAccount(identity.email, identity.sub, identity.refresh_token, identity.scopes)
        self.remote.records.save_google_account(subject, account)
        return subject

    def remote_google_scopes(self) -> list[str]:
        scopes = self.remote.gate.people.settings.write_tools
        mapped = {"https://www.googleapis.com/auth/gmail.readonly"}
        if scopes:
            mapped |= {"https://www.googleapis.com/auth/gmail.compose", "https://www.googleapis.com/auth/gmail.modify"}
        return sorted(mapped)

    def token_for(
        self, subject: str, *, scopes: list[str] | None = None, resource: str | None = None, client_id: str = "test"
    ) -> TokenPair:
        held = scopes if scopes is not None else ["gmail.read", "gmail.drafts", "gmail.send", "gmail.labels"]
        return self.remote.ledger.issue_tokens(
            subject=subject, client_id=client_id, scopes=held, resource=resource or self.url
        )


@contextmanager
def remote_server(
    emulator: Emulator,
    scratch: Path,
    *,
    write_tools: frozenset[str] = frozenset(),
    authorization_server: bool = False,
    env: dict[str, str] | None = None,
    metadata_tls: Any = None,
    store: StateStore | None = None,
    vault_key: bytes | None = None,
) -> Iterator[RemoteRun]:
    """The remote HTTP app served on 127.0.0.1 (any free port) until the block ends. Replicas of one deployment:
    the same `store` data (a store object each) and `vault_key`, and one GMAIL_MCP_PUBLIC_URL in `env`."""
    from cryptography.fernet import Fernet

    scratch.mkdir(parents=True, exist_ok=True)
    sock = http.bind_socket("127.0.0.1", 0)
    port = sock.getsockname()[1]
    public = f"http://127.0.0.1:{port}/mcp"
    origin = urlsplit((env or {}).get("GMAIL_MCP_PUBLIC_URL") or public)  # replicas share the public one
    callback = f"{origin.scheme}://{origin.netloc}/oauth/google/callback"
    client_file = emulator.web_client_file(scratch / "web-client.json", callback)
    settings = emulator_settings(emulator, scratch, quota_units_per_s=0, write_tools=write_tools)
    oauth = load_oauth_settings(
        loopback_bind=True,
        toolsets=ALL_TOOLSETS,
        enabled=write_tools,
        home=scratch,
        env={
            "GMAIL_MCP_PUBLIC_URL": public,
            "GMAIL_MCP_GOOGLE_CLIENT_FILE": str(client_file),
            "GMAIL_MCP_STATE_DIR": str(scratch / "state"),
            "GMAIL_MCP_ALLOWED_USERS": "me@example.com,ada@work.example",
            **(env or {}),
        },
    )
    # Plain JSON answers: event streams would end at once in every server after the first of a process (the
    # lifespan's end raises sse-starlette's process-wide exit flag; the CLI's servers are one per process).
    options = load_http_settings(f"127.0.0.1:{port}", {"GMAIL_MCP_HTTP_JSON_RESPONSES": "1"})
    remote = build_remote(
        settings,
        oauth,
        options,
        cipher=Fernet(vault_key or Fernet.generate_key()),
        toolsets=ALL_TOOLSETS,
        metrics=lambda: (b"", "text/plain"),
        authorization_server=authorization_server,
        allow_loopback_clients=True,
        metadata_tls=metadata_tls,
        store=store,
        vault_key=vault_key,
    )
    import uvicorn

    config = uvicorn.Config(remote.guard, lifespan="on", log_config=None, access_log=False)
    server = uvicorn.Server(config)
    loop = asyncio.new_event_loop()
    thread = threading.Thread(
        target=lambda: loop.run_until_complete(server.serve(sockets=[sock])), name="remote-http", daemon=True
    )
    thread.start()
    try:
        while not server.started and thread.is_alive():
            threading.Event().wait(0.02)
        yield RemoteRun(remote, emulator, public, GoogleSignIn(remote.client, callback))
    finally:
        server.should_exit = True
        thread.join(30)
        sock.close()
        remote.store.close()
