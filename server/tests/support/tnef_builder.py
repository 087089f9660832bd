"""A small TNEF (winmail.dat) writer and LZFu compressor for test fixtures, written from the format descriptions
(MS-OXTNEF, MS-OXRTFCP) so the reader in server/content/mime/tnef.py is checked against an independent encoder.

    tnef(message=[body_attr("text")], attachments=[[rend_data(), title("a.pdf"), attach_data(b"...")]])
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Sequence

from server.content.text.rtf_text import INITIAL_DICTIONARY

SIGNATURE = 0x223E9F78
LVL_MESSAGE, LVL_ATTACHMENT = 1, 2
# Full attribute ids (type << 16 | id), as Outlook writes them.
ATT_TNEF_VERSION = 0x00089006
ATT_OEM_CODEPAGE = 0x00069007
ATT_MESSAGE_CLASS = 0x00078008
ATT_SUBJECT = 0x00018004
ATT_BODY = 0x0002800C
ATT_MAPI_PROPS = 0x00069003
ATT_ATTACH_REND_DATA = 0x00069002
ATT_ATTACH_TITLE = 0x00018010
ATT_ATTACH_DATA = 0x0006800F
ATT_ATTACHMENT = 0x00069005
PT_LONG, PT_BOOLEAN, PT_SYSTIME, PT_STRING8, PT_UNICODE, PT_BINARY = 0x0003, 0x000B, 0x0040, 0x001E, 0x001F, 0x0102


def attribute(level: int, attribute_id: int, data: bytes) -> bytes:
    checksum = sum(data) & 0xFFFF
    return struct.pack("<BII", level, attribute_id, len(data)) + data + struct.pack("<H", checksum)


def tnef(message: Sequence[bytes], attachments: Sequence[Sequence[bytes]] = (), key: int = 0x1234) -> bytes:
    head = [attribute(LVL_MESSAGE, ATT_TNEF_VERSION, struct.pack("<I", 0x00010000))]
    head.append(attribute(LVL_MESSAGE, ATT_OEM_CODEPAGE, struct.pack("<II", 1252, 0)))
    head.append(attribute(LVL_MESSAGE, ATT_MESSAGE_CLASS, b"IPM.Microsoft Mail.Note\0"))
    body = b"".join(head + list(message) + [b"".join(parts) for parts in attachments])
    return struct.pack("<IH", SIGNATURE, key) + body


def body_attr(text: str, codec: str = "cp1252") -> bytes:
    return attribute(LVL_MESSAGE, ATT_BODY, text.encode(codec) + b"\0")


def subject_attr(text: str) -> bytes:
    return attribute(LVL_MESSAGE, ATT_SUBJECT, text.encode("cp1252") + b"\0")


def mapi_attr(props: list[bytes], level: int = LVL_MESSAGE) -> bytes:
    attribute_id = ATT_MAPI_PROPS if level == LVL_MESSAGE else ATT_ATTACHMENT
    return attribute(level, attribute_id, struct.pack("<I", len(props)) + b"".join(props))


def rend_data() -> bytes:
    return attribute(LVL_ATTACHMENT, ATT_ATTACH_REND_DATA, struct.pack("<HIIHHI", 1, 0xFFFFFFFF, 0, 0, 0, 0))


def title(name: str) -> bytes:
    return attribute(LVL_ATTACHMENT, ATT_ATTACH_TITLE, name.encode("cp1252") + b"\0")


def attach_data(data: bytes) -> bytes:
    return attribute(LVL_ATTACHMENT, ATT_ATTACH_DATA, data)


# -- MAPI properties -----------------------------------------------------------------------------------------


def _pad(data: bytes) -> bytes:
    return data + b"\0" * (-len(data) % 4)


def prop_long(pid: int, value: int) -> bytes:
    return struct.pack("<HHi", PT_LONG, pid, value)


def prop_bool(pid: int, value: bool) -> bytes:
    return struct.pack("<HHI", PT_BOOLEAN, pid, int(value))


def prop_time(pid: int) -> bytes:
    return struct.pack("<HHQ", PT_SYSTIME, pid, 133_000_000_000_000_000)


def prop_unicode(pid: int, text: str) -> bytes:
    data = (text + "\0").encode("utf-16-le")
    return struct.pack("<HHII", PT_UNICODE, pid, 1, len(data)) + _pad(data)


def prop_string8(pid: int, text: str, codec: str = "cp1252") -> bytes:
    data = text.encode(codec) + b"\0"
    return struct.pack("<HHII", PT_STRING8, pid, 1, len(data)) + _pad(data)


def prop_binary(pid: int, data: bytes) -> bytes:
    return struct.pack("<HHII", PT_BINARY, pid, 1, len(data)) + _pad(data)


def prop_named_long(number: int, value: int) -> bytes:
    """A named property (id >= 0x8000) identified by a number in a property set."""
    guid = bytes(range(16))
    return struct.pack("<HH", PT_LONG, 0x8001) + guid + struct.pack("<IIi", 0, number, value)


def prop_named_string(name: str, text: str) -> bytes:
    """A named property identified by a string name."""
    guid = bytes(range(16, 32))
    encoded = (name + "\0").encode("utf-16-le")
    value = (text + "\0").encode("utf-16-le")
    head = struct.pack("<HH", PT_UNICODE, 0x8002) + guid + struct.pack("<II", 1, len(encoded)) + _pad(encoded)
    return head + struct.pack("<II", 1, len(value)) + _pad(value)


def prop_multi_long(pid: int, values: list[int]) -> bytes:
    return struct.pack("<HHI", 0x1000 | PT_LONG, pid, len(values)) + b"".join(struct.pack("<i", v) for v in values)


# -- compressed RTF ------------------------------------------------------------------------------------------


def compress_rtf(rtf: bytes, *, references: bool = True) -> bytes:
    """LZFu-compress `rtf` (greedy longest match in the 4 KB dictionary; literals only if `references` is off)."""
    dictionary = bytearray(4096)
    dictionary[: len(INITIAL_DICTIONARY)] = INITIAL_DICTIONARY
    write = len(INITIAL_DICTIONARY)
    out = bytearray()
    tokens: list[bytes] = []
    flags = 0
    pos = 0

    def put(token: bytes, is_reference: bool) -> None:
        nonlocal flags
        if is_reference:
            flags |= 1 << len(tokens)
        tokens.append(token)
        if len(tokens) == 8:
            flush()

    def flush() -> None:
        nonlocal flags
        out.append(flags)
        out.extend(b"".join(tokens))
        tokens.clear()
        flags = 0

    while pos < len(rtf):
        best_offset, best_length = 0, 0
        if references:
            for offset in range(4096):
                if offset == write:
                    continue
                # Source and destination must not overlap: the decoder copies byte by byte through the dictionary.
                limit = min(17, len(rtf) - pos, (write - offset) % 4096, (offset - write) % 4096)
                length = 0
                while length < limit and dictionary[(offset + length) % 4096] == rtf[pos + length]:
                    length += 1
                if length > best_length:
                    best_offset, best_length = offset, length
        if best_length >= 2:
            put(struct.pack(">H", (best_offset << 4) | (best_length - 2)), True)
            chunk = rtf[pos : pos + best_length]
        else:
            put(rtf[pos : pos + 1], False)
            chunk = rtf[pos : pos + 1]
        for byte in chunk:
            dictionary[write] = byte
            write = (write + 1) % 4096
        pos += len(chunk)
    put(struct.pack(">H", write << 4), True)  # the end marker: a reference to the write position
    if tokens:
        flush()
    crc = zlib.crc32(bytes(out), 0xFFFFFFFF) ^ 0xFFFFFFFF  # MS-OXRTFCP's CRC: CRC-32 without the inversions
    return struct.pack("<IIII", len(out) + 12, len(rtf), 0x75465A4C, crc) + bytes(out)


def stored_rtf(rtf: bytes) -> bytes:
    """The uncompressed ("MELA") form."""
    return struct.pack("<IIII", len(rtf) + 12, len(rtf), 0x414C454D, 0) + rtf
