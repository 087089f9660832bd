"""The extraction layer's data: limits, the result, and the job a handler writes its text into. Pure, no I/O."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

MB = 1024 * 1024
_MAX_PENDING = 1_000  # whitespace held back between writes (a run of blank lines is not worth more)


@dataclass(frozen=True)
class ExtractLimits:
    """Bounds on one extraction; every handler stops at the first one it meets and says so in a note."""

    time_budget_s: float = 5.0  # checked between pages, rows, paragraphs and parts (never inside one)
    max_input_bytes: int = 40 * MB  # Gmail caps attachments at 25 MB
    max_text_chars: int = 1_000_000  # the whole extracted text; offsets past it read nothing
    max_pages: int = 2_000  # PDF pages and PPTX slides read
    max_sheets: int = 50
    max_rows: int = 5_000  # per sheet, and per CSV file
    max_columns: int = 100
    max_cell_chars: int = 2_000
    max_part_bytes: int = 32 * MB  # one zip member (an XML part) inflated
    max_inflated_bytes: int = 96 * MB  # all zip members of one file, inflated
    max_zip_entries: int = 10_000  # larger archives are not opened (the central directory alone would cost)
    max_listed_entries: int = 500  # zip listing lines
    max_image_bytes: int = 1 * MB  # larger images are described, not returned


DEFAULT_LIMITS = ExtractLimits()


@dataclass(frozen=True)
class Extraction:
    """What an attachment reads as, one window of it at a time.

    `text` is `full_text[offset:offset + len(text)]`; pass `next_offset` back as `offset` for the next window,
    and the windows concatenate to the full text. Extraction stops once the requested window is filled, so
    `total_chars` is the length of the text read so far: the whole text's length only when `complete`.

    Always read `notes` with the text: a file of a known format that could not be read (encrypted, corrupt, a
    refused DTD) is kind "text" with whatever text came before the failure (often none) and a note saying why;
    limits met (time, pages, rows, sheets, bytes) are notes too. Images carry a one-line description in `text`
    and, when small enough, their bytes. Unsupported files have no text and a note with name, type and size.
    """

    kind: str  # "text" | "image" | "unsupported"
    format: str  # "pdf", "docx", "xlsx", "pptx", "csv", "tsv", "text", "html", "ics", "eml", "zip", "image/png"...
    text: str
    offset: int
    next_offset: int | None
    truncated: bool  # more text follows this window
    total_chars: int
    complete: bool  # the whole document was read (no limit, deadline or early stop cut it)
    notes: tuple[str, ...]
    filename: str
    mime_type: str  # the type the bytes were read as (sniffed where the bytes tell, else the declared one)
    size_bytes: int
    pages: int | None = None  # PDF pages or PPTX slides in the document
    sheets: tuple[str, ...] | None = None  # XLSX sheet names, in workbook order
    image_bytes: bytes | None = None  # images at most `max_image_bytes`, as sent


class Job:
    """The text sink and budget one handler works against.

    Handlers `write` text and check `proceed` between units of work (pages, rows, paragraphs, parts). The sink
    keeps at most `capacity` characters: the requested window plus one (to know whether more follows), or the
    `max_text_chars` cap plus one; past that `write` drops text and returns False.
    """

    def __init__(
        self,
        *,
        limits: ExtractLimits,
        clock: Callable[[], float],
        wanted_chars: int,
        filename: str,
        charset: str | None,
        format: str,
    ) -> None:
        self.limits = limits
        self.filename = filename
        self.charset = charset
        self.format = format
        self.notes: list[str] = []
        self.pages: int | None = None
        self.sheets: tuple[str, ...] | None = None
        self.inflated = 0  # bytes inflated from zip members so far
        self.timed_out = False
        self.limited = False  # a limit (pages, rows, sheets, bytes) left part of the document unread
        self._clock = clock
        self._deadline = clock() + max(float(limits.time_budget_s), 0.0)
        self._capacity = min(wanted_chars, max(limits.max_text_chars, 0)) + 1
        self._parts: list[str] = []
        self._length = 0
        self._pending = ""  # trailing whitespace of the last write, written when more text follows

    @property
    def full(self) -> bool:
        return self._length >= self._capacity

    @property
    def length(self) -> int:
        return self._length

    def write(self, text: str) -> bool:
        """Append text; False once the sink is full (the caller should stop).

        Whitespace at the start of the document is dropped and whitespace at the end of a write is held back
        until more text follows, so the text never ends in separators (and a prefix stays a prefix).
        """
        if self._length >= self._capacity:
            return False
        body = text.rstrip()
        if not body:
            self._pending = (self._pending + text)[:_MAX_PENDING] if self._length else ""
            return True
        piece = (self._pending + body) if self._length else body.lstrip()
        self._pending = text[len(body) :][:_MAX_PENDING]
        room = self._capacity - self._length
        piece = piece if len(piece) <= room else piece[:room]
        self._parts.append(piece)
        self._length += len(piece)
        return self._length < self._capacity

    def note(self, message: str) -> None:
        if message not in self.notes and len(self.notes) < 50:
            self.notes.append(message)

    def cut(self, message: str) -> None:
        """Note that a limit left part of the document unread."""
        self.limited = True
        self.note(message)

    def proceed(self, where: str) -> bool:
        """Whether to go on to the next unit: False when the sink is full or the time budget is spent.

        Args:
            where: Where the work stands, for the note, e.g. "page 3 of 200".
        """
        if self.full or self.timed_out:
            return False
        if self._clock() >= self._deadline:
            self.timed_out = True
            self.limited = True
            self.note(f"{where}: extraction stopped at the time limit ({self.limits.time_budget_s:g} s)")
            return False
        return True

    def text(self) -> tuple[str, bool]:
        """The text written and whether it was cut at `max_text_chars`."""
        text = "".join(self._parts)
        cap = max(self.limits.max_text_chars, 0)
        if len(text) > cap:
            return text[:cap], True
        return text, False


def clip(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, with an ellipsis when cut."""
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + "…"
