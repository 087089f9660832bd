"""The account registry: an account's name -> its token store, its Gmail client and the tool context built on them.

Accounts are the token files `runtime/token_folder.py` finds at start-up: `default` (`.token.json`, the single-
account set-up) and `<name>.json` in the token folder. Every account keeps its own token store, Gmail client
(connections, retries, quota budget) and metrics, so a revoked token or a rate limit on one never reaches
another. The dispatcher asks the registry for the context of the account a call names (`account` argument),
for the scopes the account's token holds when it lists tools, for the account's Google address (so results say
whose mail they hold), and to explain an error in terms of the account (its own `auth_cli.py --account` command).
"""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from server.auth import TokenStore, read_token_info
from server.errors import AuthError, GmailError, InvalidInputError, PermissionDeniedError
from server.gmail import scopes
from server.gmail_client import GmailClient
from server.hints import auth_command
from server.runtime.config import Settings
from server.runtime.observability import Metrics, get_logger
from server.runtime.token_folder import configured_accounts, consent_age_note, consent_command, default_account
from server.tools import DEFAULT_ACCOUNT, ToolContext

log = get_logger("accounts")
PROFILE_RETRY_S = 300.0  # after a failed address lookup, ask Gmail again at most this often


@dataclass
class Account:
    name: str
    settings: Settings
    tokens: TokenStore
    gmail: GmailClient
    metrics: Metrics = field(default_factory=Metrics)
    _scopes_stamp: tuple[int, int] | None = field(default=None, repr=False)
    _scopes: frozenset[str] | None = field(default=None, repr=False)
    _email: str | None = field(default=None, repr=False)
    _lookup_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _lookup_failed_at: float | None = field(default=None, repr=False)

    @property
    def token_path(self) -> Path:
        return self.settings.token_path

    def granted_scopes(self) -> frozenset[str] | None:
        """The scopes the token file records (re-read when the file changes); None without a usable token."""
        try:
            info = self.token_path.stat()
        except OSError:
            return None
        stamp = (info.st_mtime_ns, info.st_size)
        if stamp != self._scopes_stamp:
            try:
                granted = scopes.parse_granted(read_token_info(self.token_path).get("scopes"))
            except AuthError:
                granted = None
            self._scopes_stamp, self._scopes = stamp, granted
        return self._scopes

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
            self._email = email
            if email:
                try:
                    self.tokens.record_account(email)
                except (OSError, GmailError) as exc:  # a read-only token folder: remembered for this run only
                    log.info("account address not recorded", extra={"account": self.name, "error": type(exc).__name__})
            return email

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
        self._contexts = {
            account.name: ToolContext(
                gmail=account.gmail, enrich_top_k=enrich_top_k, metrics=account.metrics, account=account.name
            )
            for account in accounts
        }

    @classmethod
    def single(cls, settings: Settings, *, metrics: Metrics) -> AccountRegistry:
        """The one-account set-up: the token file of `settings`, named `default`."""
        return cls([_account(DEFAULT_ACCOUNT, settings, metrics)], enrich_top_k=settings.enrich_top_k)

    @classmethod
    def from_settings(
        cls, settings: Settings, *, metrics_for: Callable[[str], Metrics] = lambda name: Metrics()
    ) -> AccountRegistry:
        """Every account with a token file (`runtime/token_folder.py`); ValueError for a bad default account."""
        found = configured_accounts(settings)
        names = [name for name, _ in found]
        default = default_account(settings, names)
        accounts = [_account(name, settings.with_overrides(token_path=path), metrics_for(name)) for name, path in found]
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
        if isinstance(error, AuthError):
            note = consent_age_note(_authorized_at(target.token_path), target.auth_command())
            if note and note not in explained.hint:
                explained.hint = f"{explained.hint} {note}"
        return explained

    def metrics_summary(self) -> dict[str, Any]:
        """The aggregate summary, and one per account when there are several."""
        accounts = self.accounts()
        summary = Metrics.combined(account.metrics for account in accounts).summary()
        if len(accounts) > 1:
            summary["accounts"] = {account.name: account.metrics.summary() for account in accounts}
        return summary


def _account(name: str, settings: Settings, metrics: Metrics) -> Account:
    tokens = TokenStore(settings)
    return Account(name, settings, tokens, GmailClient(settings, tokens, metrics=metrics), metrics)


def _authorized_at(path: Path) -> object:
    try:
        return read_token_info(path).get("authorized_at")
    except AuthError:
        return None
