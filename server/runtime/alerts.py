"""The design document's alert thresholds: one warning line when a condition starts, not one per call.

- Rate limiting: more than 3 rate-limited answers from Gmail within 5 minutes ("lower the request rate").
- Slow searches: the p95 latency of the searches of the last 5 minutes above 5 s (at least 5 searches, so a
  single slow cold start is not a trend).

Each condition warns once when it becomes true and logs one info line when it clears; while it holds, nothing
more is written. The clock is injected so tests drive the windows without waiting.
"""

from __future__ import annotations

import bisect
import logging
import math
import threading
import time
from collections import deque
from collections.abc import Callable

WINDOW_S = 300.0
RATE_LIMITED_MAX = 3  # more than this many within the window
SEARCH_P95_MAX_MS = 5000.0
SEARCH_MIN_SAMPLES = 5


class _Condition:
    """Edge detection: warns when the condition starts, notes when it ends."""

    def __init__(self, name: str, log: logging.Logger) -> None:
        self.name, self._log = name, log
        self.active = False
        self.started = 0  # how many times it started

    def update(self, active: bool, warning: str, **details: object) -> None:
        if active and not self.active:
            self.started += 1
            self._log.warning(warning, extra={"alert": self.name, **details})
        elif self.active and not active:
            self._log.info("alert cleared", extra={"alert": self.name, **details})
        self.active = active


class AlertMonitor:
    """Watches rate-limited answers and search latencies; thread-safe."""

    def __init__(self, log: logging.Logger, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._rate_limited: deque[float] = deque()
        self._searches: deque[tuple[float, float]] = deque()
        self._latencies: list[float] = []  # the window's latencies, kept sorted: a p95 per search without a sort
        self.rate_limit = _Condition("rate_limited", log)
        self.slow_search = _Condition("search_p95", log)

    def rate_limited(self) -> None:
        with self._lock:
            now = self._clock()
            self._rate_limited.append(now)
            self._prune(now)
            count = len(self._rate_limited)
            self.rate_limit.update(
                count > RATE_LIMITED_MAX,
                "Gmail rate-limited more than 3 requests within 5 minutes: lower the request rate",
                rate_limited_in_window=count,
            )

    def search_finished(self, latency_ms: float) -> None:
        with self._lock:
            now = self._clock()
            self._searches.append((now, latency_ms))
            bisect.insort(self._latencies, latency_ms)
            self._prune(now)
            self._update_rate_limit_clear()
            latencies = self._latencies
            if len(latencies) < SEARCH_MIN_SAMPLES:
                return
            p95 = latencies[max(0, math.ceil(0.95 * len(latencies)) - 1)]
            self.slow_search.update(
                p95 > SEARCH_P95_MAX_MS,
                "search p95 latency above 5 s over the last 5 minutes: Gmail or the network is slow",
                p95_ms=round(p95, 1),
                searches_in_window=len(latencies),
            )

    def _update_rate_limit_clear(self) -> None:
        if self.rate_limit.active and len(self._rate_limited) <= RATE_LIMITED_MAX:
            self.rate_limit.update(False, "", rate_limited_in_window=len(self._rate_limited))

    def _prune(self, now: float) -> None:
        while self._rate_limited and now - self._rate_limited[0] > WINDOW_S:
            self._rate_limited.popleft()
        while self._searches and now - self._searches[0][0] > WINDOW_S:
            _, latency_ms = self._searches.popleft()
            del self._latencies[bisect.bisect_left(self._latencies, latency_ms)]
