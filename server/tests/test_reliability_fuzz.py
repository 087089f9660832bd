"""Tool arguments fuzzed with hypothesis: wrong types, missing and extra fields, huge strings, control characters,
unicode, negative and huge numbers, non-object arguments. Every case must end in a tool result (isError with an
`invalid_input` message wherever the arguments are invalid), never an exception, never `internal_error`, and
valid results must match the tool's outputSchema.

Most cases go through a real in-process MCP client session on one event loop (a blocking portal) to an in-memory
Gmail double, which keeps ~10,000 cases to seconds; a smaller set goes through a real in-process MCP client session
into the real Google client stack and the emulator. `label_ids` gets its own property: no operator smuggling.
Example counts scale the active hypothesis profile (conftest.py): ~10,000 cases at the default 300.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import jsonschema
import mcp_types as types
import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp.client import Client
from mcp.server.lowlevel import Server
from pydantic import ValidationError

from server.auth import TokenStore
from server.errors import NotFoundError
from server.gmail.query import compose_query
from server.gmail.query import label as label_term
from server.gmail_client import GmailClient
from server.protocol import dispatch
from server.runtime.observability import Metrics
from server.tests.support.emulator import emulator_settings
from server.tests.support.properties import examples
from server.tests.support.reliability import CATEGORIES, GET, SEARCH, tally
from server.tools import ToolContext
from server.toolsets import ALL_TOOLS as TOOLS
from server.toolsets import ALWAYS_ON_TOOLS
from server.toolsets.messages.read import GetMessageInput
from server.toolsets.messages.search import SearchMessagesInput

pytestmark = pytest.mark.slow  # fuzzing: the slow tier (`pytest -m slow`)

# Cheap examples, so the fuzz runs a multiple of the profile's count (each example is several cases, see variants).
DISPATCH_EXAMPLES = examples(3)  # per tool
SESSION_EXAMPLES = examples(1.5)
LABEL_EXAMPLES = examples(3)
BASE = settings(suppress_health_check=list(HealthCheck))  # the property is the oracle here, not generation health
SCHEMAS = {
    name: jsonschema.Draft202012Validator(dispatch.tool_definition(spec).output_schema) for name, spec in TOOLS.items()
}
INPUTS = {SEARCH: SearchMessagesInput, GET: GetMessageInput}


# -- an in-memory Gmail: answers any valid call at once ------------------------------------------------------------


def _headers(message_id: str) -> list[dict[str, str]]:
    return [
        {"name": "From", "value": f'"Zoë Ünïcødé" <zoe+{message_id}@exämple.com>'},
        {"name": "To", "value": "me@example.com, =?utf-8?q?B=C3=A9a?= <bea@example.org>"},
        {"name": "Subject", "value": f"=?utf-8?b?{'5pel5pys6Kqe'}?= report {message_id}"},
        {"name": "Date", "value": "Tue, 3 Nov 2026 09:15:00 +0100"},
    ]


class InMemoryGmail:
    """The `GmailApi` protocol without HTTP: ids starting with "0" are missing, like a mistyped id."""

    def list_messages(self, *, query: str, max_results: int, page_token: str | None = None, **_: Any) -> dict:
        count = min(max_results, 7)
        start = 0 if page_token is None else 7
        messages = [{"id": f"m{start + n:015d}", "threadId": f"t{start + n}"} for n in range(count)]
        return {"messages": messages, "nextPageToken": None if page_token else "page2", "resultSizeEstimate": 14}

    def list_labels(self) -> dict:
        names = [
            ("INBOX", "INBOX", "system"),
            ("Label_1", "Receipts/2024", "user"),
            ("Label_2", "Project Phoenix", "user"),
        ]
        return {"labels": [{"id": i, "name": name, "type": kind} for i, name, kind in names]}

    def get_messages_metadata(self, message_ids: Any, *, headers: Any, fields: Any = None) -> dict:
        answers: dict[str, Any] = {}
        for n, message_id in enumerate(message_ids):
            if n == 3:
                answers[message_id] = NotFoundError("gone")  # one enrichment failure per page: degraded item
            else:
                answers[message_id] = {
                    "id": message_id,
                    "threadId": "t" + message_id,
                    "snippet": "Caf&eacute; &amp; more",
                    "internalDate": "1793693700000",
                    "payload": {"headers": _headers(message_id)},
                }
        return answers

    def get_message(self, message_id: str, *, fmt: str = "full", metadata_headers: Any = None) -> dict:
        if message_id.startswith("0"):
            raise NotFoundError("No message with that id exists in this mailbox.")
        resource: dict[str, Any] = {"id": message_id, "threadId": "t1", "labelIds": ["INBOX"], "snippet": "hi"}
        payload: dict[str, Any] = {"mimeType": "multipart/mixed", "headers": _headers(message_id)}
        if fmt == "full":
            text = ("Ligne accentuée, 日本語, emoji 🎉.\n> quoted reply\n" * 400).encode()
            payload["parts"] = [
                {"partId": "0", "mimeType": "text/plain", "body": {"size": len(text), "data": _b64(text)}},
                {"partId": "1", "mimeType": "text/html", "body": {"size": 20, "data": _b64(b"<p>Hi <b>there</b></p>")}},
                {
                    "partId": "2",
                    "mimeType": "application/pdf",
                    "filename": "r\u00e9sum\u00e9.pdf",
                    "body": {"size": 1234, "attachmentId": "ATT1"},
                },
            ]
        resource["payload"] = payload
        return resource


def _b64(data: bytes) -> str:
    import base64

    return base64.urlsafe_b64encode(data).decode().rstrip("=")


# -- strategies ----------------------------------------------------------------------------------------------------
# Cheap on purpose: hypothesis spends ~0.3 ms per example plus a little per draw, so hostile values come from a
# curated pool (one draw) mixed with generated ones, and every example is multiplied into its field knock-outs.

HOSTILE: list[Any] = [
    None, True, False, 0, -1, 1, 51, 2**31, 2**63, -(2**63), 2**100, 1.5, -0.0, 1e308,
    "", " ", "\x00", "\u202e\u200b", "💥" * 3, "\n\r\t", "null", "true", "10", "-5", "[1]", "{}",
    "a" * 2_001, "é" * 100_000, "x" * 1_000_000, "in:inbox\x00", "from:a\nlabel:b",
    [], [None], ["INBOX"], [1, 2], [[[[[]]]]], ["a" * 101], ["ok"] * 21, {}, {"a": 1}, {"$ref": "#/x"},
    {"query": "nested"},
]  # fmt: skip
NON_FINITE = [float("nan"), float("inf"), float("-inf")]
SIZES = st.sampled_from([0, 1, 127, 1_999, 2_000, 2_001, 100_000, 1_000_000])
huge_text = st.builds(lambda ch, n: ch * n, st.sampled_from(["a", "é", "日", "💥", "\x00", " ", "\u202e"]), SIZES)
any_text = st.one_of(st.text(max_size=40), st.text(alphabet=st.characters(max_codepoint=0x1F), max_size=8), huge_text)
numbers = st.one_of(
    st.integers(-5, 60),
    st.integers(),
    st.sampled_from([36_500, 36_501, 200, 199, 200_000, 200_001]),
    st.floats(allow_nan=False, allow_infinity=False),
    st.from_regex(r"\A-?[0-9]{1,25}\Z"),
)


def tool_arguments(*, finite: bool) -> st.SearchStrategy[Any]:
    hostile = st.sampled_from(HOSTILE if finite else HOSTILE + NON_FINITE)
    label = st.one_of(st.sampled_from(["INBOX", "STARRED", "Project Phoenix", "a:b", '"x"', "-spam", ""]), any_text)
    search = st.fixed_dictionaries(
        {},
        optional={
            "query": st.one_of(st.sampled_from(["in:inbox", "from:alice", "", "   "]), any_text, hostile),
            "max_results": st.one_of(numbers, hostile),
            "newer_than_days": st.one_of(numbers, hostile),
            "label_ids": st.one_of(st.lists(label, max_size=22), hostile),
            "page_token": st.one_of(st.just("page2"), any_text, hostile),
        },
    )
    get = st.fixed_dictionaries(
        {},
        optional={
            "message_id": st.one_of(st.from_regex(r"\A[0-9a-f]{16}\Z"), st.just("0" * 16), any_text, hostile),
            "format": st.one_of(st.sampled_from(["full", "metadata", "raw", "minimal", "FULL"]), hostile),
            "max_body_chars": st.one_of(numbers, hostile),
            "offset": st.one_of(numbers, hostile),
            "include_html": st.one_of(st.booleans(), hostile),
            "strip_quoted": st.one_of(st.booleans(), hostile),
        },
    )
    free_form = st.dictionaries(st.one_of(st.sampled_from(["maxResults", "q", "id"]), st.text(max_size=8)), hostile)
    return st.one_of(
        plausible_search, plausible_get, search, get, free_form, st.none(), st.sampled_from([[], [1], "query", 7])
    )


# What a model would plausibly send: mostly valid, so the answering paths (Gmail calls, parsing, rendering,
# outputSchema) get fuzzed as much as the refusing ones.
plain_text = st.text(st.characters(blacklist_categories=("Cc", "Cs")), max_size=60)
plausible_search = st.fixed_dictionaries(
    {"query": st.one_of(st.sampled_from(["in:inbox", "from:alice subject:report", "is:unread", ""]), plain_text)},
    optional={
        "max_results": st.integers(1, 50),
        "newer_than_days": st.integers(1, 36_500),
        "label_ids": st.lists(
            st.one_of(st.sampled_from(["INBOX", "STARRED", "Receipts/2024", "Project Phoenix"]), plain_text),
            min_size=1,
            max_size=4,
        ),
        "page_token": st.sampled_from(["page2", "CAEQAA"]),
    },
)
plausible_get = st.fixed_dictionaries(
    {"message_id": st.one_of(st.from_regex(r"\A[0-9a-f]{16}\Z"), st.sampled_from(["m000000000000001", "0" * 16]))},
    optional={
        "format": st.sampled_from(["full", "metadata"]),
        "max_body_chars": st.integers(200, 200_000),
        "offset": st.integers(0, 30_000),
        "include_html": st.booleans(),
        "strip_quoted": st.booleans(),
    },
)


def variants(arguments: Any) -> list[Any]:
    """The case itself, then each field missing, then an unknown field added (missing and extra fields)."""
    if not isinstance(arguments, dict):
        return [arguments]
    knocked_out = [{k: v for k, v in arguments.items() if k != key} for key in arguments]
    return [arguments, *knocked_out, {**arguments, "maxResults": 5}]


# -- the property every answer must have ---------------------------------------------------------------------------


def is_valid(tool: str, arguments: Any) -> bool:
    try:
        INPUTS[tool].model_validate(arguments or {})
    except ValidationError:
        return False
    return isinstance(arguments, dict | None)


def as_received(tool: str, arguments: Any) -> Any:
    """The arguments as the server receives them from an MCP client, which is what the oracle must judge.

    The client serializes every request with pydantic, `request.model_dump(by_alias=True, mode="json",
    exclude_none=True)` (mcp.client.session.ClientSession.send_request), and JSON mode writes NaN and infinity as
    null: `{"label_ids": NaN}` arrives as `{"label_ids": null}`, which the server rightly accepts.
    `test_the_oracle_sees_what_a_session_delivers` checks this mirror against a real session.
    """
    request = types.CallToolRequest(params=types.CallToolRequestParams(name=tool, arguments=arguments))
    return request.model_dump(by_alias=True, mode="json", exclude_none=True)["params"].get("arguments")


def check_answer(tool: str, arguments: Any, result: Any) -> None:
    """`arguments` as the server received them (see `as_received`)."""
    text = result.content[0].text
    assert isinstance(text, str) and len(text) < 1_000_000
    if result.is_error:
        error = result.meta["gmail-mcp/error"]
        assert error["category"] in CATEGORIES and error["category"] != "internal_error", error
        assert error["message"] and error["hint"] and len(error["message"]) < 5_000  # huge inputs are not echoed
        assert text.startswith(f"Error ({error['category']}): ")
        if not is_valid(tool, arguments):
            assert error["category"] == "invalid_input", (arguments, error)
    else:
        assert is_valid(tool, arguments), arguments
        SCHEMAS[tool].validate(result.structured_content)


# -- fixtures ------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def portal() -> Iterator[BlockingPortal]:
    with start_blocking_portal("asyncio") as running:
        yield running


@pytest.fixture(scope="module")
def memory_context() -> ToolContext:
    return ToolContext(gmail=InMemoryGmail(), enrich_top_k=5, metrics=Metrics())  # type: ignore[arg-type]


# -- the fuzz ------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def memory_session(portal, memory_context) -> Iterator[Client]:
    """A real in-process MCP client session in front of the in-memory Gmail: fast enough for thousands of cases."""
    with portal.wrap_async_context_manager(Client(dispatch.build_server(memory_context), mode="legacy")) as client:
        yield client


async def answer_all(session: Client, context: ToolContext, tool: str, cases: list[Any]) -> list[Any]:
    # JSON objects (and "no arguments") go through the MCP client session; the client itself refuses to send
    # anything else, so those shapes (arrays, strings, numbers as "arguments") go straight to the dispatcher,
    # whose wire-form answer is read as the client would read it.
    return [
        await session.call_tool(tool, arguments)
        if isinstance(arguments, dict | None)
        else types.CallToolResult.model_validate(await dispatch.call_tool(context, tool, arguments))
        for arguments in cases
    ]


@pytest.mark.parametrize("tool", [SEARCH, GET])
def test_every_argument_shape_gets_an_answer(portal, memory_session, memory_context, tool):
    cases = {"n": 0, "valid": 0, "via_session": 0}

    @settings(BASE, max_examples=DISPATCH_EXAMPLES)
    @given(arguments=tool_arguments(finite=False))
    def one(arguments: Any) -> None:
        batch = variants(arguments)
        answers = portal.call(answer_all, memory_session, memory_context, tool, batch)
        for case, result in zip(batch, answers, strict=True):
            via_session = isinstance(case, dict | None)
            check_answer(tool, as_received(tool, case) if via_session else case, result)
            cases["valid"] += not result.is_error
            cases["via_session"] += via_session
        cases["n"] += len(batch)

    one()
    tally(
        "fuzz_cases",
        cases["n"],
        layer="mcp session (in-memory Gmail)",
        tool=tool,
        answered_ok=cases["valid"],
        through_mcp_client=cases["via_session"],
    )
    assert cases["n"] >= DISPATCH_EXAMPLES and cases["valid"] > 0  # some cases got real answers
    assert cases["via_session"] >= cases["n"] * 0.5


@pytest.fixture(scope="module")
def echo_session(portal) -> Iterator[tuple[Client, list[Any]]]:
    """A real in-process MCP client session to a server that only records the arguments it receives."""
    received: list[Any] = []

    async def on_call_tool(_request: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        received.append(params.arguments)
        return types.CallToolResult(content=[types.TextContent(type="text", text="ok")])

    async def on_list_tools(_request: Any, _params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[types.Tool(name=SEARCH, input_schema={"type": "object"})])

    server = Server("echo", on_call_tool=on_call_tool, on_list_tools=on_list_tools)
    with portal.wrap_async_context_manager(Client(server, mode="legacy")) as client:
        yield client, received


def test_the_oracle_sees_what_a_session_delivers(portal, echo_session):
    client, received = echo_session
    nan, inf = float("nan"), float("inf")
    assert as_received(SEARCH, {"query": "in:inbox", "label_ids": nan}) == {"query": "in:inbox", "label_ids": None}
    assert as_received(SEARCH, {"a": [inf, -inf], "b": {"c": nan}}) == {"a": [None, None], "b": {"c": None}}

    @settings(BASE)
    @given(arguments=tool_arguments(finite=False).filter(lambda a: isinstance(a, dict | None)))
    def one(arguments: Any) -> None:
        portal.call(client.call_tool, SEARCH, arguments)
        assert received[-1] == as_received(SEARCH, arguments)

    one()


@pytest.fixture(scope="module")
def emulator_session(portal, gmail_emulator, tmp_path_factory) -> Iterator[Client]:
    """A real MCP client session (in-process) -> the real Google client stack -> the session emulator."""
    # Hundreds of calls in seconds: not a quota budget test.
    settings_ = emulator_settings(gmail_emulator, tmp_path_factory.mktemp("fuzz"), quota_units_per_s=0.0)
    metrics = Metrics()
    context = ToolContext(
        gmail=GmailClient(settings_, TokenStore(settings_), metrics=metrics), enrich_top_k=3, metrics=metrics
    )
    with portal.wrap_async_context_manager(Client(dispatch.build_server(context), mode="legacy")) as client:
        yield client


def test_a_real_mcp_session_answers_every_argument_shape(portal, emulator_session, gmail_emulator):
    known_ids = [message.id for message in gmail_emulator.store.messages[:5]]
    cases = {"n": 0, "valid": 0}

    async def answer_all_over_mcp(tool: str, batch: list[Any]) -> list[Any]:
        return [await emulator_session.call_tool(tool, arguments) for arguments in batch]

    @settings(BASE, max_examples=SESSION_EXAMPLES)
    @given(
        tool=st.sampled_from([SEARCH, GET]),
        arguments=st.one_of(
            tool_arguments(finite=True), st.builds(lambda i: {"message_id": i}, st.sampled_from(known_ids))
        ),
    )
    def one(tool: str, arguments: Any) -> None:
        # The MCP client itself refuses non-object arguments before sending; the dispatch fuzz covers those.
        batch = [case for case in variants(arguments) if isinstance(case, dict | None)]
        for case, result in zip(batch, portal.call(answer_all_over_mcp, tool, batch), strict=True):
            check_answer(tool, as_received(tool, case), result)
            cases["valid"] += not result.is_error
        cases["n"] += len(batch)

    one()
    tally("fuzz_cases", cases["n"], layer="mcp session + emulator", answered_ok=cases["valid"])
    assert cases["n"] >= SESSION_EXAMPLES * 0.9 and cases["valid"] > 0
    # After all that, the session still lists its tools.
    assert len(portal.call(emulator_session.list_tools).tools) == len(ALWAYS_ON_TOOLS)


_LABEL_TERM = re.compile(r'\Alabel:[^\s"(){}|&/]*\Z')


def test_label_names_cannot_smuggle_operators_into_a_query():
    """label_ids go to Gmail as labelIds (ids need no escaping, issue item 3); the `label:` term written for a name
    (the query lint's correction) is one term whatever the name holds."""
    cases = {"n": 0, "accepted": 0}

    @settings(BASE, max_examples=LABEL_EXAMPLES)
    @given(
        labels=st.lists(
            st.one_of(st.text(min_size=1, max_size=30), st.sampled_from(["Project Phoenix", "a OR b", "Q&A (x)"])),
            min_size=1,
            max_size=5,
        )
    )
    def one(labels: list[str]) -> None:
        cases["n"] += 1
        try:
            args = SearchMessagesInput.model_validate({"query": "", "label_ids": labels})
        except ValidationError as exc:
            assert all(e["loc"][0] == "label_ids" for e in exc.errors())
            return
        cases["accepted"] += 1
        assert compose_query(args.query, newer_than_days=None) == ""  # the labels are not in the query
        terms = [label_term(name) for name in args.label_ids or []]
        assert all(_LABEL_TERM.match(term) for term in terms), terms
        assert not any(term.removeprefix("label:").startswith("-") for term in terms)

    one()
    tally("fuzz_cases", cases["n"], layer="label_ids")
    assert cases["accepted"] > 0


def test_newer_than_days_accepts_only_whole_days_in_range():
    for good in (1, 7, "30", 36_500, 7.0):
        assert SearchMessagesInput.model_validate({"query": "", "newer_than_days": good}).newer_than_days == int(good)
    for bad in (0, -1, 36_501, 2**70, 1.5, True, "7d", "seven", [], {}):
        with pytest.raises(ValidationError) as caught:
            SearchMessagesInput.model_validate({"query": "in:inbox", "newer_than_days": bad})
        assert [error["loc"][0] for error in caught.value.errors()] == ["newer_than_days"]
