"""PDF: text page by page through pypdf (imported here, on first use), each page under a "--- page N ---" line.

Encrypted files are opened with the empty password when they allow it (owner-password-only PDFs, the usual
"protected" PDF); others get a note. The deadline is checked between pages, and at most `max_pages` are read.
Pages with no text (scans) keep their marker and say so.
"""

from __future__ import annotations

import io

from server.content.extract.model import Job
from server.content.text.tidy import tidy_text

_NO_TEXT = "(no text on this page)"


def extract_pdf(data: bytes, job: Job) -> None:
    from pypdf import PdfReader
    from pypdf.errors import DependencyError

    reader = PdfReader(io.BytesIO(data), strict=False)
    if reader.is_encrypted:
        try:
            opened = reader.decrypt("")
        except DependencyError:
            job.note("encrypted PDF: its AES encryption needs the 'cryptography' package, which is not installed")
            return
        if not opened:
            job.note("encrypted PDF: it needs a password to open, so its text cannot be read")
            return
    total = len(reader.pages)
    job.pages = total
    if total == 0:
        job.note("PDF: the document has no pages")
        return
    limit = min(total, max(job.limits.max_pages, 0))
    read = empty = 0
    for index in range(limit):
        if not job.proceed(f"PDF page {index + 1} of {total:,}"):
            break
        try:
            text = tidy_text(reader.pages[index].extract_text() or "")
        except Exception as exc:  # one broken page (bad font, bad stream) must not lose the others
            job.note(f"PDF page {index + 1}: its text could not be extracted ({type(exc).__name__})")
            text = ""
        read += 1
        if not text:
            empty += 1
        if not job.write(f"--- page {index + 1} ---\n{text or _NO_TEXT}\n\n"):
            break
    else:
        if limit < total:
            job.cut(f"PDF: only the first {limit:,} of {total:,} pages were read (page limit)")
    if read and empty == read:
        job.note("PDF: no text found on the pages read: probably scanned images, which are not read here")
    elif empty:
        job.note(f"PDF: {empty:,} of the {read:,} pages read have no text (scanned or image-only pages)")
