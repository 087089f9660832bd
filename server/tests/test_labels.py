"""`gmail_list_labels`, and label names or ids in the search tool's `label_ids`, through an MCP session against
the emulator serving the demo mailbox. Request counts are pinned from the emulator's request log."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from mcp.client import Client

from server import demo
from server.emulator import Emulator, start_emulator
from server.gmail.label_match import close_matches, find_label, label_key
from server.protocol.dispatch import build_server
from server.tests.support.reading import api_calls, emulator_context

pytestmark = pytest.mark.anyio
LABELS, SEARCH = "gmail_list_labels", "gmail_search_messages"
LIST = ("GET", "/gmail/v1/users/me/labels", None)
MESSAGES = ("GET", "/gmail/v1/users/me/messages", None)


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Emulator, Any]]:
    with start_emulator(demo.DEMO_MAILBOX, rebase_dates=True) as emulator:
        yield emulator, emulator.write_token(tmp_path_factory.mktemp("labels") / "token.json")


def connect(running: tuple[Emulator, Any], mode: str = "legacy") -> Client:
    emulator, token = running
    return Client(build_server(emulator_context(emulator, token)), mode=mode)


async def call(client: Client, emulator: Emulator, tool: str, arguments: dict[str, Any]) -> tuple[Any, list]:
    since = emulator.requests()[-1]["seq"] if emulator.requests() else 0
    result = await client.call_tool(tool, arguments)
    return result, api_calls(emulator.requests(since))


def batch(parts: int) -> tuple[str, str, int]:
    return ("POST", "/batch/gmail/v1", parts)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_every_label_with_counts_is_a_list_and_one_batch(running, mode):
    emulator, _ = running
    async with connect(running, mode) as client:
        result, calls = await call(client, emulator, LABELS, {})
    assert result.is_error is False
    labels = {item["name"]: item for item in result.structured_content["labels"]}
    assert calls == [LIST, batch(len(emulator.store.labels))]
    assert result.structured_content["counted"] == len(labels) == len(emulator.store.labels)
    inbox = [m for m in emulator.store.messages if "INBOX" in m.label_ids]
    assert labels["INBOX"]["messages_total"] == len(inbox) == demo.LABEL_COUNTS["Inbox"]
    assert labels["INBOX"]["messages_unread"] == sum("UNREAD" in m.label_ids for m in inbox)
    kids = labels["Family/Kids"]  # nested, as Gmail writes it
    assert kids["type"] == "user" and kids["id"].startswith("Label_")
    assert kids["messages_total"] == demo.LABEL_COUNTS["Family/Kids"]
    text = result.content[0].text
    assert f"- INBOX: {len(inbox)} messages" in text and f"- Family/Kids | {kids['id']}: 3 messages" in text
    assert text.index("System labels:") < text.index("User labels")


async def test_asking_for_some_labels_counts_only_those_and_without_counts_it_is_one_request(running):
    emulator, _ = running
    async with connect(running) as client:
        some, some_calls = await call(client, emulator, LABELS, {"labels": ["project phoenix", "INBOX"]})
        bare, bare_calls = await call(client, emulator, LABELS, {"counts": False})
    assert [item["name"] for item in some.structured_content["labels"]] == ["Project Phoenix", "INBOX"]
    assert some_calls == [LIST, batch(2)]
    assert some.structured_content["labels"][0]["messages_total"] == demo.LABEL_COUNTS["Project Phoenix"]
    assert bare_calls == [LIST] and bare.structured_content["counted"] == 0


async def test_an_unknown_label_name_gets_the_closest_names(running):
    emulator, _ = running
    async with connect(running) as client:
        result, _ = await call(client, emulator, LABELS, {"labels": ["Projct Phoenix"]})
    error = result.meta["gmail-mcp/error"]
    assert result.is_error and error["category"] == "invalid_input" and "'Projct Phoenix'" in error["message"]
    assert "Did you mean 'Project Phoenix'?" in error["hint"]


async def test_search_takes_a_label_name_or_id(running):
    emulator, _ = running
    kids_id = emulator.store.label_id("Family/Kids")
    async with connect(running) as client:
        by_name, name_calls = await call(client, emulator, SEARCH, {"query": "", "label_ids": ["Family/Kids"]})
        by_id, id_calls = await call(client, emulator, SEARCH, {"query": "", "label_ids": [kids_id]})
        again, again_calls = await call(client, emulator, SEARCH, {"query": "", "label_ids": [kids_id]})
    ids = [m["id"] for m in by_name.structured_content["messages"]]
    assert len(ids) == demo.LABEL_COUNTS["Family/Kids"]
    assert (
        [m["id"] for m in by_id.structured_content["messages"]]
        == ids
        == [m["id"] for m in again.structured_content["messages"]]
    )
    assert by_id.structured_content["query"] == "" and by_id.structured_content["labels"] == [kids_id]
    assert name_calls == [LIST, MESSAGES, batch(3)]  # a name is looked up once per session (labelIds take ids)...
    assert id_calls == [MESSAGES, batch(3)]  # ...an id goes as it is
    assert again_calls == [MESSAGES, batch(3)]


async def test_an_unknown_label_name_in_a_search_is_answered_with_close_names_not_an_empty_result(running):
    emulator, _ = running
    async with connect(running) as client:
        first, first_calls = await call(client, emulator, SEARCH, {"query": "", "label_ids": ["Famly"]})
        second, second_calls = await call(client, emulator, SEARCH, {"query": "", "label_ids": ["Famly"]})
        known, known_calls = await call(
            client, emulator, SEARCH, {"query": "from:nobody@nowhere.invalid", "label_ids": ["travel"]}
        )
        system, system_calls = await call(
            client, emulator, SEARCH, {"query": "from:nobody@x.invalid", "label_ids": ["SPAM"]}
        )
    for result in (first, second):
        error = result.meta["gmail-mcp/error"]
        assert result.is_error and error["category"] == "invalid_input" and "'Famly'" in error["message"]
        assert "'Family'" in error["hint"] and "gmail_list_labels" in error["hint"]
    assert first_calls == [LIST]  # looked up before searching: labelIds take ids
    assert second_calls == [LIST]  # an unknown name refreshes the kept list (it may be brand new)
    assert known.is_error is False and known.structured_content["result_count"] == 0
    assert known_calls == [MESSAGES]  # a known name, kept list: an empty result is just empty
    assert system.is_error is False and system_calls == [MESSAGES]


async def test_an_unknown_label_id_is_an_error_naming_gmail_list_labels(running):
    """Gmail answers an unknown labelIds entry with 400 `Invalid label: X` (n8n-io/n8n #902; GAM-team wiki
    "Users - Gmail - Messages/Threads"); the emulator does too, and the server turns it into the closest names."""
    emulator, _ = running
    async with connect(running) as client:
        result, calls = await call(client, emulator, SEARCH, {"query": "", "label_ids": ["Label_999"]})
    error = result.meta["gmail-mcp/error"]
    assert result.is_error and error["category"] == "invalid_input" and "Label_999" in error["message"]
    assert "gmail_list_labels" in error["hint"]
    assert calls == [MESSAGES, LIST]  # the id went as it is; Gmail's 400 fetched the list for the hint


def test_label_names_match_as_gmail_compares_them():
    labels = [
        {"id": "INBOX", "name": "INBOX", "type": "system"},
        {"id": "Label_1", "name": "Project Phoenix", "type": "user"},
        {"id": "Label_2", "name": "Family/Kids", "type": "user"},
        {"id": "Label_3", "name": "Family", "type": "user"},
    ]
    assert label_key("Project  phoenix") == label_key("project-phoenix") == "project-phoenix"
    assert label_key("Q&A (2024)") == label_key("q-a-2024") == label_key("Q|A {2024}")  # Gmail's dash spelling
    assert find_label("inbox", labels)["id"] == "INBOX" and find_label("family-kids", labels)["id"] == "Label_2"
    assert find_label("Label_3", labels)["name"] == "Family" and find_label("Familie", labels) is None
    assert close_matches("Kids", labels) == ["Family/Kids"]
    assert close_matches("Famly", labels)[0] == "Family" and close_matches("zzz", labels) == []
