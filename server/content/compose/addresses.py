"""Recipient addresses for outgoing mail: parsed, validated, de-duplicated, and told apart from the person's own.

A model passes addresses as text (`"Zoë Martin <zoe@example.com>"`, `zoe@example.com`, or several separated by
commas); every one is checked before anything is built, so a typo fails with a message naming the bad entry
instead of becoming a bounce or, worse, a header injection. Domains in Unicode are written as IDNA (punycode);
a Unicode local part is refused (Gmail's API does not send SMTPUTF8 mail from the API reliably). Display names
stay Unicode here: the MIME builder encodes them per RFC 2047.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from email import errors as email_errors
from email.policy import default as default_policy

MAX_ADDRESS_CHARS = 254  # RFC 5321: a forward-path holds at most 256 octets including the angle brackets
MAX_LOCAL_CHARS = 64
_LABEL = re.compile(r"^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$")
_TLD = re.compile(r"^(?:[A-Za-z]{2,63}|xn--[A-Za-z0-9-]{1,59})$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# Defects the parser reports for harmless list punctuation (`a@b.com,, c@d.com`).
_HARMLESS = ("empty element", "no content")


class AddressError(ValueError):
    """An address that cannot be used, with a message that names it."""


@dataclass(frozen=True)
class Recipient:
    """One mailbox: an optional display name and the address (domain in ASCII)."""

    name: str
    email: str

    @property
    def key(self) -> str:
        return self.email.lower()

    def __str__(self) -> str:
        return format_recipient(self)


def format_recipient(recipient: Recipient) -> str:
    """`Name <addr>` with the name quoted when it needs to be, or the bare address."""
    if not recipient.name:
        return recipient.email
    name = recipient.name
    if re.search(r'[()<>\[\]:;@\\,."]', name):
        name = '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return f"{name} <{recipient.email}>"


def _ascii_domain(domain: str, entry: str) -> str:
    domain = domain.strip().rstrip(".")
    if not domain.isascii():
        try:
            domain = domain.encode("idna").decode("ascii")
        except UnicodeError:
            raise AddressError(f"{entry!r}: the domain {domain!r} is not a valid internationalized domain") from None
    labels = domain.split(".")
    if len(labels) < 2 or not all(_LABEL.match(label) for label in labels) or not _TLD.match(labels[-1]):
        raise AddressError(f"{entry!r}: {domain!r} is not a valid mail domain (expected something like example.com)")
    return domain.lower()


def parse_recipients(entries: Iterable[str]) -> list[Recipient]:
    """Every address in `entries` (each may hold several, comma separated), in order, duplicates dropped.

    Raises AddressError naming the first entry that is not a usable address.
    """
    found: list[Recipient] = []
    for entry in entries:
        if _CONTROL.search(entry):
            raise AddressError(f"{entry[:80]!r}: control characters (line breaks, tabs) are not allowed in addresses")
        if not entry.strip():
            continue
        header = default_policy.header_factory("To", entry)
        problems = [
            defect
            for defect in header.defects
            if not any(mark in str(defect) for mark in _HARMLESS)
            and not isinstance(defect, email_errors.ObsoleteHeaderDefect)
        ]
        if problems or not header.addresses:
            detail = (
                "a non-ASCII local part"
                if any(isinstance(d, email_errors.NonASCIILocalPartDefect) for d in problems)
                else "not an address like name@example.com"
            )
            raise AddressError(f"{entry[:200]!r}: {detail}")
        if len(header.groups) != len([g for g in header.groups if g.display_name is None]):
            raise AddressError(f"{entry[:200]!r}: group syntax (name: a@b, c@d;) is not accepted; list the addresses")
        for address in header.addresses:
            found.append(_checked(address.display_name or "", address.username, address.domain, entry))
    return dedupe(found)


def _checked(name: str, local: str, domain: str, entry: str) -> Recipient:
    if not local or not domain:
        raise AddressError(f"{entry[:200]!r}: not an address like name@example.com")
    if not local.isascii():
        raise AddressError(f"{entry[:200]!r}: a non-ASCII local part ({local!r}) cannot be sent through the API")
    if len(local) > MAX_LOCAL_CHARS:
        raise AddressError(f"{entry[:200]!r}: the part before @ is longer than {MAX_LOCAL_CHARS} characters")
    if '"' in local or " " in local:
        raise AddressError(f"{entry[:200]!r}: quoted local parts are not accepted")
    email = f"{local}@{_ascii_domain(domain, entry[:200])}"
    if len(email) > MAX_ADDRESS_CHARS:
        raise AddressError(f"{entry[:200]!r}: longer than {MAX_ADDRESS_CHARS} characters")
    return Recipient(name=" ".join(name.split())[:200], email=email)


def dedupe(recipients: Iterable[Recipient], *, exclude: Iterable[Recipient] = ()) -> list[Recipient]:
    """First occurrence of each address (case-insensitive), minus any in `exclude`."""
    seen = {recipient.key for recipient in exclude}
    kept = []
    for recipient in recipients:
        if recipient.key not in seen:
            seen.add(recipient.key)
            kept.append(recipient)
    return kept


def lenient_recipients(header_value: str | None) -> list[Recipient]:
    """Addresses of a received header (From, To, Cc, Reply-To), skipping entries that are not valid addresses.

    Mail from the outside world is what it is: one broken entry must not stop a reply to the others.
    """
    if not header_value:
        return []
    kept = []
    for entry in split_address_list(header_value):
        try:
            kept.extend(parse_recipients([entry]))
        except AddressError:
            continue
    return dedupe(kept)


def split_address_list(value: str) -> list[str]:
    """Splits a header's address list on commas outside quotes and angle brackets."""
    parts, current, quoted, angle, escaped = [], [], False, 0, False
    for char in _CONTROL.sub(" ", value):
        if escaped:
            current.append(char)
            escaped = False
            continue
        if char == "\\" and quoted:
            escaped = True
        elif char == '"':
            quoted = not quoted
        elif char == "<" and not quoted:
            angle += 1
        elif char == ">" and not quoted and angle:
            angle -= 1
        elif char == "," and not quoted and not angle:
            parts.append("".join(current))
            current = []
            continue
        current.append(char)
    parts.append("".join(current))
    return [part.strip() for part in parts if part.strip()]
