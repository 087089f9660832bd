"""MCP wiring: the offered tools become `tools/list`, and every `tools/call` becomes a result, never a crash.

The low-level SDK validates nothing and turns exceptions into protocol errors, so this layer validates arguments
with the tool's pydantic model, runs the blocking Gmail work in a worker thread (keeping the event loop free for
other calls and pings), and converts every failure into `CallToolResult(isError=True)` with a category, a
message and a hint. Only an unknown tool name is a protocol error. Which tools exist is asked on every
`tools/list` (`server/tools.py`'s `offered_tools`): a token re-authorized with other scopes while the server runs
changes the list without a restart.

Every answer's `_meta` carries what the call cost (`gmail-mcp/cost`: Gmail requests, quota units, retries, token
requests, cache hits, history checks; `runtime/cost.py`); the text the model reads carries none of it.

Cold start: the session's start (`notifications/initialized` after the handshake, the first `tools/list` of a
2026-07-28 session, or a first tool call) starts the source's warm-up in a background thread, timed so it does
not slow the `tools/list` answer, and done by the time a client asks its first question: the Google stack
imported, the token refreshed, the connection open (`AccountRegistry.warm_up`, `WarmUp`).
"""

from __future__ import annotations

import functools
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS
from pydantic import ValidationError

from server import __version__
from server.errors import GmailError, InternalError, InvalidInputError, PermissionDeniedError
from server.gmail import scopes
from server.hints import rerun_auth
from server.protocol.schemas import ACCOUNT_ARGUMENT, input_schema, output_schema, with_accounts, with_mailbox
from server.runtime import cost
from server.runtime.cost import COST_META_KEY
from server.runtime.observability import get_logger
from server.runtime.toolset_choice import missing_scope_messages
from server.tools import ContextSource, ToolContext, Toolset, ToolSpec, offered_tools
from server.toolsets import ALL_TOOLSETS
from server.toolsets.common import UNTRUSTED_CONTENT

log = get_logger("dispatch")

INSTRUCTIONS = (
    "Access to the user's Gmail. Find messages with gmail_search_messages (Gmail search syntax), then "
    "read one with gmail_get_message using an id from the search; gmail_changes_since tells what changed since a "
    "checkpoint. Errors carry a category and a hint saying what to do next. " + UNTRUSTED_CONTENT
)


@functools.cache
def tool_definition(spec: ToolSpec, accounts: tuple[str, ...] = ()) -> types.Tool:
    """The `tools/list` entry of a tool for a caller reaching `accounts` (the default first), built once per
    process and account set (schemas cost CPU to generate; the account names are known only at start-up)."""
    annotations = spec.annotations
    return types.Tool(
        name=spec.name,
        title=spec.title,
        description=spec.description,
        input_schema=with_accounts(input_schema(spec.input_model), accounts),
        output_schema=with_mailbox(output_schema(spec.output_model), len(accounts) > 1),
        annotations=types.ToolAnnotations(
            read_only_hint=annotations.read_only,
            destructive_hint=annotations.destructive,
            idempotent_hint=annotations.idempotent,
            open_world_hint=annotations.open_world,
        ),
    )


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def describe_validation_error(
    exc: ValidationError, spec: ToolSpec, several_accounts: bool = False
) -> InvalidInputError:
    problems = []
    for error in exc.errors(include_url=False):
        # Argument names come from the caller and may be huge: echo at most 60 characters of each.
        where = ".".join(_clip(str(part), 60) for part in error["loc"]) or "arguments"
        message = _clip(str(error["msg"]).removeprefix("Value error, "), 300)
        problems.append(f"{where}: {message}")
    names = [name for name in spec.input_model.model_fields if name != ACCOUNT_ARGUMENT]
    allowed = ", ".join(names + ([ACCOUNT_ARGUMENT] if several_accounts else []))
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

    def reachable(self, allowed: frozenset[str] | None = None) -> list[str]:
        """The configured accounts a caller may use (all of them unless its credential names some), default first."""
        names = self.source.names
        return names if allowed is None else [name for name in names if name in allowed]

    def offered(self, accounts: list[str] | None = None) -> dict[str, ToolSpec]:
        """The tools listed to a caller: a tool is offered when any account it reaches holds the tool's scopes."""
        return offered_tools(self.toolsets, enabled=self.enabled, granted=self._held(accounts))

    def _held(self, accounts: list[str] | None) -> frozenset[str] | None:
        """The scopes any of `accounts` (default: the default account) holds; None when no token says."""
        granted = [self.source.granted_scopes(name) for name in (accounts or [self.source.default_name])]
        known = [scopes_held for scopes_held in granted if scopes_held is not None]
        return frozenset().union(*known) if known else None

    def not_offered(self, name: str, accounts: list[str] | None = None) -> PermissionDeniedError | None:
        """Why a tool of these toolsets is not offered to a caller reaching `accounts` (not enabled, or not
        granted by any of their tokens); None for an unknown name."""
        for toolset in self.toolsets:
            if any(spec.name == name for spec in toolset.tools):
                if toolset.opt_in and toolset.name not in self.enabled:
                    return PermissionDeniedError(
                        f"{name} is not enabled on this server (it belongs to the '{toolset.name}' write tools).",
                        hint=f"The person can turn it on with GMAIL_MCP_WRITE_TOOLS={toolset.name} (or --enable "
                        f"{toolset.name}) and restart the server; until then, do not retry.",
                    )
                granted = self._held(accounts)
                (message,) = missing_scope_messages(frozenset({toolset.name}), (toolset,), granted) or (None,)
                return PermissionDeniedError(
                    f"{name} needs a permission the Gmail token was not granted.",
                    hint=message or rerun_auth("grant the access Google asks for"),
                )
        return None


def resolve_account(catalog: ToolCatalog, requested: str | None, reachable: list[str]) -> str:
    """The account a call uses: the one it names (among those the caller reaches), else the default."""
    if not reachable:
        raise InvalidInputError(
            "This connection's credential reaches none of the configured accounts.",
            hint="Ask the server's operator to map the credential to an account (GMAIL_MCP_HTTP_TOKEN_FILE).",
        )
    if requested is None:
        default = catalog.source.default_name
        return default if default in reachable else reachable[0]
    key = requested.strip().lower()
    if key not in reachable:
        raise InvalidInputError(
            f"No account named {_clip(requested, 60)!r}.",
            hint=f"Use one of the configured accounts: {', '.join(reachable)} (or leave account out).",
        )
    return key


def _with_account(answer: types.CallToolResult, account: str, mailbox: str | None, several: bool) -> None:
    """Results say whose mail they hold: `mailbox` always (when known), and with several accounts the account's
    name beside it and one line at the top of the text."""
    data = answer.structured_content
    if data is None:
        return
    if mailbox:
        data["mailbox"] = mailbox
    if several:
        data[ACCOUNT_ARGUMENT] = account
        whose = f"{mailbox} (account {account!r})" if mailbox else f"account {account!r}"
        text = answer.content[0]
        if isinstance(text, types.TextContent):
            text.text = f"Mailbox: {whose}\n{text.text}"


async def call_tool(
    catalog: ToolCatalog | ContextSource,
    name: str,
    arguments: dict[str, Any] | None,
    allowed: frozenset[str] | None = None,
) -> types.CallToolResult:
    """Runs one tool call; `allowed` restricts the accounts (an HTTP credential that reaches only some)."""
    if not isinstance(catalog, ToolCatalog):
        catalog = ToolCatalog(catalog)
    reachable = catalog.reachable(allowed)
    tools = catalog.offered(reachable)
    spec = tools.get(name)
    if spec is None:
        hidden = catalog.not_offered(name, reachable)
        if hidden is not None:  # a real tool this server does not offer now: say how to get it, as a result
            return error_result(hidden)
        raise MCPError(code=INVALID_PARAMS, message=f"Unknown tool {name!r}. Available: {', '.join(tools)}.")
    request_id = uuid.uuid4().hex[:12]
    started = time.perf_counter()
    log.info("tool start", extra={"request_id": request_id, "tool": name})
    several = len(catalog.source.names) > 1
    account: str | None = None
    ctx = None
    spent = cost.CallCost()  # replaced by the measured one once the handler runs
    try:
        if arguments is not None and not isinstance(arguments, dict):
            raise InvalidInputError("Tool arguments must be a JSON object.")
        try:
            args = spec.input_model.model_validate(arguments or {})
        except ValidationError as exc:
            raise describe_validation_error(exc, spec, several) from None
        account = resolve_account(catalog, getattr(args, ACCOUNT_ARGUMENT, None), reachable)
        ctx = catalog.source.context_for(account)
        granted = catalog.source.granted_scopes(account)
        if granted is not None and not scopes.covers(granted, spec.scopes):
            raise PermissionDeniedError(f"The token of account {account!r} does not grant what {name} needs.")
        # The worker thread gets a copy of this context, so the handler's requests land in `spent`.
        # Abandonable: a cancelled request (or the session ending on EOF) must not wait for a hung Gmail call.
        with cost.measuring() as spent:
            result, mailbox = await anyio.to_thread.run_sync(
                _run, spec, ctx, args, catalog.source, abandon_on_cancel=True
            )
        answer = types.CallToolResult(
            content=[types.TextContent(type="text", text=spec.render(result))],
            # No nulls: an absent field says the same in fewer bytes (the output schemas are built to match).
            structured_content=result.model_dump(mode="json", by_alias=True, exclude_none=True),
            meta={COST_META_KEY: spent.as_meta()},
        )
        _with_account(answer, account, mailbox, several)
    except GmailError as error:
        answer = error_result(catalog.source.explain(error, account) if account else error, spent)
    except Exception:
        log.exception("tool crashed", extra={"request_id": request_id, "tool": name})
        answer = error_result(InternalError(f"{name} failed unexpectedly (request {request_id})."), spent)
    latency_ms = round((time.perf_counter() - started) * 1000, 1)
    category = answer.meta[ERROR_META_KEY]["category"] if answer.is_error and answer.meta else None
    metrics = (ctx or catalog.source.context_for(None)).metrics
    metrics.record_call(name, ok=not answer.is_error, latency_ms=latency_ms, category=category)
    log_fields: dict[str, Any] = {"request_id": request_id, "tool": name, "latency_ms": latency_ms}
    if several and account:
        log_fields["account"] = account
    if category:
        log.warning("tool end", extra={**log_fields, "error_type": category})
    else:
        log.info("tool end", extra={**log_fields, "result_count": answer.structured_content.get("result_count", 1)})
    return answer


def _run(spec: ToolSpec, ctx: ToolContext, args: Any, source: ContextSource) -> tuple[Any, str | None]:
    """The handler, then the account's address (known after the first call; asked of Gmail at most once)."""
    result = spec.run(ctx, args)
    return result, source.mailbox_of(ctx.account)


def build_server(
    source: ContextSource,
    *,
    toolsets: tuple[Toolset, ...] = ALL_TOOLSETS,
    enabled: frozenset[str] = frozenset(),
    accounts_of: Callable[[Any], frozenset[str] | None] | None = None,
) -> Server[Any]:
    """The MCP server over `source`: the account registry, or a ready ToolContext (tests wire one to a fake or
    local Gmail). `enabled` names the opt-in toolsets the person turned on. `accounts_of(request context)` says
    which accounts the request's credential reaches (None: all); the HTTP transport supplies it."""
    catalog = ToolCatalog(source, toolsets, enabled)
    warm_up = WarmUp(source)

    async def on_initialized(_request: Any, _params: Any) -> None:
        warm_up.start(WarmUp.AFTER_INITIALIZED_S)

    def allowed(request: Any) -> frozenset[str] | None:
        return accounts_of(request) if accounts_of is not None else None

    async def on_list_tools(request: Any, _params: Any) -> types.ListToolsResult:
        reachable = catalog.reachable(allowed(request))
        names = tuple(reachable)
        answer = types.ListToolsResult(
            tools=[tool_definition(spec, names) for spec in catalog.offered(reachable).values()]
        )
        warm_up.start(WarmUp.AFTER_TOOLS_LIST_S)  # also the trigger of 2026-07-28 sessions (no handshake)
        return answer

    async def on_call_tool(request: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        warm_up.start()  # a call before any listing: now (the call does what it needs itself meanwhile)
        return await call_tool(catalog, params.name, params.arguments, allowed(request))

    server = Server(
        "gmail",
        version=__version__,
        title="Gmail" if enabled else "Gmail (read-only)",
        instructions=INSTRUCTIONS,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
    )
    server.add_notification_handler("notifications/initialized", types.NotificationParams, on_initialized)
    return server


class WarmUp:
    """Runs `source.warm_up()` once, in a daemon thread, so neither the event loop nor a call waits for it.

    It is due at the earliest time any trigger asks for. Importing the Google stack holds the GIL for a few
    hundred milliseconds; started while the event loop is still answering `tools/list`, it would delay that
    answer (by 1.3 s on a loaded machine), so the triggers leave the answer time to go out first.
    """

    AFTER_INITIALIZED_S = 0.25  # clients list their tools right after the handshake: let that go first
    AFTER_TOOLS_LIST_S = 0.05  # the answer is built; give it time to be written

    def __init__(self, source: ContextSource) -> None:
        self._source = source
        self._due: float | None = None
        self._thread: threading.Thread | None = None
        self._changed = threading.Condition()

    def start(self, delay_s: float = 0.0) -> None:
        with self._changed:
            due = time.monotonic() + delay_s
            if self._due is not None and due >= self._due:
                return
            self._due = due
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="gmail-warm-up", daemon=True)
                self._thread.start()
            self._changed.notify()

    def _run(self) -> None:
        with self._changed:
            while self._due is not None and (wait := self._due - time.monotonic()) > 0:
                self._changed.wait(wait)
        try:
            self._source.warm_up()
        except Exception:  # never let a warm-up problem reach the session: the first call reports it properly
            log.warning("warm-up failed", exc_info=True)
