"""A client-side budget on Gmail quota units, so a burst of tool calls queues here instead of earning 429 storms.

Gmail meters every user at 250 quota units per second (15,000 per minute) and answers excess with 429 or 403
rateLimitExceeded; the retry policy then sleeps 1 s / 2 s / 4 s and may still give up. Spending at most
`DEFAULT_UNITS_PER_S` (well under Gmail's limit) with a burst allowance of `DEFAULT_BURST_UNITS` keeps a
single assistant's bursts (parallel searches, a 50-part metadata batch) under the limit without slowing the
ordinary one-call-at-a-time use at all.

The bucket is a reservation scheme: a caller takes its units at once (the level may go negative) and sleeps
until the debt is paid back by the refill, outside the lock. Callers are therefore served in arrival order and
a request bigger than the burst still goes through (after waiting), never deadlocks.

Costs (https://developers.google.com/gmail/api/reference/quota): messages.list, messages.get and
attachments.get 5 units, threads.get 10, history.list 2, labels.list, labels.get and users.getProfile 1; each part
of a batch costs its own units.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable

DEFAULT_UNITS_PER_S = 100.0  # the default of GMAIL_MCP_QUOTA_UNITS_PER_S (config.py)
DEFAULT_BURST_UNITS = 250.0
UNITS_LIST = 5
UNITS_GET = 5
UNITS_PROFILE = 1
UNITS_HISTORY = 2
UNITS_THREAD = 10
UNITS_LABEL = 1
UNITS_ATTACHMENT = 5


class QuotaLimiter:
    """Token bucket on Gmail quota units; thread-safe, with `clock` and `sleep` injected for tests.

    Args:
        units_per_s: sustained refill rate; 0 or less (or infinity) disables the limiter.
        burst_units: bucket capacity, i.e. what an idle client may spend at once.
    """

    def __init__(
        self,
        units_per_s: float = DEFAULT_UNITS_PER_S,
        burst_units: float = DEFAULT_BURST_UNITS,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.enabled = 0 < units_per_s < math.inf
        self._rate = units_per_s
        self._burst = max(burst_units, 1.0)
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._level = self._burst
        self._updated = clock()

    def reserve(self, units: float) -> float:
        """Takes `units` from the bucket and returns the seconds the caller must wait before spending them."""
        if not self.enabled or units <= 0:
            return 0.0
        with self._lock:
            now = self._clock()
            self._level = min(self._burst, self._level + (now - self._updated) * self._rate)
            self._updated = now
            self._level -= units
            return 0.0 if self._level >= 0 else -self._level / self._rate

    def acquire(self, units: float) -> float:
        """Blocks until `units` may be spent; returns how long it waited (0.0 when the budget had room)."""
        wait = self.reserve(units)
        if wait > 0:
            self._sleep(wait)
        return wait
