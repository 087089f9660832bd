"""MCP resources over the tools' own handlers, as the toolsets declare them (`ResourceSpec`): a fixed URI or a
template with one `{id}` part, answered by one tool, as markdown text.

A resource read is a tool call with default arguments (`calls.invoke`: same validation, worker thread, errors,
logs and metrics), rendered as the tool renders it under a markdown heading. Resources are offered only while
the tool behind them is (configuration and the token's scopes decide). Errors are JSON-RPC errors, as the
protocol wants for resources: invalid params for a malformed id, and for what does not exist -32002 up to
2025-11-25, invalid params from 2026-07-28 (SEP-2164), the URI in `data` either way.
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
from server.tools import ResourceSpec

RESOURCE_NOT_FOUND = -32002  # the MCP specification's code for an unknown resource, up to 2025-11-25
NOT_FOUND_AS_INVALID_PARAMS_SINCE = "2026-07-28"  # SEP-2164: -32602 with the URI in `data`
TEMPLATE_PART = "{id}"


@dataclass(frozen=True)
class Route:
    """Which tool answers a resource URI, with what arguments, under which heading."""

    tool: str
    arguments: dict[str, Any]
    heading: str
    mime_type: str


def _pattern(spec: ResourceSpec) -> re.Pattern[str]:
    before, _, after = spec.uri.partition(TEMPLATE_PART)
    return re.compile(f"^{re.escape(before)}([^/?#]+){re.escape(after)}$")


def route(uri: str, specs: tuple[ResourceSpec, ...]) -> Route:
    """The tool and arguments behind a resource URI; MCPError(-32002) for a URI this server does not serve."""
    for spec in specs:
        if spec.argument is None:
            if uri == spec.uri:
                return Route(spec.tool, {}, f"# {spec.title}", spec.mime_type)
            continue
        match = _pattern(spec).match(uri)
        if match:
            return Route(spec.tool, {spec.argument: match.group(1)}, f"# {spec.title} {match.group(1)}", spec.mime_type)
    raise MCPError(
        code=RESOURCE_NOT_FOUND,
        message=f"Unknown resource {uri[:200]!r}: this server serves {', '.join(spec.uri for spec in specs)}.",
        data={"uri": uri},
    )


def for_version(error: MCPError, version: str | None) -> MCPError:
    """A not-found error as the client's protocol version writes it: invalid params from 2026-07-28 (SEP-2164)."""
    if error.code != RESOURCE_NOT_FOUND or version is None or version < NOT_FOUND_AS_INVALID_PARAMS_SINCE:
        return error
    return MCPError(code=INVALID_PARAMS, message=error.message, data=error.data)


def _protocol_error(error: GmailError, uri: str) -> MCPError:
    text = f"{error.message} Hint: {error.hint}"
    if isinstance(error, NotFoundError):
        return MCPError(code=RESOURCE_NOT_FOUND, message=text, data={"uri": uri, **error.to_dict()})
    code = INVALID_PARAMS if isinstance(error, InvalidInputError) else INTERNAL_ERROR
    return MCPError(code=code, message=f"Error ({error.code}): {text}", data={"uri": uri, **error.to_dict()})


class ResourceReader:
    """The resource handlers of one server, over its tool catalog and the resources its toolsets declare."""

    def __init__(
        self, catalog: ToolCatalog, allowed: Callable[[Any], frozenset[str] | None] = lambda _request: None
    ) -> None:
        self.catalog = catalog
        self._allowed = allowed  # the accounts a request's credential reaches (HTTP); None: all
        self.specs = tuple(spec for toolset in catalog.toolsets for spec in toolset.resources)

    def reachable(self, request: Any) -> list[str]:
        return self.catalog.reachable(self._allowed(request))

    async def read_text(self, uri: str, reachable: list[str] | None = None) -> str:
        """The markdown text of a resource, read with the accounts the caller reaches; raises MCPError when it
        cannot be read."""
        target = route(uri, self.specs)
        spec = self.catalog.offered(reachable).get(target.tool)
        if spec is None:
            raise MCPError(
                code=RESOURCE_NOT_FOUND, message=f"{uri[:200]} is not available with this token.", data={"uri": uri}
            )
        outcome = await invoke(self.catalog, spec, target.arguments, via="resource", reachable=reachable)
        if outcome.error is not None or outcome.result is None:
            raise _protocol_error(outcome.error or GmailError("no result"), uri)
        subject = getattr(outcome.result, "subject", None)
        if subject is None and hasattr(outcome.result, "headers"):
            subject = outcome.result.headers.subject
        heading = f"# {subject}" if subject else target.heading
        return f"{heading}\n\n{spec.render(outcome.result)}"

    def _offered(self, templates: bool) -> list[ResourceSpec]:
        offered = self.catalog.offered()
        return [spec for spec in self.specs if spec.tool in offered and (spec.argument is not None) == templates]

    async def on_list_resources(self, _request: Any, _params: Any) -> types.ListResourcesResult:
        resources = [
            types.Resource(
                uri=spec.uri, name=spec.name, title=spec.title, description=spec.description, mime_type=spec.mime_type
            )
            for spec in self._offered(templates=False)
        ]
        return types.ListResourcesResult(resources=resources)

    async def on_list_resource_templates(self, _request: Any, _params: Any) -> types.ListResourceTemplatesResult:
        templates = [
            types.ResourceTemplate(
                uri_template=spec.uri,
                name=spec.name,
                title=spec.title,
                description=spec.description,
                mime_type=spec.mime_type,
            )
            for spec in self._offered(templates=True)
        ]
        return types.ListResourceTemplatesResult(resource_templates=templates)

    async def on_read_resource(self, request: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        uri = str(params.uri)
        try:
            text = await self.read_text(uri, self.reachable(request))
        except MCPError as error:
            raise for_version(error, getattr(request, "protocol_version", None)) from None
        mime_type = route(uri, self.specs).mime_type
        return types.ReadResourceResult(contents=[types.TextResourceContents(uri=uri, mime_type=mime_type, text=text)])
