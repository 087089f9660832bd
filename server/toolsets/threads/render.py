"""The text of a `gmail_get_thread` answer: one block per message (head line, attachments, own words), then the
reply context. The structured content carries the same fields for clients that read JSON."""

from __future__ import annotations

from server.content.sizes import human_size
from server.toolsets.common import short_date
from server.toolsets.envelope import Fence
from server.toolsets.threads.models import GetThreadResult, ReplyContextItem, ThreadMessage

_FLAGS = ("UNREAD", "STARRED", "IMPORTANT", "SENT", "DRAFT", "TRASH", "SPAM")
# Gmail's reserved label ids (a user label cannot take these names)
_SYSTEM = frozenset({*_FLAGS, "INBOX", "CHAT"})


def render_message_head(item: ThreadMessage) -> str:
    """`[2] id | date | From: ... | To: ... | Cc: ... | unread, starred` and the attachment line, if any."""
    parts = [f"[{item.position}] {item.id}", short_date(item.date), f"From: {item.from_ or '?'}"]
    if item.to:
        parts.append(f"To: {item.to}")
    if item.cc:
        parts.append(f"Cc: {item.cc}")
    # Gmail's own marks in lower case, then the person's labels by name (system ids such as INBOX or
    # CATEGORY_UPDATES stay out: they say nothing the thread's position does not)
    flags = [label.lower() for label in item.labels if label in _FLAGS]
    flags += [f"label: {label}" for label in item.labels if label not in _SYSTEM and not label.startswith("CATEGORY_")]
    if flags:
        parts.append(", ".join(flags))
    lines = [" | ".join(parts)]
    if item.subject:
        lines.append(f"Subject: {item.subject}")
    if item.attachments:
        lines.append(
            "Attachments: "
            + "; ".join(f"{a.filename} (part {a.part_id}, {human_size(a.size)})" for a in item.attachments)
        )
    return "\n".join(lines)


def render_message(item: ThreadMessage) -> str:
    lines = [render_message_head(item)]
    if item.body_text:
        lines.append(item.body_text)
        if item.next_offset is not None:
            lines.append(
                f"[Cut at {item.next_offset:,} of {item.body_chars:,} characters: gmail_get_message with "
                f'message_id="{item.id}", offset={item.next_offset}, strip_quoted=true reads on.]'
            )
    elif item.body_omitted:
        lines.append(f"[Text left out ({item.body_chars:,} characters).] {item.snippet or ''}".rstrip())
    elif item.body_text == "":
        lines.append("(no text of its own)")
    elif item.snippet:
        lines.append(f"Snippet: {item.snippet}")
    return "\n".join(lines)


def render_reply(reply: ReplyContextItem, last_position: int | None) -> str:
    where = f"[{last_position}]" if last_position else reply.reply_to_id
    who = "you" if reply.last_from_me else (reply.last_sender or "?")
    lines = [f"Reply context (answers {where}, last written by {who}):", f"To: {', '.join(reply.to) or '-'}"]
    if reply.cc:
        lines.append(f"Cc: {', '.join(reply.cc)}")
    lines.append(f"Subject: {reply.subject}")
    if reply.in_reply_to:
        lines.append(f"In-Reply-To: {reply.in_reply_to}")
    if reply.references:
        lines.append(f"References: {reply.references}")
    return "\n".join(lines)


def render_thread(result: GetThreadResult) -> str:
    """Our lines (counts, security warnings, notes) outside the fence; the messages and reply context inside."""
    head = f"Thread {result.thread_id}: {result.message_count} message(s)"
    first, last = (result.messages[0].position, result.messages[-1].position) if result.messages else (0, 0)
    if (first, last) != (1, result.message_count):
        head += f", showing {first}-{last}"
    ours = [head + ", oldest first."]
    flagged = [
        f"[{item.position}] {warning.code} ({warning.detail})"
        for item in result.messages
        if item.security
        for warning in item.security.warnings
    ]
    if flagged:
        ours.append("Security: " + "; ".join(flagged))
    blocks = [f"Subject: {result.subject or '(no subject)'}"]
    blocks.extend(render_message(item) for item in result.messages)
    if result.reply:
        position = next((m.position for m in result.messages if m.id == result.reply.reply_to_id), None)
        blocks.append(render_reply(result.reply, position))
    ours.append(Fence().wrap("\n\n".join(blocks)))
    if result.notes:
        ours.append("\n".join(f"Note: {note}" for note in result.notes))
    return "\n".join(ours)
