"""Signed page tokens, as opaque to a client as Gmail's: a position and the request they belong to, under an HMAC.

messages.list and history.list both page with them; a token from another request, or a forged one, is refused.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets

from .errors import invalid_argument


class PageTokens:
    def __init__(self, key: bytes | None = None) -> None:
        self._key = key or secrets.token_bytes(32)

    def mint(self, position: int, fingerprint: str) -> str:
        payload = json.dumps([position, fingerprint]).encode("ascii")
        return base64.urlsafe_b64encode(self._mac(payload) + payload).decode("ascii").rstrip("=")

    def read(self, token: str, fingerprint: str, *, other: str = "request") -> int:
        """The position a token carries; `invalid_argument` for a forged token or one of another `other`."""
        try:
            blob = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
            mac, payload = blob[:16], blob[16:]
            if not hmac.compare_digest(mac, self._mac(payload)):
                raise ValueError("bad mac")
            position, bound_to = json.loads(payload)
        except (ValueError, TypeError):
            raise invalid_argument("Invalid pageToken") from None
        if bound_to != fingerprint:
            raise invalid_argument(f"Invalid pageToken: it belongs to a different {other}")
        return int(position)

    def _mac(self, payload: bytes) -> bytes:
        return hmac.new(self._key, payload, hashlib.sha256).digest()[:16]
