"""The draft tools through real MCP client sessions (both protocol eras) against the emulator.

Listing follows configuration AND the token's scopes; a reply draft lands in the original's conversation with
the right In-Reply-To/References, recipients and subject; reply-all leaves out every own address; a forward
carries the original's attachments byte for byte; drafts are edited, listed and deleted; dry run writes nothing.
"""

from __future__ import annotations

import email
import email.policy
from pathlib import Path

import pytest
from mcp.client import Client

from server.app.accounts import AccountRegistry
from server.app.toolset_choice import missing_scope_messages
from server.auth import TokenStore
from server.protocol.dispatch import build_server
from server.runtime.config import load_settings
from server.runtime.observability import Metrics
from server.scopes import BY_NAME
from server.tests.support.emulator import OWNER, PDF_BYTES
from server.tests.support.writes import WRITE_GROUPS, write_stack
from server.toolsets import ALL_TOOLSETS

pytestmark = pytest.mark.anyio
MODES = ["legacy", "auto"]
READ_TOOLS = {spec.name for toolset in ALL_TOOLSETS if not toolset.opt_in for spec in toolset.tools}
DRAFT_TOOLS = {"gmail_create_draft", "gmail_update_draft", "gmail_list_drafts", "gmail_delete_draft"}
ALL_WRITE_TOOLS = DRAFT_TOOLS | {"gmail_modify_messages", "gmail_send_draft"}


@pytest.fixture
def anyio_backend():
    return "asyncio"


def parsed(raw: bytes) -> email.message.EmailMessage:
    return email.message_from_bytes(raw, policy=email.policy.default)


async def listed(server) -> dict:
    async with Client(server, mode="auto") as client:
        return {tool.name: tool for tool in (await client.list_tools()).tools}


async def test_write_tools_are_listed_only_when_enabled_and_granted(tmp_path: Path):
    with write_stack(tmp_path, scopes=("readonly", "compose", "modify")) as stack:
        assert set(await listed(stack.server(enabled=frozenset()))) == READ_TOOLS
        assert set(await listed(stack.server())) == READ_TOOLS | ALL_WRITE_TOOLS
        assert set(await listed(stack.server(enabled=frozenset({"drafts"})))) == READ_TOOLS | DRAFT_TOOLS
    with write_stack(tmp_path / "compose", scopes=("readonly", "compose")) as stack:
        tools = await listed(stack.server())
        assert set(tools) == READ_TOOLS | DRAFT_TOOLS | {"gmail_send_draft"}  # labels need gmail.modify
        [warning] = missing_scope_messages(WRITE_GROUPS, ALL_TOOLSETS, stack.granted)
        assert "'labels'" in warning and "--scopes readonly,modify" in warning
    with write_stack(tmp_path / "readonly", scopes=("readonly",)) as stack:
        assert set(await listed(stack.server())) == READ_TOOLS


async def test_the_token_file_decides_through_the_account_registry(tmp_path: Path):
    with write_stack(tmp_path, scopes=("readonly",)) as stack:
        for scopes, expected in [
            (["readonly"], READ_TOOLS),
            (["readonly", "compose", "modify"], READ_TOOLS | ALL_WRITE_TOOLS),
        ]:
            token = stack.emulator.write_token(tmp_path / f"{len(scopes)}.json", scopes=scopes)
            settings = load_settings(env={}, dotenv=False).with_overrides(
                api_endpoint=stack.emulator.url, token_uri=stack.emulator.token_uri, token_path=token
            )
            registry = AccountRegistry.single(settings, metrics=Metrics())
            assert registry.granted_scopes(None) == frozenset(BY_NAME[name] for name in scopes)
            assert set(await listed(build_server(registry, enabled=WRITE_GROUPS))) == expected
            assert TokenStore(settings).get().valid  # a scoped token refreshes against the emulator


async def test_annotations_tell_the_truth(tmp_path: Path):
    with write_stack(tmp_path) as stack:
        tools = await listed(stack.server())
    hints = {
        name: (t.annotations.read_only_hint, t.annotations.destructive_hint, t.annotations.idempotent_hint)
        for name, t in tools.items()
    }
    assert hints["gmail_create_draft"] == (False, False, False)
    assert hints["gmail_update_draft"] == (False, False, True)
    assert hints["gmail_list_drafts"] == (True, None, None)  # read-only: the other hints say nothing
    assert hints["gmail_delete_draft"] == (False, True, True)
    assert hints["gmail_modify_messages"] == (False, False, True)  # label changes are idempotent
    assert hints["gmail_send_draft"] == (False, True, False)  # sending is destructive and not idempotent
    assert "sends NOTHING" in tools["gmail_send_draft"].description


@pytest.mark.parametrize("mode", MODES)
async def test_a_reply_draft_lands_in_the_thread_with_correct_headers(tmp_path: Path, mode: str):
    with write_stack(tmp_path) as stack:
        original = next(m for m in stack.emulator.store.messages if m.subject == "Quarterly report")
        async with Client(stack.server(), mode=mode) as client:
            result = await client.call_tool(
                "gmail_create_draft", {"reply_to_message_id": original.id, "body": "Thanks Alice!\nSee you."}
            )
        assert not result.is_error, result.content[0].text
        data = result.structured_content
        assert data["mode"] == "reply" and data["sent"] is False and data["thread_id"] == original.thread_id
        assert data["to"] == ["Alice Example <alice@example.com>"] and data["subject"] == "Re: Quarterly report"
        stored = stack.emulator.store.by_id[data["message_id"]]
        assert stored.thread_id == original.thread_id and "DRAFT" in stored.label_ids
        message = parsed(stored.raw)
        assert message["In-Reply-To"] == "<report-1@example.com>"  # the header, not Gmail's id
        assert message["References"] == "<report-1@example.com>"
        assert message["Subject"] == "Re: Quarterly report"
        text = message.get_body(("plain",)).get_content().replace("\r\n", "\n")
        assert text.startswith("Thanks Alice!\nSee you.\n\nOn ") and "> The quarterly report is attached below." in text
        assert stack.sends() == []  # a draft never sends


async def test_a_reply_to_a_reply_does_not_stack_re_and_extends_references(tmp_path: Path):
    with write_stack(tmp_path) as stack:
        mine = next(m for m in stack.emulator.store.messages if m.subject == "Re: Quarterly report")
        async with Client(stack.server(), mode="auto") as client:
            result = await client.call_tool("gmail_create_draft", {"reply_to_message_id": mine.id, "body": "PS"})
        data = result.structured_content
        assert data["subject"] == "Re: Quarterly report"
        assert data["to"] == ["Alice Example <alice@example.com>"]  # my own sent mail: its recipient, not me
        message = parsed(stack.raw_of(data["message_id"]))
        assert message["References"] == "<report-1@example.com> <report-2@example.com>"
        assert message["In-Reply-To"] == "<report-2@example.com>"
        assert stack.emulator.store.by_id[data["message_id"]].thread_id == mine.thread_id


async def test_reply_all_leaves_out_the_account_and_its_aliases(tmp_path: Path):
    with write_stack(tmp_path) as stack:
        stack.emulator.add_send_as("me.alias@work.example")
        raw = (
            "From: Ann <ann@x.example>\r\nTo: Me <me@example.com>, Bob <bob@x.example>\r\n"
            "Cc: me.alias@work.example, Carol <carol@x.example>\r\nSubject: Plans\r\n"
            "Message-ID: <plans-1@x.example>\r\nDate: Tue, 02 Apr 2024 10:00:00 +0000\r\n\r\nLet's meet.\r\n"
        )
        delivered = stack.emulator.deliver(raw)
        async with Client(stack.server(), mode="legacy") as client:
            result = await client.call_tool(
                "gmail_create_draft",
                {
                    "mode": "reply_all",
                    "reply_to_message_id": delivered["id"],
                    "body": "Works for me",
                    "cc": ["dan@x.example"],
                },
            )
        data = result.structured_content
        assert data["to"] == ["Ann <ann@x.example>"]
        assert data["cc"] == ["Bob <bob@x.example>", "Carol <carol@x.example>", "dan@x.example"]
        everyone = str(data["to"] + data["cc"] + data["bcc"])
        assert OWNER not in everyone and "alias" not in everyone
        assert data["from_address"] == OWNER  # sent to both: the To address comes first, as in Gmail's reply


async def test_a_forward_carries_the_attachments_byte_for_byte(tmp_path: Path):
    with write_stack(tmp_path) as stack:
        invoice = next(m for m in stack.emulator.store.messages if m.subject == "Invoice 42")
        async with Client(stack.server(), mode="auto") as client:
            result = await client.call_tool(
                "gmail_create_draft",
                {"mode": "forward", "reply_to_message_id": invoice.id, "to": ["Zoë <zoe@exämple.com>"], "body": "FYI"},
            )
        data = result.structured_content
        assert data["subject"] == "Fwd: Invoice 42" and data["attachments"] == ["invoice-42.pdf"]
        assert data["to"] == ["Zoë <zoe@xn--exmple-cua.com>"]
        message = parsed(stack.raw_of(data["message_id"]))
        [attachment] = list(message.iter_attachments())
        assert attachment.get_filename() == "invoice-42.pdf" and attachment.get_content() == PDF_BYTES
        text = message.get_body(("plain",)).get_content()
        assert "---------- Forwarded message ---------" in text and "From: Billing <billing@vendor.example>" in text
        assert message["To"].addresses[0].display_name == "Zoë"


@pytest.mark.parametrize("mode", MODES)
async def test_bad_arguments_are_explained_and_nothing_is_written(tmp_path: Path, mode: str):
    with write_stack(tmp_path) as stack:
        before = len(stack.emulator.requests())
        async with Client(stack.server(), mode=mode) as client:
            cases = [
                ({"to": ["not an address"], "body": "x"}, "not an address like"),
                ({"mode": "reply", "body": "x"}, "needs reply_to_message_id"),
                ({"reply_to_message_id": "18c0ffee00000001", "subject": "new", "body": "x"}, "keeps the original"),
                ({"to": ["a@b.com"], "attachments": ["../etc/passwd"]}, "no attachment folder"),
            ]
            for arguments, expected in cases:
                result = await client.call_tool("gmail_create_draft", arguments)
                assert result.is_error and expected in result.content[0].text, result.content[0].text
            missing = await client.call_tool("gmail_create_draft", {"reply_to_message_id": "18c0ffee00000001"})
            assert missing.meta["gmail-mcp/error"]["category"] == "not_found"
        writes = [e for e in stack.emulator.requests()[before:] if e["method"] != "GET" and e["path"] != "/token"]
        assert writes == []


async def test_local_files_attach_from_the_configured_folder(tmp_path: Path):
    folder = tmp_path / "outbox"
    folder.mkdir()
    (folder / "plan.pdf").write_bytes(b"%PDF-plan")
    with write_stack(tmp_path / "stack", attach_dir=folder) as stack:
        async with Client(stack.server(), mode="auto") as client:
            result = await client.call_tool(
                "gmail_create_draft",
                {"to": ["a@b.com"], "subject": "Plan", "body": "Here", "attachments": ["plan.pdf"]},
            )
        [part] = list(parsed(stack.raw_of(result.structured_content["message_id"])).iter_attachments())
        assert part.get_filename() == "plan.pdf" and part.get_content() == b"%PDF-plan"


async def test_drafts_are_updated_listed_and_deleted(tmp_path: Path):
    with write_stack(tmp_path) as stack:
        original = next(m for m in stack.emulator.store.messages if m.subject == "Quarterly report")
        async with Client(stack.server(), mode="auto") as client:
            created = await client.call_tool("gmail_create_draft", {"reply_to_message_id": original.id, "body": "v1"})
            draft_id = created.structured_content["draft_id"]
            updated = await client.call_tool(
                "gmail_update_draft", {"draft_id": draft_id, "body": "v2 text", "cc": ["Bob <bob@x.example>"]}
            )
            assert not updated.is_error, updated.content[0].text
            data = updated.structured_content
            assert data["cc"] == ["Bob <bob@x.example>"] and data["to"] == ["Alice Example <alice@example.com>"]
            message = parsed(stack.raw_of(data["message_id"]))
            text = message.get_body(("plain",)).get_content().replace("\r\n", "\n")
            assert text.startswith("v2 text\n\nOn ") and "> The quarterly report is attached below." in text
            assert message["In-Reply-To"] == "<report-1@example.com>"
            assert stack.emulator.store.by_id[data["message_id"]].thread_id == original.thread_id
            listing = await client.call_tool("gmail_list_drafts", {})
            [item] = listing.structured_content["drafts"]
            assert item["draft_id"] == draft_id and item["subject"] == "Re: Quarterly report"
            assert "v2 text" in item["snippet"]
            deleted = await client.call_tool("gmail_delete_draft", {"draft_id": draft_id})
            assert deleted.structured_content["deleted"] is True
            assert (await client.call_tool("gmail_list_drafts", {})).structured_content["drafts"] == []
            again = await client.call_tool("gmail_delete_draft", {"draft_id": draft_id})
            assert again.meta["gmail-mcp/error"]["category"] == "not_found" and "No draft" in again.content[0].text
        deletes = [e["status"] for e in stack.emulator.requests() if e["method"] == "DELETE"]
        assert deletes == [204]  # one request: the second call found no draft before deleting anything


async def test_dry_run_builds_and_reports_but_writes_nothing(tmp_path: Path):
    with write_stack(tmp_path, dry_run=True) as stack:
        original = next(m for m in stack.emulator.store.messages if m.subject == "Quarterly report")
        async with Client(stack.server(), mode="auto") as client:
            result = await client.call_tool("gmail_create_draft", {"reply_to_message_id": original.id, "body": "hi"})
        data = result.structured_content
        assert data["dry_run"] is True and "draft_id" not in data and data["subject"] == "Re: Quarterly report"
        assert "Dry run" in result.content[0].text
        assert [e for e in stack.emulator.requests() if e["method"] != "GET" and e["path"] != "/token"] == []
        [line] = (tmp_path / "audit.jsonl").read_text(encoding="utf-8").splitlines()
        assert '"outcome": "dry_run"' in line and "al***@example.com" in line and "hi" not in line.split('"ts"')[0]


async def test_an_account_without_the_scope_is_told_its_own_consent_command(tmp_path: Path):
    from server.tests.support.accounts import WORK_OWNER, two_account_emulator

    with two_account_emulator(tmp_path) as emulator:
        home = tmp_path / "home"
        token = emulator.write_token(home / ".token.json", scopes=["readonly", "compose"])
        (home / "tokens").mkdir(mode=0o700)
        emulator.write_token(home / "tokens" / "work.json", user=WORK_OWNER, scopes=["readonly"])
        settings = load_settings(env={}, dotenv=False).with_overrides(
            api_endpoint=emulator.url, token_uri=emulator.token_uri, token_path=token
        )
        registry = AccountRegistry.from_settings(settings)
        assert registry.names == ["default", "work"]
        async with Client(build_server(registry, enabled=WRITE_GROUPS), mode="auto") as client:
            mine = await client.call_tool("gmail_create_draft", {"to": ["a@x.example"], "body": "hi"})
            theirs = await client.call_tool(
                "gmail_create_draft", {"to": ["a@x.example"], "body": "hi", "account": "work"}
            )
        assert not mine.is_error and mine.structured_content["mailbox"] == "me@example.com"
        error = theirs.meta["gmail-mcp/error"]
        assert error["category"] == "permission_denied" and "Account 'work'" in error["message"]
        assert "--account work --scopes readonly,compose" in error["hint"]
        assert not [e for e in emulator.requests() if e["method"] == "POST" and "/drafts" in e["path"]][1:]
