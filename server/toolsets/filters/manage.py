"""`gmail_list_filters` and `gmail_delete_filter`.

Listing shows every filter of the account, each marked `created_here` when this server made it (the account's
record, `runtime/filter_record.py`). Deleting a filter this server created needs no further yes (the person asked
for it to be made, and asks now for it to go); deleting one the person made themselves is confirmed first, like
a send: elicitation, else a single-use code bound to that filter.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from server.errors import GmailError, NotFoundError
from server.tools import ConfirmationRequest, Refusal, ToolContext
from server.toolsets.common import ToolInput, ToolOutput
from server.toolsets.drafts.common import audited
from server.toolsets.filters.common import FilterView, digest, label_names, redeem, view

TOOL = "gmail_delete_filter"
FILTER_ID = Field(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9_-]+$", description="From gmail_list_filters.")


class ListFiltersInput(ToolInput):
    created_here_only: bool = Field(False, description="Only the filters this server created.")


class ListFiltersResult(ToolOutput):
    filters: list[FilterView]
    total: int = Field(description="Filters in the account (before created_here_only).")
    created_here: int


def list_filters(ctx: ToolContext, args: ListFiltersInput) -> ListFiltersResult:
    found = ctx.gmail.list_filters()
    names = label_names(ctx) if found else {}
    created = ctx.safety.filters.ids()
    views = [view(item, names, created) for item in found]
    mine = [item for item in views if item.created_here]
    shown = mine if args.created_here_only else views
    return ListFiltersResult(filters=shown, total=len(views), created_here=len(mine))


def render_filters(result: ListFiltersResult) -> str:
    if not result.filters:
        return "No filters." if not result.total else "None of the account's filters was created here."
    lines = [f"{result.total} filter(s), {result.created_here} created by this server:"]
    for item in result.filters:
        mark = " [created here]" if item.created_here else ""
        lines.append(f"- {item.id}{mark}: {item.summary}")
    return "\n".join(lines)


class DeleteFilterInput(ToolInput):
    filter_id: str = FILTER_ID
    confirmation_code: str | None = Field(
        None, min_length=4, max_length=20, description="Second call only, for a filter the person made themselves."
    )


class DeleteFilterResult(ToolOutput):
    status: Literal["deleted", "confirmation_required", "declined", "cancelled", "dry_run"]
    deleted: bool
    filter: FilterView
    confirmation_code: str | None = None
    expires_in_s: int | None = None
    notes: list[str] = Field(default_factory=list)


def delete_filter(ctx: ToolContext, args: DeleteFilterInput) -> DeleteFilterResult | ConfirmationRequest:
    created = ctx.safety.filters.ids()
    found = next((item for item in ctx.gmail.list_filters() if item.get("id") == args.filter_id), None)
    if found is None:
        ctx.safety.filters.discard(args.filter_id)
        raise NotFoundError(
            f"No filter with id {args.filter_id!r} in this account.", hint="gmail_list_filters lists the filters."
        )
    shown = view(found, label_names(ctx), created)
    subject, state = f"filter:delete:{args.filter_id}", digest(found)
    if ctx.safety.dry_run:
        with audited(ctx, TOOL, "settings.filters.delete", ids=[args.filter_id]):
            return DeleteFilterResult(status="dry_run", deleted=False, filter=shown, notes=["dry run: nothing deleted"])

    def remove(ctx: ToolContext) -> DeleteFilterResult:
        with audited(ctx, TOOL, "settings.filters.delete", ids=[args.filter_id]):
            ctx.gmail.delete_filter(args.filter_id)
        ctx.safety.filters.discard(args.filter_id)
        return DeleteFilterResult(status="deleted", deleted=True, filter=shown)

    if shown.created_here:
        return remove(ctx)
    if args.confirmation_code is not None:
        key = redeem(ctx, args.confirmation_code, subject, state)
        try:
            return remove(ctx)
        except GmailError:
            ctx.safety.confirmations.restore(key)
            raise

    def refused(how: Refusal) -> DeleteFilterResult:
        ctx.safety.audit.record(TOOL, "settings.filters.delete", outcome=how, ids=[args.filter_id], account=ctx.account)
        return DeleteFilterResult(status=how, deleted=False, filter=shown, notes=[f"the person {how} it: kept"])

    def without_asking(ctx: ToolContext) -> DeleteFilterResult:
        issued = ctx.safety.confirmations.issue(subject, state)
        return DeleteFilterResult(
            status="confirmation_required",
            deleted=False,
            filter=shown,
            confirmation_code=issued.code,
            expires_in_s=issued.expires_in_s,
        )

    question = f"Delete this Gmail filter (the person made it, not this assistant)?\n{shown.summary}"
    return ConfirmationRequest(
        question=question, proceed=remove, refused=refused, without_asking=without_asking, consent="Delete this filter"
    )


def render_deleted(result: DeleteFilterResult) -> str:
    if result.status == "confirmation_required":
        return (
            f"NOT DELETED. This filter was made by the person, not by this server:\n{result.filter.summary}\n"
            "Ask them whether to delete it. Only if they say yes, call gmail_delete_filter again with "
            f"filter_id={result.filter.id} and confirmation_code={result.confirmation_code} "
            f"(valid {result.expires_in_s} s, once)."
        )
    if result.status == "deleted":
        head = f"Filter {result.filter.id} deleted ({result.filter.summary}). Mail it already filed stays as it is."
    elif result.status == "dry_run":
        head = f"Dry run: filter {result.filter.id} would be deleted (it was not)."
    else:
        head = f"Not deleted: the person {result.status} it."
    return "\n".join([head, *(f"Note: {note}" for note in result.notes)])
