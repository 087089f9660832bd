"""How many calls to put in one batch request: start safe, shrink on a rate-limit answer, grow back slowly.

Gmail runs the parts of a batch concurrently and answers 429 "Too many concurrent requests for user" to the
parts beyond a per-user limit it does not publish; other Gmail clients settled on 10 per batch after failures at
25 and 100, though Google allows 100 and advises 50. So a batch starts at `start` parts; a batch in which some
parts were rate-limited shrinks the size to what went through (at least `floor`, at most half), and only the
failed parts are sent again; `grow_after` batches in a row that went through at full size grow it by `step`,
up to `ceiling` (additive increase, multiplicative decrease). Enrichment of the default top 10 is one batch
either way; a configured larger enrichment, or a change feed's metadata, is where the size matters.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

START = 10
FLOOR = 2
CEILING = 50  # Google's advice for one batch
GROW_AFTER = 5
STEP = 2


@dataclass
class AdaptiveBatchSize:
    """Thread-safe; one per account (the concurrency limit is per user)."""

    start: int = START
    floor: int = FLOOR
    ceiling: int = CEILING
    grow_after: int = GROW_AFTER
    step: int = STEP
    _size: int = field(init=False)
    _clean_runs: int = field(init=False, default=0)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def __post_init__(self) -> None:
        if not 1 <= self.floor <= self.start <= self.ceiling:
            raise ValueError("batch sizes must satisfy 1 <= floor <= start <= ceiling")
        self._size = self.start

    @property
    def size(self) -> int:
        with self._lock:
            return self._size

    def record(self, *, sent: int, rate_limited: int) -> None:
        """Learns from one batch answer: `sent` parts, of which `rate_limited` came back 429/403 rate limits."""
        with self._lock:
            if rate_limited:
                went_through = sent - rate_limited
                self._size = max(self.floor, min(self._size // 2, went_through) if went_through else self.floor)
                self._clean_runs = 0
            elif sent >= self._size:
                self._clean_runs += 1
                if self._clean_runs >= self.grow_after:
                    self._size = min(self.ceiling, self._size + self.step)
                    self._clean_runs = 0
