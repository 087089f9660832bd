"""The official MCP conformance suite's `authorization` command against this server's OAuth authorization server
(`server/remote/authorization.py`), headless: this script plays the person in the browser.

It serves the authorization server on a free loopback port (issuer `http://127.0.0.1:PORT`, resource
`<issuer>/mcp`, SQLite state in a temporary folder) with the Gmail emulator standing in for Google, registers a
public client by dynamic registration whose redirect URI is the suite's callback
(`http://127.0.0.1:<callback port>/callback`), and runs the suite. When the suite prints the authorization URL it
would have a person open, the script follows it as a browser would: the consent page (allow), Google's page (the
emulator consents for the hinted user, who is in the allowed users), the server's Google callback, and finally the
suite's own callback. Exit status: the suite's.

    conformance/run-authorization.sh          # installs the pinned suite, then runs this
"""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import tempfile
import threading
import urllib.request
from pathlib import Path
from typing import Any

import httpx2
import uvicorn
from cryptography.fernet import Fernet
from starlette.applications import Starlette

from server import demo
from server.emulator import start_emulator
from server.protocol.http import bind_socket
from server.remote.authorization import AllowedUsers, AuthorizationServer
from server.remote.client_metadata import ClientMetadataFetcher
from server.remote.google_upstream import GoogleSignIn, GoogleWebClient
from server.remote.person import scopes_for_groups
from server.remote.sqlite_store import SQLiteStore
from server.scopes import READONLY
from server.tests.support.oauth_browser import at_google, form_fields

SUITE_TIMEOUT_S = 180.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def serve(app: Any, sock: socket.socket) -> uvicorn.Server:
    """Serves `app` on `sock` in a thread; `.should_exit = True` stops it."""
    server = uvicorn.Server(uvicorn.Config(app, log_config=None, access_log=False, lifespan="off"))
    threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock])), daemon=True).start()
    return server


def register(issuer: str, redirect_uri: str) -> str:
    """A public client, by dynamic registration (RFC 7591); its client_id."""
    body = {
        "client_name": "MCP conformance suite",
        "redirect_uris": [redirect_uri],
        "token_endpoint_auth_method": "none",
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
    }
    answer = httpx2.post(issuer + "/register", json=body, timeout=30.0)
    answer.raise_for_status()
    return str(answer.json()["client_id"])


def browse(authorization_url: str, issuer: str, person: str) -> str:
    """`person`'s browser from the authorization URL to the client's redirect; returns that redirect."""
    with httpx2.Client(follow_redirects=False, timeout=30.0) as browser:
        to_consent = browser.get(authorization_url)
        if to_consent.status_code != 302:
            raise RuntimeError(f"/authorize answered {to_consent.status_code}: {to_consent.text[:300]}")
        page = browser.get(httpx2.URL(issuer).join(to_consent.headers["location"]))
        decided = browser.post(issuer + "/oauth/consent", data={**form_fields(page.text), "decision": "allow"})
        if decided.status_code != 302:
            raise RuntimeError(f"the consent answered {decided.status_code}: {decided.text[:300]}")
        back = at_google(decided.headers["location"], person)
        to_client = browser.get(back)
        if to_client.status_code != 302:
            raise RuntimeError(f"the Google callback answered {to_client.status_code}: {to_client.text[:300]}")
        return str(to_client.headers["location"])


def main(node: str, suite: str, results: str) -> int:
    with (
        tempfile.TemporaryDirectory(prefix="gmail-mcp-as-") as folder,
        start_emulator(demo.DEMO_MAILBOX, rebase_dates=True) as emulator,
    ):
        sock = bind_socket("127.0.0.1", 0)
        issuer = f"http://127.0.0.1:{sock.getsockname()[1]}"
        callback = issuer + "/oauth/google/callback"
        web = GoogleWebClient.from_file(
            emulator.web_client_file(Path(folder) / "client.json", callback),
            certs_url=emulator.url + "/oauth2/v3/certs",
        )
        store = SQLiteStore(Path(folder) / "state.sqlite")
        authorization = AuthorizationServer(
            store,
            Fernet(Fernet.generate_key()),
            resource_url=issuer + "/mcp",
            issuer=issuer,
            google=GoogleSignIn(web, callback),
            fetcher=ClientMetadataFetcher(store, allow_loopback_http=True),
            allowed_users=AllowedUsers.parse(emulator.store.email_address),
            mcp_scopes=scopes_for_groups(()),
            google_scopes_for=lambda _scopes: [READONLY],
        )
        server = serve(Starlette(routes=authorization.routes()), sock)
        try:
            port = free_port()
            client_id = register(issuer, f"http://127.0.0.1:{port}/callback")
            print(f"conformance: authorization server at {issuer}, client {client_id}", file=sys.stderr)
            return run_suite(node, suite, results, issuer, client_id, port, emulator.store.email_address)
        finally:
            server.should_exit = True


def run_suite(node: str, suite: str, results: str, issuer: str, client_id: str, port: int, person: str) -> int:
    command = [node, suite, "authorization", "--url", issuer, "--client-id", client_id]
    command += ["--resource", issuer + "/mcp", "--port", str(port), "--output-dir", results]
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    timer = threading.Timer(SUITE_TIMEOUT_S, process.kill)
    timer.start()
    try:
        for line in process.stdout:
            print(line, end="")
            if line.startswith(issuer + "/authorize?"):
                redirect = browse(line.strip(), issuer, person)
                deliver = urllib.request.Request(redirect)  # the browser lands on the suite's callback
                threading.Thread(
                    target=urllib.request.urlopen, args=(deliver,), kwargs={"timeout": 30}, daemon=True
                ).start()
        return process.wait()
    finally:
        timer.cancel()
        if process.poll() is None:
            process.kill()


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: run_authorization.py NODE SUITE RESULTS_DIR")
    sys.exit(main(*sys.argv[1:]))
