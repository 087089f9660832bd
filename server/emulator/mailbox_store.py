"""Loads a mailbox (.eml files, .mbox files, or a Google Takeout export) into immutable stored messages.

Everything a Gmail message has besides its bytes is derived here, deterministically, so the same mailbox
gives the same answers on every run:

- id: the first 16 hex digits of sha256(raw bytes) (a repeated identical message gets a counter mixed in);
- labels: from Takeout's `X-Gmail-Labels`, INBOX when the header is absent;
- threadId: Takeout's `X-GM-THRID` (decimal, shown in hex like Gmail), else the conversation formed by
  `References` / `In-Reply-To` (its oldest message's id), else the message's own id;
- internalDate: the `Date` header (epoch ms), else the newest `Received` stamp, else 0.

With `rebase_dates`, every date moves by one offset so the newest message is one hour old. The `Date`
header is rewritten to match (same offset, same time zone), so clients reading headers see the dates search
uses. Ids are computed from the original bytes first, so they do not change with the clock.
"""

from __future__ import annotations

import email
import hashlib
import logging
import mailbox
import re
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from email.message import Message
from email.utils import format_datetime, getaddresses, parsedate_to_datetime
from pathlib import Path

from . import labels as label_names
from .labels import Label
from .mime import decode_header_text, header_text

LOG = logging.getLogger("server.emulator")
HOUR_MS = 3_600_000
FIRST_HISTORY_ID = 100_000
_MESSAGE_ID = re.compile(r"<[^<>\s]+>")
_DATE_LINE = re.compile(rb"(?im)^Date:[^\r\n]*(?:\r?\n[ \t][^\r\n]*)*")


@dataclass(eq=False)
class StoredMessage:
    """One message as the emulator serves it. Its bytes never change; its labels and history id change only
    through the change log (`mailbox_changes.py`), which replaces those attributes whole."""

    id: str
    raw: bytes
    message: Message
    label_ids: tuple[str, ...]
    internal_date: int  # epoch ms
    source: str  # file (and index inside an mbox) it came from, for logs
    thread_id: str = ""
    history_id: int = 0
    _subject: str | None = field(default=None, repr=False)

    @property
    def size(self) -> int:
        return len(self.raw)

    @property
    def subject(self) -> str:
        if self._subject is None:
            self._subject = header_text(self.message, "Subject")
        return self._subject


@dataclass
class MailStore:
    """The mailbox: messages newest first, threads oldest first, every label, and the newest history id.

    Loaded once; afterwards only the change log (`mailbox_changes.py`) alters it, replacing `messages`,
    `threads` entries and `labels` whole, so a request reading them meanwhile sees one consistent version.
    """

    messages: tuple[StoredMessage, ...]
    by_id: dict[str, StoredMessage]
    threads: dict[str, tuple[StoredMessage, ...]]
    labels: dict[str, Label]
    email_address: str
    history_id: int = FIRST_HISTORY_ID  # the mailbox's: its newest change

    def find(self, subject_contains: str) -> list[StoredMessage]:
        """Messages whose decoded subject contains the text (case-insensitive), newest first."""
        needle = subject_contains.lower()
        return [m for m in self.messages if needle in m.subject.lower()]

    def label_id(self, name: str) -> str:
        """Id of the label with this display name (or id), case-insensitive; KeyError when unknown."""
        for label in self.labels.values():
            if name.lower() in (label.name.lower(), label.id.lower()):
                return label.id
        raise KeyError(name)


def load_mailbox(
    path: str | Path,
    *,
    rebase_dates: bool = False,
    now_ms: int | None = None,
    email_address: str | None = None,
) -> MailStore:
    """Reads every message under `path` (a directory searched recursively, an .mbox or an .eml file)."""
    root = Path(path).expanduser()
    if not root.exists():
        raise FileNotFoundError(f"mailbox not found: {root}")
    stored = [_store_one(raw, source, seen) for raw, source, seen in _with_occurrence(_read_sources(root))]
    if rebase_dates and stored:
        now = int(time.time() * 1000) if now_ms is None else now_ms
        # Whole seconds, so the rewritten Date headers (second precision) agree exactly with internalDate.
        _rebase(stored, (now - HOUR_MS - max(m.internal_date for m in stored)) // 1000 * 1000)
    _assign_threads(stored)
    chronological = sorted(stored, key=lambda m: (m.internal_date, m.id))
    for rank, message in enumerate(chronological):
        message.history_id = FIRST_HISTORY_ID + rank + 1
    threads: dict[str, list[StoredMessage]] = {}
    for message in chronological:
        threads.setdefault(message.thread_id, []).append(message)
    newest_first = tuple(reversed(chronological))
    LOG.info("loaded %d messages in %d threads from %s", len(stored), len(threads), root)
    return MailStore(
        messages=newest_first,
        by_id={m.id: m for m in stored},
        threads={tid: tuple(items) for tid, items in threads.items()},
        labels=_collect_labels(stored),
        email_address=email_address or _guess_address(stored),
        history_id=FIRST_HISTORY_ID + len(stored),
    )


def _read_sources(root: Path) -> Iterator[tuple[bytes, str]]:
    files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
    for file in files:
        suffix = file.suffix.lower()
        if suffix == ".eml":
            yield file.read_bytes(), str(file)
        elif suffix == ".mbox":
            box = mailbox.mbox(str(file), create=False)
            try:
                for index, key in enumerate(box.iterkeys()):
                    yield box.get_bytes(key), f"{file}#{index}"
            finally:
                box.close()


def _with_occurrence(sources: Iterator[tuple[bytes, str]]) -> Iterator[tuple[bytes, str, int]]:
    counts: Counter[bytes] = Counter()
    for raw, source in sources:
        digest = hashlib.sha256(raw).digest()
        yield raw, source, counts[digest]
        counts[digest] += 1


def message_id_for(raw: bytes, occurrence: int = 0) -> str:
    """Stable 16-hex-digit id; identical copies of one message get distinct ids by their order."""
    data = raw if occurrence == 0 else raw + b"\0" + str(occurrence).encode()
    return hashlib.sha256(data).hexdigest()[:16]


def _store_one(raw: bytes, source: str, occurrence: int) -> StoredMessage:
    message = email.message_from_bytes(raw)
    return StoredMessage(
        id=message_id_for(raw, occurrence),
        raw=raw,
        message=message,
        label_ids=_labels_of(message),
        internal_date=internal_date_of(message),
        source=source,
    )


def _labels_of(message: Message) -> tuple[str, ...]:
    values = message.get_all("X-Gmail-Labels")
    if values is None:
        return ("INBOX",)
    found: list[str] = []
    for value in values:
        for name in label_names.split_label_header(decode_header_text(str(value))):
            classified = label_names.classify(name)
            if classified and classified[0] not in found:
                found.append(classified[0])
    return tuple(found)


def _user_label_names(message: Message) -> list[str]:
    names: list[str] = []
    for value in message.get_all("X-Gmail-Labels") or []:
        for name in label_names.split_label_header(decode_header_text(str(value))):
            classified = label_names.classify(name)
            if classified and classified[0].startswith("Label_"):
                names.append(classified[1])
    return names


def _parse_date(value: str) -> datetime | None:
    try:
        parsed = parsedate_to_datetime(value.strip())
    except (TypeError, ValueError, IndexError):
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


def internal_date_of(message: Message) -> int:
    """Epoch ms of the `Date` header, else of the newest `Received` stamp, else 0."""
    candidates = [str(message.get("Date", ""))]
    candidates += [str(value).rpartition(";")[2] for value in message.get_all("Received") or []]
    for value in candidates:
        parsed = _parse_date(value) if value.strip() else None
        if parsed is not None:
            return int(parsed.timestamp() * 1000)
    return 0


def _rebase(stored: list[StoredMessage], shift_ms: int) -> None:
    for message in stored:
        message.internal_date += shift_ms
        original = _parse_date(str(message.message.get("Date", "")))
        if original is None:
            continue
        line = _DATE_LINE.search(message.raw)
        if line is None or line.start() > _header_end(message.raw):
            continue
        moved = format_datetime(original + timedelta(milliseconds=shift_ms)).encode("ascii")
        message.raw = message.raw[: line.start()] + b"Date: " + moved + message.raw[line.end() :]
        message.message = email.message_from_bytes(message.raw)


def _header_end(raw: bytes) -> int:
    ends = [i for i in (raw.find(b"\r\n\r\n"), raw.find(b"\n\n")) if i >= 0]
    return min(ends) if ends else len(raw)


def references(message: Message) -> list[str]:
    """The Message-IDs a message answers or cites (`In-Reply-To`, then `References`)."""
    found: list[str] = []
    for name in ("In-Reply-To", "References"):
        for value in message.get_all(name) or []:
            found += _MESSAGE_ID.findall(str(value))
    return found


def _assign_threads(stored: list[StoredMessage]) -> None:
    """Union-find over Message-IDs: every message joins the conversation of everything it references."""
    parent: dict[str, str] = {}

    def find(key: str) -> str:
        parent.setdefault(key, key)
        while parent[key] != key:
            parent[key] = parent[parent[key]]
            key = parent[key]
        return key

    def union(a: str, b: str) -> None:
        parent[find(a)] = find(b)

    for message in stored:
        node = "msg:" + message.id
        own = _MESSAGE_ID.findall(str(message.message.get("Message-ID", "")))
        for ref in own[:1] + references(message.message):
            union(node, "mid:" + ref)
    groups: dict[str, list[StoredMessage]] = {}
    for message in stored:
        groups.setdefault(find("msg:" + message.id), []).append(message)
    for members in groups.values():
        members.sort(key=lambda m: (m.internal_date, m.id))
        takeout = [_takeout_thread(m) for m in members]
        fallback = next((t for t in takeout if t), members[0].id)
        for message, thread in zip(members, takeout, strict=True):
            message.thread_id = thread or fallback


def _takeout_thread(message: StoredMessage) -> str:
    value = str(message.message.get("X-GM-THRID", "")).strip()
    return format(int(value), "x") if value.isdecimal() and 0 < int(value) < 2**64 else ""


def _collect_labels(stored: list[StoredMessage]) -> dict[str, Label]:
    found = {name: Label(name, name, "system") for name in label_names.SYSTEM_LABELS}
    user: set[str] = set()
    for message in stored:
        for name in _user_label_names(message.message):
            user.add(name)
            user.update(label_names.parent_names(name))
    for name in sorted(user, key=str.lower):
        label_id = label_names.user_label_id(name)
        found[label_id] = Label(label_id, name, "user")
    return found


def _guess_address(stored: list[StoredMessage]) -> str:
    """The mailbox owner: the commonest Delivered-To, else the sender of sent mail, else a placeholder."""
    delivered: Counter[str] = Counter()
    senders: Counter[str] = Counter()
    for message in stored:
        for _, address in getaddresses([str(v) for v in message.message.get_all("Delivered-To") or []]):
            if address:
                delivered[address.lower()] += 1
        if "SENT" in message.label_ids:
            for _, address in getaddresses([str(message.message.get("From", ""))]):
                if address:
                    senders[address.lower()] += 1
    for counter in (delivered, senders):
        if counter:
            return counter.most_common(1)[0][0]
    return "me@example.com"
