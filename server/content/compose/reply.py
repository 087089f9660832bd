"""What a reply or forward takes from the original: threading headers, subject, recipients. Pure.

Gmail keeps a reply in its conversation only when the draft names the thread AND cites the original by its
`Message-ID` header (never Gmail's internal id) in `In-Reply-To` and `References`, AND the subject matches once
prefixes are ignored. Peers got each of these wrong (replies landing in new threads, `Re: Re: Re:` subjects,
reply-all copying the person to themselves); each rule here is one small function with its own tests.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from server.content.compose.addresses import Recipient, dedupe, lenient_recipients

Mode = Literal["new", "reply", "reply_all", "forward"]
_MESSAGE_ID = re.compile(r"<[^<>\s]{1,500}>")
MAX_REFERENCES = 20  # RFC 5322 allows trimming: keep the first (the thread's root) and the most recent ones
# Reply prefixes in the languages mail clients commonly use; "Re[2]:" and "Re:" with odd spacing included.
_REPLY_PREFIX = re.compile(
    r"^\s*(?:re|aw|sv|vs|antw|odp|rif|res|回复|回覆|答复|答覆)\s*(?:\[\d+\]|\(\d+\))?\s*[:：]", re.I
)
_FORWARD_PREFIX = re.compile(r"^\s*(?:fwd|fw|wg|tr|rv|enc|doorst|转发|轉寄|轉發)\s*(?:\[\d+\])?\s*[:：]", re.I)


@dataclass(frozen=True)
class Original:
    """The headers of the message being answered or forwarded, decoded (names lower-cased)."""

    gmail_id: str
    thread_id: str
    headers: Mapping[str, str]

    def header(self, name: str) -> str:
        return self.headers.get(name.lower(), "") or ""

    @property
    def message_id(self) -> str | None:
        found = _MESSAGE_ID.findall(self.header("message-id"))
        return found[0] if found else None


@dataclass(frozen=True)
class Threading:
    thread_id: str
    in_reply_to: str | None  # None: the original has no Message-ID header, so only the thread id can keep it
    references: tuple[str, ...]


def threading_for(original: Original) -> Threading:
    """`In-Reply-To` = the original's Message-ID; `References` = its chain (References, else In-Reply-To) plus it."""
    chain = _MESSAGE_ID.findall(original.header("references")) or _MESSAGE_ID.findall(original.header("in-reply-to"))
    own = original.message_id
    ordered = list(dict.fromkeys([*chain, *([own] if own else [])]))
    if len(ordered) > MAX_REFERENCES:
        ordered = [ordered[0], *ordered[-(MAX_REFERENCES - 1) :]]
    return Threading(thread_id=original.thread_id, in_reply_to=own, references=tuple(ordered))


def reply_subject(subject: str) -> str:
    """`Re: ` added once: a subject that already starts with a reply prefix (any language) is kept as it is."""
    subject = " ".join(subject.split())
    if _REPLY_PREFIX.match(subject):
        return subject
    return f"Re: {subject}" if subject else "Re:"


def forward_subject(subject: str) -> str:
    """`Fwd: ` added once (a forward of a reply is `Fwd: Re: ...`, as every mail client writes it)."""
    subject = " ".join(subject.split())
    if _FORWARD_PREFIX.match(subject):
        return subject
    return f"Fwd: {subject}" if subject else "Fwd:"


def base_subject(subject: str) -> str:
    """The subject without any reply/forward prefixes: what Gmail compares to keep a conversation together."""
    subject = " ".join(subject.split())
    while True:
        match = _REPLY_PREFIX.match(subject) or _FORWARD_PREFIX.match(subject)
        if match is None:
            return subject.strip().lower()
        subject = subject[match.end() :].strip()


@dataclass(frozen=True)
class Recipients:
    to: list[Recipient]
    cc: list[Recipient]


def reply_recipients(original: Original, mode: Mode, own: Iterable[str]) -> Recipients:
    """Who a reply goes to.

    reply: Reply-To if the original has one, else its From. When the original was sent by the person themselves
    (it is in their Sent mail), a reply goes to its recipients instead, as Gmail does.
    reply_all: the above plus the original's To and Cc, minus the person's own addresses (every send-as alias),
    duplicates removed; To keeps the original's To, Cc its Cc.
    A note to self (everyone is the person) answers the person.
    """
    own_keys = {address.lower() for address in own}
    mine = [Recipient("", address) for address in sorted(own_keys)]
    senders = lenient_recipients(original.header("reply-to")) or lenient_recipients(original.header("from"))
    original_to = lenient_recipients(original.header("to"))
    original_cc = lenient_recipients(original.header("cc"))
    from_me = any(sender.key in own_keys for sender in lenient_recipients(original.header("from")))
    if from_me:
        to = original_to
        cc = original_cc if mode == "reply_all" else []
    elif mode == "reply_all":
        to = [*senders, *original_to]
        cc = original_cc
    else:
        to, cc = senders, []
    to = dedupe(to, exclude=mine)
    cc = dedupe(cc, exclude=[*mine, *to])
    if not to and not cc:  # a note to self, or an original with no usable address at all
        to = dedupe(senders) or dedupe(original_to)
    return Recipients(to=to, cc=cc)
