"""`gmail_get_thread`: a whole conversation in one `threads.get`, each message's own words, bounded, and the
context a reply needs to stay in the thread.

Every message comes in date order (sent mail included) with its sender, recipients, date, labels and
attachments. Quoted history is removed twice over: by its markers (`strip_quoted_reply`: attributions in many
languages, `>` lines, Outlook header blocks) and by content (`repeats.own_words`: a tail that repeats what
earlier messages of the thread said). Bodies are cut per message and the whole answer stays under
`ToolContext.thread_max_chars` (GMAIL_MCP_THREAD_MAX_CHARS, 60,000 by default): the newest messages get their
text first; older ones left out are named with the `message_range` that shows them.
"""

from __future__ import annotations

from dataclasses import dataclass

from server.content.message import ParsedMessage, parse_message, slice_body, strip_quoted_reply
from server.content.reply import ReplyContext, base_subject, format_address, own_addresses, reply_context
from server.content.text.snippets import clean_snippet
from server.errors import GmailError, InvalidInputError
from server.tools import ToolContext
from server.toolsets.common import MAX_ITEM_FIELD_CHARS, bounded
from server.toolsets.envelope import SECURITY_HEADERS, security_of
from server.toolsets.messages.label_filter import LabelFilter
from server.toolsets.threads.models import (
    GetThreadInput,
    GetThreadResult,
    ReplyContextItem,
    ThreadAttachment,
    ThreadMessage,
)
from server.toolsets.threads.render import render_message_head

THREAD_HEADERS = (
    *("From", "To", "Cc", "Reply-To", "Subject", "Date", "Message-ID", "References", "In-Reply-To"),
    *SECURITY_HEADERS,
)
MAX_ATTACHMENTS_PER_MESSAGE = 20
MIN_USEFUL_BODY = 200  # a body share smaller than this is left out rather than shown as a stub
SNIPPET_CHARS = 160


@dataclass(frozen=True)
class Plan:
    """Which messages of the asked range are listed, and how many characters of each one's text are shown."""

    listed_from: int  # index into the range: messages before it are not listed at all
    shown: list[int]  # characters of text per message of the range (0: left out)


def plan_bodies(heads: list[int], lengths: list[int], *, per_message: int, total: int) -> Plan:
    """Splits `total` characters over a range of messages (lists oldest first), newest first.

    The newest messages get their head and text (each text at most `per_message`; the last one that fits may be
    cut) out of three quarters of the budget; what is left lists older messages without their text, newest
    first, so the answer also says who wrote before. Older messages still are not listed.
    """
    reserve = min(total // 4, sum(heads))
    budget = total - reserve
    shown = [0] * len(heads)
    index = len(heads) - 1
    while index >= 0:
        want = min(lengths[index], per_message)
        if heads[index] + want <= budget:
            shown[index], budget, index = want, budget - heads[index] - want, index - 1
            continue
        room = budget - heads[index]
        if want and room >= MIN_USEFUL_BODY:  # part of this one: it says where to read on
            shown[index], budget, index = room, budget - heads[index] - room, index - 1
        break
    budget += reserve
    listed_from = index + 1
    while index >= 0 and heads[index] <= budget:
        budget -= heads[index]
        listed_from, index = index, index - 1
    return Plan(listed_from, shown)


def get_thread(ctx: ToolContext, args: GetThreadInput) -> GetThreadResult:
    resource = ctx.gmail.get_thread(
        args.thread_id, fmt=args.format, metadata_headers=THREAD_HEADERS if args.format == "metadata" else None
    )
    raw = resource.get("messages")
    pairs = [(parse_message(item), item) for item in raw if isinstance(item, dict)] if isinstance(raw, list) else []
    pairs.sort(key=lambda pair: pair[0].internal_date_ms or 0)  # stable: Gmail's order breaks ties
    parsed = [message for message, _ in pairs]
    if not parsed:
        raise InvalidInputError(
            f"Thread {args.thread_id} holds no messages.",
            hint="Take a thread_id from gmail_search_messages, or read the message with gmail_get_message.",
        )
    notes: list[str] = []
    count = len(parsed)
    first, last = args.positions(count)
    if first > count:
        raise InvalidInputError(
            f"message_range {args.message_range} starts past the end of the thread ({count} messages).",
            hint=f'Use a range within 1-{count}, e.g. message_range="1-{count}", or leave it out.',
        )
    texts = _own_texts(parsed, strip=args.strip_quoted) if args.format == "full" else None
    labels = LabelFilter(ctx.cache)
    items = [_item(position, message, parsed[0].subject, labels) for position, message in enumerate(parsed, 1)]
    window = range(first - 1, last)
    heads = [len(render_message_head(items[index])) + len(items[index].snippet or "") + 12 for index in window]
    lengths = [len(texts[index]) if texts else len(items[index].snippet or "") for index in window]
    total = ctx.thread_max_chars
    plan = plan_bodies(heads, lengths, per_message=args.max_body_chars_per_message, total=total)
    listed: list[ThreadMessage] = []
    for offset, index in enumerate(window):
        if offset < plan.listed_from:
            continue
        item = items[index]
        if texts is not None:
            _fill_body(item, texts[index], plan.shown[offset])
        item.security = security_of(parsed[index], (pairs[index][1].get("payload") or {}).get("headers"))
        listed.append(item)
    notes.extend(_paging_note(listed, first, first + plan.listed_from, total))
    for item, message in ((item, parsed[item.position - 1]) for item in listed):
        if len(message.attachments) > MAX_ATTACHMENTS_PER_MESSAGE:
            notes.append(f"[{item.position}] has {len(message.attachments)} attachments: gmail_get_message lists all.")
        if message.body_source == "encrypted":
            notes.append(f"[{item.position}] is encrypted: its body cannot be read here.")
    if (first, last) != (1, count):
        notes.append(f"Showing messages {first}-{last} of {count}.")
    address, context = _reply(ctx, parsed, notes)
    return GetThreadResult(
        thread_id=str(resource.get("id") or args.thread_id),
        subject=bounded(parsed[0].subject, MAX_ITEM_FIELD_CHARS),
        message_count=count,
        messages=listed,
        reply=context,
        account_address=address,
        notes=notes,
    )


def _own_texts(parsed: list[ParsedMessage], *, strip: bool) -> list[str]:
    from server.content.text.repeats import own_words

    bodies = [message.body_text or "" for message in parsed]
    if not strip:
        return bodies
    return own_words(bodies, strip_quoted_reply)


def _item(position: int, message: ParsedMessage, thread_subject: str | None, labels: LabelFilter) -> ThreadMessage:
    headers = message.headers
    changed = message.subject and base_subject(message.subject) != base_subject(thread_subject)
    subject = message.subject if changed else None
    return ThreadMessage(
        position=position,
        id=message.id,
        from_=bounded(headers.get("from"), MAX_ITEM_FIELD_CHARS),
        to=bounded(headers.get("to"), MAX_ITEM_FIELD_CHARS),
        cc=bounded(headers.get("cc"), MAX_ITEM_FIELD_CHARS),
        date=message.date_iso,
        subject=bounded(subject, MAX_ITEM_FIELD_CHARS),
        labels=labels.names(message.label_ids),
        attachments=[
            ThreadAttachment(
                filename=bounded(item.filename, MAX_ITEM_FIELD_CHARS) or "",
                mime_type=bounded(item.mime_type, MAX_ITEM_FIELD_CHARS) or "",
                size=item.size,
                part_id=item.part_id,
            )
            for item in message.attachments[:MAX_ATTACHMENTS_PER_MESSAGE]
            if not item.inline
        ],
        snippet=clean_snippet(message.snippet, SNIPPET_CHARS),
    )


def _fill_body(item: ThreadMessage, own: str, chars: int) -> None:
    if not own.strip():
        item.body_text = ""
        return
    item.body_chars = len(own)
    if chars <= 0:
        item.body_omitted = True
        return
    cut = slice_body(own, max_chars=chars)
    item.body_text = cut.text
    item.next_offset = cut.next_offset
    item.snippet = None  # the text says more


def _reply(
    ctx: ToolContext, parsed: list[ParsedMessage], notes: list[str]
) -> tuple[str | None, ReplyContextItem | None]:
    try:
        address = ctx.cache.own_address()
    except GmailError as error:  # the thread is still worth reading; reply-all may then include the account
        address = None
        notes.append(f"The account's address could not be read ({error.code}): reply recipients may include it.")
    context = reply_context(parsed, own_addresses(parsed, address))
    if context and context.omitted_recipients:
        notes.append(f"Reply context: {context.omitted_recipients} more recipients left out.")
    return address, _context_item(context) if context else None


def _context_item(context: ReplyContext) -> ReplyContextItem:
    return ReplyContextItem(
        reply_to_id=context.message_id,
        in_reply_to=bounded(context.in_reply_to, MAX_ITEM_FIELD_CHARS),
        references=bounded(context.references),
        subject=bounded(context.subject, MAX_ITEM_FIELD_CHARS) or "",
        to=[bounded(format_address(address), MAX_ITEM_FIELD_CHARS) or "" for address in context.to],
        cc=[bounded(format_address(address), MAX_ITEM_FIELD_CHARS) or "" for address in context.cc],
        last_sender=bounded(format_address(context.last_sender), MAX_ITEM_FIELD_CHARS) if context.last_sender else None,
        last_from_me=context.last_from_me,
    )


def _paging_note(listed: list[ThreadMessage], first: int, first_listed: int, total: int) -> list[str]:
    """One note naming the message_range that shows what this answer left out (older messages come first)."""
    omitted = [item.position for item in listed if item.body_omitted]
    if first_listed == first and not omitted:
        return []
    parts = [f"messages {first}-{first_listed - 1} are not listed"] if first_listed > first else []
    if omitted:
        parts.append(f"the text of {_spans(omitted)} is left out")
    last = max([first_listed - 1, *omitted])
    return [
        f"To stay under {total:,} characters, {' and '.join(parts)}: call again with "
        f'message_range="{first}-{last}" to read them (newest first, as here), or read one with gmail_get_message.'
    ]


def _spans(positions: list[int]) -> str:
    """[1, 2, 3, 5] -> "1-3, 5"."""
    spans: list[str] = []
    start = previous = positions[0]
    for position in [*positions[1:], None]:
        if position is not None and position == previous + 1:
            previous = position
            continue
        spans.append(str(start) if start == previous else f"{start}-{previous}")
        if position is not None:
            start = previous = position
    return ", ".join(spans)
