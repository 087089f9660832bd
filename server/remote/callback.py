"""`/oauth/google/callback`: Google sends the browser back; the person becomes known, and the client gets its code.

In order: the `state` names a request in flight (taken once: a replayed callback finds nothing) that began in this
browser (the cookie; else an error page); Google's code is exchanged with the PKCE verifier and the ID token
verified (`GoogleSignIn.finish`, in a worker thread); the address must be verified (google_upstream checks
`email_verified`) and admitted by `GMAIL_MCP_ALLOWED_USERS` (else a page saying who may sign in, whose link hands
the client `access_denied`); the Google grant is saved sealed, with the access token the exchange returned and
its expiry (the person's first Gmail call needs no refresh). If Google granted fewer scopes than asked (a person
can untick boxes on Google's consent screen), the MCP scopes issued shrink to those whose Google scopes were all
granted. Then the consent is recorded and a code issued: 302 to the client with `code`, `state` and `iss`
(RFC 9207). Every refusal that reaches the client carries `iss` too.
"""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from server.runtime.observability import get_logger

from .consent import EXPIRED, GOOGLE_STAGE, OTHER_BROWSER
from .google_upstream import GoogleIdentity, GoogleSignInError
from .oauth_common import AuthCore
from .pages import error_page, not_allowed_page
from .records import GoogleAccount

log = get_logger("remote.callback")


async def google_callback(core: AuthCore, request: Request) -> Response:
    params = dict(request.query_params)
    google_state = params.get("state", "")
    pending = core.records.finish_request(google_state)
    if pending is None or pending.get("stage") != GOOGLE_STAGE:
        return error_page("Sign-in expired", EXPIRED)
    if not core.same_browser(request, pending):
        log.warning("google callback refused: not the browser that started the request")
        return error_page("Wrong browser", OTHER_BROWSER, 403)
    redirect_uri, state = str(pending["redirect_uri"]), pending.get("state")
    verifier = core.cipher.decrypt(str(pending["verifier"]).encode("ascii")).decode("ascii")
    try:
        identity: GoogleIdentity = await run_in_threadpool(core.google.finish, params, verifier)
    except GoogleSignInError as error:
        declined = error.error == "access_denied"
        log.warning("google sign-in failed", extra={"google_error": error.error or "unknown"})
        return core.redirect_to_client(
            redirect_uri,
            error="access_denied" if declined else "server_error",
            error_description="The Google sign-in was declined." if declined else f"Google sign-in failed: {error}",
            state=state,
        )
    if not core.allowed_users.allows(identity.email, identity.hosted_domain):
        log.warning("sign-in refused: address not allowed")
        back = core.redirect_to_client(
            redirect_uri, error="access_denied", error_description="This account may not sign in here.", state=state
        ).headers["location"]
        return not_allowed_page(identity.email, core.allowed_users.describe(), back)
    asked = [str(scope) for scope in pending["scopes"]]
    issued = [scope for scope in asked if set(core.google_scopes_for([scope])) <= identity.scopes]
    if not issued:
        return core.redirect_to_client(
            redirect_uri,
            error="access_denied",
            error_description="Google granted none of the mail access asked for.",
            state=state,
        )
    refresh_token = identity.refresh_token
    granted = identity.scopes
    if refresh_token is None:  # Google kept the earlier grant: keep its refresh token
        earlier = core.records.google_account(identity.sub, identity.email)
        if earlier is None:
            return core.redirect_to_client(
                redirect_uri,
                error="server_error",
                error_description="Google sent no refresh token; remove this app at "
                "myaccount.google.com/permissions and sign in again.",
                state=state,
            )
        refresh_token, granted = earlier.refresh_token, earlier.scopes | identity.scopes
    expires_at = core.clock() + identity.expires_in if identity.access_token and identity.expires_in > 0 else 0.0
    account = GoogleAccount(
        identity.email, identity.sub, refresh_token, frozenset(granted), identity.access_token, expires_at
    )
    core.records.save_google_account(identity.sub, account)
    core.records.consent(identity.sub, str(pending["client_id"]), issued)
    code = core.ledger.issue_code(
        {
            "client_id": pending["client_id"],
            "redirect_uri": redirect_uri,
            "code_challenge": pending["code_challenge"],
            "subject": identity.sub,
            "email": identity.email,
            "hd": identity.hosted_domain,
            "scopes": issued,
            "resource": pending["resource"],
        }
    )
    log.info("signed in", extra={"client_id": str(pending["client_id"])[:200], "scopes": " ".join(issued)})
    return core.redirect_to_client(redirect_uri, code=code, state=state)
