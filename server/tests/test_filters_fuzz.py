"""No filter is created, and no filter the person made is deleted, without their yes: hypothesis drives sequences of
filter-tool calls through real MCP sessions (both eras, with and without elicitation) against the emulator, whose
filter table and request log are the judge.

A model of the rules predicts every call: a code creates only the filter it was issued for (same criteria and
actions), once, before it expires (wrong guesses void every code after a few); an elicitation creates only on an
explicit accept with `confirm` ticked; an identical filter is never created twice; a filter this server created
is deleted on request, one the person made only with a yes.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import anyio
import mcp_types as types
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp.client import Client

from server.runtime.confirmations import MAX_WRONG_CODES, ConfirmationBook, normalize_code
from server.runtime.filter_record import FilterRecord
from server.tests.support.properties import examples
from server.tests.support.writes import WriteStack, write_stack

pytestmark = pytest.mark.slow  # whole MCP conversations per example: the slow tier (`pytest -m slow`)

TTL = 300.0
BASE = settings(deadline=None, database=None, suppress_health_check=list(HealthCheck), print_blob=True)
SPECS = [
    {"from_address": "news@cafe.example", "skip_inbox": True},
    {"subject": "invoice", "star": True},
]
JUNK = ["AAAA-AAAA", "ZZZZ2222", "abcd efgh", "QQQQ-QQQQ"]
ACTIONS = ["ask", "confirm", "confirm", "code", "other_code", "junk", "elicit", "elicit", "wait", "delete", "theirs"]
STEPS = st.lists(st.tuples(st.sampled_from(ACTIONS), st.integers(0, 1), st.integers(0, 3)), min_size=2, max_size=14)
ANSWERS = ["accept", "accept_unticked", "decline", "cancel"]


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WriteStack]:
    with write_stack(tmp_path_factory.mktemp("filter-fuzz"), scopes=("readonly", "settings")) as stack:
        yield stack


@dataclass
class Rules:
    now: Any
    codes: dict[str, tuple[str, float, bool]] = field(default_factory=dict)  # code -> (subject, expires, used)
    wrong: int = 0

    def issue(self, code: str, subject: str) -> None:
        self.codes = {key: entry for key, entry in self.codes.items() if entry[1] > self.now()}
        self.codes[normalize_code(code)] = (subject, self.now() + TTL, False)

    def redeem(self, code: str, subject: str) -> bool:
        key = normalize_code(code)
        entry = self.codes.get(key)
        if entry is None:
            self.wrong += 1
            if self.wrong >= MAX_WRONG_CODES:
                self.codes.clear()
                self.wrong = 0
            return False
        if self.now() >= entry[1]:
            del self.codes[key]
            return False
        if entry[2]:
            return False
        self.codes[key] = (entry[0], entry[1], True)  # spent even on other criteria: a code is for one filter
        if entry[0] != subject:
            return False
        self.wrong = 0
        return True


def table(stack: WriteStack) -> dict[str, dict[str, Any]]:
    return stack.emulator.app.api.filters.filters


async def run_sequence(stack: WriteStack, mode: str, steps: list[tuple[str, int, int]]) -> None:
    stack.ctx.safety.confirmations = ConfirmationBook(TTL, clock=stack.clock)
    stack.ctx.safety.filters = FilterRecord()
    table(stack).clear()
    rules = Rules(now=stack.clock)
    issued: list[tuple[str, int]] = []  # (code, spec)
    existing: dict[int, str] = {}  # spec -> filter id
    answer = {"next": "decline"}

    async def elicit(_ctx: Any, _params: Any) -> types.ElicitResult:
        choice = answer["next"]
        if choice.startswith("accept"):
            return types.ElicitResult(action="accept", content={"confirm": choice == "accept"})
        return types.ElicitResult(action=choice)

    async with (
        Client(stack.server(frozenset({"filters"})), mode=mode) as plain,
        Client(stack.server(frozenset({"filters"})), mode=mode, elicitation_callback=elicit) as asking,
    ):
        for action, spec, detail in steps:
            args = SPECS[spec]
            subject_exists = spec in existing
            allowed = False
            if action in ("ask", "confirm"):
                result = await plain.call_tool("gmail_create_filter", args)
                code = (result.structured_content or {}).get("confirmation_code")
                assert len(table(stack)) == len(existing)  # asking creates nothing
                if code:
                    rules.issue(code, str(spec))
                    issued.append((code, spec))
                    if action == "confirm":
                        allowed = rules.redeem(code, str(spec))
                        await plain.call_tool("gmail_create_filter", {**args, "confirmation_code": code})
            elif action in ("code", "other_code", "junk"):
                if action == "junk" or not issued:
                    code = JUNK[detail]
                else:
                    code = issued[-1][0] if action == "code" else issued[detail % len(issued)][0]
                allowed = not subject_exists and rules.redeem(code, str(spec))
                await plain.call_tool("gmail_create_filter", {**args, "confirmation_code": code})
            elif action == "elicit":
                answer["next"] = ANSWERS[detail]
                allowed = not subject_exists and ANSWERS[detail] == "accept"
                await asking.call_tool("gmail_create_filter", args)
            elif action == "wait":
                stack.clock.advance([30, 299, 301, 600][detail])
            elif action == "delete" and subject_exists:  # one this server created: goes at once
                result = await plain.call_tool("gmail_delete_filter", {"filter_id": existing[spec]})
                assert result.structured_content["status"] == "deleted"
                del existing[spec]
            elif action == "theirs":  # a filter the person made: never deleted without a yes
                theirs = stack.ctx.gmail.create_filter({"to": f"p{detail}@x.example"}, {"addLabelIds": ["STARRED"]})
                result = await plain.call_tool("gmail_delete_filter", {"filter_id": theirs["id"]})
                assert result.structured_content["status"] == "confirmation_required" and theirs["id"] in table(stack)
                stack.ctx.gmail.delete_filter(theirs["id"])
            if allowed and not subject_exists:
                [made] = [f for f in table(stack).values() if f["id"] not in existing.values()]
                existing[spec] = made["id"]
            assert len(table(stack)) == len(existing), (action, spec, detail)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_no_filter_is_created_or_deleted_without_a_yes(stack: WriteStack, mode: str):
    @given(steps=STEPS)
    @settings(BASE, max_examples=examples(0.2))
    def check(steps: list[tuple[str, int, int]]) -> None:
        anyio.run(run_sequence, stack, mode, steps)

    check()
