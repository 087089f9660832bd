"""One pydantic model per tool input (its inputSchema and its validation) and per tool result (its outputSchema).

The schema a client sees is generated from the same class that validates the call, so the two cannot drift.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

MAX_RESULTS_LIMIT = 50
DEFAULT_MAX_BODY_CHARS = 20_000
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# Characters that would let a label name escape its `label:` term and add operators of its own.
_LABEL_FORBIDDEN = re.compile(r"[\"(){}:\x00-\x1f\x7f]")
MESSAGE_ID_PATTERN = r"^[A-Za-z0-9_-]{1,128}$"

LabelName = Annotated[str, Field(min_length=1, max_length=100)]


def _reject_bool(value: object) -> object:
    # pydantic's lax mode reads True as 1; a boolean where a count belongs is a caller mistake worth reporting.
    if isinstance(value, bool):
        raise ValueError("expected a whole number, not a boolean")
    return value


Count = Annotated[int, BeforeValidator(_reject_bool)]


class _Input(BaseModel):
    # Unknown argument names are errors (a model that writes `maxResults` learns the right name at once).
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class SearchMessagesInput(_Input):
    query: str = Field(
        max_length=2000,
        description=(
            "Gmail search query, same syntax as the Gmail search box: from:, to:, subject:, label:, is:unread, "
            "is:starred, has:attachment, filename:, after:2024/01/31, before:, older_than:/newer_than: (d/m/y), "
            'larger:5M, "exact phrase", OR, -exclude, ( ). May be "" when newer_than_days or label_ids is given.'
        ),
    )
    max_results: Count = Field(10, ge=1, le=MAX_RESULTS_LIMIT, description="How many messages to return (1-50).")
    # Bounds before the validator, inside the Annotated: placed after it, or on the union, pydantic still
    # enforces them but writes `ge`/`le` (not JSON Schema) into the schema instead of minimum/maximum.
    newer_than_days: Annotated[int, Field(ge=1, le=36500), BeforeValidator(_reject_bool)] | None = Field(
        None, description="Only messages from the last N days (adds newer_than:Nd)."
    )
    label_ids: list[LabelName] | None = Field(
        None,
        max_length=20,
        description='Labels every result must carry, e.g. ["INBOX", "STARRED"] or a user label name (adds label:X).',
    )
    page_token: str | None = Field(
        None,
        min_length=1,
        max_length=2000,
        description="next_page_token from a previous call with the same query, to get the following results.",
    )

    @field_validator("label_ids")
    @classmethod
    def _labels_are_names(cls, labels: list[str] | None) -> list[str] | None:
        for name in labels or ():
            if _LABEL_FORBIDDEN.search(name) or name.startswith("-"):
                raise ValueError(
                    f"label {name!r} contains a character that is not allowed in a label filter "
                    '(", (, ), {, }, :, a leading -); put operators in query instead'
                )
        return labels

    @field_validator("query")
    @classmethod
    def _no_control_characters(cls, query: str) -> str:
        if _CONTROL.search(query):
            raise ValueError("query contains control characters")
        return query

    @model_validator(mode="after")
    def _something_to_search(self) -> SearchMessagesInput:
        if not self.query and self.newer_than_days is None and not self.label_ids:
            raise ValueError(
                'query is empty and no filter is given: pass a Gmail query such as "in:inbox" or "is:unread", '
                "or set newer_than_days / label_ids"
            )
        return self


class GetMessageInput(_Input):
    message_id: str = Field(
        pattern=MESSAGE_ID_PATTERN, description="The message id, exactly as returned by gmail_search_messages."
    )
    format: Literal["full", "metadata"] = Field(
        "full",
        description='"full": headers, readable body text and attachment list. "metadata": headers and snippet only '
        "(faster, much smaller; use it to check who/when/what before reading).",
    )
    max_body_chars: Count = Field(
        DEFAULT_MAX_BODY_CHARS, ge=200, le=200_000, description="Longest body_text to return; longer bodies are cut."
    )
    offset: Count = Field(0, ge=0, description="Start of body_text, in characters: pass next_offset to read on.")
    include_html: bool = Field(False, description="Also return the raw HTML source (large; rarely needed).")
    strip_quoted: bool = Field(False, description='Drop quoted reply history ("On ... wrote:" and > lines).')


# -- results ---------------------------------------------------------------------------------------------------


class _Output(BaseModel):
    model_config = ConfigDict(populate_by_name=True)


def _omitted_when_none(value: object) -> bool:
    return value is None


class SearchResultItem(_Output):
    # Results past the enriched top K carry only ids: their empty fields are left out, not sent as nulls.
    id: str
    thread_id: str
    from_email: str | None = Field(None, exclude_if=_omitted_when_none)
    from_name: str | None = Field(None, exclude_if=_omitted_when_none)
    subject: str | None = Field(None, exclude_if=_omitted_when_none)
    date: str | None = Field(None, exclude_if=_omitted_when_none, description="ISO 8601 with the sender's offset.")
    snippet: str | None = Field(None, exclude_if=_omitted_when_none)


class SearchMessagesResult(_Output):
    query: str = Field(description="The Gmail query that was run (the filters folded in).")
    messages: list[SearchResultItem]
    result_count: int
    next_page_token: str | None = Field(description="Pass as page_token to continue; null on the last page.")
    result_size_estimate: int | None = Field(None, description="Gmail's rough estimate of all matches.")
    enriched_count: int = Field(description="How many leading results carry sender/subject/date/snippet.")
    enrichment_failures: int = 0
    pages_fetched: int
    hint: str | None = None

    @model_serializer(mode="wrap")
    def _cursor_always_present(self, handler: SerializerFunctionWrapHandler):  # type: ignore[no-untyped-def]
        # Nulls are dropped from results to save context, but "no more pages" is worth saying explicitly.
        # No return annotation on purpose: pydantic would take it as the serialization schema (outputSchema).
        data = handler(self)
        data.setdefault("next_page_token", None)
        return data


class MessageHeaders(_Output):
    from_: str | None = Field(None, alias="from")
    to: str | None = None
    cc: str | None = None
    reply_to: str | None = None
    subject: str | None = None
    date: str | None = None


class AttachmentItem(_Output):
    filename: str
    mime_type: str
    size: int
    attachment_id: str | None = None
    inline: bool = False


class GetMessageResult(_Output):
    id: str
    thread_id: str
    label_ids: list[str]
    snippet: str
    headers: MessageHeaders
    date_iso: str | None = None
    format: Literal["full", "metadata"]
    body_text: str | None = Field(None, description="Readable text of the body (HTML converted when needed).")
    body_html: str | None = None
    body_source: str | None = None
    body_chars_total: int | None = None
    offset: int | None = None
    truncated: bool = False
    next_offset: int | None = Field(None, description="Pass as offset to read the rest of a cut body.")
    attachments: list[AttachmentItem] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
