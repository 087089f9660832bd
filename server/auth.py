"""Runtime credentials: load the token file `auth_cli.py` wrote, refresh it when needed. Never a browser, never stdin.

The server runs under a desktop client with no terminal, so consent cannot happen here (the design's two-phase
auth: `auth_cli.py` once in a terminal, then only refreshes). Each
call asks `TokenStore.get()`, which re-reads the token file whenever it changed on disk: a user who runs
`auth_cli.py` while the server is up is served on the next call, and a deleted or corrupted file is reported at
once instead of being masked by a cached token.
"""

from __future__ import annotations

import copy
import json
import os
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httplib2
from google.auth import exceptions as google_exceptions
from google.oauth2.credentials import Credentials

from server import scopes
from server.errors import AuthError, GmailError, TransientError
from server.gmail.errors import describe_refresh_failure, first_line
from server.gmail.token_endpoint import single_attempt_request
from server.hints import quoted_auth_command, rerun_auth
from server.runtime.config import Settings
from server.runtime.observability import get_logger
from server.runtime.token_crypto import KeyUnavailable, is_sealed, seal, sealed_with, unseal

log = get_logger("auth")
# Our own keys in a token file, beside google-auth's (which records the address as `account`): kept on refresh.
PRESERVED_KEYS = ("authorized_at",)

# Scopes that include read access to messages and search. gmail.metadata cannot use `q` nor read bodies.
SUFFICIENT_SCOPES = scopes.READ


@dataclass(frozen=True)
class _FileStamp:
    mtime_ns: int
    size: int
    inode: int


class TokenStore:
    """Hands out valid credentials from the token file; thread-safe, re-reads the file when it changes."""

    def __init__(self, settings: Settings, *, http_factory: Callable[[], Any] | None = None) -> None:
        self._settings = settings
        self._http_factory = http_factory
        self._lock = threading.Lock()
        self._stamp: _FileStamp | None = None
        self._credentials: Any = None
        self._refreshes_finished = 0
        self._last_refresh_error: GmailError | None = None
        self._extras: dict[str, Any] = {}  # PRESERVED_KEYS of the loaded file
        self._sealed: str | None = None  # the key source of the loaded file when it is encrypted
        self._account_email: str | None = None

    @property
    def path(self) -> Path:
        return self._settings.token_path

    @property
    def account_email(self) -> str | None:
        """The Google address the token belongs to, as recorded in the file (None before the first load)."""
        return self._account_email

    def record_account(self, email: str) -> None:
        """Writes the token's Google address into its file (learned from users.getProfile), keeping its format."""
        with self._lock:
            info, sealed = read_token_file(self.path)
            write_token_file(self.path, {**info, "account": email}, seal_with=self._seal_scheme(sealed))
            self._stamp = self._stat()
            self._account_email = email

    def _seal_scheme(self, sealed: str | None) -> str | None:
        """Files are written encrypted when configured, or when they were read encrypted (kept that way)."""
        configured = self._settings.token_encryption
        return configured if configured != "off" else sealed

    def get(self) -> Any:
        """Returns valid `google.oauth2.credentials.Credentials`, refreshing them if expired; raises AuthError."""
        finished_seen = self._refreshes_finished  # read before queueing for the lock
        with self._lock:
            stamp = self._stat()
            if stamp != self._stamp or self._credentials is None:
                self._credentials = None
                self._credentials = self._load()
                self._stamp = stamp
                self._last_refresh_error = None
            if not self._credentials.valid:
                if self._refreshes_finished != finished_seen and self._last_refresh_error is not None:
                    # Single flight: a refresh failed while this call waited for the lock; share its outcome
                    # instead of queueing one more slow attempt behind it.
                    raise copy.copy(self._last_refresh_error)
                try:
                    self._refresh(self._credentials)
                except GmailError as error:
                    self._last_refresh_error = error
                    raise
                else:
                    self._last_refresh_error = None
                finally:
                    self._refreshes_finished += 1
            return self._credentials

    def _stat(self) -> _FileStamp:
        try:
            info = self.path.stat()
        except FileNotFoundError:
            self._credentials = None
            raise AuthError(
                f"No Gmail token file at {self.path}.",
                hint=f"Run {quoted_auth_command()} in a terminal (once, with a browser) to create it; the server picks "
                "it up without a restart.",
            ) from None
        except OSError as exc:
            raise AuthError(f"Cannot read the token file {self.path}: {exc.strerror}.") from None
        return _FileStamp(info.st_mtime_ns, info.st_size, info.st_ino)

    def _load(self) -> Any:

        info, self._sealed = read_token_file(self.path)
        self._extras = {key: info[key] for key in PRESERVED_KEYS if key in info}
        self._account_email = str(info["account"]) if info.get("account") else None
        try:
            credentials = Credentials.from_authorized_user_info(info)
        except (ValueError, TypeError) as exc:
            raise AuthError(
                f"The token file {self.path} is not a valid authorized-user token ({first_line(str(exc))}).",
                hint=f"Delete it and run {quoted_auth_command()} again.",
            ) from None
        if self._settings.token_uri:
            # google-auth refreshes against the token_uri it was built with, not the file's: override it explicitly.
            expiry = credentials.expiry
            credentials = credentials.with_token_uri(self._settings.token_uri)
            # with_token_uri() copies everything but the expiry, which would make a stale token look valid forever.
            credentials.expiry = expiry
        return credentials

    def _refresh(self, credentials: Any) -> None:

        http = self._http_factory() if self._http_factory else httplib2.Http(timeout=self._settings.request_timeout_s)
        try:
            credentials.refresh(single_attempt_request(http))
        except (google_exceptions.RefreshError, google_exceptions.TransportError, OSError) as exc:
            raise describe_refresh_failure(exc) from None
        except (TypeError, ValueError, KeyError):  # an answer that is not an OAuth response (a proxy's page)
            raise TransientError(
                "Google's token endpoint answered with something that is not an OAuth response (a proxy or captive "
                "portal in between?).",
                hint="Check the network in a browser (log in to the Wi-Fi or VPN if asked), then retry.",
            ) from None
        log.info(
            "access token refreshed", extra={"expires": credentials.expiry.isoformat() if credentials.expiry else None}
        )
        self._persist(credentials)

    def _persist(self, credentials: Any) -> None:
        """Saves the fresh access token so the next start-up skips a refresh; failure to save is harmless."""
        try:
            info = {**self._extras, **json.loads(credentials.to_json())}
            write_token_file(self.path, info, seal_with=self._seal_scheme(self._sealed))
            self._stamp = self._stat()
        except (OSError, GmailError) as exc:
            log.warning("could not save the refreshed token", extra={"error": type(exc).__name__})


def read_token_info(path: Path) -> dict[str, Any]:
    """Reads and checks a token file (decrypting it if sealed); every problem becomes an AuthError with the fix."""
    return read_token_file(path)[0]


def read_token_file(path: Path) -> tuple[dict[str, Any], str | None]:
    """The checked token JSON of a file, and the key source it was sealed with (None for a plain file)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise AuthError(
            f"No Gmail token file at {path}.",
            hint=f"Run {quoted_auth_command()} in a terminal (once, with a browser) to create it.",
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise AuthError(
            f"Cannot read the token file {path}: {reason}.",
            hint=f"Fix its permissions, or delete it and run {quoted_auth_command()} again.",
        ) from None
    try:
        info = json.loads(text)
    except json.JSONDecodeError:
        raise AuthError(
            f"The token file {path} is not valid JSON (corrupted or truncated).",
            hint=f"Delete it and run {quoted_auth_command()} again.",
        ) from None
    if not isinstance(info, dict):
        raise AuthError(
            f"The token file {path} does not hold a JSON object.",
            hint=f"Delete it and run {quoted_auth_command()} again.",
        )
    sealed = sealed_with(info)
    if is_sealed(info):
        info = unseal(info, str(path))
    missing = [key for key in ("refresh_token", "client_id", "client_secret") if not info.get(key)]
    if missing:
        raise AuthError(
            f"The token file {path} has no {', '.join(missing)}, so access cannot be renewed.",
            hint=rerun_auth() + " It always asks Google for a refresh token.",
        )
    granted = scopes.parse_granted(info.get("scopes"))
    if granted and not scopes.covers(granted, SUFFICIENT_SCOPES):
        raise AuthError(
            f"The token in {path} was granted too narrow a scope ({', '.join(sorted(granted))}); "
            f"reading and searching mail needs {scopes.READONLY}.",
            hint=rerun_auth("allow 'View your email messages and settings'"),
        )
    return info, sealed


def write_token_file(path: Path, info: dict[str, Any], *, seal_with: str | None = None) -> None:
    """Writes a token file atomically with mode 0600 (owner only), so a crash never leaves half a token.

    `seal_with` (auto, keyring or env) encrypts it (`runtime/token_crypto.py`); None or "off" writes it plain.
    """
    if seal_with and seal_with != "off":
        try:
            info = seal(info, seal_with)
        except KeyUnavailable as exc:
            raise AuthError(
                f"Cannot encrypt the token file {path}: {exc}.",
                hint="Make the key available (GMAIL_MCP_TOKEN_ENCRYPTION says where), or set "
                "GMAIL_MCP_TOKEN_ENCRYPTION=off to keep the token in a plain owner-only file.",
            ) from None
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp_name = tempfile.mkstemp(prefix=".token-", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(info, handle, indent=2)
        os.chmod(temp_name, 0o600)
        os.replace(temp_name, path)
    except BaseException:
        Path(temp_name).unlink(missing_ok=True)
        raise


def token_file_too_open(path: Path) -> bool:
    """True when a POSIX token file is readable by group or others (always False on Windows)."""
    if os.name != "posix":
        return False
    try:
        return bool(path.stat().st_mode & 0o077)
    except OSError:
        return False
