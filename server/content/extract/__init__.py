"""Attachment bytes in, bounded text out: pure and in memory (nothing is written to disk, nothing fetched).

    extract_attachment(data, mime_type=..., filename=..., max_chars=..., offset=0, limits=DEFAULT_LIMITS)

The format is sniffed from the bytes (PDF, PNG, JPEG, GIF, WebP, zip containers told apart by their
[Content_Types].xml, OLE2), then the declared MIME type, then the file extension; each format has one small
handler in `dispatch.HANDLERS`. Heavy libraries (pypdf) are imported inside their handler. Every extraction is
bounded in time (a deadline checked between pages, rows and parts), in memory (capped reads of zip members,
a text sink that stops once the requested window is full) and refuses XML DTDs.
"""

from server.content.extract.dispatch import HANDLERS, extract_attachment
from server.content.extract.model import DEFAULT_LIMITS, Extraction, ExtractLimits

__all__ = ["DEFAULT_LIMITS", "HANDLERS", "ExtractLimits", "Extraction", "extract_attachment"]
