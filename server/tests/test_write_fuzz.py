"""No path sends without the person's confirmation: hypothesis drives sequences of write-tool calls through real MCP
sessions (both eras, with and without elicitation) against the emulator, and its request log is the judge.

A model of the rules predicts, for every call, whether it may send: a code sends only for the draft it was
issued for, in the state it was issued in, once, before it expires (wrong guesses void every code after a few);
an elicitation sends only on an explicit accept with `confirm` ticked, for a draft unchanged while asked. After
each call the number of sends in the log must be exactly what the model allows. Garbage arguments to every
write tool end in a tool error or a result, never in a crash and never in a send.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import anyio
import mcp_types as types
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from mcp.client import Client

from server.runtime.confirmations import MAX_WRONG_CODES, ConfirmationBook, normalize_code
from server.runtime.send_guard import SendGuard
from server.tests.support.properties import examples
from server.tests.support.writes import WriteStack, write_stack

pytestmark = pytest.mark.slow  # fuzzing whole MCP conversations: the slow tier (`pytest -m slow`)

TTL = 300.0
SEQUENCE_EXAMPLES = examples(0.2)  # each example is a whole conversation of calls
GARBAGE_EXAMPLES = examples(0.35)
BASE = settings(deadline=None, database=None, suppress_health_check=list(HealthCheck), print_blob=True)
WRITE_TOOLS = [
    "gmail_create_draft",
    "gmail_update_draft",
    "gmail_list_drafts",
    "gmail_delete_draft",
    "gmail_send_draft",
    "gmail_modify_messages",
]


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WriteStack]:
    with write_stack(tmp_path_factory.mktemp("write-fuzz"), send_limit=100_000) as stack:
        yield stack


@dataclass
class Code:
    draft: str
    version: int
    expires: float
    used: bool = False


@dataclass
class Rules:
    """What the server must allow: a mirror of the confirmation rules, driven by the same fake clock."""

    now: Any
    codes: dict[str, Code] = field(default_factory=dict)
    wrong: int = 0

    def purge(self) -> None:
        self.codes = {key: code for key, code in self.codes.items() if code.expires > self.now()}

    def issue(self, code: str, draft: str, version: int) -> None:
        self.purge()
        self.codes[normalize_code(code)] = Code(draft, version, self.now() + TTL)

    def redeem(self, code: str, draft: str, version: int) -> bool:
        key = normalize_code(code)
        entry = self.codes.get(key)
        if entry is None:
            self.wrong += 1
            if self.wrong >= MAX_WRONG_CODES:
                self.codes.clear()
                self.wrong = 0
            return False
        if self.now() >= entry.expires:
            del self.codes[key]
            return False
        if entry.used or entry.draft != draft:
            return False
        entry.used = True
        if entry.version != version:
            return False
        self.wrong = 0
        return True


# One step of a sequence: (action, draft slot, detail). Details index into lists, so shrinking stays meaningful.
# Sends and the calls that lead to them are drawn more often, on few drafts, so most sequences reach a send.
ACTIONS = [
    "ask",
    "confirm",
    "confirm",
    "send_code",
    "send_code",
    "elicit",
    "elicit",
    "elicit",
    "update",
    "create",
    "send_other_code",
    "send_junk",
    "wait",
    "delete",
]
STEPS = st.lists(st.tuples(st.sampled_from(ACTIONS), st.integers(0, 1), st.integers(0, 5)), min_size=2, max_size=16)
# Three drafts, each sent on the person's first yes: a random draw of 20 conversations (the dev profile) reaches
# the elicitation path only a few times, and the coverage check below must not depend on luck.
YES_THREE_TIMES = [
    ("create", 0, 0),
    ("elicit", 0, 0),
    ("create", 0, 0),
    ("elicit", 1, 0),
    ("create", 0, 0),
    ("elicit", 2, 0),
]
ANSWERS = ["accept", "accept_unticked", "decline", "accept", "change_then_accept", "cancel"]


async def run_sequence(
    stack: WriteStack, mode: str, steps: list[tuple[str, int, int]], reached: dict[str, int]
) -> None:
    stack.ctx.safety.confirmations = ConfirmationBook(TTL, clock=stack.clock)
    stack.ctx.safety.send_guard = SendGuard(100_000, clock=stack.clock)
    rules = Rules(now=stack.clock)
    drafts: list[str] = []
    versions: dict[str, int] = {}
    issued: list[tuple[str, str]] = []  # (code, draft) in order
    answer: dict[str, str] = {"next": "decline"}
    original = next(m for m in stack.emulator.store.messages if m.subject == "Quarterly report")

    async def elicit(_ctx: Any, _params: Any) -> types.ElicitResult:
        choice = answer["next"]
        if choice == "change_then_accept":  # every change is a new text: an identical rewrite is no change
            versions[answer["draft"]] += 1
            body = f"changed {answer['draft']} v{versions[answer['draft']]}"
            await plain.call_tool("gmail_update_draft", {"draft_id": answer["draft"], "body": body})
            choice = "accept"
        if choice.startswith("accept"):
            return types.ElicitResult(action="accept", content={"confirm": choice == "accept"})
        return types.ElicitResult(action=choice)

    async with (
        Client(stack.server(), mode=mode) as plain,
        Client(stack.server(), mode=mode, elicitation_callback=elicit) as asking,
    ):
        for action, slot, detail in steps:
            draft = drafts[slot % len(drafts)] if drafts else None
            before = len(stack.sent_ok())
            expected = 0
            if action == "create" or draft is None:
                result = await plain.call_tool(
                    "gmail_create_draft",
                    {"reply_to_message_id": original.id, "body": f"draft {len(drafts)}"}
                    if detail % 2
                    else {"to": [f"p{detail}@x.example"], "subject": "s", "body": f"draft {len(drafts)}"},
                )
                drafts.append(result.structured_content["draft_id"])
                versions[drafts[-1]] = 0
            elif action == "update":
                version = versions.get(draft, 0) + 1
                result = await plain.call_tool("gmail_update_draft", {"draft_id": draft, "body": f"{draft} v{version}"})
                if draft in versions and not result.is_error:
                    versions[draft] = version
            elif action in ("ask", "confirm"):  # no elicitation: a code, and nothing sent
                result = await plain.call_tool("gmail_send_draft", {"draft_id": draft})
                assert len(stack.sent_ok()) == before
                if result.structured_content and result.structured_content.get("confirmation_code"):
                    code = result.structured_content["confirmation_code"]
                    rules.issue(code, draft, versions[draft])
                    issued.append((code, draft))
                    if action == "confirm":  # the person said yes at once: the code comes back
                        expected = int(rules.redeem(code, draft, versions[draft]))
                        client = asking if detail % 2 else plain
                        result = await client.call_tool(
                            "gmail_send_draft", {"draft_id": draft, "confirmation_code": code}
                        )
            elif action in ("send_code", "send_other_code", "send_junk"):
                if action == "send_junk" or not issued:
                    code = ["AAAA-AAAA", "ZZZZ2222", "abcd efgh", "12345678", "QQQQ-QQQQ", "WXYZ-WXYZ"][detail]
                else:
                    code = (
                        issued[-1 - detail % len(issued)][0]
                        if action == "send_code"
                        else issued[detail % len(issued)][0]
                    )
                client = asking if detail % 2 else plain  # a code works the same whatever the client can do
                if draft in versions:
                    expected = int(rules.redeem(code, draft, versions[draft]))
                result = await client.call_tool("gmail_send_draft", {"draft_id": draft, "confirmation_code": code})
            elif action == "wait":
                stack.clock.advance([30, 120, 299, 301, 600, 5][detail])
                result = None
            elif action == "delete":
                result = await plain.call_tool("gmail_delete_draft", {"draft_id": draft})
                versions.pop(draft, None)
            else:  # elicit: the person answers
                answer.update(next=ANSWERS[detail], draft=draft)
                if draft in versions:
                    if mode == "auto":
                        rules.purge()  # a held question purges expired codes too
                    expected = int(ANSWERS[detail] == "accept")
                result = await asking.call_tool("gmail_send_draft", {"draft_id": draft})
            sent = len(stack.sent_ok()) - before
            assert (
                result is None or not result.is_error or result.meta["gmail-mcp/error"]["category"] != "internal_error"
            )
            assert sent == expected, (action, detail, mode, result and result.content[0].text)
            if sent:
                assert result.structured_content["status"] == "sent"
                versions.pop(draft, None)  # a sent draft is gone
                reached["sent_by_elicitation" if action == "elicit" else "sent_by_code"] += 1
            elif action in ("send_code", "send_other_code", "send_junk", "elicit", "confirm"):
                reached["refused"] += 1
            elif result is not None and result.structured_content:
                assert result.structured_content.get("sent") is not True


def test_no_sequence_sends_without_a_confirmation(stack: WriteStack):
    """The property, then what it walked: it is only as good as the paths it reached, both ways of sending and
    many refusals (counted over this test's own examples, so it holds whichever tests ran before)."""
    reached = {"sent_by_code": 0, "sent_by_elicitation": 0, "refused": 0}

    @given(steps=STEPS, mode=st.sampled_from(["legacy", "auto"]))
    @example(steps=YES_THREE_TIMES, mode="legacy")  # the elicitation path, reached whatever the random draw
    @example(steps=YES_THREE_TIMES, mode="auto")
    @settings(BASE, max_examples=SEQUENCE_EXAMPLES)
    def no_sequence_sends_without_a_confirmation(steps: list, mode: str):
        sends_before = len(stack.sends())
        anyio.run(run_sequence, stack, mode, steps, reached)
        assert all(entry["status"] == 200 for entry in stack.sends()[sends_before:])

    no_sequence_sends_without_a_confirmation()
    assert reached["sent_by_code"] >= 3 and reached["sent_by_elicitation"] >= 3 and reached["refused"] >= 30, reached


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.floats(allow_nan=False) | st.text(max_size=50),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=12,
)
FIELDS = st.sampled_from(
    [
        "to",
        "cc",
        "bcc",
        "subject",
        "body",
        "body_html",
        "mode",
        "reply_to_message_id",
        "draft_id",
        "confirmation_code",
        "message_ids",
        "add_labels",
        "trash",
        "star",
        "attachments",
        "query",
        "max_results",
        "include_quote",
    ]
)


async def call_garbage(stack: WriteStack, mode: str, tool: str, arguments: dict[str, Any]) -> None:
    async with Client(stack.server(), mode=mode) as client:
        result = await client.call_tool(tool, arguments)
    if result.is_error:
        assert result.meta["gmail-mcp/error"]["category"] != "internal_error", result.content[0].text
    elif tool == "gmail_send_draft":
        assert result.structured_content["status"] in ("confirmation_required", "dry_run")


@given(
    tool=st.sampled_from(WRITE_TOOLS),
    arguments=st.dictionaries(FIELDS, JSON, max_size=6),
    mode=st.sampled_from(["legacy", "auto"]),
)
@settings(BASE, max_examples=GARBAGE_EXAMPLES)
def test_garbage_arguments_never_crash_and_never_send(stack: WriteStack, tool: str, arguments: dict, mode: str):
    before = len(stack.sends())
    anyio.run(call_garbage, stack, mode, tool, arguments)
    assert len(stack.sends()) == before
