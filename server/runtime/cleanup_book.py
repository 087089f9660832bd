"""The cleanups one account previewed: what each will do to exactly which messages, and how far it got.

A preview (`gmail_cleanup_preview`) keeps the ids it counted, so the run acts on exactly what the person saw and
agreed to, never on a fresh search that may have grown since. The run moves a cursor through those ids chunk by
chunk, so a call that ends (its time budget spent, or the client gone) is continued by the next call with the same
`preview_id` from where it stopped, and no chunk is sent twice. Undo moves its own cursor the same way.

State lives in memory, per account, for `ttl_s` after its last use, and at most `max_entries` previews (the
oldest unused one goes first); a restart forgets unfinished cleanups (their messages keep the dated label, which
the person can search for and change in Gmail). The remote mode keeps them in the shared state store instead
(`server/remote/shared_cleanups.py`, issue 23), so any replica runs or undoes a preview made on another: there
`save` writes the progress after each chunk; here the plan itself is the record and `save` has nothing to do.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, timezone

DEFAULT_CALL_BUDGET_S = 120.0  # well under the 300 s after which claude.ai stops a tool call
DEFAULT_TTL_S = 24 * 3600.0
MAX_ENTRIES = 20


def utc_today() -> date:
    return datetime.now(timezone.utc).date()


@dataclass
class CleanupPlan:
    """One previewed cleanup. `done`/`undone` count the ids already handled, in order."""

    preview_id: str
    query: str
    action: str
    ids: tuple[str, ...]
    add: tuple[str, ...] = ()  # label ids the action adds (besides the dated label)
    remove: tuple[str, ...] = ()  # label ids it removes
    target_label: str | None = None  # the `label` action's label name, for the text
    confirmed: bool = False
    label_id: str | None = None  # the dated label, once created
    label_name: str | None = None
    done: int = 0
    undone: int = 0
    used_at: float = 0.0
    busy: bool = field(default=False, repr=False)  # a call is working on it right now

    @property
    def count(self) -> int:
        return len(self.ids)

    @property
    def finished(self) -> bool:
        return self.done >= self.count


class CleanupBook:
    """Previews of one account, thread-safe. `clock` orders and expires them; `today` dates the labels."""

    def __init__(
        self,
        *,
        call_budget_s: float = DEFAULT_CALL_BUDGET_S,
        chunks_per_call: int = 0,
        ttl_s: float = DEFAULT_TTL_S,
        max_entries: int = MAX_ENTRIES,
        clock: Callable[[], float] = time.monotonic,
        today: Callable[[], date] = utc_today,
    ) -> None:
        self.call_budget_s = call_budget_s
        self.chunks_per_call = chunks_per_call  # 0: no limit; a test's way to end a call after N chunks
        self.ttl_s = ttl_s
        self.max_entries = max_entries
        self.clock = clock
        self.today = today
        self._lock = threading.Lock()
        self._plans: dict[str, CleanupPlan] = {}

    def add(self, plan: CleanupPlan) -> CleanupPlan:
        with self._lock:
            self._forget_expired()
            while len(self._plans) >= self.max_entries:
                oldest = min(self._plans.values(), key=lambda known: (known.busy, known.used_at))
                del self._plans[oldest.preview_id]
            plan.preview_id = plan.preview_id or "cp_" + secrets.token_urlsafe(9)
            plan.used_at = self.clock()
            self._plans[plan.preview_id] = plan
            return plan

    def get(self, preview_id: str) -> CleanupPlan | None:
        with self._lock:
            self._forget_expired()
            plan = self._plans.get(preview_id)
            if plan is not None:
                plan.used_at = self.clock()
            return plan

    def claim(self, plan: CleanupPlan) -> bool:
        """Marks the plan as being worked on; False when another call already is (it must not run twice)."""
        with self._lock:
            if plan.busy:
                return False
            plan.busy = True
            return True

    def save(self, plan: CleanupPlan) -> None:
        """Records how far `plan` got (called after each chunk); in memory the plan is its own record."""

    def release(self, plan: CleanupPlan) -> None:
        with self._lock:
            plan.busy = False
            plan.used_at = self.clock()

    def _forget_expired(self) -> None:
        now = self.clock()
        self._plans = {key: plan for key, plan in self._plans.items() if plan.busy or now - plan.used_at < self.ttl_s}
