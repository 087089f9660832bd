"""What a reply or forward takes from the original message: threading headers and recipients. Pure.

Gmail keeps a reply in its conversation only when the draft names the thread AND cites the original by its
`Message-ID` header (never Gmail's internal id) in `In-Reply-To` and `References`, AND the subject matches once
prefixes are ignored. Peers got each of these wrong (replies landing in new threads, `Re: Re: Re:` subjects,
reply-all copying the person to themselves). The subject rules and address comparison are the thread tool's
(`server/content/reply.py`); this module applies them to one original message given by its headers.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from server.content.compose.addresses import Recipient, dedupe, lenient_recipients
from server.content.reply import MAX_REFERENCES, base_subject, forward_subject, normalized_address, reply_subject

__all__ = ["Mode", "Original", "Recipients", "Threading", "base_subject", "forward_subject", "reply_subject"]
Mode = Literal["new", "reply", "reply_all", "forward"]
_MESSAGE_ID = re.compile(r"<[^<>\s]{1,500}>")


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


@dataclass(frozen=True)
class Recipients:
    to: list[Recipient]
    cc: list[Recipient]


def reply_recipients(original: Original, mode: Mode, own: Iterable[str]) -> Recipients:
    """Who a reply goes to (the same rules as the thread tool's reply context, `server/content/reply.py`).

    reply: Reply-To if the original has one, else its From. When the original was sent by the person themselves
    (it is in their Sent mail), a reply goes to its recipients instead, as Gmail does.
    reply_all: To the sender (or its Reply-To), everyone else the original named on Cc, minus the person's own
    addresses (every send-as alias, compared as Gmail does), duplicates removed. A note to self answers the person.
    """
    own_keys = {normalized_address(address) for address in own}

    def not_mine(people: list[Recipient]) -> list[Recipient]:  # Gmail's comparison: case, dots, +tags
        return [person for person in people if normalized_address(person.email) not in own_keys]

    senders = lenient_recipients(original.header("reply-to")) or lenient_recipients(original.header("from"))
    original_to = lenient_recipients(original.header("to"))
    original_cc = lenient_recipients(original.header("cc"))
    from_me = any(
        normalized_address(sender.email) in own_keys for sender in lenient_recipients(original.header("from"))
    )
    if from_me:
        to = original_to
        cc = original_cc if mode == "reply_all" else []
    elif mode == "reply_all":
        to = senders
        cc = [*original_to, *original_cc]
    else:
        to, cc = senders, []
    to = dedupe(not_mine(to))
    cc = dedupe(not_mine(cc), exclude=to)
    if not to and not cc:  # a note to self, or an original with no usable address at all
        to = dedupe(senders) or dedupe(original_to)
    return Recipients(to=to, cc=cc)
