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
from functools import partial
from typing import Any

import anyio
import mcp_types as types
from pydantic import BaseModel, ValidationError

from server.app.toolset_choice import missing_scope_messages
from server.errors import GmailError, InternalError, InvalidInputError, PermissionDeniedError
from server.hints import rerun_auth
from server.protocol import confirm
from server.protocol.schemas import ACCOUNT_ARGUMENT
from server.runtime import cost
from server.runtime.cost import COST_META_KEY
from server.runtime.observability import get_logger
from server.tools import ConfirmationRequest, ContextSource, ToolContext, Toolset, ToolSpec, grants, offered_tools
from server.toolsets import ALL_TOOLSETS

log = get_logger("dispatch")


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


def error_result(error: GmailError, spent: cost.CallCost | None = None) -> dict[str, Any]:
    """An `isError` result in wire form (see `dispatch.call_tool`): the category, message and hint as text for the
    model, and as data in `_meta`.

    Not as structuredContent: clients validate that against the tool's outputSchema even on errors (the
    TypeScript SDK, and so the MCP Inspector, rejects the whole answer), and an error is not a search result.
    """
    text = f"Error ({error.code}): {error.message}\nHint: {error.hint}"
    return {
        "content": [{"type": "text", "text": text}],
        "_meta": {ERROR_META_KEY: error.to_dict(), COST_META_KEY: (spent or cost.CallCost()).as_meta()},
        "isError": True,
        "resultType": "complete",  # what the model's default writes; 2026-07-28 sessions require it
    }


class ToolCatalog:
    """The tools this server offers: its toolsets, the opt-in ones the person enabled, and the tokens' scopes."""

    def __init__(
        self, source: ContextSource, toolsets: tuple[Toolset, ...] = ALL_TOOLSETS, enabled: frozenset[str] = frozenset()
    ) -> None:
        self.source = source
        self.toolsets = toolsets
        self.enabled = enabled
        self._offered: dict[frozenset[str] | None, dict[str, ToolSpec]] = {}  # by the scopes held: few, fixed

    def reachable(self, allowed: frozenset[str] | None = None) -> list[str]:
        """The configured accounts a caller may use (all of them unless its credential names some), default first."""
        names = self.source.names
        return names if allowed is None else [name for name in names if name in allowed]

    def offered(self, accounts: list[str] | None = None) -> dict[str, ToolSpec]:
        """The tools listed to a caller: a tool is offered when any account it reaches holds the tool's scopes."""
        held = self._held(accounts)
        tools = self._offered.get(held)
        if tools is None:
            tools = self._offered[held] = offered_tools(self.toolsets, enabled=self.enabled, granted=held)
        return tools

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
        more = getattr(catalog.source, "unknown_account_hint", None)  # remote mode: how to connect another one
        raise InvalidInputError(
            f"No account named {_clip(requested, 60)!r}.",
            hint=f"Use one of the configured accounts: {', '.join(reachable)} (or leave account out)."
            + (f" {more(requested)}" if more else ""),
        )
    return key


@dataclass
class Outcome:
    """A handler's run: its result, or the error it ended with (never both)."""

    result: BaseModel | None = None
    error: GmailError | None = None
    spent: cost.CallCost = field(default_factory=cost.CallCost)  # Gmail requests, units, retries, cache hits
    account: str | None = None  # whose mailbox answered
    mailbox: str | None = None  # that account's address, when known
    input_required: types.InputRequiredResult | None = None  # a 2026-07-28 question for the person, instead


async def invoke(
    catalog: ToolCatalog,
    spec: ToolSpec,
    arguments: Any,
    *,
    via: str = "tool",
    reachable: list[str] | None = None,
    request_ctx: Any = None,
    request_state: str | None = None,
    input_responses: dict[str, Any] | None = None,
) -> Outcome:
    """Validates `arguments` with the tool's model and runs its handler in a worker thread for the account the
    call names (among `reachable`, default: all), logging and measuring the call; every failure becomes a
    GmailError in the outcome. Tools and resources both read through here.

    `request_ctx` (the SDK's request context) lets a ConfirmationRequest be asked through elicitation;
    `request_state`/`input_responses` carry a 2026-07-28 client's answer to such a question (see confirm.py)."""
    request_id = uuid.uuid4().hex[:12]
    started = time.perf_counter()
    log.info(f"{via} start", extra={"request_id": request_id, "tool": spec.name})
    several = len(catalog.source.names) > 1
    outcome = Outcome()
    ctx = None
    try:
        if arguments is not None and not isinstance(arguments, dict):
            raise InvalidInputError("Tool arguments must be a JSON object.")
        try:
            args = spec.input_model.model_validate(arguments or {})
        except ValidationError as exc:
            raise describe_validation_error(exc, spec, several) from None
        reach = reachable if reachable is not None else catalog.reachable()
        outcome.account = resolve_account(catalog, getattr(args, ACCOUNT_ARGUMENT, None), reach)
        ctx = catalog.source.context_for(outcome.account)
        granted = catalog.source.granted_scopes(outcome.account)
        if granted is not None and not grants(spec, granted):
            raise PermissionDeniedError(
                f"The token of account {outcome.account!r} does not grant what {spec.name} needs.",
                hint=_consent_hint(catalog, spec, granted),
            )
        # The worker thread gets a copy of this context, so the handler's requests land in `spent`.
        # Abandonable: a cancelled request (or the session ending on EOF) must not wait for a hung Gmail call.
        with cost.measuring() as outcome.spent:
            if request_state is not None:  # the repeat of a call whose question the client put to the person
                first_phase = partial(spec.run, ctx, args)  # asked on another replica: asked again here
                result: Any = await confirm.answer(spec.name, request_state, input_responses, ctx, first_phase)
                outcome.mailbox = await anyio.to_thread.run_sync(
                    catalog.source.mailbox_of, ctx.account, abandon_on_cancel=True
                )
            else:
                result, outcome.mailbox = await anyio.to_thread.run_sync(
                    _run, spec, ctx, args, catalog.source, abandon_on_cancel=True
                )
            if isinstance(result, ConfirmationRequest):
                result = await confirm.ask(spec.name, result, ctx, request_ctx)
            if isinstance(result, types.InputRequiredResult):
                outcome.input_required = result
            else:
                outcome.result = result
    except GmailError as error:
        outcome.error = catalog.source.explain(error, outcome.account) if outcome.account else error
    except Exception:
        log.exception("tool crashed", extra={"request_id": request_id, "tool": spec.name})
        outcome.error = InternalError(f"{spec.name} failed unexpectedly (request {request_id}).")
    latency_ms = round((time.perf_counter() - started) * 1000, 1)
    category = outcome.error.code if outcome.error else None
    (ctx or catalog.source.context_for(None)).metrics.record_call(
        spec.name, ok=outcome.error is None, latency_ms=latency_ms, category=category
    )
    log_fields: dict[str, Any] = {"request_id": request_id, "tool": spec.name, "latency_ms": latency_ms}
    if several and outcome.account:
        log_fields["account"] = outcome.account
    if category:
        log.warning(f"{via} end", extra={**log_fields, "error_type": category})
    elif outcome.input_required is not None:
        log.info(f"{via} asks the person", extra=log_fields)
    else:
        count = getattr(outcome.result, "result_count", 1)
        log.info(f"{via} end", extra={**log_fields, "result_count": count})
    return outcome


def _consent_hint(catalog: ToolCatalog, spec: ToolSpec, granted: frozenset[str]) -> str | None:
    """For a write tool: the consent command that grants its scope (the account's own, via `explain`)."""
    for toolset in catalog.toolsets:
        if toolset.opt_in and spec in toolset.tools:
            found = missing_scope_messages(frozenset({toolset.name}), (toolset,), granted)
            return found[0] if found else None
    return None


def _run(spec: ToolSpec, ctx: ToolContext, args: Any, source: ContextSource) -> tuple[Any, str | None]:
    """The handler, then the account's address (known after the first call; asked of Gmail at most once)."""
    result = spec.run(ctx, args)
    return result, source.mailbox_of(ctx.account)
