"""`gmail_cleanup_run` and `gmail_cleanup_undo`: a previewed cleanup, confirmed, done in chunks, resumable, undoable.

Confirmation as for a send (`ConfirmationRequest`): elicitation when the client can ask, else a single-use code
bound to the preview id and a digest of its query, action and exact ids (so of its count). Once the person said
yes, the same `preview_id` continues the cleanup in later calls without asking again.

Execution: `messages.batchModify` on up to 1,000 ids per request (Gmail's limit), paced by the client's quota
budget (`gmail/quota.py`: 50 units a call), a progress notification after each chunk. A call stops after its
time budget (`GMAIL_MCP_CLEANUP_CALL_BUDGET_S`, default 120 s, well under claude.ai's 300 s) or, for tests,
after `GMAIL_MCP_CLEANUP_CHUNKS_PER_CALL` chunks; the answer says how far it got and the next call with the same
`preview_id` continues from the cursor: a chunk is sent once. (A batchModify that failed in flight may be sent
again by the next call; adding and removing labels twice gives the same mailbox.)

Every changed message also gets the dated label `gmail-mcp/cleanup-YYYY-MM-DD-N` (the day from the book's
injected clock, N the next free number that day), so the cleanup can be found in Gmail and undone: undo sends
the reverse batchModify (the removed labels added back, the added ones and the dated label removed) on the
messages the run changed, in chunks with the same budget.
"""

from __future__ import annotations

import hashlib
import re

from server.errors import ConfirmationError, GmailError, InvalidInputError, NotFoundError
from server.gmail.label_match import find_label
from server.runtime import progress
from server.runtime.cleanup_book import CleanupPlan
from server.tools import ConfirmationRequest, Refusal, ToolContext
from server.toolsets.cleanup.models import (
    CleanupRunInput,
    CleanupRunResult,
    CleanupUndoInput,
    CleanupUndoResult,
    RunStatus,
)
from server.toolsets.cleanup.preview import describe
from server.toolsets.drafts.common import audited

CHUNK = 1_000  # messages.batchModify takes at most 1,000 ids
LABEL_PREFIX = "gmail-mcp/cleanup-"
RUN_TOOL = "gmail_cleanup_run"
UNDO_TOOL = "gmail_cleanup_undo"


def _plan(ctx: ToolContext, preview_id: str) -> CleanupPlan:
    plan = ctx.safety.cleanups.get(preview_id)
    if plan is None:
        raise NotFoundError(
            f"No cleanup preview {preview_id!r} on this server (unknown, expired, or the server restarted).",
            hint="Call gmail_cleanup_preview again with the query and action, and show the person the new preview.",
        )
    return plan


def _digest(plan: CleanupPlan) -> str:
    text = "\n".join([plan.query, plan.action, plan.target_label or "", str(plan.count), *plan.ids])
    return hashlib.sha256(text.encode()).hexdigest()


def _key(plan: CleanupPlan) -> str:
    return f"cleanup:{plan.preview_id}"


def _result(plan: CleanupPlan, status: RunStatus, **fields: object) -> CleanupRunResult:
    return CleanupRunResult(
        status=status,
        preview_id=plan.preview_id,
        query=plan.query,
        action=plan.action,
        message_count=plan.count,
        done_count=plan.done,
        remaining=plan.count - plan.done,
        label=plan.label_name,
        would=describe(plan.action, plan.target_label),
        **fields,
    )


def question(plan: CleanupPlan) -> str:
    return (
        f"Clean up {plan.count:,} Gmail messages matching {plan.query!r}: {describe(plan.action, plan.target_label)}. "
        "Nothing is deleted for good, and gmail_cleanup_undo can put them back."
    )


def cleanup_run(ctx: ToolContext, args: CleanupRunInput) -> CleanupRunResult | ConfirmationRequest:
    plan = _plan(ctx, args.preview_id)
    if plan.undone:
        raise InvalidInputError(
            "This cleanup was undone.", hint="Preview it again with gmail_cleanup_preview to clean up anew."
        )
    if plan.finished:
        return _result(plan, "done", notes=["this cleanup was already finished: nothing more to do"])
    if ctx.safety.dry_run:
        with audited(ctx, RUN_TOOL, "batchModify", preview=plan.preview_id, count=plan.count):
            return _result(plan, "dry_run", notes=["dry run (GMAIL_MCP_DRY_RUN): nothing was changed"])
    if plan.confirmed:
        return execute(ctx, plan)
    digest = _digest(plan)
    if args.confirmation_code is not None:
        try:
            ctx.safety.confirmations.redeem(args.confirmation_code, _key(plan), digest)
        except ConfirmationError as error:
            error.message = error.message.replace("Nothing was sent.", "Nothing was changed.")
            error.hint = "Call gmail_cleanup_run again without confirmation_code for a fresh code; ask the person."
            raise
        plan.confirmed = True
        return execute(ctx, plan)

    def proceed(ctx: ToolContext) -> CleanupRunResult:
        if _digest(plan) != digest:
            raise ConfirmationError("The cleanup changed while the person was being asked. Nothing was changed.")
        plan.confirmed = True
        return execute(ctx, plan)

    def refused(how: Refusal) -> CleanupRunResult:
        ctx.safety.audit.record(RUN_TOOL, "batchModify", outcome=how, preview=plan.preview_id, account=ctx.account)
        return _result(plan, how, notes=[f"the person {how} the cleanup: nothing was changed"])

    def without_asking(ctx: ToolContext) -> CleanupRunResult:
        issued = ctx.safety.confirmations.issue(_key(plan), digest)
        return _result(plan, "confirmation_required", confirmation_code=issued.code, expires_in_s=issued.expires_in_s)

    return ConfirmationRequest(question=question(plan), proceed=proceed, refused=refused, without_asking=without_asking)


def _dated_label(ctx: ToolContext, plan: CleanupPlan) -> None:
    """Creates this cleanup's label once: gmail-mcp/cleanup-<day>-<next free number of that day>."""
    if plan.label_id is not None:
        return
    day = ctx.safety.cleanups.today().isoformat()
    pattern = re.compile(re.escape(LABEL_PREFIX + day) + r"-(\d+)$")
    taken = [
        int(m.group(1)) for label in ctx.cache.labels(refresh=True) if (m := pattern.match(str(label.get("name"))))
    ]
    name = f"{LABEL_PREFIX}{day}-{max(taken, default=0) + 1}"
    with audited(ctx, RUN_TOOL, "labels.create", label=name):
        created = ctx.gmail.create_label(name)
    plan.label_id, plan.label_name = str(created["id"]), name
    if plan.action == "label" and not plan.add:
        target = plan.target_label or ""
        found = find_label(target, ctx.cache.labels(refresh=True))
        if found is None:
            with audited(ctx, RUN_TOOL, "labels.create", label=target):
                found = ctx.gmail.create_label(target)
        plan.add = (str(found["id"]),)
    ctx.cache.labels(refresh=True)


def _budget_spent(ctx: ToolContext, started: float, chunks: int) -> bool:
    book = ctx.safety.cleanups
    if book.chunks_per_call and chunks >= book.chunks_per_call:
        return True
    return book.clock() - started >= book.call_budget_s


def execute(ctx: ToolContext, plan: CleanupPlan) -> CleanupRunResult:
    book = ctx.safety.cleanups
    if not book.claim(plan):
        raise InvalidInputError(
            "Another call is running this cleanup right now.", hint="Wait for it to answer, then call again."
        )
    started, chunks, before = book.clock(), 0, plan.done  # claim read the cursor of the previous call
    try:
        _dated_label(ctx, plan)
        book.save(plan)  # the yes and the label, for a call continued on another replica
        while not plan.finished:
            chunk = list(plan.ids[plan.done : plan.done + CHUNK])
            add, remove = [plan.label_id or "", *plan.add], list(plan.remove)
            with audited(
                ctx, RUN_TOOL, "batchModify", preview=plan.preview_id, count=len(chunk), add=add, remove=remove
            ):
                ctx.gmail.batch_modify(chunk, add=add, remove=remove)
            plan.done += len(chunk)
            book.save(plan)
            chunks += 1
            progress.report(plan.done, plan.count, f"{plan.done:,} of {plan.count:,} messages cleaned up")
            if not plan.finished and _budget_spent(ctx, started, chunks):
                break
    except GmailError as error:  # what was done stays done: say how to go on from there
        error.hint = (
            f"{plan.done:,} of {plan.count:,} messages were changed before this failure. When it is resolved, call "
            f"gmail_cleanup_run with preview_id={plan.preview_id} (no code needed) to continue where it stopped. "
            + error.hint
        )
        raise
    finally:
        book.release(plan)
    status: RunStatus = "done" if plan.finished else "paused"
    notes = []
    if status == "paused":
        notes.append(
            f"stopped after {plan.done:,} of {plan.count:,} to stay within one call's time: call gmail_cleanup_run "
            f"again with preview_id={plan.preview_id} (no code needed) to continue where it stopped"
        )
    return _result(plan, status, changed_this_call=plan.done - before, notes=notes)


def cleanup_undo(ctx: ToolContext, args: CleanupUndoInput) -> CleanupUndoResult:
    plan = _plan(ctx, args.preview_id)
    book = ctx.safety.cleanups
    if plan.label_id is None or plan.done == 0:
        return CleanupUndoResult(
            status="nothing_to_undo", preview_id=plan.preview_id, restored_count=0, remaining=0,
            notes=["this cleanup changed no message yet"],
        )  # fmt: skip
    if not book.claim(plan):
        raise InvalidInputError("Another call is working on this cleanup.", hint="Wait for it to answer, then retry.")
    started, chunks = book.clock(), 0  # claim read the cursor of the previous call
    plan_undo_add, plan_undo_remove = list(plan.remove), [plan.label_id, *plan.add]
    try:
        if ctx.safety.dry_run:
            return CleanupUndoResult(
                status="paused", preview_id=plan.preview_id, label=plan.label_name, restored_count=0,
                remaining=plan.done, notes=["dry run (GMAIL_MCP_DRY_RUN): nothing was changed"],
            )  # fmt: skip
        while plan.undone < plan.done:
            chunk = list(plan.ids[plan.undone : min(plan.undone + CHUNK, plan.done)])
            with audited(ctx, UNDO_TOOL, "batchModify", preview=plan.preview_id, count=len(chunk)):
                ctx.gmail.batch_modify(chunk, add=plan_undo_add, remove=plan_undo_remove)
            plan.undone += len(chunk)
            book.save(plan)
            chunks += 1
            progress.report(plan.undone, plan.done, f"{plan.undone:,} of {plan.done:,} messages restored")
            if plan.undone < plan.done and _budget_spent(ctx, started, chunks):
                break
    finally:
        book.release(plan)
    finished = plan.undone >= plan.done
    if finished:
        note = f"every changed message is back as it was; the label {plan.label_name} is off them all"
    else:
        note = f"call gmail_cleanup_undo again with preview_id={plan.preview_id} to continue"
    return CleanupUndoResult(
        status="undone" if finished else "paused",
        preview_id=plan.preview_id,
        label=plan.label_name,
        restored_count=plan.undone,
        remaining=plan.done - plan.undone,
        notes=[note],
    )
