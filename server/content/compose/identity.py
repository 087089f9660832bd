"""Who a draft is from: the account's send-as identities (Gmail's `settings.sendAs`) and which one a draft uses. Pure.

Gmail lists the primary address and every custom "from" alias, each with its display name and its signature
(HTML). An alias may be used only once its `verificationStatus` is `accepted` (the field applies to custom aliases
only; the primary has none). A new draft is from the default identity (`isDefault`, else the primary); a reply is
from the address the original was sent to when that is one of the account's, as Gmail's own reply does: the
original's From when the person wrote it, else To, Cc, then Delivered-To (mail that reached the alias by Bcc).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from email.parser import BytesHeaderParser
from email.policy import compat32
from email.utils import getaddresses
from typing import Any

from server.content.compose.addresses import Recipient

REPLY_HEADERS = ("From", "To", "Cc", "Delivered-To")
MAX_HEADER_VALUES = 50  # per header name: a hostile message may repeat one thousands of times


@dataclass(frozen=True)
class SendAs:
    email: str
    display_name: str = ""
    signature_html: str = ""
    is_primary: bool = False
    is_default: bool = False

    @property
    def key(self) -> str:
        return self.email.lower()

    @property
    def sender(self) -> Recipient:
        """The From mailbox: the identity's display name and address."""
        return Recipient(" ".join(self.display_name.split()), self.email)


def usable_identities(entries: Iterable[Any]) -> tuple[SendAs, ...]:
    """The send-as entries a draft may be from (the primary, and aliases whose verification was accepted), in
    Gmail's order; entries without an address, and pending or rejected aliases, are left out."""
    found: list[SendAs] = []
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        address = entry.get("sendAsEmail")
        if not isinstance(address, str) or "@" not in address:
            continue
        primary = entry.get("isPrimary") is True
        if not primary and entry.get("verificationStatus") != "accepted":
            continue
        signature = entry.get("signature")
        name = entry.get("displayName")
        found.append(
            SendAs(
                email=address.strip(),
                display_name=name if isinstance(name, str) else "",
                signature_html=signature if isinstance(signature, str) else "",
                is_primary=primary,
                is_default=entry.get("isDefault") is True,
            )
        )
    return tuple(found)


def default_identity(identities: Sequence[SendAs]) -> SendAs | None:
    """The identity Gmail writes new mail from: the default one, else the primary, else the first."""
    for wanted in (lambda item: item.is_default, lambda item: item.is_primary, lambda _item: True):
        for identity in identities:
            if wanted(identity):
                return identity
    return None


def find_identity(identities: Sequence[SendAs], address: str) -> SendAs | None:
    """The identity with this address (case-insensitive; a "Name <addr>" form is accepted), or None."""
    parsed = getaddresses([address])
    wanted = (parsed[0][1] if parsed and parsed[0][1] else address).strip().lower()
    return next((identity for identity in identities if identity.key == wanted), None)


def reply_identity(original_raw: bytes, identities: Sequence[SendAs]) -> SendAs | None:
    """The identity a reply to `original_raw` is written from: the first of the account's addresses named in the
    original's From (the person's own message), To, Cc or Delivered-To headers; None when none is."""
    by_key = {identity.key: identity for identity in identities}
    if not by_key:
        return None
    try:
        headers = BytesHeaderParser(policy=compat32).parsebytes(original_raw)
    except Exception:  # a header block the parser cannot take: no choice, the default applies
        return None
    for name in REPLY_HEADERS:
        values = [str(value) for value in (headers.get_all(name) or [])[:MAX_HEADER_VALUES]]
        for _display, address in getaddresses(values):
            found = by_key.get(address.strip().lower())
            if found is not None:
                return found
    return None


def describe(identities: Sequence[SendAs]) -> str:
    """The addresses as a person reads them in a list: "a@x.com (default), b@y.com"."""
    return ", ".join(identity.email + (" (default)" if identity.is_default else "") for identity in identities)
