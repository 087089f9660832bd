"""Running a tool's handler for any MCP request: validation, a worker thread, errors as data, logs and metrics.

The low-level SDK validates nothing and turns exceptions into protocol errors, so this layer validates arguments
with the tool's pydantic model, runs the blocking Gmail work in a worker thread (keeping the event loop free for
other calls and pings), and turns every failure into a GmailError with a category, a message and a hint.
`tools/call` (dispatch.py) and `resources/read` (resources.py) both read through `invoke`, so a resource is
exactly a tool's answer. A handler that returns a `ConfirmationRequest` (a send) is resolved here too, by
`confirm.py`: the person is asked through the client, or the model gets a code, before any second phase runs.
Which tools exist is asked on every request (`server/tools.py`'s `offered_tools`): a
token re-authorized with other scopes while the server runs changes the offer without a restart.

Every answer's `_meta` carries what the call cost (`gmail-mcp/cost`: Gmail requests, quota units, retries, token
requests, cache hits, history checks; `runtime/cost.py`); the text the model reads carries none of it.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import anyio
import mcp_types as types
from pydantic import BaseModel, ValidationError

from server.errors import GmailError, InternalError, InvalidInputError, PermissionDeniedError
from server.hints import rerun_auth
from server.protocol import confirm
from server.runtime import cost
from server.runtime.cost import COST_META_KEY
from server.runtime.observability import get_logger
from server.runtime.toolset_choice import missing_scope_messages
from server.tools import ConfirmationRequest, ContextSource, Toolset, ToolSpec, offered_tools
from server.toolsets import ALL_TOOLSETS

log = get_logger("dispatch")


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def describe_validation_error(exc: ValidationError, spec: ToolSpec) -> InvalidInputError:
    problems = []
    for error in exc.errors(include_url=False):
        # Argument names come from the caller and may be huge: echo at most 60 characters of each.
        where = ".".join(_clip(str(part), 60) for part in error["loc"]) or "arguments"
        message = _clip(str(error["msg"]).removeprefix("Value error, "), 300)
        problems.append(f"{where}: {message}")
    allowed = ", ".join(spec.input_model.model_fields)
    return InvalidInputError(
        f"Invalid arguments for {spec.name}: " + "; ".join(problems[:5]),
        hint=f"Fix the arguments and call again. Accepted arguments: {allowed}.",
    )


ERROR_META_KEY = "gmail-mcp/error"


def error_result(error: GmailError, spent: cost.CallCost | None = None) -> types.CallToolResult:
    """An `isError` result: the category, message and hint as text for the model, and as data in `_meta`.

    Not as structuredContent: clients validate that against the tool's outputSchema even on errors (the
    TypeScript SDK, and so the MCP Inspector, rejects the whole answer), and an error is not a search result.
    """
    text = f"Error ({error.code}): {error.message}\nHint: {error.hint}"
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        meta={ERROR_META_KEY: error.to_dict(), COST_META_KEY: (spent or cost.CallCost()).as_meta()},
        is_error=True,
    )


class ToolCatalog:
    """The tools this server offers: its toolsets, the opt-in ones the person enabled, and the token's scopes."""

    def __init__(
        self, source: ContextSource, toolsets: tuple[Toolset, ...] = ALL_TOOLSETS, enabled: frozenset[str] = frozenset()
    ) -> None:
        self.source = source
        self.toolsets = toolsets
        self.enabled = enabled

    def offered(self) -> dict[str, ToolSpec]:
        return offered_tools(self.toolsets, enabled=self.enabled, granted=self.source.granted_scopes(None))

    def not_offered(self, name: str) -> PermissionDeniedError | None:
        """Why a tool of these toolsets is not offered (not enabled, or not granted); None for an unknown name."""
        for toolset in self.toolsets:
            if any(spec.name == name for spec in toolset.tools):
                if toolset.opt_in and toolset.name not in self.enabled:
                    return PermissionDeniedError(
                        f"{name} is not enabled on this server (it belongs to the '{toolset.name}' write tools).",
                        hint=f"The person can turn it on with GMAIL_MCP_WRITE_TOOLS={toolset.name} (or --enable "
                        f"{toolset.name}) and restart the server; until then, do not retry.",
                    )
                granted = self.source.granted_scopes(None)
                (message,) = missing_scope_messages(frozenset({toolset.name}), (toolset,), granted) or (None,)
                return PermissionDeniedError(
                    f"{name} needs a permission the Gmail token was not granted.",
                    hint=message or rerun_auth("grant the access Google asks for"),
                )
        return None


@dataclass
class Outcome:
    """A handler's run: its result, or the error it ended with (never both)."""

    result: BaseModel | None = None
    error: GmailError | None = None
    spent: cost.CallCost = field(default_factory=cost.CallCost)  # Gmail requests, units, retries, cache hits
    input_required: types.InputRequiredResult | None = None  # a 2026-07-28 question for the person, instead


async def invoke(
    catalog: ToolCatalog,
    spec: ToolSpec,
    arguments: Any,
    *,
    via: str = "tool",
    request_ctx: Any = None,
    request_state: str | None = None,
    input_responses: dict[str, Any] | None = None,
) -> Outcome:
    """Validates `arguments` with the tool's model and runs its handler in a worker thread, logging and measuring
    the call; every failure becomes a GmailError in the outcome. Tools and resources both read through here.

    `request_ctx` (the SDK's request context) lets a ConfirmationRequest be asked through elicitation;
    `request_state`/`input_responses` carry a 2026-07-28 client's answer to such a question (see confirm.py)."""
    request_id = uuid.uuid4().hex[:12]
    started = time.perf_counter()
    log.info(f"{via} start", extra={"request_id": request_id, "tool": spec.name})
    outcome = Outcome()
    ctx = None
    try:
        if arguments is not None and not isinstance(arguments, dict):
            raise InvalidInputError("Tool arguments must be a JSON object.")
        try:
            args = spec.input_model.model_validate(arguments or {})
        except ValidationError as exc:
            raise describe_validation_error(exc, spec) from None
        ctx = catalog.source.context_for(getattr(args, "account", None))
        # The worker thread gets a copy of this context, so the handler's requests land in `spent`.
        # Abandonable: a cancelled request (or the session ending on EOF) must not wait for a hung Gmail call.
        with cost.measuring() as outcome.spent:
            if request_state is not None:  # the repeat of a call whose question the client put to the person
                result: Any = await confirm.answer(spec.name, request_state, input_responses, ctx)
            else:
                result = await anyio.to_thread.run_sync(spec.run, ctx, args, abandon_on_cancel=True)
            if isinstance(result, ConfirmationRequest):
                result = await confirm.ask(spec.name, result, ctx, request_ctx)
            if isinstance(result, types.InputRequiredResult):
                outcome.input_required = result
            else:
                outcome.result = result
    except GmailError as error:
        outcome.error = error
    except Exception:
        log.exception("tool crashed", extra={"request_id": request_id, "tool": spec.name})
        outcome.error = InternalError(f"{spec.name} failed unexpectedly (request {request_id}).")
    latency_ms = round((time.perf_counter() - started) * 1000, 1)
    category = outcome.error.code if outcome.error else None
    (ctx or catalog.source.context_for(None)).metrics.record_call(
        spec.name, ok=outcome.error is None, latency_ms=latency_ms, category=category
    )
    log_fields: dict[str, Any] = {"request_id": request_id, "tool": spec.name, "latency_ms": latency_ms}
    if category:
        log.warning(f"{via} end", extra={**log_fields, "error_type": category})
    elif outcome.input_required is not None:
        log.info(f"{via} asks the person", extra=log_fields)
    else:
        count = getattr(outcome.result, "result_count", 1)
        log.info(f"{via} end", extra={**log_fields, "result_count": count})
    return outcome
