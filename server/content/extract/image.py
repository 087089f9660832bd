"""Images: the dimensions read from the file header (PNG, JPEG, GIF, WebP), without decoding any pixels."""

from __future__ import annotations

import struct

_JPEG_SOF = frozenset({0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF})
_MAX_JPEG_SEGMENTS = 10_000


def image_size(data: bytes, mime_type: str) -> tuple[int, int] | None:
    """(width, height) in pixels from the header of an image of `mime_type`, or None when unreadable."""
    try:
        if mime_type == "image/png" and data[12:16] == b"IHDR":
            return struct.unpack(">II", data[16:24])
        if mime_type == "image/gif":
            return struct.unpack("<HH", data[6:10])
        if mime_type == "image/jpeg":
            return _jpeg_size(data)
        if mime_type == "image/webp":
            return _webp_size(data)
    except struct.error:
        return None
    return None


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    position = 2
    for _ in range(_MAX_JPEG_SEGMENTS):
        while position < len(data) and data[position] == 0xFF:
            position += 1  # fill bytes before a marker
        if position + 3 > len(data):
            return None
        marker = data[position]
        position += 1
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            continue  # markers without a length
        if marker == 0xD9:
            return None
        (length,) = struct.unpack(">H", data[position : position + 2])
        if marker in _JPEG_SOF:
            height, width = struct.unpack(">HH", data[position + 3 : position + 7])
            return width, height
        position += max(length, 2)
    return None


def _webp_size(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8 " and data[23:26] == b"\x9d\x01\x2a":
        width, height = struct.unpack("<HH", data[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L" and data[20:21] == b"\x2f":
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X":
        return int.from_bytes(data[24:27], "little") + 1, int.from_bytes(data[27:30], "little") + 1
    return None
