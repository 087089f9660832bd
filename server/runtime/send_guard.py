"""The send rate guard: at most N sends per rolling hour per account (10 unless configured).

A person confirming sends one at a time never meets it; a loop (a model told by an email to "reply to everyone",
a client retrying) does, and stops there. Every attempt counts, including one whose outcome is unknown. The
clock is injected, so tests move time instead of waiting.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable

from server.errors import SendLimitError

WINDOW_S = 3600.0


class SendGuard:
    def __init__(self, limit_per_hour: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.limit = limit_per_hour
        self._clock = clock
        self._sent: deque[float] = deque()
        self._lock = threading.Lock()

    def _prune(self, now: float) -> None:
        while self._sent and now - self._sent[0] >= WINDOW_S:
            self._sent.popleft()

    def check(self) -> None:
        """Raises SendLimitError when no send is left in this hour (nothing is used up)."""
        with self._lock:
            self._refuse_if_full(self._clock())

    def take(self) -> None:
        """Uses one send of the hour, or raises SendLimitError."""
        with self._lock:
            now = self._clock()
            self._refuse_if_full(now)
            self._sent.append(now)

    def remaining(self) -> int:
        with self._lock:
            self._prune(self._clock())
            return max(0, self.limit - len(self._sent))

    def _refuse_if_full(self, now: float) -> None:
        self._prune(now)
        if len(self._sent) >= self.limit:
            wait_min = max(1, round((WINDOW_S - (now - self._sent[0])) / 60))
            raise SendLimitError(
                f"{self.limit} emails were already sent in the last hour, the most this server sends "
                f"(GMAIL_MCP_SEND_LIMIT_PER_HOUR). The next send is possible in about {wait_min} min. Nothing was sent."
            )
