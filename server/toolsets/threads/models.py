"""The arguments and result of `gmail_get_thread`."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator

from server.toolsets.common import MESSAGE_ID_PATTERN, Count, ToolInput, ToolOutput
from server.toolsets.envelope import Security

DEFAULT_MESSAGE_CHARS = 4_000
_RANGE = re.compile(r"^(\d{1,5})(?:\s*-\s*(\d{1,5})?)?$")


def _false(value: object) -> bool:
    return not value


def _none(value: object) -> bool:
    return value is None


class GetThreadInput(ToolInput):
    thread_id: str = Field(
        pattern=MESSAGE_ID_PATTERN, description="A message's thread_id (from gmail_search_messages)."
    )
    format: Literal["full", "metadata"] = Field("full", description='"metadata": who/when/snippet only.')
    max_body_chars_per_message: Count = Field(DEFAULT_MESSAGE_CHARS, ge=200, le=50_000)
    strip_quoted: bool = True
    message_range: str | None = Field(
        None,
        max_length=20,
        description='Only these, 1 = oldest: "3-10", "20-", "5".',
    )

    @field_validator("message_range")
    @classmethod
    def _range_shape(cls, value: str | None) -> str | None:
        if value is None:
            return None
        match = _RANGE.match(value.replace(" ", ""))
        if match is None or int(match.group(1)) < 1 or (match.group(2) and int(match.group(2)) < int(match.group(1))):
            raise ValueError('message_range must look like "3-10", "20-" or "5" (1 = the oldest message)')
        return value.replace(" ", "")

    def positions(self, count: int) -> tuple[int, int]:
        """The 1-based, inclusive first and last message positions this call asks for, within `count`."""
        if not self.message_range:
            return 1, count
        match = _RANGE.match(self.message_range)
        assert match is not None  # validated above
        first = int(match.group(1))
        if match.group(2):
            last = int(match.group(2))
        elif "-" in self.message_range:
            last = count
        else:
            last = first
        return first, min(last, count)


class ThreadAttachment(ToolOutput):
    filename: str
    mime_type: str
    size: int
    part_id: str


class ThreadMessage(ToolOutput):
    position: int = Field(description="1 = the oldest message of the thread.")
    id: str
    from_: str | None = Field(None, alias="from", exclude_if=_none)
    to: str | None = Field(None, exclude_if=_none)
    cc: str | None = Field(None, exclude_if=_none)
    date: str | None = Field(None, exclude_if=_none, description="ISO 8601 with the sender's offset.")
    subject: str | None = Field(None, exclude_if=_none, description="Only when it differs from the thread's.")
    labels: list[str] = Field(description="Gmail's system label ids, and the person's labels by name.")
    attachments: list[ThreadAttachment] = Field(default_factory=list, exclude_if=_false)
    body_text: str | None = Field(None, exclude_if=_none, description="The message's own words.")
    body_chars: int | None = Field(None, exclude_if=_none, description="Length of its whole own text.")
    next_offset: int | None = Field(
        None, exclude_if=_none, description="Cut: gmail_get_message with this offset and strip_quoted reads on."
    )
    body_omitted: bool = Field(False, exclude_if=_false, description="Left out to keep the answer bounded.")
    snippet: str | None = Field(None, exclude_if=_none)
    security: Security | None = Field(None, exclude_if=_none)


class ReplyContextItem(ToolOutput):
    reply_to_id: str = Field(description="Gmail id of the message a reply answers (the newest one).")
    in_reply_to: str | None = Field(None, exclude_if=_none, description="Its Message-ID: the In-Reply-To header.")
    references: str | None = Field(None, exclude_if=_none, description="The References header a reply carries.")
    subject: str
    to: list[str]
    cc: list[str] = Field(default_factory=list, exclude_if=_false)
    last_sender: str | None = Field(None, exclude_if=_none)
    last_from_me: bool


class GetThreadResult(ToolOutput):
    thread_id: str
    subject: str | None = Field(None, exclude_if=_none)
    message_count: int = Field(description="Messages in the whole thread (positions go 1..message_count).")
    messages: list[ThreadMessage]
    reply: ReplyContextItem | None = Field(None, exclude_if=_none)
    account_address: str | None = Field(None, exclude_if=_none)
    notes: list[str] = Field(default_factory=list, exclude_if=_false)
