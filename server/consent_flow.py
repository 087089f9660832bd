"""The browser half of the one-time consent (`auth_cli.py`): Google's installed-app flow with a local page that
tells the truth.

google-auth-oauthlib's own page says its success message to whatever reaches the redirect port, before the code
is exchanged for a token: a cancelled consent, an answer to an older attempt (stale state) or a failed exchange
all showed "authorized". Here the exchange happens while the browser waits, and the page says what happened:
authorized, or what failed and that the terminal says what to do next. Requests that are not Google's answer
(a favicon) get a 404 and the wait goes on.
"""

from __future__ import annotations

import sys
import time
import webbrowser
import wsgiref.simple_server
import wsgiref.util
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import parse_qs

from google_auth_oauthlib.flow import InstalledAppFlow, WSGITimeoutError


class ConsentDenied(Exception):
    """Google redirected back with `error=...` (the person pressed Cancel, or the app may not be used)."""


class _QuietHandler(wsgiref.simple_server.WSGIRequestHandler):
    def log_message(self, *_args: Any) -> None:  # the terminal shows our own lines, not an access log
        pass


class _AnswerPage:
    """The WSGI app on the redirect port: exchanges the code, then answers the browser with the outcome."""

    def __init__(self, flow: InstalledAppFlow, success: str, describe: Callable[[BaseException], str]) -> None:
        self.flow = flow
        self.success = success
        self.describe = describe
        self.outcome: BaseException | bool | None = None

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        query = parse_qs(environ.get("QUERY_STRING", ""))
        if "code" not in query and "error" not in query:
            start_response("404 Not Found", [("Content-Type", "text/plain; charset=utf-8")])
            return [b"This page only receives Google's answer."]
        if "error" in query:
            self.outcome = ConsentDenied(query["error"][0])
        else:
            # oauthlib insists on https in the URL it parses; the redirect itself is plain http on loopback.
            answer = wsgiref.util.request_uri(environ).replace("http:", "https:", 1)
            try:
                self.flow.fetch_token(authorization_response=answer)
                self.outcome = True
            except Exception as exc:  # network failure, stale state, invalid_grant: all reported, none raised here
                self.outcome = exc
        if isinstance(self.outcome, BaseException):
            status = "400 Bad Request"
            text = f"{self.describe(self.outcome)}\n\nThe terminal says the same. You can close this tab."
        else:
            status, text = "200 OK", self.success
        start_response(status, [("Content-Type", "text/plain; charset=utf-8")])
        return [text.encode("utf-8")]


class ConsentFlow(InstalledAppFlow):
    """InstalledAppFlow whose local page reports the real outcome; `consent_url` is set once the wait begins."""

    consent_url: str | None = None
    describe_failure: Callable[[BaseException], str] = staticmethod(lambda exc: f"Authorization failed: {exc}")

    def run_local_server(
        self,
        host: str = "localhost",
        port: int = 0,
        authorization_prompt_message: str = "{url}",
        success_message: str = "Authorized. You can close this tab.",
        open_browser: bool = True,
        timeout_seconds: float | None = None,
        **kwargs: Any,
    ) -> Any:
        page = _AnswerPage(self, success_message, type(self).describe_failure)
        server = wsgiref.simple_server.make_server(host, port, page, handler_class=_QuietHandler)
        try:
            self.redirect_uri = f"http://{host}:{server.server_port}/"
            url, _state = self.authorization_url(**kwargs)
            self.consent_url = url
            if open_browser:
                webbrowser.get().open(url, new=1, autoraise=True)
            if authorization_prompt_message:
                print(authorization_prompt_message.format(url=url), file=sys.stderr, flush=True)
            deadline = None if timeout_seconds is None else time.monotonic() + timeout_seconds
            while page.outcome is None:
                if deadline is not None:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise WSGITimeoutError("Timed out waiting for response from authorization server")
                    server.timeout = left
                server.handle_request()
        finally:
            server.server_close()
        if isinstance(page.outcome, BaseException):
            raise page.outcome
        return self.credentials
