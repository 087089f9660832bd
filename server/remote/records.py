"""What the authorization server remembers about clients and people: registrations, consents, requests in flight,
and each person's Google grants (refresh tokens sealed with Fernet).

All in a `StateStore`, each kind with a lifetime:
- clients: a dynamically registered client (RFC 7591) or a fetched Client ID Metadata Document, by client id; a
  registration unused for `client_s` is forgotten (Claude Code registers anew on every sign-in, so what is kept
  must be bounded), a metadata document for as long as its cache lifetime allows;
- consents: which scopes a person allowed a client, merged across sign-ins (incremental consent);
- pending requests: an authorization request between the redirect to Google and Google's callback, by an
  unguessable `state`, taken once (a replayed callback finds nothing);
- Google grants: per person, each connected Google account's refresh token sealed with Fernet (key from
  `GMAIL_MCP_TOKEN_KEY` or the OS keyring, `vault_cipher`), with its scopes and address; kept `google_s` after the
  last save (Google itself drops refresh tokens unused for six months: "Using OAuth 2.0 to Access Google APIs",
  refresh token expiration). A person's accounts are one entry: saving two accounts for the same person at the
  same instant keeps the later write (sign-ins of one person are sequential in a browser). The access token the
  code exchange returned is kept sealed beside the refresh token, with its expiry, so the person's first Gmail
  call after signing in uses it instead of refreshing at once.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .ledger import Cipher
from .store import CLIENT, CONSENT, GOOGLE, PENDING, StateStore

DAY_S = 24 * 3600.0


@dataclass(frozen=True)
class RecordLifetimes:
    client_s: float = 30 * DAY_S
    consent_s: float = 365 * DAY_S
    pending_s: float = 600.0  # a person has ten minutes to get through Google's consent screen
    google_s: float = 183 * DAY_S


@dataclass(frozen=True)
class GoogleAccount:
    """One connected Google account of a person."""

    email: str
    google_sub: str
    refresh_token: str
    scopes: frozenset[str]
    access_token: str = ""  # the last access token Google gave (sealed too): the first call after sign-in uses it
    access_expires_at: float = 0.0  # when it expires, in wall-clock seconds (the store's clock)


def vault_cipher(scheme: str = "auto") -> Cipher:
    """Fernet with the key from `GMAIL_MCP_TOKEN_KEY` or the OS keyring (runtime/token_crypto.py's key handling);
    raises token_crypto.KeyUnavailable saying how to provide one."""
    from cryptography.fernet import Fernet

    from server.runtime.token_crypto import KeyUnavailable, key_for

    _, key = key_for(scheme)
    try:
        return Fernet(key)
    except (ValueError, TypeError):
        raise KeyUnavailable("the token key is not a Fernet key (32 bytes, url-safe base64)") from None


class Records:
    """Clients, consents, pending requests and Google grants over a `StateStore`."""

    def __init__(self, store: StateStore, cipher: Cipher, lifetimes: RecordLifetimes | None = None) -> None:
        self.store = store
        self.cipher = cipher
        self.lifetimes = lifetimes or RecordLifetimes()

    # ---- clients
    def save_client(self, client_id: str, metadata: dict[str, Any], ttl_s: float | None = None) -> None:
        self.store.put(CLIENT, client_id, metadata, ttl_s or self.lifetimes.client_s)

    def client(self, client_id: str) -> dict[str, Any] | None:
        return self.store.get(CLIENT, client_id)

    def forget_client(self, client_id: str) -> bool:
        return self.store.delete(CLIENT, client_id)

    # ---- consents
    def consent(self, subject: str, client_id: str, scopes: Iterable[str]) -> frozenset[str]:
        """Adds `scopes` to what `subject` allowed `client_id`; returns everything allowed now."""
        allowed = self.consented(subject, client_id) | frozenset(scopes)
        self.store.put(CONSENT, _pair_key(subject, client_id), {"scopes": sorted(allowed)}, self.lifetimes.consent_s)
        return allowed

    def consented(self, subject: str, client_id: str) -> frozenset[str]:
        entry = self.store.get(CONSENT, _pair_key(subject, client_id))
        return frozenset(entry["scopes"]) if entry else frozenset()

    def withdraw_consent(self, subject: str, client_id: str) -> bool:
        return self.store.delete(CONSENT, _pair_key(subject, client_id))

    # ---- authorization requests in flight
    def begin_request(self, request: dict[str, Any]) -> str:
        """Keeps the request until the browser comes back; returns the `state` that names it (256 random bits)."""
        state = secrets.token_urlsafe(32)
        self.store.put(PENDING, state, request, self.lifetimes.pending_s)
        return state

    def finish_request(self, state: str) -> dict[str, Any] | None:
        """The request named by `state`, once; None for an unknown, expired or already finished one."""
        return self.store.take(PENDING, state) if state else None

    # ---- Google grants
    def save_google_account(self, subject: str, account: GoogleAccount) -> None:
        """Adds or replaces (by address) one of the person's Google accounts, its refresh token sealed."""
        entry: dict[str, Any] = {
            "email": account.email,
            "google_sub": account.google_sub,
            "scopes": sorted(account.scopes),
            "sealed": self.cipher.encrypt(account.refresh_token.encode("utf-8")).decode("ascii"),
        }
        if account.access_token:
            entry["sealed_access"] = self.cipher.encrypt(account.access_token.encode("utf-8")).decode("ascii")
            entry["access_expires_at"] = account.access_expires_at
        accounts = self._sealed_accounts(subject)
        wanted = account.email.lower()
        at = next((i for i, held in enumerate(accounts) if held["email"].lower() == wanted), len(accounts))
        accounts[at : at + 1] = [entry]
        self.store.put(GOOGLE, subject, {"accounts": accounts}, self.lifetimes.google_s)

    def google_accounts(self, subject: str) -> list[GoogleAccount]:
        """The person's Google accounts, refresh tokens unsealed, in the order they were first connected."""
        return [
            GoogleAccount(
                email=entry["email"],
                google_sub=entry["google_sub"],
                refresh_token=self.cipher.decrypt(entry["sealed"].encode("ascii")).decode("utf-8"),
                scopes=frozenset(entry["scopes"]),
                access_token=self._unseal(entry.get("sealed_access")),
                access_expires_at=float(entry.get("access_expires_at") or 0.0),
            )
            for entry in self._sealed_accounts(subject)
        ]

    def google_account(self, subject: str, email: str) -> GoogleAccount | None:
        wanted = email.strip().lower()
        return next((account for account in self.google_accounts(subject) if account.email.lower() == wanted), None)

    def forget_google_account(self, subject: str, email: str) -> bool:
        """Drops one account (Google answered `invalid_grant`, or the person disconnected it)."""
        wanted = email.strip().lower()
        held = self._sealed_accounts(subject)
        accounts = [entry for entry in held if entry["email"].lower() != wanted]
        if len(accounts) == len(held):
            return False
        if accounts:
            self.store.put(GOOGLE, subject, {"accounts": accounts}, self.lifetimes.google_s)
        else:
            self.store.delete(GOOGLE, subject)
        return True

    def _unseal(self, sealed: str | None) -> str:
        return self.cipher.decrypt(sealed.encode("ascii")).decode("utf-8") if sealed else ""

    def _sealed_accounts(self, subject: str) -> list[dict[str, Any]]:
        entry = self.store.get(GOOGLE, subject)
        return list(entry["accounts"]) if entry else []


def _pair_key(subject: str, client_id: str) -> str:
    # A newline appears in neither a Google `sub` nor a client id (a URL or a generated id).
    return f"{subject}\n{client_id}"
