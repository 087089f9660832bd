"""PDF: text page by page through pypdf (imported here, on first use), each page under a "--- page N ---" line.

The page tree is walked lazily (pypdf's `reader.pages` resolves every page object up front, about 0.2 ms a
page: seconds for a 10,000-page file before the first line is read), so a window costs only the pages it
needs and the deadline is checked between pages. Encrypted files are opened with the empty password when they
allow it (owner-password-only PDFs, the usual "protected" PDF); others get a note. A damaged file (usually a
truncated download) is given a trailer naming its catalog so pypdf can rebuild its cross-reference table.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from server.content.extract.model import Job
from server.content.text.tidy import tidy_text

if TYPE_CHECKING:  # pypdf is imported on first use, not with this module
    from pypdf import PageObject, PdfReader

_NO_TEXT = "(no text on this page)"
_OBJ = re.compile(rb"(\d{1,10})\s+(\d{1,5})\s+obj\b")
_INHERITED = ("/Resources", "/MediaBox", "/CropBox", "/Rotate")
_MAX_DEPTH = 64
_MAX_NODES = 500_000  # page tree nodes visited, pages included


def extract_pdf(data: bytes, job: Job) -> None:
    from pypdf.errors import DependencyError

    reader = _open(data, job)
    if reader.is_encrypted:
        try:
            opened = reader.decrypt("")
        except DependencyError:
            job.cut("encrypted PDF: its AES encryption needs the 'cryptography' package, which is not installed")
            return
        if not opened:
            job.cut("encrypted PDF: it needs a password to open, so its text cannot be read")
            return
    declared = _declared_count(reader)
    job.pages = declared
    total = f"{declared:,}" if declared is not None else "?"
    limit = max(job.limits.max_pages, 0)
    read = empty = 0
    pages = _walk_pages(reader, job)
    for index in range(limit + 1):
        if not job.proceed(f"PDF page {index + 1} of {total}"):
            break
        page = next(pages, None)
        if page is None:
            job.pages = index  # the walk is the truth when a document's /Count is wrong
            if index == 0:
                job.note("PDF: no readable page found")
            break
        if index == limit:
            job.cut(f"PDF: only the first {limit:,} of {total} pages were read (page limit)")
            break
        try:
            text = tidy_text(page.extract_text() or "")
        except Exception as exc:  # one broken page (bad font, bad stream) must not lose the others
            job.note(f"PDF page {index + 1}: its text could not be extracted ({type(exc).__name__})")
            text = ""
        read += 1
        empty += not text
        if not job.write(f"--- page {index + 1} ---\n{text or _NO_TEXT}\n\n"):
            break
    if read and empty == read:
        job.note("PDF: no text found on the pages read: probably scanned images, which are not read here")
    elif empty:
        job.note(f"PDF: {empty:,} of the {read:,} pages read have no text (scanned or image-only pages)")


def _open(data: bytes, job: Job) -> PdfReader:
    from pypdf import PdfReader

    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        if not reader.is_encrypted:
            reader.root_object["/Pages"].get_object()  # a missing catalog fails here, where a repair can help
        return reader
    except Exception as exc:
        repaired = _repaired(data)
        if repaired is None:
            raise
        reader = PdfReader(io.BytesIO(repaired), strict=False)
        job.cut(f"PDF: the file is damaged ({type(exc).__name__}); its pages were recovered as far as possible")
        return reader


def _repaired(data: bytes) -> bytes | None:
    """A damaged (usually truncated) PDF with a trailer naming its catalog appended, so pypdf rebuilds the
    cross-reference table by scanning the objects; None when no catalog object is in plain sight."""
    found = data.find(b"/Catalog")
    if found < 0:
        return None
    objects = list(_OBJ.finditer(data, max(0, found - 4096), found))
    if not objects:
        return None
    number, generation = objects[-1].group(1), objects[-1].group(2)
    return data + b"\ntrailer\n<< /Root %s %s R >>\nstartxref\n0\n%%%%EOF\n" % (number, generation)


def _declared_count(reader: PdfReader) -> int | None:
    try:
        pages: Any = reader.root_object["/Pages"].get_object()  # whatever the file holds: the except catches it
        count = pages.get("/Count")
        count = int(count) if count is not None else None
    except Exception:  # a broken page tree root: the walk will say what it finds
        return None
    return count if count is not None and 0 <= count < 10_000_000 else None


def _walk_pages(reader: PdfReader, job: Job) -> Iterator[PageObject]:
    """The document's pages in order, resolved one at a time, with inherited attributes applied (as pypdf's own
    flattening does); cycles, over-deep trees and unreadable nodes are skipped with a note."""
    from pypdf import PageObject
    from pypdf.generic import ArrayObject, DictionaryObject, IndirectObject, NameObject

    stack: list[tuple[Iterator[Any], dict[str, Any]]] = [(iter([reader.root_object.raw_get("/Pages")]), {})]
    seen: set[Any] = set()
    for _ in range(_MAX_NODES):
        if not stack:
            return
        kid = next(stack[-1][0], None)
        if kid is None:
            stack.pop()
            continue
        reference = kid if isinstance(kid, IndirectObject) else None
        key = (reference.idnum, reference.generation) if reference is not None else id(kid)
        if key in seen:
            continue
        seen.add(key)
        try:
            node = kid.get_object()
        except Exception as exc:  # a dangling or damaged page object
            job.note(f"PDF: a page object could not be read ({type(exc).__name__})")
            continue
        if not isinstance(node, DictionaryObject):
            continue
        inherited = stack[-1][1]
        if node.get("/Type") == "/Pages" or ("/Type" not in node and "/Kids" in node):
            kids = node.get("/Kids")
            kids = kids.get_object() if kids is not None else None
            if isinstance(kids, ArrayObject) and len(stack) < _MAX_DEPTH:
                inherit = dict(inherited)
                inherit.update({NameObject(name): node.raw_get(name) for name in _INHERITED if name in node})
                stack.append((iter(kids), inherit))
            continue
        page = PageObject(reader, reference)
        if reference is None:
            page.update(node)
        for name, value in inherited.items():
            if name not in page:
                page[name] = value
        yield page
    job.note("PDF: the page tree is too large to walk to its end")
