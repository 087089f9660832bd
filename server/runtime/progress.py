"""Progress notifications from a handler that runs in a worker thread, without the handler knowing MCP.

`protocol/calls.py` installs a reporter for the duration of a tool call (`reporting`); the handler calls
`report(done, total, message)`, which does nothing when the client sent no progress token or no reporter is set.
The reporter lives in a context variable, which the worker thread inherits (as `runtime/cost.py`'s meter does).
A failed notification never fails the work it reports on.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar

Reporter = Callable[[float, float | None, str | None], None]
_reporter: ContextVar[Reporter | None] = ContextVar("gmail_mcp_progress", default=None)


@contextlib.contextmanager
def reporting(reporter: Reporter | None) -> Iterator[None]:
    token = _reporter.set(reporter)
    try:
        yield
    finally:
        _reporter.reset(token)


def report(done: float, total: float | None = None, message: str | None = None) -> None:
    reporter = _reporter.get()
    if reporter is None:
        return
    with contextlib.suppress(Exception):
        reporter(done, total, message)
