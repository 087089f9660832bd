"""No sequence of cleanup, unsubscribe and send calls changes, posts or sends without the person's confirmation.

Hypothesis drives conversations (both protocol eras) of `gmail_cleanup_preview`, `gmail_cleanup_run` (no code,
a junk code, a code issued for this preview or for another, replayed codes), `gmail_cleanup_undo`,
`gmail_unsubscribe` (same choices of codes, over varying sets of messages), `gmail_create_draft` and
`gmail_send_draft` through real MCP sessions against the emulator and a loopback unsubscribe endpoint. A model
tracks which codes the server issued for what; after every call, the emulator's request log and the endpoint say
what happened, and anything that happened must have been allowed by a code issued for exactly that object and
not used before (or by an earlier yes to the same cleanup). A client whose elicitation always declines never
gets anything done. Derandomized by the hypothesis profiles in conftest.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from mcp.client import Client

from server.runtime.cleanup_book import CleanupBook
from server.runtime.confirmations import ConfirmationBook, normalize_code
from server.tests.support.cleanup import GROUPS, cleanup_stack, last_seq, log_of
from server.tests.support.properties import examples
from server.tests.support.unsubscribe_endpoint import Endpoint, unsubscribe_endpoint, unsubscribe_mail
from server.tests.support.writes import SEND_PATHS, WriteStack

pytestmark = pytest.mark.slow
BASE = settings(deadline=None, database=None, suppress_health_check=list(HealthCheck), print_blob=True)
ACTIONS = [
    "preview",
    "run",
    "run",
    "run_code",
    "run_code",
    "undo",
    "unsub",
    "unsub_code",
    "unsub_code",
    "draft",
    "send",
]
STEPS = st.lists(st.tuples(st.sampled_from(ACTIONS), st.integers(0, 3), st.integers(0, 5)), min_size=2, max_size=14)
QUERIES = [("category:promotions", "mark_read"), ("category:promotions", "archive"), ("deals", "trash")]
# A yes to each kind of action (a cleanup, an unsubscribe, a send), each refused once first. It ends with an undo:
# the mailbox is shared by the examples, and the next explicit one must find unread promotions to clean again
# (without it the second found none, and the test's "cleaned at least twice" hung on what the random ones reached).
CONFIRMED_PATHS = [
    ("preview", 0, 0),
    ("run", 0, 0),
    ("run_code", 0, 4),
    ("run_code", 0, 0),
    ("unsub", 0, 0),
    ("unsub_code", 0, 5),
    ("unsub_code", 0, 0),
    ("draft", 0, 0),
    ("send", 0, 4),
    ("send", 0, 0),
    ("undo", 0, 0),
]
JUNK = ["AAAA-AAAA", "ZZZZ2222", "abcd efgh", "QQQQ-QQQQ"]


@dataclass
class Model:
    previews: list[str] = field(default_factory=list)
    confirmed: set[str] = field(default_factory=set)
    codes: dict[str, tuple[str, object]] = field(default_factory=dict)  # code -> (kind, what it is for)
    used: set[str] = field(default_factory=set)

    def pick(self, detail: int, kind: str, target: object) -> str:
        """The code a step passes: 0 the latest issued for this very object, 1 the latest of its kind (maybe for
        another object), 2-3 any issued code, 4-5 a guess."""
        issued = list(self.codes)
        exact = [code for code in issued if self.codes[code] == (kind, target)]
        same_kind = [code for code in issued if self.codes[code][0] == kind]
        if detail == 0 and exact:
            return exact[-1]
        if detail == 1 and same_kind:
            return same_kind[-1]
        if detail in (2, 3) and issued:
            return issued[detail % len(issued)]
        return JUNK[detail % len(JUNK)]

    def redeem(self, code: str, kind: str, target: object) -> bool:
        key = normalize_code(code)
        allowed = key in self.codes and self.codes[key] == (kind, target) and key not in self.used
        if key in self.codes and self.codes[key][0] == kind and self.codes[key][1] == target:
            self.used.add(key)
        return allowed


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[WriteStack, Endpoint]]:
    root: Path = tmp_path_factory.mktemp("cleanup-fuzz")
    with unsubscribe_endpoint() as endpoint:
        extra = {
            f"u{n}.eml": unsubscribe_mail(
                domain=f"n{n}.example", subject=f"List {n}", unsubscribe=f"<{endpoint.url}/u/{n}>"
            )
            for n in range(3)
        }
        extra["m.eml"] = unsubscribe_mail(
            domain="m.example", subject="List mailto", unsubscribe="<mailto:leave@m.example>", post=False
        )
        with cleanup_stack(root, newsletters=40, extra_messages=extra, allow_private=True) as stack:
            yield stack, endpoint


def happened(stack: WriteStack, endpoint: Endpoint, since: int, posts_before: int) -> dict[str, int]:
    entries = log_of(stack, since)
    return {
        "modified": sum(len(entry.get("modified_ids", [])) for entry in entries),
        "drafts": sum(1 for e in entries if e["method"] == "POST" and e["path"].endswith("/drafts")),
        "sends": sum(1 for e in entries if e["path"] in SEND_PATHS and e["status"] == 200),
        "posts": len(endpoint.requests) - posts_before,
    }


async def run_sequence(
    stack: WriteStack, endpoint: Endpoint, mode: str, steps: list[tuple[str, int, int]], reached: dict[str, int]
) -> None:
    stack.ctx.safety.confirmations = ConfirmationBook(300.0, clock=stack.clock)
    stack.ctx.safety.cleanups = CleanupBook(clock=stack.clock, today=stack.ctx.safety.cleanups.today)
    model = Model()
    drafts: list[str] = []
    lists = sorted((m.id for m in stack.emulator.store.messages if m.subject.startswith("List ")), key=str)

    async def decline(_ctx: Any, _params: Any) -> types.ElicitResult:
        return types.ElicitResult(action="decline")

    async with (
        Client(stack.server(GROUPS), mode=mode) as plain,
        Client(stack.server(GROUPS), mode=mode, elicitation_callback=decline) as asking,
    ):
        for action, slot, detail in steps:
            since, posts_before = last_seq(stack), len(endpoint.requests)
            preview = model.previews[slot % len(model.previews)] if model.previews else None
            subset = tuple(lists[(slot + i) % len(lists)] for i in range(1 + slot % 3))  # the slot decides
            draft = drafts[slot % len(drafts)] if drafts else None
            kind, target = {"run_code": ("cleanup", preview), "unsub_code": ("unsubscribe", subset)}.get(
                action, ("send", draft)
            )
            code = model.pick(detail, kind, target)
            allowed = {"modified": False, "posts": False, "drafts": False, "sends": False}
            client = asking if detail == 5 else plain
            if action == "preview" or (preview is None and action in ("run", "run_code", "undo")):
                query, what = QUERIES[slot % len(QUERIES)]
                result = await plain.call_tool("gmail_cleanup_preview", {"query": query, "action": what})
                if result.structured_content and result.structured_content.get("preview_id"):
                    model.previews.append(result.structured_content["preview_id"])
            elif action == "run":
                allowed["modified"] = preview in model.confirmed and client is plain
                result = await client.call_tool("gmail_cleanup_run", {"preview_id": preview})
            elif action == "run_code":
                allowed["modified"] = preview in model.confirmed or model.redeem(code, "cleanup", preview)
                result = await client.call_tool("gmail_cleanup_run", {"preview_id": preview, "confirmation_code": code})
            elif action == "undo":
                allowed["modified"] = True  # undo puts back; it needs no yes
                result = await plain.call_tool("gmail_cleanup_undo", {"preview_id": preview})
            elif action == "unsub":
                result = await client.call_tool("gmail_unsubscribe", {"message_ids": list(subset)})
            elif action == "unsub_code":
                allowed["posts"] = allowed["drafts"] = model.redeem(code, "unsubscribe", subset)
                arguments = {"message_ids": list(subset), "confirmation_code": code}
                result = await client.call_tool("gmail_unsubscribe", arguments)
            elif action == "draft" or not drafts:
                allowed["drafts"] = True
                arguments = {"to": [f"p{detail}@x.example"], "subject": "s", "body": f"draft {len(drafts)}"}
                result = await plain.call_tool("gmail_create_draft", arguments)
                drafts.append(result.structured_content["draft_id"])
            else:
                if detail >= 4:  # the first call of a send: a code (or, declined, nothing)
                    result = await client.call_tool("gmail_send_draft", {"draft_id": draft})
                else:
                    allowed["sends"] = model.redeem(code, "send", draft)
                    arguments = {"draft_id": draft, "confirmation_code": code}
                    result = await client.call_tool("gmail_send_draft", arguments)
            data = result.structured_content or {}
            if not result.is_error and data.get("confirmation_code"):
                kind, target = (
                    ("cleanup", preview)
                    if "preview_id" in data
                    else ("unsubscribe", subset)
                    if "senders" in data
                    else ("send", data.get("draft_id"))
                )
                model.codes[normalize_code(data["confirmation_code"])] = (kind, target)
            if action == "run_code" and data.get("status") in ("done", "paused"):
                model.confirmed.add(str(preview))
            assert not result.is_error or result.meta["gmail-mcp/error"]["category"] != "internal_error"
            seen = happened(stack, endpoint, since, posts_before)
            for what, count in seen.items():
                assert not count or allowed[what], (action, detail, mode, what, result.content[0].text)
            if seen["modified"] and action.startswith("run"):
                reached["cleaned"] += 1
            if seen["posts"]:
                reached["unsubscribed"] += 1
            if seen["sends"]:
                reached["sent"] += 1
            if action in ("run", "run_code", "unsub", "unsub_code") and not any(seen.values()):
                reached["refused"] += 1


def test_no_sequence_acts_without_a_confirmation(world: tuple[WriteStack, Endpoint]):
    stack, endpoint = world
    reached = {"cleaned": 0, "unsubscribed": 0, "sent": 0, "refused": 0}

    @given(steps=STEPS, mode=st.sampled_from(["legacy", "auto"]))
    @example(steps=CONFIRMED_PATHS, mode="legacy")  # every way of acting, whatever the random part reaches
    @example(steps=CONFIRMED_PATHS, mode="auto")
    @settings(BASE, max_examples=examples(0.2))
    def no_sequence_acts_without_a_confirmation(steps: list, mode: str):
        anyio.run(run_sequence, stack, endpoint, mode, steps, reached)

    no_sequence_acts_without_a_confirmation()
    print(reached)
    assert reached["cleaned"] >= 2 and reached["unsubscribed"] >= 2 and reached["sent"] >= 2, reached
    assert reached["refused"] >= 10, reached
