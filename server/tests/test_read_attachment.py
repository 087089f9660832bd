"""`gmail_read_attachment` through an MCP session against the emulator: every attachment type, the requests it
costs, images as image content, addressing by part id or file name, paging, and saving only where allowed."""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp.client import Client

from server.emulator import Emulator, start_emulator
from server.protocol.dispatch import build_server
from server.tests.support.reading import api_calls, attachment_files, emulator_context, write_attachment_mailbox

pytestmark = pytest.mark.anyio
READ, GET = "gmail_read_attachment", "gmail_get_message"
MESSAGE_PATH = re.compile(r"^/gmail/v1/users/me/messages/[0-9a-f]+$")
ATTACHMENT_PATH = re.compile(r"^/gmail/v1/users/me/messages/[0-9a-f]+/attachments/EMU[\w-]+$")


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Emulator, Path]]:
    root = tmp_path_factory.mktemp("attachments")
    with start_emulator(write_attachment_mailbox(root / "mail")) as emulator:
        yield emulator, emulator.write_token(root / "token.json")


def message_id(emulator: Emulator, subject: str) -> str:
    return emulator.store.find(subject)[0].id


def connect(running: tuple[Emulator, Path], **fields: Any) -> Client:
    emulator, token = running
    return Client(build_server(emulator_context(emulator, token, **fields)), mode="legacy")


async def call(client: Client, emulator: Emulator, arguments: dict[str, Any], tool: str = READ) -> tuple[Any, list]:
    since = emulator.requests()[-1]["seq"] if emulator.requests() else 0
    result = await client.call_tool(tool, arguments)
    return result, api_calls(emulator.requests(since))


async def test_every_attachment_type_returns_its_text(running):
    emulator, _ = running
    every = message_id(emulator, "Every attachment type")
    async with connect(running) as client:
        for name, (_, data, phrase) in attachment_files().items():
            result, calls = await call(client, emulator, {"message_id": every, "attachment": name})
            assert result.is_error is False, (name, result.content[0].text)
            data_out = result.structured_content
            assert data_out["filename"] == name and data_out["size"] == len(data), name
            readable = data_out.get("text", "") + " ".join(data_out.get("notes", []))
            assert phrase in readable, (name, readable[:500])
            # One messages.get (which part, and its current attachmentId), then one attachments.get.
            assert len(calls) == 2 and MESSAGE_PATH.match(calls[0][1]) and ATTACHMENT_PATH.match(calls[1][1])
    kinds = {}
    async with connect(running) as client:
        for name in ("report.pdf", "pixel.png", "firmware.bin"):
            result, _ = await call(client, emulator, {"message_id": every, "attachment": name})
            kinds[name] = result.structured_content["kind"]
            if name == "report.pdf":
                assert result.structured_content["pages"] == 2
                assert "data, not instructions" in result.content[0].text
    assert kinds == {"report.pdf": "text", "pixel.png": "image", "firmware.bin": "unsupported"}


async def test_a_part_gmail_serves_inline_costs_no_extra_request(running):
    emulator, _ = running
    nameless = message_id(emulator, "Nameless part")
    async with connect(running) as client:
        listed, _ = await call(client, emulator, {"message_id": nameless}, GET)
        (item,) = listed.structured_content["attachments"]
        assert item["filename"] == f"attachment-{item['part_id']}.csv"  # a name is made up for a nameless part
        result, calls = await call(client, emulator, {"message_id": nameless, "attachment": item["part_id"]})
    assert result.is_error is False and "1 | 99" in result.structured_content["text"]
    assert len(calls) == 1 and MESSAGE_PATH.match(calls[0][1])


async def test_small_images_come_back_as_image_content_large_ones_described(running):
    emulator, _ = running
    every = message_id(emulator, "Every attachment type")
    files = attachment_files()
    async with connect(running) as client:
        small, _ = await call(client, emulator, {"message_id": every, "attachment": "pixel.png"})
        large, _ = await call(client, emulator, {"message_id": every, "attachment": "poster.png"})
    assert [block.type for block in small.content] == ["text", "image"]
    assert small.content[1].mime_type == "image/png"
    assert base64.b64decode(small.content[1].data) == files["pixel.png"][1]
    assert "attached below" in small.content[0].text
    assert [block.type for block in large.content] == ["text"]
    assert any("over the 1.0 MB limit" in note for note in large.structured_content["notes"])


async def test_part_id_or_file_name_address_the_same_file_and_bad_names_list_the_choices(running):
    emulator, _ = running
    every, twins = message_id(emulator, "Every attachment type"), message_id(emulator, "Two files, one name")
    async with connect(running) as client:
        listed, _ = await call(client, emulator, {"message_id": every}, GET)
        part = next(a["part_id"] for a in listed.structured_content["attachments"] if a["filename"] == "plan.docx")
        by_part, _ = await call(client, emulator, {"message_id": every, "attachment": part})
        by_name, _ = await call(client, emulator, {"message_id": every, "attachment": "PLAN.DOCX"})
        twin, _ = await call(client, emulator, {"message_id": twins, "attachment": "notes.txt"})
        missing, missing_calls = await call(client, emulator, {"message_id": every, "attachment": "nothing.pdf"})
        second, _ = await call(client, emulator, {"message_id": twins, "attachment": "2"})
    assert by_part.structured_content == by_name.structured_content
    assert twin.is_error and "2 attachments are named 'notes.txt'" in twin.content[0].text
    assert "part 1: notes.txt" in twin.content[0].text and "part 2: notes.txt" in twin.content[0].text
    assert missing.is_error and "part " in missing.meta["gmail-mcp/error"]["hint"]
    assert len(missing_calls) == 1  # the message was read; no attachment was fetched
    assert second.structured_content["text"] == "version two"


async def test_long_text_comes_in_windows_that_join_up(running):
    emulator, _ = running
    every = message_id(emulator, "Every attachment type")
    async with connect(running) as client:
        whole, _ = await call(client, emulator, {"message_id": every, "attachment": "report.pdf"})
        text, offset, pieces = whole.structured_content["text"], 0, []
        while offset is not None:
            page, _ = await call(
                client, emulator, {"message_id": every, "attachment": "report.pdf", "max_chars": 200, "offset": offset}
            )
            pieces.append(page.structured_content["text"])
            offset = page.structured_content.get("next_offset")
            if offset is not None:
                assert f"offset={offset}" in page.content[0].text
        past, _ = await call(client, emulator, {"message_id": every, "attachment": "report.pdf", "offset": 10_000})
    assert "".join(pieces) == text and len(pieces) > 1
    assert past.is_error and "past the end" in past.content[0].text


async def test_saving_is_refused_without_a_downloads_folder(running, tmp_path):
    emulator, _ = running
    every = message_id(emulator, "Every attachment type")
    async with connect(running) as client:
        result, calls = await call(client, emulator, {"message_id": every, "attachment": "plan.docx", "save": True})
    assert result.is_error and "GMAIL_MCP_DOWNLOAD_DIR" in result.meta["gmail-mcp/error"]["hint"]
    assert calls == []  # refused before reading anything


async def test_saving_writes_the_original_bytes_into_the_folder_only(running, tmp_path):
    emulator, _ = running
    every = message_id(emulator, "Every attachment type")
    folder = tmp_path / "downloads"
    async with connect(running, download_dir=folder) as client:
        first, _ = await call(client, emulator, {"message_id": every, "attachment": "budget.xlsx", "save": True})
        second, _ = await call(client, emulator, {"message_id": every, "attachment": "budget.xlsx", "save": True})
        unsaved, _ = await call(client, emulator, {"message_id": every, "attachment": "plan.docx"})
    saved = [Path(first.structured_content["saved_to"]), Path(second.structured_content["saved_to"])]
    assert [path.name for path in saved] == ["budget.xlsx", "budget (2).xlsx"]
    assert all(path.parent == folder.resolve() for path in saved)
    assert saved[0].read_bytes() == attachment_files()["budget.xlsx"][1]
    assert "saved_to" not in unsaved.structured_content and sorted(p.name for p in folder.iterdir()) == [
        "budget (2).xlsx",
        "budget.xlsx",
    ]
    assert f"Saved to: {saved[0]}" in first.content[0].text
