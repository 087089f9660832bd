"""Text-like attachments through the mail text pipeline: plain text, HTML, iCalendar and attached messages.

Bytes are decoded with the project's charset decoder (the declared `charset` parameter first where given,
strict UTF-8 and a guess otherwise), HTML goes through `html_to_text`, invites through `summarize_calendar`
(one line per event) and .eml / message/rfc822 files through the message parser.
"""

from __future__ import annotations

import re

from server.content.extract.model import Job, clip
from server.content.message import parse_message
from server.content.mime.raw import payload_from_bytes
from server.content.sizes import human_size
from server.content.text.calendar_text import summarize_calendar
from server.content.text.charsets import decode_text
from server.content.text.html_text import html_to_text
from server.content.text.tidy import tidy_text

_META_CHARSET = re.compile(rb"""<meta[^>]{0,200}?charset\s*=\s*["']?([A-Za-z0-9._:-]{1,40})""", re.I)
_VEVENT = re.compile(r"^BEGIN:VEVENT[ \t]*\r?$", re.I | re.M)
_MAX_EVENTS = 500
_HEADERS = (("From", "from"), ("To", "to"), ("Cc", "cc"), ("Date", "date"), ("Subject", "subject"))


def decode_prefix(data: bytes, job: Job, label: str, charset: str | None = None) -> str:
    """The bytes decoded as text, at most enough bytes for `max_text_chars` characters (4 bytes each).

    The prefix length depends on the limits only, never on the window asked for, so every window of one file
    is cut from the same text.
    """
    budget = (max(job.limits.max_text_chars, 0) + 1) * 4
    if len(data) > budget:
        job.cut(f"{label}: only the first {human_size(budget)} of {human_size(len(data))} were decoded")
        data = data[:budget]
        text, _ = decode_text(data, charset or job.charset)
        return text.rstrip("\ufffd")  # a character cut in half
    return decode_text(data, charset or job.charset)[0]


def extract_text(data: bytes, job: Job) -> None:
    job.write(tidy_text(decode_prefix(data, job, "text")))


def extract_html(data: bytes, job: Job) -> None:
    charset = job.charset
    if not charset:
        meta = _META_CHARSET.search(data[:4096])
        charset = meta.group(1).decode("ascii") if meta else None
    job.write(tidy_text(html_to_text(decode_prefix(data, job, "HTML", charset))))


def extract_ics(data: bytes, job: Job) -> None:
    text = decode_prefix(data, job, "calendar")
    starts = [match.start() for match in _VEVENT.finditer(text)]
    header = text[: starts[0]] if starts else ""
    written = 0
    for index, start in enumerate(starts[:_MAX_EVENTS]):
        if not job.proceed(f"calendar event {index + 1} of {len(starts):,}"):
            return
        end = starts[index + 1] if index + 1 < len(starts) else len(text)
        summary = summarize_calendar(header + text[start:end])
        if summary:
            written += 1
            if not job.write(summary + "\n"):
                return
    if len(starts) > _MAX_EVENTS:
        job.cut(f"calendar: only the first {_MAX_EVENTS} of {len(starts):,} events were summarized")
    if not written:
        job.note("calendar: no event found; the file's text follows")
        job.write(tidy_text(text))


def extract_eml(data: bytes, job: Job) -> None:
    message = parse_message({"payload": payload_from_bytes(data)})
    lines = [f"{label}: {clip(message.headers[key], 2000)}" for label, key in _HEADERS if message.headers.get(key)]
    if not job.write("\n".join(lines) + "\n\n" if lines else ""):
        return
    if not job.write(message.body_text or "(no body text)"):
        return
    if message.attachments:
        listed = [
            f"{item.filename or '(unnamed)'} ({item.mime_type}, {human_size(item.size)})"
            for item in message.attachments[:100]
        ]
        more = len(message.attachments) - len(listed)
        job.write("\n\nAttachments: " + ", ".join(listed) + (f" and {more:,} more" if more > 0 else "") + "\n")
    for note in message.notes[:10]:
        job.note(f"attached message: {note}")
