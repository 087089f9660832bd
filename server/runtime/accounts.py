"""The account registry: an account's name -> its token store, its Gmail client, caches and tool context.

Today one account, `default`, configured by `GMAIL_TOKEN_PATH` (`.token.json`). Every account keeps its own token
store, client (connections, retries, quota budget, batch size) and caches (`gmail/cache.py`: what one mailbox
answered never serves another), so a revoked token or a rate limit on one never reaches another. The dispatcher
asks the registry for the context of the account a call names (`account` argument), for the scopes the account's
token holds when it lists tools, and to warm the accounts up once a session has started.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from server.auth import TokenStore
from server.errors import GmailError, InvalidInputError
from server.gmail import scopes
from server.gmail.cache import CachedGmail
from server.gmail_client import GmailClient
from server.runtime.config import Settings
from server.runtime.observability import Metrics, get_logger
from server.runtime.write_safety import WriteSafety
from server.tools import DEFAULT_ACCOUNT, ToolContext

log = get_logger("accounts")


@dataclass
class Account:
    name: str
    settings: Settings
    tokens: TokenStore
    client: GmailClient
    gmail: CachedGmail  # what the tools use: the client behind the account's caches
    # (file stamp, scopes) replaced as one value: readers on other threads never see half an update.
    _scopes_seen: tuple[tuple[int, int, int], frozenset[str] | None] | None = field(default=None, repr=False)

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
        return cls(name, settings, tokens, client, cached)

    @property
    def token_path(self) -> Path:
        return self.settings.token_path

    def granted_scopes(self) -> frozenset[str] | None:
        """The scopes the token file records, re-read only when the file changes (a stat per call otherwise);
        None when there is no readable token file or it records none."""
        try:
            info = self.token_path.stat()
        except OSError:
            return None
        stamp = (info.st_mtime_ns, info.st_size, info.st_ino)
        seen = self._scopes_seen
        if seen is None or seen[0] != stamp:
            try:
                recorded = json.loads(self.token_path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                recorded = None
            granted = scopes.parse_granted(recorded.get("scopes")) if isinstance(recorded, dict) else None
            seen = self._scopes_seen = (stamp, granted)
        return seen[1]


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
                download_dir=account.settings.download_dir,
                thread_max_chars=account.settings.thread_max_chars,
                safety=WriteSafety.from_settings(account.settings),
            )
            for account in accounts
        }
        self.warmed_up = threading.Event()  # set when warm_up() has finished, whatever its outcome

    @classmethod
    def single(cls, settings: Settings, *, metrics: Metrics) -> AccountRegistry:
        """The one-account set-up of today: the token file of `settings`, named `default`."""
        account = Account.build(DEFAULT_ACCOUNT, settings, metrics=metrics)
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

    def warm_up(self) -> None:
        """Each account's Gmail made ready for its first call (see `GmailClient.warm_up`). Failures are only
        logged: the first tool call meets the same problem and reports it with its hint."""
        try:
            for account in self._accounts.values():
                if not account.settings.warm_up:
                    continue
                started = time.perf_counter()
                try:
                    account.gmail.warm_up()
                except GmailError as error:
                    log.info("warm-up stopped", extra={"account": account.name, "category": error.code})
                except Exception:
                    log.warning("warm-up failed", extra={"account": account.name}, exc_info=True)
                else:
                    elapsed = round((time.perf_counter() - started) * 1000, 1)
                    log.info("gmail session ready", extra={"account": account.name, "latency_ms": elapsed})
        finally:
            self.warmed_up.set()
