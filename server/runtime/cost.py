"""What one tool call cost: Gmail requests, quota units, retries, token requests, cache hits, history checks.

The dispatcher opens a `CallCost` around each call (`measuring()`); the Gmail client and the caches add to
whichever one is current. "Current" is a context variable: `anyio.to_thread.run_sync` copies the context into
the worker thread that runs the handler, and the caches copy it into the threads they start, so every request
made on behalf of a call lands in that call's account, and requests made outside any call (the warm-up after
`initialize`) land in none. The answer's `_meta` carries `as_meta()`, so a person (and the benchmarks) can see
what each answer cost; nothing of it goes into the text the model reads.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

COST_META_KEY = "gmail-mcp/cost"


@dataclass
class CallCost:
    """Counters of one tool call; thread-safe (a call may fetch in two threads at once)."""

    requests: int = 0  # HTTP requests to the Gmail API; a batch is one request
    quota_units: int = 0  # Gmail's units: each part of a batch costs its own
    retries: int = 0  # requests that repeated a failed one
    token_requests: int = 0  # access token refreshes made for this call
    cache_hits: int = 0  # answers (a search page, a message's metadata) served without asking Gmail again
    history_checks: int = 0  # history.list requests made to validate cached answers
    # What the caches learnt during this call (one history check answers for every cached page of the call).
    memo: dict[Any, Any] = field(default_factory=dict, repr=False, compare=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add_request(self, units: int, *, retry: bool = False) -> None:
        with self._lock:
            self.requests += 1
            self.quota_units += units
            self.retries += retry

    def add(self, **counts: int) -> None:
        with self._lock:
            for name, count in counts.items():
                setattr(self, name, getattr(self, name) + count)

    def as_meta(self) -> dict[str, int]:
        with self._lock:
            return {
                "requests": self.requests,
                "quota_units": self.quota_units,
                "retries": self.retries,
                "token_requests": self.token_requests,
                "cache_hits": self.cache_hits,
                "history_checks": self.history_checks,
            }


_CURRENT: ContextVar[CallCost | None] = ContextVar("gmail_mcp_call_cost", default=None)


def current() -> CallCost | None:
    """The account of the tool call this code runs for, or None outside any call."""
    return _CURRENT.get()


@contextmanager
def measuring() -> Iterator[CallCost]:
    """Opens a fresh account for the code run inside (and the worker threads it hands its context to)."""
    cost = CallCost()
    token = _CURRENT.set(cost)
    try:
        yield cost
    finally:
        _CURRENT.reset(token)


def record_request(units: int, *, retry: bool = False) -> None:
    cost = _CURRENT.get()
    if cost is not None:
        cost.add_request(units, retry=retry)


def record(**counts: int) -> None:
    """Adds to named counters of the current call's account (no-op outside a call)."""
    cost = _CURRENT.get()
    if cost is not None:
        cost.add(**counts)
