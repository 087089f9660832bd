"""What a client needs to write a reply that stays in its thread: recipients, subject, In-Reply-To, References.

Pure: works on parsed messages and the account's own addresses. Gmail keeps a reply in its conversation only when
the draft names the thread AND the message carries `In-Reply-To`/`References` naming the original's Message-ID
header AND the subject matches; the recipients follow Gmail's reply-all: to the sender (or its Reply-To) with
everyone else on Cc, minus the account itself; a reply to one's own message goes to that message's recipients.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from server.content.message import Address, ParsedMessage

MAX_REFERENCES = 20  # RFC 5322 allows trimming a long chain: keep the first id and the newest ones
MAX_RECIPIENTS = 100  # hostile mail carries thousands of Cc addresses
_MESSAGE_ID = re.compile(r"<[^<>\s]{1,998}>")
# Reply prefixes mail programs write, in several languages: a subject starting with one is not prefixed again.
_REPLY_PREFIX = re.compile(r"^\s*(?:re|aw|sv|vs|antw|odp|r|ynt|回复|答复|回覆|返信)\s*(?:\[\d+\])?\s*[:：]", re.I)
_FORWARD_PREFIX = re.compile(r"^\s*(?:fwd?|wg|tr|rv|转发|轉寄|転送)\s*[:：]", re.I)
# Labels of messages a reply is never addressed to: unsent drafts and discarded mail.
_NOT_REPLY_TARGETS = frozenset({"DRAFT", "TRASH", "SPAM"})


@dataclass(frozen=True)
class ReplyContext:
    """How to reply to the newest message of a thread and stay in it."""

    message_id: str  # Gmail's id of the message replied to
    in_reply_to: str | None  # its Message-ID header, the value of the reply's In-Reply-To
    references: str | None  # the reply's References header: the parent's chain plus its Message-ID
    subject: str  # the reply's subject ("Re: ..." once)
    to: tuple[Address, ...]
    cc: tuple[Address, ...]
    omitted_recipients: int  # recipients past MAX_RECIPIENTS, left out
    last_sender: Address | None  # who wrote the message replied to
    last_from_me: bool


def message_id_header(message: ParsedMessage) -> str | None:
    """The message's own Message-ID, `<...>` included; None when it has none."""
    return _first_id(message.headers.get("message-id"))


def references_header(message: ParsedMessage) -> str | None:
    """The message's References header as a space-separated chain of `<...>` ids (bounded); None when absent."""
    ids = _ids(message.headers.get("references"))
    return " ".join(_trimmed(ids)) if ids else None


def reply_subject(subject: str | None) -> str:
    """`Re: <subject>`, unless the subject already starts with a reply prefix (Re:, AW:, SV:, 回复: ...)."""
    subject = " ".join((subject or "").split())
    return subject if _REPLY_PREFIX.match(subject) else f"Re: {subject}".rstrip()


def forward_subject(subject: str | None) -> str:
    """`Fwd: <subject>`, unless it already starts with a forward prefix (Fwd:, FW:, WG:, 转发: ...)."""
    subject = " ".join((subject or "").split())
    return subject if _FORWARD_PREFIX.match(subject) else f"Fwd: {subject}".rstrip()


def base_subject(subject: str | None) -> str:
    """The subject without its reply and forward prefixes ("Re: Fwd: AW: x" -> "x"), case-folded, for comparing."""
    text = " ".join((subject or "").split())
    for _ in range(10):
        stripped = _FORWARD_PREFIX.sub("", _REPLY_PREFIX.sub("", text, count=1), count=1).strip()
        if stripped == text:
            break
        text = stripped
    return text.casefold()


def normalized_address(email: str) -> str:
    """The address as Gmail compares it: case-insensitive, and for Gmail accounts without dots or +tags."""
    local, _, domain = email.strip().lower().rpartition("@")
    if domain in ("gmail.com", "googlemail.com") and local:
        return local.split("+", 1)[0].replace(".", "") + "@gmail.com"
    return f"{local}@{domain}" if local else domain


def reply_target(messages: Sequence[ParsedMessage]) -> ParsedMessage | None:
    """The message a reply answers: the newest one that is not a draft, spam or trash (else the newest)."""
    if not messages:
        return None
    for message in reversed(messages):
        if not _NOT_REPLY_TARGETS.intersection(message.label_ids):
            return message
    return messages[-1]


def own_addresses(messages: Sequence[ParsedMessage], account_address: str | None) -> frozenset[str]:
    """The account's addresses: its profile address and the senders of its sent mail (aliases it replies from)."""
    found = {normalized_address(account_address)} if account_address else set()
    for message in messages:
        if "SENT" in message.label_ids:
            found.update(normalized_address(sender.email) for sender in message.from_[:1])
    return frozenset(found)


def reply_context(messages: Sequence[ParsedMessage], own: frozenset[str]) -> ReplyContext | None:
    """The reply-all context for a thread's messages (date order), given the account's normalized addresses."""
    parent = reply_target(messages)
    if parent is None:
        return None
    sender = parent.from_[0] if parent.from_ else None
    from_me = "SENT" in parent.label_ids or (sender is not None and normalized_address(sender.email) in own)
    if from_me:
        to, cc = list(parent.to), list(parent.cc)
    else:
        to, cc = list(parent.reply_to or parent.from_), [*parent.to, *parent.cc]
    to = _without(to, own, set())
    cc = _without(cc, own, {normalized_address(address.email) for address in to})
    if not to:
        to, cc = cc, []
        if not to and sender is not None:
            to = [sender]  # a note to oneself: the reply goes back to the account
    kept_to, kept_cc = to[:MAX_RECIPIENTS], cc[: max(MAX_RECIPIENTS - len(to), 0)]
    in_reply_to = message_id_header(parent)
    chain = _ids(parent.headers.get("references")) or _ids(parent.headers.get("in-reply-to"))
    if in_reply_to and in_reply_to not in chain:
        chain.append(in_reply_to)
    return ReplyContext(
        message_id=parent.id,
        in_reply_to=in_reply_to,
        references=" ".join(_trimmed(chain)) or None,
        subject=reply_subject(messages[0].subject if messages[0].subject else parent.subject),
        to=tuple(kept_to),
        cc=tuple(kept_cc),
        omitted_recipients=len(to) + len(cc) - len(kept_to) - len(kept_cc),
        last_sender=sender,
        last_from_me=from_me,
    )


def format_address(address: Address) -> str:
    """`Name <email>`, or the bare address when there is no name."""
    if not address.name:
        return address.email
    name = address.name.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{name}" <{address.email}>' if any(ch in name for ch in ',;:<>@()[]"') else f"{name} <{address.email}>"


def _without(addresses: Iterable[Address], own: frozenset[str], taken: set[str]) -> list[Address]:
    kept: list[Address] = []
    seen = set(taken)
    for address in addresses:
        key = normalized_address(address.email)
        if key in own or key in seen or "@" not in address.email:
            continue
        seen.add(key)
        kept.append(address)
    return kept


def _first_id(value: str | None) -> str | None:
    if not value:
        return None
    found = _MESSAGE_ID.search(value)
    if found:
        return found.group(0)
    bare = value.strip()
    return f"<{bare}>" if bare and " " not in bare and len(bare) <= 998 else None


def _ids(value: str | None) -> list[str]:
    return list(dict.fromkeys(_MESSAGE_ID.findall(value or "")))


def _trimmed(ids: list[str]) -> list[str]:
    return ids if len(ids) <= MAX_REFERENCES else [ids[0], *ids[-(MAX_REFERENCES - 1) :]]
