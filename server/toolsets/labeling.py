"""The opt-in `labels` toolset: `gmail_modify_messages` tidies the inbox (labels, archive, read, star, trash).

Up to 1,000 messages per call in one `messages.batchModify` (one `messages.modify`/`trash` for a single message);
repeated calls give the same mailbox, so the retry loop may repeat them. Gmail's batchModify answers 204 also for
ids that name no message (Nango tests/batch-modify-messages.test.json; taylorwilsdon/google_workspace_mcp PR
#1047), so several ids are first checked in one batched read, and the answer counts and names exactly the ids
changed and those that were not. Labels are named by display name or id; a user label that does not exist is
created only when asked (`create_missing_labels`). Trash is a move (Gmail empties it after 30 days) that takes
the message out of the Inbox; `trash: false` brings it back where it was then (see `restore.py`). Nothing is ever
deleted for good.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, model_validator

from server.errors import InvalidInputError, NotFoundError
from server.gmail import scopes
from server.gmail.label_match import find_label, unknown_label_hint
from server.tools import Annotations, ToolContext, Toolset, ToolSpec
from server.toolsets.common import MESSAGE_ID_PATTERN, ToolInput, ToolOutput
from server.toolsets.drafts.common import audited
from server.toolsets.restore import existing, inbox_before_trash

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
    label_ids: list[str] | None = Field(
        None, description="The message's labels afterwards, user labels by name (single message only)."
    )
    not_found: list[str] = Field(default_factory=list, description="Ids that name no message: nothing changed.")
    unverified: list[str] = Field(default_factory=list, description="Ids Gmail was asked to change, not checked.")
    back_in_inbox: int = Field(0, description="Restored messages put back in the Inbox (where they were).")
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
    if len(message_ids) == 1 and args.trash is not False:
        try:
            label_ids = _change_one(ctx, message_ids[0], add, remove, args.trash)
        except NotFoundError:
            raise _missing_error(message_ids) from None
        result.label_ids = _label_names(ctx, label_ids)
    else:
        _change_many(ctx, message_ids, add, remove, args.trash, result)
    result.trashed = result.message_count if args.trash else 0
    return result


def _change_one(ctx: ToolContext, message_id: str, add: list[str], remove: list[str], trash: bool | None) -> list[Any]:
    """One message: messages.modify and/or messages.trash (404 when the id names no message)."""
    label_ids: list[Any] = []
    if add or remove:
        with audited(ctx, TOOL, "modify", ids=[message_id], add=add, remove=remove):
            label_ids = list(ctx.gmail.modify_message(message_id, add=add, remove=remove).get("labelIds") or [])
    if trash:
        with audited(ctx, TOOL, "trash", ids=[message_id]):
            label_ids = list(ctx.gmail.trash_message(message_id).get("labelIds") or [])
    return label_ids


def _change_many(
    ctx: ToolContext,
    message_ids: list[str],
    add: list[str],
    remove: list[str],
    trash: bool | None,
    result: ModifyMessagesResult,
) -> None:
    """Several messages, or a restore: one batched read says which ids name a message (Gmail's batchModify
    passes over the others in silence), then batchModify on those; a restore also reads the history."""
    found, missing, unchecked = existing(ctx, message_ids)
    targets = [message_id for message_id in message_ids if message_id not in missing]
    if not found and not unchecked:
        raise _missing_error(missing)
    result.message_count, result.not_found, result.unverified = len(found), missing, unchecked
    if add or remove:
        with audited(ctx, TOOL, "modify", ids=targets, add=add, remove=remove):
            ctx.gmail.batch_modify(targets, add=add, remove=remove)
    if trash:
        with audited(ctx, TOOL, "trash", ids=targets):
            ctx.gmail.batch_modify(targets, add=["TRASH"], remove=["INBOX"])  # as messages.trash does
    elif trash is False:
        _restore(ctx, targets, found, keep_out_of_inbox="INBOX" in remove, only=not (add or remove), result=result)


def _restore(
    ctx: ToolContext,
    targets: list[str],
    found: dict[str, dict[str, Any]],
    *,
    keep_out_of_inbox: bool,
    only: bool,
    result: ModifyMessagesResult,
) -> None:
    """Out of Trash and back where each message was when it was trashed (the Inbox or All Mail); a message
    not in Trash is left as it is."""
    idle = [message_id for message_id in targets if message_id in found and "TRASH" not in _labels(found[message_id])]
    to_restore = [message_id for message_id in targets if message_id not in idle]
    if idle:
        result.notes.append(f"{_count(idle)} not in Trash: left as {_it(idle)}")
        if len(targets) == 1:
            result.label_ids = _label_names(ctx, _labels(found[targets[0]]))
    if only:
        result.message_count = len([message_id for message_id in to_restore if message_id in found])
    result.restored = len(to_restore)
    if not to_restore:
        return
    history_ids = {message_id: _history_id(found[message_id]) for message_id in to_restore if message_id in found}
    before = {} if keep_out_of_inbox else inbox_before_trash(ctx, history_ids)
    back = [message_id for message_id in to_restore if before.get(message_id) is True]
    rest = [message_id for message_id in to_restore if message_id not in back]
    with audited(ctx, TOOL, "untrash", ids=to_restore, back_to_inbox=back):
        if len(to_restore) == 1:  # one request either way: untrash, or out of Trash and into the Inbox at once
            if back:
                answer = ctx.gmail.modify_message(to_restore[0], add=["INBOX"], remove=["TRASH"])
            else:
                answer = ctx.gmail.untrash_message(to_restore[0])
            label_ids = list(answer.get("labelIds") or [])
            if len(targets) == 1:
                result.label_ids = _label_names(ctx, label_ids)
        else:
            if back:
                ctx.gmail.batch_modify(back, add=["INBOX"], remove=["TRASH"])
            if rest:
                ctx.gmail.batch_modify(rest, remove=["TRASH"])
    result.back_in_inbox = len(back)
    if keep_out_of_inbox:
        return
    elsewhere = [message_id for message_id in rest if before.get(message_id) is False]
    unknown = [message_id for message_id in rest if before.get(message_id) is None]
    if back:
        result.notes.append(f"{_count(back)} back in the Inbox, where {_it(back)} when trashed")
    if elsewhere:
        result.notes.append(f"{_count(elsewhere)} in All Mail only: {_it(elsewhere, 'not')} in the Inbox when trashed")
    if unknown:
        result.notes.append(
            f"{_count(unknown)} in All Mail only, not in the Inbox: the Gmail history read does not show where "
            f'{_it(unknown)} before Trash; add_labels=["INBOX"] puts {"it" if len(unknown) == 1 else "them"} '
            "in the Inbox"
        )


def _labels(resource: dict[str, Any]) -> list[Any]:
    labels = resource.get("labelIds")
    return list(labels) if isinstance(labels, list) else []


def _history_id(resource: dict[str, Any]) -> int:
    value = str(resource.get("historyId") or "")
    return int(value) if value.isdecimal() else 0


def _count(ids: list[str]) -> str:
    return "1 message" if len(ids) == 1 else f"{len(ids)} messages"


def _it(ids: list[str], negation: str = "") -> str:
    verb = "it was" if len(ids) == 1 else "they were"
    return f"{verb} {negation}".rstrip()


def _missing_error(missing: list[str]) -> NotFoundError:
    return NotFoundError(
        f"No message with id {_shown(missing) or '(the id given)'}; nothing was changed.",
        hint="Take message ids from gmail_search_messages (a thread id is not a message id) and call again.",
        status=404,
    )


def _shown(ids: list[str]) -> str:
    return ", ".join(ids[:20]) + (f" and {len(ids) - 20} more" if len(ids) > 20 else "")


def _label_names(ctx: ToolContext, label_ids: list[Any]) -> list[str]:
    """Label ids as a person reads them: user labels by name (system ids such as INBOX are their own name)."""
    ids = [str(label_id) for label_id in label_ids]
    if not any(label_id.startswith("Label_") for label_id in ids):
        return ids
    names = {str(label.get("id")): str(label.get("name") or label.get("id")) for label in ctx.cache.labels()}
    return [names.get(label_id, label_id) for label_id in ids]


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
    if result.not_found:
        lines.append(
            f"Not changed, no such message ({len(result.not_found)}): {_shown(result.not_found)}. A stale id, or a "
            "thread id given as a message id: take message ids from gmail_search_messages."
        )
    if result.unverified:
        lines.append(f"Sent to Gmail but not confirmed (the check failed): {_shown(result.unverified)}")
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
)
