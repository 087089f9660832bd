"""XLSX cell values as text: number formats that mean dates, serial numbers to ISO dates, plain numbers. Pure."""

from __future__ import annotations

import math
import re
from datetime import datetime, timedelta

from server.content.extract.ooxml import Package
from server.content.extract.xmlsafe import END, START

# Built-in number formats (ECMA-376 18.8.30) that show dates or times; 27-36 and 50-58 are East Asian dates.
_BUILTIN = {
    **dict.fromkeys((14, 15, 16, 17, *range(27, 37), *range(50, 59)), "date"),
    **dict.fromkeys((18, 19, 20, 21, 45, 46, 47), "time"),
    22: "datetime",
}
_QUOTED = re.compile(r'"[^"]*"|\\.|_.|\*.')
_BRACKETS = re.compile(r"\[[^\]]*\]")
_MAX_STYLES = 100_000


def format_kind(code: str) -> str | None:
    """The kind of value an Excel number format shows: "date", "time", "datetime", "duration" ([h]:mm) or None."""
    lowered = code.lower()
    if "[h" in lowered or "[m" in lowered or "[s" in lowered:
        return "duration"
    bare = _BRACKETS.sub("", _QUOTED.sub("", code.split(";", 1)[0])).lower()
    if bare in ("", "general", "@"):
        return None
    has_date = any(ch in bare for ch in "dy") or ("m" in bare and "h" not in bare and "s" not in bare)
    has_time = "h" in bare or "s" in bare
    if has_date and has_time:
        return "datetime"
    return "date" if has_date else "time" if has_time else None


def date_styles(package: Package, path: str | None) -> dict[int, str]:
    """{cell style index (the `s` attribute): date kind} from styles.xml's cellXfs and custom numFmts."""
    if not path:
        return {}
    custom: dict[int, str | None] = {}
    kinds: dict[int, str] = {}
    in_xfs = False
    index = 0
    for count, (kind, name, attrs) in enumerate(package.events(path)):
        if count > _MAX_STYLES * 4:
            break
        if kind == END and name == "cellXfs":
            break
        if kind != START or not isinstance(attrs, dict):
            continue
        if name == "numFmt":
            number = _int(attrs.get("numFmtId"))
            if number is not None:
                custom[number] = format_kind(attrs.get("formatCode", ""))
        elif name == "cellXfs":
            in_xfs = True
        elif name == "xf" and in_xfs:
            number = _int(attrs.get("numFmtId")) or 0
            found = custom[number] if number in custom else _BUILTIN.get(number)
            if found:
                kinds[index] = found
            index += 1
    return kinds


def _int(value: object) -> int | None:
    try:
        return int(str(value))
    except ValueError:
        return None


def serial_to_iso(serial: float, kind: str, date1904: bool) -> str | None:
    """An Excel serial day number as "2024-03-05", "10:30:00", "2024-03-05T10:30:00" or a duration "255:10:10";
    None when out of range."""
    if not math.isfinite(serial) or serial < 0 or serial > 2_958_466:  # 9999-12-31
        return None
    if kind == "duration":
        seconds = round(serial * 86400)
        return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"
    if kind == "time" and serial < 1:
        seconds = round(serial * 86400) % 86400
        return f"{seconds // 3600:02d}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"
    if date1904:
        base = datetime(1904, 1, 1)
    elif serial < 60:
        base = datetime(1899, 12, 31)  # Excel counts a 29 February 1900 that never was
    elif serial < 61:
        return "1900-02-29"
    else:
        base = datetime(1899, 12, 30)
    try:
        moment = base + timedelta(seconds=round(serial * 86400))
    except OverflowError:
        return None
    return moment.date().isoformat() if kind == "date" else moment.isoformat()


_ESCAPED = re.compile(r"_x([0-9A-Fa-f]{4})_")


def unescape(text: str) -> str:
    """Excel's _xHHHH_ escapes in strings ("_x000D_" is a carriage return, "_x005F_" a literal underscore)."""
    return _ESCAPED.sub(lambda match: chr(int(match.group(1), 16)), text) if "_x" in text else text


def number_text(raw: str) -> str:
    """A number as Excel would show it in General format, roughly: "3", "3.14", "1E+20"."""
    try:
        value = float(raw)
    except ValueError:
        return raw.strip()
    if not math.isfinite(value):
        return raw.strip()
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return format(value, ".15g")
