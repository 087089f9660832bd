"""MCP wiring: the tool table becomes `tools/list`, and every `tools/call` becomes a result, never a crash.

The low-level SDK validates nothing and turns exceptions into protocol errors, so this layer validates arguments
with the tool's pydantic model, runs the blocking Gmail work in a worker thread (keeping the event loop free for
other calls and pings), and converts every failure into `CallToolResult(isError=True)` with a category, a
message and a hint. Only an unknown tool name is a protocol error.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS
from pydantic import ValidationError

from server import __version__
from server.errors import GmailError, InternalError, InvalidInputError
from server.protocol.schemas import input_schema, output_schema
from server.runtime.observability import get_logger
from server.tools import TOOLS, UNTRUSTED_CONTENT, ToolContext, ToolSpec

log = get_logger("dispatch")

INSTRUCTIONS = (
    "Read-only access to the user's Gmail. Find messages with gmail_search_messages (Gmail search syntax), then "
    "read one with gmail_get_message using an id from the search. Errors carry a category and a hint saying "
    "what to do next. " + UNTRUSTED_CONTENT
)
ANNOTATIONS = types.ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=True
)


def tool_definition(spec: ToolSpec) -> types.Tool:
    return types.Tool(
        name=spec.name,
        title=spec.title,
        description=spec.description,
        input_schema=input_schema(spec.input_model),
        output_schema=output_schema(spec.output_model),
        annotations=ANNOTATIONS,
    )


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


async def call_tool(ctx: ToolContext, name: str, arguments: dict[str, Any] | None) -> types.CallToolResult:
    spec = TOOLS.get(name)
    if spec is None:
        raise MCPError(code=INVALID_PARAMS, message=f"Unknown tool {name!r}. Available: {', '.join(TOOLS)}.")
    request_id = uuid.uuid4().hex[:12]
    started = time.perf_counter()
    log.info("tool start", extra={"request_id": request_id, "tool": name})
    try:
        if arguments is not None and not isinstance(arguments, dict):
            raise InvalidInputError("Tool arguments must be a JSON object.")
        try:
            args = spec.input_model.model_validate(arguments or {})
        except ValidationError as exc:
            raise describe_validation_error(exc, spec) from None
        # Abandonable: a cancelled request (or the session ending on EOF) must not wait for a hung Gmail call.
        result = await anyio.to_thread.run_sync(spec.run, ctx, args, abandon_on_cancel=True)
        answer = types.CallToolResult(
            content=[types.TextContent(type="text", text=spec.render(result))],
            # No nulls: an absent field says the same in fewer bytes (the output schemas are built to match).
            structured_content=result.model_dump(mode="json", by_alias=True, exclude_none=True),
        )
    except GmailError as error:
        answer = error_result(error)
    except Exception:
        log.exception("tool crashed", extra={"request_id": request_id, "tool": name})
        answer = error_result(InternalError(f"{name} failed unexpectedly (request {request_id})."))
    latency_ms = round((time.perf_counter() - started) * 1000, 1)
    category = answer.meta[ERROR_META_KEY]["category"] if answer.is_error and answer.meta else None
    ctx.metrics.record_call(name, ok=not answer.is_error, latency_ms=latency_ms, category=category)
    log_fields: dict[str, Any] = {"request_id": request_id, "tool": name, "latency_ms": latency_ms}
    if category:
        log.warning("tool end", extra={**log_fields, "error_type": category})
    else:
        log.info("tool end", extra={**log_fields, "result_count": answer.structured_content.get("result_count", 1)})
    return answer


def build_server(ctx: ToolContext) -> Server[Any]:
    """The MCP server for a ready tool context (tests pass one wired to a fake or local Gmail)."""
    definitions = [tool_definition(spec) for spec in TOOLS.values()]

    async def on_list_tools(_request: Any, _params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=definitions)

    async def on_call_tool(_request: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        return await call_tool(ctx, params.name, params.arguments)

    return Server(
        "gmail",
        version=__version__,
        title="Gmail (read-only)",
        instructions=INSTRUCTIONS,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
    )
