"""A safe, typed view of one node of a Gmail payload tree, plus small per-part helpers. Pure, never raises."""

from __future__ import annotations

import re

from server.content.text.charsets import decode_header_value, parse_header_params

# Extensions for synthesized attachment names; a table rather than `mimetypes`, which reads system files.
_EXTENSIONS = {
    "application/pdf": "pdf",
    "application/zip": "zip",
    "application/json": "json",
    "application/xml": "xml",
    "application/msword": "doc",
    "application/vnd.ms-excel": "xls",
    "application/vnd.ms-powerpoint": "ppt",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation": "pptx",
    "application/octet-stream": "bin",
    "application/ics": "ics",
    "application/pgp-signature": "asc",
    "application/pkcs7-signature": "p7s",
    "application/pkcs7-mime": "p7m",
    "image/jpeg": "jpg",
    "image/png": "png",
    "image/gif": "gif",
    "image/webp": "webp",
    "image/svg+xml": "svg",
    "text/plain": "txt",
    "text/html": "html",
    "text/calendar": "ics",
    "text/csv": "csv",
    "message/rfc822": "eml",
    "audio/mpeg": "mp3",
    "video/mp4": "mp4",
}


def first_headers(headers: object) -> dict[str, str]:
    """Map lower-cased header names to their first raw value, skipping malformed entries.

    Args:
        headers: Gmail's `headers` list of {"name": ..., "value": ...}.

    Returns:
        {name: value} with the values undecoded.
    """
    found: dict[str, str] = {}
    for item in headers if isinstance(headers, list) else ():
        if isinstance(item, dict):
            name, value = item.get("name"), item.get("value")
            if isinstance(name, str) and isinstance(value, str):
                found.setdefault(name.strip().lower(), value)
    return found


class MimePart:
    """A safe, typed view of one payload node."""

    def __init__(self, raw: object, default_mime: str = "text/plain") -> None:
        node = raw if isinstance(raw, dict) else {}
        self.node = node
        part_id = node.get("partId")
        self.part_id = part_id if isinstance(part_id, str) else ""
        self.headers = first_headers(node.get("headers"))
        ctype, self.params = parse_header_params(self.headers.get("content-type", ""))
        mime = node.get("mimeType")
        mime = mime.strip().lower() if isinstance(mime, str) else ""
        self.mime = next((m for m in (mime, ctype) if "/" in m and " " not in m), default_mime)
        self.disposition, self.disp_params = parse_header_params(self.headers.get("content-disposition", ""))
        body = node.get("body")
        self.body = body if isinstance(body, dict) else {}
        parts = node.get("parts")
        self.children = parts if isinstance(parts, list) else []

    def filename(self) -> str:
        field = self.node.get("filename")
        for candidate in (
            self.disp_params.get("filename"),
            self.params.get("name"),
            field if isinstance(field, str) else None,
        ):
            if candidate:
                name = decode_header_value(candidate).replace("\\", "/").rsplit("/", 1)[-1].strip()
                if name:
                    return name
        return ""

    def synthesized_filename(self) -> str:
        """A name for a nameless attachment: "attachment-<partId>.<extension for the MIME type>"."""
        subtype = self.mime.split("/", 1)[-1]
        ext = _EXTENSIONS.get(self.mime) or (subtype if subtype.isalnum() and len(subtype) <= 8 else "bin")
        return f"attachment-{self.part_id or '0'}.{ext}"

    def attachment_id(self) -> str | None:
        value = self.body.get("attachmentId")
        return value if isinstance(value, str) and value else None

    def size(self, data_len: int) -> int:
        size = self.body.get("size")
        return size if isinstance(size, int) and not isinstance(size, bool) and size >= 0 else data_len


def header_lines(node: object) -> str:
    """A part's headers as "Name: value" lines (used for message/delivery-status header blocks)."""
    headers = node.get("headers") if isinstance(node, dict) else None
    return "\n".join(
        f"{item['name']}: {decode_header_value(item['value'])}"
        for item in headers or ()
        if isinstance(item, dict) and isinstance(item.get("name"), str) and "value" in item
    )


def unflow(text: str, delsp: bool) -> str:
    """Join RFC 3676 format=flowed soft line breaks (a line ending in a space continues on the next)."""
    out: list[str] = []
    current: str | None = None
    current_depth = 0
    for line in text.replace("\r\n", "\n").split("\n"):
        depth = len(line) - len(line.lstrip(">"))
        content = line[depth:]
        content = content[1:] if content.startswith(" ") else content  # undo space-stuffing
        if current is not None and depth != current_depth:
            out.append(">" * current_depth + (" " if current_depth else "") + current)
            current = None
        current = content if current is None else current + content
        current_depth = depth
        if content.endswith(" ") and content != "-- ":
            current = current[:-1] if delsp else current
            continue
        out.append(">" * depth + (" " if depth else "") + current)
        current = None
    if current is not None:
        out.append(">" * current_depth + (" " if current_depth else "") + current)
    return "\n".join(out)


# A clear-signed block: armor header, "Hash:" lines, blank line, the signed text, then the signature block.
_CLEARSIGNED = re.compile(
    r"-----BEGIN PGP SIGNED MESSAGE-----[ \t]*\n(?:[A-Za-z-]+:[^\n]*\n)*[ \t]*\n(.*?)\n?"
    r"-----BEGIN PGP SIGNATURE-----.*?(?:-----END PGP SIGNATURE-----[^\n]*|\Z)",
    re.S,
)
_DASH_ESCAPE = re.compile(r"^- ", re.M)


def unarmor_signed(text: str) -> str:
    """The text of inline PGP clear-signed blocks without their armor lines and signatures (RFC 4880 §7).

    The signature cannot be checked here, and its base64 is noise to a reader; dash-escaped lines are restored.
    """
    return _CLEARSIGNED.sub(lambda m: _DASH_ESCAPE.sub("", m.group(1)), text.replace("\r\n", "\n"))
