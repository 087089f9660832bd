"""The authorization request and the consent page: `/authorize`, then `/oauth/consent` in the same browser.

`/authorize` (OAuth 2.1 4.1.1) checks, in this order, and answers accordingly:
1. the client (its metadata document or registration) and the redirect URI (exact match; loopback port may vary):
   if either fails the browser gets an error page, never a redirect (RFC 6749 4.1.2.1: an unchecked redirect URI
   would make this server an open redirector);
2. then every other problem goes back to the client as `error=...&state=...&iss=...` (RFC 9207): a response type
   other than `code`, PKCE missing or not S256 (`plain` is refused: OAuth 2.1 4.1.1 / MCP), a `resource` (RFC
   8707) that is not this server's resource URL (`invalid_target`), scopes this server does not offer.
A good request is kept (pending, ten minutes) and the browser is sent to the consent page with a cookie that binds
the request to this browser (HttpOnly, SameSite=Lax, Secure on https; `__Host-` prefixed there).

The consent page names the client (its self-given name, and the host that vouches for it), the access asked in
plain words, and where the answer will go. Its form carries a per-request CSRF value; the POST must come from the
browser holding the cookie (a request started in one browser cannot be approved from another: the confused deputy
where an attacker's authorization request rides a victim's session). Allow leads to Google's consent (`openid
email` plus the Google scopes of the MCP scopes asked; offline; PKCE; a fresh `state`); Deny answers the client
`access_denied`.
"""

from __future__ import annotations

import secrets
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from server.runtime.observability import get_logger

from .clients import UnknownClient
from .oauth_common import CONSENT_PATH, AuthCore
from .pages import consent_page, error_page
from .person import READ_SCOPE
from .store import PENDING

log = get_logger("remote.authorize")
CONSENT_STAGE = "consent"
GOOGLE_STAGE = "google"


async def authorize(core: AuthCore, request: Request) -> Response:
    if request.method == "POST":
        params = {key: str(value) for key, value in (await request.form()).items()}
    else:
        params = dict(request.query_params)
    client_id = params.get("client_id", "")
    try:
        client = await core.clients.find(client_id)
    except UnknownClient as error:
        return error_page("Unknown app", f"This sign-in cannot go on: {error}")
    redirect_uri = params.get("redirect_uri") or (client.redirect_uris[0] if len(client.redirect_uris) == 1 else "")
    if not redirect_uri or not client.redirect_allowed(redirect_uri):
        log.warning("authorization refused: redirect URI not registered", extra={"client_id": client_id[:200]})
        return error_page(
            "Unregistered redirect",
            f"The app asked to return to {redirect_uri or '(nothing)'}, which is not among the redirect URIs its "
            "metadata document or registration lists. Nothing was sent there.",
        )
    state = params.get("state")

    def refuse(error: str, description: str) -> Response:
        return core.redirect_to_client(redirect_uri, error=error, error_description=description, state=state)

    if params.get("response_type") != "code":
        return refuse("unsupported_response_type", "Only response_type=code is supported.")
    if not params.get("code_challenge"):
        return refuse("invalid_request", "PKCE is required: send code_challenge with code_challenge_method=S256.")
    if params.get("code_challenge_method", "plain") != "S256":
        return refuse("invalid_request", "Only the S256 PKCE method is accepted; plain is refused.")
    challenge = params["code_challenge"]
    if not 43 <= len(challenge) <= 128:
        return refuse("invalid_request", "code_challenge must be 43 to 128 characters (RFC 7636 4.2).")
    resource = params.get("resource")
    if resource is not None and resource.rstrip("/") != core.resource_url.rstrip("/"):
        return refuse("invalid_target", f"This server issues tokens for {core.resource_url} only.")
    asked = params.get("scope", "").split()
    unknown = [scope for scope in asked if scope not in core.mcp_scopes]
    if unknown:
        return refuse("invalid_scope", f"Unknown scope(s) {' '.join(unknown)}; offered: {' '.join(core.mcp_scopes)}.")
    wanted = [scope for scope in core.mcp_scopes if scope in asked or scope == READ_SCOPE] if asked else core.mcp_scopes
    cookie, browser = core.bind_browser(request)
    pending = {
        "stage": CONSENT_STAGE,
        "client_id": client.client_id,
        "redirect_uri": redirect_uri,
        "state": state,
        "code_challenge": challenge,
        "scopes": wanted,
        "resource": core.resource_url,
        "browser": browser,
        "csrf": secrets.token_urlsafe(32),
    }
    request_id = secrets.token_urlsafe(32)
    core.store.put(PENDING, request_id, pending, core.records.lifetimes.pending_s)
    response = RedirectResponse(
        core.url(CONSENT_PATH) + "?request=" + request_id, status_code=302, headers={"Cache-Control": "no-store"}
    )
    core.set_browser_cookie(response, cookie)
    return response


def _pending_consent(core: AuthCore, request_id: str) -> dict[str, Any] | None:
    pending = core.store.get(PENDING, request_id) if request_id else None
    return pending if pending is not None and pending.get("stage") == CONSENT_STAGE else None


EXPIRED = "This sign-in request is unknown or has expired. Start again from the app."
OTHER_BROWSER = (
    "This sign-in was started in another browser (or this browser's cookies were cleared). For your safety it can "
    "only be approved where it began: start again from the app."
)


async def consent_get(core: AuthCore, request: Request) -> Response:
    request_id = request.query_params.get("request", "")
    pending = _pending_consent(core, request_id)
    if pending is None:
        return error_page("Sign-in expired", EXPIRED)
    if not core.same_browser(request, pending):
        return error_page("Wrong browser", OTHER_BROWSER, 403)
    try:
        client = await core.clients.find(str(pending["client_id"]))
    except UnknownClient as error:
        return error_page("Unknown app", str(error))
    return consent_page(
        action=core.url(CONSENT_PATH),
        request_id=request_id,
        csrf=str(pending["csrf"]),
        client_name=client.name,
        client_host=client.host,
        client_id=client.client_id,
        by_document=client.by_document,
        redirect_uri=str(pending["redirect_uri"]),
        scopes=list(pending["scopes"]),
    )


async def consent_post(core: AuthCore, request: Request) -> Response:
    form = await request.form()
    request_id = str(form.get("request", ""))
    pending = _pending_consent(core, request_id)
    if pending is None:
        return error_page("Sign-in expired", EXPIRED)
    if not core.same_browser(request, pending) or not secrets.compare_digest(
        str(form.get("csrf", "")), str(pending["csrf"])
    ):
        log.warning("consent refused: not the browser that started the request")
        return error_page("Wrong browser", OTHER_BROWSER, 403)
    if core.store.take(PENDING, request_id) is None:  # a double submit: the first one won
        return error_page("Sign-in expired", EXPIRED)
    redirect_uri, state = str(pending["redirect_uri"]), pending.get("state")
    if form.get("decision") != "allow":
        return core.redirect_to_client(
            redirect_uri, error="access_denied", error_description="The person declined.", state=state
        )
    google_state = secrets.token_urlsafe(32)
    google_scopes = core.google_scopes_for(pending["scopes"])
    url, verifier = await run_in_threadpool(
        lambda: core.google.authorization_url(google_state, google_scopes, login_hint=core.login_hint)
    )
    onward = {
        **pending,
        "stage": GOOGLE_STAGE,
        "google_scopes": google_scopes,
        "verifier": core.cipher.encrypt(verifier.encode("ascii")).decode("ascii"),
    }
    core.store.put(PENDING, google_state, onward, core.records.lifetimes.pending_s)
    return RedirectResponse(url, status_code=302, headers={"Cache-Control": "no-store"})
