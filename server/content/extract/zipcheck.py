"""Opening zip containers safely: the central directory is sized before `zipfile` reads it, and members are read
through a reader that stops at a byte cap whatever their headers declare. Pure, in memory.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable
from typing import IO

_EOCD = b"PK\x05\x06"
_ZIP64_LOCATOR = b"PK\x06\x07"
_ZIP64_EOCD = b"PK\x06\x06"
_MAX_BYTES_PER_ENTRY = 1024  # central directory bytes per entry: 46 + name + extra + comment, generously


class ZipTooLarge(ValueError):
    """The archive's directory is too large to open."""


def directory_size(data: bytes) -> tuple[int, int] | None:
    """(entries, central directory bytes) from the end-of-central-directory record, or None when absent."""
    end = data.rfind(_EOCD, max(0, len(data) - 22 - 65535))
    if end < 0 or end + 22 > len(data):
        return None
    entries = int.from_bytes(data[end + 10 : end + 12], "little")
    size = int.from_bytes(data[end + 12 : end + 16], "little")
    if entries == 0xFFFF or size == 0xFFFFFFFF:
        record = data.rfind(_ZIP64_EOCD, max(0, end - 20 - 1024 * 1024), max(end - 20, 0) + 4)
        if data[end - 20 : end - 16] == _ZIP64_LOCATOR and record >= 0 and record + 48 <= len(data):
            entries = int.from_bytes(data[record + 32 : record + 40], "little")
            size = int.from_bytes(data[record + 40 : record + 48], "little")
    return entries, size


def open_zip(data: bytes, max_entries: int) -> zipfile.ZipFile:
    """A ZipFile over `data`, refused (ZipTooLarge) when its directory lists more than `max_entries` entries.

    Raises:
        ZipTooLarge: Too many entries (or a directory too large for the entries it claims).
        zipfile.BadZipFile: Not a zip archive, or a broken one.
    """
    sized = directory_size(data)
    if sized is None:
        raise zipfile.BadZipFile("no end-of-central-directory record (not a zip archive, or a truncated one)")
    entries, size = sized
    if entries > max_entries or size > max(max_entries, 1) * _MAX_BYTES_PER_ENTRY:
        raise ZipTooLarge(f"the archive lists {entries:,} entries (more than {max_entries:,} are not opened)")
    return zipfile.ZipFile(io.BytesIO(data))


class CappedReader(io.RawIOBase):
    """Reads a stream up to `cap` bytes, then reports end of file; `cut` says whether more data was there.

    `on_read` is told every chunk size, so a caller can keep a budget across several members.
    """

    def __init__(self, stream: IO[bytes], cap: int, on_read: Callable[[int], object] | None = None) -> None:
        super().__init__()
        self._stream = stream
        self._left = max(cap, 0)
        self._on_read = on_read
        self.cut = False

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        if self._left <= 0:
            if not self.cut and self._stream.read(1):
                self.cut = True
            return b""
        want = self._left if size is None or size < 0 else min(size, self._left)
        chunk = self._stream.read(want)
        self._left -= len(chunk)
        if self._on_read is not None and chunk and self._on_read(len(chunk)) is False:
            self._left = 0
            self.cut = True
        return chunk

    def close(self) -> None:
        try:
            self._stream.close()
        finally:
            super().close()
