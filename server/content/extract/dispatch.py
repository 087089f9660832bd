"""extract_attachment: sniff the format, run its handler from the table, cut the requested window.

Total: any bytes with any labels give an `Extraction`; a handler's exception becomes a note naming the format,
and the text it wrote before failing is kept.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from server.content.extract.archive import extract_zip
from server.content.extract.docx import extract_docx
from server.content.extract.image import image_size
from server.content.extract.model import DEFAULT_LIMITS, Extraction, ExtractLimits, Job, clip
from server.content.extract.pdf import extract_pdf
from server.content.extract.pptx import extract_pptx
from server.content.extract.sniff import IMAGE_TYPES, image_signature, sniff
from server.content.extract.tabular import extract_csv
from server.content.extract.textual import extract_eml, extract_html, extract_ics, extract_text
from server.content.extract.xlsx import extract_xlsx
from server.content.sizes import human_size
from server.content.text.body_slice import slice_body

Handler = Callable[[bytes, Job], None]


class Format:
    """A text handler's entry: the label notes use, the MIME type results report, the handler."""

    __slots__ = ("handler", "label", "mime_type")

    def __init__(self, label: str, mime_type: str, handler: Handler) -> None:
        self.label = label
        self.mime_type = mime_type
        self.handler = handler


_OOXML = "application/vnd.openxmlformats-officedocument"
# The handler table, like email.contentmanager's: one entry per format key that `sniff` gives.
HANDLERS: dict[str, Format] = {
    "pdf": Format("PDF", "application/pdf", extract_pdf),
    "docx": Format("DOCX", f"{_OOXML}.wordprocessingml.document", extract_docx),
    "xlsx": Format("XLSX", f"{_OOXML}.spreadsheetml.sheet", extract_xlsx),
    "pptx": Format("PPTX", f"{_OOXML}.presentationml.presentation", extract_pptx),
    "csv": Format("CSV", "text/csv", extract_csv),
    "tsv": Format("TSV", "text/tab-separated-values", extract_csv),
    "text": Format("text", "text/plain", extract_text),
    "html": Format("HTML", "text/html", extract_html),
    "ics": Format("calendar", "text/calendar", extract_ics),
    "eml": Format("attached message", "message/rfc822", extract_eml),
    "zip": Format("zip", "application/zip", extract_zip),
}
_OLE_ENCRYPTED = "EncryptionInfo".encode("utf-16-le")


def extract_attachment(
    data: bytes,
    *,
    mime_type: str,
    filename: str,
    max_chars: int,
    offset: int = 0,
    limits: ExtractLimits = DEFAULT_LIMITS,
    clock: Callable[[], float] = time.monotonic,
) -> Extraction:
    """Read an attachment's bytes as text (or an image), one window at a time; pure, in memory, never raises.

    Args:
        data: The attachment's bytes (decoded from Gmail's base64url).
        mime_type: The declared Content-Type, parameters allowed ("text/plain; charset=iso-8859-1").
        filename: The attachment's file name; its extension helps when the type is generic.
        max_chars: The largest window of text to return (at least 1).
        offset: Where the window starts in the full text (a previous result's `next_offset`).
        limits: Time, size and count bounds.
        clock: Monotonic seconds; the time budget is measured on it (tests inject a fake one).

    Returns:
        The window and what is known about the document; limits met are explained in `notes`.
    """
    data = bytes(data) if isinstance(data, (bytes, bytearray, memoryview)) else b""
    filename = filename if isinstance(filename, str) else ""
    mime_type = mime_type if isinstance(mime_type, str) else ""
    max_chars = max(max_chars, 1) if isinstance(max_chars, int) and not isinstance(max_chars, bool) else 1
    offset = max(offset, 0) if isinstance(offset, int) and not isinstance(offset, bool) else 0
    try:
        return _extract(data, mime_type, filename, max_chars, offset, limits, clock)
    except Exception as exc:  # every handler is guarded below; this is the last line of defence
        declared = mime_type.split(";", 1)[0].strip().lower() or "application/octet-stream"
        return _unsupported(
            data, filename, declared, "unknown", [f"the attachment could not be read ({type(exc).__name__})"]
        )


def _extract(
    data: bytes,
    mime_type: str,
    filename: str,
    max_chars: int,
    offset: int,
    limits: ExtractLimits,
    clock: Callable[[], float],
) -> Extraction:
    declared = mime_type.split(";", 1)[0].strip().lower() or "application/octet-stream"
    if len(data) > limits.max_input_bytes:
        note = f"the file is {human_size(len(data))}, over the {human_size(limits.max_input_bytes)} limit: not read"
        return _unsupported(data, filename, declared, "unknown", [note])
    sniffed = sniff(data, mime_type, filename, limits.max_zip_entries)
    notes = [sniffed.note] if sniffed.note else []
    if sniffed.format in IMAGE_TYPES:
        return _image(data, filename, declared, sniffed.format, limits, notes)
    entry = HANDLERS.get(sniffed.format)
    if entry is None:
        if sniffed.format == "ole":
            notes.append(
                "a password-protected Office document: it cannot be read without its password"
                if _OLE_ENCRYPTED in data
                else "a legacy Office file (.doc, .xls, .ppt or Outlook .msg): its content cannot be read here"
            )
        return _unsupported(data, filename, declared, sniffed.format, notes)
    job = Job(
        limits=limits,
        clock=clock,
        wanted_chars=offset + max_chars,
        filename=filename,
        charset=sniffed.charset,
        format=sniffed.format,
    )
    try:
        entry.handler(data, job)
    except Exception as exc:  # corrupt, truncated or hostile files: keep what was read, say what went wrong
        job.cut(f"{entry.label}: the file could not be (fully) read ({type(exc).__name__}: {clip(str(exc), 200)})")
    text, capped = job.text()
    if capped:
        job.cut(f"text cut at the {limits.max_text_chars:,}-character limit")
    if not text.strip() and not job.notes:
        job.note(f"{entry.label}: no text found")
    window = slice_body(text, offset=offset, max_chars=max_chars)
    reported = declared if sniffed.format == "text" and declared.startswith("text/") else entry.mime_type
    return Extraction(
        kind="text",
        format=sniffed.format,
        text=window.text,
        offset=window.offset,
        next_offset=window.next_offset,
        truncated=window.truncated,
        total_chars=len(text),
        complete=not job.full and not job.limited,
        notes=tuple(notes + job.notes),
        filename=filename,
        mime_type=reported,
        size_bytes=len(data),
        pages=job.pages,
        sheets=job.sheets,
    )


def _image(data: bytes, filename: str, declared: str, fmt: str, limits: ExtractLimits, notes: list[str]) -> Extraction:
    if image_signature(data) != fmt:
        notes.append(f"declared as {fmt}, but the bytes are not a PNG, JPEG, GIF or WebP image")
        return _unsupported(data, filename, declared, "unknown", notes)
    size = image_size(data, fmt)
    dimensions = f", {size[0]}×{size[1]} pixels" if size else ""
    description = f"{fmt} image{dimensions}, {human_size(len(data))}"
    small = len(data) <= limits.max_image_bytes
    if not small:
        notes.append(
            f"the image is {human_size(len(data))}, over the {human_size(limits.max_image_bytes)} limit: "
            "only its description is given"
        )
    return Extraction(
        kind="image",
        format=fmt,
        text=description,
        offset=0,
        next_offset=None,
        truncated=False,
        total_chars=len(description),
        complete=True,
        notes=tuple(notes),
        filename=filename,
        mime_type=fmt,
        size_bytes=len(data),
        image_bytes=data if small else None,
    )


def _unsupported(data: bytes, filename: str, declared: str, fmt: str, notes: list[str]) -> Extraction:
    name = filename or "the attachment"
    notes = [*notes, f"{name} ({declared}, {human_size(len(data))}): its content cannot be read as text"]
    return Extraction(
        kind="unsupported",
        format=fmt,
        text="",
        offset=0,
        next_offset=None,
        truncated=False,
        total_chars=0,
        complete=False,
        notes=tuple(notes),
        filename=filename,
        mime_type=declared,
        size_bytes=len(data),
    )
