"""Tools declare themselves: listing follows configuration (opt-in toolsets) and the token's scopes, and each
tool's own annotations reach the client. Checked with a write toolset made for the test, through a real MCP
client session in both protocol eras, over an account registry whose token file records its scopes."""

from __future__ import annotations

import json

import anyio
import pytest
from mcp.client import Client
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel

from server import scopes
from server.app.accounts import AccountRegistry
from server.app.toolset_choice import missing_scope_messages, validate_enabled
from server.protocol.dispatch import build_server
from server.runtime.config import load_settings
from server.runtime.observability import Metrics
from server.tools import Annotations, Toolset, ToolSpec, offered_tools, unavailable_toolsets
from server.toolsets import ALL_TOOLSETS
from server.toolsets.common import ToolInput

pytestmark = pytest.mark.anyio
MODES = ["legacy", "auto"]
READ_TOOLS = {spec.name for toolset in ALL_TOOLSETS if not toolset.opt_in for spec in toolset.tools}


@pytest.fixture
def anyio_backend():
    return "asyncio"


class Done(BaseModel):
    done: bool


ARCHIVE = ToolSpec(
    name="test_archive",
    title="Archive (test)",
    description="A write tool for this test only.",
    input_model=ToolInput,
    output_model=Done,
    run=lambda ctx, args: Done(done=True),
    render=lambda result: "archived",
    annotations=Annotations(read_only=False, destructive=False, idempotent=True),
    scopes=scopes.LABELING,
)
TIDY = Toolset(name="tidy", description="test write tools", tools=(ARCHIVE,), opt_in=True)
TOOLSETS = (*ALL_TOOLSETS, TIDY)


def test_opt_in_toolsets_need_both_configuration_and_scope():
    modify = frozenset({scopes.READONLY, scopes.MODIFY})
    assert set(offered_tools(TOOLSETS, enabled=frozenset(), granted=modify)) == READ_TOOLS
    assert set(offered_tools(TOOLSETS, enabled=frozenset({"tidy"}), granted=None)) == READ_TOOLS
    assert set(offered_tools(TOOLSETS, enabled=frozenset({"tidy"}), granted=modify)) == READ_TOOLS | {"test_archive"}
    # gmail.modify alone also reads: the read tools stay listed.
    assert set(offered_tools(TOOLSETS, enabled=frozenset({"tidy"}), granted=frozenset({scopes.MODIFY}))) == (
        READ_TOOLS | {"test_archive"}
    )


def test_an_enabled_toolset_without_its_scope_is_reported_with_the_consent_command():
    readonly = frozenset({scopes.READONLY})
    assert [
        toolset.name for toolset, _ in unavailable_toolsets(TOOLSETS, enabled=frozenset({"tidy"}), granted=readonly)
    ] == ["tidy"]
    (message,) = missing_scope_messages(frozenset({"tidy"}), TOOLSETS, readonly)
    assert "'tidy'" in message and "modify" in message and "auth_cli.py --scopes readonly,modify" in message
    assert missing_scope_messages(frozenset(), TOOLSETS, readonly) == []


def test_unknown_group_names_are_refused_with_the_valid_ones():
    validate_enabled(frozenset({"tidy"}), TOOLSETS)
    with pytest.raises(ValueError, match="drafs") as refused:
        validate_enabled(frozenset({"drafs"}), TOOLSETS)
    valid = sorted(toolset.name for toolset in TOOLSETS if toolset.opt_in)  # every opt-in group, in name order
    assert {"drafts", "labels", "send", "tidy"} <= set(valid) and f"valid: {', '.join(valid)}" in str(refused.value)


def _registry(emulator, tmp_path, granted: list[str]) -> AccountRegistry:
    # A token file of its own: an earlier server's warm-up may still be recording the address in its file.
    folder = tmp_path / f"registry-{len(list(tmp_path.glob('registry-*')))}"
    folder.mkdir()
    token = emulator.write_token(folder / "token.json")
    info = json.loads(token.read_text())
    token.write_text(json.dumps({**info, "scopes": granted}))
    settings = load_settings(env={}, dotenv=False).with_overrides(
        api_endpoint=emulator.url, token_uri=emulator.token_uri, token_path=token
    )
    return AccountRegistry.single(settings, metrics=Metrics())


@pytest.mark.parametrize("mode", MODES)
async def test_listing_follows_the_token_scopes_and_carries_each_tools_annotations(mode, emulator, tmp_path):
    readonly = _registry(emulator, tmp_path, [scopes.READONLY])
    async with Client(build_server(readonly, toolsets=TOOLSETS, enabled=frozenset({"tidy"})), mode=mode) as client:
        assert {tool.name for tool in (await client.list_tools()).tools} == READ_TOOLS
        refused = await client.call_tool("test_archive", {})  # listed nowhere, but a result that says why
        assert refused.is_error and refused.meta["gmail-mcp/error"]["category"] == "permission_denied"
        assert "--scopes readonly,modify" in refused.meta["gmail-mcp/error"]["hint"]
        with pytest.raises(MCPError, match="Unknown tool"):
            await client.call_tool("no_such_tool", {})
    disabled = _registry(emulator, tmp_path, [scopes.READONLY, scopes.MODIFY])
    async with Client(build_server(disabled, toolsets=TOOLSETS), mode=mode) as client:
        refused = await client.call_tool("test_archive", {})
        assert refused.is_error and "GMAIL_MCP_WRITE_TOOLS=tidy" in refused.meta["gmail-mcp/error"]["hint"]

    granted = _registry(emulator, tmp_path, [scopes.READONLY, scopes.MODIFY])
    async with Client(build_server(granted, toolsets=TOOLSETS, enabled=frozenset({"tidy"})), mode=mode) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(tools) == READ_TOOLS | {"test_archive"}
        assert tools["test_archive"].annotations.read_only_hint is False
        assert tools["gmail_search_messages"].annotations.read_only_hint is True
        result = await client.call_tool("test_archive", {})
    # Results name whose mail it is (the address the token file records).
    assert result.is_error is False
    assert result.structured_content == {"done": True, "mailbox": emulator.store.email_address}


@pytest.mark.parametrize("mode", MODES)
async def test_a_token_reauthorized_while_running_changes_the_list_without_a_restart(mode, emulator, tmp_path):
    registry = _registry(emulator, tmp_path, [scopes.READONLY])
    token = registry.get(None).token_path
    async with Client(build_server(registry, toolsets=TOOLSETS, enabled=frozenset({"tidy"})), mode=mode) as client:
        assert "test_archive" not in {tool.name for tool in (await client.list_tools()).tools}
        # The listing starts the warm-up, which records the account's address in the token file (read, then
        # write): let it finish first, or its write can land after the re-consent below and undo it.
        assert await anyio.to_thread.run_sync(registry.warmed_up.wait, 60)
        info = json.loads(token.read_text())
        token.write_text(json.dumps({**info, "scopes": [scopes.READONLY, scopes.MODIFY], "note": "re-consented"}))
        assert "test_archive" in {tool.name for tool in (await client.list_tools()).tools}


def test_unknown_account_is_invalid_input_listing_the_configured_ones(emulator, tmp_path):
    registry = _registry(emulator, tmp_path, [scopes.READONLY])
    assert registry.names == ["default"] and registry.context_for(None).account == "default"
    with pytest.raises(Exception, match="No account named 'work'") as caught:
        registry.context_for("work")
    assert caught.value.code == "invalid_input" and "default" in caught.value.hint


@pytest.mark.parametrize(
    "enabled",
    [
        frozenset(),
        *(frozenset({name}) for name in ("drafts", "send", "labels")),
        frozenset({"drafts", "send", "labels"}),
    ],
)
def test_the_servers_instructions_name_only_tools_it_offers(enabled):
    """A server with drafts but no send (or labels alone) must not tell the model about gmail_send_draft."""
    import re

    from server.protocol.dispatch import instructions
    from server.toolsets import ALL_TOOLSETS

    offered = {
        spec.name for toolset in ALL_TOOLSETS if not toolset.opt_in or toolset.name in enabled for spec in toolset.tools
    }
    text = instructions(ALL_TOOLSETS, enabled)
    named = set(re.findall(r"\bgmail_[a-z_]+", text))
    assert named and named <= offered, named - offered
    assert text.count("Write tools act only when the person asked.") == (1 if enabled else 0)
