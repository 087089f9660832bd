"""Search, labels and reads as recorded real Gmail behaves, through an MCP session against the emulator.

Evidence, per test: Gmail Help answer 7190 (search operators), amd/gaia #2161 (unparsed dates are searched as
words: count 0), n8n-io/n8n #902 and the GAM-team wiki "Users - Gmail - Messages/Threads" (400 `Invalid label`
for an unknown labelIds entry), Nango integration-templates tests/list-labels.test.json (2026, Workspace:
labels.list visibility fields).
"""

from __future__ import annotations

from collections.abc import Iterator
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
from mcp.client import Client

from server.emulator import Emulator, start_emulator
from server.protocol.dispatch import build_server
from server.tests.support.mailbox_stack import CHANGES, changing_mailbox
from server.tests.support.reading import api_calls, emulator_context

pytestmark = pytest.mark.anyio
SEARCH, GET, LABELS = "gmail_search_messages", "gmail_get_message", "gmail_list_labels"
LIST = ("GET", "/gmail/v1/users/me/labels", None)
MESSAGES = ("GET", "/gmail/v1/users/me/messages", None)


@pytest.fixture
def anyio_backend():
    return "asyncio"


def _write(folder: Path, name: str, subject: str, date: str, labels: str, *, inline_image: bool = False) -> None:
    message = EmailMessage()
    message["From"] = "Nina Park <nina@example.org>"
    message["To"] = "me@example.com"
    message["Subject"] = subject
    message["Date"] = date
    message["Message-ID"] = f"<{name}@example.org>"
    message["X-Gmail-Labels"] = labels
    message.set_content(f"{subject}: nothing else to say.")
    if inline_image:
        message.add_alternative('<p>Look: <img src="cid:pic1"></p>', subtype="html")
        html = message.get_payload()[1]
        html.add_related(b"\x89PNG\r\n\x1a\n" + bytes(64), maintype="image", subtype="png", cid="<pic1>")
    (folder / f"{name}.eml").write_bytes(message.as_bytes())


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Emulator, Any]]:
    folder = tmp_path_factory.mktemp("reality-mailbox")
    _write(folder, "qa", "Q and A session notes", "Wed, 03 Jul 2024 10:00:00 +0000", "Inbox,Q&A (2024)")
    _write(
        folder,
        "pic",
        "Newsletter with a picture",
        "Fri, 05 Jul 2024 10:00:00 +0000",
        "Inbox,Receipts",
        inline_image=True,
    )
    _write(folder, "plain", "Plain words", "Sat, 01 Jun 2024 10:00:00 +0000", "Inbox")
    _write(folder, "prize", "You won a prize", "Thu, 04 Jul 2024 10:00:00 +0000", "Spam")
    with start_emulator(folder) as emulator:
        yield emulator, emulator.write_token(tmp_path_factory.mktemp("reality") / "token.json")


async def call(running: tuple[Emulator, Any], tool: str, arguments: dict[str, Any], client: Client) -> tuple[Any, list]:
    emulator, _ = running
    since = emulator.requests()[-1]["seq"] if emulator.requests() else 0
    result = await client.call_tool(tool, arguments)
    return result, api_calls(emulator.requests(since))


def connect(running: tuple[Emulator, Any]) -> Client:
    emulator, token = running
    return Client(build_server(emulator_context(emulator, token)), mode="legacy")


def subjects(result: Any) -> list[str]:
    return [item.get("subject") for item in result.structured_content["messages"]]


async def test_a_label_with_brackets_is_found_through_label_ids_and_its_label_term_is_corrected(running):
    """Issue item 3: `label:Q&A-(2024)` finds nothing (Gmail splits the term at its brackets); labelIds take the
    id and need no escaping. The empty label: search says so and shows Gmail's dashed form, which finds it."""
    async with connect(running) as client:
        by_ids, id_calls = await call(running, SEARCH, {"query": "", "label_ids": ["Q&A (2024)"]}, client)
        dashed, _ = await call(running, SEARCH, {"query": "", "label_ids": ["q-a-2024"]}, client)
        other, _ = await call(running, SEARCH, {"query": "", "label_ids": ["Receipts"]}, client)  # not a cached page
        term, term_calls = await call(running, SEARCH, {"query": "label:Q&A-(2024)"}, client)
        corrected = term.structured_content["corrected_query"]
        fixed, _ = await call(running, SEARCH, {"query": corrected}, client)
    assert subjects(by_ids) == subjects(dashed) == ["Q and A session notes"] and id_calls[:2] == [LIST, MESSAGES]
    assert subjects(other) == ["Newsletter with a picture"]
    assert term.is_error is False and subjects(term) == []
    assert corrected == "label:Q-A-2024" and "label_ids" in term.structured_content["hint"]
    assert term_calls == [MESSAGES]  # the label list is kept from the first call
    assert subjects(fixed) == ["Q and A session notes"]


async def test_an_unparsed_date_is_named_with_its_corrected_form(running):
    """amd/gaia #2161: Gmail searches `after:2024-07-01` as words and finds nothing, it never says `Invalid
    query`; answer 7190: YYYY/MM/DD is the form it reads. The emulator does the same, the hint corrects it."""
    async with connect(running) as client:
        wrong, calls = await call(running, SEARCH, {"query": "after:2024-07-01"}, client)
        right, _ = await call(running, SEARCH, {"query": wrong.structured_content["corrected_query"]}, client)
        week, _ = await call(running, SEARCH, {"query": "newer_than:2w from:nina"}, client)
    assert wrong.is_error is False and subjects(wrong) == [] and calls == [MESSAGES]
    assert "YYYY/MM/DD" in wrong.structured_content["hint"] and "`after:2024/07/01`" in wrong.content[0].text
    assert subjects(right) == ["Newsletter with a picture", "Q and A session notes"]  # not spam, not June
    assert week.structured_content["corrected_query"] == "newer_than:14d from:nina"


async def test_documented_operators_are_never_refused_and_undocumented_values_are_corrected(running):
    """Answer 7190 lists has:yellow-star, has:blue-info, is:muted, in:snoozed, category:purchases: Gmail takes
    them (the emulator answered 400 before). `is:archived` is not among them: Gmail searches it as words."""
    async with connect(running) as client:
        for query in ("has:yellow-star", "has:blue-info", "is:muted", "in:snoozed", "category:purchases"):
            result, _ = await call(running, SEARCH, {"query": query}, client)
            assert result.is_error is False and subjects(result) == [], query
            assert "corrected_query" not in result.structured_content, query
        archived, _ = await call(running, SEARCH, {"query": "is:archived"}, client)
        unbalanced, _ = await call(running, SEARCH, {"query": '"weekly plan'}, client)
    assert archived.structured_content["corrected_query"] == "in:archive"
    assert unbalanced.is_error is False and "never closed" in unbalanced.structured_content["hint"]


async def test_a_misspelled_label_term_gets_the_closest_names(running):
    """Issue item 3: a misspelled `label:` in query gets the same "did you mean" as label_ids does."""
    async with connect(running) as client:
        result, calls = await call(running, SEARCH, {"query": "label:recepts"}, client)
        known, known_calls = await call(running, SEARCH, {"query": "label:receipts subject:nothing-like-it"}, client)
    assert result.is_error is False and "Did you mean 'Receipts'?" in result.structured_content["hint"]
    assert result.structured_content["corrected_query"] == "label:Receipts"
    assert calls == [MESSAGES, LIST]  # the list is read only for an empty search that names a label
    assert "corrected_query" not in known.structured_content and known_calls == [MESSAGES]


async def test_inline_images_count_as_attachments_and_spam_shows_only_where_asked(running):
    """Issue item 10: has:attachment counts inline images; SPAM/TRASH only with in:spam/in:trash/in:anywhere,
    includeSpamTrash or labelIds."""
    async with connect(running) as client:
        attached, _ = await call(running, SEARCH, {"query": "has:attachment"}, client)
        hidden, _ = await call(running, SEARCH, {"query": "prize"}, client)
        asked, _ = await call(running, SEARCH, {"query": "prize in:spam"}, client)
        anywhere, _ = await call(running, SEARCH, {"query": "prize in:anywhere"}, client)
        by_label, _ = await call(running, SEARCH, {"query": "prize", "label_ids": ["SPAM"]}, client)
    assert subjects(attached) == ["Newsletter with a picture"]
    assert subjects(hidden) == [] and subjects(asked) == subjects(anywhere) == subjects(by_label) == ["You won a prize"]


async def test_a_read_message_shows_user_labels_by_name(running):
    """Issue item 11: user labels by name, never bare Label_ ids; the label list read once per cache period."""
    emulator, _ = running
    message_id = emulator.store.find("Newsletter with a picture")[0].id
    async with connect(running) as client:
        first, first_calls = await call(running, GET, {"message_id": message_id}, client)
        again, again_calls = await call(running, GET, {"message_id": message_id, "format": "metadata"}, client)
    content = first.structured_content
    assert "Receipts" in content["labels"] and "INBOX" in content["labels"]
    assert emulator.store.label_id("Receipts") in content["label_ids"]
    assert "Label_" not in first.content[0].text.split("\n")[0] and "Receipts" in first.content[0].text
    assert first_calls == [("GET", f"/gmail/v1/users/me/messages/{message_id}", None), LIST]
    assert again.structured_content["labels"] == content["labels"] and LIST not in again_calls


async def test_labels_list_hidden_means_what_a_person_calls_hidden(running):
    """Nango tests/list-labels.test.json (2026): TRASH, SPAM, IMPORTANT, CHAT and the categories carry
    labelHide, yet Gmail shows them; `hidden` is kept for user labels a person hid."""
    async with connect(running) as client:
        result, _ = await call(running, LABELS, {"counts": False}, client)
    assert not [item["id"] for item in result.structured_content["labels"] if item.get("hidden")]
    assert "(hidden)" not in result.content[0].text


async def test_changes_take_a_label_name_and_show_user_labels_by_name(tmp_path):
    """Issue item 3 and 11: gmail_changes_since accepts a label name as search does, and names user labels."""
    async with changing_mailbox(tmp_path) as stack:
        checkpoint = (await stack.call(CHANGES, {}))[0].structured_content["checkpoint"]
        kids = stack.emulator.store.label_id("Family/Kids")
        arrived = stack.emulator.deliver(**{"from": "a@example.org", "subject": "school trip"}, labelIds=[kids])
        stack.emulator.deliver(**{"from": "b@example.org", "subject": "elsewhere"})
        result, _ = await stack.call(CHANGES, {"checkpoint": checkpoint, "label": "family/kids"})
        unknown, calls = await stack.call(CHANGES, {"checkpoint": checkpoint, "label": "Famly/Kids"}, ok=False)
    (item,) = result.structured_content["messages"]
    assert item["id"] == arrived["id"] and item["labels"] == ["Family/Kids"] and item["label_ids"] == [kids]
    error = unknown.meta["gmail-mcp/error"]
    assert (
        unknown.is_error
        and "Did you mean 'Family/Kids'" in error["hint"]
        and [c["path"] for c in calls] == ["/gmail/v1/users/me/labels"]
    )


async def test_cached_searches_tell_label_ids_apart_and_follow_label_changes(tmp_path):
    """labelIds are part of a cached page's key, and a label change since makes a labelIds search run again (as a
    `label:` term did), so the cache never answers one label's page for another or a stale one."""
    async with changing_mailbox(tmp_path) as stack:
        kids, _ = await stack.call(SEARCH, {"query": "", "label_ids": ["Family/Kids"], "max_results": 50})
        phoenix, _ = await stack.call(SEARCH, {"query": "", "label_ids": ["Project Phoenix"], "max_results": 50})
        outsider = next(
            m
            for m in stack.emulator.store.messages
            if m.id not in {i["id"] for i in kids.structured_content["messages"]} and "INBOX" in m.label_ids
        )
        stack.emulator.modify(outsider.id, add=[stack.emulator.store.label_id("Family/Kids")])
        again, requests = await stack.call(SEARCH, {"query": "", "label_ids": ["Family/Kids"], "max_results": 50})
    kid_ids = [item["id"] for item in kids.structured_content["messages"]]
    assert kid_ids and set(kid_ids).isdisjoint(item["id"] for item in phoenix.structured_content["messages"])
    assert [item["id"] for item in again.structured_content["messages"]].count(outsider.id) == 1
    assert any(entry["path"] == "/gmail/v1/users/me/messages" for entry in requests)  # ran again, not cached
