"""Test-only fixtures of the conformance suite's handshake-era scenarios (2025-11-25 and earlier): tools that ask
the client something mid-call with a server-to-client request (`sampling/createMessage`, `elicitation/create`).

Served only with GMAIL_MCP_CONFORMANCE_FIXTURES=1 (`conformance_fixtures.py`); nothing here reads mail. A
2026-07-28 client has no back channel for such requests: there the tools answer a tool error saying so. Names,
schemas and texts are the ones the suite's scenarios (@modelcontextprotocol/conformance 0.2.0-alpha.12) ask for.
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types

from server.protocol.conformance_rounds import text_result

DEFAULTS_SCHEMA = {  # SEP-1034: a default for every primitive type
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "User name", "default": "John Doe"},
        "age": {"type": "integer", "description": "User age", "default": 30},
        "score": {"type": "number", "description": "User score", "default": 95.5},
        "status": {
            "type": "string",
            "description": "User status",
            "enum": ["active", "inactive", "pending"],
            "default": "active",
        },
        "verified": {"type": "boolean", "description": "Verification status", "default": True},
    },
}
ENUMS_SCHEMA = {  # SEP-1330: the five enum shapes
    "type": "object",
    "properties": {
        "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
        "titledSingle": {
            "type": "string",
            "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"},
            ],
        },
        "legacyEnum": {
            "type": "string",
            "enum": ["opt1", "opt2", "opt3"],
            "enumNames": ["Option One", "Option Two", "Option Three"],
        },
        "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
        "titledMulti": {
            "type": "array",
            "items": {
                "anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"},
                ]
            },
        },
    },
}
USER_SCHEMA = {
    "type": "object",
    "properties": {
        "username": {"type": "string", "description": "User's response"},
        "email": {"type": "string", "description": "User's email address"},
    },
    "required": ["username", "email"],
}


def _no_back_channel(ctx: Any) -> types.CallToolResult | None:
    if ctx.session.can_send_request:
        return None
    return types.CallToolResult(
        content=[types.TextContent(type="text", text="This session cannot carry a request to the client.")],
        is_error=True,
    )


async def _elicited(ctx: Any, message: str, schema: dict[str, Any]) -> types.CallToolResult:
    refused = _no_back_channel(ctx)
    if refused is not None:
        return refused
    answer = await ctx.session.elicit_form(message, schema, related_request_id=ctx.request_id)
    return text_result(f"Elicitation completed: action={answer.action}, content={json.dumps(answer.content or {})}")


async def sampling(ctx: Any, params: Any) -> types.CallToolResult:
    refused = _no_back_channel(ctx)
    if refused is not None:
        return refused
    prompt = str((params.arguments or {}).get("prompt", ""))
    message = types.SamplingMessage(role="user", content=types.TextContent(type="text", text=prompt))
    answer = await ctx.session.create_message([message], max_tokens=100, related_request_id=ctx.request_id)
    return text_result(f"LLM response: {getattr(answer.content, 'text', '')}")


async def elicitation(ctx: Any, params: Any) -> types.CallToolResult:
    return await _elicited(ctx, str((params.arguments or {}).get("message", "")), USER_SCHEMA)


async def defaults(ctx: Any, _params: Any) -> types.CallToolResult:
    return await _elicited(ctx, "Please provide user information", DEFAULTS_SCHEMA)


async def enums(ctx: Any, _params: Any) -> types.CallToolResult:
    return await _elicited(ctx, "Please pick values of each enum kind", ENUMS_SCHEMA)


def _string_argument(name: str, description: str) -> dict[str, Any]:
    return {"type": "object", "properties": {name: {"type": "string", "description": description}}, "required": [name]}


NO_ARGUMENTS: dict[str, Any] = {"type": "object", "properties": {}}
HANDSHAKE_TOOLS = {
    "test_sampling": ("Asks the client's model (sampling).", _string_argument("prompt", "What to ask"), sampling),
    "test_elicitation": (
        "Asks the person through the client (elicitation).",
        _string_argument("message", "What to ask"),
        elicitation,
    ),
    "test_elicitation_sep1034_defaults": ("Elicitation with defaults (SEP-1034).", NO_ARGUMENTS, defaults),
    "test_elicitation_sep1330_enums": ("Elicitation with every enum shape (SEP-1330).", NO_ARGUMENTS, enums),
}
