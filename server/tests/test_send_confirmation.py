"""`gmail_send_draft` through real MCP client sessions in both protocol eras, judged by the emulator's request log.

A client with elicitation that accepts sends once; one that declines or cancels sends nothing; a client without
elicitation sends nothing on the first call and once on the second with the code; an expired, reused, foreign or
stale code sends nothing; 503, a reset, a connection closed without an answer and a timeout on the send are
never retried (one send request in the log) and answer `unknown_outcome`; the hourly limit holds.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp.client import Client

from server.tests.support.writes import WriteStack, write_stack

pytestmark = pytest.mark.anyio
MODES = ["legacy", "auto"]


@pytest.fixture
def anyio_backend():
    return "asyncio"


def answering(action: str, confirm: bool = True, asked: list[str] | None = None) -> Any:
    async def callback(_ctx: Any, params: Any) -> types.ElicitResult:
        if asked is not None:
            asked.append(params.message)
        return types.ElicitResult(action=action, content={"confirm": confirm} if action == "accept" else None)

    return callback


async def make_draft(client: Client, stack: WriteStack, **extra: Any) -> str:
    original = next(m for m in stack.emulator.store.messages if m.subject == "Quarterly report")
    result = await client.call_tool(
        "gmail_create_draft", {"reply_to_message_id": original.id, "body": "Thanks", **extra}
    )
    assert not result.is_error, result.content[0].text
    return result.structured_content["draft_id"]


def category(result: Any) -> str | None:
    return result.meta["gmail-mcp/error"]["category"] if result.is_error else None


@pytest.mark.parametrize("mode", MODES)
async def test_elicitation_accept_sends_once_into_sent_and_the_thread(tmp_path: Path, mode: str):
    asked: list[str] = []
    with write_stack(tmp_path) as stack:
        async with Client(stack.server(), mode=mode, elicitation_callback=answering("accept", asked=asked)) as client:
            draft_id = await make_draft(client, stack, bcc=["audit@x.example"])
            result = await client.call_tool("gmail_send_draft", {"draft_id": draft_id})
            assert not result.is_error, result.content[0].text
            data = result.structured_content
            assert data["status"] == "sent" and data["sent"] is True and "confirmation_code" not in data
            found = await client.call_tool("gmail_search_messages", {"query": "in:sent subject:(Quarterly report)"})
        assert len(stack.sent_ok()) == 1 and len(stack.sends()) == 1
        [question] = asked
        assert (
            "To: Alice Example <alice@example.com>" in question
            and "Bcc (hidden from the others): audit@x.example" in question
        )
        assert "Subject: Re: Quarterly report" in question and "Thanks" in question
        sent = stack.emulator.store.by_id[data["message_id"]]
        original = next(m for m in stack.emulator.store.messages if m.subject == "Quarterly report")
        assert "SENT" in sent.label_ids and "DRAFT" not in sent.label_ids
        assert sent.thread_id == original.thread_id and data["thread_id"] == original.thread_id
        assert b"audit@x.example" not in sent.raw  # Bcc does not travel
        assert data["message_id"] in [m["id"] for m in found.structured_content["messages"]]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("action, confirm", [("decline", True), ("cancel", True), ("accept", False)])
async def test_elicitation_decline_cancel_or_unticked_sends_nothing(
    tmp_path: Path, mode: str, action: str, confirm: bool
):
    with write_stack(tmp_path) as stack:
        async with Client(stack.server(), mode=mode, elicitation_callback=answering(action, confirm)) as client:
            draft_id = await make_draft(client, stack)
            result = await client.call_tool("gmail_send_draft", {"draft_id": draft_id})
            assert result.structured_content["status"] == ("cancelled" if action == "cancel" else "declined")
            assert result.structured_content["sent"] is False and "confirmation_code" not in result.structured_content
            assert "Not sent" in result.content[0].text
        assert stack.sends() == []
        audit = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text(encoding="utf-8").splitlines()]
        assert audit[-1]["action"] == "drafts.send" and audit[-1]["outcome"] in ("declined", "cancelled")


@pytest.mark.parametrize("mode", MODES)
async def test_without_elicitation_the_first_call_sends_nothing_and_the_code_sends_once(tmp_path: Path, mode: str):
    with write_stack(tmp_path) as stack:
        async with Client(stack.server(), mode=mode) as client:
            draft_id = await make_draft(client, stack)
            first = await client.call_tool("gmail_send_draft", {"draft_id": draft_id})
            data = first.structured_content
            assert data["status"] == "confirmation_required" and data["sent"] is False and stack.sends() == []
            assert data["summary"]["to"] == ["Alice Example <alice@example.com>"] and data["expires_in_s"] == 300
            assert "NOT SENT" in first.content[0].text and data["confirmation_code"] in first.content[0].text
            second = await client.call_tool(
                "gmail_send_draft", {"draft_id": draft_id, "confirmation_code": data["confirmation_code"]}
            )
            assert second.structured_content["status"] == "sent" and len(stack.sent_ok()) == 1
            reused = await client.call_tool(
                "gmail_send_draft", {"draft_id": draft_id, "confirmation_code": data["confirmation_code"]}
            )
            assert category(reused) == "not_found"  # the draft was sent: it is gone, and the code is spent anyway
        assert len(stack.sends()) == 1


async def test_expired_reused_foreign_and_stale_codes_send_nothing(tmp_path: Path):
    with write_stack(tmp_path) as stack:
        async with Client(stack.server(), mode="auto") as client:
            first, second = await make_draft(client, stack), await make_draft(client, stack)
            code = (await client.call_tool("gmail_send_draft", {"draft_id": first})).structured_content[
                "confirmation_code"
            ]
            stack.clock.advance(301)
            expired = await client.call_tool("gmail_send_draft", {"draft_id": first, "confirmation_code": code})
            assert category(expired) == "confirmation_invalid" and "expired" in expired.content[0].text
            code = (await client.call_tool("gmail_send_draft", {"draft_id": first})).structured_content[
                "confirmation_code"
            ]
            foreign = await client.call_tool("gmail_send_draft", {"draft_id": second, "confirmation_code": code})
            assert category(foreign) == "confirmation_invalid" and "another draft" in foreign.content[0].text
            code = (await client.call_tool("gmail_send_draft", {"draft_id": first})).structured_content[
                "confirmation_code"
            ]
            edited = await client.call_tool("gmail_update_draft", {"draft_id": first, "to": ["mallory@evil.example"]})
            assert not edited.is_error
            stale = await client.call_tool("gmail_send_draft", {"draft_id": first, "confirmation_code": code})
            assert category(stale) == "confirmation_invalid" and "changed" in stale.content[0].text
            reused = await client.call_tool("gmail_send_draft", {"draft_id": first, "confirmation_code": code})
            assert category(reused) == "confirmation_invalid"
            invented = await client.call_tool("gmail_send_draft", {"draft_id": first, "confirmation_code": "ABCD-EFGH"})
            assert category(invented) == "confirmation_invalid"
        assert stack.sends() == []


@pytest.mark.parametrize("mode", MODES)
async def test_a_draft_changed_while_the_person_is_asked_is_not_sent(tmp_path: Path, mode: str):
    with write_stack(tmp_path) as stack:
        holder: dict[str, Any] = {}

        async def change_then_accept(_ctx: Any, _params: Any) -> types.ElicitResult:
            # Meanwhile (another client, the person in Gmail, an injected instruction) the draft gets a new recipient.
            await holder["client"].call_tool(
                "gmail_update_draft", {"draft_id": holder["id"], "bcc": ["x@evil.example"]}
            )
            return types.ElicitResult(action="accept", content={"confirm": True})

        async with Client(stack.server(), mode=mode) as plain:
            holder["client"] = plain
            async with Client(stack.server(), mode=mode, elicitation_callback=change_then_accept) as client:
                holder["id"] = await make_draft(client, stack)
                result = await client.call_tool("gmail_send_draft", {"draft_id": holder["id"]})
        assert category(result) == "confirmation_invalid" and "changed while" in result.content[0].text
        assert stack.sends() == []


@pytest.mark.parametrize(
    "fault, expected",
    [
        ({"status": 503}, "HTTP 503"),
        ({"status": 500}, "HTTP 500"),
        ({"reset": True}, "cut off"),
        ({"hang": 0.2}, "cut off"),  # the connection closes without an answer
        ({"hang": 5}, "timed out"),
    ],
)
async def test_a_failed_send_is_never_retried_and_reports_unknown_outcome(tmp_path: Path, fault: dict, expected: str):
    with write_stack(tmp_path, timeout_s=1.0) as stack:
        async with Client(stack.server(), mode="auto") as client:
            draft_id = await make_draft(client, stack)
            code = (await client.call_tool("gmail_send_draft", {"draft_id": draft_id})).structured_content[
                "confirmation_code"
            ]
            stack.emulator.add_fault(path_regex=r"/drafts/send$", count=10, **fault)
            result = await client.call_tool("gmail_send_draft", {"draft_id": draft_id, "confirmation_code": code})
            assert category(result) == "unknown_outcome", result.content[0].text
            assert expected in result.content[0].text and "Sent" in result.meta["gmail-mcp/error"]["hint"]
            again = await client.call_tool("gmail_send_draft", {"draft_id": draft_id, "confirmation_code": code})
            assert category(again) == "confirmation_invalid"  # the code is spent: a repeat needs the person again
        assert len(stack.sends()) == 1
        audit = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text(encoding="utf-8").splitlines()]
        assert [entry["outcome"] for entry in audit if entry["action"] == "drafts.send"] == ["unknown_outcome"]


@pytest.mark.parametrize("fault", [{"status": 503}, {"reset": True}])
async def test_a_failed_draft_creation_is_never_retried(tmp_path: Path, fault: dict):
    with write_stack(tmp_path, timeout_s=1.0) as stack:
        stack.emulator.add_fault(method="POST", path_regex=r"/drafts$", count=10, **fault)
        async with Client(stack.server(), mode="legacy") as client:
            result = await client.call_tool("gmail_create_draft", {"to": ["a@b.example"], "subject": "s", "body": "b"})
        assert category(result) == "unknown_outcome" and "Drafts" in result.meta["gmail-mcp/error"]["hint"]
        creates = [e for e in stack.emulator.requests() if e["method"] == "POST" and e["path"].endswith("/drafts")]
        assert len(creates) == 1


async def test_a_refused_send_keeps_the_persons_yes(tmp_path: Path):
    with write_stack(tmp_path) as stack:
        async with Client(stack.server(), mode="auto") as client:
            draft_id = await make_draft(client, stack)
            code = (await client.call_tool("gmail_send_draft", {"draft_id": draft_id})).structured_content[
                "confirmation_code"
            ]
            stack.emulator.add_fault(path_regex=r"/drafts/send$", status=429, reason="rateLimitExceeded")
            refused = await client.call_tool("gmail_send_draft", {"draft_id": draft_id, "confirmation_code": code})
            assert category(refused) == "rate_limited"  # Gmail refused before acting: safe, and not retried
            sent = await client.call_tool("gmail_send_draft", {"draft_id": draft_id, "confirmation_code": code})
            assert sent.structured_content["status"] == "sent"
        assert [e["status"] for e in stack.sends()] == [429, 200]


async def test_the_hourly_send_limit_holds(tmp_path: Path):
    with write_stack(tmp_path, send_limit=2) as stack:
        async with Client(stack.server(), mode="auto", elicitation_callback=answering("accept")) as client:
            for _ in range(2):
                result = await client.call_tool("gmail_send_draft", {"draft_id": await make_draft(client, stack)})
                assert result.structured_content["status"] == "sent"
            third = await client.call_tool("gmail_send_draft", {"draft_id": await make_draft(client, stack)})
            assert category(third) == "send_limit_reached" and "Nothing was sent" in third.content[0].text
            stack.clock.advance(3601)
            fourth = await client.call_tool("gmail_send_draft", {"draft_id": await make_draft(client, stack)})
            assert fourth.structured_content["status"] == "sent"
        assert len(stack.sends()) == 3


async def test_dry_run_sends_nothing_and_asks_nobody(tmp_path: Path):
    asked: list[str] = []
    with write_stack(tmp_path) as stack:
        async with Client(stack.server(), mode="auto") as client:
            draft_id = await make_draft(client, stack)
        stack.ctx.safety.dry_run = True
        async with Client(stack.server(), mode="auto", elicitation_callback=answering("accept", asked=asked)) as client:
            result = await client.call_tool("gmail_send_draft", {"draft_id": draft_id})
        assert result.structured_content["status"] == "dry_run" and asked == [] and stack.sends() == []


async def test_a_forged_or_replayed_request_state_sends_nothing(tmp_path: Path):
    with write_stack(tmp_path) as stack:
        async with Client(stack.server(), mode="auto") as client:
            draft_id = await make_draft(client, stack)
            session = client.session
            first = await session.call_tool("gmail_send_draft", {"draft_id": draft_id}, allow_input_required=True)
            # No elicitation declared: a code, never a question.
            assert not isinstance(first, types.InputRequiredResult)
        async with Client(stack.server(), mode="auto", elicitation_callback=answering("decline")) as client:
            session = client.session
            asked = await session.call_tool("gmail_send_draft", {"draft_id": draft_id}, allow_input_required=True)
            assert isinstance(asked, types.InputRequiredResult)
            accept = {"confirm_send": types.ElicitResult(action="accept", content={"confirm": True})}
            with pytest.raises(Exception, match="requestState"):
                await session.call_tool(
                    "gmail_send_draft",
                    {"draft_id": draft_id},
                    input_responses=accept,
                    request_state="forged",
                    allow_input_required=True,
                )
            with pytest.raises(Exception, match="requestState"):  # bound to the tool and its arguments
                await session.call_tool(
                    "gmail_send_draft",
                    {"draft_id": draft_id + "x"},
                    input_responses=accept,
                    request_state=asked.request_state,
                    allow_input_required=True,
                )
            sent = await session.call_tool(
                "gmail_send_draft",
                {"draft_id": draft_id},
                input_responses=accept,
                request_state=asked.request_state,
                allow_input_required=True,
            )
            assert sent.structured_content["status"] == "sent"
            replay = await session.call_tool(
                "gmail_send_draft",
                {"draft_id": draft_id},
                input_responses=accept,
                request_state=asked.request_state,
                allow_input_required=True,
            )
            assert category(replay) == "confirmation_invalid"
        assert len(stack.sends()) == 1
