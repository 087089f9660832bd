"""The consent page of `auth_cli.py` says what happened: the real google-auth-oauthlib flow (`ConsentFlow`), a
browser played by urllib on loopback, and Google's token endpoint played by a loopback HTTP server."""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

import pytest

from server import auth_cli
from server.consent_flow import ConsentDenied, ConsentFlow

TOKEN_ANSWER = {"access_token": "ya29.x", "refresh_token": "1//r", "expires_in": 3600, "token_type": "Bearer"}


def token_endpoint(status: int) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            body = TOKEN_ANSWER if status == 200 else {"error": "invalid_grant", "error_description": "Bad Request"}
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *_args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def consent(monkeypatch, token_uri: str, answer: str) -> tuple[object, tuple[int, str]]:
    """Runs the flow; the 'browser' comes back with `answer` (a query string; `{state}` is the real state).
    Returns what the flow returned or raised, and the status and text of the page the browser was shown."""
    monkeypatch.setenv("OAUTHLIB_INSECURE_TRANSPORT", "1")  # the token endpoint here is plain http on loopback
    client = {"installed": {"client_id": "1-a.apps.googleusercontent.com", "client_secret": "s",
                            "auth_uri": "https://accounts.google.com/o/oauth2/auth", "token_uri": token_uri,
                            "redirect_uris": ["http://localhost"]}}  # fmt: skip
    flow = ConsentFlow.from_client_config(client, scopes=["https://www.googleapis.com/auth/gmail.readonly"])
    monkeypatch.setattr(ConsentFlow, "describe_failure", staticmethod(auth_cli.describe_consent_failure))
    page: dict[str, tuple[int, str]] = {}

    def browser() -> None:
        for _ in range(500):  # the flow sets consent_url before it waits
            if flow.consent_url:
                break
            time.sleep(0.01)
        state = parse_qs(urlparse(flow.consent_url).query)["state"][0]
        try:
            urllib.request.urlopen(flow.redirect_uri + "favicon.ico", timeout=30)
        except urllib.error.HTTPError as not_the_answer:
            assert not_the_answer.code == 404
        url = flow.redirect_uri + "?" + answer.format(state=state)
        try:
            with urllib.request.urlopen(url, timeout=30) as shown:
                page["shown"] = (shown.status, shown.read().decode())
        except urllib.error.HTTPError as shown:
            page["shown"] = (shown.code, shown.read().decode())

    helper = threading.Thread(target=browser)
    helper.start()
    try:
        outcome: object = flow.run_local_server(
            host="127.0.0.1", port=0, open_browser=False, timeout_seconds=60, success_message="Authorized."
        )
    except Exception as exc:
        outcome = exc
    helper.join(60)
    return outcome, page["shown"]


def test_a_consent_that_works_says_authorized_after_the_exchange(monkeypatch):
    google = token_endpoint(200)
    scope = "https://www.googleapis.com/auth/gmail.readonly"
    answer = "state={state}&code=4/abc&scope=" + scope
    outcome, (status, text) = consent(monkeypatch, f"http://127.0.0.1:{google.server_port}/token", answer)
    google.shutdown()
    assert status == 200 and text == "Authorized."
    assert outcome.refresh_token == "1//r"


@pytest.mark.parametrize(
    ("answer", "status", "shown"),
    [
        ("error=access_denied&state={state}", None, "Access was denied"),  # the person pressed Cancel
        ("state=an-older-attempt&code=4/abc", 200, "older login attempt"),  # stale state
        ("state={state}&code=4/abc", 400, "Authorization failed"),  # Google refuses the code (invalid_grant)
    ],
)
def test_a_consent_that_failed_never_says_authorized(monkeypatch, answer, status, shown):
    google = token_endpoint(status or 200)
    outcome, (code, text) = consent(monkeypatch, f"http://127.0.0.1:{google.server_port}/token", answer)
    google.shutdown()
    assert isinstance(outcome, Exception)
    assert code == 400 and "Authorized." not in text and shown in text and "close this tab" in text
    assert auth_cli.describe_consent_failure(outcome) in text  # the page and the terminal say the same
    if "error=" in answer:
        assert isinstance(outcome, ConsentDenied)


def test_a_network_failure_during_the_exchange_gets_a_hint_not_a_raw_error(monkeypatch):
    outcome, (code, text) = consent(monkeypatch, f"http://127.0.0.1:{closed_port()}/token", "state={state}&code=4/a")
    advice = auth_cli.describe_consent_failure(outcome)
    assert code == 400 and "Google could not be reached" in text
    assert "internet connection" in advice and "HTTPS_PROXY" in advice and "run this command again" in advice
