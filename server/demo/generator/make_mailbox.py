"""Generate the demo mailbox: `python -m server.demo.generator.make_mailbox [--out PATH] [--stats]`.

Writes one Google Takeout-style mbox (every message carries `X-GM-THRID` and `X-Gmail-Labels`) from the table
in `content.py`. The output is byte-identical on every run: dates count back from a fixed instant, ids and
MIME boundaries are hashes of each message's key, and nothing reads the clock, the locale or a random source.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import sys
from base64 import b64encode
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from email.generator import BytesGenerator
from email.message import Message
from email.utils import format_datetime
from pathlib import Path

from server.demo import DEMO_MAILBOX, DEMO_OWNER, NEWEST_DATE

from .builders import (
    DAY_NAMES,
    MONTH_NAMES,
    VERBATIM,
    address,
    address_list,
    header_text,
    mbox_from_line,
    set_boundaries,
    text,
)
from .content import Mail, Person, auto_cte, build_mails

_STANDARD = {"us-pacific": -8, "us-eastern": -5, "europe": 1}


@dataclass(frozen=True)
class Built:
    mail: Mail
    when: datetime  # UTC
    message_id: str
    thread_id: int
    subject: str
    body_text: str


# --- dates -------------------------------------------------------------------------------------------------


def _nth_sunday(year: int, month: int, n: int) -> datetime:
    """The n-th Sunday of a month (n = -1: the last one), at midnight UTC."""
    if n > 0:
        first = datetime(year, month, 1, tzinfo=timezone.utc)
        return first + timedelta(days=(6 - first.weekday()) % 7 + 7 * (n - 1))
    nxt = datetime(year + month // 12, month % 12 + 1, 1, tzinfo=timezone.utc)
    last = nxt - timedelta(days=1)
    return last - timedelta(days=(last.weekday() + 1) % 7)


def local_time(tz: str, when: datetime) -> datetime:
    """`when` (UTC) as the sender's wall clock, with US or EU daylight saving where the zone has it."""
    if tz[0] in "+-":
        offset = timedelta(hours=int(tz[1:3]), minutes=int(tz[3:5])) * (1 if tz[0] == "+" else -1)
        return when.astimezone(timezone(offset))
    std = _STANDARD[tz]
    if tz == "europe":
        start = _nth_sunday(when.year, 3, -1) + timedelta(hours=1)
        end = _nth_sunday(when.year, 10, -1) + timedelta(hours=1)
    else:
        start = _nth_sunday(when.year, 3, 2) + timedelta(hours=2 - std)
        end = _nth_sunday(when.year, 11, 1) + timedelta(hours=1 - std)
    dst = 1 if start <= when < end else 0
    return when.astimezone(timezone(timedelta(hours=std + dst)))


def gmail_attribution(when: datetime, person: Person) -> str:
    """Gmail's quote header: `On Tue, Nov 17, 2026 at 12:45 PM Sam Rivera <example@gmail.com> wrote:`."""
    hour = when.hour % 12 or 12
    ampm = "AM" if when.hour < 12 else "PM"
    day = f"{DAY_NAMES[when.weekday()]}, {MONTH_NAMES[when.month - 1]} {when.day}, {when.year}"
    who = f"{person.name} <{person.email}>" if person.name else person.email
    return f"On {day} at {hour}:{when.minute:02d} {ampm} {who} wrote:"


_FR_DAYS = ("lun.", "mar.", "mer.", "jeu.", "ven.", "sam.", "dim.")
_FR_MONTHS = ("janv.", "févr.", "mars", "avr.", "mai", "juin", "juil.", "août", "sept.", "oct.", "nov.", "déc.")


def gmail_attribution_fr(when: datetime, person: Person) -> str:
    """Gmail's quote header in French: `Le mar. 17 nov. 2026 à 12:45, Sam Rivera <example@gmail.com> a écrit :`."""
    day = f"{_FR_DAYS[when.weekday()]} {when.day} {_FR_MONTHS[when.month - 1]} {when.year}"
    who = f"{person.name} <{person.email}>" if person.name else person.email
    return f"Le {day} à {when.hour:02d}:{when.minute:02d}, {who} a écrit :"


def outlook_header(parent: Built, when: datetime) -> str:
    """The block Outlook puts above the message it answers (whose text follows unmarked, no `>` prefixes)."""
    hour = when.hour % 12 or 12
    sent = (
        f"{_LONG_DAYS[when.weekday()]}, {_LONG_MONTHS[when.month - 1]} {when.day}, {when.year} "
        f"{hour}:{when.minute:02d} {'AM' if when.hour < 12 else 'PM'}"
    )
    mail = parent.mail

    def names(people: tuple[Person, ...]) -> str:
        return "; ".join(f"{p.name} <{p.email}>" if p.name else p.email for p in people)

    lines = ["_" * 32, f"From: {names((mail.sender,))}", f"Sent: {sent}", f"To: {names(mail.to)}"]
    if mail.cc:
        lines.append(f"Cc: {names(mail.cc)}")
    lines.append(f"Subject: {parent.subject}")
    return "\n".join(lines)


_LONG_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_LONG_MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)


# --- ids ---------------------------------------------------------------------------------------------------


def _digest(*parts: str) -> bytes:
    return hashlib.sha256("/".join(("demo-mailbox", *parts)).encode()).digest()


def _jitter(mail: Mail) -> timedelta:
    """Up to 45 minutes off the round age, so times look typed by people (the newest stays exact)."""
    if not mail.ago:
        return timedelta(0)
    return timedelta(seconds=int.from_bytes(_digest("jitter", mail.key)[:4], "big") % 2700)


def message_id(mail: Mail) -> str:
    if mail.sender.email.endswith("@gmail.com") or mail.sender.email == DEMO_OWNER:
        token = b64encode(_digest("msgid", mail.key)[:30]).decode("ascii")
        return f"<CA{token[:2].upper()}+{token[2:]}@mail.gmail.com>"
    domain = mail.sender.email.split("@", 1)[1]
    return f"<{_digest('msgid', mail.key).hex()[:24]}@{domain}>"


def thread_id(root: Mail, root_when: datetime) -> int:
    """A Gmail-like thread id: the root's epoch milliseconds in the high bits, 20 hashed bits below."""
    low = int.from_bytes(_digest("thrid", root.key)[:4], "big") & 0xFFFFF
    return int(root_when.timestamp() * 1000) << 20 | low


# --- assembly ----------------------------------------------------------------------------------------------


def _quote(body: str) -> str:
    return "\n".join(
        ">" + line if line.startswith(">") else f"> {line}" if line else ">" for line in body.rstrip("\n").split("\n")
    )


def build(mails: list[Mail]) -> list[Built]:
    """Resolve dates, threads, reply subjects and quoted bodies for every message."""
    by_key = {m.key: m for m in mails}
    if len(by_key) != len(mails):
        raise ValueError("duplicate message keys")
    built: dict[str, Built] = {}

    def resolve(mail: Mail) -> Built:
        if mail.key in built:
            return built[mail.key]
        when = NEWEST_DATE - mail.ago - _jitter(mail)
        body = mail.text
        if mail.reply_to:
            parent = resolve(by_key[mail.reply_to])
            root = parent
            while root.mail.reply_to:
                root = built[root.mail.reply_to]
            subject = root.subject if root.subject.startswith("Re: ") else f"Re: {root.subject}"
            tid = parent.thread_id
            if mail.quote and mail.quote_style == "outlook":
                header = outlook_header(parent, local_time(mail.sender.tz, parent.when))
                body = f"{mail.text}\n{header}\n\n{parent.body_text}"
            elif mail.quote:
                write = gmail_attribution_fr if mail.quote_style == "gmail-fr" else gmail_attribution
                attribution = write(local_time(mail.sender.tz, parent.when), parent.mail.sender)
                body = f"{mail.text}\n{attribution}\n{_quote(parent.body_text)}\n"
        else:
            subject = mail.subject
            tid = thread_id(mail, when)
        built[mail.key] = Built(mail, when, message_id(mail), tid, subject, body)
        return built[mail.key]

    for mail in mails:
        resolve(mail)
    return [built[m.key] for m in mails]


def _references(item: Built, by_key: dict[str, Built]) -> list[str]:
    chain: list[str] = []
    parent_key = item.mail.reply_to
    while parent_key:
        chain.insert(0, by_key[parent_key].message_id)
        parent_key = by_key[parent_key].mail.reply_to
    return chain


def _mailbox(person: Person, mail: Mail) -> str:
    """`person` as a header mailbox, its name in the message's charset when that charset can hold it."""
    codec = mail.codec or mail.charset
    try:
        person.name.encode(codec)
        return address(person.name, person.email, mail.charset, mail.enc, mail.codec or None)
    except UnicodeEncodeError:
        return address(person.name, person.email)


def _received(item: Built) -> list[tuple[str, str]]:
    digest = _digest("received", item.mail.key)
    host = item.mail.sender.email.split("@", 1)[1]
    net = ("192.0.2", "198.51.100", "203.0.113")[digest[0] % 3]  # documentation address ranges
    ip = f"{net}.{digest[1] % 250 + 2}"
    arrived = item.when + timedelta(seconds=2 + digest[2] % 40)
    return [
        ("Delivered-To", DEMO_OWNER),
        (
            "Received",
            f"from mail-out.{host} (mail-out.{host}. [{ip}])\n        by mx.google.com with ESMTPS id "
            f"{digest[3:11].hex()}\n        for <{DEMO_OWNER}>\n        (version=TLS1_3 "
            f"cipher=TLS_AES_256_GCM_SHA384 bits=256/256);\n        {format_datetime(arrived)}",
        ),
        ("Return-Path", f"<{item.mail.sender.email}>"),
        ("Authentication-Results", _authentication(item, ip)),
    ]


def _authentication(item: Built, ip: str) -> str:
    """Gmail's verdicts: a message's own `Authentication-Results` (a spoof, a failing sender), else all pass."""
    own = [value for name, value in item.mail.headers if name.lower() == "authentication-results"]
    if own:
        return own[0]
    sender = item.mail.sender.email
    domain = sender.split("@", 1)[1]
    policy = "p=NONE sp=QUARANTINE dis=NONE" if domain == "gmail.com" else "p=REJECT sp=REJECT dis=NONE"
    signature = b64encode(_digest("dkim", item.mail.key)[:6]).decode("ascii")
    return (
        f"mx.google.com;\n       dkim=pass header.i=@{domain} header.s=s2026 header.b={signature};\n"
        f"       spf=pass (google.com: domain of {sender} designates {ip} as permitted sender) "
        f"smtp.mailfrom={sender};\n       dmarc=pass ({policy}) header.from={domain}"
    )


def labels_header(labels: str) -> str:
    names = [name.strip() for name in labels.split(",") if name.strip()]
    if "Unread" not in names:
        names.append("Opened")
    return ",".join(names)


def to_message(item: Built, by_key: dict[str, Built]) -> Message:
    """One complete message: Takeout headers, envelope headers, then the MIME body."""
    mail = item.mail
    if mail.body is not None:
        body = mail.body(item.body_text)
    else:
        cte = mail.cte or auto_cte(item.body_text, mail.charset.lower())
        body = text(item.body_text, charset=mail.charset, cte=cte, codec=mail.codec or None)

    # The body part becomes the message: its own headers (Content-Type, ...) move after the envelope.
    msg = body
    content_headers = msg.items()
    for name in {name for name, _ in content_headers}:
        del msg[name]
    msg["X-GM-THRID"] = str(item.thread_id)
    msg["X-Gmail-Labels"] = labels_header(mail.labels)
    if mail.sender.email != DEMO_OWNER:
        for name, value in _received(item):
            msg[name] = value
    if mail.mime:
        msg["MIME-Version"] = "1.0"
    msg["Date"] = format_datetime(local_time(mail.sender.tz, item.when))
    chain = _references(item, by_key)
    if chain:
        msg["References"] = "\n ".join(chain)
        msg["In-Reply-To"] = chain[-1]
    msg["Message-ID"] = item.message_id
    msg["Subject"] = header_text(item.subject, mail.charset, mail.enc, len("Subject"), mail.codec or None)
    msg["From"] = _mailbox(mail.sender, mail)
    for name, people in (("To", mail.to), ("Cc", mail.cc), ("Bcc", mail.bcc)):
        if people:
            msg[name] = address_list([_mailbox(p, mail) for p in people], len(name))
    for name, value in mail.headers:
        if name.lower() != "authentication-results":  # Gmail's own, placed on top with its Received
            msg[name] = value
    if mail.mime:
        for name, value in content_headers:
            msg[name] = value
    set_boundaries(msg, mail.key)
    return msg


def render(mails: Iterable[Mail] | None = None) -> bytes:
    """The whole mbox, oldest message first."""
    items = build(list(mails if mails is not None else build_mails()))
    by_key = {item.mail.key: item for item in items}
    out = io.BytesIO()
    for item in sorted(items, key=lambda i: i.when):
        buf = io.BytesIO()
        BytesGenerator(buf, mangle_from_=True, policy=VERBATIM).flatten(to_message(item, by_key))
        data = buf.getvalue()
        out.write(mbox_from_line(item.thread_id, item.when).encode("ascii") + b"\n")
        out.write(data if data.endswith(b"\n") else data + b"\n")
        out.write(b"\n")
    return out.getvalue()


def stats(items: list[Built]) -> dict[str, object]:
    """Counts a README or a test can quote: messages per label, and how many are recent."""
    labels = Counter(name for item in items for name in labels_header(item.mail.labels).split(","))
    visible = [i for i in items if not {"Spam", "Trash"} & set(labels_header(i.mail.labels).split(","))]
    newest = max(i.when for i in items)
    recent = {days: sum(newest - i.when < timedelta(days=days) for i in visible) for days in (1, 3, 7, 30)}
    return {
        "messages": len(items),
        "labels": dict(sorted(labels.items())),
        "recent_not_spam_trash": recent,
        "not_spam_trash": len(visible),
        "threads": len({i.thread_id for i in items}),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m server.demo.generator.make_mailbox", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--out", type=Path, default=DEMO_MAILBOX, help=f"where to write (default: {DEMO_MAILBOX})")
    parser.add_argument("--stats", action="store_true", help="print message counts per label to stderr")
    args = parser.parse_args(argv)
    data = render()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(data)
    print(f"wrote {args.out} ({len(data):,} bytes)", file=sys.stderr)
    if args.stats:
        for key, value in stats(build(build_mails())).items():
            print(f"{key}: {value}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
