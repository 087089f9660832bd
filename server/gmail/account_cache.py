"""What rarely changes about an account, asked of Gmail once and kept: its own address, send-as list and labels.

The thread tool needs the account's address for every reply context (reply-all leaves the account out), and the
search tool needs the label list only to explain a label filter that matched nothing. Both would cost a request
per call; kept here they cost one per session (labels: one per few minutes, and again whenever a name is not
found, since the person may have just created that label). Thread-safe: tool calls run in worker threads; two
calls that miss at once may both fetch, which is harmless.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from server.errors import PermissionDeniedError
from server.gmail.interface import GmailApi

LABELS_TTL_S = 300.0
PROFILE_TTL_S = 3600.0
SEND_AS_TTL_S = 300.0  # a new alias or signature is seen within minutes


class AccountCache:
    """The account's profile address and label list, fetched through `gmail` on first use and kept a while."""

    def __init__(
        self,
        gmail: GmailApi,
        *,
        clock: Callable[[], float] = time.monotonic,
        labels_ttl_s: float = LABELS_TTL_S,
        profile_ttl_s: float = PROFILE_TTL_S,
    ) -> None:
        self._gmail = gmail
        self._clock = clock
        self._labels_ttl_s = labels_ttl_s
        self._profile_ttl_s = profile_ttl_s
        self._lock = threading.Lock()
        self._address: tuple[float, str | None] | None = None
        self._labels: tuple[float, list[dict[str, Any]]] | None = None
        self._send_as: tuple[float, list[dict[str, Any]] | None] | None = None

    def own_address(self) -> str | None:
        """The account's primary address (users.getProfile); raises the client's GmailError when it fails."""
        with self._lock:
            if self._address is not None and self._clock() - self._address[0] < self._profile_ttl_s:
                return self._address[1]
        address = self._gmail.get_profile().get("emailAddress")
        address = address if isinstance(address, str) and "@" in address else None
        with self._lock:
            self._address = (self._clock(), address)
        return address

    def send_as(self) -> list[dict[str, Any]] | None:
        """settings.sendAs.list's entries (the account's addresses, their names and signatures), kept a few
        minutes; None when the token may not read them (`gmail.compose` alone), also kept so a draft tool does
        not ask again on every call. Raises the client's other GmailErrors."""
        with self._lock:
            kept = self._send_as
        if kept is not None and self._clock() - kept[0] < SEND_AS_TTL_S:
            return kept[1]
        try:
            entries: list[dict[str, Any]] | None = self._gmail.list_send_as()
        except PermissionDeniedError:
            entries = None
        with self._lock:
            self._send_as = (self._clock(), entries)
        return entries

    def labels(self, *, refresh: bool = False) -> list[dict[str, Any]]:
        """labels.list's labels, from the cache unless stale or `refresh`; raises the client's GmailError."""
        with self._lock:
            kept = self._labels
        if not refresh and kept is not None and self._clock() - kept[0] < self._labels_ttl_s:
            return kept[1]
        return self.store_labels(self._gmail.list_labels().get("labels") or [])

    def labels_age_s(self) -> float | None:
        """Seconds since the label list was fetched; None when it never was."""
        with self._lock:
            return None if self._labels is None else self._clock() - self._labels[0]

    def store_labels(self, labels: list[Any]) -> list[dict[str, Any]]:
        """Keeps a label list fetched elsewhere (gmail_list_labels fetches a fresh one anyway)."""
        clean = [label for label in labels if isinstance(label, dict) and isinstance(label.get("id"), str)]
        with self._lock:
            self._labels = (self._clock(), clean)
        return clean
