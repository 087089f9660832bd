"""Running a tool's handler for any MCP request: validation, a worker thread, errors as data, logs and metrics.

The low-level SDK validates nothing and turns exceptions into protocol errors, so this layer validates arguments
with the tool's pydantic model, runs the blocking Gmail work in a worker thread (keeping the event loop free for
other calls and pings), and turns every failure into a GmailError with a category, a message and a hint.
`tools/call` (dispatch.py) and `resources/read` (resources.py) both read through `invoke`, so a resource is
exactly a tool's answer. Which tools exist is asked on every request (`server/tools.py`'s `offered_tools`): a
token re-authorized with other scopes while the server runs changes the offer without a restart.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from typing import Any

import anyio
import mcp_types as types
from pydantic import BaseModel, ValidationError

from server.errors import GmailError, InternalError, InvalidInputError
from server.runtime.observability import get_logger
from server.tools import ContextSource, Toolset, ToolSpec, offered_tools
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


def error_result(error: GmailError) -> types.CallToolResult:
    """An `isError` result: the category, message and hint as text for the model, and as data in `_meta`.

    Not as structuredContent: clients validate that against the tool's outputSchema even on errors (the
    TypeScript SDK, and so the MCP Inspector, rejects the whole answer), and an error is not a search result.
    """
    text = f"Error ({error.code}): {error.message}\nHint: {error.hint}"
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        meta={ERROR_META_KEY: error.to_dict()},
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


@dataclass
class Outcome:
    """A handler's run: its result, or the error it ended with (never both)."""

    result: BaseModel | None = None
    error: GmailError | None = None


async def invoke(catalog: ToolCatalog, spec: ToolSpec, arguments: Any, *, via: str = "tool") -> Outcome:
    """Validates `arguments` with the tool's model and runs its handler in a worker thread, logging and measuring
    the call; every failure becomes a GmailError in the outcome. Tools and resources both read through here."""
    request_id = uuid.uuid4().hex[:12]
    started = time.perf_counter()
    log.info(f"{via} start", extra={"request_id": request_id, "tool": spec.name})
    outcome = Outcome()
    try:
        if arguments is not None and not isinstance(arguments, dict):
            raise InvalidInputError("Tool arguments must be a JSON object.")
        try:
            args = spec.input_model.model_validate(arguments or {})
        except ValidationError as exc:
            raise describe_validation_error(exc, spec) from None
        ctx = catalog.source.context_for(getattr(args, "account", None))
        # Abandonable: a cancelled request (or the session ending on EOF) must not wait for a hung Gmail call.
        outcome.result = await anyio.to_thread.run_sync(spec.run, ctx, args, abandon_on_cancel=True)
    except GmailError as error:
        outcome.error = error
    except Exception:
        log.exception("tool crashed", extra={"request_id": request_id, "tool": spec.name})
        outcome.error = InternalError(f"{spec.name} failed unexpectedly (request {request_id}).")
    latency_ms = round((time.perf_counter() - started) * 1000, 1)
    category = outcome.error.code if outcome.error else None
    catalog.source.context_for(None).metrics.record_call(
        spec.name, ok=outcome.error is None, latency_ms=latency_ms, category=category
    )
    log_fields: dict[str, Any] = {"request_id": request_id, "tool": spec.name, "latency_ms": latency_ms}
    if category:
        log.warning(f"{via} end", extra={**log_fields, "error_type": category})
    else:
        count = getattr(outcome.result, "result_count", 1)
        log.info(f"{via} end", extra={**log_fields, "result_count": count})
    return outcome
