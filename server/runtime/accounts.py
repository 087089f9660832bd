"""The account registry: an account's name -> its token store, its Gmail client, caches and tool context.

Accounts are the token files `runtime/token_folder.py` finds at start-up: `default` (`.token.json`, the single-
account set-up) and `<name>.json` in the token folder. Every account keeps its own token store, client
(connections, retries, quota budget, batch size), caches (`gmail/cache.py`: what one mailbox answered never
serves another) and metrics, so a revoked token or a rate limit on one never reaches another. The dispatcher asks
the registry for the context of the account a call names (`account` argument), for the scopes the account's
token holds when it lists tools, for the account's Google address (so results say whose mail they hold), to
explain an error in terms of the account (its own `auth_cli.py --account` command), and to warm the accounts up
once a session has started.
"""

from __future__ import annotations

import copy
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from server.auth import TokenStore, read_token_info
from server.errors import AuthError, GmailError, InvalidInputError, PermissionDeniedError, ReauthRequiredError
from server.gmail import scopes
from server.gmail.cache import CachedGmail
from server.gmail_client import GmailClient
from server.hints import auth_command
from server.runtime.config import Settings
from server.runtime.observability import Metrics, get_logger
from server.runtime.token_crypto import is_sealed, unseal
from server.runtime.token_folder import configured_accounts, consent_age_note, consent_command, default_account
from server.runtime.write_safety import WriteSafety
from server.tools import DEFAULT_ACCOUNT, ToolContext

log = get_logger("accounts")
PROFILE_RETRY_S = 300.0  # after a failed address lookup, ask Gmail again at most this often


@dataclass
class Account:
    name: str
    settings: Settings
    tokens: TokenStore
    client: GmailClient
    gmail: CachedGmail  # what the tools use: the client behind the account's caches
    metrics: Metrics = field(default_factory=Metrics)
    # (file stamp, scopes) replaced as one value: readers on other threads never see half an update.
    _scopes_seen: tuple[tuple[int, int, int], frozenset[str] | None] | None = field(default=None, repr=False)
    _email: str | None = field(default=None, repr=False)
    _lookup_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _lookup_failed_at: float | None = field(default=None, repr=False)

    @classmethod
    def build(cls, name: str, settings: Settings, *, metrics: Metrics) -> Account:
        tokens = TokenStore(settings)
        client = GmailClient(settings, tokens, metrics=metrics)
        cached = CachedGmail(
            client,
            metrics=metrics,
            search_entries=settings.search_cache_entries,
            search_ttl_s=settings.search_cache_ttl_s,
            summary_entries=settings.summary_cache_entries,
            summary_bytes=int(settings.summary_cache_mb * 1024 * 1024),
            prefetch_limit=settings.enrich_top_k,
        )
        return cls(name, settings, tokens, client, cached, metrics)

    @property
    def token_path(self) -> Path:
        return self.settings.token_path

    def granted_scopes(self) -> frozenset[str] | None:
        """The scopes the token file records, re-read only when the file changes (a stat per call otherwise);
        None when there is no readable token file or it records none. The JSON is read as it is (no check of the
        other fields: listing tools needs the scopes only); an encrypted file is opened when its key is at hand."""
        try:
            info = self.token_path.stat()
        except OSError:
            return None
        stamp = (info.st_mtime_ns, info.st_size, info.st_ino)
        seen = self._scopes_seen
        if seen is None or seen[0] != stamp:
            try:
                recorded = json.loads(self.token_path.read_text(encoding="utf-8"))
                if is_sealed(recorded):
                    recorded = unseal(recorded, str(self.token_path))
            except (OSError, ValueError, AuthError):
                recorded = None
            granted = scopes.parse_granted(recorded.get("scopes")) if isinstance(recorded, dict) else None
            seen = self._scopes_seen = (stamp, granted)
        return seen[1]

    def mailbox(self) -> str | None:
        """The Google address the token belongs to: recorded in the token file by auth_cli.py, else asked of
        Gmail once (users.getProfile, 1 quota unit) and recorded there for the next start. Blocking."""
        recorded = self.tokens.account_email or self._email
        if recorded:
            return recorded
        with self._lookup_lock:
            if self.tokens.account_email or self._email:
                return self.tokens.account_email or self._email
            if self._lookup_failed_at is not None and time.monotonic() - self._lookup_failed_at < PROFILE_RETRY_S:
                return None
            try:
                email = str(self.gmail.get_profile().get("emailAddress") or "") or None
            except GmailError as error:
                self._lookup_failed_at = time.monotonic()
                log.warning("account address unknown", extra={"account": self.name, "error_type": error.code})
                return None
            self.remember_address(email)
            return email

    def warm_up_gmail(self) -> dict[str, Any]:
        """`GmailClient.warm_up` (its profile carries the address): while the address is unknown it holds the
        lookup lock, so a first call's `mailbox()` waits for this profile instead of asking for a second one."""
        if self.tokens.account_email or self._email:
            return self.gmail.warm_up()
        with self._lookup_lock:
            profile = self.gmail.warm_up()
            self.remember_address(str(profile.get("emailAddress") or "") or None)
            return profile

    def remember_address(self, email: str | None) -> None:
        """Keeps the account's address for this run and records it in the token file for the next start."""
        if not email or self._email:
            return
        self._email = email
        try:
            self.tokens.record_account(email)
        except (OSError, GmailError) as exc:  # a read-only token folder: remembered for this run only
            log.info("account address not recorded", extra={"account": self.name, "error": type(exc).__name__})

    def auth_command(self) -> str:
        return consent_command(self.name)


class AccountRegistry:
    """Accounts by name, and the tool context of each (a `ContextSource` for the dispatcher)."""

    def __init__(self, accounts: list[Account], *, enrich_top_k: int, default: str | None = None) -> None:
        if not accounts:
            raise ValueError("at least one account is needed")
        self._accounts = {account.name: account for account in accounts}
        if default is None:
            default = DEFAULT_ACCOUNT if DEFAULT_ACCOUNT in self._accounts else accounts[0].name
        self._default = default
        self.warmed_up = threading.Event()  # set when warm_up() has finished, whatever its outcome
        self._contexts = {
            account.name: ToolContext(
                gmail=account.gmail,
                enrich_top_k=enrich_top_k,
                metrics=account.metrics,
                account=account.name,
                download_dir=account.settings.download_dir,
                thread_max_chars=account.settings.thread_max_chars,
                safety=WriteSafety.from_settings(account.settings),
            )
            for account in accounts
        }

    @classmethod
    def single(cls, settings: Settings, *, metrics: Metrics) -> AccountRegistry:
        """The one-account set-up: the token file of `settings`, named `default`."""
        return cls([Account.build(DEFAULT_ACCOUNT, settings, metrics=metrics)], enrich_top_k=settings.enrich_top_k)

    @classmethod
    def from_settings(
        cls, settings: Settings, *, metrics_for: Callable[[str], Metrics] = lambda name: Metrics()
    ) -> AccountRegistry:
        """Every account with a token file (`runtime/token_folder.py`); ValueError for a bad default account."""
        found = configured_accounts(settings)
        names = [name for name, _ in found]
        default = default_account(settings, names)
        accounts = [
            Account.build(name, settings.with_overrides(token_path=path), metrics=metrics_for(name))
            for name, path in found
        ]
        return cls(accounts, enrich_top_k=settings.enrich_top_k, default=default)

    @property
    def names(self) -> list[str]:
        """The configured accounts, the default first."""
        return [self._default, *(name for name in self._accounts if name != self._default)]

    @property
    def default_name(self) -> str:
        return self._default

    def accounts(self) -> list[Account]:
        return [self._accounts[name] for name in self.names]

    def get(self, name: str | None) -> Account:
        key = (name or self._default).lower()
        account = self._accounts.get(key)
        if account is None:
            raise InvalidInputError(
                f"No account named {name!r}.",
                hint=f"Use one of the configured accounts: {', '.join(self.names)} (or leave account out).",
            )
        return account

    def context_for(self, account: str | None) -> ToolContext:
        return self._contexts[self.get(account).name]

    def granted_scopes(self, account: str | None) -> frozenset[str] | None:
        return self.get(account).granted_scopes()

    def mailbox_of(self, account: str | None) -> str | None:
        return self.get(account).mailbox()

    def explain(self, error: GmailError, account: str | None) -> GmailError:
        """Names the account (when there are several) and its own consent command in auth and scope errors;
        adds the Testing-mode note to auth errors of a token old enough to have been ended by Google."""
        target = self.get(account)
        if not isinstance(error, (AuthError, PermissionDeniedError)) and len(self._accounts) == 1:
            return error
        explained = copy.copy(error)
        if len(self._accounts) > 1:
            explained.message = f"Account {target.name!r}: {error.message}"
        if isinstance(error, (AuthError, PermissionDeniedError)):
            explained.hint = error.hint.replace(auth_command(), target.auth_command())
        if isinstance(error, AuthError) and not isinstance(error, ReauthRequiredError):  # a policy, not an expiry
            note = consent_age_note(_authorized_at(target.token_path), target.auth_command())
            if note and note not in explained.hint:
                explained.hint = f"{explained.hint} {note}"
        return explained

    def warm_up(self) -> None:
        """Each account's Gmail made ready for its first call (see `GmailClient.warm_up`). Failures are only
        logged: the first tool call meets the same problem and reports it with its hint."""
        try:
            for account in self.accounts():
                if not account.settings.warm_up:
                    continue
                started = time.perf_counter()
                try:
                    account.warm_up_gmail()  # the address comes with the profile: a first call need not ask
                except GmailError as error:
                    log.info("warm-up stopped", extra={"account": account.name, "category": error.code})
                except Exception:
                    log.warning("warm-up failed", extra={"account": account.name}, exc_info=True)
                else:
                    elapsed = round((time.perf_counter() - started) * 1000, 1)
                    log.info("gmail session ready", extra={"account": account.name, "latency_ms": elapsed})
        finally:
            self.warmed_up.set()

    def metrics_summary(self) -> dict[str, Any]:
        """The aggregate summary, and one per account when there are several."""
        accounts = self.accounts()
        summary = Metrics.combined(account.metrics for account in accounts).summary()
        if len(accounts) > 1:
            summary["accounts"] = {account.name: account.metrics.summary() for account in accounts}
        return summary


def _authorized_at(path: Path) -> object:
    try:
        return read_token_info(path).get("authorized_at")
    except AuthError:
        return None
