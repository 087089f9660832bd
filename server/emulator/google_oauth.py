"""Google's OAuth for a Web client, played by the emulator: authorization endpoint, code grant, refresh, revoke.

Follows Google's "Using OAuth 2.0 for Web Server Applications" (developers.google.com/identity/protocols/oauth2/
web-server) and its OpenID Connect guide; the parts the product's sign-in relies on:

- `/o/oauth2/v2/auth` (GET): `client_id`, `redirect_uri` (exactly one registered for the client), `response_type=
  code`, `scope`, `state`, `access_type`, `prompt`, `login_hint`, `nonce`, `code_challenge(_method)`. An unknown
  client answers an error page (401 `invalid_client`), an unregistered redirect URI too (400
  `redirect_uri_mismatch`): never a redirect, as RFC 6749 4.1.2.1 requires. Anything else wrong goes back to the
  redirect URI as `error=...` with the `state` (`access_denied` when the person declines, `invalid_scope`,
  `unsupported_response_type`, `consent_required` for `prompt=none` without an earlier consent, `invalid_request`).
  A success redirects with `code`, `state`, `scope` and `iss` (RFC 9207; Google's redirects carry it).
  Consent is automatic for the person named by `login_hint` (tests and the demo only: the emulator has no screens);
  `decline(user)` makes that person's next answer `access_denied`. Stricter than Google on purpose: PKCE with
  S256 is required (the product always sends it; Google accepts requests without it, and `plain`).
- the token endpoint's `authorization_code` grant: the client's secret (form or HTTP Basic), the code (single use,
  10 minutes as RFC 6749 4.1.2 recommends, bound to the client and the redirect URI), the PKCE verifier (RFC 7636
  4.6). Answers `access_token`, `expires_in`, `scope` (the granted scopes, `email` as the userinfo.email URL),
  `token_type`, `id_token` (with `openid`), and `refresh_token` only with `access_type=offline` on a first consent
  or with `prompt=consent` (Google: "only ... the first time" unless the app forces the consent prompt).
- the `refresh_token` grant for those refresh tokens (only by the client they were issued to; with `openid` the
  answer carries a new ID token), beside the emulator's own refresh tokens in `tokens.py`.
- `/revoke` (POST, `token` in the form or the query): an access or refresh token revokes the whole grant, its other
  tokens and the consent (the next sign-in is a first consent again); 200 `{}`, else 400 `invalid_token`.

Each Google user is a mailbox owner of this emulator (`resolve(email)` -> the mailbox key, "" for the primary one);
their access tokens reach their own mailbox only, held to the Gmail scopes granted.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, unquote, urlencode

from .google_identity import (
    DISCOVERY_PATH,
    IDENTITY_SCOPES,
    ISSUER,
    JWKS_PATH,
    USERINFO_PATHS,
    IdentityKeys,
    discovery,
    expand_scopes,
    userinfo,
)
from .scopes import BY_NAME
from .tokens import TokenAuthority

AUTH_PATH = "/o/oauth2/v2/auth"
REVOKE_PATH = "/revoke"
WEB_CLIENT_ID = "gmail-emulator-web.apps.googleusercontent.com"
WEB_CLIENT_SECRET = "gmail-emulator-web-client-secret"
CODE_TTL_S = 600
# Google's certs endpoint answers with a max-age of some hours ("OpenID Connect" guide, "Validating an ID token":
# "cache these keys, using the cache directives in the HTTP response"); six hours here.
CERTS_CACHE_CONTROL = "public, max-age=21600, must-revalidate, no-transform"
KNOWN_SCOPES = IDENTITY_SCOPES | frozenset(BY_NAME.values())
BAD_REQUEST_GRANT = {"error": "invalid_grant", "error_description": "Bad Request"}
UNAUTHORIZED_CLIENT = {"error": "invalid_client", "error_description": "Unauthorized"}

# What a handler answers: (HTTP status, a JSON object or a plain-text page, extra headers).
Answer = tuple[int, "dict[str, Any] | str", dict[str, str]]


@dataclass
class _Code:
    client_id: str
    redirect_uri: str
    user: str
    email: str
    scopes: frozenset[str]
    challenge: str
    nonce: str | None
    offline_refresh: bool
    expires: float


@dataclass
class _Grant:
    client_id: str
    user: str
    email: str
    scopes: frozenset[str]
    access_tokens: set[str] = field(default_factory=set)


class GoogleOAuth:
    """The Web client's sign-in at the emulator. Thread-safe; `clock` times codes, `keys` signs ID tokens."""

    def __init__(
        self,
        tokens: TokenAuthority,
        resolve: Callable[[str], tuple[str, str] | None],
        clock: Callable[[], float] = time.monotonic,
        keys: IdentityKeys | None = None,
    ) -> None:
        self.tokens = tokens
        self._resolve = resolve  # email -> (mailbox key, address as the mailbox has it), None for a stranger
        self._clock = clock
        self.keys = keys or IdentityKeys()
        self._lock = threading.Lock()
        self._redirect_uris: set[str] = set()
        self._codes: dict[str, _Code] = {}
        self._grants: dict[str, _Grant] = {}  # refresh token -> grant
        self._by_access: dict[str, _Grant] = {}
        self._consents: dict[tuple[str, str], frozenset[str]] = {}  # (client, user) -> scopes consented
        self._declining: set[str] = set()

    # ---- set-up by tests and the demo
    def register_redirect_uri(self, uri: str) -> None:
        """Adds an authorized redirect URI to the Web client (Cloud Console's list: exact match only)."""
        if not uri.startswith(("http://", "https://")):
            raise ValueError(f"a redirect URI is an http(s) URL, not {uri!r}")
        with self._lock:
            self._redirect_uris.add(uri)

    def decline(self, user: str) -> None:
        """The next sign-in of `user` (an address) answers `access_denied`, as when the person clicks Cancel."""
        with self._lock:
            self._declining.add(user.strip().lower())

    def reset(self) -> None:
        """Between tests: no pending declines, and every next sign-in is a first consent (issued tokens stay)."""
        with self._lock:
            self._declining.clear()
            self._consents.clear()

    def client_file(self, base_url: str) -> dict[str, Any]:
        """The Web client's JSON as Cloud Console downloads it, pointing at this emulator."""
        with self._lock:
            uris = sorted(self._redirect_uris)
        return {
            "web": {
                "client_id": WEB_CLIENT_ID,
                "project_id": "gmail-emulator",
                "auth_uri": base_url + AUTH_PATH,
                "token_uri": base_url + "/token",
                "auth_provider_x509_cert_url": base_url + "/oauth2/v1/certs",
                "client_secret": WEB_CLIENT_SECRET,
                "redirect_uris": uris,
            }
        }

    # ---- the authorization endpoint
    def authorize(self, query: str) -> Answer:
        params = {name: values[-1] for name, values in parse_qs(query, keep_blank_values=True).items()}
        client_id, redirect_uri = params.get("client_id", ""), params.get("redirect_uri", "")
        if client_id != WEB_CLIENT_ID:
            return 401, "Error 401: invalid_client\nThe OAuth client was not found.", {}
        with self._lock:
            registered = redirect_uri in self._redirect_uris
        if not registered:
            return 400, f"Error 400: redirect_uri_mismatch\nredirect_uri={redirect_uri}", {}
        error = self._refusal(params)
        if error:
            return self._redirect(redirect_uri, {"error": error, "state": params.get("state")})
        email = params.get("login_hint", "").strip()
        known = self._resolve(email) if email else None
        if known is None:
            return self._redirect(redirect_uri, {"error": "access_denied", "state": params.get("state")})
        user, address = known
        requested = expand_scopes(params.get("scope", "").split())
        prompt = set(params.get("prompt", "").split())
        with self._lock:
            if address.lower() in self._declining:
                self._declining.discard(address.lower())
                return self._redirect(redirect_uri, {"error": "access_denied", "state": params.get("state")})
            consented = self._consents.get((client_id, user))
            if "none" in prompt and (consented is None or not requested <= consented):
                return self._redirect(redirect_uri, {"error": "consent_required", "state": params.get("state")})
            first = consented is None or not requested <= consented
            code = "4/0Aemu" + secrets.token_urlsafe(32)
            carried = consented if consented and params.get("include_granted_scopes") == "true" else frozenset()
            self._codes[code] = _Code(
                client_id=client_id,
                redirect_uri=redirect_uri,
                user=user,
                email=address,
                scopes=requested | carried,
                challenge=params["code_challenge"],
                nonce=params.get("nonce") or None,
                offline_refresh=params.get("access_type") == "offline" and (first or "consent" in prompt),
                expires=self._clock() + CODE_TTL_S,
            )
            self._consents[(client_id, user)] = requested | (consented or frozenset())
        # Google's redirect carries `iss` (RFC 9207) beside the code, and the granted scopes as it reports them.
        answer = {"state": params.get("state"), "iss": ISSUER, "code": code, "scope": " ".join(sorted(requested))}
        return self._redirect(redirect_uri, {**answer, "authuser": "0", "prompt": "consent" if first else "none"})

    def route(self, method: str, path: str, query: str, headers: Mapping[str, str], body: bytes) -> Answer | None:
        """Answers the Google paths (None for any other path); `headers` have lower-case names."""
        if path == AUTH_PATH:
            return self.authorize(query) if method == "GET" else (405, "Use GET", {})
        if path == REVOKE_PATH:
            return self.revoke(method, query, body)
        if path in USERINFO_PATHS:
            email = self.identity_of(headers.get("authorization"))
            if email is None:
                challenge = {"WWW-Authenticate": 'Bearer realm="https://accounts.google.com/", error="invalid_token"'}
                return 401, {"error": "invalid_request", "error_description": "Invalid Credentials"}, challenge
            return 200, userinfo(email), {}
        if path == JWKS_PATH:
            return 200, self.keys.jwks(), {"Cache-Control": CERTS_CACHE_CONTROL}
        if path == DISCOVERY_PATH:
            return 200, discovery("http://" + headers.get("host", "127.0.0.1")), {}
        return None

    @staticmethod
    def _refusal(params: Mapping[str, str]) -> str | None:
        if params.get("response_type") != "code":
            return "unsupported_response_type"
        words = params.get("scope", "").split()
        if not words or not expand_scopes(words) <= KNOWN_SCOPES:
            return "invalid_scope"
        if params.get("code_challenge_method") != "S256" or not params.get("code_challenge"):
            return "invalid_request"  # RFC 7636 4.4.1: PKCE required here, S256 only
        return None

    @staticmethod
    def _redirect(redirect_uri: str, params: Mapping[str, str | None]) -> Answer:
        query = urlencode({name: value for name, value in params.items() if value is not None})
        separator = "&" if "?" in redirect_uri else "?"
        return 302, "", {"Location": redirect_uri + separator + query}

    # ---- the token endpoint
    def handles(self, form: Mapping[str, str], authorization: str | None = None) -> bool:
        """Whether a token request is this module's: a code, the Web client's, or a refresh token it issued."""
        if (
            form.get("grant_type") == "authorization_code"
            or _client_credentials(form, authorization)[0] == WEB_CLIENT_ID
        ):
            return True
        with self._lock:
            return form.get("grant_type") == "refresh_token" and form.get("refresh_token", "") in self._grants

    def grant(self, form: Mapping[str, str], authorization: str | None = None) -> tuple[int, dict[str, Any]]:
        client_id, secret = _client_credentials(form, authorization)
        if client_id != WEB_CLIENT_ID or not hmac.compare_digest(secret, WEB_CLIENT_SECRET):
            return 401, dict(UNAUTHORIZED_CLIENT)
        if form.get("grant_type") == "refresh_token":
            return self._refresh(client_id, form.get("refresh_token", ""))
        return self._exchange(client_id, form)

    def _exchange(self, client_id: str, form: Mapping[str, str]) -> tuple[int, dict[str, Any]]:
        with self._lock:
            code = self._codes.pop(form.get("code", ""), None)  # single use, whatever happens next
        if code is None or code.expires <= self._clock() or code.client_id != client_id:
            return 400, dict(BAD_REQUEST_GRANT)
        if form.get("redirect_uri") != code.redirect_uri:
            return 400, {"error": "redirect_uri_mismatch", "error_description": "Bad Request"}
        verifier = form.get("code_verifier", "")
        if not verifier:
            return 400, {"error": "invalid_grant", "error_description": "Missing code verifier."}
        if not hmac.compare_digest(_s256(verifier), code.challenge):
            return 400, {"error": "invalid_grant", "error_description": "Invalid code verifier."}
        grant = _Grant(client_id, code.user, code.email, code.scopes)
        body = self._issue(grant, nonce=code.nonce)
        if code.offline_refresh:
            refresh_token = "1//0emu" + secrets.token_urlsafe(40)
            with self._lock:
                self._grants[refresh_token] = grant
            body["refresh_token"] = refresh_token
        return 200, body

    def _refresh(self, client_id: str, refresh_token: str) -> tuple[int, dict[str, Any]]:
        with self._lock:
            grant = self._grants.get(refresh_token)
        if grant is None or self.tokens.user_revoked(grant.user):
            return 400, {"error": "invalid_grant", "error_description": "Token has been expired or revoked."}
        if grant.client_id != client_id:
            return 400, {"error": "unauthorized_client", "error_description": "Unauthorized"}
        return 200, self._issue(grant, nonce=None)

    def _issue(self, grant: _Grant, *, nonce: str | None) -> dict[str, Any]:
        access_token = self.tokens.issue_access_token(grant.user, grant.scopes)
        with self._lock:
            grant.access_tokens.add(access_token)
            self._by_access[access_token] = grant
        body: dict[str, Any] = {
            "access_token": access_token,
            "expires_in": max(int(self.tokens.ttl_s) - 1, 1),
            "scope": " ".join(sorted(grant.scopes)),
            "token_type": "Bearer",
        }
        if "openid" in grant.scopes:
            body["id_token"] = self.keys.id_token(
                client_id=grant.client_id, email=grant.email, access_token=access_token, nonce=nonce
            )
        return body

    # ---- revocation and userinfo
    def revoke(self, method: str, query: str, body: bytes) -> Answer:
        if method != "POST":
            return 405, {"error": "invalid_request", "error_description": "Use POST"}, {}
        form = {k: v[-1] for k, v in parse_qs(body.decode("utf-8", "replace")).items()}
        token = form.get("token") or next(iter(parse_qs(query).get("token", [])), "")
        with self._lock:
            grant = self._grants.get(token) or self._by_access.get(token)
            if grant is None:
                return 400, {"error": "invalid_token", "error_description": "Token expired or revoked"}, {}
            for refresh_token in [t for t, held in self._grants.items() if held is grant]:
                del self._grants[refresh_token]
            for access_token in grant.access_tokens:
                self._by_access.pop(access_token, None)
            self._consents.pop((grant.client_id, grant.user), None)
            ended = set(grant.access_tokens)
        self.tokens.forget_access_tokens(ended)
        return 200, {}, {}

    def identity_of(self, authorization: str | None) -> str | None:
        """The address behind a live access token that may read the identity (openid or email); else None."""
        _, _, token = (authorization or "").strip().partition(" ")
        if self.tokens.user_of(authorization) is None:
            return None
        with self._lock:
            grant = self._by_access.get(token.strip())
        if grant is None or grant.scopes.isdisjoint(IDENTITY_SCOPES):
            return None
        return grant.email


def _s256(verifier: str) -> str:
    """RFC 7636 4.2: BASE64URL(SHA256(ASCII(code_verifier))), unpadded."""
    digest = hashlib.sha256(verifier.encode("ascii", "replace")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def _client_credentials(form: Mapping[str, str], authorization: str | None) -> tuple[str, str]:
    """client_secret_post or client_secret_basic (RFC 6749 2.3.1: form-encoded id and secret in Basic)."""
    scheme, _, value = (authorization or "").strip().partition(" ")
    if scheme.lower() == "basic" and value:
        try:
            decoded = base64.b64decode(value.strip(), validate=True).decode("utf-8")
        except ValueError:
            return "", ""
        client_id, _, secret = decoded.partition(":")
        return unquote(client_id.replace("+", " ")), unquote(secret.replace("+", " "))
    return form.get("client_id", ""), form.get("client_secret", "")
