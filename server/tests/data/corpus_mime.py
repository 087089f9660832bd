"""Byte-exact MIME builders for the content-fidelity corpus (see make_corpus.py).

The corpus needs bytes the stdlib generator will not write (mislabelled charsets, GBK text under a "gb2312"
label, CP50221-style ISO-2022-JP, split encoded words, invalid base64), so every part is assembled by hand.
Everything is a pure function of its arguments: the corpus is byte-identical on every run.
"""

from __future__ import annotations

import base64
import quopri
import zlib
from dataclasses import dataclass, field

OWNER = "me@example.com"


@dataclass(frozen=True)
class Case:
    """One corpus message: its file stem, what it exercises, its bytes, and what parsing it must give."""

    name: str
    what: str
    raw: bytes
    expect: dict[str, object] = field(default_factory=dict)


def part(
    body: bytes | str,
    ctype: str | None = "text/plain",
    *,
    charset: str | None = None,
    cte: str | None = "7bit",
    params: str = "",
    headers: tuple[tuple[str, str], ...] = (),
) -> bytes:
    """A leaf: headers, blank line, `body` transfer-encoded with `cte` (a str body is UTF-8)."""
    data = body.encode("utf-8") if isinstance(body, str) else body
    lines = []
    if ctype:
        lines.append(f"Content-Type: {ctype}" + (f'; charset="{charset}"' if charset else "") + params)
    if cte:
        lines.append(f"Content-Transfer-Encoding: {cte}")
    lines += [f"{name}: {value}" for name, value in headers]
    return "\n".join(lines).encode("utf-8") + b"\n\n" + encode(data, cte)


def encode(data: bytes, cte: str | None) -> bytes:
    cte = (cte or "").lower()
    if cte == "base64":
        return base64.encodebytes(data)
    if cte == "quoted-printable":
        return quopri.encodestring(data)
    return data


def attachment(
    data: bytes,
    ctype: str,
    filename: str | None,
    *,
    disposition: str = "attachment",
    extra: tuple[tuple[str, str], ...] = (),
) -> bytes:
    """A base64 leaf carrying a file; `filename` None gives a nameless attachment."""
    disp = disposition + (f'; filename="{filename}"' if filename else "")
    return part(data, ctype, cte="base64", headers=(("Content-Disposition", disp), *extra))


def multipart(subtype: str, parts: list[bytes], *, params: str = "", preamble: bytes = b"") -> bytes:
    boundary = f"=_{subtype}_{zlib.crc32(b''.join(parts)):08x}"  # deterministic, differs by content
    out = [f'Content-Type: multipart/{subtype}; boundary="{boundary}"{params}'.encode("ascii"), b""]
    if preamble:
        out.append(preamble)
    for item in parts:
        out += [f"--{boundary}".encode("ascii"), item]
    out.append(f"--{boundary}--".encode("ascii"))
    return b"\n".join(out) + b"\n"


def message(
    case: str,
    body: bytes,
    *,
    subject: str,
    sender: str = "Ann Example <ann@example.com>",
    to: str = OWNER,
    date: str = "Tue, 05 Mar 2024 10:00:00 +0100",
    headers: tuple[tuple[str, str], ...] = (),
    mime: bool = True,
    crlf: bool = False,
) -> bytes:
    """A whole message; `body` starts with its own Content-* headers (or with the blank line for none)."""
    top = [f"From: {sender}", f"To: {to}", f"Subject: {subject}", f"Date: {date}"]
    top += [f"Message-ID: <{case}@corpus.example.com>", f"X-Corpus-Case: {case}"]
    top += ["MIME-Version: 1.0"] if mime else []
    top += [f"{name}: {value}" for name, value in headers]
    raw = "\n".join(top).encode("utf-8") + b"\n" + body
    return raw.replace(b"\n", b"\r\n") if crlf else raw


def rfc822(inner: bytes, *, disposition: str | None = "inline") -> bytes:
    """A message/rfc822 part carrying `inner` unchanged."""
    head = b"Content-Type: message/rfc822\n"
    if disposition:
        head += f"Content-Disposition: {disposition}\n".encode("ascii")
    return head + b"\n" + inner


def word(text: str, charset: str, enc: str = "B", codec: str | None = None) -> str:
    """One RFC 2047 encoded word (the caller keeps it under 75 characters)."""
    return raw_word(text.encode(codec or charset), charset, enc)


def raw_word(data: bytes, charset: str, enc: str = "B") -> str:
    if enc == "B":
        return f"=?{charset}?B?{base64.b64encode(data).decode('ascii')}?="
    safe = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!*+-/"
    text = "".join("_" if b == 0x20 else chr(b) if b in safe else f"={b:02X}" for b in data)
    return f"=?{charset}?Q?{text}?="


def iso2022jp(text: str) -> bytes:
    """ISO-2022-JP the way Microsoft's CP50221 writes it: JIS X 0208 rows via CP932, so NEC specials (①, ㈱)
    survive; the stdlib codec refuses them, and real Outlook and Japanese webmail send them."""
    out = bytearray()
    double = False
    for ch in text:
        if ch.isascii():
            if double:
                out += b"\x1b(B"
                double = False
            out += ch.encode("ascii")
            continue
        sjis = ch.encode("cp932")
        if len(sjis) != 2:
            raise ValueError(f"{ch!r} has no JIS X 0208 code")
        if not double:
            out += b"\x1b$B"
            double = True
        out += _sjis_to_jis(sjis[0], sjis[1])
    if double:
        out += b"\x1b(B"
    return bytes(out)


def _sjis_to_jis(s1: int, s2: int) -> bytes:
    s1 -= 0x40 if s1 >= 0xE0 else 0
    j1 = (s1 - 0x81) * 2 + 0x21
    if s2 >= 0x9F:
        return bytes((j1 + 1, s2 - 0x7E))
    return bytes((j1, s2 - 0x1F - (1 if s2 >= 0x80 else 0)))


PNG_1PX = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)
PDF = b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"
DOCX = b"PK\x03\x04" + bytes(range(64)) + b"word/document.xml"
