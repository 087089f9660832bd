"""Gmail's per-user quota, metered: at most `limit` units in any 60 seconds, beyond that 429 rateLimitExceeded.

Gmail meters 15,000 units per user per minute (Gmail API usage limits page; `gmail-api-wire.md`, "Quota and
limits"), each call at its own price (messages.list/get 5, batchModify 50, labels 1, ...; a batch part costs
its own). Off (no limit) unless set: `POST /_emulator/quota-limit {"units_per_minute": 15000}` or
`app.quota.set_limit(...)`. The window is a sliding minute on an injectable clock.
"""

from __future__ import annotations

import re
import threading
import time
from collections import deque
from collections.abc import Callable

GMAIL_UNITS_PER_MINUTE = 15_000
WINDOW_S = 60.0
_PRICES: tuple[tuple[str, str, int], ...] = (
    ("POST", r"messages/batchModify$", 50),
    ("POST", r"messages/batchDelete$", 50),
    ("POST", r"(messages|drafts)/send$", 100),
    ("POST", r"messages/[^/]+/(modify|trash|untrash)$", 5),
    ("POST", r"drafts$", 10),
    ("PUT", r"drafts/[^/]+$", 15),
    ("GET", r"threads(/[^/]+)?$", 10),
    ("GET", r"history$", 2),
    ("GET", r"profile$", 1),
    ("", r"labels(/[^/]+)?$", 1),
    ("", r"settings/", 1),
)
_COMPILED = [(method, re.compile(pattern), units) for method, pattern, units in _PRICES]


def units_of(method: str, rest: str) -> int:
    """The quota units of one call, `rest` being the path after `users/{user}/`; 5 for anything else."""
    for wanted, pattern, units in _COMPILED:
        if (not wanted or wanted == method.upper()) and pattern.search(rest):
            return units
    return 5


class QuotaMeter:
    """Units spent per user in the last minute. Thread-safe."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self.limit: int | None = None
        self._spent: dict[str, deque[tuple[float, int]]] = {}
        self.refused = 0

    def set_limit(self, units_per_minute: int | None) -> None:
        if units_per_minute is not None and units_per_minute < 1:
            raise ValueError("units_per_minute must be >= 1 or null")
        with self._lock:
            self.limit = units_per_minute
            self._spent.clear()

    def spend(self, user: str, units: int) -> bool:
        """Records the call's units; False (and nothing recorded) when they would exceed the limit."""
        with self._lock:
            if self.limit is None:
                return True
            now = self._clock()
            spent = self._spent.setdefault(user, deque())
            while spent and spent[0][0] <= now - WINDOW_S:
                spent.popleft()
            if sum(units for _at, units in spent) + units > self.limit:
                self.refused += 1
                return False
            spent.append((now, units))
            return True
