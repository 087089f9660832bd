"""MIME helpers over stdlib `email` messages (compat32 policy, so header values stay as written).

Mail in the wild is messy: 8-bit headers without RFC 2047, charsets Python spells differently (gb2312 text
that is really GBK), unknown charsets. Every helper here degrades to replacement characters instead of
raising, because one odd message must not take the whole mailbox down.
"""

from __future__ import annotations

import base64
import codecs
import html
import re
from email import errors
from email.header import decode_header
from email.message import Message

# Charsets mail clients declare more narrowly than what they send.
_CHARSET_SUPERSETS = {
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "x-gbk": "gb18030",
    "iso-8859-1": "cp1252",
    "us-ascii": "cp1252",
    "shift_jis": "cp932",
    "shift-jis": "cp932",
    "sjis": "cp932",
    "x-sjis": "cp932",
    "euc-kr": "cp949",
    "ks_c_5601-1987": "cp949",  # Outlook's label for Korean; Python maps it to the narrower euc_kr
}
_FOLD = re.compile(r"\r?\n(?=[ \t])")
_TAGS_WITH_CONTENT = re.compile(r"(?is)<(script|style|head|title)\b.*?</\1\s*>")
_COMMENTS = re.compile(r"(?s)<!--.*?-->")
_BLOCK_TAGS = re.compile(r"(?i)<\s*(br|/p|/div|/tr|/li|/h[1-6]|/table|p|div|tr|li)\b[^>]*>")
_TAGS = re.compile(r"(?s)<[^>]*>")
_SPACE = re.compile(r"\s+")


def python_codec(charset: str | None) -> str | None:
    """The Python codec to decode a declared charset with, or None when Python does not know it."""
    if not charset:
        return None
    name = charset.strip().strip('"').lower()
    name = _CHARSET_SUPERSETS.get(name, name)
    try:
        return codecs.lookup(name).name
    except LookupError:
        return None


def decode_bytes(data: bytes, charset: str | None) -> str:
    """Text of a body in its declared charset, trusting valid non-ASCII UTF-8 over the label.

    Mislabelled mail is common (UTF-8 sent as "iso-8859-1", or no charset at all), and 8-bit text in a legacy
    charset is almost never valid UTF-8 by accident, so valid UTF-8 wins. Pure 7-bit data (ISO-2022-JP,
    ASCII) goes to the declared codec.
    """
    if not data.isascii():
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            pass
    return data.decode(python_codec(charset) or "cp1252", errors="replace")


_SMUGGLED = re.compile("[\udc80-\udcff]")


def gmail_body_text(data: bytes, charset: str | None) -> str:
    """A text part as Gmail serves it: converted to text from the declared charset, even when the bytes were
    valid UTF-8 (a PHPMailer newsletter labelled iso-8859-1 arrives as "Stakeholdersâ€™"); iso-8859-1 and
    us-ascii read as Windows-1252, bytes a single-byte charset leaves undefined as the C1 control of the same
    number. No usable charset (none, utf-8, unknown): as `decode_bytes`."""
    codec = python_codec(charset)
    if codec is None or codec.replace("_", "-") in ("utf-8", "utf-8-sig"):
        return decode_bytes(data, charset)
    if _single_byte(codec):  # no byte is ever lost: undefined ones become C1 controls
        text = data.decode(codec, errors="surrogateescape")
        return _SMUGGLED.sub(lambda m: chr(ord(m.group()) - 0xDC00), text)
    return data.decode(codec, errors="replace")


def _single_byte(codec: str) -> bool:
    # A multibyte codec reads some of these nine bytes as pairs; ISO-2022 and UTF-7 are 7-bit state machines.
    return not codec.startswith(("iso2022", "utf", "hz")) and len(_PAIRS.decode(codec, errors="replace")) == 9


_PAIRS = b"\xc3\xa9\xe4\xb8\xad\xa4\xa4\xb0\xa1"
_WORD = re.compile(r"=\?([^?\s*]+)(?:\*[^?\s]*)?\?([BbQq])\?([^?\s]*)\?=")
_WORD_GAP = re.compile(r"\?=[ \t]+=\?")


def gmail_header_value(value: str) -> str:
    """A header value as Gmail serves it in the metadata and full formats: unfolded, RFC 2047 words decoded to
    text (from their declared charset, as bodies are), raw 8-bit bytes read as Latin-1. Nothing is re-quoted:
    `=?utf-8?Q?Doe=2C_John?= <j@x>` arrives as `Doe, John <j@x>`."""
    value = _SMUGGLED.sub(lambda m: chr(ord(m.group()) - 0xDC00), _FOLD.sub("", str(value)))
    if "=?" not in value:
        return value
    out: list[str] = []
    pending: tuple[str, bytes] | None = None  # adjacent words of one charset: bytes joined before decoding
    pos = 0
    for match in _WORD.finditer(value):
        gap = value[pos : match.start()]
        data = _word_bytes(match.group(2), match.group(3))
        if data is None or python_codec(match.group(1)) is None:
            continue  # malformed or unknown charset: stays as written, inside the next gap
        if pending and not (gap.strip() == "" and pending[0] == match.group(1).lower()):
            out.append(gmail_body_text(pending[1], pending[0]))
            pending = None
        if pending is None:
            out.append(gap if gap.strip() or not out else "")
            pending = (match.group(1).lower(), data)
        else:
            pending = (pending[0], pending[1] + data)
        pos = match.end()
    if pending:
        out.append(gmail_body_text(pending[1], pending[0]))
    return "".join(out) + value[pos:]


def _word_bytes(encoding: str, payload: str) -> bytes | None:
    try:
        if encoding in "Bb":
            return base64.b64decode(payload + "=" * (-len(payload) % 4), validate=True)
        raw = payload.replace("_", " ")
        if re.search(r"=(?![0-9A-Fa-f]{2})", raw):
            return None
        return re.sub(r"=([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), raw).encode("latin-1")
    except (ValueError, UnicodeEncodeError):
        return None


_ESCAPED_BYTE = re.compile("[\udc80-\udcff]")


def unsurrogate(value: str) -> str:
    """Undoes the parser's surrogateescape on raw 8-bit header bytes, reading them as UTF-8 like Gmail."""
    if value.isascii() or not _ESCAPED_BYTE.search(value):
        return value
    return value.encode("ascii", "surrogateescape").decode("utf-8", errors="replace")


def raw_headers(part: Message, *, decoded: bool = False) -> list[tuple[str, str]]:
    """Header (name, value) pairs, unfolded, in message order: as written (RFC 2047 kept, 8-bit read as UTF-8),
    or with `decoded` as Gmail serves them (see `gmail_header_value`)."""
    if decoded:
        return [(name, gmail_header_value(value)) for name, value in part.raw_items()]
    return [(name, _FOLD.sub("", unsurrogate(str(value)))) for name, value in part.raw_items()]


def decode_header_text(value: str) -> str:
    """Human text of a header value: RFC 2047 words decoded, whitespace collapsed."""
    value = _FOLD.sub("", unsurrogate(value))
    try:
        chunks = decode_header(value)
    except Exception:  # malformed encoded words: show them as written
        return " ".join(value.split())
    # decode_header yields one str chunk when nothing is encoded, else bytes chunks with their charsets.
    text = "".join(
        decode_bytes(chunk, charset or "utf-8") if isinstance(chunk, bytes) else chunk for chunk, charset in chunks
    )
    return " ".join(text.split())


def header_text(message: Message, name: str) -> str:
    """Decoded text of every occurrence of header `name`, joined with ", "."""
    values = [value for key, value in raw_headers(message) if key.lower() == name.lower()]
    return ", ".join(decode_header_text(value) for value in values)


def filename(part: Message) -> str:
    """Attachment file name, decoded from RFC 2231 or RFC 2047 (both are common); "" when none."""
    try:
        raw = part.get_filename()
    except Exception:
        return ""
    return decode_header_text(str(raw)) if raw else ""


def is_attachment(part: Message) -> bool:
    """Gmail moves a leaf into attachments (attachmentId, no inline data) when it carries a file name."""
    return not part.is_multipart() and bool(filename(part))


def leaf_bytes(part: Message) -> bytes:
    """A leaf's content with the transfer encoding removed."""
    if part.get_content_type() == "message/rfc822" or part.is_multipart():
        inner = part.get_payload()
        if isinstance(inner, list):
            return b"".join(p.as_bytes() for p in inner if isinstance(p, Message))
    data = part.get_payload(decode=True)
    if any(isinstance(defect, errors.InvalidBase64LengthDefect) for defect in part.defects):
        # The stdlib gives up on base64 with a dangling character and returns the text undecoded; mail readers
        # (Gmail among them, presumably) decode what they can, so the emulator does too.
        letters = re.sub(r"[^A-Za-z0-9+/]", "", str(part.get_payload()))
        letters = letters[: len(letters) - (len(letters) % 4 == 1)]  # a lone trailing sextet holds no byte
        data = base64.b64decode(letters + "=" * (-len(letters) % 4))
    return data if isinstance(data, bytes) else b""


def html_to_text(markup: str) -> str:
    """Crude HTML to text: drop scripts, styles and tags, keep block breaks, unescape entities."""
    markup = _COMMENTS.sub(" ", _TAGS_WITH_CONTENT.sub(" ", markup))
    markup = _BLOCK_TAGS.sub("\n", markup)
    return html.unescape(_TAGS.sub("", markup))


def _leaf_text(part: Message) -> str:
    text = decode_bytes(leaf_bytes(part), part.get_content_charset())
    return html_to_text(text) if part.get_content_type() == "text/html" else text


def message_text(message: Message) -> str:
    """Readable text of a message: text/plain parts, HTML converted where a part has no plain alternative."""
    if message.is_multipart() and message.get_content_type() != "message/rfc822":
        children = [c for c in message.get_payload() if isinstance(c, Message)]
        if message.get_content_type() == "multipart/alternative":
            plain = [c for c in children if c.get_content_type() == "text/plain" and not is_attachment(c)]
            children = plain[:1] or children[-1:]
        return "\n".join(text for text in (message_text(c) for c in children) if text)
    if message.get_content_maintype() != "text" or is_attachment(message):
        return ""
    if message.get_content_type() not in ("text/plain", "text/html"):
        return ""
    return _leaf_text(message)


def snippet(text: str, limit: int = 200) -> str:
    """Gmail's snippet: the first ~200 characters of text, whitespace collapsed, then HTML-escaped."""
    collapsed = _SPACE.sub(" ", text).strip()
    if len(collapsed) > limit:
        collapsed = collapsed[:limit].rstrip()
    return gmail_escape(collapsed)


def gmail_escape(text: str) -> str:
    """Escapes as Gmail does in snippets: `&#39;` for the apostrophe (not Python's `&#x27;`)."""
    return (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&#39;")
    )
