"""Dates of a message: the Date header as ISO 8601 with its offset, or Gmail's internalDate when the header fails.

Common RFC 2822 forms are written from their digits (fast, and compared with the `datetime` reading in the
tests); anything else goes through `email.utils.parsedate_tz`, obsolete forms and zone names tolerated.
"""

from __future__ import annotations

import calendar
import re
from datetime import datetime, timedelta, timezone
from email.utils import parsedate_tz
from functools import lru_cache


def integer_of(value: object) -> int | None:
    """An int, or a string of decimal digits, as an int (Gmail sends internalDate and sizes as either); else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdecimal() and len(value.strip()) < 20:  # isdigit: int("¹") raised
        return int(value.strip())
    return None


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
    millis = integer_of(internal_date_ms)
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
        return datetime(*parts[:6], tzinfo=_zone(parts[9] or 0)).isoformat() if parts else None
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


def _common_date(
    value: str,
) -> tuple[int, int, int, int, int, int, int, int, int, int | None] | None:
    match = _COMMON_DATE.fullmatch(value.strip())
    month = _MONTHS.get(match.group(2).lower()) if match else None
    if match is None or month is None:
        return None
    day, _, year, hour, minute, second, sign, zone_hours, zone_minutes = match.groups()
    offset = (int(zone_hours) * 3600 + int(zone_minutes) * 60) * (-1 if sign == "-" else 1)
    return (int(year), month, int(day), int(hour), int(minute), int(second), 0, 1, -1, offset)
