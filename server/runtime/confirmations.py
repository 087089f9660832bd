"""Send confirmations: single-use codes for clients that cannot ask the person, and held questions for those that can.

A code is issued only after the draft's summary was shown; it is bound to the draft id AND the digest of the
draft's bytes, expires after a few minutes (the clock is injected), works once, and is void once the draft
changed. Wrong codes are counted: after a few, every outstanding code is voided, so guessing cannot pay.

Held questions serve the 2026-07-28 protocol, where asking the person is a round trip through the client
(`InputRequiredResult`): the pending send waits here under an unguessable token carried in the request state,
taken once, and expires like a code.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from server.errors import ConfirmationError

T = TypeVar("T")
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I/L: a person may read it aloud
CODE_LENGTH = 8
MAX_WRONG_CODES = 5  # wrong codes before every outstanding code is voided
MAX_OUTSTANDING = 50


@dataclass
class _Code:
    draft_id: str
    digest: str
    expires_at: float
    used: bool = False


@dataclass(frozen=True)
class Issued:
    code: str
    expires_in_s: int


def normalize_code(code: str) -> str:
    return "".join(char for char in code.upper() if char.isalnum())


def _new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def display_code(code: str) -> str:
    return f"{code[:4]}-{code[4:]}"


class ConfirmationBook:
    """Codes and held questions of one account. Thread-safe."""

    def __init__(self, ttl_s: float = 300.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl_s = ttl_s
        self._clock = clock
        self._lock = threading.Lock()
        self._codes: dict[str, _Code] = {}
        self._wrong = 0
        self._held: dict[str, tuple[float, object]] = {}

    # -- codes ---------------------------------------------------------------------------------------------------

    def issue(self, draft_id: str, digest: str) -> Issued:
        with self._lock:
            self._forget_expired()
            if len(self._codes) >= MAX_OUTSTANDING:
                oldest = min(self._codes, key=lambda key: self._codes[key].expires_at)
                del self._codes[oldest]
            code = _new_code()
            while code in self._codes:
                code = _new_code()
            self._codes[code] = _Code(draft_id, digest, self._clock() + self.ttl_s)
            return Issued(display_code(code), int(self.ttl_s))

    def redeem(self, code: str, draft_id: str, digest: str) -> str:
        """Uses the code up for this draft in this exact state; returns its key (for `restore`).

        Raises ConfirmationError saying why it cannot be used (unknown, used, expired, other draft, draft changed).
        """
        key = normalize_code(code)
        with self._lock:
            entry = self._codes.get(key)
            if entry is None:
                self._wrong += 1
                if self._wrong >= MAX_WRONG_CODES:
                    self._codes.clear()
                    self._wrong = 0
                    raise ConfirmationError(
                        "That confirmation code is not valid, and too many wrong codes were tried: every "
                        "outstanding code is now void. Nothing was sent."
                    )
                raise ConfirmationError("That confirmation code is not valid. Nothing was sent.")
            if self._clock() >= entry.expires_at:
                del self._codes[key]
                raise ConfirmationError("That confirmation code has expired. Nothing was sent.")
            if entry.used:
                raise ConfirmationError("That confirmation code was already used; a code works once. Nothing was sent.")
            if entry.draft_id != draft_id:
                raise ConfirmationError("That confirmation code belongs to another draft. Nothing was sent.")
            entry.used = True
            if entry.digest != digest:
                raise ConfirmationError(
                    "The draft changed after the person confirmed it, so that confirmation no longer applies. "
                    "Nothing was sent."
                )
            self._wrong = 0
            return key

    def restore(self, key: str) -> None:
        """Makes a redeemed code usable again: the send it was for certainly did not happen."""
        with self._lock:
            entry = self._codes.get(key)
            if entry is not None and self._clock() < entry.expires_at:
                entry.used = False

    def _forget_expired(self) -> None:
        now = self._clock()
        self._codes = {key: entry for key, entry in self._codes.items() if entry.expires_at > now}
        self._held = {key: held for key, held in self._held.items() if held[0] > now}

    # -- held questions (2026-07-28 input-required round trips) ---------------------------------------------------

    def hold(self, item: object, fingerprint: str = "") -> str:
        """Keeps `item` under a new token; `fingerprint` (what the person was asked) matters to shared books only."""
        with self._lock:
            self._forget_expired()
            if len(self._held) >= MAX_OUTSTANDING:
                oldest = min(self._held, key=lambda key: self._held[key][0])
                del self._held[oldest]
            token = secrets.token_urlsafe(24)
            self._held[token] = (self._clock() + self.ttl_s, item)
            return token

    def claim(self, token: str) -> tuple[object | None, str | None]:
        """The held question under `token`, once: (the item held in this process, or None; the fingerprint it was
        held with where another process may answer it, else None). (None, None): unknown, taken or expired."""
        with self._lock:
            held = self._held.pop(token, None)
            if held is None or self._clock() >= held[0]:
                return None, None
            return held[1], None

    def take(self, token: str, kind: type[T]) -> T | None:
        """The held item, once; None when unknown, already taken, expired, or not a `kind`."""
        with self._lock:
            held = self._held.pop(token, None)
            if held is None or self._clock() >= held[0] or not isinstance(held[1], kind):
                return None
            return held[1]
