"""`gmail_changes_since`: what arrived, left or changed labels since a checkpoint, from Gmail's history.

Without a checkpoint: `users.getProfile` (1 request) gives the mailbox's current history id as a checkpoint.
With one: `history.list` since it (1 request per 500 records, following pages up to `MAX_HISTORY_PAGES`), then
one metadata batch for the top added and re-labelled messages (sender, subject, date, snippet; none when the
summaries are cached), as search enriches its top results. A checkpoint older than Gmail's history (about a
week, 404) is an answer, not a failure: it says to catch up with a search and hands a fresh checkpoint.

The checkpoint is opaque to the model (like a page token): the history id, base64url-encoded with a version tag.
The next checkpoint is the `historyId` Gmail answered with, as its documentation says to store; when the pages
cap cuts the read short, it is the last record read instead, so nothing is skipped.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any, Literal

from pydantic import Field, field_validator

from server.errors import InvalidInputError, NotFoundError
from server.gmail import history
from server.gmail.cache import SUMMARY_FIELDS, SUMMARY_HEADERS
from server.tools import ToolContext, Toolset, ToolSpec
from server.toolsets.common import UNTRUSTED_CONTENT, Count, ToolInput, ToolOutput, omitted_when_none
from server.toolsets.messages.label_filter import LabelFilter
from server.toolsets.messages.search import SearchResultItem, render_item, summarize_metadata

MAX_HISTORY_PAGES = 5  # 2,500 history records; past that the answer says `more` and the model calls again
SYSTEM_LABELS = frozenset(
    {"INBOX", "UNREAD", "STARRED", "IMPORTANT", "SENT", "DRAFT", "SPAM", "TRASH", "CHAT"}
    | {f"CATEGORY_{name}" for name in ("PERSONAL", "SOCIAL", "PROMOTIONS", "UPDATES", "FORUMS")}
)
_USER_LABEL_ID = re.compile(r"^Label_[0-9]{1,30}$")
_CHECKPOINT_TAG = "v1:"
EXPIRED_HINT = (
    "Gmail no longer keeps history that far back (about a week, sometimes only hours). Catch up with "
    "gmail_search_messages using after:YYYY/MM/DD, then use the new checkpoint from here on."
)


def encode_checkpoint(history_id: int | str) -> str:
    return base64.urlsafe_b64encode(f"{_CHECKPOINT_TAG}{int(history_id)}".encode()).decode().rstrip("=")


def decode_checkpoint(checkpoint: str) -> int:
    try:
        text = base64.urlsafe_b64decode(checkpoint + "=" * (-len(checkpoint) % 4)).decode("ascii")
    except (binascii.Error, ValueError):
        text = ""
    number = text.removeprefix(_CHECKPOINT_TAG)
    if not text.startswith(_CHECKPOINT_TAG) or not number.isdigit() or len(number) > 20:
        raise ValueError(
            "not a checkpoint this server gave: pass back the checkpoint of an earlier gmail_changes_since "
            "answer unchanged, or leave it out to get the current one"
        )
    return int(number)


class ChangesSinceInput(ToolInput):
    checkpoint: str | None = Field(
        None,
        min_length=1,
        max_length=100,
        description="checkpoint from an earlier answer of this tool; leave out to get the current one.",
    )
    label: str | None = Field(
        None,
        min_length=1,
        max_length=225,
        description="Only changes touching this label: INBOX, UNREAD, STARRED, or a user label's name or id.",
    )
    max_results: Count = Field(20, ge=1, le=50, description="Most messages listed (1-50).")

    @field_validator("checkpoint")
    @classmethod
    def _checkpoint_is_ours(cls, checkpoint: str | None) -> str | None:
        if checkpoint is not None:
            decode_checkpoint(checkpoint)
        return checkpoint


class ChangedMessage(SearchResultItem):
    change: Literal["added", "relabeled"]
    label_ids: list[str] = Field(default_factory=list)
    labels: list[str] = Field(default_factory=list, description="label_ids with user labels by name.")
    labels_added: list[str] | None = Field(None, exclude_if=omitted_when_none)
    labels_removed: list[str] | None = Field(None, exclude_if=omitted_when_none)


class ChangesSinceResult(ToolOutput):
    checkpoint: str = Field(description="Pass back as checkpoint next time.")
    messages: list[ChangedMessage] = Field(default_factory=list, description="Added (newest first), then relabeled.")
    deleted: list[str] = Field(default_factory=list)
    added_count: int = 0
    relabeled_count: int = 0
    deleted_count: int = 0
    more: bool = Field(False, description="Cut short: call again with checkpoint.")
    expired: bool = False
    first_checkpoint: bool = False
    hint: str | None = None


def changes_since(ctx: ToolContext, args: ChangesSinceInput) -> ChangesSinceResult:
    if args.checkpoint is None:
        return ChangesSinceResult(
            checkpoint=encode_checkpoint(ctx.gmail.get_profile()["historyId"]), first_checkpoint=True
        )
    start = decode_checkpoint(args.checkpoint)
    names = LabelFilter(ctx.cache)
    label_id = _label_id(args.label, names) if args.label else None
    pages: list[dict[str, Any]] = []
    token: str | None = None
    try:
        while len(pages) < MAX_HISTORY_PAGES:
            page = ctx.gmail.list_history(start_history_id=start, label_id=label_id, page_token=token)
            pages.append(page)
            token = page.get("nextPageToken") or None
            if token is None:
                break
    except NotFoundError:
        fresh = encode_checkpoint(ctx.gmail.get_profile()["historyId"])
        return ChangesSinceResult(checkpoint=fresh, expired=True, hint=EXPIRED_HINT)
    delta = history.summarize(start, pages, complete=token is None)
    newest_first = sorted(delta.changes.values(), key=lambda change: change.last_record, reverse=True)
    added = [c for c in newest_first if c.added and not c.deleted]
    relabeled = [c for c in newest_first if c.relabeled and not c.added and not c.deleted]
    deleted = [c.id for c in newest_first if c.deleted and not c.added]  # added and gone again: never seen
    shown_added, shown_relabeled = added[: args.max_results], relabeled[: args.max_results]
    top = [change.id for change in (shown_added + shown_relabeled)[: ctx.enrich_top_k]]
    details = ctx.gmail.get_messages_metadata(top, headers=SUMMARY_HEADERS, fields=SUMMARY_FIELDS) if top else {}
    ctx.metrics.record_enrichment(attempted=len(top), failed=sum(not isinstance(d, dict) for d in details.values()))
    next_id = delta.history_id if delta.complete else (delta.last_record_id or start)
    shown = [(change, "added") for change in shown_added] + [(change, "relabeled") for change in shown_relabeled]
    every = [i for change, _ in shown for i in (*change.label_ids, *change.labels_added, *change.labels_removed)]
    named = dict(zip(every, names.names(every), strict=True))  # one labels.list per cache period, if any
    return ChangesSinceResult(
        checkpoint=encode_checkpoint(next_id),
        messages=[_item(change, details.get(change.id), kind, named) for change, kind in shown],  # type: ignore[arg-type]
        deleted=deleted[: args.max_results],
        added_count=len(added),
        relabeled_count=len(relabeled),
        deleted_count=len(deleted),
        more=not delta.complete,
    )


def _label_id(label: str, names: LabelFilter) -> str:
    """The id `label` names (a system id, a user label's id or name); the closest names when none does."""
    if label.strip().upper() in SYSTEM_LABELS:
        return label.strip().upper()
    if _USER_LABEL_ID.match(label):
        return label
    found = names.find(label)
    if found is None:
        raise InvalidInputError(f"No label named {label!r} exists in this mailbox.", hint=names.unknown_hint(label))
    return str(found["id"])


def _item(
    change: history.MessageChange, detail: Any, kind: Literal["added", "relabeled"], named: dict[str, str]
) -> ChangedMessage:
    ref = {"id": change.id, "threadId": change.thread_id}
    summary = (
        summarize_metadata(ref, detail)
        if isinstance(detail, dict)
        else SearchResultItem(id=change.id, thread_id=change.thread_id)
    )
    relabeled = kind == "relabeled"
    return ChangedMessage(
        **summary.model_dump(),
        change=kind,
        label_ids=list(change.label_ids),
        labels=[named.get(label_id, label_id) for label_id in change.label_ids],
        labels_added=([named.get(i, i) for i in change.labels_added] or None) if relabeled else None,
        labels_removed=([named.get(i, i) for i in change.labels_removed] or None) if relabeled else None,
    )


def render_changes(result: ChangesSinceResult) -> str:
    """A count line, the new messages and the re-labelled ones as search lines, the deleted ids, the checkpoint."""
    cursor = f'Next checkpoint: "{result.checkpoint}".'
    if result.first_checkpoint:
        return f'Checkpoint: "{result.checkpoint}". Pass it as checkpoint later to see what changed after now.'
    if result.expired:
        return f"The checkpoint is too old for Gmail's history.\nHint: {result.hint}\n{cursor}"
    if not (result.added_count or result.relabeled_count or result.deleted_count):
        return f"No changes since the checkpoint. {cursor}"
    counts = (
        f"{result.added_count} new, {result.relabeled_count} re-labelled, {result.deleted_count} deleted"
        " since the checkpoint" + (" (more: call again with the next checkpoint)" if result.more else "")
    )
    lines = [counts + ".", cursor]
    added = [item for item in result.messages if item.change == "added"]
    relabeled = [item for item in result.messages if item.change == "relabeled"]
    if added:
        lines.append("New (id | date | from | subject):")
        lines += [line for number, item in enumerate(added, 1) for line in render_item(number, item)]
    if relabeled:
        lines.append("Re-labelled:")
        for number, item in enumerate(relabeled, 1):
            moves = [f"+{label}" for label in item.labels_added or []]
            moves += [f"-{label}" for label in item.labels_removed or []]
            first, *rest = render_item(number, item)
            lines += [f"{first} [{' '.join(moves)}]", *rest]
    if result.deleted:
        lines.append("Deleted: " + ", ".join(result.deleted))
    return "\n".join(lines)


CHANGES_SINCE = ToolSpec(
    name="gmail_changes_since",
    title="What changed in Gmail",
    description=(
        "What changed since a checkpoint: new messages (sender, subject, snippet), label changes (read, "
        "archived, starred) and deletions. Call without checkpoint to get one; each answer gives the next. "
        "Cheaper than searching again. " + UNTRUSTED_CONTENT
    ),
    input_model=ChangesSinceInput,
    output_model=ChangesSinceResult,
    run=changes_since,
    render=render_changes,
)

CHANGES = Toolset(name="changes", description="Follow what changes in the mailbox.", tools=(CHANGES_SINCE,))
