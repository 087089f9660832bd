"""The arguments and results of `gmail_cleanup_preview`, `gmail_cleanup_run` and `gmail_cleanup_undo`."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from server.toolsets.common import ToolInput, ToolOutput

Action = Literal["archive", "mark_read", "label", "trash"]
RunStatus = Literal["confirmation_required", "done", "paused", "declined", "cancelled", "dry_run"]
PREVIEW_ID_FIELD = Field(
    min_length=4, max_length=64, pattern=r"^[A-Za-z0-9_-]+$", description="From gmail_cleanup_preview."
)


class CleanupPreviewInput(ToolInput):
    query: str = Field(
        min_length=1,
        max_length=1_000,
        description="Gmail search query of the messages to clean up, e.g. 'category:promotions older_than:30d'.",
    )
    action: Action = Field(
        description="archive (out of the Inbox), mark_read, label (add `label`), or trash (recoverable for 30 days). "
        "Never a permanent delete."
    )
    label: str | None = Field(
        None, min_length=1, max_length=225, description="The label to add (action 'label' only); created if missing."
    )


class SenderCount(ToolOutput):
    sender: str
    count: int


class Sample(ToolOutput):
    id: str
    sender: str = Field(alias="from")
    subject: str
    date: str | None = None


class CleanupPreviewResult(ToolOutput):
    preview_id: str | None = Field(None, description="Pass to gmail_cleanup_run; none when nothing matched.")
    query: str
    action: Action
    message_count: int
    capped: bool = Field(False, description="More matched than one cleanup takes: only the newest are in it.")
    newest: str | None = None
    oldest: str | None = None
    sample_size: int = 0
    top_senders: list[SenderCount] = Field(default_factory=list, description="Senders among the samples, by count.")
    samples: list[Sample] = Field(default_factory=list)
    would: str = Field(description="What the run would do to each message.")
    unsubscribe_message_ids: list[str] = Field(
        default_factory=list,
        description="One sample message per sender, for gmail_unsubscribe (when that tool is offered).",
    )
    notes: list[str] = Field(default_factory=list)


class CleanupRunInput(ToolInput):
    preview_id: str = PREVIEW_ID_FIELD
    confirmation_code: str | None = Field(
        None, min_length=4, max_length=20, description="Only after the person said yes to the preview's summary."
    )


class CleanupRunResult(ToolOutput):
    status: RunStatus
    preview_id: str
    query: str
    action: Action
    message_count: int
    done_count: int = Field(description="Messages changed so far (all calls together).")
    remaining: int
    changed_this_call: int = 0
    label: str | None = Field(None, description="The dated label every changed message carries (for undo).")
    confirmation_code: str | None = None
    expires_in_s: int | None = None
    would: str
    notes: list[str] = Field(default_factory=list)


class CleanupUndoInput(ToolInput):
    preview_id: str = PREVIEW_ID_FIELD


class CleanupUndoResult(ToolOutput):
    status: Literal["undone", "paused", "nothing_to_undo"]
    preview_id: str
    label: str | None = None
    restored_count: int = Field(description="Messages put back as they were (all calls together).")
    remaining: int
    notes: list[str] = Field(default_factory=list)
