""" "Connect another Google account": a signed-in person adds a further Gmail address to the accounts their tools reach.

The tools hand the person a link (`PeopleSource.connect_link`: the unknown-account error carries one) to
`/oauth/accounts/connect?ticket=...&account=<address>`. The ticket is single-use, ten minutes, bound to the person
who asked. The page then runs two Google sign-ins through the one callback Google knows for this server
(`/oauth/google/callback`, shared with the authorization server: this module's route answers the requests it
started and hands every other to the authorization server's handler):
1. "is this browser the person's?": a sign-in (identity only) that must come back as the person's own Google
   `sub`; so a link passed to someone else (or planted in someone's mail) cannot attach *their* Google account to
   the link's owner (a confused deputy);
2. the new account's consent, for the Gmail scopes this server offers, `access_type=offline`: its refresh token is
   saved sealed among the person's Google grants (`Records.save_google_account`). The `account` enum shows it on
   the next listing.
Errors are pages (the person is in a browser), never a redirect elsewhere.

Where the client supports URL-mode elicitation (MCP 2025-11-25: the spec's own case of a server that is an OAuth
client of a third party), a call naming an account the person has not connected answers the JSON-RPC error
`URLElicitationRequired` (-32042) carrying the link (`url_elicitation`, a server middleware): the client opens it
for the person and may retry. Other clients get the link in the unknown-account error's hint.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable
from html import escape
from typing import Any

import mcp_types as types
from mcp.shared.exceptions import UrlElicitationRequiredError
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from server.remote.google_upstream import GoogleSignIn, GoogleSignInError
from server.remote.mailboxes import CONNECT_TICKET as TICKET
from server.remote.mailboxes import PeopleSource, person_tag
from server.remote.oauth_config import CALLBACK_PATH, OAuthSettings
from server.remote.pages import error_page
from server.remote.person import person_of
from server.remote.records import GoogleAccount, Records
from server.remote.store import PENDING
from server.runtime.observability import get_logger

log = get_logger("remote.connect")
CONNECT_PATH = "/oauth/accounts/connect"
VERIFY, ADD = "connect-verify", "connect-add"
EXPIRED = "This link has expired or was already used. Ask the assistant for a new one."


class ConnectPages:
    """The connect page and its share of the Google callback."""

    def __init__(self, people: PeopleSource, records: Records, google: GoogleSignIn, oauth: OAuthSettings) -> None:
        self.people, self.records, self.google, self.oauth = people, records, google, oauth

    def routes(self, callback_route: Route | None) -> list[Route]:
        """The page, and the callback wrapper in front of the authorization server's `callback_route`."""

        return [
            Route(CONNECT_PATH, self.start, methods=["GET"]),
            Route(CALLBACK_PATH, _SharedCallback(self, callback_route), methods=["GET"]),
        ]

    async def start(self, request: Request) -> Response:
        ticket = self.records.finish_request(request.query_params.get("ticket", ""))
        if ticket is None or ticket.get("stage") != TICKET:
            return error_page("Link expired", EXPIRED)
        subject = str(ticket["subject"])
        own = next((held for held in self.records.google_accounts(subject) if held.google_sub == subject), None)
        wanted = (request.query_params.get("account") or "").strip()[:320]
        state = self.records.begin_request({"stage": VERIFY, "subject": subject, "account": wanted})
        url, verifier = self.google.authorization_url(state, [], login_hint=own.email if own else None)
        self._keep_verifier(state, verifier)
        return RedirectResponse(url, status_code=302)

    def _keep_verifier(self, state: str, verifier: str) -> None:
        pending = self.records.store.get(PENDING, state) or {}
        sealed = self.records.cipher.encrypt(verifier.encode("ascii")).decode("ascii")
        self.records.store.put(PENDING, state, {**pending, "verifier": sealed}, self.records.lifetimes.pending_s)

    async def google_callback(self, request: Request) -> Response:
        pending = self.records.finish_request(request.query_params.get("state", ""))
        if pending is None or "verifier" not in pending:
            return error_page("Link expired", EXPIRED)
        verifier = self.records.cipher.decrypt(str(pending["verifier"]).encode("ascii")).decode("ascii")
        subject = str(pending["subject"])
        try:
            identity = await run_in_threadpool(self.google.finish, dict(request.query_params), verifier)
        except GoogleSignInError as error:
            log.warning("connect: google sign-in failed", extra={"google_error": error.error or "unknown"})
            return error_page("Google sign-in failed", "Google did not complete the sign-in; nothing was changed.")
        if pending["stage"] == VERIFY:
            if identity.sub != subject:
                log.warning("connect refused: another person's browser", extra={"person": person_tag(subject)})
                return error_page(
                    "Not your link",
                    "This link belongs to someone else's session: sign in to Google with the account you use for "
                    "this server, or ask your own assistant for a link.",
                    403,
                )
            state = self.records.begin_request({"stage": ADD, "subject": subject})
            scopes = self.oauth.google_scopes_for(self.oauth.mcp_scopes)
            url, verifier = self.google.authorization_url(state, scopes, login_hint=str(pending["account"]) or None)
            self._keep_verifier(state, verifier)
            return RedirectResponse(url, status_code=302)
        if not identity.refresh_token:
            return error_page(
                "No offline access",
                "Google sent no refresh token; remove this app at "
                "myaccount.google.com/permissions for that account and try again.",
            )
        account = GoogleAccount(identity.email, identity.sub, identity.refresh_token, identity.scopes)
        self.records.save_google_account(subject, account)
        log.info("google account connected", extra={"person": person_tag(subject)})
        body = (
            f"<p>Connected <strong>{escape(identity.email)}</strong>. Its mail is now available to your assistant "
            f"as the account <code>{escape(identity.email.lower())}</code>.</p><p>You can close this tab.</p>"
        )
        return HTMLResponse(f"<!doctype html><title>Account connected</title>{body}")


class _SharedCallback:
    """An ASGI app (Starlette mounts a class instance as one): the connect page's Google answers here, every other
    to the authorization server's callback route."""

    def __init__(self, pages: ConnectPages, fallback: Route | None) -> None:
        self.pages, self.fallback = pages, fallback

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        request = Request(scope, receive)
        pending = self.pages.records.store.get(PENDING, request.query_params.get("state", ""))
        if self.fallback is None or (pending is not None and pending.get("stage") in (VERIFY, ADD)):
            response = await self.pages.google_callback(request)
            await response(scope, receive, send)
        else:
            await self.fallback.handle(scope, receive, send)


def client_opens_urls(ctx: Any) -> bool:
    """Whether the client declared URL-mode elicitation."""
    capabilities = getattr(getattr(ctx, "session", None), "client_capabilities", None)
    elicitation = getattr(capabilities, "elicitation", None)
    return getattr(elicitation, "url", None) is not None


def url_elicitation(people: PeopleSource) -> Any:
    """The server middleware that offers the connect page as a URL elicitation (see the module docstring)."""

    async def middleware(ctx: Any, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
        params = ctx.params if ctx.method == "tools/call" and isinstance(ctx.params, dict) else {}
        arguments = params.get("arguments")
        wanted = arguments.get("account") if isinstance(arguments, dict) else None
        person = person_of(ctx) if isinstance(wanted, str) and wanted.strip() else None
        if person is not None and isinstance(wanted, str) and client_opens_urls(ctx):
            mailboxes = people.person(person.subject)
            if wanted.strip().lower() not in mailboxes.names:
                link = people.connect_link(person.subject, wanted)
                message = f"Connect the Google account {wanted.strip()[:80]} to use its mail here."
                request = types.ElicitRequestURLParams(
                    mode="url", url=link, message=message, elicitation_id=secrets.token_urlsafe(12)
                )
                raise UrlElicitationRequiredError([request])
        return await call_next(ctx)

    return middleware
