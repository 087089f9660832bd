"""Caches that are never stale: search pages validated by Gmail's history, message summaries that never change.

`CachedGmail` wraps one account's `GmailClient` behind the same `GmailApi` interface the tools use, so the tools
do not know it is there, and the client stays the only module doing I/O (this one decides when I/O is needed).

- Message summaries (`get_messages_metadata` with the summary profile: From/Subject/Date, snippet, date,
  thread): a message's headers and snippet never change, so an entry is valid for as long as it is kept. Labels,
  which do change, are deliberately not part of it; they come fresh from Gmail (history records, get_message).
  Bounded by entries and bytes, least recently used out first.
- Search pages (`list_messages`, keyed by query, page size, page token): kept with an anchor, a mailbox
  history id known *before* the page was asked for, so every later change has a larger id. A repeat asks
  `history.list` since the anchor (1 request, 2 quota units) instead of trusting a TTL: no change that could
  alter the page (`gmail/history.py` decides, conservatively) serves the page from memory; otherwise the search
  runs again, fetching in parallel the summaries of messages the history says just arrived or changed labels,
  so the repeat still costs two round trips. Pages also expire (5 minutes; 1 minute for `newer_than:`-style
  queries, which the clock changes without any history record), and the cache holds at most 10 (the spec's LRU).

Anchors come from the account's latest known mailbox history id: the warm-up's `users.getProfile`, every
history check, and the change feed. A check never moves an anchor past the newest record it actually saw
(Gmail may report a current `historyId` ahead of records not yet listed). A page stored before any history id
is known is not cached. Writes (when write tools exist) call `invalidate_searches()` on top of this.
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from server.errors import GmailError
from server.gmail import history
from server.gmail.batch_parts import ListAlongside
from server.gmail.interface import CachedClient
from server.gmail.summary_cache import SUMMARY_BYTES, SUMMARY_ENTRIES, SummaryCache
from server.gmail.write_endpoints import WRITE_METHODS
from server.runtime import cost
from server.runtime.observability import Metrics, get_logger

log = get_logger("cache")

# Headers that never change: who, what, when, and the sender checks of the trust envelope (Reply-To, and the
# verdicts Gmail recorded on arrival).
SUMMARY_HEADERS = ("From", "Subject", "Date", "Reply-To", "Authentication-Results")
SUMMARY_FIELDS = "id,threadId,snippet,internalDate,payload/headers"
SEARCH_ENTRIES = 10
SEARCH_TTL_S = 300.0
RELATIVE_DATE_TTL_S = 60.0
LOOKAHEAD = 3  # ids past a full page, listed in the same batch as its summaries


def _profile(headers: Sequence[str], fields: str | None) -> str:
    return f"{','.join(headers)}|{fields or ''}"


_SUMMARY_PROFILE = _profile(SUMMARY_HEADERS, SUMMARY_FIELDS)
# Client methods served as they are: reads this layer does not cache. A write added to the client must not be
# listed here: wrap it in CachedGmail and call invalidate_searches() after it (a test enforces the choice).
# Reads of what the caches do not keep: a thread (its labels change), an attachment (large, read once), labels
# (counts change with every message), and the write tools' reads (a draft, the drafts list, the send-as list).
PASS_THROUGH = frozenset(
    {"get_message", "get_thread", "get_attachment", "list_labels", "get_labels"}
    | {"get_draft", "list_drafts", "list_send_as"}
    | {"search_people", "people_refused", "list_filters", "create_filter", "delete_filter"}  # no mail changes
)


@dataclass
class CachedPage:
    page: dict[str, Any]
    anchor: int
    ids: frozenset[str]
    expires: float
    lookahead: tuple[str, ...] = ()  # the ids right after the page, when known


class SearchCache:
    """Search pages by (query, page size, page token, spam/trash); LRU with expiry. Thread-safe."""

    def __init__(self, max_entries: int, ttl_s: float, clock: Callable[[], float]) -> None:
        self.max_entries, self.ttl_s, self._clock = max_entries, ttl_s, clock
        self._entries: OrderedDict[tuple[Any, ...], CachedPage] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[Any, ...]) -> CachedPage | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or entry.expires <= self._clock():
                self._entries.pop(key, None)
                return None
            self._entries.move_to_end(key)
            return entry

    def put(self, key: tuple[Any, ...], page: dict[str, Any], anchor: int, *, time_relative: bool) -> bool:
        if self.max_entries <= 0:
            return False
        ttl = min(self.ttl_s, RELATIVE_DATE_TTL_S) if time_relative else self.ttl_s
        ids = frozenset(ref["id"] for ref in page.get("messages") or [] if isinstance(ref, dict) and "id" in ref)
        with self._lock:
            self._entries[key] = CachedPage(page, anchor, ids, self._clock() + ttl)
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
        return True

    def set_lookahead(self, key: tuple[Any, ...], page: dict[str, Any]) -> None:
        ids = tuple(ref["id"] for ref in page.get("messages") or [] if isinstance(ref, dict) and ref.get("id"))
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                entry.lookahead = ids

    def drop(self, key: tuple[Any, ...]) -> None:
        with self._lock:
            self._entries.pop(key, None)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


class CachedGmail:
    """One account's Gmail with caches; the tools' `ctx.gmail`. See the module docstring."""

    def __init__(
        self,
        client: CachedClient,
        *,
        metrics: Metrics | None = None,
        search_entries: int = SEARCH_ENTRIES,
        search_ttl_s: float = SEARCH_TTL_S,
        summary_entries: int = SUMMARY_ENTRIES,
        summary_bytes: int = SUMMARY_BYTES,
        prefetch_limit: int = 10,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._client = client
        self._metrics = metrics or Metrics()
        self.searches = SearchCache(search_entries, search_ttl_s, clock)
        self.summaries = SummaryCache(summary_entries, summary_bytes)
        self._prefetch_limit = prefetch_limit
        self._known_lock = threading.Lock()
        self._known_history_id: int | None = None

    def __getattr__(self, name: str) -> Any:
        # Endpoints this layer leaves alone (see PASS_THROUGH) are the client's own.
        return getattr(self._client, name)

    @property
    def known_history_id(self) -> int | None:
        with self._known_lock:
            return self._known_history_id

    # -- the mailbox's position ------------------------------------------------------------------------------------

    def _learn(self, history_id: Any) -> None:
        try:
            value = int(history_id)
        except (TypeError, ValueError):
            return
        with self._known_lock:
            self._known_history_id = max(value, self._known_history_id or 0)

    def warm_up(self) -> dict[str, Any]:
        profile = self._client.warm_up()
        self._learn(profile.get("historyId"))
        return profile

    def get_profile(self) -> dict[str, Any]:
        profile = self._client.get_profile()
        self._learn(profile.get("historyId"))
        return profile

    def list_history(self, **params: Any) -> dict[str, Any]:
        """history.list as the client answers it; what it shows updates the caches (a deleted message's summary
        is dropped; the mailbox's position is learnt)."""
        page = self._client.list_history(**params)
        self._learn(page.get("historyId"))
        deleted = [change.id for change in history.summarize(0, [page]).changes.values() if change.deleted]
        if deleted:
            self.summaries.forget(deleted)
        return page

    def invalidate_searches(self) -> None:
        """Forgets every cached search page (after a write made through this server)."""
        self.searches.clear()

    # -- message summaries ---------------------------------------------------------------------------------------

    def get_messages_metadata(
        self, message_ids: Sequence[str], *, headers: Sequence[str], fields: str | None = None
    ) -> dict[str, dict[str, Any] | GmailError]:
        if fields and ("labelIds" in fields or "historyId" in fields):  # they change: never kept (the writes' reads)
            return self._client.get_messages_metadata(message_ids, headers=headers, fields=fields)
        profile = _profile(headers, fields)
        found: dict[str, dict[str, Any] | GmailError] = {}
        missing: list[str] = []
        for message_id in dict.fromkeys(message_ids):
            cached = self.summaries.get(message_id, profile)
            if cached is None:
                missing.append(message_id)
            else:
                found[message_id] = cached
        if found:
            cost.record(cache_hits=len(found))
        self._metrics.record_cache("summary", hits=len(found), misses=len(missing))
        if missing:
            alongside = self._pending_lookahead() if profile == _SUMMARY_PROFILE else None
            fetched = self._client.get_messages_metadata(missing, headers=headers, fields=fields, alongside=alongside)
            for message_id, resource in fetched.items():
                if isinstance(resource, dict):
                    self.summaries.put(message_id, profile, resource)
            found.update(fetched)
        return {message_id: found[message_id] for message_id in dict.fromkeys(message_ids) if message_id in found}

    def _pending_lookahead(self) -> ListAlongside | None:
        """The look-ahead a search page of this call asked for (see list_messages), to ride in this batch."""
        spent = cost.current()
        wanted = spent.memo.pop("lookahead", None) if spent is not None else None
        if wanted is None:
            return None
        key, next_token = wanted
        return ListAlongside(
            query=key[0],
            page_token=next_token,
            max_results=LOOKAHEAD,
            include_spam_trash=key[3],
            label_ids=key[4],
            deliver=lambda page: self.searches.set_lookahead(key, page),
        )

    def _prefetch_summaries(self, message_ids: list[str]) -> None:
        """A speculative fetch into the summary cache (alongside a search that will probably need them)."""
        try:
            self.get_messages_metadata(message_ids, headers=SUMMARY_HEADERS, fields=SUMMARY_FIELDS)
        except Exception:  # a speculative fetch: the search fetches what it still lacks itself
            log.warning("prefetch of message summaries failed", exc_info=True)

    # -- search pages --------------------------------------------------------------------------------------------

    def list_messages(
        self,
        *,
        query: str,
        max_results: int,
        page_token: str | None = None,
        include_spam_trash: bool = False,
        label_ids: Sequence[str] = (),
    ) -> dict[str, Any]:
        key = (query, max_results, page_token or "", include_spam_trash, tuple(label_ids))
        seen_as = " ".join([query, *(f"label:{i}" for i in label_ids)])  # labelIds filter as label: terms do
        shown = include_spam_trash or bool(history.HIDDEN_LABELS.intersection(label_ids))
        anchor = self.known_history_id  # read before asking Gmail: every later change has a larger id
        side: Callable[[], None] | None = None
        entry = self.searches.get(key)
        if entry is not None:
            delta = self._history_since(entry.anchor)
            if delta is not None and not history.affects_search(
                delta, query=seen_as, result_ids=entry.ids, paged=bool(page_token), include_spam_trash=shown
            ):
                entry.anchor = max(entry.anchor, delta.last_record_id or entry.anchor)
                cost.record(cache_hits=1)
                self._metrics.record_cache("search", hits=1)
                return dict(entry.page)
            self._metrics.record_cache("search", refreshed=1)
            if delta is not None:
                anchor = delta.history_id  # answered before the fresh search is sent
                needed = self._uncached(self._likely_needed(entry, delta, seen_as, shown))
                side = (lambda: self._prefetch_summaries(needed)) if needed else None
            else:  # Gmail could not say (history expired, most likely): learn where the mailbox is meanwhile
                anchor, side = None, self._relearn_position
        else:
            self._metrics.record_cache("search", misses=1)

        def fetch() -> dict[str, Any]:
            return self._client.list_messages(
                query=query, max_results=max_results, page_token=page_token, include_spam_trash=key[3], label_ids=key[4]
            )

        page = self._alongside(fetch, side)
        if anchor is None:
            self.searches.drop(key)  # nothing known to validate it by: the next identical search runs afresh
        elif self.searches.put(key, page, anchor, time_relative=history.is_time_relative(query)):
            spent = cost.current()
            if page.get("nextPageToken") and spent is not None:
                # A full page: list the next few ids in the batch that fetches its summaries (same round trip),
                # so if listed messages leave later, the ones moving up can be fetched alongside the new list.
                spent.memo["lookahead"] = (key, page["nextPageToken"])
        return page

    def _likely_needed(
        self, entry: CachedPage, delta: history.HistoryDelta, query: str, include_spam_trash: bool
    ) -> list[str]:
        """Summaries the fresh page will probably need: messages the history says may newly match, and, for
        each listed message among the enriched top that changed (and may leave), the next one on the old page
        (it moves up into the top)."""
        arriving = history.likely_new_matches(
            delta, query=query, limit=self._prefetch_limit, include_spam_trash=include_spam_trash
        )
        order = [ref["id"] for ref in entry.page.get("messages") or [] if isinstance(ref, dict) and ref.get("id")]
        order += [message_id for message_id in entry.lookahead if message_id not in order]
        top = order[: self._prefetch_limit]
        leaving = sum(1 for message_id in top if message_id in delta.changes)
        moving_up = order[self._prefetch_limit : self._prefetch_limit + leaving]
        return list(dict.fromkeys(arriving + moving_up))[: self._prefetch_limit + leaving]

    def _uncached(self, message_ids: list[str]) -> list[str]:
        return [message_id for message_id in message_ids if self.summaries.get(message_id, _SUMMARY_PROFILE) is None]

    def _history_since(self, anchor: int) -> history.HistoryDelta | None:
        """Every change since `anchor` (one history.list page, at most), or None when Gmail cannot say: the
        anchor is older than its history (404), or the check failed. Asked once per tool call and anchor."""
        memo = spent.memo if (spent := cost.current()) is not None else {}
        if ("history", anchor) in memo:
            return cast("history.HistoryDelta | None", memo["history", anchor])  # what this method memoized
        cost.record(history_checks=1)
        self._metrics.record_history_check()
        try:
            page = self.list_history(start_history_id=anchor, max_results=500)
        except GmailError as error:
            log.info("cached search not validated: running it again", extra={"category": error.code})
            delta = None
        else:
            delta = history.summarize(anchor, [page], complete=not page.get("nextPageToken"))
        memo["history", anchor] = delta
        return delta

    def _relearn_position(self) -> None:
        """users.getProfile, so the next searches get a fresh anchor (the page fetched meanwhile cannot use it:
        the profile may be answered after the page)."""
        try:
            self.get_profile()
        except Exception:
            log.info("could not learn the mailbox's history id", exc_info=True)

    @staticmethod
    def _alongside(main: Callable[[], dict[str, Any]], side: Callable[[], None] | None) -> dict[str, Any]:
        """Runs `main` here and `side` in another thread at the same time (same call context, so its requests
        count for this call); returns `main`'s answer once both are done."""
        if side is None:
            return main()
        worker = threading.Thread(target=contextvars.copy_context().run, args=(side,), daemon=True)
        worker.start()
        try:
            return main()
        finally:
            worker.join()


def _then_forget_searches(name: str) -> Callable[..., Any]:
    def write(self: CachedGmail, *args: Any, **kwargs: Any) -> Any:
        try:
            return getattr(self._client, name)(*args, **kwargs)
        finally:  # even a failed write may have changed the mailbox (an unknown outcome)
            self.invalidate_searches()

    write.__name__ = write.__qualname__ = name
    return write


for _write in WRITE_METHODS:  # the client's writes (gmail/write_endpoints.py), each followed by invalidation
    setattr(CachedGmail, _write, _then_forget_searches(_write))
