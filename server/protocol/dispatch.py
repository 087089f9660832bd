"""MCP wiring: the offered tools become `tools/list`, every `tools/call` becomes a result, never a crash, and
resources and prompts are served over the same handlers (`resources.py`, `prompts.py`).

A tool's answer is its rendered text plus the blocks it adds (an image, resource links), and its result model as
structured content, with what it cost in `_meta`; a failure is `CallToolResult(isError=True)` with a category, a
message and a hint (`calls.py`). Only an unknown tool name is a protocol error; a tool this server has but does not
offer now (not enabled, or not granted) answers with why. The session's start also starts the warm-up
(`warm_up.py`).
"""

from __future__ import annotations

import base64
import functools
import re
from collections.abc import Callable, Iterable
from typing import Any

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS
from pydantic import BaseModel

from server import __version__
from server.errors import InternalError
from server.protocol.calls import (
    ERROR_META_KEY,
    Outcome,
    ToolCatalog,
    describe_validation_error,
    error_result,
    invoke,
)
from server.protocol.completions import Completer
from server.protocol.conformance_fixtures import install_if_asked
from server.protocol.prompts import PromptBook
from server.protocol.resources import ResourceReader
from server.protocol.schemas import ACCOUNT_ARGUMENT, input_schema, output_schema, with_accounts, with_mailbox
from server.protocol.warm_up import WarmUp
from server.runtime.cost import COST_META_KEY
from server.runtime.observability import get_logger
from server.tools import Annotations, ContextSource, ImageBlock, LinkBlock, Toolset, ToolSpec
from server.toolsets import ALL_TOOLSETS

__all__ = [
    "ERROR_META_KEY",
    "Outcome",
    "ToolCatalog",
    "build_server",
    "call_tool",
    "content_blocks",
    "describe_validation_error",
    "error_result",
    "invoke",
    "tool_definition",
]
log = get_logger("dispatch")

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)")
RESOURCE_LINKS_SINCE = "2025-06-18"  # the protocol version that brought resource_link content


def instructions(toolsets: Iterable[Toolset], enabled: frozenset[str]) -> str:
    """The server's instructions: the sentences of the toolsets it offers (the opt-in ones when enabled)."""
    offered = [t.instructions for t in toolsets if t.instructions and (not t.opt_in or t.name in enabled)]
    sentences = [sentence for text in offered for sentence in _SENTENCE_END.split(text)]
    return " ".join(dict.fromkeys(sentences))  # toolsets may share a sentence (the write tools' opening one)


@functools.lru_cache(maxsize=8192)  # bounded: in `--auth oauth` each person's accounts are a set of their own
def tool_definition(spec: ToolSpec, accounts: tuple[str, ...] = ()) -> types.Tool:
    """The `tools/list` entry of a tool for a caller reaching `accounts` (the default first), built once per
    process and account set (schemas cost CPU to generate; the account names are known only at start-up)."""
    return types.Tool(
        name=spec.name,
        title=spec.title,
        description=spec.description,
        input_schema=with_accounts(input_schema(spec.input_model), accounts),
        output_schema=with_mailbox(output_schema(spec.output_model), len(accounts) > 1),
        annotations=tool_annotations(spec.annotations),
    )


def tool_annotations(annotations: Annotations) -> types.ToolAnnotations:
    """The hints a client reads, without the ones that say nothing: for a read-only tool the destructive and
    idempotent hints (the MCP specification gives them meaning "only when readOnlyHint == false"), and an open
    world hint of true (its default). Every conversation pays for tools/list."""
    if annotations.read_only:
        return types.ToolAnnotations(read_only_hint=True, open_world_hint=None if annotations.open_world else False)
    return types.ToolAnnotations(
        read_only_hint=False,
        destructive_hint=annotations.destructive,
        idempotent_hint=annotations.idempotent,
        open_world_hint=annotations.open_world,
    )


def content_blocks(spec: ToolSpec, result: BaseModel, protocol_version: str | None) -> list[dict[str, Any]]:
    """The text the model reads, then the tool's extra blocks (images; resource links where the client's
    protocol knows them: they came with 2025-06-18, and an older client would reject the whole result).

    Wire-form dicts (camelCase keys), not models: the SDK validates the whole result against the client's
    protocol version before sending it, and a search's 10-50 resource links as models cost a validation and a
    dump each on top (0.17 ms of CPU for 50)."""
    blocks: list[dict[str, Any]] = [{"type": "text", "text": spec.render(result)}]
    links_ok = protocol_version is None or protocol_version >= RESOURCE_LINKS_SINCE
    for block in spec.blocks(result):
        if isinstance(block, ImageBlock):
            data = base64.b64encode(block.data).decode("ascii")
            blocks.append({"type": "image", "data": data, "mimeType": block.mime_type})
        elif isinstance(block, LinkBlock) and links_ok:
            link = {"type": "resource_link", "uri": block.uri, "name": block.name}
            if block.title is not None:
                link["title"] = block.title
            if block.mime_type is not None:
                link["mimeType"] = block.mime_type
            blocks.append(link)
    return blocks


async def call_tool(
    catalog: ToolCatalog | ContextSource,
    name: str,
    arguments: dict[str, Any] | None,
    protocol_version: str | None = None,
    allowed: frozenset[str] | None = None,
    request_ctx: Any = None,
    *,
    request_state: str | None = None,
    input_responses: dict[str, Any] | None = None,
) -> dict[str, Any] | types.InputRequiredResult:
    """Runs one tool call; `allowed` restricts the accounts (an HTTP credential that reaches only some).
    `request_ctx` (the SDK's request context) lets a handler's ConfirmationRequest be asked through elicitation;
    `request_state`/`input_responses` carry a 2026-07-28 client's answer to it.

    The answer is a `CallToolResult` in wire form (a dict with camelCase keys, which the SDK validates against
    the session's protocol version), or the InputRequiredResult of a question for the person."""
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
    outcome = await invoke(
        catalog,
        spec,
        arguments,
        reachable=reachable,
        request_ctx=request_ctx,
        request_state=request_state,
        input_responses=input_responses,
    )
    if outcome.input_required is not None:
        return outcome.input_required
    if outcome.error is not None or outcome.result is None:
        return error_result(outcome.error or InternalError(f"{name} gave no result."), outcome.spent)
    try:
        content = content_blocks(spec, outcome.result, protocol_version)
    except Exception:
        log.exception("rendering crashed", extra={"tool": name})
        return error_result(InternalError(f"{name} failed unexpectedly while writing its answer."), outcome.spent)
    answer = {
        "content": content,
        # No nulls: an absent field says the same in fewer bytes (the output schemas are built to match).
        "structuredContent": outcome.result.model_dump(mode="json", by_alias=True, exclude_none=True),
        "_meta": {COST_META_KEY: outcome.spent.as_meta()},
        "isError": False,
        "resultType": "complete",  # what the model's default writes; 2026-07-28 sessions require it
    }
    _with_account(answer, outcome.account or "", outcome.mailbox, len(catalog.source.names) > 1)
    return answer


def _with_account(answer: dict[str, Any], account: str, mailbox: str | None, several: bool) -> None:
    """Results say whose mail they hold: `mailbox` always (when known), and with several accounts the account's
    name beside it and one line at the top of the text."""
    data = answer["structuredContent"]
    if mailbox:
        data["mailbox"] = mailbox
    if several:
        data[ACCOUNT_ARGUMENT] = account
        whose = f"{mailbox} (account {account!r})" if mailbox else f"account {account!r}"
        text = answer["content"][0]
        text["text"] = f"Mailbox: {whose}\n{text['text']}"


def build_server(
    source: ContextSource,
    *,
    toolsets: tuple[Toolset, ...] = ALL_TOOLSETS,
    enabled: frozenset[str] = frozenset(),
    accounts_of: Callable[[Any], frozenset[str] | None] | None = None,
    request_state: RequestStateSecurity | None = None,
) -> Server[Any]:
    """The MCP server over `source`: the account registry, or a ready ToolContext (tests wire one to a fake or
    local Gmail). `enabled` names the opt-in toolsets the person turned on. `accounts_of(request context)` says
    which accounts the request's credential reaches (None: all); the HTTP transport supplies it. `request_state`:
    the keys that seal 2026-07-28 request states (default: a key of this process only; replicas share a ring,
    `remote/key_ring.py`)."""
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

    async def on_call_tool(
        request: Any, params: types.CallToolRequestParams
    ) -> dict[str, Any] | types.InputRequiredResult:
        warm_up.start()  # a call before any listing: now (the call does what it needs itself meanwhile)
        version = getattr(request, "protocol_version", None)
        return await call_tool(
            catalog,
            params.name,
            params.arguments,
            version,
            allowed(request),
            request,
            request_state=params.request_state,
            input_responses=params.input_responses,
        )

    resources = ResourceReader(catalog, allowed)
    prompts = PromptBook(resources)
    server = Server(
        "gmail",
        version=__version__,
        title="Gmail" if enabled else "Gmail (read-only)",
        instructions=instructions(toolsets, enabled),
        on_list_tools=on_list_tools,
        # The SDK annotates CallToolResult; call_tool answers its wire form (a dict), which the SDK validates.
        on_call_tool=on_call_tool,  # type: ignore[arg-type]
        on_list_resources=resources.on_list_resources,
        on_list_resource_templates=resources.on_list_resource_templates,
        on_read_resource=resources.on_read_resource,
        on_list_prompts=prompts.on_list_prompts,
        on_get_prompt=prompts.on_get_prompt,
        on_completion=Completer(resources, prompts).on_completion,
    )
    install_if_asked(server)  # test-only fixtures of the official conformance suite (GMAIL_MCP_CONFORMANCE_FIXTURES)
    server.add_notification_handler("notifications/initialized", types.NotificationParams, on_initialized)
    # The request state of an input-required round trip comes back from the client: sealed, checked, bound to the
    # tool and its arguments before it reaches a handler (the state itself is only a random key to a held question).
    sealing = request_state or RequestStateSecurity.ephemeral()
    server.middleware.append(RequestStateBoundary(sealing, default_audience="gmail"))
    return server
