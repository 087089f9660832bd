"""Writing as the person, through real MCP client sessions (both protocol eras) against the emulator.

A reply to mail sent to an alias is drafted from that alias with its signature (once, above the quote); the
send question and every answer show the From and the account; a From that is not a send-as address is refused
with the valid ones; files come from other messages without touching the disk, or from the client's bytes; a
draft past Gmail's 25 MB is refused before anything is fetched or uploaded; an edit never doubles the signature.
Request counts come from the emulator's request log.
"""

from __future__ import annotations

import base64
import email
import email.policy
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp.client import Client

from server.tests.support.emulator import OWNER, PDF_BYTES
from server.tests.support.writes import write_stack

pytestmark = pytest.mark.anyio
MODES = ["legacy", "auto"]
ALIAS = "ana@alias.example"
SIGNATURE = '<div><b>Ana Lima</b><br>Support, <a href="https://alias.example">Alias Inc</a></div>'
SIGNATURE_TEXT = "Ana Lima"


@pytest.fixture
def anyio_backend():
    return "asyncio"


def parsed(raw: bytes) -> email.message.EmailMessage:
    return email.message_from_bytes(raw, policy=email.policy.default)


def bodies(raw: bytes) -> tuple[str, str]:
    message = parsed(raw)
    text = message.get_body(("plain",)).get_content().replace("\r\n", "\n")
    html_part = message.get_body(("html",))
    return text, html_part.get_content() if html_part is not None else ""


def calls(stack: Any, method: str, path_end: str, since: int = 0) -> list[dict[str, Any]]:
    return [
        entry
        for entry in stack.emulator.requests(since)
        if entry["method"] == method and entry["path"].split("?")[0].endswith(path_end)
    ]


def attachment_gets(stack: Any, since: int = 0) -> list[dict[str, Any]]:
    return [e for e in stack.emulator.requests(since) if e["method"] == "GET" and "/attachments/" in e["path"]]


def to_alias(stack: Any, subject: str = "Ticket 7", **extra: str) -> str:
    headers = {"To": f"Support <{ALIAS}>", **extra}
    raw = (
        "From: Bruno <bruno@customer.example>\r\n"
        + "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        + f"Subject: {subject}\r\nMessage-ID: <t7@customer.example>\r\nDate: Tue, 02 Apr 2024 10:00:00 +0000\r\n\r\n"
        "My order never came.\r\n"
    )
    return stack.emulator.deliver(raw)["id"]


@pytest.mark.parametrize("mode", MODES)
async def test_a_reply_to_mail_sent_to_an_alias_is_drafted_from_it_with_its_signature(tmp_path: Path, mode: str):
    with write_stack(tmp_path) as stack:
        stack.emulator.add_send_as(ALIAS, "Ana Lima", SIGNATURE)
        original = to_alias(stack)
        async with Client(stack.server(), mode=mode) as client:
            result = await client.call_tool("gmail_create_draft", {"reply_to_message_id": original, "body": "On it."})
            again = await client.call_tool("gmail_create_draft", {"to": ["x@y.example"], "body": "Second"})
        assert not result.is_error, result.content[0].text
        data = result.structured_content
        assert data["from_address"] == f"Ana Lima <{ALIAS}>" and data["mailbox"] == OWNER
        assert data["signature_added"] is True and data["from_choices"] == [OWNER]
        assert f"from {ALIAS}, the address the original was sent to" in " ".join(data["notes"])
        assert f"From: Ana Lima <{ALIAS}> | account {OWNER} | signature added" in result.content[0].text
        raw = stack.raw_of(data["message_id"])
        assert parsed(raw)["From"] == f"Ana Lima <{ALIAS}>"  # kept by Gmail: it is a send-as address
        text, html_body = bodies(raw)
        assert text.startswith("On it.\n\n-- \nAna Lima\nSupport, Alias Inc")
        assert text.count(SIGNATURE_TEXT) == 1 and text.index("-- \n") < text.index("wrote:")
        assert "> My order never came." in text
        assert html_body.count("<b>Ana Lima</b>") == 1
        assert html_body.index('class="gmail_signature"') < html_body.index('class="gmail_quote"')
        # A new message is from the default identity (the primary, which has no signature here).
        assert again.structured_content["from_address"] == OWNER and not again.structured_content["signature_added"]
        assert len(calls(stack, "GET", "/settings/sendAs")) == 1  # kept per account across both calls


async def test_mail_that_reached_an_alias_by_bcc_is_answered_from_it(tmp_path: Path):
    """Bcc leaves no trace in To/Cc: the Delivered-To header Gmail adds on arrival names the alias."""
    with write_stack(tmp_path) as stack:
        stack.emulator.add_send_as(ALIAS, signature=SIGNATURE)
        original = to_alias(stack, **{"To": "someone@else.example", "Delivered-To": ALIAS})
        async with Client(stack.server(), mode="auto") as client:
            result = await client.call_tool("gmail_create_draft", {"reply_to_message_id": original, "body": "Hi"})
        assert result.structured_content["from_address"] == ALIAS


@pytest.mark.parametrize("mode", MODES)
async def test_the_send_question_and_answers_show_the_from_and_the_account(tmp_path: Path, mode: str):
    asked: list[str] = []

    async def person(_ctx: Any, params: Any) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"confirm": True})

    with write_stack(tmp_path) as stack:
        stack.emulator.add_send_as(ALIAS, "Ana Lima", SIGNATURE)
        original = to_alias(stack)
        async with Client(stack.server(), mode=mode, elicitation_callback=person) as client:
            draft = await client.call_tool("gmail_create_draft", {"reply_to_message_id": original, "body": "Done."})
            sent = await client.call_tool("gmail_send_draft", {"draft_id": draft.structured_content["draft_id"]})
        async with Client(stack.server(), mode=mode) as client:  # no elicitation: the code path
            draft2 = await client.call_tool("gmail_create_draft", {"reply_to_message_id": original, "body": "Also."})
            first = await client.call_tool("gmail_send_draft", {"draft_id": draft2.structured_content["draft_id"]})
    assert len(asked) == 1 and f"From: Ana Lima <{ALIAS}> (account {OWNER})" in asked[0]
    assert sent.structured_content["status"] == "sent" and sent.structured_content["mailbox"] == OWNER
    assert sent.structured_content["summary"]["from_address"] == f"Ana Lima <{ALIAS}>"
    assert f"From: Ana Lima <{ALIAS}> (account {OWNER})" in sent.content[0].text
    assert first.structured_content["status"] == "confirmation_required"
    assert f"From: Ana Lima <{ALIAS}> (account {OWNER})" in first.content[0].text
    assert first.structured_content["summary"]["from_address"] == f"Ana Lima <{ALIAS}>"


@pytest.mark.parametrize("mode", MODES)
async def test_a_from_that_is_not_a_send_as_address_is_refused_with_the_valid_ones(tmp_path: Path, mode: str):
    with write_stack(tmp_path) as stack:
        stack.emulator.add_send_as(ALIAS)
        stack.emulator.add_send_as("pending@alias.example", verification="pending")
        async with Client(stack.server(), mode=mode) as client:
            refused = [
                await client.call_tool("gmail_create_draft", {"to": ["a@b.example"], "from_address": address})
                for address in ("boss@evil.example", "pending@alias.example")
            ]
            chosen = await client.call_tool(
                "gmail_create_draft", {"to": ["a@b.example"], "from_address": ALIAS.upper(), "body": "x"}
            )
        for result in refused:
            text = result.content[0].text
            assert result.is_error and "is not one of this account's send-as addresses" in text
            assert OWNER in text and ALIAS in text and "pending@alias.example (" not in text.split("addresses")[1]
            assert result.meta["gmail-mcp/error"]["category"] == "invalid_input"
        assert chosen.structured_content["from_address"] == ALIAS
        assert len(calls(stack, "POST", "/drafts")) == 1  # only the valid one was saved


@pytest.mark.parametrize("mode", MODES)
async def test_the_send_as_addresses_are_listed_before_any_draft_and_asked_for_once(tmp_path: Path, mode: str):
    """Issue 24: `from` is "one of the account's send-as addresses, listed by a read tool": gmail_list_drafts lists
    them (the default first; a pending alias is not one), and the draft made next reuses that one sendAs.list."""
    with write_stack(tmp_path) as stack:
        stack.emulator.add_send_as(ALIAS, signature=SIGNATURE)
        stack.emulator.add_send_as("pending@alias.example", verification="pending")
        async with Client(stack.server(), mode=mode) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            listed = await client.call_tool("gmail_list_drafts", {})
            drafted = await client.call_tool(
                "gmail_create_draft", {"to": ["a@b.example"], "from_address": ALIAS, "body": "x"}
            )
        assert (
            "gmail_list_drafts" in tools["gmail_create_draft"].input_schema["properties"]["from_address"]["description"]
        )
        assert listed.structured_content["send_as"] == [f"{OWNER} (default)", ALIAS]
        assert f"Drafts can be from (from_address): {OWNER} (default), {ALIAS}" in listed.content[0].text
        assert drafted.structured_content["from_address"] == ALIAS
        assert len(calls(stack, "GET", "/settings/sendAs")) == 1


async def test_a_refused_send_as_list_leaves_the_primary_and_is_asked_once(tmp_path: Path):
    """settings.sendAs.list needs gmail.settings.basic, readonly, modify or full access (Google's reference for
    users.settings.sendAs.list); where Gmail still refuses it (403 insufficientPermissions, injected here), the
    profile's address is all that is known, no alias can be chosen, and the refusal is kept for the account."""
    with write_stack(tmp_path) as stack:
        stack.emulator.add_send_as(ALIAS, signature=SIGNATURE)
        stack.emulator.add_fault(status=403, reason="insufficientPermissions", path_regex="settings/sendAs", count=5)
        async with Client(stack.server(), mode="auto") as client:
            plain = await client.call_tool("gmail_create_draft", {"to": ["a@b.example"], "body": "x"})
            alias = await client.call_tool("gmail_create_draft", {"to": ["a@b.example"], "from_address": ALIAS})
        assert not plain.is_error, plain.content[0].text
        assert plain.structured_content["from_address"] == OWNER and not plain.structured_content["signature_added"]
        assert alias.is_error and "cannot read the account's send-as settings" in alias.content[0].text
        assert [entry["status"] for entry in calls(stack, "GET", "/settings/sendAs")] == [403]


async def test_a_draft_forwards_a_pdf_of_another_message_without_writing_a_file(tmp_path: Path):
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    with write_stack(tmp_path / "stack", download_dir=downloads) as stack:
        invoice = next(m for m in stack.emulator.store.messages if m.subject == "Invoice 42")
        before = len(stack.emulator.requests())
        async with Client(stack.server(), mode="auto") as client:
            result = await client.call_tool(
                "gmail_create_draft",
                {
                    "to": ["accounts@partner.example"],
                    "subject": "The invoice",
                    "body": "Attached.",
                    "attach_from_messages": [{"message_id": invoice.id, "attachment": "invoice-42.pdf"}],
                    "attach_content": [{"filename": "note.txt", "mime_type": "text/plain", "data_base64": "aGVsbG8="}],
                },
            )
        assert not result.is_error, result.content[0].text
        assert result.structured_content["attachments"] == ["note.txt", "invoice-42.pdf"]
        parts = list(parsed(stack.raw_of(result.structured_content["message_id"])).iter_attachments())
        assert [(p.get_filename(), p.get_content_type()) for p in parts] == [
            ("note.txt", "text/plain"),
            ("invoice-42.pdf", "application/pdf"),
        ]
        assert parts[0].get_content() == "hello" and parts[1].get_content() == PDF_BYTES
        assert len(attachment_gets(stack, before)) == 1  # one attachments.get per file
        assert len(calls(stack, "GET", f"/messages/{invoice.id}", before)) == 1
    assert list(downloads.iterdir()) == []  # nothing went through the disk


async def test_bad_attachment_arguments_are_explained_and_nothing_is_saved(tmp_path: Path):
    with write_stack(tmp_path) as stack:
        invoice = next(m for m in stack.emulator.store.messages if m.subject == "Invoice 42")
        async with Client(stack.server(), mode="auto") as client:
            bad_b64 = await client.call_tool(
                "gmail_create_draft",
                {"to": ["a@b.example"], "attach_content": [{"filename": "x.bin", "data_base64": "not base64!"}]},
            )
            no_such = await client.call_tool(
                "gmail_create_draft",
                {"to": ["a@b.example"], "attach_from_messages": [{"message_id": invoice.id, "attachment": "nope"}]},
            )
        assert bad_b64.is_error and "'x.bin' is not valid base64" in bad_b64.content[0].text
        assert no_such.is_error and "invoice-42.pdf" in no_such.content[0].text  # the hint lists the real ones
        assert calls(stack, "POST", "/drafts") == []


async def test_a_30_mb_draft_is_refused_before_anything_is_fetched_or_uploaded(tmp_path: Path):
    big = bytes(range(256)) * (20 * 1024 * 4)  # 20 MB
    encoded = base64.encodebytes(big).decode().replace("\n", "\r\n")
    raw = (
        "From: Vendor <v@vendor.example>\r\nTo: me@example.com\r\nSubject: Big scan\r\n"
        "MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\n"
        "Content-Type: text/plain\r\n\r\nScan attached.\r\n--b\r\nContent-Type: application/pdf\r\n"
        'Content-Disposition: attachment; filename="scan.pdf"\r\nContent-Transfer-Encoding: base64\r\n\r\n'
        f"{encoded}--b--\r\n"
    )
    with write_stack(tmp_path) as stack:
        scan = stack.emulator.deliver(raw)["id"]
        before = len(stack.emulator.requests())
        ten_mb = base64.b64encode(b"\x00" * (10 * 1024 * 1024)).decode()
        async with Client(stack.server(), mode="auto") as client:
            result = await client.call_tool(
                "gmail_create_draft",
                {
                    "to": ["a@b.example"],
                    "attach_from_messages": [{"message_id": scan, "attachment": "scan.pdf"}],
                    "attach_content": [{"filename": "extra.bin", "data_base64": ten_mb}],
                },
            )
        text = result.content[0].text
        assert result.is_error and "total 30.0 MB" in text and "at most 25.0 MB" in text, text
        assert "scan.pdf 20.0 MB" in text and "extra.bin 10.0 MB" in text
        assert attachment_gets(stack, before) == []  # refused on the listed size: the 20 MB never came down
        assert calls(stack, "POST", "/drafts", before) == [] and calls(stack, "POST", "/drafts/send") == []


async def test_the_signature_is_never_doubled_by_edits(tmp_path: Path):
    with write_stack(tmp_path) as stack:
        stack.emulator.add_send_as(OWNER, "Me", SIGNATURE)  # the primary's own signature
        stack.emulator.add_send_as(ALIAS, "Ana Lima", "<i>Ana at Alias</i>")
        original = next(m for m in stack.emulator.store.messages if m.subject == "Quarterly report")
        async with Client(stack.server(), mode="auto") as client:

            async def update(**arguments: Any) -> tuple[str, str]:
                result = await client.call_tool("gmail_update_draft", {"draft_id": draft_id, **arguments})
                assert not result.is_error, result.content[0].text
                return bodies(stack.raw_of(result.structured_content["message_id"]))

            created = await client.call_tool(
                "gmail_create_draft", {"reply_to_message_id": original.id, "body": "First"}
            )
            draft_id = created.structured_content["draft_id"]
            assert created.structured_content["from_address"] == f"Me <{OWNER}>"
            for arguments in ({"body": "Second"}, {"subject": "Re: Quarterly report (v2)"}, {"to": ["z@z.example"]}):
                text, html_body = await update(**arguments)
                assert text.count(SIGNATURE_TEXT) == 1 and html_body.count("<b>Ana Lima</b>") == 1, arguments
                assert text.count("wrote:") == 1
            text, _html = await update(body=f"Third\n\n{SIGNATURE_TEXT}\nSupport, Alias Inc")  # already signed
            assert text.count(SIGNATURE_TEXT) == 1
            text, html_body = await update(body="Fourth", from_address=ALIAS)  # the new sender's signature
            assert "Ana at Alias" in text and SIGNATURE_TEXT not in text and html_body.count("data-smartmail") == 1
            text, html_body = await update(signature=False)
            assert "Ana at Alias" not in text and "gmail_signature" not in html_body and "Fourth" in text
            assert "> The quarterly report is attached below." in text  # the quote stays through every edit
            unsigned = await client.call_tool(
                "gmail_create_draft", {"to": ["a@b.example"], "body": "No sig", "signature": False}
            )
        assert not unsigned.structured_content["signature_added"]
        assert SIGNATURE_TEXT not in bodies(stack.raw_of(unsigned.structured_content["message_id"]))[0]
