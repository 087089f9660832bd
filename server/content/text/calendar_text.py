"""One-line summaries of iCalendar (text/calendar) invites for an LLM. Pure, no I/O, never raises."""

from __future__ import annotations

import re

_UNFOLD = re.compile(r"\r?\n[ \t]")
_DATE = re.compile(r"^(\d{4})(\d{2})(\d{2})(?:T(\d{2})(\d{2})(\d{2})?(Z)?)?$")
_KINDS = {
    "REQUEST": "Calendar invite",
    "CANCEL": "Calendar cancellation",
    "REPLY": "Calendar reply",
    "COUNTER": "Calendar counter-proposal",
    "PUBLISH": "Calendar event",
}
_MAX_LINES = 20_000  # an invite is tens of lines; anything past this is not worth reading
_MAX_FIELD = 300


def summarize_calendar(ics: str) -> str | None:
    """Summarize the first VEVENT of an iCalendar text.

    Lines are unfolded, text values unescaped, and DTSTART/DTEND shown as "YYYY-MM-DD HH:MM" with "UTC" for a
    Z time, the TZID in parentheses for a zoned time, or "(all day)" for a date.

    Args:
        ics: The decoded text of a text/calendar (or application/ics) part.

    Returns:
        e.g. "Calendar invite: Team sync, starts 2024-03-05 10:00 (Europe/Berlin), ends 2024-03-05 11:00
        (Europe/Berlin), location: Room 4, organizer: ann@example.com", or None when there is no event.
    """
    if not isinstance(ics, str) or "BEGIN:VEVENT" not in ics.upper():
        return None
    method = ""
    event: dict[str, tuple[dict[str, str], str]] = {}
    attendees: list[tuple[dict[str, str], str]] = []
    depth = 0  # components nested inside the VEVENT (VALARM) are skipped
    in_event = False
    for line in _UNFOLD.sub("", ics).splitlines()[:_MAX_LINES]:
        name, params, value = _split_line(line)
        if name == "BEGIN":
            if in_event:
                depth += 1
            elif value.upper() == "VEVENT":
                in_event = True
        elif name == "END":
            if in_event and depth:
                depth -= 1
            elif in_event and value.upper() == "VEVENT":
                break
        elif name == "METHOD" and not in_event:
            method = value.strip().upper()
        elif in_event and not depth:
            if name == "ATTENDEE":
                attendees.append((params, value))
            else:
                event.setdefault(name, (params, value))
    if not in_event:
        return None
    fields = [_text(event.get("SUMMARY", ({}, ""))[1]) or "(no title)"]
    for key, label in (("DTSTART", "starts"), ("DTEND", "ends")):
        if key in event:
            fields.append(f"{label} {_when(*event[key])}")
    location = _text(event.get("LOCATION", ({}, ""))[1])
    if location:
        fields.append(f"location: {location}")
    organizer = event.get("ORGANIZER")
    if organizer:
        fields.append(f"organizer: {_person(*organizer)}")
    if method == "REPLY":
        fields += [
            f"{_person(params, value)} {params.get('PARTSTAT', 'replied').lower()}" for params, value in attendees[:5]
        ]
    if (event.get("STATUS", ({}, ""))[1]).upper() == "CANCELLED" and method != "CANCEL":
        fields.append("status: cancelled")
    return f"{_KINDS.get(method, 'Calendar invite')}: " + ", ".join(fields)


def _split_line(line: str) -> tuple[str, dict[str, str], str]:
    """Split `NAME;P=V;Q="a:b":value` at the first colon outside quotes."""
    quoted = False
    for index, ch in enumerate(line):
        if ch == '"':
            quoted = not quoted
        elif ch == ":" and not quoted:
            head, value = line[:index], line[index + 1 :]
            break
    else:
        return "", {}, ""
    name, *raw_params = head.split(";")
    params = {}
    for raw in raw_params:
        key, _, val = raw.partition("=")
        params[key.strip().upper()] = val.strip().strip('"')
    return name.strip().upper(), params, value


def _text(value: str) -> str:
    value = re.sub(r"\\([nN])", "\n", value)
    value = re.sub(r"\\(.)", r"\1", value)
    value = " ".join(value.split())
    return value if len(value) <= _MAX_FIELD else value[:_MAX_FIELD] + "…"


def _when(params: dict[str, str], value: str) -> str:
    match = _DATE.match(value.strip())
    if not match:
        return _text(value)
    year, month, day, hour, minute, _, utc = match.groups()
    if hour is None:
        return f"{year}-{month}-{day} (all day)"
    stamp = f"{year}-{month}-{day} {hour}:{minute}"
    if utc:
        return stamp + " UTC"
    zone = params.get("TZID")
    return f"{stamp} ({_text(zone)})" if zone else stamp


def _person(params: dict[str, str], value: str) -> str:
    address = re.sub(r"^mailto:", "", value.strip(), flags=re.I)
    name = _text(params.get("CN", ""))
    if name and address and name.lower() != address.lower():
        return f"{name} <{address}>"
    return name or address or "?"
