"""Deterministic building blocks for the demo mailbox: MIME parts, headers, and small binary files.

Everything here is a pure function of its arguments (no clock, no randomness), so the generated mailbox is
byte-identical on every run and every platform. Parts are plain compat32 `email.message.Message` objects whose
payloads are already transfer-encoded; `flatten` writes them with headers exactly as built.
"""

from __future__ import annotations

import base64
import hashlib
import quopri
import struct
import zlib
from datetime import datetime
from email.message import Message
from email.policy import Compat32

# --- headers -----------------------------------------------------------------------------------------------

_Q_SAFE = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!*+-/")
_MAX_WORD = 75  # RFC 2047: an encoded-word is at most 75 characters


def _encoded_word(text: str, charset: str, enc: str, codec: str | None = None) -> str:
    raw = text.encode(codec or charset)
    if enc == "B":
        payload = base64.b64encode(raw).decode("ascii")
    else:
        payload = "".join("_" if b == 0x20 else chr(b) if b in _Q_SAFE else f"={b:02X}" for b in raw)
    return f"=?{charset}?{enc}?{payload}?="


def encoded_words(text: str, charset: str, enc: str = "B", codec: str | None = None) -> list[str]:
    """Split `text` into RFC 2047 encoded-words of at most 75 characters, never splitting a character.

    `codec` encodes the bytes when it differs from the `charset` label (mislabelled mail).
    """
    words: list[str] = []
    chunk = ""
    for ch in text:
        if chunk and len(_encoded_word(chunk + ch, charset, enc, codec)) > _MAX_WORD:
            words.append(_encoded_word(chunk, charset, enc, codec))
            chunk = ch
        else:
            chunk += ch
    if chunk:
        words.append(_encoded_word(chunk, charset, enc, codec))
    return words


def fold(words: list[str], first_line_used: int = 10, width: int = 76) -> str:
    """Join header tokens with spaces, folding onto continuation lines (`\\n `) before `width`."""
    lines: list[str] = []
    line = ""
    used = first_line_used
    for word in words:
        candidate = f"{line} {word}" if line else word
        if line and used + len(candidate) > width:
            lines.append(line)
            line, used = word, 1
        else:
            line = candidate
    lines.append(line)
    return "\n ".join(lines)


def header_text(text: str, charset: str = "UTF-8", enc: str = "B", name_len: int = 8, codec: str | None = None) -> str:
    """A header value for unstructured text: ASCII stays readable, the rest becomes encoded-words.

    A leading ASCII run such as "Re: " or "Fwd: " is kept as plain text, as most mailers do.
    """
    if text.isascii():
        return fold(text.split(" "), name_len + 2)
    first = next(i for i, ch in enumerate(text) if not ch.isascii())
    cut = text.rfind(" ", 0, first)
    plain = text[:cut].split(" ") if cut > 0 else []
    rest = text[cut + 1 :] if cut > 0 else text
    return fold(plain + encoded_words(rest, charset, enc, codec), name_len + 2)


def address(name: str, email: str, charset: str = "UTF-8", enc: str = "B", codec: str | None = None) -> str:
    """One mailbox (`Name <email>`), the display name quoted or RFC 2047-encoded as needed."""
    if not name:
        return email
    if not name.isascii():
        return " ".join([*encoded_words(name, charset, enc, codec), f"<{email}>"])
    if any(ch in name for ch in ',.;:@"()<>[]'):
        escaped = name.replace("\\", "\\\\").replace('"', '\\"')
        return f'"{escaped}" <{email}>'
    return f"{name} <{email}>"


def address_list(addresses: list[str], name_len: int) -> str:
    """Comma-separated mailboxes, folded after a comma when a line would pass 76 characters."""
    tokens = [f"{a}," for a in addresses[:-1]] + addresses[-1:]
    return fold(tokens, name_len + 2)


# --- leaf and container parts ------------------------------------------------------------------------------


def _transfer_encode(data: bytes, cte: str) -> str:
    if cte == "base64":
        return base64.encodebytes(data).decode("ascii")
    if cte == "quoted-printable":
        return quopri.encodestring(data).decode("ascii")
    if cte == "7bit":
        return data.decode("ascii")
    if cte == "8bit":
        # Raw bytes travel as surrogate escapes; BytesGenerator writes them back unchanged.
        return data.decode("ascii", "surrogateescape")
    raise ValueError(f"unknown transfer encoding {cte!r}")


def leaf(content_type: str, data: bytes, cte: str, headers: list[tuple[str, str]] | None = None) -> Message:
    """A single MIME part holding `data`, transfer-encoded with `cte`."""
    part = Message()
    part["Content-Type"] = content_type
    if cte != "none":
        part["Content-Transfer-Encoding"] = cte
    for name, value in headers or []:
        part[name] = value
    part.set_payload(_transfer_encode(data, "7bit" if cte == "none" else cte))
    return part


def text(
    body: str,
    subtype: str = "plain",
    charset: str = "UTF-8",
    cte: str = "quoted-printable",
    *,
    codec: str | None = None,
    format_flowed: bool = False,
) -> Message:
    """A text part. `codec` encodes the bytes when it differs from the declared `charset`.

    That models real mail whose label understates its bytes (gb2312 declared, gbk sent) or lies outright.
    """
    data = body.encode(codec or charset)
    ctype = f'text/{subtype}; charset="{charset}"'
    if format_flowed:
        ctype = f'text/{subtype}; charset="{charset}"; format=flowed'
    return leaf(ctype, data, cte)


def container(subtype: str, *parts: Message, params: str = "") -> Message:
    """A multipart part (`mixed`, `alternative`, `related`, `signed`, ...). Boundaries are set later."""
    part = Message()
    part["Content-Type"] = f"multipart/{subtype}" + (f"; {params}" if params else "")
    part.set_payload(list(parts))
    return part


def attachment(
    filename: str,
    content_type: str,
    data: bytes,
    *,
    cte: str = "base64",
    filename_style: str = "plain",
    inline_cid: str | None = None,
) -> Message:
    """An attached (or inline, with `inline_cid`) file part.

    An empty `filename` gives a nameless part, as some phones and scanners send.
    `filename_style`: "plain" (ASCII name), "rfc2231" (`filename*=UTF-8''...`, the standard way), "rfc2047"
    (an encoded-word in quotes: not standard, but what many Chinese and older Outlook clients send).
    """
    if filename_style == "plain":
        name_param = f'name="{filename}"'
        file_param = f'filename="{filename}"'
    elif filename_style == "rfc2231":
        quoted = "".join(
            chr(b) if (b < 128 and chr(b).isalnum()) or chr(b) in "-._~" else f"%{b:02X}"
            for b in filename.encode("utf-8")
        )
        name_param = f"name*=UTF-8''{quoted}"
        file_param = f"filename*=UTF-8''{quoted}"
    elif filename_style.startswith("rfc2047:"):
        charset = filename_style.split(":", 1)[1]
        word = " ".join(encoded_words(filename, charset, "B"))
        name_param = f'name="{word}"'
        file_param = f'filename="{word}"'
    else:
        raise ValueError(filename_style)
    disposition = "inline" if inline_cid else "attachment"
    headers = [("Content-Disposition", f"{disposition};\n\t{file_param}" if filename else disposition)]
    if inline_cid:
        headers.append(("Content-ID", f"<{inline_cid}>"))
        headers.append(("X-Attachment-Id", inline_cid.split("@")[0]))
    return leaf(f"{content_type};\n\t{name_param}" if filename else content_type, data, cte, headers)


def rfc822(inner: Message) -> Message:
    """A message/rfc822 part carrying a whole forwarded message."""
    part = Message()
    part["Content-Type"] = "message/rfc822"
    part["Content-Disposition"] = "inline"
    part.set_payload([inner])
    return part


# --- serialization -----------------------------------------------------------------------------------------


class _VerbatimHeaders(Compat32):
    """Writes header values exactly as built: already RFC 2047-encoded and folded, never refolded."""

    def _fold(self, name: str, value: str, sanitize: bool) -> str:
        return f"{name}: {value}".replace("\n", self.linesep) + self.linesep


VERBATIM = _VerbatimHeaders(linesep="\n")


def set_boundaries(message: Message, seed: str) -> None:
    """Give every multipart a fixed, Gmail-looking boundary (`000000000000` + 16 hex digits)."""
    for index, part in enumerate(message.walk()):
        if part.get_content_maintype() == "multipart":
            digest = hashlib.sha256(f"{seed}/{index}".encode()).hexdigest()[:16]
            part.set_boundary(f"000000000000{digest}")


DAY_NAMES = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
MONTH_NAMES = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


def mbox_from_line(thread_id: int, when: datetime) -> str:
    """The separator line Google Takeout writes: `From <thread id>@xxx Thu Dec 14 10:26:29 +0000 2023`.

    `when` is UTC; names come from fixed tables so the output never depends on the locale.
    """
    return (
        f"From {thread_id}@xxx {DAY_NAMES[when.weekday()]} {MONTH_NAMES[when.month - 1]} {when.day:02d} "
        f"{when:%H:%M:%S} +0000 {when.year}"
    )


# --- small valid files -------------------------------------------------------------------------------------


def _zlib_stored(data: bytes) -> bytes:
    """A zlib stream of stored (uncompressed) deflate blocks.

    zlib.compress output differs between zlib builds (zlib-ng ships with some Pythons); stored blocks do not.
    """
    out = bytearray(b"\x78\x01")
    size = 65535
    for start in range(0, len(data) or 1, size):
        block = data[start : start + size]
        final = start + size >= len(data)
        out += bytes([1 if final else 0]) + struct.pack("<HH", len(block), len(block) ^ 0xFFFF) + block
    out += struct.pack(">I", zlib.adler32(data))
    return bytes(out)


def png(width: int, height: int, palette: list[tuple[int, int, int]], pixels: list[list[int]]) -> bytes:
    """An 8-bit palette PNG from rows of palette indexes."""

    def chunk(tag: bytes, payload: bytes) -> bytes:
        return struct.pack(">I", len(payload)) + tag + payload + struct.pack(">I", zlib.crc32(tag + payload))

    raw = b"".join(b"\x00" + bytes(row) for row in pixels)
    header = struct.pack(">IIBBBBB", width, height, 8, 3, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"PLTE", b"".join(bytes(rgb) for rgb in palette))
        + chunk(b"IDAT", _zlib_stored(raw))
        + chunk(b"IEND", b"")
    )


def _pdf_string(value: str) -> str:
    return "(" + value.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") + ")"


def pdf(title: str, lines: list[str], created: str = "20261101090000Z") -> bytes:
    """A one-page PDF 1.4 (Helvetica text, ASCII only) with a correct cross-reference table."""
    ops = ["BT", "/F1 18 Tf", "72 740 Td", f"{_pdf_string(title)} Tj", "/F1 11 Tf", "0 -28 Td"]
    for line in lines:
        ops += [f"{_pdf_string(line)} Tj", "0 -16 Td"]
    ops.append("ET")
    stream = "\n".join(ops).encode("ascii")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792]"
        b" /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        f"<< /Title {_pdf_string(title)} /Producer (demo mailbox generator) /CreationDate (D:{created}) >>".encode(
            "ascii"
        ),
    ]
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R /Info 6 0 R >>\n" % (len(objects) + 1)
    out += b"startxref\n%d\n%%%%EOF\n" % xref
    return bytes(out)


def wav(samples: int = 2000, rate: int = 8000) -> bytes:
    """A short 8-bit mono PCM WAV: a quiet triangle-wave tone (integer math, so identical everywhere)."""
    data = bytes(128 + abs((i * 6) % 64 - 32) - 16 for i in range(samples))
    fmt = struct.pack("<HHIIHH", 1, 1, rate, rate, 1, 8)
    return (
        b"RIFF"
        + struct.pack("<I", 4 + 8 + len(fmt) + 8 + len(data))
        + b"WAVE"
        + b"fmt "
        + struct.pack("<I", len(fmt))
        + fmt
        + b"data"
        + struct.pack("<I", len(data))
        + data
    )


def ics(
    *,
    uid: str,
    summary: str,
    start: str,
    end: str,
    location: str,
    organizer: tuple[str, str],
    attendees: list[tuple[str, str]],
    description: str,
    stamp: str,
    method: str = "REQUEST",
) -> str:
    """An iCalendar (RFC 5545) invitation with one event; times are UTC `YYYYMMDDTHHMMSSZ`."""
    lines = [
        "BEGIN:VCALENDAR",
        "PRODID:-//Google Inc//Google Calendar 70.9054//EN",
        "VERSION:2.0",
        "CALSCALE:GREGORIAN",
        f"METHOD:{method}",
        "BEGIN:VEVENT",
        f"DTSTART:{start}",
        f"DTEND:{end}",
        f"DTSTAMP:{stamp}",
        f"ORGANIZER;CN={organizer[0]}:mailto:{organizer[1]}",
        f"UID:{uid}",
        *(
            f"ATTENDEE;CUTYPE=INDIVIDUAL;ROLE=REQ-PARTICIPANT;PARTSTAT=NEEDS-ACTION;RSVP=TRUE;CN={name}:mailto:{email}"
            for name, email in attendees
        ),
        f"DESCRIPTION:{description}",
        f"LOCATION:{location}",
        "SEQUENCE:0",
        "STATUS:CONFIRMED",
        f"SUMMARY:{summary}",
        "TRANSP:OPAQUE",
        "END:VEVENT",
        "END:VCALENDAR",
    ]
    # RFC 5545 folds content lines at 75 octets with CRLF + space.
    folded = []
    for line in lines:
        while len(line) > 75:
            folded.append(line[:75])
            line = " " + line[75:]
        folded.append(line)
    return "\r\n".join(folded) + "\r\n"
