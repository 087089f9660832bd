"""Hostile attachments through `gmail_read_attachment` on a real server subprocess against the emulator: a 25 MB
PDF, zip bombs (a zip and a DOCX whose parts inflate to hundreds of megabytes, one whose header lies about its
size), a 1,000-sheet workbook and an encrypted PDF, plus the extraction layer's own hostile set (a billion-laughs
DTD, 10,000 pages, 12,000 zip entries, truncated files, a mislabelled image). Each gets a clear answer (what was
read, a note on what was not) in bounded time and size, the server's memory stays bounded, and the session keeps
serving. Threads of hostile mail are read the same way.

The files are built in a temporary directory by this module (nothing large is checked in).
"""

from __future__ import annotations

import io
import json
import struct
import time
import zipfile
from email.message import EmailMessage
from pathlib import Path

import pytest

from server.emulator import start_emulator
from server.tests.support.attachments import (
    build_pdf,
    build_xlsx,
    docx_parts,
    encrypted_pdf,
    hostile_attachments,
    zip_parts,
)
from server.tests.support.reliability import RawServer, server_env, tally

pytestmark = pytest.mark.slow  # multi-megabyte and bomb attachments: the slow tier (`pytest -m slow`)

MB = 1024 * 1024
READ = "gmail_read_attachment"
MAX_CALL_S = 15.0  # per call on a loaded 2-core machine; extraction's own budget is 5 s
MAX_ANSWER_BYTES = 60_000  # max_chars defaults to 20,000
MAX_PEAK_RSS_MB = 600.0
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


def _lying_header(data: bytes, member: str, size: int) -> bytes:
    """The zip with `member`'s uncompressed size in the central directory rewritten (a header that lies)."""
    out = bytearray(data)
    entry = out.find(b"PK\x01\x02")
    while entry >= 0:
        name_length = struct.unpack("<H", out[entry + 28 : entry + 30])[0]
        if out[entry + 46 : entry + 46 + name_length] == member.encode():
            out[entry + 24 : entry + 28] = struct.pack("<I", size)
            return bytes(out)
        entry = out.find(b"PK\x01\x02", entry + 4)
    raise AssertionError(member)


def _bomb_zip(inflated: int) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        with archive.open("zeros.bin", "w", force_zip64=True) as member:
            chunk = bytes(MB)
            for _ in range(inflated // MB):
                member.write(chunk)
        archive.writestr("readme.txt", "nothing to see")
    return buffer.getvalue()


def _bomb_docx(text_bytes: int) -> bytes:
    parts = docx_parts(["Quarterly plan"])
    run = "<w:p><w:r><w:t>" + "A" * text_bytes + "</w:t></w:r></w:p>"
    parts["word/document.xml"] = str(parts["word/document.xml"]).replace("<w:sectPr/>", run)
    return zip_parts(parts)


# case -> (file name, content type, bytes builder, what the answer must say)
CASES = {
    "25 MB PDF": (
        "scan.pdf",
        "application/pdf",
        lambda: build_pdf(["Signed contract"], image_bytes=25 * MB),
        "Signed contract",
    ),
    "zip bomb (400 MB inflated)": ("bomb.zip", "application/zip", lambda: _bomb_zip(400 * MB), "zeros.bin"),
    "DOCX bomb (200 MB of text)": ("bomb.docx", DOCX, lambda: _bomb_docx(200 * MB), "AAAA"),
    "DOCX whose header claims 4 GB": (
        "liar.docx",
        DOCX,
        lambda: _lying_header(_bomb_docx(4 * MB), "word/document.xml", 0xFFFFFFF0),
        "AAAA",
    ),
    "1,000-sheet XLSX": (
        "sheets.xlsx",
        XLSX,
        lambda: build_xlsx({f"Sheet {n}": [[n]] for n in range(1000)}),
        "Sheet 0",
    ),
    "encrypted PDF": ("locked.pdf", "application/pdf", encrypted_pdf, "password"),
}
# The extraction layer's own hostile set (billion laughs, 10,000 pages, 12,000 zip entries, truncated files, a
# PNG labelled as a PDF...), end to end too: each answered without error, in bounds, saying what it found.
for _case, (_data, _type, _name) in hostile_attachments(bomb_mb=64).items():
    CASES.setdefault(_case, (_name, _type, lambda data=_data: data, ""))


def write_hostile_attachments(root: Path) -> dict[str, str]:
    """One message per case, plus a three-message thread of them; returns {case: subject}."""
    root.mkdir(parents=True)
    subjects = {}
    for number, (case, (name, content_type, build, _)) in enumerate(CASES.items()):
        message = EmailMessage()
        message["From"] = "Mallory <mallory@evil.example>"
        message["To"] = "me@example.com"
        message["Subject"] = subjects[case] = f"hostile attachment {number:02d}"
        message["Date"] = f"Mon, 04 Mar 2024 10:{number:02d}:00 +0000"
        message["Message-ID"] = f"<hostile-{number}@evil.example>"
        if number:
            message["In-Reply-To"] = message["References"] = "<hostile-0@evil.example>"
        message.set_content(f"Please open {name}.\n")
        maintype, subtype = content_type.split("/")
        message.add_attachment(build(), maintype=maintype, subtype=subtype, filename=name)
        (root / f"case-{number}.eml").write_bytes(bytes(message))
    return subjects


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile-attachments")
    subjects = write_hostile_attachments(root / "mail")
    with start_emulator(root / "mail") as emulator:
        ids = {case: next(m.id for m in emulator.store.messages if m.subject == s) for case, s in subjects.items()}
        token = emulator.write_token(root / "token.json")
        with RawServer(server_env(emulator, token, GMAIL_MCP_TIMEOUT_S="60"), root / "stderr.log") as server:
            server.initialize()
            yield server, ids, emulator


@pytest.mark.parametrize("case", list(CASES))
def test_each_hostile_attachment_gets_a_clear_bounded_answer(hostile, case):
    server, ids, _ = hostile
    name, _, _, expected = CASES[case]
    started = time.monotonic()
    result = server.call_tool(READ, {"message_id": ids[case], "attachment": name}, timeout=120)
    elapsed = time.monotonic() - started
    size = len(json.dumps(result, ensure_ascii=False).encode())
    assert result.get("isError") is not True, result["content"][0]["text"][:500]
    data = result["structuredContent"]
    said = result["content"][0]["text"]
    assert expected in said, (case, said[:500])
    assert elapsed < MAX_CALL_S and size < MAX_ANSWER_BYTES, (case, elapsed, size)
    if case == "zip bomb (400 MB inflated)":
        assert "400.0 MB" in said and data["complete"] is True  # listed by name and size, never inflated
    elif case != "25 MB PDF":
        assert data.get("notes") or data.get("text"), case  # what was (not) read is said, never an empty answer
    tally("hostile_attachment", case=case, seconds=round(elapsed, 2), answer_bytes=size)


def test_the_session_survives_with_bounded_memory_and_threads_of_hostile_mail_read(hostile):
    server, ids, emulator = hostile
    thread_id = emulator.store.find("hostile attachment 00")[0].thread_id
    thread = server.call_tool("gmail_get_thread", {"thread_id": thread_id}, timeout=60)
    assert thread.get("isError") is not True and thread["structuredContent"]["message_count"] == len(CASES)
    again = server.call_tool(READ, {"message_id": ids["encrypted PDF"], "attachment": "locked.pdf"})
    assert "password" in again["content"][0]["text"]
    peak = server.peak_rss_mb()
    if peak is not None:
        assert peak < MAX_PEAK_RSS_MB, f"server peak RSS {peak:.0f} MB"
        tally("hostile_attachment_peak_rss", 1, megabytes=round(peak))
    assert server.stdout_is_only_json_rpc()
