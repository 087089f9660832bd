"""The retry policy of the design document, as a pure decision plus one loop with `sleep` injected.

429 and 403 rate-limit reasons: 3 retries after 1 s, 2 s, 4 s. 5xx, timeouts, connection errors: 2 retries after
1 s, 2 s. 400 failedPrecondition: 1 retry after 1 s (Gmail answers it now and then for a moment; when it persists
the account itself is refused, and more retries only delay saying so). Everything else (401, 404, 400, ...) is
answered at once. A server-provided Retry-After raises a wait, capped so one tool call never stalls for minutes.
Each wait is stretched by a random fraction of itself (up to `jitter`), so clients that failed together do not all
come back at the same instant; the random source is passed in, so the decision stays a pure function in tests.
`scale` shrinks every wait for fault-injection suites.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from server.errors import AccountRefusedError, GmailError, RateLimitedError, TransientError

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    rate_limit_delays_s: tuple[float, ...] = (1.0, 2.0, 4.0)
    transient_delays_s: tuple[float, ...] = (1.0, 2.0)
    refused_delays_s: tuple[float, ...] = (1.0,)
    max_wait_s: float = 30.0
    scale: float = 1.0
    jitter: float = 0.25

    def delay_for(self, error: GmailError, retries_done: int, rand: Callable[[], float] = lambda: 0.0) -> float | None:
        """Seconds to wait before retry number `retries_done + 1`, or None when the error is final.

        `rand()` in [0, 1) stretches the wait by up to `jitter` of itself: 1 s becomes 1-1.25 s.
        """
        if isinstance(error, RateLimitedError):
            delays = self.rate_limit_delays_s
        elif isinstance(error, TransientError):
            delays = self.transient_delays_s
        elif isinstance(error, AccountRefusedError):
            delays = self.refused_delays_s
        else:
            return None
        if retries_done >= len(delays):
            return None
        if error.retry_after_s is not None and error.retry_after_s > self.max_wait_s:
            return None  # Gmail asks for longer than one tool call should stall: answer now, saying how long
        wait = delays[retries_done]
        if error.retry_after_s is not None:
            wait = max(wait, error.retry_after_s)
        return min(wait * (1.0 + self.jitter * rand()), self.max_wait_s) * self.scale


def run_with_retries(
    attempt: Callable[[], T],
    *,
    policy: RetryPolicy,
    sleep: Callable[[float], None],
    rand: Callable[[], float] = lambda: 0.0,
    on_retry: Callable[[GmailError, int, float], None] | None = None,
) -> T:
    """Calls `attempt` until it succeeds or raises an error the policy calls final.

    `attempt` must raise only GmailError (the client maps Google's exceptions before they get here). The final
    error carries the number of retries made in `retry_count`. Single calls and batches share this one loop.
    """
    retries_done = 0
    while True:
        try:
            return attempt()
        except GmailError as error:
            delay = policy.delay_for(error, retries_done, rand)
            if delay is None:
                error.retry_count = retries_done
                raise
            retries_done += 1
            if on_retry is not None:
                on_retry(error, retries_done, delay)
            sleep(delay)
