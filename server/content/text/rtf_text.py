"""Outlook's rich text: compressed RTF (MS-OXRTFCP "LZFu") and a small RTF-to-text reader. Pure, total, bounded.

Outlook keeps a message body as compressed RTF (PR_RTF_COMPRESSED, found in winmail.dat attachments). The RTF is
often a wrapper around HTML (`\\fromhtml1`: the HTML sits in `{\\*\\htmltag ...}` groups and in text outside
`\\htmlrtf` runs) or around plain text (`\\fromtext`); otherwise it is ordinary RTF. Only the text is wanted:
formatting, font and color tables, pictures and objects are skipped. Output and nesting are capped, so hostile
input costs time linear in its size and bounded memory.
"""

from __future__ import annotations

import re
import struct

from server.content.text.html_text import html_to_text

MAX_RTF_BYTES = 2 * 1024 * 1024  # decompressed RTF beyond this is dropped (the decoder runs ~1 MB/s)
MAX_TEXT_CHARS = 1_000_000
_MAX_DEPTH = 256
_LZFU = 0x75465A4C  # "LZFu": compressed
_MELA = 0x414C454D  # "MELA": stored uncompressed
# The dictionary's initial contents, from MS-OXRTFCP section 3.1.3.1 (207 bytes).
INITIAL_DICTIONARY = (
    b"{\\rtf1\\ansi\\mac\\deff0\\deftab720{\\fonttbl;}{\\f0\\fnil \\froman \\fswiss \\fmodern \\fscript "
    b"\\fdecor MS Sans SerifSymbolArialTimes New RomanCourier{\\colortbl\\red0\\green0\\blue0\r\n\\par "
    b"\\pard\\plain\\f0\\fs20\\b\\i\\u\\tab\\tx"
)


def decompress_rtf(data: bytes, limit: int = MAX_RTF_BYTES) -> bytes | None:
    """The RTF inside a PR_RTF_COMPRESSED value, or None when it is not one. A truncated stream gives what it
    holds; output stops at `limit` bytes (and at the declared raw size)."""
    if not isinstance(data, (bytes, bytearray)) or len(data) < 16:
        return None
    comp_size, raw_size, kind, _crc = struct.unpack_from("<IIII", data)
    body = memoryview(data)[16 : 4 + comp_size] if comp_size >= 12 else memoryview(data)[16:]
    cap = min(raw_size, limit) if raw_size else limit
    if kind == _MELA:
        return bytes(body[:cap])
    if kind != _LZFU:
        return None
    dictionary = bytearray(4096)
    dictionary[: len(INITIAL_DICTIONARY)] = INITIAL_DICTIONARY
    write = len(INITIAL_DICTIONARY)
    out = bytearray()
    pos, end = 0, len(body)
    while pos < end and len(out) < cap:
        control = body[pos]
        pos += 1
        for bit in range(8):
            if control & (1 << bit):
                if pos + 1 >= end:
                    return bytes(out[:cap])
                token = (body[pos] << 8) | body[pos + 1]
                pos += 2
                offset = token >> 4
                if offset == write:
                    return bytes(out[:cap])  # the end marker: a reference to the write position
                for step in range((token & 0xF) + 2):
                    byte = dictionary[(offset + step) & 0xFFF]
                    out.append(byte)
                    dictionary[write] = byte
                    write = (write + 1) & 0xFFF
            else:
                if pos >= end:
                    return bytes(out[:cap])
                byte = body[pos]
                pos += 1
                out.append(byte)
                dictionary[write] = byte
                write = (write + 1) & 0xFFF
            if len(out) >= cap:
                break
    return bytes(out[:cap])


# -- RTF to text ------------------------------------------------------------------------------------------------

_TOKEN = re.compile(rb"\\([a-zA-Z]{1,32})(-?\d{1,10})? ?|\\'([0-9a-fA-F]{2})|\\(.)|([{}])|([^\\{}\r\n]+)|[\r\n]+", re.S)
_SKIPPED = frozenset(
    b"fonttbl colortbl stylesheet info pict object header footer headerl headerr headerf footerl footerr footerf "
    b"listtable listoverridetable rsidtbl generator xmlnstbl themedata colorschememapping datastore latentstyles "
    b"fldinst pgdsctbl revtbl mmathpr filetbl bkmkstart bkmkend wgrffmtfilter author operator title company "
    b"nonshppict shp shpinst sp sn sv blipuid txfieldtext passwordhash panose falt fname leveltext levelnumbers "
    b"protusertbl defchp defpap aftncn aftnsep aftnsepc ftncn ftnsep ftnsepc userprops docvar".split()
)
_WORDS = {
    b"par": "\n",
    b"line": "\n",
    b"sect": "\n\n",
    b"page": "\n\n",
    b"row": "\n",
    b"cell": "\t",
    b"tab": "\t",
    b"emdash": "\u2014",
    b"endash": "\u2013",
    b"lquote": "\u2018",
    b"rquote": "\u2019",
    b"ldblquote": "\u201c",
    b"rdblquote": "\u201d",
    b"bullet": "\u2022",
    b"emspace": " ",
    b"enspace": " ",
    b"qmspace": " ",
}
_SYMBOLS = {b"~": "\u00a0", b"_": "\u2011", b"-": "", b"\\": "\\", b"{": "{", b"}": "}", b"\n": "\n", b"\r": "\n"}


class _Reader:
    def __init__(self) -> None:
        self.out: list[str] = []
        self.size = 0
        self.codec = "cp1252"
        self.html = False
        self.pending = bytearray()  # \'hh bytes, decoded together (double-byte code pages)
        self.units: list[int] = []  # \uN code units, decoded together (surrogate pairs)
        self.fallback = 0  # characters still to skip after a \uN
        # Per group: (skipping this destination, \uc count, inside \htmlrtf, an htmltag group)
        self.state = (False, 1, False, False)
        self.stack: list[tuple[bool, int, bool, bool]] = []
        self.overflow = 0

    def emit(self, text: str) -> None:
        skip, _uc, htmlrtf, tag = self.state
        if skip or (self.html and htmlrtf and not tag) or self.size >= MAX_TEXT_CHARS:
            return
        self.out.append(text)
        self.size += len(text)

    def flush(self) -> None:
        if self.pending:
            data, self.pending = bytes(self.pending), bytearray()
            self.emit(_decode(data, self.codec))
        if self.units:
            units, self.units = self.units, []
            self.emit(struct.pack(f"<{len(units)}H", *units).decode("utf-16-le", "replace"))

    def open_group(self) -> None:
        self.flush()
        if len(self.stack) >= _MAX_DEPTH:
            self.overflow += 1
        else:
            self.stack.append(self.state)

    def close_group(self) -> None:
        self.flush()
        if self.overflow:
            self.overflow -= 1
        elif self.stack:
            self.state = self.stack.pop()

    def word(self, name: bytes, param: int | None, first_in_group: bool, starred: bool) -> None:
        skip, uc, htmlrtf, tag = self.state
        if name == b"u" and param is not None:
            if self.pending:
                self.flush()
            self.units.append(param & 0xFFFF)
            self.fallback = uc
            return
        self.flush()
        if name == b"uc" and param is not None:
            self.state = (skip, max(0, min(param, 8)), htmlrtf, tag)
        elif name == b"ansicpg" and param:
            self.codec = _codepage(param)
        elif name == b"fromhtml":
            self.html = True
        elif name == b"htmlrtf":
            self.state = (skip, uc, param != 0, tag)
        elif name == b"htmltag" and starred and first_in_group:
            self.state = (skip, uc, htmlrtf, True)
        elif first_in_group and (starred or name in _SKIPPED):
            self.state = (True, uc, htmlrtf, tag)
        elif name in _WORDS:
            self.emit(_WORDS[name])

    def result(self) -> str:
        self.flush()
        return "".join(self.out)


def _decode(data: bytes, codec: str) -> str:
    try:
        return data.decode(codec, "replace")
    except LookupError:
        return data.decode("cp1252", "replace")


def _codepage(number: int) -> str:
    return {65001: "utf-8", 936: "gb18030", 950: "big5hkscs", 949: "cp949", 932: "cp932"}.get(number, f"cp{number}")


def rtf_to_text(rtf: bytes) -> str:
    """The readable text of an RTF document (HTML-wrapping RTF gives its HTML's text). Never raises."""
    if not isinstance(rtf, (bytes, bytearray)) or not rtf:
        return ""
    reader = _Reader()
    first_in_group = starred = False
    pos, data = 0, bytes(rtf[:MAX_RTF_BYTES])
    while pos < len(data):
        match = _TOKEN.match(data, pos)
        if match is None:  # a lone backslash at the end
            break
        pos = match.end()
        name, param, hexbyte, symbol, brace, text = match.groups()
        if name is not None:
            number = int(param) if param else None
            if name == b"bin" and number:
                pos += max(number, 0)  # binary data follows the word: skip it whole
                continue
            reader.word(name, number, first_in_group, starred)
            first_in_group = starred = False
            continue
        if symbol == b"*":
            starred = True
            continue
        first_in_group = False
        if brace == b"{":
            reader.open_group()
            first_in_group, starred = True, False
        elif brace == b"}":
            reader.close_group()
        elif hexbyte is not None:
            if reader.fallback:
                reader.fallback -= 1
                continue
            if reader.units:
                reader.flush()
            reader.pending.append(int(hexbyte, 16))
        elif symbol is not None:
            reader.flush()
            if reader.fallback:
                reader.fallback -= 1
                continue
            reader.emit(_SYMBOLS.get(symbol, ""))
        elif text is not None:
            reader.flush()
            if reader.fallback:
                skipped = min(reader.fallback, len(text))
                reader.fallback -= skipped
                text = text[skipped:]
            reader.emit(_decode(text, reader.codec))
    body = reader.result()
    if reader.html:
        return html_to_text(body)
    lines = (line.rstrip() for line in body.replace("\r", "").split("\n"))
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
