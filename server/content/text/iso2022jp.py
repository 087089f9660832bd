"""ISO-2022-JP decoded as Microsoft's CP50221 does: JIS X 0208 through CP932, so NEC/IBM extensions (①, ㈱)
and half-width kana survive. Split out of charsets.py; raises UnicodeDecodeError on bytes that are not it."""

from __future__ import annotations

import re

JIS_MARK = re.compile(rb"\x1b\$[@B]|\x1b\(I")
_JIS_ESC = re.compile(rb"\x1b(\(B|\(J|\(I|\$@|\$B|\$\(D|\$A|\$\(C|\.A|\.F|N)")


def decode_iso2022jp(data: bytes) -> str:
    """Decode ISO-2022-JP as Microsoft's CP50221 does (JIS X 0208 via CP932); raises UnicodeDecodeError."""
    if b"\x1b$(D" in data or b"\x1b$A" in data or b"\x1b$(C" in data or b"\x1b." in data or b"\x1bN" in data:
        return data.decode("iso2022_jp_2")  # JIS X 0212 / ISO-2022-JP-2 sets: the stdlib codec covers them
    out = bytearray()
    mode = b"(B"
    pos = 0
    for match in _JIS_ESC.finditer(data):
        _jis_chunk(data[pos : match.start()], mode, out)
        mode = match.group(1)
        pos = match.end()
    _jis_chunk(data[pos:], mode, out)
    return out.decode("cp932")


def _jis_chunk(chunk: bytes, mode: bytes, out: bytearray) -> None:
    if b"\x1b" in chunk or any(b > 0x7F for b in chunk):
        raise UnicodeDecodeError("iso-2022-jp", chunk, 0, len(chunk), "unexpected byte")
    if mode in (b"(B", b"(J"):
        out += chunk
    elif mode == b"(I":
        out += bytes(b + 0x80 if 0x21 <= b <= 0x5F else b for b in chunk)
    else:  # two-byte JIS X 0208: convert each pair to its Shift_JIS/CP932 code
        text = chunk.replace(b"\r", b"").replace(b"\n", b"")
        if len(text) % 2:
            raise UnicodeDecodeError("iso-2022-jp", chunk, 0, len(chunk), "odd double-byte run")
        for i in range(0, len(text), 2):
            j1, j2 = text[i], text[i + 1]
            s1 = ((j1 - 0x21) >> 1) + 0x81
            s1 += 0x40 if s1 > 0x9F else 0
            s2 = j2 + (0x1F if j1 & 1 else 0x7E)
            s2 += 1 if j1 & 1 and s2 >= 0x7F else 0
            out += bytes((s1 & 0xFF, s2 & 0xFF))
        if chunk.endswith((b"\n", b"\r")):
            out += b"\n"
