"""Saving an attachment into the downloads folder the person configured (`GMAIL_MCP_DOWNLOAD_DIR`), and nowhere else.

A file name comes from the mail, so from a stranger: it may hold path separators, `..`, drive letters, control
characters, bidirectional overrides that disguise an extension (`invoice\u202efdp.exe`), names Windows reserves
for devices (`CON`, `nul.txt`, `COM1`), trailing dots and spaces Windows drops, or thousands of characters.
`safe_filename` keeps a readable name that is a single path component on every platform; `save_file` writes it
with exclusive creation (never over an existing file, never through a planted symlink), adding " (2)", " (3)"...
on collisions, and checks the final path's parent is the folder itself.
"""

from __future__ import annotations

import os
import re
import unicodedata
from pathlib import Path

MAX_NAME_BYTES = 200  # most file systems allow 255 bytes per name; room is left for " (999)"
MAX_COLLISIONS = 999
# Characters Windows forbids in names, path separators everywhere, and C0/C1 control characters.
_FORBIDDEN = re.compile(r'[<>:"/\\|?*\x00-\x1f\x7f-\x9f]')
# Format characters that reorder or hide text: bidi embeddings/overrides/isolates, zero-width characters.
_INVISIBLE = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff\u061c]")
_RESERVED = re.compile(r"^(?:con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³]|conin\$|conout\$)$", re.I)
_SPACES = re.compile(r"\s+")


def safe_filename(name: str, *, fallback: str = "attachment.bin") -> str:
    """A file name that is one harmless path component on Linux, macOS and Windows, as close to `name` as possible.

    Args:
        name: The attachment's file name as the mail gives it.
        fallback: Used when nothing usable is left (must itself be safe).

    Returns:
        The sanitized name: no separators or reserved characters, not `.`/`..`, not a Windows device name, no
        leading or trailing dots and spaces, at most MAX_NAME_BYTES bytes of UTF-8 with its extension kept.
    """
    text = unicodedata.normalize("NFC", name if isinstance(name, str) else "")
    text = text.replace("\\", "/").rsplit("/", 1)[-1]  # a path in the name: only its last part
    text = _INVISIBLE.sub("", text)
    text = _FORBIDDEN.sub("_", text)
    text = _SPACES.sub(" ", text).strip(" .")
    if not text or set(text) <= {"_", "."}:
        return fallback
    if _RESERVED.match(text.split(".", 1)[0].strip()):  # Windows reserves "nul.txt" and "CON.tar.gz" alike
        text = "_" + text
    stem, dot, extension = text.rpartition(".")
    if not dot or not stem:
        stem, extension = text, ""
    extension = _clip_bytes(extension, 20).rstrip(" ")  # clipping can end it on a space Windows would drop
    suffix = f".{extension}" if extension else ""
    stem = _clip_bytes(stem, MAX_NAME_BYTES - len(suffix.encode("utf-8"))).rstrip(" .") or "attachment"
    return stem + suffix


def save_file(folder: Path, name: str, data: bytes) -> Path:
    """Writes `data` into `folder` under `safe_filename(name)` (or a numbered variant); returns the path.

    Raises:
        OSError: the folder cannot be created or written, or MAX_COLLISIONS names are taken.
    """
    folder = folder.expanduser()
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    root = folder.resolve()
    base = safe_filename(name)
    stem, dot, extension = base.rpartition(".")
    if not dot or not stem:
        stem, dot, extension = base, "", ""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0) | getattr(os, "O_NOFOLLOW", 0)
    for number in range(1, MAX_COLLISIONS + 1):
        candidate = base if number == 1 else f"{stem} ({number}){dot}{extension}"
        path = root / candidate
        if path.parent != root:  # cannot happen for a sanitized name; checked because the cost of a miss is high
            raise OSError(f"refusing to write outside {root}")
        try:
            descriptor = os.open(path, flags, 0o600)
        except FileExistsError:
            continue
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
        return path
    raise FileExistsError(f"{MAX_COLLISIONS} files named like {base!r} already exist in {root}")


def _clip_bytes(text: str, limit: int) -> str:
    encoded = text.encode("utf-8")
    if len(encoded) <= limit:
        return text
    return encoded[: max(limit, 0)].decode("utf-8", "ignore")
