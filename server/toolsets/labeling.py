"""The opt-in `labels` toolset: `gmail_modify_messages` tidies the inbox (labels, archive, read, star, trash).

Up to 1,000 messages per call in one `messages.batchModify` (one `messages.modify`/`trash`/`untrash` for a single
message); repeated calls give the same mailbox, so the retry loop may repeat them. Labels are named by display
name or id; a user label that does not exist is created only when asked (`create_missing_labels`). Trash is a
move (Gmail empties it after 30 days; `trash: false` brings messages back); nothing is ever deleted for good.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator

from server import scopes
from server.errors import InvalidInputError, NotFoundError
from server.gmail.label_match import find_label, unknown_label_hint
from server.tools import Annotations, ToolContext, Toolset, ToolSpec
from server.toolsets.common import MESSAGE_ID_PATTERN, ToolInput, ToolOutput
from server.toolsets.drafts.common import audited
from server.toolsets.offers import WRITE_INSTRUCTIONS

MAX_IDS = 1000
TOOL = "gmail_modify_messages"
# Gmail's own labels (SENT, DRAFT, CHAT) and the ones with their own paths here (SPAM: never; TRASH: `trash`).
RESERVED = frozenset({"SENT", "DRAFT", "CHAT", "SPAM", "TRASH"})
MessageId = Annotated[str, Field(pattern=MESSAGE_ID_PATTERN)]
LabelRef = Annotated[str, Field(min_length=1, max_length=225)]


class ModifyMessagesInput(ToolInput):
    message_ids: list[MessageId] = Field(
        min_length=1, max_length=MAX_IDS, description="Ids from gmail_search_messages."
    )
    add_labels: list[LabelRef] = Field(default_factory=list, max_length=50, description="Label names or ids to add.")
    remove_labels: list[LabelRef] = Field(
        default_factory=list, max_length=50, description="Label names or ids to remove."
    )
    archive: bool = Field(False, description="Take the messages out of the inbox (they stay in All Mail).")
    mark_read: bool | None = Field(None, description="true: mark read; false: mark unread.")
    star: bool | None = Field(None, description="true: star; false: unstar.")
    trash: bool | None = Field(None, description="true: move to Trash (recoverable for 30 days); false: restore.")
    create_missing_labels: bool = Field(False, description="Create user labels in add_labels that do not exist yet.")

    @model_validator(mode="after")
    def _something_to_do(self) -> ModifyMessagesInput:
        flags = (self.mark_read, self.star, self.trash)
        if not (self.add_labels or self.remove_labels or self.archive) and all(flag is None for flag in flags):
            raise ValueError("nothing to change: give add_labels, remove_labels, archive, mark_read, star or trash")
        return self


class ModifyMessagesResult(ToolOutput):
    message_count: int
    added: list[str] = Field(default_factory=list, description="Labels put on every message (names).")
    removed: list[str] = Field(default_factory=list, description="Labels taken off every message (names).")
    trashed: int = 0
    restored: int = 0
    created_labels: list[str] = Field(default_factory=list)
    label_ids: list[str] | None = Field(None, description="The message's labels afterwards (single message only).")
    dry_run: bool = False
    notes: list[str] = Field(default_factory=list)


def _resolve(
    ctx: ToolContext, refs: list[str], *, adding: bool, create: bool
) -> tuple[list[str], list[str], list[str]]:
    """(label ids, their display names, names to create) for the references; unknown ones are an error.

    Labels come from the account's label cache; a name it does not know is looked up again in a fresh list
    (the person may have just created the label in Gmail) before it counts as unknown."""
    ids, names, to_create = [], [], []
    for ref in refs:
        key = ref.strip()
        if key.upper() in RESERVED:
            raise InvalidInputError(
                f"{key!r} cannot be set with add_labels/remove_labels.",
                hint="Use trash=true/false for Trash; SENT, DRAFT, CHAT and SPAM are not changed by this tool.",
            )
        label = find_label(key, ctx.cache.labels()) or find_label(key, ctx.cache.labels(refresh=True))
        if label is None:
            if adding and create:
                to_create.append(key)
                continue
            raise InvalidInputError(
                f"No label named {key!r}.",
                hint=unknown_label_hint(key, ctx.cache.labels())
                + (" Pass create_missing_labels=true to create it (add_labels only)." if adding else ""),
            )
        label_id = str(label["id"])
        if label_id in RESERVED:
            raise InvalidInputError(f"{key!r} cannot be set with add_labels/remove_labels.")
        if label_id not in ids:
            ids.append(label_id)
            names.append(str(label.get("name") or label_id))
    return ids, names, to_create


def modify_messages(ctx: ToolContext, args: ModifyMessagesInput) -> ModifyMessagesResult:
    message_ids = list(dict.fromkeys(args.message_ids))
    add, add_names, to_create = _resolve(ctx, args.add_labels, adding=True, create=args.create_missing_labels)
    remove, remove_names, _ = _resolve(ctx, args.remove_labels, adding=False, create=False)
    for flag, label, on in (
        (args.archive or None, "INBOX", False),
        (args.mark_read, "UNREAD", False),
        (args.star, "STARRED", True),
    ):
        if flag is None:
            continue
        target, names = (add, add_names) if flag == on else (remove, remove_names)
        if label not in target:
            target.append(label)
            names.append(label)
    clash = set(add) & set(remove)
    if clash:
        raise InvalidInputError(f"Label(s) {', '.join(sorted(clash))} would be both added and removed.")
    result = ModifyMessagesResult(
        message_count=len(message_ids), added=add_names, removed=remove_names, dry_run=ctx.safety.dry_run
    )
    if ctx.safety.dry_run:
        result.created_labels = to_create
        result.trashed = len(message_ids) if args.trash else 0
        result.restored = len(message_ids) if args.trash is False else 0
        with audited(ctx, TOOL, "modify", ids=message_ids, add=add, remove=remove, trash=args.trash):
            result.notes.append("dry run (GMAIL_MCP_DRY_RUN): nothing was changed")
        return result
    for name in to_create:
        with audited(ctx, TOOL, "labels.create", label=name):
            created = ctx.gmail.create_label(name)
        add.append(str(created.get("id")))
        add_names.append(name)
        result.created_labels.append(name)
        ctx.cache.labels(refresh=True)  # the new label is known at once to searches and later calls
    try:
        if add or remove:
            with audited(ctx, TOOL, "modify", ids=message_ids, add=add, remove=remove):
                if len(message_ids) == 1:
                    result.label_ids = list(
                        ctx.gmail.modify_message(message_ids[0], add=add, remove=remove).get("labelIds") or []
                    )
                else:
                    ctx.gmail.batch_modify(message_ids, add=add, remove=remove)
        if args.trash is not None:
            action = "trash" if args.trash else "untrash"
            with audited(ctx, TOOL, action, ids=message_ids):
                if len(message_ids) == 1:
                    single = ctx.gmail.trash_message if args.trash else ctx.gmail.untrash_message
                    result.label_ids = list(single(message_ids[0]).get("labelIds") or [])
                elif args.trash:
                    ctx.gmail.batch_modify(message_ids, add=["TRASH"])
                else:
                    ctx.gmail.batch_modify(message_ids, remove=["TRASH"])
            result.trashed = len(message_ids) if args.trash else 0
            result.restored = 0 if args.trash else len(message_ids)
    except NotFoundError:
        raise _which_missing(ctx, message_ids) from None
    return result


def _which_missing(ctx: ToolContext, message_ids: list[str]) -> NotFoundError:
    """Gmail refuses a whole batch for one unknown id: name the ids that do not exist (nothing was changed)."""
    found = ctx.gmail.get_messages_metadata(message_ids, headers=(), fields="id")
    missing = [message_id for message_id, answer in found.items() if isinstance(answer, NotFoundError)]
    shown = ", ".join(missing[:20]) + (f" and {len(missing) - 20} more" if len(missing) > 20 else "")
    return NotFoundError(
        f"No message with id {shown or '(one of the ids)'}; nothing was changed.",
        hint="Take ids from gmail_search_messages and call again without the missing ones.",
        status=404,
    )


def render_modified(result: ModifyMessagesResult) -> str:
    lead = "Dry run: would change" if result.dry_run else "Changed"
    parts = [f"{lead} {result.message_count} message{'s' if result.message_count != 1 else ''}"]
    if result.added:
        parts.append("added " + ", ".join(result.added))
    if result.removed:
        parts.append("removed " + ", ".join(result.removed))
    if result.trashed:
        parts.append(f"moved {result.trashed} to Trash")
    if result.restored:
        parts.append(f"restored {result.restored} from Trash")
    lines = ["; ".join(parts) + "."]
    if result.created_labels:
        lines.append("New labels: " + ", ".join(result.created_labels))
    if result.label_ids is not None:
        lines.append("Labels now: " + (", ".join(result.label_ids) or "none"))
    lines.extend(f"Note: {note}" for note in result.notes)
    return "\n".join(lines)


MODIFY_MESSAGES = ToolSpec(
    name=TOOL,
    title="Label, archive, mark, star or trash Gmail messages",
    description=(
        "Tidy up to 1,000 messages at once: add or remove labels (by name or id), archive (out of the inbox), mark "
        "read or unread, star or unstar, move to Trash or restore from it. Nothing is deleted for good. Set "
        "create_missing_labels to create new user labels. Act only on what the person asked."
    ),
    input_model=ModifyMessagesInput,
    output_model=ModifyMessagesResult,
    run=modify_messages,
    render=render_modified,
    annotations=Annotations(read_only=False, destructive=False, idempotent=True),
    scopes=scopes.LABELING,
)

LABELING = Toolset(
    name="labels",
    description="Label, archive, mark read/unread, star, trash and restore messages.",
    tools=(MODIFY_MESSAGES,),
    opt_in=True,
    instructions=WRITE_INSTRUCTIONS,
)
