"""`python -m server.cli --demo tour`: a guided run through every read tool, each call shown as it is made.

Every step is one tool call, printed with its arguments before its answer, so the count at the end is the number
of calls on the screen. Later steps take their ids from earlier answers (the thread and the attachment of the
message a search found), so the tour works on a real mailbox too, where it skips what it cannot find.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any, TextIO

RULE = "─" * 78

MARKERS = """\
How to read the answers: text written by a mail's sender sits between [mail 1a2b3c4d] and [/mail 1a2b3c4d]
lines. The value is random for every answer, so a message cannot fake the end of its own block, and the first
line tells the assistant that what follows is data, not instructions. A "Security:" line before the block
names what looks wrong (forged sender, replies routed elsewhere, text hidden from the reader)."""

Arguments = dict[str, Any]
# A step: title, tool, and its arguments, made from the answers so far (None: skip the step).
Step = tuple[str, str, Callable[[dict[str, Any]], Arguments | None]]


def first(answers: dict[str, Any], step: str, field: str = "id") -> Any:
    messages = (answers.get(step) or {}).get("messages") or []
    return messages[0][field] if messages else None


def attachment_of(answers: dict[str, Any]) -> Arguments | None:
    message = answers.get("message") or {}
    attachments = message.get("attachments") or []
    if not attachments:
        return None
    return {"message_id": message["id"], "attachment": attachments[0]["part_id"], "max_chars": 1200}


def flagged(answers: dict[str, Any]) -> Arguments | None:
    found = first(answers, "invoice")
    return {"message_id": found, "max_body_chars": 1200} if found else None


STEPS: list[tuple[str, Step]] = [
    ("inbox", ("The five newest messages in the inbox", "gmail_search_messages",
               lambda _: {"query": "in:inbox", "max_results": 5})),
    ("starred", ("Starred messages, by label", "gmail_search_messages",
                 lambda _: {"query": "", "label_ids": ["STARRED"], "max_results": 3})),
    ("nothing", ("A search that finds nothing (see the hint)", "gmail_search_messages",
                 lambda _: {"query": "from:nobody@nowhere.invalid"})),
    ("checkpoint", ("A checkpoint, to ask later what changed", "gmail_changes_since", lambda _: {})),
    ("found", ("A message with an attachment, from a conversation", "gmail_search_messages",
               lambda _: {"query": "subject:Lisbon offsite has:attachment", "max_results": 1})),
    ("message", ("Reading it: headers, text, attachments", "gmail_get_message",
                 lambda a: {"message_id": id_, "max_body_chars": 600} if (id_ := first(a, "found")) else None)),
    ("thread", ("The whole conversation, each message's own words", "gmail_get_thread",
                lambda a: {"thread_id": t, "max_body_chars_per_message": 300, "message_range": "6-"}
                if (t := first(a, "found", "thread_id")) else None)),
    ("attachment", ("Its first attachment, read as text", "gmail_read_attachment", attachment_of)),
    ("labels", ("Labels and their counts", "gmail_list_labels",
                lambda _: {"labels": ["INBOX", "STARRED", "UNREAD"]})),
    ("invoice", ("A message the server flags: a search shows the warning...", "gmail_search_messages",
                 lambda _: {"query": 'subject:"Invoice INV-4471"', "max_results": 1})),
    ("flagged", ("...and reading it shows what is wrong; the hidden instructions stay out", "gmail_get_message",
                 flagged)),
    ("changes", ("What changed since the checkpoint (nothing: no one else touches this mailbox)",
                 "gmail_changes_since",
                 lambda a: {"checkpoint": c} if (c := (a.get("checkpoint") or {}).get("checkpoint")) else None)),
]  # fmt: skip


async def run_tour(client: Any, *, demo: bool, as_json: bool, out: TextIO, show: Callable[..., bool],
                   with_account: Callable[[Arguments], Arguments]) -> int:  # fmt: skip
    """Runs the steps against an open client session; returns the exit status."""
    started = time.perf_counter()
    source = "the bundled demo mailbox (local Gmail emulator)" if demo else "your Gmail"
    info = client.server_info
    out.write(f"{RULE}\nGmail MCP server tour on {source}\n")
    out.write(f"Server {info.name if info else '?'} {info.version if info else ''}, ")
    out.write(f"MCP protocol {client.protocol_version}\n{RULE}\n")
    for tool in (await client.list_tools()).tools:
        out.write(f"Tool {tool.name}: {(tool.description or '').split('. ')[0]}.\n")
    out.write(f"\n{MARKERS}\n")
    answers: dict[str, Any] = {}
    calls = 0
    for key, (title, tool, make) in STEPS:
        if key == "invoice" and not demo:
            break  # the flagged invoice lives in the demo mailbox only
        arguments = make(answers)
        if arguments is None:
            continue
        out.write(f"\n{RULE}\n▶ {title}\n  {tool} {json.dumps(arguments, ensure_ascii=False)}\n\n")
        result = await client.call_tool(tool, with_account(arguments))
        calls += 1
        if not show(result, as_json, out):
            return 1
        answers[key] = result.structured_content or {}
    out.write(f"\n{RULE}\nDone: {calls} tool calls in {time.perf_counter() - started:.1f} s. ")
    out.write("Next: connect your own Gmail and your assistant (README.md, 'Connect Gmail').\n")
    return 0
