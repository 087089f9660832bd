"""Signing a person in with Google: the operator's Web client, the redirect to Google, the code exchanged, the ID
token verified.

Follows Google's "Using OAuth 2.0 for Web Server Applications" (developers.google.com/identity/protocols/oauth2/
web-server) and OpenID Connect guide (developers.google.com/identity/openid-connect/openid-connect):
- the client is the operator's own, type "Web application" (`GMAIL_MCP_GOOGLE_CLIENT_FILE`, the JSON Cloud Console
  downloads, key `web`), with this server's callback among its redirect URIs;
- the authorization request asks for `openid email` plus the Gmail scopes, `access_type=offline` and
  `prompt=consent` (else Google returns a refresh token on the first consent only), `include_granted_scopes=true`
  (incremental authorization), PKCE S256, the caller's `state`, and a `login_hint` when the account is known;
- the code is exchanged at the token endpoint with the client secret and the PKCE verifier; the ID token is
  verified by google-auth against Google's JWKS (signature, `aud` = our client id, expiry), its `iss` must be
  Google's, and the address must be verified (`email_verified`): the person is their `sub`;
- Google's signing keys are kept as long as the certs response's `Cache-Control: max-age` says (at most a day;
  not at all without one), as the OpenID Connect guide asks ("cache these keys, using the cache directives"), and
  fetched again, once, when an ID token names a key id the kept set lacks (Google rotated its keys): `CertsCache`.

Endpoints default to Google's; the emulator's (tests, demo) come from its client file and discovery document.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import secrets
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

GOOGLE_AUTH_URI = "https://accounts.google.com/o/oauth2/v2/auth"
GOOGLE_TOKEN_URI = "https://oauth2.googleapis.com/token"
GOOGLE_CERTS_URL = "https://www.googleapis.com/oauth2/v3/certs"
GOOGLE_ISSUERS = ("https://accounts.google.com", "accounts.google.com")  # the second for legacy tokens
IDENTITY_SCOPES = ("openid", "email")
TIMEOUT_S = 20.0
MAX_CERTS_AGE_S = 24 * 3600.0  # however long Google says, the keys are fetched again after a day


class GoogleSignInError(Exception):
    """Google refused, or answered something that cannot be trusted; `error` is Google's code when it sent one."""

    def __init__(self, message: str, error: str = "") -> None:
        super().__init__(message)
        self.error = error


@dataclass(frozen=True)
class GoogleWebClient:
    client_id: str
    client_secret: str
    auth_uri: str = GOOGLE_AUTH_URI
    token_uri: str = GOOGLE_TOKEN_URI
    certs_url: str = GOOGLE_CERTS_URL

    @classmethod
    def from_file(cls, path: str | Path, certs_url: str = GOOGLE_CERTS_URL) -> GoogleWebClient:
        """Reads Cloud Console's JSON for a Web application client; ValueError says what is wrong with it."""
        try:
            data = json.loads(Path(path).read_text("utf-8"))
        except (OSError, ValueError) as error:
            raise ValueError(f"Cannot read the Google client file {path}: {error}") from None
        if isinstance(data, dict) and "installed" in data:
            raise ValueError(
                f"{path} is a Desktop app client; the remote mode needs a client of type 'Web application' with "
                "the callback <public url>/oauth/google/callback among its authorized redirect URIs."
            )
        web = data.get("web") if isinstance(data, dict) else None
        if not isinstance(web, dict) or not web.get("client_id") or not web.get("client_secret"):
            raise ValueError(f"{path} is not a Google 'Web application' client file (no web.client_id/secret).")
        return cls(
            client_id=str(web["client_id"]),
            client_secret=str(web["client_secret"]),
            auth_uri=str(web.get("auth_uri") or GOOGLE_AUTH_URI),
            token_uri=str(web.get("token_uri") or GOOGLE_TOKEN_URI),
            certs_url=certs_url,
        )


@dataclass(frozen=True)
class GoogleIdentity:
    """A signed-in Google account and what Google granted."""

    sub: str
    email: str
    scopes: frozenset[str]
    access_token: str
    expires_in: int
    refresh_token: str | None  # None when Google kept the earlier one (no consent screen this time)
    hosted_domain: str = ""  # the ID token's `hd`: the Workspace domain managing the account ("" for consumer)


def pkce_pair() -> tuple[str, str]:
    """(verifier, S256 challenge): RFC 7636 4.1 (43-128 unreserved characters) and 4.2."""
    verifier = secrets.token_urlsafe(64)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode("ascii")).digest()).rstrip(b"=")
    return verifier, challenge.decode("ascii")


class CertsCache:
    """Google's JWKS response, kept per its Cache-Control max-age (bounded by MAX_CERTS_AGE_S), on `clock`.

    `request(base, url, kid)` is a google-auth transport request (the interface `id_token.verify_token` takes) that
    answers a GET of `url` from the kept response while it is fresh and names `kid`, and otherwise asks `base`
    (keeping a 200 answer that allows it). Thread-safe; two sign-ins racing past an empty cache may both fetch."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._kept: tuple[str, Any, frozenset[str], float] | None = None  # (url, response, kids, fresh until)

    def request(self, base: Any, url: str, kid: str | None) -> Any:
        """A `google.auth.transport.Request` (typed Any: google-auth is imported only when a sign-in verifies)."""
        from google.auth import transport

        def answer(target: str, method: str = "GET", **kwargs: Any) -> Any:
            if target != url or method != "GET":
                return base(target, method=method, **kwargs)
            with self._lock:
                kept = self._kept
            if kept is not None and kept[0] == url and self._clock() < kept[3] and (kid is None or kid in kept[2]):
                return kept[1]
            response = base(target, method=method, **kwargs)
            max_age = _max_age(response.headers) if response.status == 200 else 0.0
            if max_age > 0:
                kept_response = _KeptResponse(response.status, dict(response.headers), response.data)
                with self._lock:
                    self._kept = (url, kept_response, _kids(response.data), self._clock() + max_age)
            return response

        class CachedCerts(transport.Request):
            def __call__(
                self,
                url: Any,
                method: Any = "GET",
                body: Any = None,
                headers: Any = None,
                timeout: Any = None,
                **kw: Any,
            ) -> Any:
                return answer(url, method, body=body, headers=headers, timeout=timeout, **kw)

        return CachedCerts()


class _KeptResponse:
    """A google-auth transport response held in memory (status, headers, data: google.auth.transport.Response)."""

    def __init__(self, status: int, headers: Mapping[str, str], data: bytes) -> None:
        self.status, self.headers, self.data = status, headers, data


def _max_age(headers: Mapping[str, str]) -> float:
    """Seconds a response may be kept (Cache-Control max-age, at most MAX_CERTS_AGE_S); 0 for none or no-store."""
    control = next((str(value) for name, value in headers.items() if name.lower() == "cache-control"), "").lower()
    found = re.search(r"(?:^|[,\s])max-age\s*=\s*(\d+)", control)
    if found is None or "no-store" in control or "no-cache" in control:
        return 0.0
    return min(float(found.group(1)), MAX_CERTS_AGE_S)


def _kids(data: bytes) -> frozenset[str]:
    try:
        keys = json.loads(data).get("keys", [])
    except (ValueError, AttributeError):
        return frozenset()
    return frozenset(str(key.get("kid")) for key in keys if isinstance(key, dict) and key.get("kid"))


def _kid_of(token: str) -> str | None:
    """The `kid` of a JWT's header (read unverified, only to pick the key; the signature is checked after)."""
    head = token.split(".", 1)[0]
    try:
        header = json.loads(base64.urlsafe_b64decode(head + "=" * (-len(head) % 4)))
    except ValueError:  # binascii.Error and UnicodeDecodeError are ValueErrors
        return None
    kid = header.get("kid") if isinstance(header, dict) else None
    return str(kid) if kid else None


class GoogleSignIn:
    """The Google half of the sign-in, for one Web client and one callback URL. `clock` times the kept JWKS."""

    def __init__(
        self,
        client: GoogleWebClient,
        redirect_uri: str,
        *,
        http: Any = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        import httplib2

        self.client = client
        self.redirect_uri = redirect_uri
        self.http = http or httplib2.Http(timeout=TIMEOUT_S)
        self.certs = CertsCache(clock)

    def authorization_url(
        self, state: str, gmail_scopes: Iterable[str], *, login_hint: str | None = None
    ) -> tuple[str, str]:
        """(the URL to send the browser to, the PKCE verifier to keep with `state` until the callback)."""
        verifier, challenge = pkce_pair()
        params = {
            "client_id": self.client.client_id,
            "redirect_uri": self.redirect_uri,
            "response_type": "code",
            "scope": " ".join(dict.fromkeys([*IDENTITY_SCOPES, *gmail_scopes])),
            "access_type": "offline",
            "prompt": "consent",
            "include_granted_scopes": "true",
            "state": state,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
        }
        if login_hint:
            params["login_hint"] = login_hint
        return self.client.auth_uri + "?" + urlencode(params), verifier

    def finish(self, callback: Mapping[str, str], verifier: str) -> GoogleIdentity:
        """Google's redirect parameters (code, or error) -> the verified identity; raises GoogleSignInError."""
        if callback.get("error"):
            raise GoogleSignInError(f"Google answered {callback['error']}.", callback["error"])
        issuer = callback.get("iss")
        if issuer is not None and issuer not in GOOGLE_ISSUERS:  # RFC 9207: a mix-up would name another issuer
            raise GoogleSignInError(f"The sign-in answer came from {issuer!r}, not Google.", "invalid_request")
        code = callback.get("code", "")
        if not code:
            raise GoogleSignInError("Google's answer carries no code.", "invalid_request")
        answer = self._token_request(code, verifier)
        claims = self.verify_id_token(str(answer.get("id_token", "")))
        granted = frozenset(str(answer.get("scope", "")).split())
        return GoogleIdentity(
            sub=str(claims["sub"]),
            email=str(claims["email"]),
            scopes=granted,
            access_token=str(answer.get("access_token", "")),
            expires_in=int(answer.get("expires_in", 0) or 0),
            refresh_token=str(answer["refresh_token"]) if answer.get("refresh_token") else None,
            hosted_domain=str(claims.get("hd") or ""),
        )

    def _token_request(self, code: str, verifier: str) -> dict[str, Any]:
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": self.redirect_uri,
            "client_id": self.client.client_id,
            "client_secret": self.client.client_secret,
            "code_verifier": verifier,
        }
        headers = {"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"}
        try:
            response, content = self.http.request(self.client.token_uri, "POST", body=urlencode(form), headers=headers)
        except OSError as exc:
            raise GoogleSignInError(f"Google's token endpoint could not be reached ({exc}).") from None
        try:
            answer = json.loads(content)
        except ValueError:
            answer = None
        if not isinstance(answer, dict):
            raise GoogleSignInError(f"Google's token endpoint answered HTTP {response.status} without JSON.")
        if response.status != 200:
            refusal = str(answer.get("error", ""))
            raise GoogleSignInError(f"Google refused the code: {refusal or response.status}.", refusal)
        return answer

    def verify_id_token(self, id_token: str) -> Mapping[str, Any]:
        """The claims of a Google ID token for this client (signature, audience, expiry, issuer, verified email)."""
        import google_auth_httplib2
        from google.oauth2 import id_token as google_id_token

        if not id_token:
            raise GoogleSignInError("Google sent no ID token (was the openid scope granted?).", "invalid_grant")
        base = google_auth_httplib2.Request(self.http)
        request = self.certs.request(base, self.client.certs_url, _kid_of(id_token))
        try:
            claims = google_id_token.verify_token(
                id_token, request, audience=self.client.client_id, certs_url=self.client.certs_url
            )
        except Exception as error:  # google-auth and PyJWT raise several types for a token that does not verify
            raise GoogleSignInError(f"Google's ID token did not verify ({type(error).__name__}).") from None
        if claims.get("iss") not in GOOGLE_ISSUERS:
            raise GoogleSignInError("The ID token was not issued by Google.", "invalid_grant")
        if not claims.get("sub") or not claims.get("email") or claims.get("email_verified") is not True:
            raise GoogleSignInError("Google did not confirm a verified address for this account.", "access_denied")
        return claims
