"""Gmail message resources -> clean, bounded data for an LLM. Pure: no I/O anywhere (fetching is the client's job).

Entry points (the tools layer calls exactly these):
    parse_message(resource)      `full`, `metadata` and `minimal` resources of users.messages.get
    parse_raw_message(resource)  `raw` resources (base64url RFC 2822), same output
    parse_addresses, header_value, to_iso_date, slice_body, strip_quoted_reply

Everything is total: any input shape gives a result, never an exception. The work is split over small modules:
`mime/walk.py` (part tree and body choice), `mime/part.py` (part payloads), `mime/raw.py` (RFC 2822 bytes to a
payload tree), `mime/tnef.py` (winmail.dat), `text/charsets.py` (bytes and RFC 2047/2231), `text/html_text.py`
(HTML to text), `text/calendar_text.py` (invites), `text/tidy.py` (final clean-up), `text/body_slice.py` (bounds),
`text/quotes.py` (quoted reply history).
"""

from __future__ import annotations

import calendar
import html
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from email.utils import parsedate_tz
from functools import lru_cache

from server.content.mime.part import first_headers
from server.content.mime.raw import payload_from_bytes
from server.content.mime.walk import AttachmentInfo, walk_payload
from server.content.text.body_slice import BodySlice, slice_body, strip_quoted_reply
from server.content.text.charsets import decode_header_value, lenient_b64
from server.content.text.html_visibility import HiddenSegment

__all__ = [
    "Address",
    "AttachmentInfo",
    "BodySlice",
    "HiddenSegment",
    "ParsedMessage",
    "header_value",
    "parse_addresses",
    "parse_message",
    "parse_raw_message",
    "slice_body",
    "strip_quoted_reply",
    "to_iso_date",
]


@dataclass(frozen=True)
class Address:
    """One mailbox: display name (decoded, None when absent) and address."""

    name: str | None
    email: str


@dataclass(frozen=True)
class ParsedMessage:
    """A message ready for an LLM; body fields are None for `metadata` and `minimal` resources."""

    id: str
    thread_id: str
    label_ids: tuple[str, ...]
    snippet: str
    internal_date_ms: int | None
    size_estimate: int | None
    headers: dict[str, str]
    from_: tuple[Address, ...]
    to: tuple[Address, ...]
    cc: tuple[Address, ...]
    bcc: tuple[Address, ...]
    reply_to: tuple[Address, ...]
    subject: str | None
    date_raw: str | None
    date_iso: str | None
    body_text: str | None
    body_html: str | None
    body_source: str
    attachments: tuple[AttachmentInfo, ...]
    notes: tuple[str, ...]
    hidden_text: tuple[HiddenSegment, ...] = ()  # HTML text a reader would not see (left out of body_text)
    hidden_chars: int = 0
    link_hosts: tuple[str, ...] = ()  # hosts the HTML body's links point to


def parse_message(
    resource: dict, *, attachment_bytes: Mapping[str, bytes] | None = None, include_hidden: bool = False
) -> ParsedMessage:
    """Parse a users.messages.get resource in `full`, `metadata` or `minimal` format.

    The body is read only when the payload carries one (`body` or `parts`): `metadata` and `minimal` resources
    get body_text None. A resource holding `raw` and no payload is handed to `parse_raw_message`.

    Args:
        resource: The decoded JSON resource (any shape is tolerated).
        attachment_bytes: Optional bytes of attachments fetched separately, by attachment id. Only a winmail.dat
            (Outlook TNEF) is read from them: `full` resources never carry its bytes, and its text may be the
            only body the message has.
        include_hidden: Keep HTML text a reader would not see in body_text, marked "[hidden] ... [/hidden]".

    Returns:
        The parsed message; never raises.
    """
    resource = resource if isinstance(resource, dict) else {}
    if "payload" not in resource and isinstance(resource.get("raw"), str):
        return parse_raw_message(resource, include_hidden)
    try:
        return _parse(
            resource, resource.get("payload"), attachment_bytes=attachment_bytes, include_hidden=include_hidden
        )
    except Exception as exc:  # the walk is total by design (property-tested); this is the last line of defence
        return _parse(resource, None, note=f"message could not be fully parsed ({type(exc).__name__})")


def parse_raw_message(resource: dict, include_hidden: bool = False) -> ParsedMessage:
    """Parse a users.messages.get resource in `raw` format (base64url RFC 2822 in `raw`).

    Args:
        resource: The decoded JSON resource.
        include_hidden: As for `parse_message`.

    Returns:
        The same output as `parse_message` on the equivalent `full` resource; never raises.
    """
    resource = resource if isinstance(resource, dict) else {}
    raw = resource.get("raw")
    try:
        payload = payload_from_bytes(lenient_b64(raw)) if isinstance(raw, str) else None
        return _parse(resource, payload, include_hidden=include_hidden)
    except Exception as exc:  # see parse_message
        return _parse(resource, None, note=f"message could not be fully parsed ({type(exc).__name__})")


def _parse(
    resource: dict,
    payload: object,
    note: str | None = None,
    attachment_bytes: Mapping[str, bytes] | None = None,
    include_hidden: bool = False,
) -> ParsedMessage:
    payload_dict = payload if isinstance(payload, dict) else {}
    raw_headers = first_headers(payload_dict.get("headers"))
    headers = {name: decode_header_value(value) for name, value in raw_headers.items()}
    date_raw = headers.get("date") or None
    internal = _int(resource.get("internalDate"))
    notes: list[str] = [note] if note else []
    body_text = body_html = None
    body_source = "none"
    attachments: tuple[AttachmentInfo, ...] = ()
    walk = None
    if note is None and ("body" in payload_dict or "parts" in payload_dict):
        walk = walk_payload(payload_dict, attachment_bytes, include_hidden=include_hidden)
        body_text, body_html, body_source = walk.text, walk.html, walk.source
        attachments = tuple(walk.attachments)
        notes += walk.notes
    snippet = resource.get("snippet")
    labels = resource.get("labelIds")
    return ParsedMessage(
        id=_str(resource.get("id")),
        thread_id=_str(resource.get("threadId")),
        label_ids=tuple(label for label in labels if isinstance(label, str)) if isinstance(labels, list) else (),
        snippet=html.unescape(snippet) if isinstance(snippet, str) else "",
        internal_date_ms=internal,
        size_estimate=_int(resource.get("sizeEstimate")),
        headers=headers,
        from_=parse_addresses(raw_headers.get("from", "")),
        to=parse_addresses(raw_headers.get("to", "")),
        cc=parse_addresses(raw_headers.get("cc", "")),
        bcc=parse_addresses(raw_headers.get("bcc", "")),
        reply_to=parse_addresses(raw_headers.get("reply-to", "")),
        subject=headers.get("subject") if "subject" in headers else None,
        date_raw=date_raw,
        date_iso=to_iso_date(date_raw, internal),
        body_text=body_text,
        body_html=body_html,
        body_source=body_source,
        attachments=attachments,
        notes=tuple(notes),
        hidden_text=walk.hidden if walk else (),
        hidden_chars=walk.hidden_chars if walk else 0,
        link_hosts=walk.link_hosts if walk else (),
    )


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


def _int(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdecimal() and len(value.strip()) < 20:  # isdigit: int("¹") raised
        return int(value.strip())
    return None


def header_value(headers: list[dict], name: str) -> str | None:
    """The decoded value of the first header called `name` (case-insensitive).

    Args:
        headers: Gmail's `payload.headers` list.
        name: The header name, e.g. "Subject".

    Returns:
        The RFC 2047-decoded, whitespace-collapsed value, or None when absent.
    """
    if not isinstance(name, str):
        return None
    value = first_headers(headers).get(name.strip().lower())
    return decode_header_value(value) if value is not None else None


# -- dates -----------------------------------------------------------------------------------------------------


def to_iso_date(date_header: str | None, internal_date_ms: int | str | None) -> str | None:
    """ISO 8601 with offset from a Date header, falling back to Gmail's internalDate (epoch ms) in UTC.

    Args:
        date_header: The Date header as sent (RFC 2822, obsolete forms and zone names tolerated).
        internal_date_ms: Gmail's internalDate, as int or digit string.

    Returns:
        e.g. "2024-03-05T10:00:00+01:00", or None when neither gives a valid date.
    """
    if isinstance(date_header, str) and date_header.strip():
        iso = _common_iso(date_header) or _parsed_iso(date_header)
        if iso is not None:
            return iso
    millis = _int(internal_date_ms)
    if millis is None:
        return None
    try:
        return datetime.fromtimestamp(millis / 1000, tz=timezone.utc).isoformat(timespec="seconds")
    except (ValueError, OverflowError, OSError):
        return None


def _parsed_iso(date_header: str) -> str | None:
    """The Date header read as `parsedate_tz` reads it, as ISO 8601 text; None when it is not a valid date."""
    try:
        parts = _common_date(date_header) or parsedate_tz(" ".join(date_header.split()))
    except (TypeError, ValueError, IndexError):
        return None
    try:
        return datetime(*parts[:6], tzinfo=_zone(parts[9] or 0)).isoformat() if parts else None  # type: ignore[misc]
    except (ValueError, TypeError, OverflowError):
        return None


@lru_cache(maxsize=256)  # a mailbox's senders write a few dozen offsets; a timezone is immutable
def _zone(offset: int) -> timezone:
    return timezone(timedelta(seconds=offset)) if abs(offset) < 86400 else timezone.utc


def _common_iso(value: str) -> str | None:
    """`_parsed_iso` of the common form in ASCII, written from its digits (a test compares them); None for a
    date it would reject or any other form, which `_parsed_iso` then decides."""
    match = _COMMON_DATE.fullmatch(value.strip()) if value.isascii() else None
    if match is None:
        return None
    day, month_name, year, hour, minute, second, sign, zone_hours, zone_minutes = match.groups()
    month = _MONTHS.get(month_name.lower())
    if month is None or hour > "23" or minute > "59" or second > "59":  # two ASCII digits compare as numbers
        return None
    last_day = 28 if month == 2 and not calendar.isleap(int(year)) else _MONTH_DAYS[month]
    if not 1 <= int(day) <= last_day:
        return None
    return f"{year}-{month:02d}-{day:0>2}T{hour}:{minute}:{second}{_offset_text(sign, zone_hours, zone_minutes)}"


@lru_cache(maxsize=256)
def _offset_text(sign: str, hours: str, minutes: str) -> str:
    """`+08:00` for `+0800`, as datetime writes the zone `_parsed_iso` builds (`+0099` is `+01:39`)."""
    offset = (int(hours) * 3600 + int(minutes) * 60) * (-1 if sign == "-" else 1)
    return datetime(2000, 1, 1, tzinfo=_zone(offset)).isoformat()[19:]


# What nearly every mailer writes: `Sun, 22 Nov 2026 23:59:31 -0800`. Read directly, it gives the tuple
# `parsedate_tz` would (a test compares them), at a third of the cost; anything else goes to `parsedate_tz`.
_COMMON_DATE = re.compile(
    r"(?:[A-Za-z]{3}, )?(\d{1,2}) ([A-Za-z]{3}) ([1-9]\d{3}) (\d{2}):(\d{2}):(\d{2}) ([+-])(\d{2})(\d{2})"
)
_MONTH_NAMES = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MONTHS = {name: number for number, name in enumerate(_MONTH_NAMES, 1)}
_MONTH_DAYS = (0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _common_date(value: str) -> tuple[int, ...] | None:
    match = _COMMON_DATE.fullmatch(value.strip())
    month = _MONTHS.get(match.group(2).lower()) if match else None
    if match is None or month is None:
        return None
    day, _, year, hour, minute, second, sign, zone_hours, zone_minutes = match.groups()
    offset = (int(zone_hours) * 3600 + int(zone_minutes) * 60) * (-1 if sign == "-" else 1)
    return (int(year), month, int(day), int(hour), int(minute), int(second), 0, 1, -1, offset)


# -- addresses -------------------------------------------------------------------------------------------------

_ANGLE = re.compile(r"<([^<>]*)>")  # the address is the last one holding "@": a decoded name may hold "<"
_QUOTING = re.compile(r'\\(.)|"')


def parse_addresses(value: str) -> tuple[Address, ...]:
    """Parse an address-list header (From, To, Cc...) into name + email pairs.

    Handles quoted names with commas, RFC 2047 names, comments as names ("a@b (Ann)"), groups
    ("team: a@b, c@d;"), folded lines, and display names that were decoded before parsing (a comma in an unquoted
    name is rejoined with its address). Never raises.

    Args:
        value: The raw (or decoded) header value.

    Returns:
        The addresses in order; entries without an address are skipped.
    """
    if not isinstance(value, str) or not value.strip():
        return ()
    entries = _split_addresses(" ".join(value.split()))
    merged: list[str] = []
    for entry in entries:
        # "Doe, John <j@x>" decoded from an encoded word splits into "Doe" + "John <j@x>": rejoin the name.
        if merged and "@" not in merged[-1] and "<" not in merged[-1] and "<" in entry:
            merged[-1] = f"{merged[-1]}, {entry}"
        else:
            merged.append(entry)
    found = []
    for entry in merged:
        address = _parse_one(entry)
        if address is not None:
            found.append(address)
    return tuple(found)


_SPLIT_SENSITIVE = frozenset(',;:"\\(')  # without these, the whole value is one entry (the usual From header)


def _split_addresses(value: str) -> list[str]:
    if _SPLIT_SENSITIVE.isdisjoint(value):
        return [value.strip()] if value.strip() else []
    return _scan_addresses(value)


def _scan_addresses(value: str) -> list[str]:
    """The entries of an address list, character by character: quotes, escapes, comments, angles, groups."""
    entries, current = [], []
    quoted = escaped = False
    angle = paren = 0
    for ch in value:
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == '"' and not paren:
            quoted = not quoted
        elif not quoted:
            if ch == "<":
                angle += 1
            elif ch == ">":
                angle = max(angle - 1, 0)
            elif ch == "(":
                paren += 1
            elif ch == ")":
                paren = max(paren - 1, 0)
            elif ch in ",;" and not angle and not paren:
                entries.append("".join(current))
                current = []
                continue
            elif ch == ":" and not angle and not paren and "@" not in "".join(current):
                current = []  # "group-name:" opens a group; its name is not an address
                continue
        current.append(ch)
    entries.append("".join(current))
    return [entry.strip() for entry in entries if entry.strip()]


def _parse_one(entry: str) -> Address | None:
    comment = ""
    angle = next((m for m in reversed(list(_ANGLE.finditer(entry))) if "@" in m.group(1)), None) or _ANGLE.search(entry)
    if angle:
        email = angle.group(1)
        name = entry[: angle.start()] + entry[angle.end() :]
    else:
        comments = re.findall(r"\(([^()]*)\)", entry)
        comment = " ".join(comments)
        email = re.sub(r"\([^()]*\)", " ", entry)
        name = ""
        if "@" not in email and " " in email.strip():
            return None  # a bare name without an address
    email = "".join(email.split()).strip("\"'").removeprefix("mailto:")
    name = re.sub(r"\([^()]*\)", " ", name) if angle and "(" in name else (name if angle else comment)
    if name.lstrip().startswith('"') or "\\" in name:  # a quoted phrase; quotes inside a decoded name are text
        name = _QUOTING.sub(lambda m: m.group(1) or "", name)  # drop quotes, keep backslash-escaped characters
    decoded = decode_header_value(name).strip().strip("'")
    if not email:
        return None
    return Address(decoded if decoded and decoded.lower() != email.lower() else None, email)
