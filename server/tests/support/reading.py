"""Support for the reading tools' tests: a tool context on the real client stack against an emulator, mailboxes with
every attachment type and with long threads, and the request log read as (endpoint, batch parts) pairs.
"""

from __future__ import annotations

import functools
import random
import struct
import zlib
from datetime import datetime, timedelta, timezone
from email import message_from_bytes, policy
from email.message import EmailMessage
from email.utils import format_datetime
from pathlib import Path
from typing import Any

from server.auth import TokenStore
from server.emulator import Emulator
from server.gmail_client import GmailClient
from server.runtime.config import load_settings
from server.runtime.observability import Metrics
from server.tests.support.attachments import build_docx, build_pdf, build_png, build_pptx, build_xlsx, zip_parts
from server.tools import ToolContext

OWNER = "me@example.com"
START = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
PPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"


def emulator_context(emulator: Emulator, token: Path, **fields: Any) -> ToolContext:
    """What `python -m server.main` builds, pointed at `emulator` (quota pacing off: it changes no requests)."""
    env = {
        "GMAIL_API_ENDPOINT": emulator.url,
        "GMAIL_TOKEN_URI": emulator.token_uri,
        "GMAIL_TOKEN_PATH": str(token),
        "GMAIL_MCP_QUOTA_UNITS_PER_S": "0",
    }
    settings = load_settings(env=env, dotenv=False)
    metrics = Metrics()
    client = GmailClient(settings, TokenStore(settings), metrics=metrics)
    return ToolContext(gmail=client, enrich_top_k=settings.enrich_top_k, metrics=metrics, **fields)


def api_calls(entries: list[dict[str, Any]]) -> list[tuple[str, str, int | None]]:
    """The Gmail API requests of a request log slice (token refreshes left out): (method, path, batch parts)."""
    return [(e["method"], e["path"], e["batch_parts"]) for e in entries if e["path"] != "/token"]


def _message(subject: str, sender: str, when: datetime, **headers: str) -> EmailMessage:
    message = EmailMessage()
    message["From"] = sender
    message["To"] = headers.pop("to", OWNER)
    message["Subject"] = subject
    message["Date"] = format_datetime(when)
    message["Delivered-To"] = OWNER
    for name, value in headers.items():
        message[name.replace("_", "-")] = value
    return message


def big_png(size: int) -> bytes:
    """A PNG whose header is valid and whose (never decoded) image data makes it `size` bytes long."""
    header = struct.pack(">IIBBBBB", 2000, 1500, 8, 2, 0, 0, 0)
    noise = random.Random(7).randbytes(max(size - 57, 0))

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", noise) + chunk(b"IEND", b"")


REPORT_PAGE_ONE = "Quarterly revenue grew 12 percent.\n" + "\n".join(
    f"Region {n}: revenue {100 + n} million, margin {20 + n % 7} percent." for n in range(1, 16)
)


@functools.cache  # zip members carry the current time: build once, so tests compare the bytes served
def attachment_files() -> dict[str, tuple[str, bytes, str]]:
    """File name -> (content type, bytes, a phrase its extracted text or notes hold)."""
    inner = _message("Hotel booking confirmed", "Hotel <stay@hotel.example>", START, Message_ID="<inner@hotel.example>")
    inner.set_content("Your room is booked for 9-12 December. Confirmation code HX-4471.\n")
    calendar = (
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nMETHOD:REQUEST\r\nBEGIN:VEVENT\r\nUID:1@example.com\r\n"
        "DTSTART:20261210T090000Z\r\nDTEND:20261210T100000Z\r\nSUMMARY:Budget review\r\n"
        "LOCATION:Room 4\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
    )
    return {
        "report.pdf": (
            "application/pdf",
            build_pdf([REPORT_PAGE_ONE, "Page two: costs fell in every region but one."]),
            "Quarterly revenue grew 12 percent.",
        ),
        "plan.docx": (
            DOCX,
            build_docx([("heading", 1, "Migration plan"), "Move the billing jobs first."]),
            "Move the billing jobs first.",
        ),
        "budget.xlsx": (XLSX, build_xlsx({"Q4": [["Item", "EUR"], ["Venue", 1800]]}), "Venue | 1800"),
        "figures.csv": ("text/csv", b"city,visitors\nLisbon,1200\nPorto,800\n", "Lisbon | 1200"),
        "deck.pptx": (PPTX, build_pptx([["Roadmap 2027", "Ship the new checkout"]]), "Ship the new checkout"),
        "notes.txt": (
            'text/plain; charset="iso-8859-1"',
            "Café menu: crème brûlée\n".encode("latin-1"),
            "Café menu: crème brûlée",
        ),
        "page.html": (
            "text/html",
            b"<html><body><h1>Release notes</h1><p>Faster search.</p></body></html>",
            "Faster search.",
        ),
        "invite.ics": ("text/calendar", calendar.encode(), "Budget review"),
        "booking.eml": ("message/rfc822", inner.as_bytes(), "Confirmation code HX-4471"),
        "photos.zip": (
            "application/zip",
            zip_parts({"lisbon/day1.jpg": b"x" * 2048, "readme.txt": "hi"}),
            "lisbon/day1.jpg",
        ),
        "pixel.png": ("image/png", build_png(), "4×3 pixels"),
        "poster.png": ("image/png", big_png(1_200_000), "2000×1500 pixels"),
        "firmware.bin": ("application/octet-stream", bytes(range(256)) * 8, "cannot be read as text"),
    }


def write_attachment_mailbox(root: Path) -> Path:
    """One message carrying every attachment type (`attachment_files`), one with a nameless part Gmail serves
    inline, and one with two files of the same name."""
    root.mkdir(parents=True, exist_ok=True)
    every = _message("Every attachment type", "Ann <ann@example.com>", START, Message_ID="<every@example.com>")
    every.set_content("All the files are attached.\n")
    for name, (content_type, data, _) in attachment_files().items():
        if content_type == "message/rfc822":
            every.add_attachment(message_from_bytes(data, policy=policy.default), filename=name)
            continue
        maintype, _, subtype = content_type.split(";")[0].partition("/")
        params = {"params": {"charset": "iso-8859-1"}} if "charset" in content_type else {}
        every.add_attachment(data, maintype=maintype, subtype=subtype, filename=name, **params)
    (root / "every.eml").write_bytes(bytes(every))

    nameless = _message("Nameless part", "Bob <bob@example.com>", START + timedelta(hours=1))
    nameless.set_content("The export is attached.\n")
    nameless.add_attachment(b"id,total\n1,99\n", maintype="text", subtype="csv", disposition="attachment")
    (root / "nameless.eml").write_bytes(bytes(nameless))

    twins = _message("Two files, one name", "Cy <cy@example.com>", START + timedelta(hours=2))
    twins.set_content("Both versions attached.\n")
    for text in ("version one", "version two"):
        twins.add_attachment(text.encode(), maintype="text", subtype="plain", filename="notes.txt")
    (root / "twins.eml").write_bytes(bytes(twins))
    return root


def write_long_thread(root: Path, count: int, *, body_lines: int = 30, quote_history: bool = False) -> Path:
    """A conversation of `count` messages between the owner and two people, each quoting its parent's words (or,
    with `quote_history`, its parent's whole text, every earlier quote included, as most mail programs do)."""
    root.mkdir(parents=True, exist_ok=True)
    people = ["Ann <ann@example.com>", f"Me <{OWNER}>", "Bob <bob@example.com>"]
    parent_words = ""
    references: list[str] = []
    for number in range(count):
        sender = people[number % 3]
        when = START + timedelta(hours=number)
        subject = "Long thread" if number == 0 else "Re: Long thread"
        headers: dict[str, str] = {"Message_ID": f"<long-{number}@example.com>", "Cc": "Bob <bob@example.com>"}
        if references:
            headers.update(In_Reply_To=references[-1], References=" ".join(references))
        if sender.endswith(f"<{OWNER}>"):
            headers["X_Gmail_Labels"] = "Sent"
        message = _message(subject, sender, when, to="Ann <ann@example.com>" if number % 3 == 1 else OWNER, **headers)
        own = "\n".join(
            f"Message {number} line {line}: point number {line} about topic {number}." for line in range(body_lines)
        )
        text = own + "\n"
        if parent_words:
            text += f"\nOn {format_datetime(when - timedelta(hours=1))} someone wrote:\n" + "\n".join(
                "> " + line for line in parent_words.split("\n")
            )
        message.set_content(text + "\n")
        (root / f"long-{number:03d}.eml").write_bytes(bytes(message))
        references.append(f"<long-{number}@example.com>")
        parent_words = text.rstrip("\n") if quote_history else own
    return root
