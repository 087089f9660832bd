"""`gmail_search_messages`: validate, compose the query, paginate, dedupe, enrich the top K, shape the result.

Two round trips for any search: `messages.list` (paged until enough unique ids, at most `MAX_PAGES`), then one
batch of `messages.get(format=metadata)` for the first K results. `label_ids` filter through `labelIds` (a name
costs one labels.list per cache period). Gmail never refuses a query: what it cannot parse it searches as words,
so an empty result is linted (`gmail/query_lint.py`) and the hint says what Gmail did not understand. A result
whose enrichment fails keeps its id. Enriched results carry the warning codes their headers show at no extra
request (`envelope.header_warnings`); the rendered list is fenced as message-derived text.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import lru_cache
from typing import Annotated, Any

from pydantic import (
    BeforeValidator,
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

from server.content.message import Address, parse_addresses, to_iso_date
from server.content.mime.part import first_headers
from server.content.text.charsets import decode_header_value
from server.content.text.snippets import clean_snippet
from server.errors import InvalidInputError
from server.gmail.cache import SUMMARY_FIELDS, SUMMARY_HEADERS
from server.gmail.query import compose_query
from server.gmail.query_lint import LintResult, lint_query, needs_labels
from server.tools import LinkBlock, ToolContext, ToolSpec
from server.toolsets.common import (
    MAX_ITEM_FIELD_CHARS,
    UNTRUSTED_CONTENT,
    Count,
    ToolInput,
    ToolOutput,
    bounded,
    message_uri,
    omitted_when_none,
    reject_bool,
    short_date,
)
from server.toolsets.envelope import Fence, header_warnings
from server.toolsets.messages.label_filter import LabelFilter

MAX_RESULTS_LIMIT = 50
LINK_NAME_CHARS = 80
MAX_PAGES = 10  # hard cap on messages.list calls per search, whatever Gmail answers
GMAIL_PAGE_LIMIT = 500
# What the message summary cache keeps: From, Subject, Date, and the two headers the trust checks read.
ENRICH_HEADERS = SUMMARY_HEADERS
ENRICH_FIELDS = SUMMARY_FIELDS
EMPTY_RESULT_HINT = (
    "No messages matched. Try fewer or broader terms, drop a filter (newer_than_days, label_ids), check spelling "
    "of addresses, or add in:anywhere to include spam and trash (archived mail is always searched)."
)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_LABEL_FORBIDDEN = re.compile(r"[\x00-\x1f\x7f]")  # labels go as labelIds: any name a label can have is fine

LabelName = Annotated[str, Field(min_length=1, max_length=100)]


class SearchMessagesInput(ToolInput):
    query: str = Field(
        max_length=2000,
        description=(
            "Gmail search box syntax: from:, to:, subject:, label:, is:unread, is:starred, has:attachment, "
            "filename:, after:2024/01/31 (dates as YYYY/MM/DD), before:, newer_than:2d (d, m or y), larger:5M, "
            '"exact phrase", OR, -word, ( ). '
            'May be "" when newer_than_days or label_ids is given.'
        ),
    )
    max_results: Count = Field(10, ge=1, le=MAX_RESULTS_LIMIT)
    # Bounds before the validator, inside the Annotated: placed after it, or on the union, pydantic still
    # enforces them but writes `ge`/`le` (not JSON Schema) into the schema instead of minimum/maximum.
    newer_than_days: Annotated[int, Field(ge=1, le=36500), BeforeValidator(reject_bool)] | None = Field(
        None, description="Only the last N days."
    )
    label_ids: list[LabelName] | None = Field(
        None,
        max_length=20,
        description='Labels all results carry: system ids ("INBOX", "STARRED") or user label names or ids.',
    )
    page_token: str | None = Field(
        None,
        min_length=1,
        max_length=2000,
        description="next_page_token of the previous call (same query).",
    )

    @field_validator("label_ids")
    @classmethod
    def _labels_are_names(cls, labels: list[str] | None) -> list[str] | None:
        for name in labels or ():
            if _LABEL_FORBIDDEN.search(name):
                raise ValueError(f"label {name!r} contains control characters")
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


class SearchResultItem(ToolOutput):
    # Results past the enriched top K carry only ids: their empty fields are left out, not sent as nulls.
    id: str
    thread_id: str
    from_email: str | None = Field(None, exclude_if=omitted_when_none)
    from_name: str | None = Field(None, exclude_if=omitted_when_none)
    subject: str | None = Field(None, exclude_if=omitted_when_none)
    date: str | None = Field(None, exclude_if=omitted_when_none, description="ISO 8601 with the sender's offset.")
    snippet: str | None = Field(None, exclude_if=omitted_when_none)
    warnings: list[str] | None = Field(None, exclude_if=omitted_when_none)  # security warning codes


class SearchMessagesResult(ToolOutput):
    query: str = Field(description="The Gmail query that was run (newer_than_days folded in).")
    labels: list[str] | None = Field(None, exclude_if=omitted_when_none, description="label_ids, as given.")
    corrected_query: str | None = Field(
        None, exclude_if=omitted_when_none, description="Empty result: the query as Gmail would understand it."
    )
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


# -- handler -----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CollectedRefs:
    refs: list[dict[str, str]]
    next_page_token: str | None
    pages: int
    result_size_estimate: int | None


def collect_message_refs(
    list_page: Callable[[str | None, int], dict[str, Any]],
    *,
    limit: int,
    page_token: str | None = None,
    max_pages: int = MAX_PAGES,
) -> CollectedRefs:
    """Follows nextPageToken until `limit` unique ids, the last page, or `max_pages`; keeps first-seen order.

    `list_page(token, page_size)` returns one messages.list answer. Each page asks only for what is still
    missing, so a page never holds results the returned `next_page_token` would skip.
    """
    seen: dict[str, dict[str, str]] = {}
    token, pages, estimate = page_token, 0, None
    while len(seen) < limit and pages < max_pages:
        page = list_page(token, min(limit - len(seen), GMAIL_PAGE_LIMIT))
        pages += 1
        estimate = page.get("resultSizeEstimate", estimate)
        for ref in page.get("messages") or []:
            message_id = ref.get("id")
            if message_id and message_id not in seen and len(seen) < limit:
                seen[message_id] = {"id": message_id, "threadId": ref.get("threadId") or message_id}
        token = page.get("nextPageToken") or None
        if token is None:
            break
    return CollectedRefs(list(seen.values()), token, pages, estimate)


def summarize_metadata(ref: dict[str, str], resource: dict[str, Any]) -> SearchResultItem:
    """A search result line from a metadata-format message resource."""
    headers = (resource.get("payload") or {}).get("headers") or []
    first = first_headers(headers)  # read once: each lookup by name would walk the list again
    raw_from = first.get("from")
    sender, from_email, from_name = _sender(raw_from) if raw_from is not None else (None, None, None)
    subject = bounded(_decoded(first, "subject"), MAX_ITEM_FIELD_CHARS)
    # Gmail escapes entities in snippets; newsletters pad them with invisible characters.
    snippet = clean_snippet(html.unescape(str(resource.get("snippet") or "")))
    warnings = header_warnings(headers if isinstance(headers, list) else [], sender, subject, snippet or "", first)
    return SearchResultItem(
        id=ref["id"],
        thread_id=resource.get("threadId") or ref["threadId"],
        from_email=from_email,
        from_name=from_name,
        subject=subject,
        date=to_iso_date(_decoded(first, "date"), resource.get("internalDate")),
        snippet=snippet,
        warnings=warnings or None,
    )


def _sender(raw_from: str) -> tuple[Address | None, str | None, str | None]:
    """The first sender of a raw From value, and its address and name as a result shows them."""
    if len(raw_from) > _KEPT_FROM_CHARS:
        return _read_sender(raw_from)
    return _kept_sender(raw_from)


def _read_sender(raw_from: str) -> tuple[Address | None, str | None, str | None]:
    senders = parse_addresses(bounded(decode_header_value(raw_from)) or "")  # the first sender is in the head
    sender = senders[0] if senders else None
    if sender is None:
        return None, None, None
    return sender, bounded(sender.email, MAX_ITEM_FIELD_CHARS), bounded(sender.name or None, MAX_ITEM_FIELD_CHARS)


# The From value is the same on every message of a sender, so its reading is kept (a pure function of the
# value; Address is immutable). Only values of a usual length, so the cache stays small whatever mail holds.
_KEPT_FROM_CHARS = 300
_kept_sender = lru_cache(maxsize=1024)(_read_sender)


def _decoded(first: dict[str, str], name: str) -> str | None:
    value = first.get(name)
    return decode_header_value(value) if value is not None else None


def search_messages(ctx: ToolContext, args: SearchMessagesInput) -> SearchMessagesResult:
    labels = LabelFilter(ctx.cache)
    label_ids = labels.label_ids(args.label_ids) if args.label_ids else []
    query = compose_query(args.query, newer_than_days=args.newer_than_days)
    try:
        collected = collect_message_refs(
            lambda token, size: ctx.gmail.list_messages(
                query=query, max_results=size, page_token=token, label_ids=label_ids
            ),
            limit=args.max_results,
            page_token=args.page_token,
        )
    except InvalidInputError as error:
        raise labels.unknown_id(error, label_ids) from None
    ctx.metrics.record_pages(collected.pages)

    top = collected.refs[: ctx.enrich_top_k]
    details = (
        ctx.gmail.get_messages_metadata([ref["id"] for ref in top], headers=ENRICH_HEADERS, fields=ENRICH_FIELDS)
        if top
        else {}
    )
    items: list[SearchResultItem] = []
    failures = 0
    for ref in collected.refs:
        detail = details.get(ref["id"])
        if isinstance(detail, dict):
            items.append(summarize_metadata(ref, detail))
            continue
        failures += detail is not None  # enrichment failed: degrade to id/thread_id, never fail the search
        items.append(SearchResultItem(id=ref["id"], thread_id=ref["threadId"]))
    ctx.metrics.record_enrichment(attempted=len(top), failed=failures)

    hint, lint = None, LintResult((), None)
    if not items:
        lint = _lint(args.query, labels) if not args.page_token else lint
        hint = " ".join(problem.problem for problem in lint.problems) or EMPTY_RESULT_HINT
        if lint.corrected is not None:
            hint += f" Corrected: `{lint.corrected}`."
    elif failures:
        hint = f"{failures} result(s) could not be enriched; gmail_get_message with their id shows the details."
    return SearchMessagesResult(
        query=query,
        labels=args.label_ids or None,
        corrected_query=lint.corrected,
        messages=items,
        result_count=len(items),
        next_page_token=collected.next_page_token,
        result_size_estimate=collected.result_size_estimate,
        enriched_count=len(top) - failures,
        enrichment_failures=failures,
        pages_fetched=collected.pages,
        hint=hint,
    )


def _lint(query: str, labels: LabelFilter) -> LintResult:
    """What Gmail did not understand in a query that found nothing; the label list only when a term needs it."""
    today = datetime.now(timezone.utc).date()  # `after:yesterday` means the person's day; UTC is close enough
    return lint_query(query, labels.for_lint() if needs_labels(query) else None, today)


# -- rendering ---------------------------------------------------------------------------------------------------


def render_item(number: int, item: SearchResultItem) -> list[str]:
    """`N. id | date | from | subject` and the snippet below it; the id alone for a result without details."""
    if item.subject is None and item.from_email is None:
        return [f"{number}. {item.id}"]
    sender = f"{item.from_name} <{item.from_email}>" if item.from_name else (item.from_email or "?")
    lines = [f"{number}. {item.id} | {short_date(item.date)} | {sender} | {item.subject or '(no subject)'}"]
    if item.snippet:
        lines.append(f"   {item.snippet}")
    return lines


def render_search(result: SearchMessagesResult) -> str:
    """One line per result (id | date | from | subject) and its snippet below: what the model needs to pick one.

    Thread ids, counts and Gmail's estimate stay in the structured content; the full ISO date is there too.
    """
    searched = f"`{result.query}`" + (f" in label(s) {', '.join(result.labels)}" if result.labels else "")
    if not result.messages:
        return f"No messages for {searched}." + (f"\nHint: {result.hint}" if result.hint else "")
    bare = [item for item in result.messages if item.subject is None and item.from_email is None]
    head = f"{result.result_count} message(s) for {searched}, newest first"
    head += " (id | date | from | subject):" if len(bare) < len(result.messages) else ":"
    lines: list[str] = []
    for number, item in enumerate(result.messages, 1):
        lines += render_item(number, item)
    lines = [head, Fence().wrap("\n".join(lines))]
    flagged = [f"{n}: {', '.join(item.warnings)}" for n, item in enumerate(result.messages, 1) if item.warnings]
    if flagged:
        lines.append("Security warnings (gmail_get_message explains): " + "; ".join(flagged))
    if bare and not result.hint:
        lines.append('Results with an id only: gmail_get_message (format="metadata" is cheap) shows who and what.')
    if result.next_page_token:
        lines.append(f'More: call again with page_token="{result.next_page_token}".')
    if result.hint:
        lines.append(f"Hint: {result.hint}")
    return "\n".join(lines)


def search_links(result: SearchMessagesResult) -> list[LinkBlock]:
    """A resource link per result (gmail://messages/{id}), named by its subject, for clients that open them."""
    return [
        LinkBlock(
            uri=message_uri(item.id),
            name=clean_snippet(item.subject, LINK_NAME_CHARS) or item.id if item.subject else item.id,
            mime_type="text/markdown",
        )
        for item in result.messages
    ]


SEARCH_MESSAGES = ToolSpec(
    name="gmail_search_messages",
    title="Search Gmail",
    description=(
        "Search the user's Gmail with Gmail's search syntax, newest first: id, date, sender, subject and "
        "snippet for the first 10 results, ids only for the rest. E.g. 'from:alice@example.com subject:invoice', "
        "'is:unread newer_than:2d'. Spam and trash only with in:anywhere, in:spam or in:trash. For more, pass "
        "next_page_token back as page_token. " + UNTRUSTED_CONTENT
    ),
    input_model=SearchMessagesInput,
    output_model=SearchMessagesResult,
    run=search_messages,
    render=render_search,
    blocks=search_links,
)
