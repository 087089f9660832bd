"""TEST-ONLY: the fixture tools, resources and prompts the official MCP conformance suite calls by name
(`test_simple_text`, `test://static-text`, `test_simple_prompt`, ...), served beside the Gmail ones only when
GMAIL_MCP_CONFORMANCE_FIXTURES=1. Never listed otherwise: a person's assistant must not see them.

`install_if_asked(server)` wraps the server's own handlers through the SDK's public `get_request_handler` /
`add_request_handler`: a fixture name is answered here, every other name goes to the Gmail handler unchanged, and
lists get the fixtures appended. The SEP-2322 round-trip fixtures live in `conformance_rounds.py`, the handshake
era's server-to-client requests in `conformance_handshake.py`. Names, texts and shapes follow the scenarios of
@modelcontextprotocol/conformance 0.2.0-alpha.12 (`conformance/run-server.sh`).
"""

from __future__ import annotations

import base64
import json
import os
import struct
import zlib
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import mcp_types as types
from mcp.server.connection import allowed_log_levels
from mcp.shared.exceptions import MCPError
from mcp_types import MISSING_REQUIRED_CLIENT_CAPABILITY

from server.protocol.completions import completion, matching
from server.protocol.conformance_handshake import HANDSHAKE_TOOLS
from server.protocol.conformance_rounds import ROUND_PROMPT, ROUND_TOOLS, round_prompt, text_result
from server.runtime.observability import get_logger

log = get_logger("conformance")
FLAG = "GMAIL_MCP_CONFORMANCE_FIXTURES"


def asked(environ: Mapping[str, str] | None = None) -> bool:
    """Whether the fixtures were asked for: the flag set to exactly "1"."""
    return (os.environ if environ is None else environ).get(FLAG, "").strip() == "1"


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def red_pixel_png() -> bytes:
    """A 1x1 red PNG (8-bit RGB)."""
    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x00\x00")  # filter byte 0, then red
    return b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", pixels) + _chunk(b"IEND", b"")


def silent_wav(samples: int = 8, rate: int = 8000) -> bytes:
    """A few samples of 16-bit mono silence as a WAV file."""
    fmt = struct.pack("<HHIIHH", 1, 1, rate, rate * 2, 2, 16)
    data = b"\x00\x00" * samples
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt + b"data" + struct.pack("<I", len(data)) + data
    return b"RIFF" + struct.pack("<I", len(body)) + body


PNG = base64.b64encode(red_pixel_png()).decode("ascii")
WAV = base64.b64encode(silent_wav()).decode("ascii")
NO_ARGUMENTS = {"type": "object", "properties": {}}
# The suite checks that these JSON Schema 2020-12 keywords survive tools/list unchanged (SEP-1613, SEP-2106).
SCHEMA_2020_12 = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}

ToolRun = Callable[[Any, Any], Awaitable[types.CallToolResult | types.InputRequiredResult]]


def _text_resource(uri: str, mime_type: str, text: str) -> types.EmbeddedResource:
    return types.EmbeddedResource(
        type="resource", resource=types.TextResourceContents(uri=uri, mime_type=mime_type, text=text)
    )


def _image() -> types.ImageContent:
    return types.ImageContent(type="image", data=PNG, mime_type="image/png")


def _static(*content: Any, is_error: bool = False) -> ToolRun:
    async def run(_ctx: Any, _params: Any) -> types.CallToolResult:
        return types.CallToolResult(content=list(content), is_error=is_error)

    return run


async def with_progress(ctx: Any, _params: Any) -> types.CallToolResult:
    for done in (0, 50, 100):  # sent only when the request carried a progress token
        await ctx.session.report_progress(done, 100, f"{done} of 100")
    return text_result("Reported progress 0, 50 and 100 of 100.")


async def missing_capability(ctx: Any, _params: Any) -> types.CallToolResult:
    declared = ctx.session.client_capabilities
    if declared is None or declared.sampling is None:
        raise MCPError(
            code=MISSING_REQUIRED_CLIENT_CAPABILITY,
            message="This tool needs the client's sampling capability, which the request did not declare.",
            data={"requiredCapabilities": {"sampling": {}}},
        )
    return text_result("The client declared sampling.")


async def logging_tool(ctx: Any, _params: Any) -> types.CallToolResult:
    """Logs to the client only when this very request asked for a level (2026-07-28 `_meta` opt-in)."""
    meta = ctx.meta.model_dump(by_alias=True) if hasattr(ctx.meta, "model_dump") else dict(ctx.meta or {})
    if types.LOG_LEVEL_META_KEY in meta and "info" in allowed_log_levels(ctx.protocol_version, meta):
        params = types.LoggingMessageNotificationParams(level="info", data="test_logging_tool ran")
        await ctx.session.send_notification(types.LoggingMessageNotification(params=params), ctx.request_id)
    return text_result("Logged only if the request asked for log messages.")


async def streaming_elicitation(ctx: Any, params: Any) -> types.CallToolResult | types.InputRequiredResult:
    """Asks through an InputRequiredResult, never by a request of its own on the response stream."""
    return await ROUND_TOOLS["test_input_required_result_elicitation"](ctx, params)


async def echo_region(_ctx: Any, params: Any) -> types.CallToolResult:
    return text_result(f"region={(params.arguments or {}).get('region', '<none>')}")


FIXTURE_TOOLS: dict[str, tuple[str, dict[str, Any], ToolRun]] = {
    "test_simple_text": (
        "Answers one text block.",
        NO_ARGUMENTS,
        _static(types.TextContent(type="text", text="This is a simple text response for testing.")),
    ),
    "test_image_content": ("Answers one PNG image.", NO_ARGUMENTS, _static(_image())),
    "test_audio_content": (
        "Answers one WAV clip.",
        NO_ARGUMENTS,
        _static(types.AudioContent(type="audio", data=WAV, mime_type="audio/wav")),
    ),
    "test_embedded_resource": (
        "Answers one embedded text resource.",
        NO_ARGUMENTS,
        _static(_text_resource("test://embedded-resource", "text/plain", "This is an embedded resource content.")),
    ),
    "test_multiple_content_types": (
        "Answers text, an image and an embedded JSON resource.",
        NO_ARGUMENTS,
        _static(
            types.TextContent(type="text", text="Multiple content types test:"),
            _image(),
            _text_resource(
                "test://mixed-content-resource", "application/json", json.dumps({"test": "data", "value": 123})
            ),
        ),
    ),
    "test_error_handling": (
        "Always answers a tool error.",
        NO_ARGUMENTS,
        _static(
            types.TextContent(type="text", text="This tool intentionally returns an error for testing"), is_error=True
        ),
    ),
    "test_tool_with_progress": ("Reports progress 0, 50, 100 of 100.", NO_ARGUMENTS, with_progress),
    "test_missing_capability": ("Needs the client's sampling capability.", NO_ARGUMENTS, missing_capability),
    "test_logging_tool": ("Logs only when the request asks for it.", NO_ARGUMENTS, logging_tool),
    "test_streaming_elicitation": ("Asks the person's name.", NO_ARGUMENTS, streaming_elicitation),
    "test_x_mcp_header": (
        "Echoes a region that clients also send as the Mcp-Param-Region header (SEP-2243).",
        {"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}},
        echo_region,
    ),
    "json_schema_2020_12_tool": (
        "Tool with JSON Schema 2020-12 features.",
        SCHEMA_2020_12,
        _static(types.TextContent(type="text", text="json_schema_2020_12_tool")),
    ),
    **{name: ("A SEP-2322 round-trip fixture.", NO_ARGUMENTS, run) for name, run in ROUND_TOOLS.items()},
    **HANDSHAKE_TOOLS,
}

STATIC_TEXT = ("test://static-text", "text/plain", "This is the content of the static text resource.")
STATIC_BINARY = ("test://static-binary", "image/png")
TEMPLATE = "test://template/{id}/data"


def read_fixture(uri: str) -> types.ReadResourceResult | None:
    """The contents of a fixture resource, or None for a URI that is not one."""
    if uri == STATIC_TEXT[0]:
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type="text/plain", text=STATIC_TEXT[2])]
        )
    if uri == STATIC_BINARY[0]:
        return types.ReadResourceResult(contents=[types.BlobResourceContents(uri=uri, mime_type="image/png", blob=PNG)])
    before, _, after = TEMPLATE.partition("{id}")
    middle = uri[len(before) : len(uri) - len(after)] if uri.startswith(before) and uri.endswith(after) else ""
    if middle and "/" not in middle and len(uri) > len(before) + len(after):
        text = json.dumps({"id": middle, "templateTest": True, "data": f"Data for ID: {middle}"})
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type="application/json", text=text)]
        )
    return None


def _user(content: Any) -> types.PromptMessage:
    return types.PromptMessage(role="user", content=content)


def _text(text: str) -> types.TextContent:
    return types.TextContent(type="text", text=text)


def _required(arguments: Mapping[str, str], *names: str) -> list[str]:
    missing = [name for name in names if not arguments.get(name)]
    if missing:
        raise MCPError(code=types.INVALID_PARAMS, message=f"Missing required argument(s): {', '.join(missing)}.")
    return [arguments[name] for name in names]


def get_fixture_prompt(name: str, arguments: Mapping[str, str]) -> types.GetPromptResult:
    if name == "test_simple_prompt":
        messages = [_user(_text("This is a simple prompt for testing."))]
    elif name == "test_prompt_with_arguments":
        arg1, arg2 = _required(arguments, "arg1", "arg2")
        messages = [_user(_text(f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"))]
    elif name == "test_prompt_with_embedded_resource":
        (uri,) = _required(arguments, "resourceUri")
        embedded = _text_resource(uri, "text/plain", "Embedded resource content for testing.")
        messages = [_user(embedded), _user(_text("Please process the embedded resource above."))]
    else:  # test_prompt_with_image
        messages = [_user(_image()), _user(_text("Please analyze the image above."))]
    return types.GetPromptResult(description=FIXTURE_PROMPTS[name][0], messages=messages)


FIXTURE_PROMPTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "test_simple_prompt": ("A simple prompt without arguments.", ()),
    "test_prompt_with_arguments": ("A prompt with two required arguments.", ("arg1", "arg2")),
    "test_prompt_with_embedded_resource": ("A prompt that embeds a resource.", ("resourceUri",)),
    "test_prompt_with_image": ("A prompt with an image.", ()),
    ROUND_PROMPT: ("A prompt that asks the person first (SEP-2322).", ()),
}
FIXTURE_COMPLETIONS = ("paris", "park", "party", "test-value", "testing")


def _prompt(name: str) -> types.Prompt:
    description, arguments = FIXTURE_PROMPTS[name]
    listed = [types.PromptArgument(name=argument, required=True) for argument in arguments]
    return types.Prompt(name=name, description=description, arguments=listed)


def install_if_asked(server: Any, environ: Mapping[str, str] | None = None) -> bool:
    """Adds the fixtures to `server` when GMAIL_MCP_CONFORMANCE_FIXTURES=1; says whether it did."""
    if not asked(environ):
        return False
    log.warning(f"TEST-ONLY conformance fixtures are served ({FLAG}=1): never set it for a person's assistant")
    install(server)
    return True


def install(server: Any) -> None:
    def wrap(method: str, make: Callable[[Any], Any]) -> None:
        entry = server.get_request_handler(method)
        server.add_request_handler(method, entry.params_type, make(entry.handler))

    tools = [
        types.Tool(name=name, description=text, input_schema=schema)
        for name, (text, schema, _) in FIXTURE_TOOLS.items()
    ]

    def list_tools(original: Any) -> Any:
        async def handler(ctx: Any, params: Any) -> types.ListToolsResult:
            answer: types.ListToolsResult = await original(ctx, params)
            return answer.model_copy(update={"tools": [*answer.tools, *tools]})

        return handler

    def call_tool(original: Any) -> Any:
        async def handler(ctx: Any, params: types.CallToolRequestParams) -> Any:
            fixture = FIXTURE_TOOLS.get(params.name)
            return await (fixture[2](ctx, params) if fixture else original(ctx, params))

        return handler

    def list_resources(original: Any) -> Any:
        async def handler(ctx: Any, params: Any) -> types.ListResourcesResult:
            answer: types.ListResourcesResult = await original(ctx, params)
            added = [
                types.Resource(
                    uri=STATIC_TEXT[0], name="static-text", description="Static text.", mime_type="text/plain"
                ),
                types.Resource(uri=STATIC_BINARY[0], name="static-binary", description="A PNG.", mime_type="image/png"),
            ]
            return answer.model_copy(update={"resources": [*answer.resources, *added]})

        return handler

    def list_templates(original: Any) -> Any:
        async def handler(ctx: Any, params: Any) -> types.ListResourceTemplatesResult:
            answer: types.ListResourceTemplatesResult = await original(ctx, params)
            added = types.ResourceTemplate(
                uri_template=TEMPLATE, name="template", description="JSON for an id.", mime_type="application/json"
            )
            return answer.model_copy(update={"resource_templates": [*answer.resource_templates, added]})

        return handler

    def read_resource(original: Any) -> Any:
        async def handler(ctx: Any, params: types.ReadResourceRequestParams) -> Any:
            return read_fixture(str(params.uri)) or await original(ctx, params)

        return handler

    def list_prompts(original: Any) -> Any:
        async def handler(ctx: Any, params: Any) -> types.ListPromptsResult:
            answer: types.ListPromptsResult = await original(ctx, params)
            return answer.model_copy(update={"prompts": [*answer.prompts, *map(_prompt, FIXTURE_PROMPTS)]})

        return handler

    def get_prompt(original: Any) -> Any:
        async def handler(ctx: Any, params: types.GetPromptRequestParams) -> Any:
            if params.name == ROUND_PROMPT:
                return await round_prompt(ctx, params)
            if params.name in FIXTURE_PROMPTS:
                return get_fixture_prompt(params.name, params.arguments or {})
            return await original(ctx, params)

        return handler

    def complete(original: Any) -> Any:
        async def handler(ctx: Any, params: types.CompleteRequestParams) -> types.CompleteResult:
            ref = params.ref
            if isinstance(ref, types.PromptReference) and ref.name in FIXTURE_PROMPTS:
                values = matching(list(FIXTURE_COMPLETIONS), params.argument.value)
                return types.CompleteResult(completion=completion(values))
            answer: types.CompleteResult = await original(ctx, params)
            return answer

        return handler

    wrap("tools/list", list_tools)
    wrap("tools/call", call_tool)
    wrap("resources/list", list_resources)
    wrap("resources/templates/list", list_templates)
    wrap("resources/read", read_resource)
    wrap("prompts/list", list_prompts)
    wrap("prompts/get", get_prompt)
    wrap("completion/complete", complete)
