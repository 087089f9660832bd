"""What every endpoint of the authorization server shares: its settings and state (`AuthCore`), who may sign in
(`AllowedUsers`), the browser binding cookie, and the two ways an endpoint answers an OAuth error (a redirect to
the client carrying `iss`, RFC 9207; or JSON per RFC 6749 5.2 with `Cache-Control: no-store`).

Nothing here issues or checks a secret by itself: codes and tokens are the ledger's, client credentials the client
directory's.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from mcp.server.auth.provider import construct_redirect_uri
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from .clients import ClientDirectory
from .google_upstream import GoogleSignIn
from .ledger import Cipher, Ledger
from .records import Records
from .store import StateStore, secret_key

NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}
CONSENT_PATH = "/oauth/consent"


@dataclass(frozen=True)
class AllowedUsers:
    """Who may sign in: exact addresses and `@domain` entries, compared case-insensitively."""

    addresses: frozenset[str] = frozenset()
    domains: frozenset[str] = frozenset()

    @classmethod
    def parse(cls, text: str) -> AllowedUsers:
        """`alice@x.com, @example.org` (commas, spaces or newlines between entries); ValueError for an entry that
        is neither an address nor `@domain`."""
        addresses: set[str] = set()
        domains: set[str] = set()
        for entry in text.replace(",", " ").split():
            entry = entry.strip().lower()
            if entry.startswith("@") and len(entry) > 1 and "@" not in entry[1:]:
                domains.add(entry[1:])
            elif entry.count("@") == 1 and not entry.startswith("@") and not entry.endswith("@"):
                addresses.add(entry)
            else:
                raise ValueError(f"GMAIL_MCP_ALLOWED_USERS: {entry!r} is neither an address nor an @domain entry")
        return cls(frozenset(addresses), frozenset(domains))

    def allows(self, email: str) -> bool:
        address = email.strip().lower()
        if address.count("@") != 1:
            return False
        return address in self.addresses or address.rsplit("@", 1)[1] in self.domains

    def describe(self) -> str:
        """Who may sign in, in words (for the refusal page)."""
        parts = sorted(self.addresses) + [f"any address at {domain}" for domain in sorted(self.domains)]
        return ", ".join(parts) if parts else "nobody (the operator has not set GMAIL_MCP_ALLOWED_USERS)"


@dataclass
class AuthCore:
    """The authorization server's settings and state, handed to each endpoint module."""

    store: StateStore
    cipher: Cipher
    ledger: Ledger
    records: Records
    clients: ClientDirectory
    google: GoogleSignIn
    allowed_users: AllowedUsers
    resource_url: str
    issuer: str
    mcp_scopes: list[str]
    google_scopes_for: Callable[[Iterable[str]], list[str]]
    clock: Callable[[], float]
    login_hint: str | None = None  # demo mode: the account the emulator's Google signs in (it has no chooser)
    base_path: str = field(init=False)

    def __post_init__(self) -> None:
        self.base_path = urlsplit(self.issuer).path.rstrip("/")

    @property
    def secure(self) -> bool:
        return self.issuer.startswith("https://")

    @property
    def cookie_name(self) -> str:
        # `__Host-`: the browser keeps it only if Secure, Path=/ and no Domain (no sibling host can plant it).
        return "__Host-gmail-mcp-browser" if self.secure else "gmail-mcp-browser"

    def url(self, path: str) -> str:
        """The absolute URL of one of this server's endpoints (`path` below the issuer)."""
        return _join(self.issuer, path)

    # ---- the browser binding
    def browser_of(self, request: Request) -> str | None:
        value = request.cookies.get(self.cookie_name)
        return value if value and 20 <= len(value) <= 100 else None

    def bind_browser(self, request: Request) -> tuple[str, str]:
        """(the browser's cookie value, kept or new; its hash, what requests in flight remember)."""
        value = self.browser_of(request) or secrets.token_urlsafe(32)
        return value, secret_key(value)

    def same_browser(self, request: Request, pending: dict[str, Any]) -> bool:
        value = self.browser_of(request)
        return value is not None and secrets.compare_digest(secret_key(value), str(pending.get("browser", "")))

    def set_browser_cookie(self, response: Response, value: str) -> None:
        response.set_cookie(
            self.cookie_name,
            value,
            max_age=int(self.records.lifetimes.pending_s),
            path="/",
            secure=self.secure,
            httponly=True,
            samesite="lax",
        )

    # ---- answers
    def redirect_to_client(self, redirect_uri: str, **params: str | None) -> RedirectResponse:
        """302 to the client's (already checked) redirect URI with `params` and `iss` (RFC 9207)."""
        target = construct_redirect_uri(redirect_uri, **params, iss=self.issuer)
        return RedirectResponse(target, status_code=302, headers={"Cache-Control": "no-store"})


def _join(issuer: str, path: str) -> str:
    parts = urlsplit(issuer)
    return f"{parts.scheme}://{parts.netloc}{parts.path.rstrip('/')}{path}"


def oauth_error(error: str, description: str, status: int = 400, headers: dict[str, str] | None = None) -> Response:
    """RFC 6749 5.2: the error JSON, never cached."""
    return JSONResponse(
        {"error": error, "error_description": description}, status_code=status, headers={**NO_STORE, **(headers or {})}
    )
