"""The MIME walk over a Gmail `full` payload tree: which parts make the body, which are attachments, what to note.

Pure and total: any node shape (missing keys, wrong types) is read defensively. Nesting is bounded by
MAX_DEPTH and the number of parts by MAX_PARTS, so hostile trees (or shared-reference DAGs) cost bounded work.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from urllib.parse import unquote

from server.content.mime.choice import MAX_PARTS, is_placeholder, related_root
from server.content.mime.part import MimePart, header_lines, unarmor_signed, unflow
from server.content.mime.raw import payload_from_bytes
from server.content.mime.tnef import TnefContent, describe_tnef, read_tnef
from server.content.security.hidden_text import plain_repeats_hidden
from server.content.text.calendar_text import summarize_calendar
from server.content.text.charsets import decode_header_value, decode_text, lenient_b64, mojibake_candidate
from server.content.text.html_text import convert_html
from server.content.text.html_visibility import HiddenSegment
from server.content.text.tidy import tidy_text

MAX_DEPTH = 100
MAX_GUESSES = 64
FORWARD_MARKER = "---------- Forwarded message ----------"
RETURNED_MARKER = "---------- Returned message ----------"
_PART_SEPARATOR = "\n\n-----\n\n"
_ENCRYPTED = "[This message is encrypted ({}); its body cannot be read here.]"
_BODY_TEXT = {
    "text/plain",
    "text/html",
    "text/calendar",
    "text/enriched",
    "text/watch-html",
    "text/x-amp-html",
    "message/delivery-status",
    "message/disposition-notification",
    "text/rfc822-headers",
}
_PKCS7 = {"application/pkcs7-mime", "application/x-pkcs7-mime"}
_TNEF = {"application/ms-tnef", "application/vnd.ms-tnef"}
TNEF_SOURCE = "application/ms-tnef"
_CID_REF = re.compile(r"""cid:([^"'\s)>]+)""", re.I)


@dataclass(frozen=True)
class AttachmentInfo:
    """An attachment (or inline resource) of a message; its bytes are fetched separately by attachment_id."""

    filename: str
    mime_type: str
    size: int
    attachment_id: str | None
    part_id: str
    inline: bool
    content_id: str | None


@dataclass
class WalkResult:
    """What the walk found: the readable text, where it came from, the HTML source, attachments and notes."""

    text: str
    source: str
    html: str | None
    attachments: list[AttachmentInfo]
    notes: list[str]
    hidden: tuple[HiddenSegment, ...] = ()  # text of the HTML parts a reader would not see
    hidden_chars: int = 0
    link_hosts: tuple[str, ...] = ()  # hosts the HTML parts' links point to


@dataclass
class _Piece:
    text: str = ""
    source: str = "none"
    hidden: tuple[HiddenSegment, ...] = ()


class _Walker:
    def __init__(self, attachment_bytes: Mapping[str, bytes] | None = None, include_hidden: bool = False) -> None:
        self.fetched = attachment_bytes if isinstance(attachment_bytes, Mapping) else {}
        self.tnef: list[tuple[str, TnefContent | None]] = []  # (file name, what it holds; None: bytes absent)
        self.include_hidden = include_hidden
        self.hidden: list[HiddenSegment] = []
        self.hidden_chars = 0
        self.link_hosts: dict[str, None] = {}
        self.attachments: list[AttachmentInfo] = []
        self.notes: list[str] = []
        self.html: str | None = None
        self.cids: set[str] = set()
        self.budget = MAX_PARTS
        self.forward_depth = 0
        self.report_depth = 0
        self.guesses_left = MAX_GUESSES  # charset guessing costs ~8 trial decodes: capped per message

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def render(self, raw: object, depth: int, default: str = "text/plain") -> _Piece:
        if depth > MAX_DEPTH:
            self.note(f"MIME nesting deeper than {MAX_DEPTH} levels: inner parts skipped")
            return _Piece()
        self.budget -= 1
        if self.budget < 0:
            self.note(f"more than {MAX_PARTS} MIME parts: the rest skipped")
            return _Piece()
        part = MimePart(raw, default)
        mime = part.mime
        if mime.startswith("multipart/"):
            return self.multipart(part, depth)
        if mime in ("message/rfc822", "message/global"):
            return self.forwarded(part, depth)
        if mime in _PKCS7:
            return self.smime(part)
        if mime in _TNEF or part.filename().lower() == "winmail.dat":
            self.winmail(part)
            return _Piece()
        if self.is_attachment(part):
            self.attach(part)
            return _Piece()
        if mime == "message/delivery-status" and part.children:  # parsed as header blocks, one per recipient
            blocks = (header_lines(kid) for kid in part.children[:50])
            return _Piece("\n\n".join(block for block in blocks if block), "text/plain")
        data = self.data(part)
        if not data and part.attachment_id():
            self.attach(part)
            self.note(f"part {part.part_id or '(top)'}: Gmail sent the {mime} text as an attachment (not included)")
            return _Piece()
        if mime in ("text/x-amp-html", "text/watch-html"):
            return _Piece()  # reduced alternatives of the real HTML part
        if mime == "text/html":
            source = self.decode(part, data)
            if self.html is None and not self.forward_depth:
                self.html = source
            self.cids.update(unquote(ref).lower() for ref in _CID_REF.findall(source))
            converted = convert_html(source, self.include_hidden)
            self.hidden.extend(converted.hidden)
            self.hidden_chars += converted.hidden_chars
            self.link_hosts.update(dict.fromkeys(converted.link_hosts))
            return _Piece(converted.text, "text/html", converted.hidden)
        if mime == "text/calendar":
            summary = summarize_calendar(self.decode(part, data))
            if summary:
                self.note(summary)
            return _Piece(summary or "", "calendar")
        return self.plain(part, data)

    # -- containers ------------------------------------------------------------------------------------------
    def multipart(self, part: MimePart, depth: int) -> _Piece:
        kids = part.children
        subtype = part.mime.split("/", 1)[1]
        if subtype == "alternative":
            return self.alternative(kids, depth)
        if subtype == "related" and kids:
            root = related_root(part, kids)
            piece = self.render(kids[root], depth + 1)
            for index, kid in enumerate(kids):
                if index != root:
                    self.resource(kid, depth + 1)
            return piece
        if subtype == "signed":
            protocol = part.params.get("protocol", "").lower()
            kind = "S/MIME" if "pkcs7" in protocol else "PGP/MIME" if "pgp" in protocol else "unknown type"
            self.note(f"signed ({kind}): signature not verified; the signature part is not listed")
            return self.render(kids[0], depth + 1) if kids else _Piece()
        if subtype == "encrypted":
            self.note("encrypted (PGP/MIME): body not readable")
            return _Piece(_ENCRYPTED.format("PGP/MIME"), "encrypted")
        if subtype == "report":  # a bounce or receipt: its message/rfc822 part is the returned original
            self.report_depth += 1
            piece = self.mixed(kids, depth, "text/plain")
            self.report_depth -= 1
            return piece
        return self.mixed(kids, depth, "message/rfc822" if subtype == "digest" else "text/plain")

    def alternative(self, kids: list[object], depth: int) -> _Piece:
        pieces = [self.render(kid, depth + 1) for kid in kids]
        plain = next((p for p in pieces if p.source == "text/plain"), None)
        rich = next((p for p in reversed(pieces) if p.source == "text/html"), None)  # last = most faithful
        if plain and rich:
            if is_placeholder(plain.text, rich.text):
                self.note("the text/plain alternative is a placeholder: body taken from the HTML part")
                return rich
            if rich.hidden and plain_repeats_hidden(plain.text, rich.hidden, rich.text):
                self.note("the text/plain alternative shows text the HTML part hides: body taken from the HTML part")
                return rich
            return plain
        return plain or rich or next((p for p in pieces if p.text), _Piece())

    def mixed(self, kids: list[object], depth: int, default: str) -> _Piece:
        texts: list[str] = []
        source = "none"
        for kid in kids:
            piece = self.render(kid, depth + 1, default)
            if piece.text.strip():
                if not texts:
                    source = piece.source
                    texts.append(piece.text.strip())
                else:
                    marked = piece.text.startswith((FORWARD_MARKER, RETURNED_MARKER))
                    texts.append(("\n\n" if marked else _PART_SEPARATOR) + piece.text.strip())
        return _Piece("".join(texts), source)

    def resource(self, raw: object, depth: int) -> None:
        """A non-root part of multipart/related: an attachment (images referenced by cid become inline)."""
        part = MimePart(raw)
        if part.mime.startswith(("multipart/", "message/")):
            self.render(raw, depth)
        elif self.spend():
            self.attach(part)

    def forwarded(self, part: MimePart, depth: int) -> _Piece:
        kids = part.children
        if part.disposition == "attachment" or (part.attachment_id() and not kids):
            self.attach(part)
        if len(kids) == 1:
            inner: object = kids[0]
        elif kids:
            inner = {"mimeType": "multipart/mixed", "parts": kids, "headers": part.node.get("headers")}
        else:
            data = self.data(part)
            if not data:
                return _Piece()
            inner = payload_from_bytes(data, MAX_DEPTH - depth)
        headers = MimePart(inner).headers
        if not any(key in headers for key in ("from", "subject", "date")):
            headers = part.headers  # some payloads carry the inner message's headers on the rfc822 part itself
        returned = self.report_depth > 0
        lines = [RETURNED_MARKER if returned else FORWARD_MARKER]
        for key in ("From", "Date", "Subject", "To"):
            value = decode_header_value(headers.get(key.lower(), ""))
            if value:
                lines.append(f"{key}: {value}")
        self.forward_depth += 1
        piece = self.render(inner, depth + 1)
        self.forward_depth -= 1
        self.note("returned (bounced) message included" if returned else "forwarded message included")
        text = "\n".join(lines) + ("\n\n" + piece.text if piece.text else "")
        return _Piece(text, piece.source if piece.text else "text/plain")

    def smime(self, part: MimePart) -> _Piece:
        kind = part.params.get("smime-type", "").lower()
        if "signed" in kind:
            self.note("signed (S/MIME, opaque): the content is inside the signature and not readable here")
            return _Piece("[This message is S/MIME signed-data; its content cannot be read here.]", "encrypted")
        if "compressed" in kind:
            self.note("compressed (S/MIME): body not readable")
            return _Piece("[This message is S/MIME compressed; its body cannot be read here.]", "encrypted")
        self.note("encrypted (S/MIME): body not readable")
        return _Piece(_ENCRYPTED.format("S/MIME"), "encrypted")

    def winmail(self, part: MimePart) -> None:
        """Outlook's TNEF wrapper: listed as an attachment; its body and files are read when its bytes are here
        (raw messages, or bytes the caller fetched), and used as the body only if nothing else gives one."""
        self.attach(part)
        name = part.filename() or "winmail.dat"
        attachment_id = part.attachment_id()
        data = self.data(part) or (self.fetched.get(attachment_id, b"") if attachment_id else b"")
        if len(self.tnef) < 8:
            self.tnef.append((name, read_tnef(data) if isinstance(data, bytes) and data else None))

    # -- leaves -------------------------------------------------------------------------------------------------
    def is_attachment(self, part: MimePart) -> bool:
        if part.disposition == "attachment":
            return True
        if part.mime in _BODY_TEXT:
            return bool(part.filename()) and part.disposition != "inline"
        if part.mime.startswith("text/"):
            return bool(part.filename())
        return True

    def spend(self) -> bool:
        self.budget -= 1
        if self.budget < 0:
            self.note(f"more than {MAX_PARTS} MIME parts: the rest skipped")
        return self.budget >= 0

    def attach(self, part: MimePart) -> None:
        data = self.data(part) if part.mime in ("text/calendar", "application/ics") else b""
        if data:
            summary = summarize_calendar(self.decode(part, data))
            if summary:
                self.note(summary)
        filename = part.filename() or part.synthesized_filename()
        content_id = " ".join(part.headers.get("content-id", "").split()).strip("<>").strip() or None
        body_data = part.body.get("data")
        size = part.size(len(body_data) * 3 // 4 if isinstance(body_data, str) else 0)
        self.attachments.append(
            AttachmentInfo(
                filename, part.mime, size, part.attachment_id(), part.part_id, part.disposition == "inline", content_id
            )
        )

    def data(self, part: MimePart) -> bytes:
        data = part.body.get("data")
        if not isinstance(data, str) or not data:
            return b""
        try:
            return base64.urlsafe_b64decode(data + "=" * (-len(data) % 4))
        except (binascii.Error, ValueError):
            self.note(f"part {part.part_id or '(top)'}: invalid base64, decoded what was readable")
            return lenient_b64(data)

    def decode(self, part: MimePart, data: bytes) -> str:
        declared = part.params.get("charset")
        text, how = decode_text(data, declared, guess=self.guesses_left > 0)
        # Any other path may have run the guesser, and so may the mojibake check on UTF-8 text.
        self.guesses_left -= how not in ("utf-8", "empty") or mojibake_candidate(text, declared)
        where = f"part {part.part_id or '(top)'}"
        if how.endswith("!"):
            self.note(f"{where}: some bytes matched no charset and were replaced with U+FFFD")
        elif how.endswith("?") and declared:
            self.note(f"{where}: declared charset {declared!r} did not fit; decoded as {how[:-1]}")
        return text

    def plain(self, part: MimePart, data: bytes) -> _Piece:
        text = self.decode(part, data)
        if part.params.get("format", "").lower() == "flowed":
            text = unflow(text, part.params.get("delsp", "").lower() == "yes")
        if "-----BEGIN PGP MESSAGE-----" in text:
            self.note("encrypted (inline PGP): body not readable")
        elif "-----BEGIN PGP SIGNED MESSAGE-----" in text:
            self.note("signed (inline PGP): signature not verified")
            text = unarmor_signed(text)
        return _Piece(tidy_text(text), "text/plain")


def _tnef_notes(walker: _Walker, piece: _Piece) -> _Piece:
    """Say what each winmail.dat is and holds; its text becomes the body when the message has no other."""
    for name, content in walker.tnef:
        body, notes = describe_tnef(name, content, has_body=bool(piece.text.strip()))
        if body:
            piece = _Piece(tidy_text(body), TNEF_SOURCE)
        for text in notes:
            walker.note(text)
    return piece


def walk_payload(
    payload: object, attachment_bytes: Mapping[str, bytes] | None = None, *, include_hidden: bool = False
) -> WalkResult:
    """Walk a Gmail `full` payload (or one built from a raw message) and choose the readable body.

    Args:
        payload: The `payload` part tree of a messages.get resource.
        attachment_bytes: Bytes of attachments the caller fetched, by attachment id (only winmail.dat is read).
        include_hidden: Keep HTML text a reader would not see, marked "[hidden] ... [/hidden]", in the text.

    Returns:
        The chosen text and its source, the first HTML part's source, attachments (inline set for cid
        references and inline dispositions), human-readable notes, and the HTML parts' hidden text and link hosts.
    """
    walker = _Walker(attachment_bytes, include_hidden)
    piece = walker.render(payload, 0)
    if walker.tnef:
        piece = _tnef_notes(walker, piece)
    attachments = [
        replace(item, inline=True) if item.content_id and item.content_id.lower() in walker.cids else item
        for item in walker.attachments
    ]
    source = piece.source if piece.text else "none"
    return WalkResult(
        piece.text,
        source,
        walker.html,
        attachments,
        walker.notes,
        tuple(walker.hidden),
        walker.hidden_chars,
        tuple(walker.link_hosts)[:200],
    )
