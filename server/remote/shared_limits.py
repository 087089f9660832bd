"""The send limit and the Gmail quota budget of one person's account, counted in the shared state store.

In the remote mode every replica serving a person's account counts against the same counters, so N replicas
do not multiply the limits (stdio and the local HTTP modes keep the in-process `SendGuard` and `QuotaLimiter`;
which one a mailbox gets is decided where its context is wired, `mailboxes.py`). Both are atomic counters with
expiry (`StateStore.incr`: `INCRBY` with the window's end set once in Redis, one write transaction in SQLite):

- `SharedSendGuard`: sends per (person, account) in a fixed hour that starts with the first send
  (`GMAIL_MCP_SEND_LIMIT_PER_HOUR`). A send takes one (`incr` by 1) and gives it back if the hour was already
  full, so two replicas racing for the last send of the hour cannot both have it. A store that cannot be reached
  raises `StoreUnavailable` (transient, retryable): nothing is sent uncounted.
- `SharedQuotaLimiter`: Gmail quota units per (person, account) in fixed windows of `burst / rate` seconds, at
  most `burst` units each (the sustained rate of `GMAIL_MCP_QUOTA_UNITS_PER_S`, the same burst as in-process).
  A caller past the window's budget waits for the next window plus the excess at the sustained rate. A replica
  takes a lease of a tenth of the window's budget (or what a request needs, if more) and spends it locally, so a
  warm read costs a store round trip for about one Gmail request in ten; the window's budget is still never
  exceeded, only reached early by up to one lease per replica. The budget is a courtesy to Gmail (which enforces
  its own): with the store unreachable it falls back to the process's own bucket rather than failing reads.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable

from server.errors import SendLimitError
from server.gmail.quota import DEFAULT_BURST_UNITS, QuotaLimiter
from server.runtime.send_guard import WINDOW_S, SendGuard

from .store import QUOTA, SENT, StateStore, StoreUnavailable, secret_key

LEASE_SHARE = 0.1  # a replica takes a tenth of a window's budget at once and spends it without the store


class SharedSendGuard(SendGuard):
    """`SendGuard`'s calls over a counter in `store`; `owner` names the person and account."""

    def __init__(self, store: StateStore, owner: str, limit_per_hour: int) -> None:
        super().__init__(limit_per_hour)
        self.store = store
        self._key = secret_key(f"sends\0{owner}")

    def _count(self, amount: int) -> int:
        return self.store.incr(SENT, self._key, amount, WINDOW_S)

    def check(self) -> None:
        if self._count(0) >= self.limit:
            self._refuse()

    def take(self) -> None:
        if self._count(1) > self.limit:
            self._count(-1)  # the hour was full: this attempt is not counted
            self._refuse()

    def remaining(self) -> int:
        return max(0, self.limit - self._count(0))

    def _refuse(self) -> None:
        raise SendLimitError(
            f"{self.limit} emails were already sent within the hour, the most this server sends "
            "(GMAIL_MCP_SEND_LIMIT_PER_HOUR, counted across every replica). Nothing was sent."
        )


class SharedQuotaLimiter(QuotaLimiter):
    """`QuotaLimiter.reserve` over counters in `store` (see the module docstring); `owner` names the person and
    account."""

    def __init__(
        self,
        store: StateStore,
        owner: str,
        units_per_s: float,
        burst_units: float = DEFAULT_BURST_UNITS,
        *,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        super().__init__(units_per_s, burst_units, clock=clock, sleep=sleep)
        self.store = store
        self._owner = secret_key(f"quota\0{owner}")
        self.window_s = self._burst / self._rate if self.enabled else 1.0
        self.lease_units = max(1, math.floor(self._burst * LEASE_SHARE))
        self._lease_lock = threading.Lock()
        self._lease_window, self._lease_left = -1, 0

    def reserve(self, units: float) -> float:
        if not self.enabled or units <= 0:
            return 0.0
        needed = math.ceil(units)
        now = self._clock()
        window = math.floor(now / self.window_s)
        with self._lease_lock:
            if window == self._lease_window and self._lease_left >= needed:
                self._lease_left -= needed  # spent from this replica's lease: no store round trip
                return 0.0
            taken = max(needed, self.lease_units)
            try:
                used = self.store.incr(QUOTA, f"{self._owner}:{window}", taken, 2 * self.window_s)
            except StoreUnavailable:
                return super().reserve(units)  # the budget is a courtesy: this process's own bucket meanwhile
            self._lease_window, self._lease_left = window, taken - needed
        if used <= self._burst:
            return 0.0
        return (window + 1) * self.window_s - now + (used - self._burst) / self._rate
