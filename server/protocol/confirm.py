"""Asking the person before an action (a send): elicitation in both protocol eras, or a code when it cannot be.

Handlers run in worker threads and cannot talk to the client; a handler that needs a yes returns a
`ConfirmationRequest` (`server/tools.py`) and this module, on the event loop, asks:

- handshake-era sessions (2025-06-18 .. 2025-11-25) whose client declared elicitation: an `elicitation/create`
  request during the tool call; the second phase runs in a worker thread only on accept with `confirm` ticked;
- 2026-07-28 sessions whose client declared elicitation: the call answers an `InputRequiredResult` holding the
  question; the pending action waits in the account's ConfirmationBook under a random token carried as the
  request state (sealed by the SDK's RequestStateBoundary, bound to the tool and its arguments). The client asks
  the person and repeats the call with the answer; the held action is taken once, then runs or is refused. In the
  remote mode the repeat may reach another replica: there the call's first phase runs again and the answer
  applies only to the same question (`remote/shared_confirmations.py`);
- clients without elicitation: `without_asking` (the summary and a single-use code for a second call).

A client that declared no elicitation is never assumed to have asked anyone, and an answer without the matching
held request (a forged, replayed or expired state) sends nothing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio
import mcp_types as types
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel

from server.errors import ConfirmationError
from server.runtime.observability import get_logger
from server.tools import ConfirmationRequest, ToolContext

log = get_logger("confirm")
INPUT_KEY = "confirm_send"
CONFIRM_FIELD = "confirm"
ELICITATION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        CONFIRM_FIELD: {
            "type": "boolean",
            "title": "Send this email now",
            "description": "Tick to send it. Leave unticked, decline or cancel to send nothing.",
        }
    },
    "required": [CONFIRM_FIELD],
}


def _schema(request: ConfirmationRequest) -> dict[str, Any]:
    """The form: one checkbox titled with what the yes allows (a send's by default)."""
    if request.consent == ELICITATION_SCHEMA["properties"][CONFIRM_FIELD]["title"]:
        return ELICITATION_SCHEMA
    box = {**ELICITATION_SCHEMA["properties"][CONFIRM_FIELD], "title": request.consent}
    box["description"] = "Tick to go ahead. Leave unticked, decline or cancel to change nothing."
    return {**ELICITATION_SCHEMA, "properties": {CONFIRM_FIELD: box}}


@dataclass(frozen=True)
class HeldConfirmation:
    """A question asked through an InputRequiredResult, waiting for the client's repeat of the call."""

    tool: str
    request: ConfirmationRequest


def client_can_elicit(request_ctx: Any) -> bool:
    """Whether the client declared form elicitation (an empty `elicitation: {}` means form, per the spec)."""
    session = getattr(request_ctx, "session", None)
    capabilities = getattr(session, "client_capabilities", None)
    elicitation = getattr(capabilities, "elicitation", None)
    if elicitation is None:
        return False
    return elicitation.form is not None or elicitation.url is None


def is_modern(request_ctx: Any) -> bool:
    return getattr(request_ctx, "protocol_version", None) in MODERN_PROTOCOL_VERSIONS


def _accepted(answer: Any) -> str:
    """`accepted`, `declined` or `cancelled` from an ElicitResult-like answer; accept needs `confirm` true."""
    action = getattr(answer, "action", None)
    if action == "accept":
        content = getattr(answer, "content", None) or {}
        return "accepted" if content.get(CONFIRM_FIELD) is True else "declined"
    return "cancelled" if action == "cancel" else "declined"


async def _run(function: Any, *args: Any) -> BaseModel:
    return await anyio.to_thread.run_sync(function, *args, abandon_on_cancel=True)


async def ask(
    tool: str, request: ConfirmationRequest, ctx: ToolContext, request_ctx: Any
) -> BaseModel | types.InputRequiredResult:
    """Resolves a first call's ConfirmationRequest: a result, or (2026-07-28) the question for the client."""
    if request_ctx is None or not client_can_elicit(request_ctx):
        return await _run(request.without_asking, ctx)
    if is_modern(request_ctx):
        held = HeldConfirmation(tool, request)  # in a worker thread: a shared book writes to the state store
        token = await anyio.to_thread.run_sync(ctx.safety.confirmations.hold, held, fingerprint(tool, request))
        question = types.ElicitRequest(
            params=types.ElicitRequestFormParams(message=request.question, requested_schema=_schema(request))
        )
        return types.InputRequiredResult(input_requests={INPUT_KEY: question}, request_state=token)
    if not getattr(request_ctx.session, "can_send_request", True):  # HTTP with plain JSON answers: no mid-call asks
        return await _run(request.without_asking, ctx)
    try:
        answer = await request_ctx.session.elicit_form(
            request.question, _schema(request), related_request_id=request_ctx.request_id
        )
    except Exception as exc:  # the client declared elicitation but could not ask: fall back to the code
        log.warning("elicitation failed; falling back to a confirmation code", extra={"error": type(exc).__name__})
        return await _run(request.without_asking, ctx)
    return await _settle(request, _accepted(answer), ctx)


async def answer(
    tool: str,
    request_state: str,
    input_responses: dict[str, Any] | None,
    ctx: ToolContext,
    rerun: Callable[[], Any] | None = None,
) -> BaseModel:
    """Resolves a 2026-07-28 repeat of the call: the held request, once, and the person's answer to it. Where the
    question was asked by another replica (only its fingerprint is shared), `rerun` runs the call's first phase
    again here, and the answer applies only if that asks the very same question."""
    item, asked = await anyio.to_thread.run_sync(ctx.safety.confirmations.claim, request_state)
    request = item.request if isinstance(item, HeldConfirmation) and item.tool == tool else None
    if request is None and item is None and asked is not None and rerun is not None:
        again = await anyio.to_thread.run_sync(rerun, abandon_on_cancel=True)
        if not isinstance(again, ConfirmationRequest) or fingerprint(tool, again) != asked:
            raise ConfirmationError(
                "What the person was asked about changed before their answer arrived, so it does not cover it. "
                "Nothing was sent."
            )
        request = again
    if request is None:
        raise ConfirmationError(
            "This confirmation was already answered, has expired, or belongs to another request. Nothing was sent."
        )
    response = (input_responses or {}).get(INPUT_KEY)
    return await _settle(request, _accepted(response) if response is not None else "cancelled", ctx)


def fingerprint(tool: str, request: ConfirmationRequest) -> str:
    """What the person is asked, as a digest: the same call asked again elsewhere asks the same question."""
    return hashlib.sha256(f"{tool}\0{request.question}".encode()).hexdigest()


async def _settle(request: ConfirmationRequest, verdict: str, ctx: ToolContext) -> BaseModel:
    if verdict == "accepted":
        return await _run(request.proceed, ctx)
    return await _run(request.refused, "cancelled" if verdict == "cancelled" else "declined")
