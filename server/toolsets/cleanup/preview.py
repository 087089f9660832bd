"""`gmail_cleanup_preview`: what a cleanup of a query would touch, for the person to see before anything changes.

Costs exactly the listing pages (`messages.list`, 500 ids a page, 5 units each) plus one batch of sample reads
(`messages.get` metadata for `SAMPLE_SIZE` messages spread over the result, the newest and oldest included, so
the date range is exact). Gmail's listing carries nothing but ids, so the senders are those of the samples: an
estimate, said as one. The ids are kept (`runtime/cleanup_book.py`): the run acts on exactly these messages.

Each action changes one system label the listing requires, so undo can put back exactly what it changed:
archive lists only messages in the Inbox (`labelIds=INBOX`) and removes INBOX; mark_read lists only unread ones
and removes UNREAD; label leaves out messages that already carry the label and adds it; trash adds TRASH and
keeps every other label, so undo (removing TRASH) restores each message as it was.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timezone
from email.utils import parseaddr
from typing import Any

from server.errors import InvalidInputError
from server.gmail.label_match import find_label
from server.runtime.cleanup_book import CleanupPlan
from server.tools import ToolContext
from server.toolsets.cleanup.models import CleanupPreviewInput, CleanupPreviewResult, Sample, SenderCount
from server.toolsets.common import MAX_ITEM_FIELD_CHARS, bounded, short_date

PAGE_SIZE = 500  # Gmail's largest messages.list page
MAX_MESSAGES = 25_000  # one cleanup: 50 listing pages, 25 batchModify calls
SAMPLE_SIZE = 10  # one batch of the client's starting size
TOP_SENDERS = 5
LISTED_WITH = {"archive": ("INBOX",), "mark_read": ("UNREAD",), "label": (), "trash": ()}
RESERVED_TARGETS = frozenset({"INBOX", "UNREAD", "TRASH", "SPAM", "SENT", "DRAFT", "CHAT", "STARRED", "IMPORTANT"})


def describe(action: str, target: str | None) -> str:
    return {
        "archive": "take it out of the Inbox (it stays in All Mail)",
        "mark_read": "mark it read",
        "label": f"add the label {target!r}",
        "trash": "move it to Trash (Gmail empties Trash after 30 days; undo brings it back)",
    }[action] + ", and add a dated gmail-mcp/cleanup-... label so the cleanup can be undone"


def preview(ctx: ToolContext, args: CleanupPreviewInput) -> CleanupPreviewResult:
    add, remove, query, target = _change(ctx, args)
    ids, capped = _listed(ctx, query, LISTED_WITH[args.action])
    result = CleanupPreviewResult(
        query=args.query, action=args.action, message_count=len(ids), capped=capped, would=describe(args.action, target)
    )
    if not ids:
        result.notes.append("no message matches: nothing to clean up")
        return result
    _describe_samples(ctx, ids, result)
    if "unsubscribe" in ctx.safety.write_tools:  # name the tool only where it is offered
        per_sender = {parseaddr(sample.sender)[1].lower() or sample.sender: sample.id for sample in result.samples}
        result.unsubscribe_message_ids = list(per_sender.values())
    plan = CleanupPlan(
        preview_id="", query=args.query, action=args.action, ids=tuple(ids), add=add, remove=remove, target_label=target
    )
    result.preview_id = ctx.safety.cleanups.add(plan).preview_id
    if capped:
        result.notes.append(
            f"more than {MAX_MESSAGES:,} messages match: this cleanup takes the newest {MAX_MESSAGES:,}; preview "
            "again afterwards for the rest"
        )
    return result


def _change(ctx: ToolContext, args: CleanupPreviewInput) -> tuple[tuple[str, ...], tuple[str, ...], str, str | None]:
    """(labels to add, labels to remove, the query to list, the target label's name) of the action."""
    if args.action != "label":
        if args.label is not None:
            raise InvalidInputError("label is only for action 'label'.", hint="Leave label out, or use action 'label'.")
        removes = {"archive": ("INBOX",), "mark_read": ("UNREAD",), "trash": ()}[args.action]
        return (("TRASH",) if args.action == "trash" else ()), removes, args.query, None
    if not args.label:
        raise InvalidInputError("Action 'label' needs the label to add.", hint="Pass label, e.g. 'Newsletters'.")
    name = args.label.strip()
    found = find_label(name, ctx.cache.labels()) or find_label(name, ctx.cache.labels(refresh=True))
    if found is not None and str(found.get("id")) in RESERVED_TARGETS:
        raise InvalidInputError(
            f"{name!r} is a system label.",
            hint="Use action archive, mark_read or trash for those; label adds a user label.",
        )
    if found is None:
        return (), (), args.query, name  # created by the run; no message carries it yet
    quoted = str(found.get("name") or name).replace('"', "")
    return (str(found["id"]),), (), f'({args.query}) -label:"{quoted}"', quoted


def _listed(ctx: ToolContext, query: str, label_ids: tuple[str, ...]) -> tuple[list[str], bool]:
    ids: list[str] = []
    token: str | None = None
    while True:
        page = ctx.gmail.list_messages(query=query, max_results=PAGE_SIZE, page_token=token, label_ids=label_ids)
        ids.extend(str(item["id"]) for item in page.get("messages") or [] if isinstance(item, dict) and item.get("id"))
        token = page.get("nextPageToken")
        if not token or len(ids) >= MAX_MESSAGES:
            break
    unique = list(dict.fromkeys(ids))
    return unique[:MAX_MESSAGES], bool(token) or len(unique) > MAX_MESSAGES


def sample_indexes(count: int, size: int = SAMPLE_SIZE) -> list[int]:
    """`size` positions spread evenly over `count`, the first and the last included."""
    if count <= size:
        return list(range(count))
    return sorted({round(step * (count - 1) / (size - 1)) for step in range(size)})


def _describe_samples(ctx: ToolContext, ids: list[str], result: CleanupPreviewResult) -> None:
    chosen = [ids[index] for index in sample_indexes(len(ids))]
    found = ctx.gmail.get_messages_metadata(chosen, headers=["From", "Subject", "Date"])
    senders: Counter[str] = Counter()
    for message_id in chosen:
        resource = found.get(message_id)
        if not isinstance(resource, dict):
            continue
        headers = _headers(resource)
        sender = parseaddr(headers.get("from", ""))[1].lower() or headers.get("from", "") or "(unknown sender)"
        senders[bounded(sender, 200) or ""] += 1
        result.samples.append(
            Sample(
                id=message_id,
                sender=bounded(headers.get("from", ""), 200) or "",
                subject=bounded(headers.get("subject", ""), MAX_ITEM_FIELD_CHARS) or "",
                date=_iso(resource),
            )
        )
    result.sample_size = len(result.samples)
    result.top_senders = [SenderCount(sender=name, count=n) for name, n in senders.most_common(TOP_SENDERS)]
    first, last = found.get(ids[0]), found.get(ids[-1])
    result.newest = _iso(first) if isinstance(first, dict) else None
    result.oldest = _iso(last) if isinstance(last, dict) else None


def _headers(resource: dict[str, Any]) -> dict[str, str]:
    payload = resource.get("payload") or {}
    found: dict[str, str] = {}
    for item in payload.get("headers") or []:
        if isinstance(item, dict):
            found.setdefault(str(item.get("name", "")).lower(), str(item.get("value", "")))
    return found


def _iso(resource: dict[str, Any]) -> str | None:
    value = str(resource.get("internalDate") or "")
    if not value.isdecimal():
        return None
    return datetime.fromtimestamp(int(value) / 1000, tz=timezone.utc).isoformat()


def render_preview(result: CleanupPreviewResult) -> str:
    if not result.preview_id:
        return f"No message matches {result.query!r}: nothing to clean up."
    lines = [
        f"Cleanup preview {result.preview_id}: {result.message_count:,} message(s) match {result.query!r}"
        + (" (capped: the newest only)" if result.capped else "")
        + ".",
        f"Would {result.would}.",
        f"Dates: {short_date(result.oldest)} .. {short_date(result.newest)}",
        f"Senders among {result.sample_size} samples: "
        + (", ".join(f"{s.sender} ({s.count})" for s in result.top_senders) or "unknown"),
        "Samples:",
        *(f"- {short_date(s.date)} {s.sender}: {s.subject}" for s in result.samples),
        "",
        "Nothing has changed yet. Show the person this preview; only if they agree, call gmail_cleanup_run with "
        f"preview_id={result.preview_id}.",
    ]
    if result.unsubscribe_message_ids:
        lines.append(
            "To unsubscribe from these senders as well (one yes for all): gmail_unsubscribe with message_ids="
            + ",".join(result.unsubscribe_message_ids)
        )
    lines.extend(f"Note: {note}" for note in result.notes)
    return "\n".join(lines)
