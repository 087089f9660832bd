"""Who signs in at the emulator's Google: stable `sub`s, signed ID tokens, the JWKS, userinfo and discovery.

Modelled on Google's OpenID Connect reference (developers.google.com/identity/openid-connect/reference) and the
OpenID Connect guide (developers.google.com/identity/openid-connect/openid-connect):

- the ID token is a JWT signed RS256 with a key published at the JWKS endpoint (Google's `jwks_uri`,
  `https://www.googleapis.com/oauth2/v3/certs`; here `/oauth2/v3/certs`), with `iss` `https://accounts.google.com`,
  `aud` and `azp` the client id, `sub` (the account's stable identifier, "never reused", up to 255 ASCII
  characters; Google's are 21 digits), `email`, `email_verified`, `hd` (the Workspace domain; every address not at
  gmail.com stands for a Workspace account here), `iat`, `exp` (one hour), `at_hash` when issued with an access
  token, and `nonce` when the authorization request had one;
- the userinfo endpoint (`/oauth2/v3/userinfo`, also `/v1/userinfo` as in Google's discovery document) answers a
  Bearer access token that carries `openid` or the email scope with `sub`, `email` and `email_verified`;
- the discovery document at `/.well-known/openid-configuration` names the emulator's own endpoints, with Google's
  issuer, so a relying party written against discovery finds everything here.

The signing key is made fresh for each emulator (RSA 2048, through `cryptography`); tokens are signed and the JWK is
written by PyJWT, so nothing here does cryptography by hand. ID tokens carry wall-clock times (verifiers compare
them with theirs); `wall` is injectable for tests.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import time
from collections.abc import Callable, Iterable
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

ISSUER = "https://accounts.google.com"
ID_TOKEN_TTL_S = 3600
EMAIL_SCOPE = "https://www.googleapis.com/auth/userinfo.email"
PROFILE_SCOPE = "https://www.googleapis.com/auth/userinfo.profile"
# Google answers `email` and `profile` in a scope request with the userinfo scope URLs in the token response.
SCOPE_ALIASES = {"email": EMAIL_SCOPE, "profile": PROFILE_SCOPE}
IDENTITY_SCOPES = frozenset({"openid", EMAIL_SCOPE, PROFILE_SCOPE})
USERINFO_PATHS = ("/oauth2/v3/userinfo", "/v1/userinfo")
JWKS_PATH = "/oauth2/v3/certs"
DISCOVERY_PATH = "/.well-known/openid-configuration"


def subject_of(email: str) -> str:
    """The account's `sub`: 21 digits derived from the address, the same in every emulator run."""
    digest = hashlib.sha256(("gmail-emulator-sub:" + email.strip().lower()).encode("utf-8")).hexdigest()
    return "1" + str(int(digest, 16))[:20]


def expand_scopes(requested: Iterable[str]) -> frozenset[str]:
    """A scope request's words as Google reports them back (`email` -> the userinfo.email URL)."""
    return frozenset(SCOPE_ALIASES.get(word, word) for word in requested if word)


def at_hash(access_token: str) -> str:
    """OpenID Connect Core 3.1.3.6: base64url of the left half of the SHA-256 of the access token (RS256)."""
    digest = hashlib.sha256(access_token.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest[: len(digest) // 2]).rstrip(b"=").decode("ascii")


class IdentityKeys:
    """The emulator's signing key: issues ID tokens and publishes the public half as a JWKS."""

    def __init__(self, wall: Callable[[], float] = time.time) -> None:
        self._wall = wall
        self._private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.kid = secrets.token_hex(20)  # Google's kids are 40 hex digits

    def jwks(self) -> dict[str, Any]:
        public = RSAAlgorithm.to_jwk(self._private.public_key(), as_dict=True)
        return {"keys": [{**public, "kid": self.kid, "alg": "RS256", "use": "sig"}]}

    def id_token(self, *, client_id: str, email: str, access_token: str | None = None, nonce: str | None = None) -> str:
        now = int(self._wall())
        claims: dict[str, Any] = {
            "iss": ISSUER,
            "azp": client_id,
            "aud": client_id,
            "sub": subject_of(email),
            "email": email,
            "email_verified": True,
            "iat": now,
            "exp": now + ID_TOKEN_TTL_S,
        }
        domain = email.rpartition("@")[2].lower()
        if domain not in ("gmail.com", "googlemail.com"):
            claims["hd"] = domain  # Google names the Workspace domain that manages the account
        if access_token:
            claims["at_hash"] = at_hash(access_token)
        if nonce:
            claims["nonce"] = nonce
        return jwt.encode(claims, self._private, algorithm="RS256", headers={"kid": self.kid})


def userinfo(email: str) -> dict[str, Any]:
    return {"sub": subject_of(email), "email": email, "email_verified": True}


def discovery(base_url: str) -> dict[str, Any]:
    """Google's discovery document, pointing at this emulator's endpoints (the issuer stays Google's)."""
    return {
        "issuer": ISSUER,
        "authorization_endpoint": base_url + "/o/oauth2/v2/auth",
        "token_endpoint": base_url + "/token",
        "userinfo_endpoint": base_url + USERINFO_PATHS[0],
        "revocation_endpoint": base_url + "/revoke",
        "jwks_uri": base_url + JWKS_PATH,
        "response_types_supported": ["code"],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": ["RS256"],
        "scopes_supported": ["openid", "email", "profile"],
        "token_endpoint_auth_methods_supported": ["client_secret_post", "client_secret_basic"],
        "claims_supported": ["aud", "email", "email_verified", "exp", "hd", "iat", "iss", "sub", "at_hash", "nonce"],
        "code_challenge_methods_supported": ["plain", "S256"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
    }
