"""Test-only fixtures of the conformance suite's SEP-2322 scenarios (`input-required-result-*`): tools and a prompt
that answer an InputRequiredResult first and a complete result once the client sends the answers back.

Served only with GMAIL_MCP_CONFORMANCE_FIXTURES=1 (`conformance_fixtures.py`); nothing here reads mail. The request
state they hand out is plain text: the server's RequestStateBoundary (dispatch.py) seals it on the way out and
checks it on the way back, so a tampered state never reaches a handler. Names, keys and texts are the ones the
suite's scenarios (@modelcontextprotocol/conformance 0.2.0-alpha.12) ask for.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import mcp_types as types

NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
CONFIRM_SCHEMA = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
COLOR_SCHEMA = {"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]}
CONTEXT_SCHEMA = {"type": "object", "properties": {"context": {"type": "string"}}, "required": ["context"]}
REQUEST_STATE = "request-state-nonce"

Round = Callable[[Any, Any], Awaitable[types.CallToolResult | types.InputRequiredResult]]


def text_result(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


def ask(message: str, schema: dict[str, Any]) -> types.ElicitRequest:
    return types.ElicitRequest(params=types.ElicitRequestFormParams(message=message, requested_schema=schema))


def sample(text: str, max_tokens: int) -> types.CreateMessageRequest:
    message = types.SamplingMessage(role="user", content=types.TextContent(type="text", text=text))
    return types.CreateMessageRequest(
        params=types.CreateMessageRequestParams(messages=[message], max_tokens=max_tokens)
    )


def answered(params: Any, key: str) -> Any:
    """The client's answer under `key`, or None."""
    return (getattr(params, "input_responses", None) or {}).get(key)


def accepted(answer: Any, field: str) -> Any:
    """A field of an accepted elicitation answer, or None."""
    if isinstance(answer, types.ElicitResult) and answer.action == "accept" and answer.content:
        return answer.content.get(field)
    return None


async def elicitation(_ctx: Any, params: Any) -> types.CallToolResult | types.InputRequiredResult:
    answer = answered(params, "user_name")
    if answer is None:  # a first call, or answers under other keys: ask (again)
        return types.InputRequiredResult(input_requests={"user_name": ask("What is your name?", NAME_SCHEMA)})
    return text_result(f"Hello, {accepted(answer, 'name') or 'stranger'}!")


async def sampling(_ctx: Any, params: Any) -> types.CallToolResult | types.InputRequiredResult:
    answer = answered(params, "capital_question")
    if answer is None:
        question = sample("What is the capital of France?", 100)
        return types.InputRequiredResult(input_requests={"capital_question": question})
    content = getattr(answer, "content", None)
    return text_result(f"The model said: {getattr(content, 'text', '?')}")


async def list_roots(_ctx: Any, params: Any) -> types.CallToolResult | types.InputRequiredResult:
    answer = answered(params, "client_roots")
    if not isinstance(answer, types.ListRootsResult):
        return types.InputRequiredResult(input_requests={"client_roots": types.ListRootsRequest()})
    return text_result("Roots: " + ", ".join(str(root.uri) for root in answer.roots))


async def request_state(_ctx: Any, params: Any) -> types.CallToolResult | types.InputRequiredResult:
    if answered(params, "confirm") is not None and params.request_state == REQUEST_STATE:
        return text_result("state-ok: the confirmation came back with the state this server handed out")
    return types.InputRequiredResult(
        input_requests={"confirm": ask("Please confirm", CONFIRM_SCHEMA)}, request_state=REQUEST_STATE
    )


async def multiple_inputs(_ctx: Any, params: Any) -> types.CallToolResult | types.InputRequiredResult:
    wanted = ("user_name", "greeting", "client_roots")
    if all(answered(params, key) is not None for key in wanted):
        return text_result("Received the name, the greeting and the roots.")
    return types.InputRequiredResult(
        input_requests={
            "user_name": ask("What is your name?", NAME_SCHEMA),
            "greeting": sample("Write a one-line greeting.", 50),
            "client_roots": types.ListRootsRequest(),
        },
        request_state="multiple-inputs",
    )


async def multi_round(_ctx: Any, params: Any) -> types.CallToolResult | types.InputRequiredResult:
    try:
        state = json.loads(params.request_state) if params.request_state else {}
    except ValueError:
        state = {}
    step = state.get("step") if isinstance(state, dict) else None
    name = accepted(answered(params, "step1"), "name")
    if step == 1 and name is not None:
        return types.InputRequiredResult(
            input_requests={"step2": ask("Step 2: What is your favorite color?", COLOR_SCHEMA)},
            request_state=json.dumps({"step": 2, "name": name}),
        )
    color = accepted(answered(params, "step2"), "color")
    if step == 2 and color is not None:
        return text_result(f"{state.get('name')} likes {color}.")
    return types.InputRequiredResult(  # the start, or an answer out of order: from the first question again
        input_requests={"step1": ask("Step 1: What is your name?", NAME_SCHEMA)},
        request_state=json.dumps({"step": 1}),
    )


async def tampered_state(_ctx: Any, params: Any) -> types.CallToolResult | types.InputRequiredResult:
    if params.request_state is None:
        return types.InputRequiredResult(
            input_requests={"confirm": ask("Please confirm", CONFIRM_SCHEMA)}, request_state="round-1"
        )
    return text_result(f"state-ok: {params.request_state}")  # only a state the boundary verified gets here


async def capabilities(ctx: Any, _params: Any) -> types.CallToolResult | types.InputRequiredResult:
    """Asks only what the client said it can answer."""
    declared = ctx.session.client_capabilities
    requests: dict[str, Any] = {}
    if declared is not None and declared.sampling is not None:
        requests["sample"] = sample("Say hello.", 50)
    if declared is not None and declared.elicitation is not None:
        requests["ask"] = ask("What is your name?", NAME_SCHEMA)
    if not requests:
        return text_result("The client declared neither sampling nor elicitation: nothing to ask.")
    return types.InputRequiredResult(input_requests=requests, request_state="capability-gated")


ROUND_TOOLS: dict[str, Round] = {
    "test_input_required_result_elicitation": elicitation,
    "test_input_required_result_sampling": sampling,
    "test_input_required_result_list_roots": list_roots,
    "test_input_required_result_request_state": request_state,
    "test_input_required_result_multiple_inputs": multiple_inputs,
    "test_input_required_result_multi_round": multi_round,
    "test_input_required_result_tampered_state": tampered_state,
    "test_input_required_result_capabilities": capabilities,
}

ROUND_PROMPT = "test_input_required_result_prompt"


async def round_prompt(_ctx: Any, params: Any) -> types.GetPromptResult | types.InputRequiredResult:
    """prompts/get that needs an answer first (the SEP-2322 non-tool request)."""
    answer = answered(params, "user_context")
    if answer is None:
        question = ask("What context should the prompt use?", CONTEXT_SCHEMA)
        return types.InputRequiredResult(input_requests={"user_context": question})
    text = f"Use the following context: {accepted(answer, 'context') or '(none given)'}"
    message = types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))
    return types.GetPromptResult(description="A prompt that asks the person first.", messages=[message])
