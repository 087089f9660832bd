"""What the authorization server issues: authorization codes, access and refresh tokens, and their revocation.

All kept in a `StateStore`, never as the secrets themselves: a code or token is stored under its SHA-256
(`store.secret_key`), so a copy of the state file hands out no working token. Codes and tokens are
`secrets.token_urlsafe(32)` (256 random bits); nothing here is home-made cryptography.

- A code is redeemed once (`take`: among racing redeemers exactly one wins). A replayed code also revokes the grant
  its first redemption created (OAuth 2.1 4.1.3 / RFC 6749 10.5: "SHOULD revoke ... tokens previously issued
  based on that authorization code").
- Every token belongs to a grant (one sign-in of one person for one client and resource); revoking any token
  (RFC 7009) ends the grant, and with it every token of the family, at once.
- Refresh tokens rotate (OAuth 2.1 4.3.1 for public clients) with a grace window: clients refresh concurrently (two
  tabs, a retried request), so a second use of the same refresh token within `grace_s` answers the same new pair,
  not a dead session (the failure peers hit: fastmcp #4901). The pair is kept for the window sealed with the
  store's Fernet cipher, under the old token's hash. After it, the old token is a replay (OAuth 2.1 4.3.1, RFC 9700
  4.14.2: one of the legitimate client and a thief holds a stolen copy): its use revokes the whole grant.
- Every access token's hash is also kept `issued_s` (a week) as a tombstone (`was_issued`), so the resource side
  tells a token this server once issued (expired, revoked: the client refreshes or signs in again) from one it never
  issued (guessing, log flooding), and counts only the latter as failed authentications.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from .store import ACCESS, CODE, GRANT, ISSUED, REFRESH, RETIRED, ROTATED, SPENT_CODE, StateStore, secret_key


class Cipher(Protocol):
    """What the ledger needs of `cryptography.fernet.Fernet`."""

    def encrypt(self, data: bytes) -> bytes: ...

    def decrypt(self, token: bytes) -> bytes: ...


@dataclass(frozen=True)
class Lifetimes:
    code_s: float = 60.0  # OAuth 2.1 4.1.2: short-lived; the browser comes back within seconds
    access_s: float = 3600.0
    refresh_s: float = 30 * 24 * 3600.0  # an idle grant ends after 30 days; each rotation renews it
    grace_s: float = 30.0  # a rotated refresh token still answers (the same new pair) for this long
    issued_s: float = 7 * 24 * 3600.0  # how long an access token's hash is remembered as once issued


@dataclass(frozen=True)
class TokenPair:
    access_token: str
    refresh_token: str
    expires_in: int
    scopes: tuple[str, ...]


@dataclass(frozen=True)
class Access:
    """What a live access token stands for."""

    grant_id: str
    subject: str  # the person (their Google `sub`)
    client_id: str
    scopes: frozenset[str]
    resource: str  # RFC 8707: the resource the token was issued for (this server's URL)
    email: str = ""  # the address the person signed in with (display and the allow-list; never a lookup key)
    hosted_domain: str = ""  # Google's `hd` at sign-in (the allow-list's @domain entries)


def new_secret() -> str:
    return secrets.token_urlsafe(32)


class Ledger:
    """Codes and tokens over a `StateStore`; `cipher` seals the pairs kept for the rotation grace window."""

    def __init__(self, store: StateStore, cipher: Cipher, lifetimes: Lifetimes | None = None) -> None:
        self.store = store
        self.cipher = cipher
        self.lifetimes = lifetimes or Lifetimes()

    # ---- authorization codes
    def issue_code(self, data: dict[str, Any]) -> str:
        """A new code standing for `data` (client, redirect URI, PKCE challenge, person, scopes, resource...)."""
        code = new_secret()
        self.store.put(CODE, secret_key(code), data, self.lifetimes.code_s)
        return code

    def redeem_code(self, code: str) -> dict[str, Any] | None:
        """The code's data, once; None if unknown, expired or already redeemed (a replay: its grant is revoked)."""
        key = secret_key(code)
        data = self.store.take(CODE, key)
        if data is not None:
            return data
        spent = self.store.take(SPENT_CODE, key)
        if spent is not None:
            self.revoke_grant(str(spent["grant"]))
        return None

    # ---- tokens
    def issue_tokens(
        self,
        *,
        subject: str,
        client_id: str,
        scopes: Iterable[str],
        resource: str,
        code: str | None = None,
        email: str = "",
        hosted_domain: str = "",
    ) -> TokenPair:
        """Starts a grant and issues its first pair; `code` (the one redeemed for it) is remembered so a replay of
        it revokes this grant."""
        grant_id = new_secret()
        held = sorted(set(scopes))
        grant = {"subject": subject, "client_id": client_id, "scopes": held, "resource": resource, "email": email}
        if hosted_domain:
            grant["hd"] = hosted_domain
        self.store.put(GRANT, grant_id, grant, self.lifetimes.refresh_s)
        if code is not None:
            self.store.put(SPENT_CODE, secret_key(code), {"grant": grant_id}, self.lifetimes.refresh_s)
        return self._new_pair(grant_id, grant)

    def _new_pair(self, grant_id: str, grant: dict[str, Any]) -> TokenPair:
        access, refresh = new_secret(), new_secret()
        record = {"grant": grant_id, **grant}
        self.store.put(ACCESS, secret_key(access), record, self.lifetimes.access_s)
        self.store.put(ISSUED, secret_key(access), {}, max(self.lifetimes.issued_s, self.lifetimes.access_s))
        self.store.put(REFRESH, secret_key(refresh), record, self.lifetimes.refresh_s)
        return TokenPair(access, refresh, int(self.lifetimes.access_s), tuple(grant["scopes"]))

    def verify_access(self, token: str, resource: str | None = None) -> Access | None:
        """The live access token's meaning, or None (unknown, expired, its grant revoked, or, with `resource`,
        issued for another resource: RFC 8707 audience)."""
        return self.verify_access_with(token, resource)[0]

    def verify_access_with(
        self, token: str, resource: str | None = None, subject_kind: str | None = None
    ) -> tuple[Access | None, dict[str, Any] | None]:
        """`verify_access`, and with `subject_kind` the entry of that kind keyed by the token's subject (the
        person's Google accounts), read with the grant in one store round trip: a warm call costs two."""
        record = self.store.get(ACCESS, secret_key(token))
        if record is None:
            return None, None
        wanted = [(GRANT, str(record["grant"]))] + ([(subject_kind, str(record["subject"]))] if subject_kind else [])
        grant, *extra = self.store.get_many(wanted)
        if grant is None:
            return None, None
        if resource is not None and record["resource"] != resource:
            return None, None
        return Access(
            grant_id=str(record["grant"]),
            subject=str(record["subject"]),
            client_id=str(record["client_id"]),
            scopes=frozenset(record["scopes"]),
            resource=str(record["resource"]),
            email=str(record.get("email") or ""),
            hosted_domain=str(record.get("hd") or ""),
        ), (extra[0] if extra else None)

    def was_issued(self, token: str) -> bool:
        """Whether this server issued `token` as an access token within `issued_s` (live, expired or revoked)."""
        return self.store.get(ISSUED, secret_key(token)) is not None

    def rotate(self, refresh_token: str, client_id: str) -> TokenPair | None:
        """Exchanges a refresh token for a new pair; the same new pair again within the grace window; else None
        (unknown, expired, revoked, or presented by another client). A token rotated longer ago than the window
        is a replay: its grant is revoked, so neither the thief nor the client keeps the family."""
        key = secret_key(refresh_token)
        again = self._rotated(key, client_id)
        if again is not None:
            return again
        record = self.store.get(REFRESH, key)
        if record is None:
            # Rotated by another request since the first look? It records the pair before retiring the token.
            again = self._rotated(key, client_id)
            retired = self.store.get(RETIRED, key) if again is None else None
            if retired is not None:
                self.revoke_grant(str(retired["grant"]))
            return again
        if record["client_id"] != client_id:
            return None
        grant_id = str(record["grant"])
        grant = self.store.get(GRANT, grant_id)
        if grant is None:
            return None
        pair = self._new_pair(grant_id, grant)
        sealed = self.cipher.encrypt(_pair_json(pair)).decode("ascii")
        if not self.store.add(ROTATED, key, {"client_id": client_id, "pair": sealed}, self.lifetimes.grace_s):
            # Another request rotated the same token a moment ago: answer its pair, drop ours.
            self.store.delete(ACCESS, secret_key(pair.access_token))
            self.store.delete(REFRESH, secret_key(pair.refresh_token))
            return self._rotated(key, client_id)
        self.store.put(RETIRED, key, {"grant": grant_id}, self.lifetimes.refresh_s)
        self.store.delete(REFRESH, key)
        self.store.put(GRANT, grant_id, grant, self.lifetimes.refresh_s)  # an active grant lives on
        return pair

    def refresh_scopes(self, refresh_token: str, client_id: str) -> frozenset[str] | None:
        """The scopes of a live (not yet rotated) refresh token of `client_id`, without using it; else None."""
        record = self.store.get(REFRESH, secret_key(refresh_token))
        return frozenset(record["scopes"]) if record is not None and record["client_id"] == client_id else None

    def _rotated(self, key: str, client_id: str) -> TokenPair | None:
        kept = self.store.get(ROTATED, key)
        if kept is None or kept["client_id"] != client_id:
            return None
        pair = _pair_from_json(self.cipher.decrypt(str(kept["pair"]).encode("ascii")))
        # A grant revoked inside the window must not come back through it.
        return pair if self.verify_access(pair.access_token) is not None else None

    # ---- revocation (RFC 7009)
    def revoke(self, token: str, client_id: str) -> bool:
        """Revokes the grant of an access or refresh token issued to `client_id`; False if there was none (the
        endpoint answers 200 either way, RFC 7009 2.2)."""
        key = secret_key(token)
        for kind in (ACCESS, REFRESH):
            record = self.store.get(kind, key)
            if record is not None and record["client_id"] == client_id:
                self.store.delete(kind, key)
                self.revoke_grant(str(record["grant"]))
                return True
        kept = self.store.get(ROTATED, key)  # a refresh token inside its grace window
        if kept is not None and kept["client_id"] == client_id:
            pair = _pair_from_json(self.cipher.decrypt(str(kept["pair"]).encode("ascii")))
            self.store.delete(ROTATED, key)
            return self.revoke(pair.access_token, client_id)
        return False

    def revoke_grant(self, grant_id: str) -> None:
        """Ends every token of the grant (they are checked against it on every use)."""
        self.store.delete(GRANT, grant_id)


def _pair_json(pair: TokenPair) -> bytes:
    data = {"a": pair.access_token, "r": pair.refresh_token, "e": pair.expires_in, "s": list(pair.scopes)}
    return json.dumps(data).encode("utf-8")


def _pair_from_json(data: bytes) -> TokenPair:
    loaded = json.loads(data)
    return TokenPair(loaded["a"], loaded["r"], int(loaded["e"]), tuple(loaded["s"]))
