"""Runs the official MCP conformance suite's `authorization` command against the authorization server, on loopback,
with the emulator as Google and this script as the person's browser.

    python -m server.tests.support.as_conformance [--port 3333] [--npx "npx -y -p node@22 -p ..."]

What it does: starts the emulator (Google), serves `AuthorizationServer.routes()` with uvicorn on 127.0.0.1 (issuer
= that URL, resource = its `/mcp`), registers a public client whose redirect is the suite's callback
`http://127.0.0.1:<port>/callback` (dynamic registration, as a deployment's operator would), runs the suite with
`--url <issuer> --client-id <id> --resource <issuer>/mcp --port <port>`, and when the suite prints the
authorization URL it walks it like a browser (the consent page's Allow, Google's consent for the emulator's
owner, the callback) up to the suite's callback server. Exits with the suite's exit code.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from http.cookiejar import CookieJar
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import uvicorn
from cryptography.fernet import Fernet
from starlette.applications import Starlette

from server.remote.authorization import AllowedUsers, AuthorizationServer
from server.remote.client_metadata import ClientMetadataFetcher
from server.remote.google_upstream import GoogleSignIn, GoogleWebClient
from server.remote.sqlite_store import SQLiteStore
from server.tests.support.emulator import OWNER, build_mailbox
from server.tests.support.oauth_browser import GOOGLE_SCOPES, MCP_SCOPES, at_google, form_fields, google_scopes_for

SUITE = "@modelcontextprotocol/conformance@0.2.0-alpha.12"
DEFAULT_NPX = f"npx -y -p node@22 -p {SUITE} conformance"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


class Browser:
    """urllib with a cookie jar; redirects read by hand."""

    def __init__(self) -> None:
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(CookieJar()), NoRedirects)

    def go(self, url: str, form: dict[str, str] | None = None) -> tuple[int, str, str]:
        data = urlencode(form).encode() if form is not None else None
        try:
            with self.opener.open(url, data=data, timeout=30) as answer:
                return answer.status, answer.headers.get("Location", ""), answer.read().decode()
        except urllib.error.HTTPError as answer:
            return answer.code, answer.headers.get("Location", ""), answer.read().decode()


def walk(authorization_url: str, issuer: str) -> None:
    browser = Browser()
    status, consent, page = browser.go(authorization_url)
    assert status == 302, (status, page)
    status, _, page = browser.go(consent)
    assert status == 200, (status, page)
    status, google, page = browser.go(issuer + "/oauth/consent", {**form_fields(page), "decision": "allow"})
    assert status == 302, (status, page)
    status, to_client, page = browser.go(at_google(google, OWNER))
    assert status == 302, (status, page)
    browser.go(to_client)  # the suite's callback server


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0, help="the suite's callback port (default: a free one)")
    parser.add_argument("--npx", default=DEFAULT_NPX, help=f"how to run the suite (default: {DEFAULT_NPX})")
    parser.add_argument("--output-dir", default="", help="passed to the suite's -o")
    args = parser.parse_args()
    from server.emulator import start_emulator

    scratch = Path(tempfile.mkdtemp(prefix="as-conformance-"))
    emulator = start_emulator(build_mailbox(scratch / "mail"))
    port, callback_port = free_port(), args.port or free_port()
    issuer = f"http://127.0.0.1:{port}"
    client_file = emulator.web_client_file(scratch / "client.json", issuer + "/oauth/google/callback")
    web = GoogleWebClient.from_file(client_file, certs_url=emulator.url + "/oauth2/v3/certs")
    store = SQLiteStore(scratch / "state.sqlite3")
    server = AuthorizationServer(
        store,
        Fernet(Fernet.generate_key()),
        resource_url=issuer + "/mcp",
        issuer=issuer,
        google=GoogleSignIn(web, issuer + "/oauth/google/callback"),
        fetcher=ClientMetadataFetcher(store),
        allowed_users=AllowedUsers.parse(OWNER),
        mcp_scopes=MCP_SCOPES,
        google_scopes_for=google_scopes_for,
    )
    assert set(GOOGLE_SCOPES) == set(MCP_SCOPES)
    config = uvicorn.Config(Starlette(routes=server.routes()), host="127.0.0.1", port=port, log_level="warning")
    web_server = uvicorn.Server(config)
    threading.Thread(target=web_server.run, daemon=True).start()
    while not web_server.started:
        time.sleep(0.05)
    registration = urllib.request.Request(
        issuer + "/register",
        data=json.dumps(
            {
                "client_name": "MCP conformance suite",
                "redirect_uris": [f"http://127.0.0.1:{callback_port}/callback"],
                "token_endpoint_auth_method": "none",
            }
        ).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(registration, timeout=10) as answer:
        client_id = json.loads(answer.read())["client_id"]
    command = [
        *shlex.split(args.npx),
        "authorization",
        "--url",
        issuer,
        "--client-id",
        client_id,
        "--resource",
        issuer + "/mcp",
        "--port",
        str(callback_port),
        *(["-o", args.output_dir] if args.output_dir else []),
    ]
    print("running:", shlex.join(command), file=sys.stderr)
    suite = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert suite.stdout is not None
    authorize = re.compile(re.escape(issuer) + r"/authorize\?\S+")
    for line in suite.stdout:
        sys.stdout.write(line)
        found = authorize.search(line)
        if found and urlsplit(found.group(0)).path == "/authorize":
            threading.Thread(target=walk, args=(found.group(0), issuer), daemon=True).start()
    code = suite.wait()
    web_server.should_exit = True
    emulator.stop()
    store.close()
    return code


if __name__ == "__main__":
    sys.exit(main())
