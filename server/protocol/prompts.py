"""MCP prompts, as the toolsets declare them (`PromptSpec`): instructions that use the tools, put in the
conversation as a user message, and for some the text of a resource embedded after it.

Prompts only put words in the conversation; every read still happens through the tools (or, for an embedded
resource, through the same handler). A prompt is offered only while the tool it needs is. A bad argument is
invalid params.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from server.errors import InvalidInputError
from server.protocol.resources import ResourceReader, route
from server.tools import PromptSpec


def _text(text: str) -> types.PromptMessage:
    return types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))


def _prompt(spec: PromptSpec) -> types.Prompt:
    arguments = [
        types.PromptArgument(name=item.name, description=item.description, required=item.required or None)
        for item in spec.arguments
    ]
    return types.Prompt(name=spec.name, title=spec.title, description=spec.description, arguments=arguments)


class PromptBook:
    """The prompt handlers of one server; a prompt's embedded resource is read through `resources`."""

    def __init__(self, resources: ResourceReader) -> None:
        self.resources = resources
        self.specs = tuple(spec for toolset in resources.catalog.toolsets for spec in toolset.prompts)

    def _offered(self) -> list[PromptSpec]:
        tools = self.resources.catalog.offered()
        return [spec for spec in self.specs if spec.tool in tools]

    async def on_list_prompts(self, _request: Any, _params: Any) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=[_prompt(spec) for spec in self._offered()])

    async def on_get_prompt(self, request: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        spec = next((item for item in self._offered() if item.name == params.name), None)
        if spec is None:
            names = ", ".join(item.name for item in self._offered())
            raise MCPError(code=INVALID_PARAMS, message=f"Unknown prompt {params.name[:80]!r}. Available: {names}.")
        arguments = params.arguments or {}
        try:
            messages = [_text(spec.text(arguments))]
            uri = spec.embed(arguments) if spec.embed is not None else None
        except InvalidInputError as error:
            raise MCPError(code=INVALID_PARAMS, message=error.message) from None
        if uri is not None:
            text = await self.resources.read_text(uri, self.resources.reachable(request))
            mime_type = route(uri, self.resources.specs).mime_type
            embedded = types.EmbeddedResource(
                type="resource", resource=types.TextResourceContents(uri=uri, mime_type=mime_type, text=text)
            )
            messages.append(types.PromptMessage(role="user", content=embedded))
        return types.GetPromptResult(description=spec.description, messages=messages)
