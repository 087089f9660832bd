"""The token endpoint (OAuth 2.1 3.2, 4.1.3, 4.3) and the revocation endpoint (RFC 7009).

Token: `authorization_code` (the code redeemed once, by the client it was issued to, with the same redirect URI,
the PKCE verifier whose S256 is the challenge, RFC 7636 4.6; `resource` if sent must be this server's, RFC 8707)
and `refresh_token` (rotated; the same new pair within the grace window: `Ledger.rotate`). Public clients (`none`)
name their client id; a confidential registration authenticates with its secret (form or HTTP Basic). Answers are
`Cache-Control: no-store` and `Pragma: no-cache` (RFC 6749 5.1), errors the JSON of RFC 6749 5.2: `invalid_client`
401 (Claude registers again on it), `invalid_grant`, `invalid_target`, `unsupported_grant_type`...

Revocation works for public clients, with the client id alone (the SDK's 2.3.0 handler demands a client secret and
answers them 400): the token's grant ends, whatever its type; an unknown token still answers 200 (RFC 7009 2.2).
"""

from __future__ import annotations

import base64
import hashlib
import secrets

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from server.runtime.observability import get_logger

from .clients import Client, UnknownClient
from .ledger import TokenPair
from .oauth_common import NO_STORE, AuthCore, oauth_error

log = get_logger("remote.token")
FORM = "application/x-www-form-urlencoded"


def s256(verifier: str) -> str:
    """RFC 7636 4.6: BASE64URL(SHA256(ASCII(code_verifier))), unpadded."""
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode("ascii")).digest()).rstrip(b"=").decode("ascii")


async def _client(core: AuthCore, request: Request, form: dict[str, str]) -> Client | Response:
    client_id, secret = core.clients.credentials(form, request.headers.get("authorization"))
    challenge = {"WWW-Authenticate": 'Basic realm="token"'} if request.headers.get("authorization") else None
    try:
        client = await core.clients.find(client_id)
    except UnknownClient:
        return oauth_error("invalid_client", "Unknown client: register again.", 401, challenge)
    if not core.clients.authenticated(client, secret):
        return oauth_error("invalid_client", "Client authentication failed.", 401, challenge)
    return client


async def _form(request: Request) -> dict[str, str] | None:
    if request.headers.get("content-type", "").split(";")[0].strip().lower() != FORM:
        return None
    return {key: str(value) for key, value in (await request.form()).items()}


def _pair(pair: TokenPair) -> Response:
    body = {
        "access_token": pair.access_token,
        "token_type": "Bearer",
        "expires_in": pair.expires_in,
        "refresh_token": pair.refresh_token,
        "scope": " ".join(pair.scopes),
    }
    return JSONResponse(body, headers=NO_STORE)


async def token(core: AuthCore, request: Request) -> Response:
    form = await _form(request)
    if form is None:
        return oauth_error("invalid_request", f"The token request must be {FORM}.")
    found = await _client(core, request, form)
    if isinstance(found, Response):
        return found
    client = found
    resource = form.get("resource")
    if resource is not None and resource.rstrip("/") != core.resource_url.rstrip("/"):
        return oauth_error("invalid_target", f"This server issues tokens for {core.resource_url} only.")
    grant_type = form.get("grant_type", "")
    if grant_type == "authorization_code":
        answer = _redeem(core, client, form)
    elif grant_type == "refresh_token":
        answer = _refresh(core, client, form)
    else:
        return oauth_error("unsupported_grant_type", "Grant types: authorization_code, refresh_token.")
    if answer.status_code == 200:
        core.clients.keep(client)
    return answer


def _redeem(core: AuthCore, client: Client, form: dict[str, str]) -> Response:
    code, verifier = form.get("code", ""), form.get("code_verifier", "")
    if not code:
        return oauth_error("invalid_request", "The code is missing.")
    data = core.ledger.redeem_code(code)
    if data is None:
        log.warning("token refused: unknown, expired or replayed code", extra={"client_id": client.client_id[:200]})
        return oauth_error("invalid_grant", "The code is unknown, expired or already used.")
    if data["client_id"] != client.client_id:
        return oauth_error("invalid_grant", "The code was issued to another client.")
    if form.get("redirect_uri", data["redirect_uri"]) != data["redirect_uri"]:
        return oauth_error("invalid_grant", "redirect_uri differs from the authorization request's.")
    if not verifier or not secrets.compare_digest(s256(verifier), str(data["code_challenge"])):
        return oauth_error("invalid_grant", "The PKCE code_verifier does not match the code_challenge.")
    pair = core.ledger.issue_tokens(
        subject=str(data["subject"]),
        client_id=client.client_id,
        scopes=data["scopes"],
        resource=str(data["resource"]),
        code=code,
        email=str(data.get("email") or ""),
    )
    return _pair(pair)


def _refresh(core: AuthCore, client: Client, form: dict[str, str]) -> Response:
    refresh_token = form.get("refresh_token", "")
    if not refresh_token:
        return oauth_error("invalid_request", "The refresh_token is missing.")
    pair = core.ledger.rotate(refresh_token, client.client_id)
    if pair is None:
        return oauth_error("invalid_grant", "The refresh token is unknown, expired or revoked: sign in again.")
    asked = form.get("scope")
    if asked is not None and not set(asked.split()) <= set(pair.scopes):
        return oauth_error("invalid_scope", "A refresh cannot add scopes; sign in again to grant more.")
    return _pair(pair)


async def revoke(core: AuthCore, request: Request) -> Response:
    form = await _form(request)
    if form is None:
        return oauth_error("invalid_request", f"The revocation request must be {FORM}.")
    found = await _client(core, request, form)
    if isinstance(found, Response):
        return found
    token_value = form.get("token", "")
    if not token_value:
        return oauth_error("invalid_request", "The token to revoke is missing.")
    if core.ledger.revoke(token_value, found.client_id):
        log.info("grant revoked", extra={"client_id": found.client_id[:200]})
    return Response(status_code=200, headers=NO_STORE)
