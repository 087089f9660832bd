"""Confirmation codes in the shared state store, so a code issued on one replica is redeemed on another.

The remote mode (`--auth oauth`) builds one `SharedConfirmationBook` per (person, account) over the deployment's
`StateStore` (SQLite alone, Redis or Valkey shared by every replica); stdio and the local HTTP modes keep the
in-process `ConfirmationBook` (`server/runtime/confirmations.py`). Both answer the same calls (`issue`, `redeem`,
`restore`); which one a mailbox gets is decided where its context is wired (`mailboxes.py`).

- A code lives under `confirm:<sha256 of person, account and code>` (never the code itself), valued with the
  draft id and the digest of the draft's bytes it was issued for, and the confirmation lifetime as the entry's
  TTL (the same lifetime as in-process: `GMAIL_MCP_CONFIRMATION_TTL_S`, 5 minutes by default).
- Redeeming takes the entry (`take`: `GETDEL` in Redis, one write transaction in SQLite): among replicas asked
  at the same moment, exactly one gets it; the others find nothing. A code of another person or another account
  is a different key, so it is simply unknown there.
- A code for another draft is put back (it was not used); a draft that changed after the yes spends the code, as
  in-process. `restore` puts a redeemed code back for what is left of its lifetime when the send certainly did
  not happen (Gmail refused it).
- Wrong codes are counted per (person, account) in a counter with the code lifetime as its window: after
  `MAX_WRONG_CODES`, no code is accepted until the window ends, so guessing cannot pay on any replica.

Held questions of 2026-07-28 clients (`hold`, `claim`): the pending call itself stays in the process that asked,
and the store keeps `confirm:<sha256 of person, account and token>` with the fingerprint of what the person was
asked (the tool and the question), for the same lifetime. The answer may come back to any replica: `claim` takes
the store's entry (once, among every replica) and answers the local call if this process holds it, else only the
fingerprint; the caller then runs the call's first phase again and goes on only if the question is the same one
(`protocol/confirm.py`), so a draft that changed meanwhile is never sent on an old yes.

A store that cannot be reached raises `StoreUnavailable` (a transient, retryable tool error): nothing is sent.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from server.errors import ConfirmationError
from server.runtime.confirmations import (
    MAX_WRONG_CODES,
    ConfirmationBook,
    Issued,
    _new_code,
    display_code,
    normalize_code,
)

from .store import CONFIRM, RATE, StateStore, secret_key

MAX_REMEMBERED = 50  # redeemed codes this process can still restore (a send in flight each)


class SharedConfirmationBook(ConfirmationBook):
    """The codes of one person's account in `store`; `owner` names the person and account (stable, e.g. the
    person's tag and the account's address), so a code is bound to both."""

    def __init__(
        self, store: StateStore, owner: str, ttl_s: float = 300.0, clock: Callable[[], float] = time.time
    ) -> None:
        super().__init__(ttl_s, clock)
        self.store = store
        self.owner = owner
        self._redeemed: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._redeemed_lock = threading.Lock()

    def _key(self, code: str) -> str:
        return secret_key(f"{self.owner}\0{normalize_code(code)}")

    def issue(self, draft_id: str, digest: str) -> Issued:
        value = {"draft_id": draft_id, "digest": digest, "expires_at": self._clock() + self.ttl_s}
        code = _new_code()
        while not self.store.add(CONFIRM, self._key(code), value, self.ttl_s):  # a clash: draw again
            code = _new_code()
        return Issued(display_code(code), int(self.ttl_s))

    def redeem(self, code: str, draft_id: str, digest: str) -> str:
        wrong_key = secret_key(f"wrong-codes\0{self.owner}")
        if self.store.incr(RATE, wrong_key, 0, self.ttl_s) >= MAX_WRONG_CODES:
            raise ConfirmationError(
                "Too many wrong confirmation codes were tried for this mailbox: no code is accepted for the next "
                f"{max(1, round(self.ttl_s / 60))} minutes. Nothing was sent."
            )
        key = self._key(code)
        entry = self.store.take(CONFIRM, key)
        if entry is None:
            self.store.incr(RATE, wrong_key, 1, self.ttl_s)
            raise ConfirmationError(
                "That confirmation code is not valid: unknown, already used (a code works once) or expired. "
                "Nothing was sent."
            )
        if entry.get("draft_id") != draft_id:
            self._put_back(key, entry)  # not used: it still confirms its own draft
            raise ConfirmationError("That confirmation code belongs to another draft. Nothing was sent.")
        if entry.get("digest") != digest:
            raise ConfirmationError(
                "The draft changed after the person confirmed it, so that confirmation no longer applies. "
                "Nothing was sent."
            )
        with self._redeemed_lock:
            self._redeemed[key] = entry
            while len(self._redeemed) > MAX_REMEMBERED:
                self._redeemed.popitem(last=False)
        return key

    def restore(self, key: str) -> None:
        with self._redeemed_lock:
            entry = self._redeemed.pop(key, None)
        if entry is not None:
            self._put_back(key, entry)

    def hold(self, item: object, fingerprint: str = "") -> str:
        token = super().hold(item)
        self.store.put(CONFIRM, self._held_key(token), {"fingerprint": fingerprint}, self.ttl_s)
        return token

    def claim(self, token: str) -> tuple[object | None, str | None]:
        entry = self.store.take(CONFIRM, self._held_key(token))
        local, _ = super().claim(token)
        if entry is None:  # answered already (here or on another replica), or expired
            return None, None
        return local, str(entry.get("fingerprint") or "") or None

    def _held_key(self, token: str) -> str:
        return secret_key(f"held\0{self.owner}\0{token}")

    def _put_back(self, key: str, entry: dict[str, Any]) -> None:
        left = float(entry.get("expires_at", 0)) - self._clock()
        if left > 0:
            self.store.add(CONFIRM, key, entry, left)
