"""`gmail_get_thread` through a real MCP client session (in-process, both protocol eras) and the real Google client
stack against the emulator: the demo mailbox's threads, and a generated 100-message thread.

Request counts come from the emulator's request log; every structured result is checked by the client against
the tool's outputSchema.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import pytest
from mcp.client import Client

from server import demo
from server.emulator import Emulator, start_emulator
from server.protocol.dispatch import build_server
from server.tests.support.fences import without_fence_values
from server.tests.support.reading import OWNER, api_calls, emulator_context, write_long_thread

pytestmark = pytest.mark.anyio
THREAD, GET = "gmail_get_thread", "gmail_get_message"
THREAD_PATH = re.compile(r"^/gmail/v1/users/me/threads/[0-9a-f]+$")
PROFILE_PATH = "/gmail/v1/users/me/profile"


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture(scope="module")
def demo_emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Emulator, Any]]:
    with start_emulator(demo.DEMO_MAILBOX, rebase_dates=True) as emulator:
        yield emulator, emulator.write_token(tmp_path_factory.mktemp("thread") / "token.json")


@pytest.fixture(scope="module")
def long_emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Emulator, Any]]:
    root = tmp_path_factory.mktemp("long")
    with start_emulator(write_long_thread(root / "mail", 100), email=OWNER) as emulator:
        yield emulator, emulator.write_token(root / "token.json")


def connect(running: tuple[Emulator, Any], mode: str = "legacy", **fields: Any) -> Client:
    emulator, token = running
    return Client(build_server(emulator_context(emulator, token, **fields)), mode=mode)


async def call(client: Client, emulator: Emulator, tool: str, arguments: dict[str, Any]) -> tuple[Any, list]:
    since = emulator.requests()[-1]["seq"] if emulator.requests() else 0
    result = await client.call_tool(tool, arguments)
    assert result.is_error is False, result.content[0].text
    return result, api_calls(emulator.requests(since))


def offsite(emulator: Emulator) -> list:
    return [m for m in emulator.store.messages if m.subject.endswith(demo.NOTABLE["offsite-1"].subject)][::-1]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_thread_is_one_request_in_date_order_with_each_message_s_own_words(demo_emulator, mode):
    emulator, _ = demo_emulator
    messages = offsite(emulator)
    async with connect(demo_emulator, mode) as client:
        first, first_calls = await call(client, emulator, THREAD, {"thread_id": messages[0].thread_id})
        again, calls = await call(client, emulator, THREAD, {"thread_id": messages[0].thread_id})
    # The account's address (for reply-all) is asked once per session, and the label list (to show the person's
    # labels by name, never as Label_ ids) once per cache period; then a thread of 8 is one request.
    assert [path for _, path, _ in first_calls] == [first_calls[0][1], "/gmail/v1/users/me/labels", PROFILE_PATH]
    assert len(calls) == 1 and THREAD_PATH.match(calls[0][1]) and calls[0][2] is None
    data = again.structured_content
    assert data["message_count"] == demo.OFFSITE_THREAD_LENGTH == len(data["messages"])
    assert [m["id"] for m in data["messages"]] == [m.id for m in messages]
    assert [m["position"] for m in data["messages"]] == list(range(1, 9))
    dates = [m["date"] for m in data["messages"]]
    assert "SENT" in data["messages"][2]["labels"]  # the account's own reply is part of the conversation
    shown = {label for item in data["messages"] for label in item["labels"]}
    assert not any(label.startswith("Label_") for label in shown), shown  # the person's labels by name
    user_labels = (
        shown
        - {"INBOX", "UNREAD", "SENT", "IMPORTANT", "STARRED"}
        - {label for label in shown if label.startswith("CATEGORY_")}
    )
    assert user_labels and all(f"label: {label}" in again.content[0].text for label in user_labels)
    for item in data["messages"]:
        body = item["body_text"]
        assert not re.search(r"^\s*>", body, re.M), body  # no quoted lines
        assert "wrote:" not in body and "a écrit" not in body and "\nSent: " not in body
    assert "Lisbon Rio" not in "".join(m["body_text"] for m in data["messages"][1:])  # only in the spreadsheet
    instants = [datetime.fromisoformat(date) for date in dates]
    assert instants == sorted(instants) and len(set(instants)) == 8
    text = again.content[0].text
    # The subject is the sender's text: it comes inside the fenced region, not in the head line.
    assert text.startswith(f"Thread {messages[0].thread_id}: 8 message(s)")
    assert demo.NOTABLE["offsite-1"].subject in text
    assert "offsite-budget.xlsx (part 1" in text
    assert without_fence_values(first.content[0].text) == without_fence_values(text)


def _sentences(text: str) -> set[str]:
    pieces = re.split(r"(?<=[.!?。！？])\s+|\n+", text)
    return {" ".join(piece.split()).casefold() for piece in pieces if len(piece.strip()) >= 25}


async def test_no_quoted_sentence_of_any_demo_thread_appears_twice(demo_emulator):
    emulator, _ = demo_emulator
    threads = {tid: items for tid, items in emulator.store.threads.items() if len(items) > 1}
    assert len(threads) >= 9
    async with connect(demo_emulator) as client:
        for thread_id in threads:
            result, _ = await call(client, emulator, THREAD, {"thread_id": thread_id})
            seen: dict[str, int] = {}
            for item in result.structured_content["messages"]:
                for sentence in _sentences(item.get("body_text", "")):
                    assert sentence not in seen, (thread_id, item["position"], seen.get(sentence), sentence)
                    seen[sentence] = item["position"]


async def test_reply_context_answers_the_newest_message_without_the_account(demo_emulator):
    emulator, _ = demo_emulator
    messages = offsite(emulator)
    async with connect(demo_emulator) as client:
        result, _ = await call(client, emulator, THREAD, {"thread_id": messages[0].thread_id})
        single, _ = await call(client, emulator, GET, {"message_id": messages[-1].id, "format": "metadata"})
    reply = result.structured_content["reply"]
    assert reply["reply_to_id"] == messages[-1].id and reply["last_from_me"] is False
    assert reply["last_sender"] == "François Dubois <francois.dubois@fr.example.com>"
    assert reply["to"] == ["François Dubois <francois.dubois@fr.example.com>"]
    assert reply["cc"] == ["Ana Souza <ana.souza@example.org>", "Priya Natarajan <priya.natarajan@example.com>"]
    assert demo.DEMO_OWNER not in " ".join(reply["to"] + reply["cc"])
    assert reply["subject"] == demo.NOTABLE["offsite-8"].subject  # "Re: " once
    assert reply["in_reply_to"] == demo.NOTABLE["offsite-8"].message_id
    chain = reply["references"].split()
    assert chain[0] == demo.NOTABLE["offsite-1"].message_id and chain[-1] == reply["in_reply_to"] and len(chain) == 8
    assert result.structured_content["account_address"] == demo.DEMO_OWNER
    # gmail_get_message gives the same two headers for the message itself.
    assert single.structured_content["message_id_header"] == reply["in_reply_to"]
    assert single.structured_content["references"].split() == chain[:-1]
    assert "In-Reply-To: " + reply["in_reply_to"] in result.content[0].text


async def test_a_reply_to_one_s_own_last_message_goes_to_its_recipients(long_emulator):
    emulator, _ = long_emulator
    thread_id = next(iter(emulator.store.threads))
    async with connect(long_emulator) as client:
        result, _ = await call(client, emulator, THREAD, {"thread_id": thread_id, "message_range": "98-100"})
    reply = result.structured_content["reply"]
    assert reply["last_from_me"] is False and reply["to"] == ["Ann <ann@example.com>"]  # message 100 is Ann's
    assert reply["cc"] == ["Bob <bob@example.com>"] and reply["references"].split()[-1] == "<long-99@example.com>"
    async with connect(long_emulator) as client:
        mine, _ = await call(client, emulator, THREAD, {"thread_id": thread_id, "message_range": "97-99"})
    assert mine.structured_content["reply"]["reply_to_id"] == reply["reply_to_id"]  # the newest, whatever the range


async def test_a_cut_body_names_the_get_message_call_that_reads_on(demo_emulator):
    emulator, _ = demo_emulator
    messages = offsite(emulator)
    async with connect(demo_emulator) as client:
        result, _ = await call(
            client, emulator, THREAD, {"thread_id": messages[0].thread_id, "max_body_chars_per_message": 200}
        )
        first = result.structured_content["messages"][0]
        assert first["next_offset"] <= 200 and first["body_chars"] > 200
        assert f'message_id="{first["id"]}", offset={first["next_offset"]}, strip_quoted=true' in result.content[0].text
        rest, _ = await call(
            client, emulator, GET, {"message_id": first["id"], "offset": first["next_offset"], "strip_quoted": True}
        )
    whole = first["body_text"] + rest.structured_content["body_text"]
    assert whole.startswith(first["body_text"]) and "What would you like on the agenda?" in whole


@pytest.mark.slow  # a 100-message thread: the slow tier
async def test_a_100_message_thread_stays_under_the_bound_and_pages_with_message_range(long_emulator):
    emulator, _ = long_emulator
    thread_id = next(iter(emulator.store.threads))
    bound = 20_000
    async with connect(long_emulator, thread_max_chars=bound) as client:
        result, calls = await call(client, emulator, THREAD, {"thread_id": thread_id})
        data = result.structured_content
        assert data["message_count"] == 100 and len(result.content[0].text) <= bound + 2_000
        assert len([c for c in calls if THREAD_PATH.match(c[1])]) == 1
        shown = {m["position"] for m in data["messages"] if m.get("body_text")}
        assert 100 in shown and 1 not in shown  # the newest get their text first
        note = next(note for note in data["notes"] if "message_range=" in note)
        wanted = re.search(r'message_range="(\d+-\d+)"', note).group(1)
        covered = set(shown)
        while wanted:
            page, calls = await call(client, emulator, THREAD, {"thread_id": thread_id, "message_range": wanted})
            assert len(page.content[0].text) <= bound + 2_000 and len(calls) == 1
            covered |= {m["position"] for m in page.structured_content["messages"] if m.get("body_text")}
            notes = [n for n in page.structured_content["notes"] if "message_range=" in n]
            wanted = re.search(r'message_range="(\d+-\d+)"', notes[0]).group(1) if notes else ""
    assert covered == set(range(1, 101))


async def test_own_words_only_each_line_of_the_long_thread_appears_once(long_emulator):
    emulator, _ = long_emulator
    thread_id = next(iter(emulator.store.threads))
    async with connect(long_emulator) as client:
        result, _ = await call(client, emulator, THREAD, {"thread_id": thread_id, "message_range": "40-45"})
    bodies = [m["body_text"] for m in result.structured_content["messages"]]
    assert [m["position"] for m in result.structured_content["messages"]] == [40, 41, 42, 43, 44, 45]
    assert all(
        body.splitlines()[0].startswith(f"Message {n} line 0") for n, body in zip(range(39, 45), bodies, strict=True)
    )
    assert all(len(body.splitlines()) == 30 for body in bodies)


async def test_metadata_format_lists_who_and_when_with_snippets(demo_emulator):
    emulator, _ = demo_emulator
    messages = offsite(emulator)
    async with connect(demo_emulator) as client:
        result, _ = await call(client, emulator, THREAD, {"thread_id": messages[0].thread_id, "format": "metadata"})
    entry = next(e for e in reversed(emulator.requests()) if THREAD_PATH.match(e["path"]))
    assert "format=metadata" in entry["query"] and "metadataHeaders=References" in entry["query"]
    items = result.structured_content["messages"]
    assert all("body_text" not in item and item["snippet"] for item in items)
    assert result.structured_content["reply"]["in_reply_to"] == demo.NOTABLE["offsite-8"].message_id
    assert "Snippet: " in result.content[0].text


async def test_range_past_the_end_and_unknown_threads_are_actionable_errors(demo_emulator):
    emulator, _ = demo_emulator
    messages = offsite(emulator)
    async with connect(demo_emulator) as client:
        past = await client.call_tool(THREAD, {"thread_id": messages[0].thread_id, "message_range": "20-"})
        backwards = await client.call_tool(THREAD, {"thread_id": messages[0].thread_id, "message_range": "5-3"})
        missing = await client.call_tool(THREAD, {"thread_id": "0123456789abcdef"})
    assert past.is_error and "1-8" in past.content[0].text
    assert backwards.is_error and "message_range" in backwards.content[0].text
    error = missing.meta["gmail-mcp/error"]
    assert missing.is_error and error["category"] == "not_found" and "thread" in error["message"]
    assert "thread_id" in error["hint"]


async def test_a_profile_failure_leaves_the_thread_readable(demo_emulator):
    emulator, _ = demo_emulator
    messages = offsite(emulator)
    emulator.add_fault(path_regex="/profile$", status=404, count=1)
    try:
        async with connect(demo_emulator) as client:
            result, _ = await call(client, emulator, THREAD, {"thread_id": messages[0].thread_id})
    finally:
        emulator.reset()
    assert any("address could not be read" in note for note in result.structured_content["notes"])
    assert len(result.structured_content["messages"]) == 8
