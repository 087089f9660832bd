"""`gmail_list_labels`: every label (system and user) with its id, name, type and counts (`gmail.readonly`).

One `labels.list` (names, no counts), then one batch of `labels.get` for the counts: two round trips for any
number of labels up to 50, one more per further 50. Asking for a few labels by name or id counts only those;
`counts=false` costs the list alone. The fresh list also refreshes the account's cached one, which the search
tool uses to resolve label ids and explain unknown label names.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from server.errors import GmailError, InvalidInputError
from server.gmail.label_match import Label, find_label, unknown_label_hint
from server.tools import ToolContext, Toolset, ToolSpec
from server.toolsets.common import MAX_ITEM_FIELD_CHARS, ToolInput, ToolOutput, bounded
from server.toolsets.offers import LABEL_NAMES, LABELS_RESOURCE

MAX_COUNTED = 100  # labels.get parts per call (two batches); past it, ask for the labels wanted
# System labels in the order a person scans them; the rest follow, then user labels by name.
_SYSTEM_ORDER = (
    "INBOX",
    "STARRED",
    "IMPORTANT",
    "UNREAD",
    "SENT",
    "DRAFT",
    "SPAM",
    "TRASH",
    "CATEGORY_PERSONAL",
    "CATEGORY_SOCIAL",
    "CATEGORY_PROMOTIONS",
    "CATEGORY_UPDATES",
    "CATEGORY_FORUMS",
    "CHAT",
)

LabelRef = Annotated[str, Field(min_length=1, max_length=225)]


def _false(value: object) -> bool:
    return not value


def _none(value: object) -> bool:
    return value is None


class ListLabelsInput(ToolInput):
    labels: list[LabelRef] | None = Field(
        None, max_length=50, description="Only these labels (names or ids); leave out for all."
    )
    counts: bool = Field(True, description="Message and unread counts.")


class LabelItem(ToolOutput):
    id: str
    name: str = Field(description='As Gmail writes it; nested labels as "Parent/Child".')
    type: Literal["system", "user"]
    messages_total: int | None = Field(None, exclude_if=_none)
    messages_unread: int | None = Field(None, exclude_if=_none)
    hidden: bool = Field(
        False, exclude_if=_false, description="A user label hidden from Gmail's label list (Settings > Labels)."
    )


class ListLabelsResult(ToolOutput):
    labels: list[LabelItem]
    counted: int = Field(description="How many labels carry counts.")
    notes: list[str] = Field(default_factory=list, exclude_if=_false)


def list_labels(ctx: ToolContext, args: ListLabelsInput) -> ListLabelsResult:
    labels = ctx.cache.store_labels(ctx.gmail.list_labels().get("labels") or [])
    notes: list[str] = []
    chosen = _chosen(args.labels, labels) if args.labels else sorted(labels, key=_order)
    counts: dict[str, dict[str, Any] | GmailError] = {}
    if args.counts:
        wanted = [label["id"] for label in chosen[:MAX_COUNTED]]
        counts = ctx.gmail.get_labels(wanted) if wanted else {}
        if len(chosen) > MAX_COUNTED:
            notes.append(
                f"Counts are given for the first {MAX_COUNTED} of {len(chosen)} labels: pass labels=[...] to count "
                "others."
            )
        failed = sum(isinstance(answer, GmailError) for answer in counts.values())
        if failed:
            notes.append(f"Counts of {failed} label(s) could not be read: call again to retry.")
    items = [_item(label, counts.get(label["id"])) for label in chosen]
    return ListLabelsResult(
        labels=items,
        counted=sum(item.messages_total is not None for item in items),
        notes=notes,
    )


def _chosen(wanted: list[str], labels: list[Label]) -> list[Label]:
    chosen: list[Label] = []
    for name in dict.fromkeys(wanted):
        label = find_label(name, labels)
        if label is None:
            raise InvalidInputError(
                f"No label named {name!r} exists in this mailbox.", hint=unknown_label_hint(name, labels)
            )
        if label not in chosen:
            chosen.append(label)
    return chosen


def _order(label: Label) -> tuple[int, int, str]:
    label_id = str(label.get("id"))
    if label.get("type") == "system":
        rank = _SYSTEM_ORDER.index(label_id) if label_id in _SYSTEM_ORDER else len(_SYSTEM_ORDER)
        return 0, rank, label_id
    return 1, 0, str(label.get("name", "")).casefold()


def _hidden(label: Label) -> bool:
    """What a person calls hidden: a user label they hid from the label list. System labels are left out: Gmail
    marks TRASH, SPAM, IMPORTANT, CHAT and the categories `labelHide` (Nango integration-templates
    tests/list-labels.test.json, 2026) though Gmail shows them under "More" and as inbox tabs."""
    return label.get("type") == "user" and label.get("labelListVisibility") == "labelHide"


def _count(detail: dict[str, Any], key: str) -> int | None:
    value = detail.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _item(label: Label, detail: dict[str, Any] | GmailError | None) -> LabelItem:
    counted = detail if isinstance(detail, dict) else {}
    return LabelItem(
        id=bounded(str(label["id"]), MAX_ITEM_FIELD_CHARS) or "",
        name=bounded(str(label.get("name") or label["id"]), MAX_ITEM_FIELD_CHARS) or "",
        type="system" if label.get("type") == "system" else "user",
        messages_total=_count(counted, "messagesTotal"),
        messages_unread=_count(counted, "messagesUnread"),
        hidden=_hidden(label),
    )


def _counts(item: LabelItem) -> str:
    if item.messages_total is None:
        return ""
    unread = f", {item.messages_unread:,} unread" if item.messages_unread else ""
    return f": {item.messages_total:,} messages{unread}"


def render_labels(result: ListLabelsResult) -> str:
    system = [item for item in result.labels if item.type == "system"]
    user = [item for item in result.labels if item.type == "user"]
    lines: list[str] = []
    if system:
        lines.append("System labels:")
        lines.extend(f"- {item.id}{_counts(item)}" for item in system)
    if user:
        lines.append("User labels (name | id):")
        lines.extend(f"- {item.name} | {item.id}{_counts(item)}{' (hidden)' if item.hidden else ''}" for item in user)
    if not lines:
        lines.append("No labels.")
    lines.extend(f"Note: {note}" for note in result.notes)
    lines.append('Search by label: gmail_search_messages with label_ids=["<name or id>"].')
    return "\n".join(lines)


LIST_LABELS = ToolSpec(
    name="gmail_list_labels",
    title="List Gmail labels",
    description=(
        "List the mailbox's labels, system and user (nested as Parent/Child), with ids and message/unread "
        "counts. Search by one with gmail_search_messages' label_ids (name or id)."
    ),
    input_model=ListLabelsInput,
    output_model=ListLabelsResult,
    run=list_labels,
    render=render_labels,
)

LABELS = Toolset(
    name="label_list",
    description="List labels and their counts.",
    tools=(LIST_LABELS,),
    resources=(LABELS_RESOURCE,),
    completions=(LABEL_NAMES,),
)
