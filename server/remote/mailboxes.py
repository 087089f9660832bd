"""Each person's own mailboxes in `--auth oauth` mode: the tool context source chosen per request by who signed in.

`PeopleSource` is the `ContextSource` the dispatcher is built with. It holds no mailbox of its own: a server
middleware (`PeopleSource.middleware`, appended to the SDK server's) reads the person of every MCP request from
the verified access token (`person.person_of`) and binds that person's `PersonMailboxes` for the request (a
context variable: the handler's worker thread inherits it). With nobody bound, there is no account at all, so no
argument can name another person's mailbox: the `account` enum, the accounts a call may name and the contexts it
may reach are those of the bound person only.

A person's accounts are their Google grants in the state store (`Records.google_accounts(subject)`), named by
their address; the default is the account they signed in with. Each (person, account) gets its own Gmail client
(connections, retries), caches and audit trail (lines carry the person as a stable hash, never an address), built
on first use and kept in a bounded LRU of people; its confirmation codes, send limit and quota budget live in the
state store (`shared_confirmations.py`, `shared_limits.py`), so every replica sees the same.

A Google grant that died (`invalid_grant`: revoked, expired; `invalid_rapt`: a fresh sign-in is wanted; seen by
`google_tokens.GrantCredentials` or in a call's AuthError, `explain`) is dropped from the store, so every replica
knows at once: without the grant of their sign-in account the person's next request answers 401
(`needs_sign_in`) and the client signs in again, which saves a new one; a further account is connected again.
"""

from __future__ import annotations

import contextvars
import copy
import hashlib
import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlencode

from server.errors import AuthError, GmailError, InvalidInputError, PermissionDeniedError, ReauthRequiredError
from server.gmail.cache import CachedGmail
from server.gmail_client import GmailClient
from server.remote.google_tokens import GrantCredentials
from server.remote.google_upstream import GoogleWebClient
from server.remote.person import person_of
from server.remote.records import Records
from server.remote.shared_cleanups import SharedCleanupBook
from server.remote.shared_confirmations import SharedConfirmationBook
from server.remote.shared_limits import SharedQuotaLimiter, SharedSendGuard
from server.remote.store import GOOGLE
from server.runtime.audit import AuditLog
from server.runtime.config import Settings
from server.runtime.filter_record import FilterRecord
from server.runtime.observability import Metrics, get_logger, mask_email
from server.runtime.write_safety import WriteSafety
from server.tools import ToolContext

log = get_logger("remote")
CONNECT_TICKET = "connect-ticket"  # the stage of a pending request that is a connect link's ticket
MAX_PEOPLE = 256  # people whose clients and caches stay in memory; the least recently served go first
_bound: contextvars.ContextVar[PersonMailboxes | None] = contextvars.ContextVar("gmail_mcp_person", default=None)
# Where the token check (`protocol/oauth_guard.py`) leaves the person's mailboxes it read for the request, in the
# request's ASGI scope: the SDK middleware binds them without reading the store again.
SCOPE_KEY = "gmail_mcp.mailboxes"


class Unread:
    """`PeopleSource.person`'s default: the person's entry is not read yet (None would be "no entry")."""


UNREAD = Unread()


def grant_is_dead(error: GmailError) -> bool:
    """Google refused the refresh token for good (`gmail/errors.py`'s wording of invalid_grant / invalid_rapt)."""
    return isinstance(error, ReauthRequiredError) or "invalid_grant" in error.message


def person_tag(subject: str) -> str:
    """A stable, non-reversible name of a person for logs and audit lines (never their address)."""
    return hashlib.sha256(b"gmail-mcp person\0" + subject.encode("utf-8")).hexdigest()[:16]


class PersonAudit(AuditLog):
    """The audit trail of one person: each line names the person by hash, the account masked."""

    def __init__(self, path: Any, person: str) -> None:
        super().__init__(path)
        self.person = person

    def record(self, tool: str, action: str, **fields: Any) -> dict[str, Any]:
        fields["account"] = mask_email(str(fields.get("account", "")))
        return super().record(tool, action, person=self.person, **fields)


class _NoCredentials:
    def get(self) -> Any:
        raise AuthError("This request is not signed in.", hint="Sign in through the client, then call again.")


class PersonMailboxes:
    """One person's accounts as a ContextSource (see the module docstring). Thread-safe."""

    def __init__(self, owner: PeopleSource, subject: str, listing: tuple[tuple[str, str], ...]) -> None:
        self.owner = owner
        self.subject = subject
        self.tag = person_tag(subject)
        self.listing = listing  # ((address lower-cased, google sub), ...) in connection order
        self.scopes: dict[str, frozenset[str]] = {}  # address -> Google scopes, as of the last store read
        self._contexts: dict[str, ToolContext] = {}
        self._lock = threading.Lock()

    @property
    def signed_in(self) -> bool:
        """Whether the person holds the Google grant of the account they sign in with (else: sign in again)."""
        return any(sub == self.subject for _, sub in self.listing)

    @property
    def names(self) -> list[str]:
        default = self.default_name
        return [default, *(name for name, _ in self.listing if name != default)] if default else []

    @property
    def default_name(self) -> str:
        own = [name for name, sub in self.listing if sub == self.subject]
        return (own or [name for name, _ in self.listing] or [""])[0]

    def _name(self, account: str | None) -> str:
        key = (account or self.default_name).strip().lower()
        if not key or key not in dict(self.listing):
            raise InvalidInputError(
                f"No account named {(account or '')[:60]!r} is connected for you.",
                hint=f"Use one of your accounts: {', '.join(self.names) or 'none yet'}. "
                + self.unknown_account_hint(account),
            )
        return key

    def unknown_account_hint(self, account: str | None) -> str:
        link = self.owner.connect_link(self.subject, account)
        return (
            "To add another Google account, give the person this link to open in their browser (single use, "
            f"10 minutes): {link}"
        )

    def context_for(self, account: str | None) -> ToolContext:
        if account is None and not self.listing:
            return self.owner.nobody  # only the metrics of a refused call land here
        name = self._name(account)
        with self._lock:
            ctx = self._contexts.get(name)
            if ctx is None:
                ctx = self._contexts[name] = self.owner.build_context(self, name)
            return ctx

    def granted_scopes(self, account: str | None) -> frozenset[str] | None:
        key = (account or self.default_name).strip().lower()
        return self.scopes.get(key) if key in dict(self.listing) else None  # no store read: person() read them

    def mailbox_of(self, account: str | None) -> str | None:
        return self._name(account)

    def explain(self, error: GmailError, account: str | None) -> GmailError:
        if not isinstance(error, (AuthError, PermissionDeniedError)):
            return error
        explained = copy.copy(error)
        if isinstance(error, PermissionDeniedError) and not isinstance(error, AuthError):
            explained.hint = (
                "The person's Google grant lacks this access: they sign in again through their client and allow "
                "it on Google's consent screen (or connect the account again)."
            )
        elif grant_is_dead(error):
            # A refresh after Gmail's 401 lands here too, not only in GrantCredentials.get: the next request of
            # this person answers 401, so the client signs in again instead of looping on tool errors.
            name = self._name(account)
            held = self.owner.records.google_account(self.subject, name)
            if held is not None:
                self.owner.grant_died(self.subject, name, held.refresh_token)
            explained.hint = "Do not retry: the client will ask the person to sign in again on its next request."
        return explained

    def warm_up(self) -> None:
        """Nothing ahead of time: a person's clients are built by their first call."""


class PeopleSource:
    """The ContextSource of `--auth oauth`: delegates to the person bound to the current request."""

    def __init__(
        self,
        records: Records,
        client: GoogleWebClient,
        settings: Settings,
        *,
        connect_url: str,
        http_factory: Callable[[], Any] | None = None,
        max_people: int = MAX_PEOPLE,
    ) -> None:
        self.records = records
        self.client = client
        self.settings = settings
        self.connect_url = connect_url
        self.http_factory = http_factory
        self.max_people = max_people
        self._people: OrderedDict[str, PersonMailboxes] = OrderedDict()
        self._lock = threading.Lock()
        nobody = GmailClient(settings, _NoCredentials(), metrics=Metrics())
        self.nobody = ToolContext(gmail=CachedGmail(nobody, metrics=Metrics()), enrich_top_k=0, metrics=Metrics())

    # ---- which person
    def person(self, subject: str, entry: dict[str, Any] | Unread | None = UNREAD) -> PersonMailboxes:
        """The person's mailboxes, rebuilt when their connected accounts changed (one store read, unless the
        caller read their `google` entry already: `entry`)."""
        if isinstance(entry, Unread):
            entry = self.records.store.get(GOOGLE, subject)
        accounts = (entry or {}).get("accounts", [])
        listing = tuple((str(held["email"]).lower(), str(held["google_sub"])) for held in accounts)
        scopes = {str(held["email"]).lower(): frozenset(held.get("scopes") or ()) for held in accounts}
        with self._lock:
            mailboxes = self._people.get(subject)
            if mailboxes is None or mailboxes.listing != listing:
                mailboxes = PersonMailboxes(self, subject, listing)
                self._people[subject] = mailboxes
            mailboxes.scopes = scopes
            self._people.move_to_end(subject)
            while len(self._people) > self.max_people:
                self._people.popitem(last=False)
            return mailboxes

    def forget(self, subject: str) -> None:
        with self._lock:
            self._people.pop(subject, None)

    def bind(self, subject: str | None) -> contextvars.Token[PersonMailboxes | None]:
        return _bound.set(self.person(subject) if subject else None)

    @staticmethod
    def unbind(token: contextvars.Token[PersonMailboxes | None]) -> None:
        _bound.reset(token)

    async def middleware(self, ctx: Any, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
        """The SDK server middleware: every request runs with its person's mailboxes bound."""
        person = person_of(ctx)
        scope = getattr(getattr(ctx, "request", None), "scope", None)
        held = scope.get(SCOPE_KEY) if isinstance(scope, dict) else None
        if person and isinstance(held, PersonMailboxes) and held.subject == person.subject:
            token = _bound.set(held)  # read by the token check of this very request
        else:
            token = self.bind(person.subject if person else None)
        try:
            return await call_next(ctx)
        finally:
            self.unbind(token)

    @staticmethod
    def current() -> PersonMailboxes | None:
        return _bound.get()

    def connect_link(self, subject: str, account: str | None = None) -> str:
        """A link to the connect-another-account page (`protocol/connect_page.py`), with a single-use ticket
        naming the person (pending requests live ten minutes)."""
        ticket = self.records.begin_request({"stage": CONNECT_TICKET, "subject": subject})
        query = {"ticket": ticket, **({"account": account.strip()[:320]} if account and account.strip() else {})}
        return f"{self.connect_url}?{urlencode(query)}"

    # ---- a grant Google refused
    def grant_died(self, subject: str, email: str, refresh_token: str) -> None:
        """Google refused the grant for good: it is dropped from the store (unless a new sign-in replaced it
        meanwhile), so every replica sees it at once. Without their sign-in account the person's next request is
        answered 401 (`needs_sign_in`); a further account is connected again from the link."""
        account = self.records.google_account(subject, email)
        if account is None or account.refresh_token != refresh_token:
            return  # already dropped, or a fresh sign-in saved a new grant since the call began
        self.records.forget_google_account(subject, email)
        whose = "sign-in" if account.google_sub == subject else "connected"
        log.warning(f"google refused the {whose} account's grant: dropped", extra={"person": person_tag(subject)})

    def needs_sign_in(self, subject: str) -> bool:
        """Whether the person holds no live Google grant of their own sign-in account (it died, or was never
        saved): they must sign in again through their client."""
        return not self.person(subject).signed_in

    # ---- building one account's context
    def build_context(self, person: PersonMailboxes, name: str) -> ToolContext:
        subject = person.subject
        credentials = GrantCredentials(
            self.records,
            subject,
            name,
            self.client,
            on_dead=lambda email, token: self.grant_died(subject, email, token),
            http_factory=self.http_factory,
        )
        metrics = Metrics()
        store, owner = self.records.store, f"{person.tag}\0{name.lower()}"  # shared by every replica
        quota = SharedQuotaLimiter(store, owner, self.settings.quota_units_per_s)
        client = GmailClient(self.settings, credentials, metrics=metrics, quota=quota)
        cached = CachedGmail(
            client,
            metrics=metrics,
            search_entries=self.settings.search_cache_entries,
            search_ttl_s=self.settings.search_cache_ttl_s,
            summary_entries=self.settings.summary_cache_entries,
            summary_bytes=int(self.settings.summary_cache_mb * 1024 * 1024),
            prefetch_limit=self.settings.enrich_top_k,
        )
        safety = WriteSafety.from_settings(self.settings)
        safety.audit = PersonAudit(self.settings.audit_log_path, person.tag)
        safety.confirmations = SharedConfirmationBook(store, owner, safety.confirmations.ttl_s)
        safety.send_guard = SharedSendGuard(store, owner, self.settings.send_limit_per_hour)
        book = safety.cleanups
        safety.cleanups = SharedCleanupBook(
            store, owner, call_budget_s=book.call_budget_s, chunks_per_call=book.chunks_per_call, ttl_s=book.ttl_s
        )
        # The filters this server created for this person's account: in memory, never beside the server's own
        # token path (shared by everyone, and no token file of theirs exists). Forgotten, a filter only asks for
        # the person's yes again before it is deleted.
        safety.filters = FilterRecord()
        safety.attach_dir = None  # the server's folder is not the person's: their files come as attach_content
        return ToolContext(
            gmail=cached,
            enrich_top_k=self.settings.enrich_top_k,
            metrics=metrics,
            account=name,
            download_dir=None,  # the server's disk is not the person's: nothing is saved there for them
            thread_max_chars=self.settings.thread_max_chars,
            safety=safety,
        )

    # ---- ContextSource, for whoever is bound
    def _current(self) -> PersonMailboxes:
        bound = _bound.get()
        if bound is None:
            raise AuthError("This request is not signed in.", hint="Sign in through the client, then call again.")
        return bound

    @property
    def names(self) -> list[str]:
        bound = _bound.get()
        return bound.names if bound else []

    @property
    def default_name(self) -> str:
        bound = _bound.get()
        return bound.default_name if bound else ""

    def context_for(self, account: str | None) -> ToolContext:
        bound = _bound.get()
        if bound is None and account is None:
            return self.nobody  # only the metrics of a refused call land here
        return self._current().context_for(account)

    def granted_scopes(self, account: str | None) -> frozenset[str] | None:
        bound = _bound.get()
        return bound.granted_scopes(account) if bound else None

    def mailbox_of(self, account: str | None) -> str | None:
        bound = _bound.get()
        return bound.mailbox_of(account) if bound else None

    def explain(self, error: GmailError, account: str | None) -> GmailError:
        bound = _bound.get()
        return bound.explain(error, account) if bound else error

    def unknown_account_hint(self, account: str | None) -> str:
        bound = _bound.get()
        return bound.unknown_account_hint(account) if bound else ""

    def warm_up(self) -> None:
        """Nothing: each person's clients are built by their first call."""

    def metrics_summary(self) -> dict[str, Any]:
        with self._lock:
            people = list(self._people.values())
        contexts = [ctx for person in people for ctx in person._contexts.values()]
        return {"people": len(people), **Metrics.combined(ctx.metrics for ctx in contexts).summary()}
