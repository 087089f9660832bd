"""gmail_get_message over a real MCP session (in-process), backed by the emulator serving the content corpus:
readable newsletters, attachments, bounded bodies with offset continuation, and quoted-history stripping."""

from __future__ import annotations

import pytest
from mcp.client import Client

from server.protocol.dispatch import build_server
from server.runtime.observability import Metrics
from server.tests.data.corpus_structure import LARGE_END
from server.tests.support.corpus_served import LARGE, Served, corpus_mailbox, serve
from server.tools import ToolContext

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory):
    mailbox = corpus_mailbox(tmp_path_factory.mktemp("corpus"))
    with serve(mailbox, "utf8", tmp_path_factory.mktemp("token")) as running:
        yield running


def connect(served: Served) -> Client:
    return Client(build_server(ToolContext(gmail=served.client, enrich_top_k=10, metrics=Metrics())))


async def read(client: Client, served: Served, case: str, **arguments: object) -> tuple[dict, str]:
    result = await client.call_tool("gmail_get_message", {"message_id": served.ids[case], **arguments})
    assert result.is_error is False, result.content[0].text
    return result.structured_content, result.content[0].text


async def test_html_newsletter_reads_as_clean_text(served: Served) -> None:
    async with connect(served) as client:
        message, rendered = await read(client, served, "html-newsletter")
    assert message["body_source"] == "text/html" and message["truncated"] is False
    assert "Plan | Price\nBasic | $5" in message["body_text"]
    assert "Subject: The Weekly Byte #42" in rendered and "- Python 3.13 released" in rendered
    assert "<td" not in rendered and "SECRET_SCRIPT" not in rendered and "body_html" not in message


async def test_charsets_attachments_and_forwards_reach_the_model(served: Served) -> None:
    async with connect(served) as client:
        gbk, _ = await read(client, served, "gb2312-gbk-chars")
        files, rendered = await read(client, served, "rfc2231-filenames")
        forward, _ = await read(client, served, "forward-inline")
    assert gbk["body_text"] == "李堃和周喆确认了合同号 HX-2026-0815，谢谢。"
    assert [item["filename"] for item in files["attachments"]] == [
        "報告書.pdf",
        "Quarterly Report — Q3.docx",
        "résumé.txt",
        "契約書.pdf",
    ]
    assert "Attachments: 報告書.pdf (part " in rendered and "application/pdf" in rendered
    assert "Original text from Bob" in forward["body_text"] and forward["attachments"][0]["filename"] == "budget.pdf"


async def test_long_body_is_cut_at_a_clean_boundary_and_read_on_with_offset(served: Served) -> None:
    full = served.full(LARGE.name).body_text or ""
    async with connect(served) as client:
        first, rendered = await read(client, served, LARGE.name, max_body_chars=200_000)
        second, _ = await read(client, served, LARGE.name, max_body_chars=200_000, offset=first["next_offset"])
        tail, _ = await read(client, served, LARGE.name, max_body_chars=200_000, offset=len(full) - 500)
    assert first["truncated"] is True and first["body_chars_total"] == len(full) > 5_000_000
    assert 180_000 <= first["next_offset"] <= 200_000 and first["body_text"].endswith("\n\n")  # a paragraph end
    assert f"Call again with offset={first['next_offset']}" in rendered
    assert second["offset"] == first["next_offset"] and second["body_text"].startswith("Paragraph ")
    assert first["body_text"] + second["body_text"] == full[: second["next_offset"]]
    assert tail["truncated"] is False and "next_offset" not in tail and tail["body_text"].endswith(LARGE_END)


async def test_short_slices_concatenate_to_the_whole_body(served: Served) -> None:
    full = served.full("html-newsletter").body_text or ""
    pieces: list[str] = []
    offset: int | None = 0
    async with connect(served) as client:
        while offset is not None:
            message, _ = await read(client, served, "html-newsletter", max_body_chars=200, offset=offset)
            pieces.append(message["body_text"])
            offset = message.get("next_offset")
    assert len(pieces) > 1 and "".join(pieces) == full


async def test_offset_past_the_end_is_an_error_the_model_can_fix(served: Served) -> None:
    async with connect(served) as client:
        result = await client.call_tool("gmail_get_message", {"message_id": served.ids["utf8-8bit"], "offset": 10_000})
    assert result.is_error is True and "next_offset" in result.content[0].text


@pytest.mark.parametrize(
    ("case", "kept", "dropped"),
    [
        ("reply-quoted", "Sounds good, see you Tuesday.", ["> Shall we meet", "wrote:"]),
        ("reply-outlook", "Approved, thanks.", ["Please approve the budget.", "Sent: Monday"]),
    ],
)
async def test_strip_quoted_drops_reply_history_only_when_asked(
    served: Served, case: str, kept: str, dropped: list[str]
) -> None:
    async with connect(served) as client:
        whole, _ = await read(client, served, case)
        stripped, _ = await read(client, served, case, strip_quoted=True)
    assert all(text in whole["body_text"] for text in [kept, *dropped])
    assert stripped["body_text"] == kept
