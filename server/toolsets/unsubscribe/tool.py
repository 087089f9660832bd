"""`gmail_unsubscribe(message_ids, confirmation_code)`: unsubscribe from the senders of messages, after a yes.

The plan (`plan.py`) is shown to the person first; one yes covers every sender of the call (elicitation, else a
single-use code bound to a digest of the whole plan: senders, methods, addresses and messages). Then, per sender:
one-click is one POST (`post.py`, never repeated: a failed or unclear answer is reported, not retried); a
`mailto:` address becomes a draft in Drafts, which is sent only through `gmail_send_draft` and its own
confirmation; a sender without a usable method gets the reason. The result says exactly what was done to whom.
"""

from __future__ import annotations

import http.client
from typing import Annotated, Literal

from pydantic import Field

from server.content.compose.addresses import Recipient
from server.content.compose.build import OutgoingMessage, build_message
from server.content.unsubscribe import parse_mailto
from server.errors import ConfirmationError, GmailError
from server.tools import ConfirmationRequest, Refusal, ToolContext
from server.toolsets.common import MESSAGE_ID_PATTERN, ToolInput, ToolOutput
from server.toolsets.drafts.common import audited
from server.toolsets.unsubscribe.plan import Step, digest, plan_for
from server.toolsets.unsubscribe.post import RefusedTarget, post_one_click

TOOL = "gmail_unsubscribe"
Status = Literal["done", "confirmation_required", "declined", "cancelled", "dry_run", "nothing_to_do"]
Outcome = Literal["unsubscribed", "draft_created", "refused", "failed", "would", "not_done"]
MessageId = Annotated[str, Field(pattern=MESSAGE_ID_PATTERN)]


class UnsubscribeInput(ToolInput):
    message_ids: list[MessageId] = Field(
        min_length=1, max_length=100, description="Messages whose senders to unsubscribe from (one or many senders)."
    )
    confirmation_code: str | None = Field(
        None, min_length=4, max_length=20, description="Second call only, after the person said yes to the plan."
    )


class SenderOutcome(ToolOutput):
    sender: str
    method: Literal["one_click", "mailto", "none"]
    target: str | None = None
    outcome: Outcome
    detail: str
    draft_id: str | None = None
    message_ids: list[str] = Field(default_factory=list)


class UnsubscribeResult(ToolOutput):
    status: Status
    senders: list[SenderOutcome]
    confirmation_code: str | None = None
    expires_in_s: int | None = None
    notes: list[str] = Field(default_factory=list)


def _planned(step: Step, outcome: Outcome) -> SenderOutcome:
    if step.method == "one_click":
        detail = f"one POST of List-Unsubscribe=One-Click to {step.target}"
    elif step.method == "mailto":
        detail = f"a draft to {_mailto_address(step)} in Drafts, sent only if the person sends it"
        if step.reason:
            detail += f" (not one-click: {step.reason})"
    else:
        detail = f"nothing can be done: {step.reason}"
    return SenderOutcome(
        sender=step.sender,
        method=step.method,
        target=step.target,
        outcome="refused" if step.method == "none" else outcome,
        detail=detail,
        message_ids=step.message_ids,
    )


def _mailto_address(step: Step) -> str:
    parsed = parse_mailto(step.target or "")
    return parsed.to if parsed else "?"


def question(steps: list[Step]) -> str:
    lines = ["Unsubscribe from these senders?"]
    for step in steps:
        if step.method != "none":
            lines.append(f"- {step.sender}: {_planned(step, 'would').detail}")
    return "\n".join(lines)


def unsubscribe(ctx: ToolContext, args: UnsubscribeInput) -> UnsubscribeResult | ConfirmationRequest:
    steps = plan_for(ctx, list(dict.fromkeys(args.message_ids)))
    if all(step.method == "none" for step in steps):
        return UnsubscribeResult(status="nothing_to_do", senders=[_planned(step, "refused") for step in steps])
    if ctx.safety.dry_run:
        with audited(ctx, TOOL, "plan", senders=[step.sender for step in steps]):
            return UnsubscribeResult(
                status="dry_run",
                senders=[_planned(step, "would") for step in steps],
                notes=["dry run (GMAIL_MCP_DRY_RUN): nothing was done"],
            )
    key = digest(steps)
    book_key = f"unsubscribe:{key[:24]}"
    if args.confirmation_code is not None:
        try:
            ctx.safety.confirmations.redeem(args.confirmation_code, book_key, key)
        except ConfirmationError as error:
            error.message = error.message.replace("Nothing was sent.", "Nothing was done.").replace(
                "draft", "unsubscribe plan"
            )
            error.hint = (
                "Call gmail_unsubscribe again without confirmation_code for a fresh plan and code; ask the person."
            )
            raise
        return _carry_out(ctx, steps)

    def proceed(ctx: ToolContext) -> UnsubscribeResult:
        now = plan_for(ctx, list(dict.fromkeys(args.message_ids)))
        if digest(now) != key:
            raise ConfirmationError("The messages changed while the person was being asked. Nothing was done.")
        return _carry_out(ctx, steps)

    def refused(how: Refusal) -> UnsubscribeResult:
        ctx.safety.audit.record(
            TOOL, "unsubscribe", outcome=how, senders=[s.sender for s in steps], account=ctx.account
        )
        return UnsubscribeResult(
            status=how,
            senders=[_planned(step, "not_done") for step in steps],
            notes=[f"the person {how}: nothing was done"],
        )

    def without_asking(ctx: ToolContext) -> UnsubscribeResult:
        issued = ctx.safety.confirmations.issue(book_key, key)
        return UnsubscribeResult(
            status="confirmation_required",
            senders=[_planned(step, "would") for step in steps],
            confirmation_code=issued.code,
            expires_in_s=issued.expires_in_s,
        )

    return ConfirmationRequest(
        question=question(steps), proceed=proceed, refused=refused, without_asking=without_asking
    )


def _carry_out(ctx: ToolContext, steps: list[Step]) -> UnsubscribeResult:
    outcomes = []
    for step in steps:
        if step.method == "one_click":
            outcomes.append(_one_click(ctx, step))
        elif step.method == "mailto":
            outcomes.append(_draft(ctx, step))
        else:
            outcomes.append(_planned(step, "refused"))
    return UnsubscribeResult(status="done", senders=outcomes)


def _one_click(ctx: ToolContext, step: Step) -> SenderOutcome:
    result = _planned(step, "unsubscribed")
    url = step.target or ""
    with audited(ctx, TOOL, "one_click_post", sender=step.sender, url=url[:300]) as audit:
        try:
            posted = post_one_click(url, allow_private=ctx.safety.unsubscribe_allow_private)
        except RefusedTarget as refused:
            audit["result"] = "refused"
            result.outcome, result.detail = "refused", f"not posted: {refused}"
            return result
        except (OSError, http.client.HTTPException) as error:
            audit["result"] = "failed"
            result.outcome = "failed"
            result.detail = (
                f"the POST to {url} failed ({type(error).__name__}); it may or may not have arrived, and it is not "
                "repeated automatically: use Gmail's own Unsubscribe link if mail keeps coming"
            )
            return result
        audit["http_status"] = posted.status
    if 200 <= posted.status < 300:
        result.detail = f"posted List-Unsubscribe=One-Click to {url}: the sender answered {posted.status}"
    elif posted.location:
        result.outcome = "failed"
        result.detail = f"the sender answered {posted.status}, a redirect to {posted.location}, which was not followed"
    else:
        result.outcome = "failed"
        result.detail = f"the sender answered {posted.status} to the POST at {url}: not confirmed as unsubscribed"
    return result


def _draft(ctx: ToolContext, step: Step) -> SenderOutcome:
    result = _planned(step, "draft_created")
    parsed = parse_mailto(step.target or "")
    if parsed is None:  # plan_for only picks parseable ones
        result.outcome, result.detail = "refused", "the mailto address cannot be read"
        return result
    raw = build_message(OutgoingMessage(to=[Recipient("", parsed.to)], subject=parsed.subject, text=parsed.body + "\n"))
    with audited(ctx, TOOL, "drafts.create", sender=step.sender, to=[parsed.to]) as audit:
        try:
            draft = ctx.gmail.create_draft(raw)
        except GmailError as error:
            result.outcome, result.detail = "failed", f"the draft could not be saved: {error.message}"
            return result
        result.draft_id = str(draft.get("id") or "") or None
        audit["ids"] = [result.draft_id] if result.draft_id else []
    result.detail = (
        f"draft {result.draft_id} to {parsed.to} (subject {parsed.subject!r}) saved in Drafts; NOT sent: send it with "
        "gmail_send_draft, which asks the person again"
    )
    return result
