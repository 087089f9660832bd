"""A small reader for TNEF, Outlook's winmail.dat (application/ms-tnef). Pure, total, bounded.

A TNEF stream is a signature (0x223E9F78), a two-byte key, then attributes: level (1 message, 2 attachment),
a 32-bit id (type in the high word), a 32-bit length, the data and a 16-bit checksum. Read here:
- the body: MAPI PR_BODY (Unicode or 8-bit), attBody (8-bit text), MAPI PR_HTML, or MAPI PR_RTF_COMPRESSED
  (LZFu-compressed RTF, see text/rtf_text.py), in that order of preference;
- the files inside: attAttachTitle / attAttachData, or PR_ATTACH_LONG_FILENAME and the data size from the
  attachment's MAPI properties.
Hostile streams (truncated, absurd lengths and counts) give what could be read and a problem string; nothing
allocates more than the input's size, and every loop is bounded by it.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from server.content.text.charsets import decode_text
from server.content.text.html_text import html_to_text
from server.content.text.rtf_text import decompress_rtf, rtf_to_text

SIGNATURE = 0x223E9F78
MAX_ATTRIBUTES = 10_000
MAX_PROPERTIES = 20_000
MAX_FILES = 500
LVL_MESSAGE, LVL_ATTACHMENT = 1, 2
# Attribute ids (low word of the attribute; the high word is its type).
ATT_BODY, ATT_OEM_CODEPAGE, ATT_MAPI_PROPS = 0x800C, 0x9007, 0x9003
ATT_ATTACH_REND_DATA, ATT_ATTACH_TITLE, ATT_ATTACH_DATA, ATT_ATTACHMENT = 0x9002, 0x8010, 0x800F, 0x9005
# MAPI property ids and types.
PR_BODY, PR_RTF_COMPRESSED, PR_HTML, PR_INTERNET_CPID = 0x1000, 0x1009, 0x1013, 0x3FDE
PR_ATTACH_DATA, PR_ATTACH_FILENAME, PR_ATTACH_LONG_FILENAME, PR_ATTACH_MIME_TAG = 0x3701, 0x3704, 0x3707, 0x370E
PR_DISPLAY_NAME = 0x3001
PT_STRING8, PT_UNICODE, PT_BINARY, PT_OBJECT = 0x001E, 0x001F, 0x0102, 0x000D
_FIXED_SIZES = {0x0002: 4, 0x0003: 4, 0x0004: 4, 0x0005: 8, 0x0006: 8, 0x0007: 8, 0x000A: 4, 0x000B: 4}
_FIXED_SIZES |= {0x0014: 8, 0x0040: 8, 0x0048: 16, 0x0001: 0}
_WANTED = {PR_BODY, PR_RTF_COMPRESSED, PR_HTML, PR_INTERNET_CPID, PR_ATTACH_DATA, PR_ATTACH_FILENAME}
_WANTED |= {PR_ATTACH_LONG_FILENAME, PR_ATTACH_MIME_TAG, PR_DISPLAY_NAME}


@dataclass
class TnefFile:
    """A file carried inside the TNEF stream."""

    name: str
    size: int
    mime_type: str | None = None


@dataclass
class TnefContent:
    """What a TNEF stream holds: its body text (with where it came from) and its files."""

    text: str = ""
    source: str = ""  # "PR_BODY", "attBody", "PR_HTML", "PR_RTF_COMPRESSED", or "" for none
    files: list[TnefFile] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def read_tnef(data: bytes) -> TnefContent:
    """Read a winmail.dat stream; never raises.

    Args:
        data: The attachment's bytes.

    Returns:
        The body text and source, the files inside, and problems met (truncation, bad signature...).
    """
    found = TnefContent()
    try:
        _read(bytes(data) if isinstance(data, (bytes, bytearray, memoryview)) else b"", found)
    except Exception as exc:  # the reader is bounds-checked throughout; this is the last line of defence
        found.problems.append(f"unreadable ({type(exc).__name__})")
    return found


def describe_tnef(name: str, content: TnefContent | None, *, has_body: bool) -> tuple[str, list[str]]:
    """Notes saying what a winmail.dat is and holds, and its text when it is to be the body ("" otherwise).

    Args:
        name: The attachment's file name.
        content: What `read_tnef` found, or None when the bytes were not available.
        has_body: Whether the message already has a body (the TNEF text then repeats it).
    """
    what = f"{name}: Outlook TNEF attachment (Outlook's wrapper for rich text and files)"
    if content is None:
        return "", [f"{what}; its bytes are not in this message resource, so its text and files are not shown"]
    body = ""
    if content.text and not has_body:
        body = content.text
        notes = [f"{what}; the body is its text (from {content.source})"]
    elif content.text:
        notes = [f"{what}; its text (from {content.source}) repeats the body and is not shown"]
    else:
        notes = [f"{what}; it holds no readable text"]
    if content.files:
        listed = ", ".join(f"{item.name} ({item.size} bytes)" for item in content.files[:20])
        more = f" and {len(content.files) - 20} more" if len(content.files) > 20 else ""
        notes.append(f"{name} contains {len(content.files)} file(s): {listed}{more}; download {name} for them")
    notes += [f"{name}: {problem}" for problem in content.problems[:3]]
    return body, notes


def _read(data: bytes, found: TnefContent) -> None:
    if len(data) < 6 or struct.unpack_from("<I", data)[0] != SIGNATURE:
        found.problems.append("not a TNEF stream (bad signature)")
        return
    codepage = "cp1252"
    plain: bytes | None = None
    props: dict[int, tuple[int, object]] = {}
    current: TnefFile | None = None
    pos, count = 6, 0
    while pos < len(data):
        count += 1
        if count > MAX_ATTRIBUTES:
            found.problems.append(f"more than {MAX_ATTRIBUTES} attributes: the rest skipped")
            break
        if pos + 9 > len(data):
            found.problems.append("truncated (an attribute header is cut off)")
            break
        level, attribute, length = struct.unpack_from("<BII", data, pos)
        start = pos + 9
        if start + length > len(data):
            found.problems.append("truncated (an attribute is longer than the stream)")
            break
        value = data[start : start + length]
        pos = start + length + 2  # the checksum is not checked: a wrong one costs nothing here
        kind = attribute & 0xFFFF
        if level == LVL_MESSAGE:
            if kind == ATT_BODY:
                plain = value
            elif kind == ATT_OEM_CODEPAGE and len(value) >= 4:
                codepage = _codepage(struct.unpack_from("<I", value)[0])
            elif kind == ATT_MAPI_PROPS:
                props = _properties(value, codepage, found)
        elif level == LVL_ATTACHMENT:
            if kind == ATT_ATTACH_REND_DATA or current is None:
                if len(found.files) >= MAX_FILES:
                    current = None  # past the cap: this file's attributes are skipped, never written onto another
                    continue
                current = TnefFile("", 0)
                found.files.append(current)
            if kind == ATT_ATTACH_TITLE:
                current.name = current.name or _text(value.split(b"\0", 1)[0], codepage)
            elif kind == ATT_ATTACH_DATA:
                current.size = len(value)
            elif kind == ATT_ATTACHMENT:
                _describe(current, _properties(value, codepage, found))
    if count == 0:
        found.problems.append("empty (no attributes)")
    found.files = [item for item in found.files if item.name or item.size]
    for number, item in enumerate(found.files, 1):
        item.name = item.name or f"attachment-{number}"
    found.text, found.source = _body(props, plain, codepage)


def _describe(item: TnefFile, props: dict[int, tuple[int, object]]) -> None:
    for key in (PR_ATTACH_LONG_FILENAME, PR_DISPLAY_NAME, PR_ATTACH_FILENAME):
        value = props.get(key, (0, None))[1]
        if isinstance(value, str) and value.strip():
            item.name = value.strip().replace("\\", "/").rsplit("/", 1)[-1]
            break
    mime = props.get(PR_ATTACH_MIME_TAG, (0, None))[1]
    item.mime_type = mime.strip().lower() if isinstance(mime, str) and "/" in mime else item.mime_type
    size = props.get(PR_ATTACH_DATA, (0, None))[1]
    if isinstance(size, bytes) and not item.size:
        item.size = len(size)


def _body(props: dict[int, tuple[int, object]], plain: bytes | None, codepage: str) -> tuple[str, str]:
    body = props.get(PR_BODY, (0, None))[1]
    if isinstance(body, str) and body.strip():
        return body.strip(), "PR_BODY"
    if plain and plain.strip(b"\0 \r\n"):
        return _text(plain, codepage).strip(), "attBody"
    html = props.get(PR_HTML, (0, None))[1]
    if html:
        cpid = props.get(PR_INTERNET_CPID, (0, None))[1]
        charset = _codepage(cpid) if isinstance(cpid, int) else None
        markup = html if isinstance(html, str) else decode_text(html, charset)[0] if isinstance(html, bytes) else ""
        text = html_to_text(markup)
        if text.strip():
            return text, "PR_HTML"
    rtf = props.get(PR_RTF_COMPRESSED, (0, None))[1]
    if isinstance(rtf, bytes):
        text = rtf_to_text(decompress_rtf(rtf) or b"")
        if text.strip():
            return text, "PR_RTF_COMPRESSED"
    return "", ""


class _Short(Exception):
    """A read ran past the end of a MAPI property block."""


class _Cursor:
    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def take(self, size: int) -> bytes:
        if size < 0 or self.pos + size > len(self.data):
            raise _Short
        chunk = self.data[self.pos : self.pos + size]
        self.pos += size
        return chunk

    def u32(self) -> int:
        value: int = struct.unpack("<I", self.take(4))[0]
        return value

    def left(self) -> int:
        return len(self.data) - self.pos


def _properties(data: bytes, codepage: str, found: TnefContent) -> dict[int, tuple[int, object]]:
    """The wanted MAPI properties of an attMAPIProps / attAttachment value: {id: (type, first value)}."""
    props: dict[int, tuple[int, object]] = {}
    cursor = _Cursor(data)
    try:
        total = cursor.u32()
        for _ in range(min(total, MAX_PROPERTIES)):
            ptype, pid = struct.unpack("<HH", cursor.take(4))
            if pid >= 0x8000:  # a named property: GUID, kind, then a number or a UTF-16 name
                cursor.take(16)
                named_kind = cursor.u32()
                cursor.take(4 if named_kind == 0 else _padded(cursor.u32()))
            base = ptype & 0x0FFF
            variable = base in (PT_STRING8, PT_UNICODE, PT_BINARY, PT_OBJECT)
            if not variable and base not in _FIXED_SIZES:
                found.problems.append(f"unknown MAPI property type 0x{ptype:04x}: the rest of the properties skipped")
                return props
            values = cursor.u32() if ptype & 0x1000 or variable else 1
            if values > cursor.left() // 4 + 1:
                raise _Short  # every value takes at least four bytes (or none: then there is one)
            if values > 1 and not variable and _FIXED_SIZES[base] == 0:
                # Values that take no bytes cost a loop each and read nothing: 20,000 such properties made the
                # reader quadratic in the stream's size. Nothing wanted is ever of such a type.
                found.problems.append(f"malformed MAPI property (type 0x{ptype:04x} repeated with no data)")
                return props
            for index in range(values):
                if variable:
                    size = cursor.u32()
                    raw = cursor.take(size)
                    cursor.take(-size % 4)
                else:
                    raw = cursor.take(_FIXED_SIZES[base])
                if index == 0 and pid in _WANTED:
                    props.setdefault(pid, (base, _value(base, raw, codepage)))
    except _Short:
        found.problems.append("truncated MAPI properties")
    return props


def _value(base: int, raw: bytes, codepage: str) -> object:
    if base == PT_UNICODE:
        return raw.decode("utf-16-le", "replace").split("\0", 1)[0]
    if base == PT_STRING8:
        return _text(raw.split(b"\0", 1)[0], codepage)
    if base == 0x0003 and len(raw) >= 4:
        return struct.unpack_from("<i", raw)[0]
    return raw


def _padded(size: int) -> int:
    return size + (-size % 4)


def _text(raw: bytes, codepage: str) -> str:
    return decode_text(raw.rstrip(b"\0"), codepage)[0]


def _codepage(number: int) -> str:
    return {65001: "utf-8", 1200: "utf-16-le", 20127: "us-ascii", 28591: "iso-8859-1"}.get(number, f"cp{number}")
