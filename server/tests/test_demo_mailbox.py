"""The committed demo mailbox: reproducible, parseable, and holding every case tests and the demo rely on."""

from __future__ import annotations

import codecs
import mailbox
import re
import struct
import subprocess
import sys
import zlib
from collections import Counter
from datetime import datetime, timedelta
from email.header import decode_header, make_header
from email.message import Message
from email.utils import getaddresses, parsedate_to_datetime
from pathlib import Path

import pytest

from server import demo
from server.demo.generator.content import CHARSET_CASES, build_mails
from server.demo.generator.make_mailbox import build, render

REPO = Path(__file__).resolve().parents[2]


class Parsed:
    """One parsed message with the facts the checks need."""

    def __init__(self, raw: bytes, msg: Message) -> None:
        self.raw = raw
        self.msg = msg
        self.labels = set(msg["X-Gmail-Labels"].split(","))
        self.subject = decoded(msg["Subject"])
        self.sender = getaddresses([msg["From"]])[0][1].lower()
        self.when = parsedate_to_datetime(msg["Date"])

    @property
    def visible(self) -> bool:
        """What a default search sees: not in Spam or Trash."""
        return not self.labels & {"Spam", "Trash"}

    def parts(self) -> list[Message]:
        return list(self.msg.walk())


def decoded(value: str, fix: dict[str, str] | None = None) -> str:
    """An RFC 2047 header as text, unfolded; `fix` maps a declared charset to the codec that really fits."""
    chunks = [
        (chunk, (fix or {}).get(charset, charset) if charset else charset) for chunk, charset in decode_header(value)
    ]
    return str(make_header(chunks)).replace("\r", "").replace("\n", "")


@pytest.fixture(scope="module")
def mails() -> list[Parsed]:
    box = mailbox.mbox(demo.DEMO_MAILBOX, create=False)
    try:
        return [Parsed(box.get_bytes(key), box[key]) for key in box.iterkeys()]
    finally:
        box.close()


@pytest.fixture(scope="module")
def by_message_id(mails: list[Parsed]) -> dict[str, Parsed]:
    return {m.msg["Message-ID"]: m for m in mails}


@pytest.fixture(scope="module")
def message_ids() -> dict[str, str]:
    """Content key -> Message-ID, from the generator's own table."""
    return {item.mail.key: item.message_id for item in build(build_mails())}


# --- reproducibility -------------------------------------------------------------------------------------


def test_regenerating_gives_identical_bytes(tmp_path: Path) -> None:
    out = tmp_path / "regenerated.mbox"
    subprocess.run(
        [sys.executable, "-m", "server.demo.generator.make_mailbox", "--out", str(out)],
        cwd=REPO,
        check=True,
        capture_output=True,
    )
    assert out.read_bytes() == demo.DEMO_MAILBOX.read_bytes(), (
        "server/demo/mailbox.mbox is stale: run `python -m server.demo.generator.make_mailbox` and commit the result"
    )


def test_rendering_twice_in_one_process_is_identical() -> None:
    assert render() == render()


def test_size_and_count(mails: list[Parsed]) -> None:
    assert 80 <= len(mails) <= 100
    assert len(mails) == demo.MESSAGE_COUNT
    assert sum(m.visible for m in mails) == demo.VISIBLE_COUNT
    assert demo.DEMO_MAILBOX.stat().st_size < 1_000_000


# --- Takeout shape ---------------------------------------------------------------------------------------


def test_every_message_has_takeout_headers_and_ids(mails: list[Parsed]) -> None:
    for m in mails:
        assert m.msg["X-Gmail-Labels"], m.subject
        assert re.fullmatch(r"[1-9][0-9]{17,19}", m.msg["X-GM-THRID"]), m.subject
        assert int(m.msg["X-GM-THRID"]) < 2**64
        assert m.msg["Message-ID"] and m.msg["From"] and m.msg["To"] and m.msg["Date"]
        assert m.when.tzinfo is not None
        assert m.msg.get_from().startswith(f"{m.msg['X-GM-THRID']}@xxx ")  # Takeout's separator line
        assert ("Unread" in m.labels) != ("Opened" in m.labels), m.subject
    assert len({m.msg["Message-ID"] for m in mails}) == len(mails)


def test_label_counts_match_the_published_facts(mails: list[Parsed]) -> None:
    counts = Counter(label for m in mails for label in m.labels)
    assert dict(counts) == demo.LABEL_COUNTS


def test_label_minimums(mails: list[Parsed]) -> None:
    counts = Counter(label for m in mails for label in m.labels)
    assert counts["Inbox"] >= 35
    assert counts["Starred"] >= 4 and counts["Spam"] >= 3 and counts["Trash"] >= 3
    assert counts["Unread"] >= 5 and counts["Important"] >= 5 and counts["Sent"] >= 5
    for label in [
        "Category Promotions",
        "Category Updates",
        "Category Social",
        "Work",
        "Travel",
        "Receipts",
        "Project Phoenix",
        "Family/Kids",
    ]:
        assert counts[label] >= 1, label
    inbox_starred = [m for m in mails if {"Inbox", "Starred"} <= m.labels]
    assert len(inbox_starred) == demo.INBOX_AND_STARRED_COUNT >= 3
    assert any("Starred" in m.labels and "Inbox" not in m.labels for m in mails)  # STARRED differs from INBOX


def test_sent_messages_come_from_the_owner_and_skip_the_inbox(mails: list[Parsed]) -> None:
    for m in mails:
        if "Sent" in m.labels:
            assert m.sender == demo.DEMO_OWNER
            recipients = {a.lower() for _, a in getaddresses(m.msg.get_all("To", []))}
            assert "Inbox" not in m.labels or demo.DEMO_OWNER in recipients, m.subject
            assert "Received" not in m.msg
        else:
            assert m.sender != demo.DEMO_OWNER or "Inbox" in m.labels


def test_spam_and_trash_are_separate_and_bait_common_searches(mails: list[Parsed]) -> None:
    hidden = [m for m in mails if not m.visible]
    assert all("Inbox" not in m.labels for m in hidden)
    assert sum("meeting" in m.subject.lower() for m in hidden if "Spam" in m.labels) >= 2
    assert sum("meeting" in m.subject.lower() for m in hidden if "Trash" in m.labels) >= 2
    assert any(m.sender == demo.KNOWN_SENDER for m in hidden if "Spam" in m.labels)
    assert any(m.sender == demo.KNOWN_SENDER for m in hidden if "Trash" in m.labels)


# --- the spec's manual checks and live-test data ---------------------------------------------------------


def test_known_subject_and_sender(mails: list[Parsed]) -> None:
    visible = [m for m in mails if m.visible]
    subject_hits = [m for m in visible if demo.KNOWN_SUBJECT_WORDS in m.subject.lower()]
    sender_hits = [m for m in visible if m.sender == demo.KNOWN_SENDER]
    assert len(subject_hits) == demo.KNOWN_SUBJECT_COUNT >= 3
    assert len(sender_hits) == demo.KNOWN_SENDER_COUNT >= 3
    assert sum(demo.KNOWN_SUBJECT_WORDS in m.subject.lower() for m in mails) == demo.KNOWN_SUBJECT_COUNT_ANYWHERE
    assert sum(m.sender == demo.KNOWN_SENDER for m in mails) == demo.KNOWN_SENDER_COUNT_ANYWHERE
    assert {m.msg["Message-ID"] for m in sender_hits} >= {demo.NOTABLE["sam-q3-notes"].message_id}
    # Live test 9: from:<known sender> subject:<keyword> newer_than:30d has an answer.
    newest = max(m.when for m in mails)
    assert any(
        m.sender == demo.KNOWN_SENDER and "meeting" in m.subject.lower() and newest - m.when < timedelta(days=29)
        for m in visible
    )
    assert any(re.search(r"[\u4e00-\u9fff]", m.subject) for m in visible)  # "a mail containing Chinese"


def test_dates_spread_and_recent_windows(mails: list[Parsed]) -> None:
    newest = max(m.when for m in mails)
    assert newest == demo.NEWEST_DATE
    assert newest < demo.BASE_DATE
    assert newest - min(m.when for m in mails) > timedelta(days=600)
    assert newest - min(m.when for m in mails) < timedelta(days=731)
    visible = [m for m in mails if m.visible]
    counts = {days: sum(newest - m.when < timedelta(days=days) for m in visible) for days in (1, 3, 7, 30)}
    assert counts == demo.RECENT_COUNTS
    assert 3 <= counts[1] < counts[3] < counts[7] < counts[30] < len(visible)
    # No message sits near a window edge, so newer_than:Nd agrees after --rebase-dates (newest one hour old).
    for m in visible:
        for days in (1, 3, 7, 30):
            edge = newest - m.when - timedelta(days=days)
            assert not timedelta(hours=-2) < edge < timedelta(hours=2), (m.subject, days)


def test_threads_share_an_id_and_chain_their_replies(mails: list[Parsed], by_message_id: dict[str, Parsed]) -> None:
    threads: dict[str, list[Parsed]] = {}
    for m in mails:
        threads.setdefault(m.msg["X-GM-THRID"], []).append(m)
    with_replies = [t for t in threads.values() if len(t) > 1]
    assert len(with_replies) >= 5
    for thread in with_replies:
        root, *replies = sorted(thread, key=lambda m: m.when)
        assert "In-Reply-To" not in root.msg
        for reply in replies:
            parent = by_message_id[reply.msg["In-Reply-To"]]
            assert parent in thread and parent.when < reply.when
            assert reply.msg["References"].split()[-1] == reply.msg["In-Reply-To"]
            assert reply.subject == f"Re: {root.subject}"
    assert any("Sent" in m.labels for t in with_replies for m in t)  # a conversation, not a monologue


def test_notable_messages_exist_as_published(by_message_id: dict[str, Parsed], message_ids: dict[str, str]) -> None:
    for key, notable in demo.NOTABLE.items():
        assert message_ids[key] == notable.message_id, key
        assert by_message_id[notable.message_id].subject == notable.subject, key


# --- charsets --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", CHARSET_CASES, ids=lambda c: c.key)
def test_legacy_charset_messages_decode_to_the_intended_text(
    case, by_message_id: dict[str, Parsed], message_ids: dict[str, str]
) -> None:
    m = by_message_id[message_ids[case.key]]
    assert decoded(m.msg["Subject"], {case.declared.lower(): case.codec}) == case.subject
    parts = [
        p for p in m.parts() if p.get_content_maintype() == "text" and p.get_content_charset() == case.declared.lower()
    ]
    assert parts, f"no text part declares {case.declared}"
    body = parts[0].get_payload(decode=True)
    assert case.body_snippet in body.decode(case.codec)
    if codecs.lookup(case.codec).name != codecs.lookup(case.declared).name:
        # The label really understates or misstates the bytes: trusting it alone loses text.
        assert body.decode(case.declared, errors="replace") != body.decode(case.codec)


def test_every_legacy_charset_and_both_encoded_word_forms_appear(mails: list[Parsed]) -> None:
    declared = {p.get_content_charset() for m in mails for p in m.parts() if p.get_content_maintype() == "text"}
    for charset in [
        "gb2312",
        "gbk",
        "gb18030",
        "big5",
        "iso-2022-jp",
        "shift_jis",
        "euc-kr",
        "windows-1252",
        "iso-8859-1",
        "utf-8",
    ]:
        assert charset in declared, charset
    subjects = " ".join(m.msg["Subject"] for m in mails)
    for word in [
        "=?GB2312?B?",
        "=?GB2312?Q?",
        "=?GBK?Q?",
        "=?GB18030?B?",
        "=?Big5?B?",
        "=?ISO-2022-JP?B?",
        "=?Shift_JIS?B?",
        "=?EUC-KR?B?",
        "=?windows-1252?Q?",
        "=?UTF-8?B?",
    ]:
        assert word in subjects, word
    assert any(re.search(r"[\U0001F300-\U0001FAFF]", m.subject) for m in mails)  # emoji in UTF-8


# --- MIME variety ----------------------------------------------------------------------------------------


def _types(m: Parsed) -> list[str]:
    return [p.get_content_type() for p in m.parts()]


def test_html_only_newsletters_and_placeholder_alternatives(mails: list[Parsed]) -> None:
    html_only = [m for m in mails if m.msg.get_content_type() == "text/html"]
    assert len(html_only) >= 3
    markup = " ".join(m.msg.get_payload(decode=True).decode(m.msg.get_content_charset()) for m in html_only)
    for needle in ["<table", 'style="', "<style", "<script", 'width="1" height="1"', "display:none", "&rsquo;"]:
        assert needle in markup, needle
    placeholders = [
        m
        for m in mails
        if m.msg.get_content_type() == "multipart/alternative"
        and "View this email in your browser" in m.msg.get_payload(0).get_payload(decode=True).decode()
    ]
    assert len(placeholders) >= 2
    good_alternatives = [m for m in mails if _types(m)[:3] == ["multipart/alternative", "text/plain", "text/html"]]
    assert len(good_alternatives) >= 10


def _check_pdf(data: bytes) -> None:
    assert data.startswith(b"%PDF-1.4") and data.rstrip().endswith(b"%%EOF")
    xref_at = int(data.rsplit(b"startxref\n", 1)[1].split()[0])
    assert data[xref_at:].startswith(b"xref")
    entries = data[xref_at:].split(b"\n")[3:]
    for number, entry in enumerate(entries[: int(data[xref_at:].split(b"\n")[1].split()[1]) - 1], start=1):
        assert data[int(entry[:10]) :].startswith(b"%d 0 obj" % number)


def _check_png(data: bytes) -> None:
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    pos, chunks = 8, {}
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        tag, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        assert struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])[0] == zlib.crc32(tag + body)
        chunks[tag] = body
        pos += 12 + length
    width, height = struct.unpack(">II", chunks[b"IHDR"][:8])
    assert len(zlib.decompress(chunks[b"IDAT"])) == height * (width + 1)
    assert b"IEND" in chunks


def test_attachments_are_valid_files(mails: list[Parsed]) -> None:
    found: Counter[str] = Counter()
    for m in mails:
        for part in m.parts():
            ctype, data = part.get_content_type(), part.get_payload(decode=True)
            if ctype == "application/pdf":
                _check_pdf(data)
            elif ctype == "image/png":
                _check_png(data)
            elif ctype == "audio/wav":
                assert data[:4] == b"RIFF" and data[8:12] == b"WAVE"
            elif ctype == "text/calendar":
                ics = data.decode()
                for field in ["SUMMARY:", "DTSTART:", "DTEND:", "LOCATION:", "METHOD:REQUEST"]:
                    assert field in ics
            else:
                continue
            found[ctype] += 1
    assert found["application/pdf"] >= 3 and found["image/png"] >= 2 and found["text/calendar"] >= 1


def test_attachment_shapes(mails: list[Parsed]) -> None:
    filenames = {p.get_filename() for m in mails for p in m.parts() if p.get_filename()}
    assert "q3-test-meeting-notes.txt" in filenames
    assert "invite.ics" in filenames
    assert "报价单_2026年第四季度.csv" in filenames  # RFC 2231 filename*=UTF-8''...
    raw = b"".join(m.raw for m in mails)
    assert b"filename*=UTF-8''%E6%8A%A5" in raw
    assert b'filename="=?Big5?B?' in raw  # the non-standard encoded-word filename many clients send
    related = [m for m in mails if "multipart/related" in _types(m)]
    assert related
    inline = next(p for p in related[0].parts() if p.get_content_type() == "image/png")
    cid = inline["Content-ID"].strip("<>")
    assert any(
        f"cid:{cid}" in (p.get_payload(decode=True) or b"").decode()
        for p in related[0].parts()
        if p.get_content_type() == "text/html"
    )
    assert any("message/rfc822" in _types(m) for m in mails)
    no_text = [m for m in mails if m.msg.is_multipart() and not any(t.startswith("text/") for t in _types(m))]
    assert no_text  # attachment only
    nameless = [
        p for m in mails for p in m.parts() if p.get_content_disposition() == "attachment" and not p.get_filename()
    ]
    assert nameless


def test_transfer_encodings_and_header_shapes(mails: list[Parsed]) -> None:
    ctes = Counter(p.get("Content-Transfer-Encoding", "").lower() for m in mails for p in m.parts())
    for cte in ["quoted-printable", "base64", "7bit", "8bit"]:
        assert ctes[cte] >= 1, cte
    assert any(re.search(rb"\nSubject: [^\n]*\n [^\n]", m.raw) for m in mails)  # folded subject
    assert any(re.search(rb"\nTo: [^\n]*,\n [^\n]", m.raw) for m in mails)  # folded address list
    assert any("Cc" in m.msg and "Bcc" in m.msg for m in mails)
    assert any("List-Id" in m.msg for m in mails)
    assert any(m.msg.get_content_type() == "multipart/signed" for m in mails)
    assert any(m.msg.get_content_type() == "multipart/encrypted" for m in mails)
    assert any("Content-Type" not in m.msg and "MIME-Version" not in m.msg for m in mails)


def test_long_message_for_truncation(mails: list[Parsed], by_message_id: dict[str, Parsed]) -> None:
    longest = max(
        (p.get_payload(decode=True) for m in mails for p in m.parts() if p.get_content_type() == "text/plain"),
        key=len,
    )
    assert 55_000 <= len(longest) <= 70_000
    assert by_message_id[demo.NOTABLE[demo.LONG_MESSAGE_KEY].message_id].msg.get_payload(decode=True) == longest


def test_newest_date_is_a_fixed_utc_instant() -> None:
    assert datetime.fromisoformat("2026-11-20T01:45:00+00:00") == demo.NEWEST_DATE


def test_offsite_attachments_are_where_the_facts_say(by_message_id: dict[str, Parsed]) -> None:
    for name, (key, _phrase) in demo.OFFSITE_ATTACHMENTS.items():
        parts = by_message_id[demo.NOTABLE[key].message_id].parts()
        assert name in {part.get_filename() for part in parts}, (name, key)
    thread = [m for m in by_message_id.values() if m.subject.endswith(demo.NOTABLE["offsite-1"].subject)]
    assert len(thread) == demo.OFFSITE_THREAD_LENGTH
