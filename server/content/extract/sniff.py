"""Which format an attachment is: magic bytes first, then the declared MIME type, then the file extension.

Gmail often labels attachments `application/octet-stream`, and senders mislabel them, so bytes that identify
themselves (PDF, PNG, JPEG, GIF, WebP, zip containers, OLE2) win over both labels. Text formats cannot be told
from their bytes; for those the MIME type decides unless it is generic, when the extension does. Pure, no I/O.
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass

from server.content.extract.zipcheck import open_zip
from server.content.text.charsets import parse_header_params

IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
_TEXTUAL = frozenset({"text", "csv", "tsv", "html", "ics", "eml"})
BINARY_FORMATS = frozenset({"pdf", "docx", "xlsx", "pptx", "zip", "ole", *IMAGE_TYPES})

_MIME_FORMATS = {
    "application/pdf": "pdf",
    "application/x-pdf": "pdf",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
    "application/vnd.ms-excel.sheet.macroenabled.12": "xlsx",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation": "pptx",
    "application/zip": "zip",
    "application/x-zip-compressed": "zip",
    "application/x-zip": "zip",
    "text/plain": "text",
    "text/markdown": "text",
    "text/x-log": "text",
    "application/json": "text",
    "application/xml": "text",
    "text/xml": "text",
    "application/x-yaml": "text",
    "text/html": "html",
    "application/xhtml+xml": "html",
    "text/csv": "csv",
    "text/comma-separated-values": "csv",
    "text/tab-separated-values": "tsv",
    "text/calendar": "ics",
    "application/ics": "ics",
    "message/rfc822": "eml",
    "message/global": "eml",
    "image/png": "image/png",
    "image/jpeg": "image/jpeg",
    "image/jpg": "image/jpeg",
    "image/pjpeg": "image/jpeg",
    "image/gif": "image/gif",
    "image/webp": "image/webp",
    "application/msword": "ole",
    "application/vnd.ms-excel": "ole",
    "application/vnd.ms-powerpoint": "ole",
}


def _words(text: str) -> list[str]:
    return text.split()


_TEXT_EXTENSIONS = _words("txt text log md markdown rst json xml yaml yml ini cfg conf toml sql py js ts vcf srt")
_EXTENSIONS = {
    "pdf": "pdf",
    "docx": "docx",
    "docm": "docx",
    "xlsx": "xlsx",
    "xlsm": "xlsx",
    "pptx": "pptx",
    "pptm": "pptx",
    "zip": "zip",
    "csv": "csv",
    "tsv": "tsv",
    "tab": "tsv",
    "htm": "html",
    "html": "html",
    "xhtml": "html",
    "ics": "ics",
    "ical": "ics",
    "eml": "eml",
    "png": "image/png",
    "jpg": "image/jpeg",
    "jpeg": "image/jpeg",
    "gif": "image/gif",
    "webp": "image/webp",
    "doc": "ole",
    "xls": "ole",
    "ppt": "ole",
    "msg": "ole",
    **dict.fromkeys(_TEXT_EXTENSIONS, "text"),
}
# Labels that say nothing about the content: the extension decides first.
_GENERIC = frozenset(
    {
        "",
        "application/octet-stream",
        "binary/octet-stream",
        "application/binary",
        "application/unknown",
        "application/x-download",
        "application/force-download",
        "application/download",
        "text/plain",  # mail clients label .csv, .ics and .eml files text/plain
        "application/vnd.ms-excel",  # ...and .csv files as Excel
    }
)
_OOXML_MAIN = (
    ("wordprocessingml.document.main+xml", "docx"),
    ("spreadsheetml.sheet.main+xml", "xlsx"),
    ("ms-excel.sheet.macroenabled.main+xml", "xlsx"),
    ("presentationml.presentation.main+xml", "pptx"),
    ("presentationml.slideshow.main+xml", "pptx"),
)
_OOXML_PARTS = (("word/document.xml", "docx"), ("xl/workbook.xml", "xlsx"), ("ppt/presentation.xml", "pptx"))


@dataclass(frozen=True)
class Sniffed:
    format: str  # a handler key, or "unknown"
    mime_type: str  # the declared type without parameters, lower case
    charset: str | None  # the declared charset parameter
    note: str | None  # when the label and the bytes disagree


def sniff(data: bytes, mime_type: str, filename: str, max_zip_entries: int) -> Sniffed:
    """Decide the format of an attachment.

    Args:
        data: The attachment bytes.
        mime_type: The declared Content-Type, parameters allowed ("text/plain; charset=iso-8859-1").
        filename: The attachment's file name (may be empty).
        max_zip_entries: Zip archives with more entries are not opened to look inside.

    Returns:
        The format and the declared type's parts; never raises.
    """
    declared, params = parse_header_params(mime_type if isinstance(mime_type, str) else "")
    declared = declared.strip().lower()
    charset = params.get("charset") or None
    by_label = _by_labels(declared, filename)
    magic = _by_magic(data, by_label, max_zip_entries)
    if magic is not None:
        return Sniffed(magic, declared, charset, _mismatch(by_label, magic, declared, filename))
    if by_label is not None:
        return Sniffed(by_label, declared, charset, None)
    return Sniffed("text" if looks_like_text(data) else "unknown", declared, charset, None)


def _mismatch(by_label: str | None, magic: str, declared: str, filename: str) -> str | None:
    if by_label not in BINARY_FORMATS or by_label == magic:
        return None
    if by_label == "zip" and magic in ("docx", "xlsx", "pptx"):
        return None  # Office files are zip archives
    if magic == "ole" and by_label in ("docx", "xlsx", "pptx"):
        return None  # a password-protected Office file is an OLE2 container; the result says so
    label = f"declared as {declared}" if declared not in _GENERIC else f"named {filename.strip()}"
    return f"{label}, but the content is {_describe(magic)}"


def _by_labels(declared: str, filename: str) -> str | None:
    name = filename.strip().lower() if isinstance(filename, str) else ""
    extension = name.rsplit(".", 1)[-1] if "." in name else ""
    by_mime = _MIME_FORMATS.get(declared)
    if by_mime is None and declared.startswith("text/"):
        by_mime = "text"
    by_extension = _EXTENSIONS.get(extension)
    if declared in _GENERIC:
        return by_extension or by_mime
    return by_mime or by_extension


def image_signature(data: bytes) -> str | None:
    """The image type whose signature starts `data` (PNG, JPEG, GIF, WebP), else None."""
    head = data[:16]
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def _by_magic(data: bytes, hint: str | None, max_zip_entries: int) -> str | None:
    head = data[:16]
    image = image_signature(data)
    if image:
        return image
    if head.startswith(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"):
        return "ole"
    # Readers accept a PDF header anywhere in the first KB, but text labelled as text may just mention "%PDF-".
    if data.startswith(b"%PDF-") or (b"%PDF-" in data[:1024] and hint not in _TEXTUAL):
        return "pdf"
    if head.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        return _zip_kind(data, hint, max_zip_entries)
    return None


def _zip_kind(data: bytes, hint: str | None, max_zip_entries: int) -> str:
    """docx / xlsx / pptx from [Content_Types].xml (or the main part's usual name); else zip."""
    fallback = hint if hint in ("docx", "xlsx", "pptx") else "zip"
    try:
        with open_zip(data, max_zip_entries) as archive:
            names = {name.lower() for name in archive.namelist()}
            if "[content_types].xml" in names:
                kind = _content_types_kind(archive)
                if kind:
                    return kind
            for part, kind in _OOXML_PARTS:
                if part in names:
                    return kind
            return "zip"
    except Exception:  # zipfile raises many kinds (BadZipFile, zlib.error, struct.error, EOFError...) on damage
        return fallback  # the handler says what is wrong with it


def _content_types_kind(archive: zipfile.ZipFile) -> str | None:
    info = next((i for i in archive.infolist() if i.filename.lower() == "[content_types].xml"), None)
    if info is None or info.file_size > 1024 * 1024:
        return None
    with archive.open(info) as stream:
        listing = stream.read(1024 * 1024).lower()
    for marker, kind in _OOXML_MAIN:
        if marker.encode() in listing:
            return kind
    return None


def looks_like_text(data: bytes) -> bool:
    """Whether unlabelled bytes read as text: no NUL bytes (unless UTF-16 with a BOM), few control bytes."""
    sample = data[:8192]
    if not sample:
        return True
    if sample[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return True
    if b"\x00" in sample:
        return False
    controls = sum(1 for byte in sample if byte < 32 and byte not in (9, 10, 12, 13, 27))
    return controls * 50 <= len(sample)


def _describe(fmt: str) -> str:
    names = {"ole": "a legacy Office (OLE2) file", "zip": "a zip archive", "pdf": "a PDF"}
    if fmt.startswith("image/"):
        return f"an {fmt} image"
    return names.get(fmt, f"a {fmt.upper()} document")
