"""`gmail_unsubscribe` through a real MCP client against the emulator, with a loopback endpoint as the sender's.

One-click (RFC 8058) posts exactly once, exactly `List-Unsubscribe=One-Click` as a form, without cookies, only
when the message has `List-Unsubscribe-Post: List-Unsubscribe=One-Click` and Gmail's dkim=pass for a signature
whose `h=` covers both headers (RFC 8058 section 4); it refuses, saying why, when DKIM fails, the POST header is
missing, the signature does not cover the headers, or the target is a loopback address (the allowance off). A
`mailto:` unsubscribe only saves a draft: nothing is sent. Nothing happens without the person's yes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp.client import Client

from server import scopes
from server.tests.support.cleanup import GROUPS, cleanup_stack
from server.tests.support.unsubscribe_endpoint import unsubscribe_endpoint, unsubscribe_mail
from server.tests.support.writes import SEND_PATHS

pytestmark = pytest.mark.anyio
MODES = ["legacy", "auto"]


@pytest.fixture
def anyio_backend():
    return "asyncio"


def mails(url: str) -> dict[str, bytes]:
    return {
        "good.eml": unsubscribe_mail(domain="good.example", subject="Good news", unsubscribe=f"<{url}/u/good>"),
        "badsig.eml": unsubscribe_mail(
            domain="badsig.example", subject="Bad sig", unsubscribe=f"<{url}/u/badsig>", dkim="fail"
        ),
        "nopost.eml": unsubscribe_mail(
            domain="nopost.example", subject="No post", unsubscribe=f"<{url}/u/nopost>", post=False
        ),
        "uncovered.eml": unsubscribe_mail(
            domain="uncovered.example",
            subject="Uncovered",
            unsubscribe=f"<{url}/u/uncovered>",
            covered="From:To:Subject",
        ),
        "mailto.eml": unsubscribe_mail(
            domain="mailto.example",
            subject="Mailto only",
            unsubscribe="<mailto:leave@mailto.example?subject=unsubscribe%20me>",
            post=False,
        ),
    }


def ids_by_subject(stack: Any) -> dict[str, str]:
    return {m.subject: m.id for m in stack.emulator.store.messages}


def by_sender(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {entry["sender"]: entry for entry in data["senders"]}


@pytest.mark.parametrize("mode", MODES)
async def test_one_click_posts_once_and_refuses_with_reasons(tmp_path: Path, mode: str):
    with (
        unsubscribe_endpoint() as endpoint,
        cleanup_stack(tmp_path, extra_messages=mails(endpoint.url), allow_private=True) as stack,
    ):
        ids = ids_by_subject(stack)
        async with Client(stack.server(GROUPS), mode=mode) as client:
            wanted = [ids[s] for s in ("Good news", "Bad sig", "No post", "Uncovered", "Mailto only")]
            first = await client.call_tool("gmail_unsubscribe", {"message_ids": wanted})
            assert not first.is_error, first.content[0].text
            plan = first.structured_content
            assert plan["status"] == "confirmation_required" and not endpoint.requests
            senders = by_sender(plan)
            assert senders["news@good.example"]["method"] == "one_click"
            assert "dkim=pass" in senders["news@badsig.example"]["detail"]
            assert "List-Unsubscribe-Post" in senders["news@nopost.example"]["detail"]
            assert "does not cover" in senders["news@uncovered.example"]["detail"]
            assert senders["news@mailto.example"]["method"] == "mailto"
            second = await client.call_tool(
                "gmail_unsubscribe", {"message_ids": wanted, "confirmation_code": plan["confirmation_code"]}
            )
            assert not second.is_error, second.content[0].text
            done = by_sender(second.structured_content)
            assert done["news@good.example"]["outcome"] == "unsubscribed"
            assert [r["path"] for r in endpoint.requests] == ["/u/good"]
            posted = endpoint.requests[0]
            assert posted["method"] == "POST" and posted["body"] == b"List-Unsubscribe=One-Click"
            assert posted["headers"]["Content-Type"] == "application/x-www-form-urlencoded"
            assert "Cookie" not in posted["headers"] and "Authorization" not in posted["headers"]
            for refused in ("news@badsig.example", "news@nopost.example", "news@uncovered.example"):
                assert done[refused]["outcome"] == "refused"
            mailto = done["news@mailto.example"]
            assert mailto["outcome"] == "draft_created" and mailto["draft_id"]
            assert not stack.sends()  # a draft, never a send
            again = await client.call_tool(
                "gmail_unsubscribe", {"message_ids": wanted, "confirmation_code": plan["confirmation_code"]}
            )
            assert again.is_error and len(endpoint.requests) == 1  # a code works once


async def test_a_loopback_target_is_refused_without_the_allowance(tmp_path: Path):
    with unsubscribe_endpoint() as endpoint:
        https_localhost = f"<https://localhost:{endpoint.port}/u/local>"
        extra = {"local.eml": unsubscribe_mail(domain="local.example", subject="Local", unsubscribe=https_localhost)}
        with cleanup_stack(tmp_path, extra_messages=extra) as stack:
            async with Client(stack.server(GROUPS), mode="auto") as client:
                message_ids = [ids_by_subject(stack)["Local"]]
                plan = (await client.call_tool("gmail_unsubscribe", {"message_ids": message_ids})).structured_content
                result = await client.call_tool(
                    "gmail_unsubscribe", {"message_ids": message_ids, "confirmation_code": plan["confirmation_code"]}
                )
                outcome = result.structured_content["senders"][0]
                assert outcome["outcome"] == "refused" and "loopback" in outcome["detail"]
        assert not endpoint.requests


async def test_declined_elicitation_posts_nothing(tmp_path: Path):
    with (
        unsubscribe_endpoint() as endpoint,
        cleanup_stack(tmp_path, extra_messages=mails(endpoint.url), allow_private=True) as stack,
    ):

        async def decline(_ctx: Any, _params: Any) -> types.ElicitResult:
            return types.ElicitResult(action="decline")

        async with Client(stack.server(GROUPS), mode="legacy", elicitation_callback=decline) as client:
            ids = ids_by_subject(stack)
            result = await client.call_tool(
                "gmail_unsubscribe", {"message_ids": [ids["Good news"], ids["Mailto only"]]}
            )
            assert result.structured_content["status"] == "declined"
        assert not endpoint.requests
        assert not [e for e in stack.emulator.requests() if e["path"].endswith("/drafts") and e["method"] == "POST"]
        assert not [e for e in stack.emulator.requests() if e["path"] in SEND_PATHS]


async def test_cleanup_and_unsubscribe_are_listed_only_when_enabled_and_granted(tmp_path: Path):
    """Issue 24: "listed only when enabled and granted" — each group its own (`cleanup`, `unsubscribe`), both
    needing a scope that may change labels (gmail.modify): a read-only or compose-only token lists neither."""
    cleanup = {"gmail_cleanup_preview", "gmail_cleanup_run", "gmail_cleanup_undo"}
    with cleanup_stack(tmp_path) as stack:
        async with Client(stack.server(frozenset({"drafts"})), mode="auto") as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert not names & (cleanup | {"gmail_unsubscribe"})
        async with Client(stack.server(frozenset({"cleanup"})), mode="auto") as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert cleanup <= names and "gmail_unsubscribe" not in names
            hidden = await client.call_tool("gmail_unsubscribe", {"message_ids": ["x"]})
            assert hidden.is_error and "GMAIL_MCP_WRITE_TOOLS=unsubscribe" in hidden.content[0].text
        stack.granted = frozenset({scopes.READONLY, scopes.COMPOSE})
        async with Client(stack.server(GROUPS), mode="auto") as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert not names & (cleanup | {"gmail_unsubscribe"})


async def test_the_senders_of_a_cleanup_preview_are_unsubscribed_with_one_yes_for_the_list(tmp_path: Path):
    """Issue 24: "Unsubscribing from many senders found by a cleanup preview works the same way, one confirmation
    for the list": the preview's unsubscribe_message_ids (one message per sender) go to gmail_unsubscribe as they
    are; one code covers every sender, each one-click target gets exactly one POST, the mailto one a draft."""
    with (
        unsubscribe_endpoint() as endpoint,
        cleanup_stack(tmp_path, extra_messages=mails(endpoint.url), allow_private=True) as stack,
    ):
        async with Client(stack.server(GROUPS), mode="auto") as client:
            preview = await client.call_tool("gmail_cleanup_preview", {"query": "in:inbox", "action": "archive"})
            ids = preview.structured_content["unsubscribe_message_ids"]
            asked = await client.call_tool("gmail_unsubscribe", {"message_ids": ids})
            plan = asked.structured_content
            assert plan["status"] == "confirmation_required" and not endpoint.requests
            done = await client.call_tool(
                "gmail_unsubscribe", {"message_ids": ids, "confirmation_code": plan["confirmation_code"]}
            )
        assert len(ids) == 5 and len(plan["senders"]) == 5
        outcomes = {entry["sender"]: entry["outcome"] for entry in done.structured_content["senders"]}
        assert outcomes["news@good.example"] == "unsubscribed" and outcomes["news@mailto.example"] == "draft_created"
        assert [r["path"] for r in endpoint.requests] == ["/u/good"]
        assert not stack.sends()
