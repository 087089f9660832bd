"""Cleanup previews in the shared state store, so a preview made on one replica is run or undone on another.

The remote mode (`--auth oauth`) builds one `SharedCleanupBook` per (person, account) over the deployment's
`StateStore`; stdio and the local HTTP modes keep the in-process `CleanupBook` (`server/runtime/cleanup_book.py`).
Both answer the same calls (`add`, `get`, `claim`, `save`, `release`); `mailboxes.py` decides which one a mailbox
gets.

- A preview is two entries under `cleanup:<sha256 of person, account, preview id and part>`: its ids (written
  once, 8 bytes each in Base85: a preview holds at most 25,000 ids, some 250 KB as stored) and its state (query, action,
  labels, whether the person confirmed, and how far the run and the undo got: a few hundred bytes, rewritten after
  every chunk). A preview of another person or account is a different key, so it is simply unknown there.
- Both live `ttl_s` after their last use (24 h, as in-process); the ids entry is rewritten at most every
  `ttl_s / 4` to keep it alive; the state only under the lease (below), so a read never puts back a cursor
  that a run on another replica moved on since. At most `max_entries` previews per (person, account) are kept:
  an index entry lists them, and the oldest unused one is dropped when a new one comes (best effort between
  replicas racing to add; the lifetime bounds everything anyway).
- A run or undo holds a lease (`add` of a `lease` entry, so exactly one replica gets it; its lifetime is the call
  budget plus a margin, renewed at each chunk). A second call on any replica while it is held is refused with a
  plain message. Claiming re-reads the progress, so a call continued on another replica resumes at the cursor the
  previous call saved after its last chunk, and never sends a chunk twice.

A store that cannot be reached raises `StoreUnavailable` (a transient, retryable tool error).
"""

from __future__ import annotations

import base64
import re
import secrets
import time
import zlib
from collections.abc import Callable
from typing import Any

from server.runtime.cleanup_book import CleanupBook, CleanupPlan

from .store import CLEANUP, StateStore, secret_key

LEASE_MARGIN_S = 120.0  # beyond the call budget: a call's last chunk and answer
PROGRESS = ("confirmed", "label_id", "label_name", "done", "undone")


GMAIL_ID = re.compile(r"[0-9a-f]{16}")  # Gmail's message ids: 16 hex digits, 8 bytes each


def pack_ids(ids: tuple[str, ...]) -> str:
    """The ids as one string: 8 bytes each when all are Gmail's 16 hex digits, else their text compressed;
    Base85 either way (a JSON-safe alphabet)."""
    if all(GMAIL_ID.fullmatch(one) for one in ids):
        return "h" + base64.b85encode(bytes.fromhex("".join(ids))).decode("ascii")
    return "z" + base64.b85encode(zlib.compress(",".join(ids).encode("utf-8"), 9)).decode("ascii")


def unpack_ids(packed: str) -> tuple[str, ...]:
    raw = base64.b85decode(packed[1:])
    if packed.startswith("h"):
        hexed = raw.hex()
        return tuple(hexed[at : at + 16] for at in range(0, len(hexed), 16))
    text = zlib.decompress(raw).decode("utf-8")
    return tuple(text.split(",")) if text else ()


class SharedCleanupBook(CleanupBook):
    """The previews of one person's account in `store`; `owner` names the person and account (as for the
    confirmation codes), so a preview is bound to both. `wall` dates the index (wall-clock seconds)."""

    def __init__(self, store: StateStore, owner: str, *, wall: Callable[[], float] = time.time, **book: Any) -> None:
        super().__init__(**book)
        self.store = store
        self.owner = owner
        self.wall = wall

    def _key(self, preview_id: str, part: str) -> str:
        return secret_key(f"{self.owner}\0{preview_id}\0{part}")

    @property
    def _lease_s(self) -> float:
        return self.call_budget_s + LEASE_MARGIN_S

    def add(self, plan: CleanupPlan) -> CleanupPlan:
        now = self.wall()
        ids = {"ids": pack_ids(plan.ids), "at": now}
        plan.preview_id = plan.preview_id or "cp_" + secrets.token_urlsafe(9)
        while not self.store.add(CLEANUP, self._key(plan.preview_id, "ids"), ids, self.ttl_s):  # a clash: draw again
            plan.preview_id = "cp_" + secrets.token_urlsafe(9)
        self._put_state(plan, ids_at=now)
        self._remember(plan.preview_id, now)
        return plan

    def get(self, preview_id: str) -> CleanupPlan | None:
        state = self.store.get(CLEANUP, self._key(preview_id, "state"))
        ids = self.store.get(CLEANUP, self._key(preview_id, "ids")) if state is not None else None
        if state is None or ids is None:
            return None
        plan = CleanupPlan(
            preview_id=preview_id,
            query=str(state["query"]),
            action=str(state["action"]),
            ids=unpack_ids(str(ids["ids"])),
            add=tuple(state.get("add") or ()),
            remove=tuple(state.get("remove") or ()),
            target_label=state.get("target_label"),
        )
        self._progress(plan, state)
        now = self.wall()
        ids_at = float(ids.get("at", 0))
        if now - ids_at >= self.ttl_s / 4:  # keep the ids alive as long as the preview is used
            ids_at = now
            self.store.put(CLEANUP, self._key(preview_id, "ids"), {"ids": ids["ids"], "at": now}, self.ttl_s)
        self._touch(preview_id, ids_at)
        self._remember(preview_id, now)
        return plan

    def _touch(self, preview_id: str, ids_at: float) -> None:
        """Renews the state's lifetime, only under the lease: progress is written by the call holding it alone, so
        a read on one replica never puts back a cursor that a run on another has moved on since. While a call
        holds the lease there is nothing to do: it writes the state after each chunk."""
        lease = self._key(preview_id, "lease")
        if not self.store.add(CLEANUP, lease, {"at": self.wall()}, self._lease_s):
            return
        try:
            state = self.store.get(CLEANUP, self._key(preview_id, "state"))
            if state is not None:
                self.store.put(CLEANUP, self._key(preview_id, "state"), {**state, "ids_at": ids_at}, self.ttl_s)
        finally:
            self.store.delete(CLEANUP, lease)

    def claim(self, plan: CleanupPlan) -> bool:
        """Takes the lease (one call on one replica at a time) and reads how far the previous call got."""
        lease = self._key(plan.preview_id, "lease")
        if not self.store.add(CLEANUP, lease, {"at": self.wall()}, self._lease_s):
            return False
        state = self.store.get(CLEANUP, self._key(plan.preview_id, "state"))
        if state is not None:
            confirmed = plan.confirmed
            self._progress(plan, state)
            plan.confirmed = plan.confirmed or confirmed  # a yes given in this call counts
        plan.busy = True
        return True

    def save(self, plan: CleanupPlan) -> None:
        """Writes how far the plan got (after each chunk), and renews the lease of the call holding it."""
        state = self.store.get(CLEANUP, self._key(plan.preview_id, "state")) or {}
        self._put_state(plan, ids_at=float(state.get("ids_at", self.wall())))
        if plan.busy:
            self.store.put(CLEANUP, self._key(plan.preview_id, "lease"), {"at": self.wall()}, self._lease_s)

    def release(self, plan: CleanupPlan) -> None:
        plan.busy = False
        self.store.delete(CLEANUP, self._key(plan.preview_id, "lease"))

    def _put_state(self, plan: CleanupPlan, *, ids_at: float) -> None:
        state = {
            "query": plan.query,
            "action": plan.action,
            "add": list(plan.add),
            "remove": list(plan.remove),
            "target_label": plan.target_label,
            "ids_at": ids_at,
            **{name: getattr(plan, name) for name in PROGRESS},
        }
        self.store.put(CLEANUP, self._key(plan.preview_id, "state"), state, self.ttl_s)

    @staticmethod
    def _progress(plan: CleanupPlan, state: dict[str, Any]) -> None:
        plan.confirmed = bool(state.get("confirmed"))
        plan.label_id, plan.label_name = state.get("label_id"), state.get("label_name")
        plan.done, plan.undone = int(state.get("done") or 0), int(state.get("undone") or 0)
        plan.add = tuple(state.get("add") or ())  # the `label` action's target, once found or created

    def _remember(self, preview_id: str, now: float) -> None:
        """The index of this account's previews: the oldest unused one goes when there are too many."""
        key = self._key("", "index")
        index = {k: float(v) for k, v in ((self.store.get(CLEANUP, key) or {}).get("used") or {}).items()}
        index = {k: v for k, v in index.items() if now - v < self.ttl_s}
        index[preview_id] = now
        while len(index) > self.max_entries:
            oldest = min(index, key=index.__getitem__)
            del index[oldest]
            for part in ("ids", "state"):
                self.store.delete(CLEANUP, self._key(oldest, part))
        self.store.put(CLEANUP, key, {"used": index}, self.ttl_s)
