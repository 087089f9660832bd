"""MCP resources over the tools' own handlers: a message, a thread and the label list as markdown text.

    gmail://messages/{id}   gmail_get_message   (the message's headers, text and attachment list)
    gmail://threads/{id}    gmail_get_thread    (the conversation, quoted history removed, reply context)
    gmail://labels          gmail_list_labels   (every label with its counts)

A resource read is a tool call with default arguments (`calls.invoke`: same validation, worker thread, errors,
logs and metrics), rendered as the tool renders it under a markdown heading. Resources are offered only while
the tool behind them is (configuration and the token's scopes decide). Errors are JSON-RPC errors, as the
protocol wants for resources: -32002 for what does not exist, invalid params for a malformed id.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS

from server.errors import GmailError, InvalidInputError, NotFoundError
from server.protocol.calls import ToolCatalog, invoke
from server.toolsets.common import LABELS_URI, MESSAGE_URI_TEMPLATE, THREAD_URI_TEMPLATE

RESOURCE_NOT_FOUND = -32002  # the MCP specification's code for an unknown resource
MARKDOWN = "text/markdown"


@dataclass(frozen=True)
class Route:
    """Which tool answers a resource URI, with what arguments, under which heading."""

    tool: str
    arguments: dict[str, Any]
    heading: str


_TEMPLATES = (
    (
        re.compile(r"^gmail://messages/([^/?#]+)$"),
        "gmail_get_message",
        "message_id",
        types.ResourceTemplate(
            uri_template=MESSAGE_URI_TEMPLATE,
            name="message",
            title="Gmail message",
            description="One message: headers, readable text and attachment list (ids from searches).",
            mime_type=MARKDOWN,
        ),
    ),
    (
        re.compile(r"^gmail://threads/([^/?#]+)$"),
        "gmail_get_thread",
        "thread_id",
        types.ResourceTemplate(
            uri_template=THREAD_URI_TEMPLATE,
            name="thread",
            title="Gmail conversation",
            description="A whole conversation, oldest first, quoted history removed, with the reply context.",
            mime_type=MARKDOWN,
        ),
    ),
)
LABELS_RESOURCE = types.Resource(
    uri=LABELS_URI,
    name="labels",
    title="Gmail labels",
    description="Every label of the mailbox with its id and message/unread counts.",
    mime_type=MARKDOWN,
)


def route(uri: str) -> Route:
    """The tool and arguments behind a resource URI; MCPError(-32002) for a URI this server does not serve."""
    if uri == LABELS_URI:
        return Route("gmail_list_labels", {}, "# Gmail labels")
    for pattern, tool, argument, template in _TEMPLATES:
        match = pattern.match(uri)
        if match:
            return Route(tool, {argument: match.group(1)}, f"# {template.title} {match.group(1)}")
    raise MCPError(
        code=RESOURCE_NOT_FOUND,
        message=f"Unknown resource {uri[:200]!r}: this server serves "
        "gmail://messages/{id}, gmail://threads/{id} and gmail://labels.",
    )


def _protocol_error(error: GmailError, uri: str) -> MCPError:
    text = f"{error.message} Hint: {error.hint}"
    if isinstance(error, NotFoundError):
        return MCPError(code=RESOURCE_NOT_FOUND, message=text, data={"uri": uri, **error.to_dict()})
    code = INVALID_PARAMS if isinstance(error, InvalidInputError) else INTERNAL_ERROR
    return MCPError(code=code, message=f"Error ({error.code}): {text}", data={"uri": uri, **error.to_dict()})


class ResourceReader:
    """The resource handlers of one server, over its tool catalog."""

    def __init__(
        self, catalog: ToolCatalog, allowed: Callable[[Any], frozenset[str] | None] = lambda _request: None
    ) -> None:
        self.catalog = catalog
        self._allowed = allowed  # the accounts a request's credential reaches (HTTP); None: all

    def reachable(self, request: Any) -> list[str]:
        return self.catalog.reachable(self._allowed(request))

    async def read_text(self, uri: str, reachable: list[str] | None = None) -> str:
        """The markdown text of a resource, read with the accounts the caller reaches; raises MCPError when it
        cannot be read."""
        target = route(uri)
        spec = self.catalog.offered(reachable).get(target.tool)
        if spec is None:
            raise MCPError(code=RESOURCE_NOT_FOUND, message=f"{uri[:200]} is not available with this token.")
        outcome = await invoke(self.catalog, spec, target.arguments, via="resource", reachable=reachable)
        if outcome.error is not None or outcome.result is None:
            raise _protocol_error(outcome.error or GmailError("no result"), uri)
        subject = getattr(outcome.result, "subject", None)
        if subject is None and hasattr(outcome.result, "headers"):
            subject = outcome.result.headers.subject
        heading = f"# {subject}" if subject else target.heading
        return f"{heading}\n\n{spec.render(outcome.result)}"

    async def on_list_resources(self, _request: Any, _params: Any) -> types.ListResourcesResult:
        offered = self.catalog.offered()
        return types.ListResourcesResult(resources=[LABELS_RESOURCE] if "gmail_list_labels" in offered else [])

    async def on_list_resource_templates(self, _request: Any, _params: Any) -> types.ListResourceTemplatesResult:
        offered = self.catalog.offered()
        templates = [template for _, tool, _, template in _TEMPLATES if tool in offered]
        return types.ListResourceTemplatesResult(resource_templates=templates)

    async def on_read_resource(self, request: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        uri = str(params.uri)
        text = await self.read_text(uri, self.reachable(request))
        return types.ReadResourceResult(contents=[types.TextResourceContents(uri=uri, mime_type=MARKDOWN, text=text)])
