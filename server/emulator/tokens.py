"""OAuth for the emulator: the refresh-token grant at `/token` and Bearer checks on API calls.

The point is that google-auth's real refresh path runs against it: the token file it writes has no access
token, so the client's first request refreshes; access tokens expire after `ttl_s` (or on demand), so 401 ->
refresh -> retry happens for real; revoking turns the refresh token into `invalid_grant`, the error a user sees
when a Testing-mode app's 7-day refresh token lapses.

The client id, secret and refresh token are fixed strings, so a token file written by one emulator run keeps
working with the next (handy for `GMAIL_TOKEN_PATH` in a demo setup). They grant nothing anywhere else.

Several mailboxes: each further mailbox owner gets a refresh token of their own (`add_user`), and every access
token remembers whose refresh token issued it (`user_of`), so the app serves each token its owner's mailbox
only. The primary mailbox's owner is the user `""`; revoking one user's refresh token leaves the others working.

Scopes: the plain refresh token is the emulator's test key (its file records gmail.readonly, what a default
consent grants, but the emulator lets it do anything, so tests can change the mailbox directly). A token written
with scopes (`write_token_file(..., scopes=...)`, `--write-token FILE --scopes readonly,compose`) carries them in
its refresh token (`<token>~readonly+compose`); its access tokens are held to exactly those scopes, and a call
outside them answers 403 insufficientPermissions (see `scopes.py`).
"""

from __future__ import annotations

import json
import os
import secrets
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

READONLY_SCOPE = "https://www.googleapis.com/auth/gmail.readonly"
CLIENT_ID = "gmail-emulator.apps.googleusercontent.com"
CLIENT_SECRET = "gmail-emulator-client-secret"
REFRESH_TOKEN = "1//gmail-emulator-refresh-token"

INVALID_GRANT = {"error": "invalid_grant", "error_description": "Token has been expired or revoked."}
# What Google's token endpoint answers when a Workspace organisation's session control wants a fresh sign-in
# (google-auth's oauth2/reauth.py branches on exactly these error and error_subtype values).
INVALID_RAPT = {
    "error": "invalid_grant",
    "error_description": "reauth related error (invalid_rapt)",
    "error_uri": "https://support.google.com/a/answer/9368756",
    "error_subtype": "invalid_rapt",
}
INVALID_CLIENT = {"error": "invalid_client", "error_description": "The OAuth client was not found."}


class TokenAuthority:
    """Issues access tokens for refresh tokens and checks them on every API call. Thread-safe."""

    def __init__(self, ttl_s: float = 3600, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl_s = ttl_s
        self._clock = clock
        self._lock = threading.Lock()
        self._access: dict[str, float] = {}  # token -> expiry on self._clock
        self._scopes: dict[str, frozenset[str] | None] = {}  # access token -> its scopes (None: unrestricted)
        self._revoked = False
        self._users: dict[str, str] = {REFRESH_TOKEN: ""}  # refresh token -> its user ("": the primary mailbox)
        self._owners: dict[str, str] = {}  # access token -> user
        self._revoked_users: set[str] = set()
        self.primary_owner = ""  # the primary mailbox's address, lower-cased (set by the app)

    def add_user(self, user: str) -> str:
        """Registers another mailbox owner (an address, any case); returns the refresh token that reaches it."""
        key = user.strip().lower()
        token = f"{REFRESH_TOKEN}.{key}"
        with self._lock:
            self._users[token] = key
        return token

    def refresh_token_of(self, user: str = "") -> str:
        with self._lock:
            key = self._user_key(user)
            return next(token for token, owner in self._users.items() if owner == key)

    def grant(self, form: Mapping[str, str]) -> tuple[int, dict[str, object]]:
        """Answers a token-endpoint POST: (HTTP status, JSON body)."""
        grant_type = form.get("grant_type", "")
        if grant_type != "refresh_token":
            return 400, {"error": "unsupported_grant_type", "error_description": f"Invalid grant_type: {grant_type}"}
        if form.get("client_id") != CLIENT_ID or form.get("client_secret") != CLIENT_SECRET:
            return 401, dict(INVALID_CLIENT)
        if not form.get("refresh_token"):
            return 400, {"error": "invalid_request", "error_description": "Missing required parameter: refresh_token"}
        base, _, scope_text = form.get("refresh_token", "").partition(SCOPE_SEPARATOR)
        try:
            granted = scopes_from_token_suffix(scope_text) if scope_text else None
        except ValueError:
            return 400, dict(INVALID_GRANT)
        with self._lock:
            user = self._users.get(base)
            if self._revoked or user is None or user in self._revoked_users:
                return 400, dict(INVALID_GRANT)
        token = self.issue_access_token(user, granted)
        return 200, {
            "access_token": token,
            "expires_in": max(int(self.ttl_s), 1),
            "scope": " ".join(sorted(granted)) if granted else READONLY_SCOPE,
            "token_type": "Bearer",
        }

    def issue_access_token(self, user: str, granted: frozenset[str] | None) -> str:
        """A new access token for `user`'s mailbox, held to `granted` (None: unrestricted), live for `ttl_s`."""
        token = "ya29.emulator." + secrets.token_urlsafe(32)
        with self._lock:
            now = self._clock()
            self._access = {t: expiry for t, expiry in self._access.items() if expiry > now}
            self._owners = {t: owner for t, owner in self._owners.items() if t in self._access}
            self._scopes = {t: held for t, held in self._scopes.items() if t in self._access}
            self._access[token] = now + self.ttl_s
            self._owners[token] = user
            self._scopes[token] = granted
        return token

    def forget_access_tokens(self, tokens: Iterable[str]) -> None:
        """Ends these access tokens now (a revoked grant's); unknown ones are ignored."""
        with self._lock:
            for token in tokens:
                self._access.pop(token, None)

    def user_revoked(self, user: str) -> bool:
        """Whether the control plane revoked `user`'s refresh tokens (or everyone's)."""
        with self._lock:
            return self._revoked or user in self._revoked_users

    def scopes_of(self, authorization: str | None) -> frozenset[str] | None:
        """The scopes of the header's access token; None for the unrestricted test key (or no valid token)."""
        _, _, token = (authorization or "").strip().partition(" ")
        with self._lock:
            return self._scopes.get(token.strip())

    def check(self, authorization: str | None) -> bool:
        """True when the header carries a live access token we issued."""
        return self.user_of(authorization) is not None

    def user_of(self, authorization: str | None) -> str | None:
        """Whose live access token the header carries ("" for the primary mailbox's owner); None if none."""
        scheme, _, token = (authorization or "").strip().partition(" ")
        if scheme.lower() != "bearer" or not token:
            return None
        with self._lock:
            expiry = self._access.get(token.strip())
            if expiry is None or expiry <= self._clock():
                return None
            return self._owners.get(token.strip(), "")

    def expire_access_tokens(self) -> None:
        with self._lock:
            self._access.clear()

    def revoke_refresh_tokens(self, user: str | None = None) -> None:
        """Every refresh token, or only `user`'s ("" or the primary owner's address for the primary mailbox)."""
        with self._lock:
            if user is None:
                self._revoked = True
            else:
                self._revoked_users.add(self._user_key(user))

    def restore_refresh_tokens(self) -> None:
        with self._lock:
            self._revoked = False
            self._revoked_users.clear()

    def _user_key(self, user: str) -> str:
        key = user.strip().lower()
        if key in ("", self.primary_owner):
            return ""
        if key not in self._users.values():
            raise ValueError(f"no mailbox owner {user!r}")
        return key


SCOPE_SEPARATOR = "~"


def scopes_from_token_suffix(text: str) -> frozenset[str]:
    from .scopes import parse_names

    return parse_names(text.replace("+", ","), bundles=False)


def scoped_refresh_token(refresh_token: str, scopes: Iterable[str]) -> str:
    """`refresh_token` held to exactly `scopes` (short names or scope URLs)."""
    from .scopes import BY_NAME, parse_names

    short = {url: name for name, url in BY_NAME.items()}
    granted = parse_names(",".join(scopes))
    return refresh_token + SCOPE_SEPARATOR + "+".join(sorted(short[url] for url in granted))


def authorized_user_info(
    token_uri: str,
    refresh_token: str = REFRESH_TOKEN,
    account: str | None = None,
    scopes: Iterable[str] | None = None,
) -> dict[str, object]:
    """The authorized-user JSON google-auth loads (no access token: the first call refreshes).

    `account` is google-auth's own field for the address the credential belongs to (as `auth_cli.py` records it).
    Without `scopes`: the unrestricted test key, recorded as gmail.readonly. With them: a token held to them.
    """
    recorded = [READONLY_SCOPE]
    if scopes is not None:
        from .scopes import parse_names

        recorded = sorted(parse_names(",".join(scopes)))
        refresh_token = scoped_refresh_token(refresh_token, scopes)
    info: dict[str, object] = {
        "type": "authorized_user",
        "client_id": CLIENT_ID,
        "client_secret": CLIENT_SECRET,
        "refresh_token": refresh_token,
        "token_uri": token_uri,
        "scopes": recorded,
    }
    if account:
        info["account"] = account
    return info


def write_token_file(
    path: str | Path,
    token_uri: str,
    refresh_token: str = REFRESH_TOKEN,
    account: str | None = None,
    scopes: Iterable[str] | None = None,
) -> Path:
    """Writes the token file with mode 0600 (it is a credential, even if a toy one)."""
    target = Path(path).expanduser()
    target.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        json.dump(authorized_user_info(token_uri, refresh_token, account, scopes), handle, indent=2)
        handle.write("\n")
    os.chmod(target, 0o600)
    return target
