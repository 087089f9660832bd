"""The `filters` tools through real MCP client sessions (both protocol eras) against the emulator's settings.filters.

Emulator evidence (see server/emulator/filters.py): Nango integration-templates tests/create-filter.test.json,
list-filters.test.json, delete-filter.test.json (2026, Workspace): list under `filter`, create answers the filter
with its id, delete answers 204; 400 "Filter already exists" for an identical filter (elie222/inbox-zero
utils/gmail/filter.ts), 400 "Invalid label: <id>" (GAM-team/GAM #365); create/delete need gmail.settings.basic
only (gmail.v1.json). A filter is created only after the person's yes; what reached "Gmail" is read from the
emulator's request log and its filter table.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp.client import Client

from server import scopes
from server.errors import InvalidInputError
from server.runtime.filter_record import FilterRecord
from server.tests.support.writes import WriteStack, write_stack

pytestmark = pytest.mark.anyio
MODES = ["legacy", "auto"]
FILTERS_PATH = "/gmail/v1/users/me/settings/filters"
SKIP_CAFE = {"from_address": "news@cafe.example", "skip_inbox": True}


@pytest.fixture
def anyio_backend():
    return "asyncio"


def filter_stack(root: Path) -> Any:
    return write_stack(root, scopes=("readonly", "settings"))


def creates(stack: WriteStack) -> list[dict[str, Any]]:
    return [e for e in stack.emulator.requests() if e["method"] == "POST" and e["path"] == FILTERS_PATH]


def table(stack: WriteStack) -> dict[str, dict[str, Any]]:
    return stack.emulator.app.api.filters.filters


def category(result: Any) -> str | None:
    return result.meta["gmail-mcp/error"]["category"] if result.is_error else None


def answering(action: str, confirm: bool = True, asked: list[Any] | None = None) -> Any:
    async def callback(_ctx: Any, params: Any) -> types.ElicitResult:
        if asked is not None:
            asked.append(params)
        return types.ElicitResult(action=action, content={"confirm": confirm} if action == "accept" else None)

    return callback


@pytest.mark.parametrize("mode", MODES)
async def test_create_asks_first_creates_nothing_without_a_yes_and_once_with_the_code(tmp_path: Path, mode: str):
    with filter_stack(tmp_path) as stack:
        async with Client(stack.server(frozenset({"filters"})), mode=mode) as client:
            first = await client.call_tool("gmail_create_filter", SKIP_CAFE)
            data = first.structured_content
            assert data["status"] == "confirmation_required" and data["created"] is False
            assert creates(stack) == [] and table(stack) == {}
            assert "NO FILTER CREATED" in first.content[0].text and "skip the inbox" in first.content[0].text
            code = data["confirmation_code"]
            second = await client.call_tool("gmail_create_filter", {**SKIP_CAFE, "confirmation_code": code})
            assert second.structured_content["status"] == "created", second.content[0].text
            again = await client.call_tool("gmail_create_filter", {**SKIP_CAFE, "confirmation_code": code})
            listed = await client.call_tool("gmail_list_filters", {})
    [made] = table(stack).values()
    assert made["criteria"] == {"from": "news@cafe.example"} and made["action"] == {"removeLabelIds": ["INBOX"]}
    assert len(creates(stack)) == 1
    assert again.structured_content["status"] == "already_exists"  # nothing twice, code or not
    [shown] = listed.structured_content["filters"]
    assert shown["id"] == made["id"] and shown["created_here"] is True and shown["remove_labels"] == ["INBOX"]


async def test_a_code_for_other_criteria_creates_nothing(tmp_path: Path):
    with filter_stack(tmp_path) as stack:
        async with Client(stack.server(frozenset({"filters"})), mode="auto") as client:
            code = (await client.call_tool("gmail_create_filter", SKIP_CAFE)).structured_content["confirmation_code"]
            other = {"from_address": "boss@example.com", "skip_inbox": True, "confirmation_code": code}
            result = await client.call_tool("gmail_create_filter", other)
    assert category(result) == "confirmation_invalid" and "No filter was changed" in result.content[0].text
    assert creates(stack) == []


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("action, confirm", [("accept", True), ("decline", True), ("cancel", True), ("accept", False)])
async def test_elicitation_creates_only_on_an_explicit_yes(tmp_path: Path, mode: str, action: str, confirm: bool):
    asked: list[Any] = []
    with filter_stack(tmp_path) as stack:
        callback = answering(action, confirm, asked)
        async with Client(stack.server(frozenset({"filters"})), mode=mode, elicitation_callback=callback) as client:
            result = await client.call_tool("gmail_create_filter", SKIP_CAFE)
    yes = action == "accept" and confirm
    assert result.structured_content["status"] == (
        "created" if yes else "cancelled" if action == "cancel" else "declined"
    )
    assert len(table(stack)) == (1 if yes else 0) and len(creates(stack)) == (1 if yes else 0)
    [question] = asked
    assert "news@cafe.example" in question.message and "skip the inbox" in question.message
    assert question.requested_schema["properties"]["confirm"]["title"] == "Create this filter"


async def test_forwarding_is_refused_and_nothing_reaches_gmail(tmp_path: Path):
    with filter_stack(tmp_path) as stack:
        async with Client(stack.server(frozenset({"filters"})), mode="auto") as client:
            result = await client.call_tool("gmail_create_filter", {**SKIP_CAFE, "forward_to": "x@evil.example"})
    assert category(result) == "invalid_input" and "never forward" in result.content[0].text
    assert creates(stack) == []


async def test_delete_own_filter_at_once_and_the_persons_own_only_after_a_yes(tmp_path: Path):
    with filter_stack(tmp_path) as stack:
        theirs = stack.ctx.gmail.create_filter({"subject": "invoice"}, {"addLabelIds": ["STARRED"]})  # made in Gmail
        async with Client(stack.server(frozenset({"filters"})), mode="auto") as client:
            code = (await client.call_tool("gmail_create_filter", SKIP_CAFE)).structured_content["confirmation_code"]
            mine = await client.call_tool("gmail_create_filter", {**SKIP_CAFE, "confirmation_code": code})
            mine_id = mine.structured_content["filter"]["id"]
            gone = await client.call_tool("gmail_delete_filter", {"filter_id": mine_id})
            asked = await client.call_tool("gmail_delete_filter", {"filter_id": theirs["id"]})
            assert theirs["id"] in table(stack)  # asked, not deleted
            code = asked.structured_content["confirmation_code"]
            done = await client.call_tool("gmail_delete_filter", {"filter_id": theirs["id"], "confirmation_code": code})
            missing = await client.call_tool("gmail_delete_filter", {"filter_id": theirs["id"]})
    assert gone.structured_content["status"] == "deleted" and mine_id not in stack.ctx.safety.filters.ids()
    assert asked.structured_content["status"] == "confirmation_required" and "NOT DELETED" in asked.content[0].text
    assert done.structured_content["status"] == "deleted" and table(stack) == {}
    assert category(missing) == "not_found" and "gmail_list_filters" in missing.content[0].text


async def test_filter_tools_are_listed_only_when_enabled_and_granted(tmp_path: Path):
    with filter_stack(tmp_path) as stack:
        async with Client(stack.server(), mode="auto") as client:  # filters not enabled
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert not names & {"gmail_list_filters", "gmail_create_filter", "gmail_delete_filter"}
        stack.granted = frozenset({scopes.READONLY})
        async with Client(stack.server(frozenset({"filters"})), mode="auto") as client:  # reading only
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert "gmail_list_filters" in names and not names & {"gmail_create_filter", "gmail_delete_filter"}
        stack.granted = frozenset({scopes.READONLY, scopes.SETTINGS_BASIC})
        async with Client(stack.server(frozenset({"filters"})), mode="auto") as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert {"gmail_list_filters", "gmail_create_filter", "gmail_delete_filter"} <= names


def test_gmail_refuses_a_duplicate_and_an_unknown_label_and_a_repeat_finds_the_first(tmp_path: Path):
    with filter_stack(tmp_path) as stack:
        client = stack.ctx.gmail
        made = client.create_filter({"from": "a@example.com"}, {"removeLabelIds": ["INBOX"]})
        with pytest.raises(InvalidInputError, match="Filter already exists") as duplicate:
            client.create_filter({"from": "a@example.com"}, {"removeLabelIds": ["INBOX"]})
        assert made["id"] in duplicate.value.hint
        with pytest.raises(InvalidInputError, match="Invalid label: Label_999"):
            client.create_filter({"from": "b@example.com"}, {"addLabelIds": ["Label_999"]})
        # A retry (after a 503) that meets "Filter already exists" returns the identical filter instead of failing:
        # what a first attempt whose answer was lost leaves behind.
        stack.emulator.add_fault(method="POST", path_regex=f"^{FILTERS_PATH}$", status=503)
        again = client.create_filter({"from": "a@example.com"}, {"removeLabelIds": ["INBOX"]})
        assert again["id"] == made["id"] and len(table(stack)) == 1 and len(creates(stack)) == 5


def test_the_record_of_created_filters_outlives_the_process(tmp_path: Path):
    path = tmp_path / "tokens" / "work.filters.json"
    FilterRecord(path).add("ANe1BmX")
    assert FilterRecord(path).ids() == {"ANe1BmX"} and oct(path.stat().st_mode & 0o777) == "0o600"
    FilterRecord(path).discard("ANe1BmX")
    assert FilterRecord(path).ids() == frozenset()


def test_the_settings_scope_name_and_the_missing_grant_message():
    from server.app.toolset_choice import missing_scope_messages
    from server.auth_cli import requested_scopes
    from server.toolsets import ALL_TOOLSETS

    assert requested_scopes("settings") == [scopes.READONLY, scopes.SETTINGS_BASIC]
    (message,) = missing_scope_messages(frozenset({"filters"}), ALL_TOOLSETS, frozenset({scopes.MODIFY}))
    assert "'filters'" in message and "--scopes readonly,settings" in message  # gmail.modify cannot change filters


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("action", ["accept", "decline"])
async def test_the_persons_own_filter_goes_only_on_an_elicited_yes(tmp_path: Path, mode: str, action: str):
    asked: list[Any] = []
    with filter_stack(tmp_path) as stack:
        theirs = stack.ctx.gmail.create_filter({"subject": "invoice"}, {"addLabelIds": ["STARRED"]})
        callback = answering(action, asked=asked)
        async with Client(stack.server(frozenset({"filters"})), mode=mode, elicitation_callback=callback) as client:
            result = await client.call_tool("gmail_delete_filter", {"filter_id": theirs["id"]})
    assert result.structured_content["status"] == ("deleted" if action == "accept" else "declined")
    assert (theirs["id"] in table(stack)) is (action != "accept")
    [question] = asked
    assert "invoice" in question.message and question.requested_schema["properties"]["confirm"]["title"] == (
        "Delete this filter"
    )
