"""The account registry: an account's name -> its token store, its Gmail client and the tool context built on them.

Today one account, `default`, configured by `GMAIL_TOKEN_PATH` (`.token.json`). Every account keeps its own token
store and client (connections, retries, quota budget), so a revoked token or a rate limit on one never reaches
another. The dispatcher asks the registry for the context of the account a call names (`account` argument), and
for the scopes the account's token holds when it lists tools.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from server.auth import TokenStore, read_token_info
from server.errors import AuthError, InvalidInputError
from server.gmail import scopes
from server.gmail_client import GmailClient
from server.runtime.config import Settings
from server.runtime.observability import Metrics
from server.runtime.write_safety import WriteSafety
from server.tools import DEFAULT_ACCOUNT, ToolContext


@dataclass
class Account:
    name: str
    settings: Settings
    tokens: TokenStore
    gmail: GmailClient
    _scopes_stamp: tuple[int, int] | None = field(default=None, repr=False)
    _scopes: frozenset[str] | None = field(default=None, repr=False)

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


class AccountRegistry:
    """Accounts by name, and the tool context of each (a `ContextSource` for the dispatcher)."""

    def __init__(self, accounts: list[Account], *, enrich_top_k: int, metrics: Metrics) -> None:
        if not accounts:
            raise ValueError("at least one account is needed")
        self._accounts = {account.name: account for account in accounts}
        self._default = accounts[0].name if DEFAULT_ACCOUNT not in self._accounts else DEFAULT_ACCOUNT
        self._contexts = {
            account.name: ToolContext(
                gmail=account.gmail,
                enrich_top_k=enrich_top_k,
                metrics=metrics,
                account=account.name,
                safety=WriteSafety.from_settings(account.settings),
            )
            for account in accounts
        }

    @classmethod
    def single(cls, settings: Settings, *, metrics: Metrics) -> AccountRegistry:
        """The one-account set-up of today: the token file of `settings`, named `default`."""
        tokens = TokenStore(settings)
        account = Account(DEFAULT_ACCOUNT, settings, tokens, GmailClient(settings, tokens, metrics=metrics))
        return cls([account], enrich_top_k=settings.enrich_top_k, metrics=metrics)

    @property
    def names(self) -> list[str]:
        return list(self._accounts)

    def get(self, name: str | None) -> Account:
        key = name or self._default
        account = self._accounts.get(key)
        if account is None:
            raise InvalidInputError(
                f"No account named {key!r}.",
                hint=f"Use one of the configured accounts: {', '.join(self._accounts)} (or leave account out).",
            )
        return account

    def context_for(self, account: str | None) -> ToolContext:
        return self._contexts[self.get(account).name]

    def granted_scopes(self, account: str | None) -> frozenset[str] | None:
        return self.get(account).granted_scopes()
