"""Where a message trashed earlier goes back to, read from Gmail's history; and which ids name a message at all.

Gmail's `messages.trash` takes INBOX off as it adds TRASH, and `untrash` takes TRASH off only (recorded: Nango
integration-templates tests/trash-thread.test.json, untrash-thread.test.json), so "restore from Trash" alone
lands in All Mail. What the message had before is in the history: the record that added TRASH to it also
removed INBOX when it was in the inbox (or the next record naming it, should Gmail ever split the two).

`inbox_before_trash` reads `history.list` (labelAdded/labelRemoved) from just before the oldest message's
`historyId` (its last change: the trash, when nothing touched it since), at most `MAX_HISTORY_PAGES` pages, and
answers per message: True (back to the Inbox), False (it was not in the Inbox), None (the history read does not
say: expired, more pages than read, or no trash record seen). Pure except for the Gmail reads it is handed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from server.errors import GmailError, NotFoundError
from server.tools import ToolContext

MAX_HISTORY_PAGES = 2  # 500 records each: 4 quota units at most
LABEL_TYPES = ("labelAdded", "labelRemoved")


def existing(ctx: ToolContext, message_ids: Sequence[str]) -> tuple[dict[str, dict[str, Any]], list[str], list[str]]:
    """One batched read of the ids (never cached: labels and historyId change): ({id: {id, historyId, labelIds}}
    of those that exist, ids that name no message, ids that could not be checked). A thread id given as a
    message id names no message unless it is its first message's (a sent draft's thread id names none)."""
    answers = ctx.gmail.get_messages_metadata(list(message_ids), headers=(), fields="id,historyId,labelIds")
    found: dict[str, dict[str, Any]] = {}
    missing: list[str] = []
    unchecked: list[str] = []
    for message_id in message_ids:
        answer = answers.get(message_id)
        if isinstance(answer, NotFoundError):
            missing.append(message_id)
        elif isinstance(answer, dict):
            found[message_id] = answer
        else:
            unchecked.append(message_id)
    return found, missing, unchecked


def inbox_before_trash(ctx: ToolContext, history_ids: dict[str, int]) -> dict[str, bool | None]:
    """Per message id: whether it was in the Inbox when it was last trashed (None: the history does not say)."""
    verdict: dict[str, bool | None] = dict.fromkeys(history_ids)
    known = [value for value in history_ids.values() if value > 0]
    if not known:
        return verdict
    records: list[dict[str, Any]] = []
    token: str | None = None
    complete = False
    try:
        for _page in range(MAX_HISTORY_PAGES):
            page = ctx.gmail.list_history(start_history_id=min(known) - 1, history_types=LABEL_TYPES, page_token=token)
            records += [record for record in page.get("history") or [] if isinstance(record, dict)]
            token = page.get("nextPageToken")
            if not token:
                complete = True
                break
    except GmailError:
        return verdict  # expired (404) or unavailable: say so rather than guess
    seen_until = max((_record_id(record) for record in records), default=0)
    for message_id, last_change in history_ids.items():
        if complete or last_change <= seen_until:  # its last change was read: the answer is current
            verdict[message_id] = _was_in_inbox(records, message_id)
    return verdict


def _record_id(record: dict[str, Any]) -> int:
    try:
        return int(record.get("id") or 0)
    except (TypeError, ValueError):
        return 0


def _was_in_inbox(records: list[dict[str, Any]], message_id: str) -> bool | None:
    changes = [change for record in records if (change := _change_of(record, message_id)) is not None]
    answer: bool | None = None
    for index, (added, removed) in enumerate(changes):
        if "TRASH" in added:
            after = changes[index + 1] if index + 1 < len(changes) else (set(), set())
            answer = "INBOX" in removed or ("INBOX" in after[1] and not after[0])
        elif "TRASH" in removed:
            answer = None  # restored since: a later trash (if any) decides
    return answer


def _change_of(record: dict[str, Any], message_id: str) -> tuple[set[str], set[str]] | None:
    """(labels added, labels removed) to the message in this record, None when the record does not name it."""
    added: set[str] = set()
    removed: set[str] = set()
    for key, into in (("labelsAdded", added), ("labelsRemoved", removed)):
        for entry in record.get(key) or []:
            message = entry.get("message") if isinstance(entry, dict) else None
            if isinstance(message, dict) and str(message.get("id") or "").lower() == message_id.lower():
                into.update(str(label) for label in entry.get("labelIds") or [])
    return (added, removed) if added or removed else None
