"""Cold start: prepare the Gmail side of a session before its first question.

The session's start (`notifications/initialized` after the handshake, the first `tools/list` of a 2026-07-28
session, or a first tool call) starts the source's warm-up in a background thread, timed so it does not slow the
`tools/list` answer, and done by the time a client asks its first question: the Google stack imported, the token
refreshed, the connection open (`AccountRegistry.warm_up`).
"""

from __future__ import annotations

import threading
import time

from server.runtime.observability import get_logger
from server.tools import ContextSource

log = get_logger("dispatch")


class WarmUp:
    """Runs `source.warm_up()` once, in a daemon thread, so neither the event loop nor a call waits for it.

    It is due at the earliest time any trigger asks for. Importing the Google stack holds the GIL for a few
    hundred milliseconds; started while the event loop is still answering `tools/list`, it would delay that
    answer (by 1.3 s on a loaded machine), so the triggers leave the answer time to go out first.
    """

    AFTER_INITIALIZED_S = 0.25  # clients list their tools right after the handshake: let that go first
    AFTER_TOOLS_LIST_S = 0.05  # the answer is built; give it time to be written

    def __init__(self, source: ContextSource) -> None:
        self._source = source
        self._due: float | None = None
        self._thread: threading.Thread | None = None
        self._changed = threading.Condition()

    def start(self, delay_s: float = 0.0) -> None:
        with self._changed:
            due = time.monotonic() + delay_s
            if self._due is not None and due >= self._due:
                return
            self._due = due
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="gmail-warm-up", daemon=True)
                self._thread.start()
            self._changed.notify()

    def _run(self) -> None:
        with self._changed:
            while self._due is not None and (wait := self._due - time.monotonic()) > 0:
                self._changed.wait(wait)
        try:
            self._source.warm_up()
        except Exception:  # never let a warm-up problem reach the session: the first call reports it properly
            log.warning("warm-up failed", exc_info=True)
