"""Several accounts: which token files make accounts, the `account` argument through a real MCP client session
(both eras), answers from each account's own mailbox, isolation of a revoked token, results naming the mailbox,
errors naming the account's own consent command, and per-account metrics."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp.client import Client

from server.app.accounts import AccountRegistry
from server.app.token_folder import configured_accounts, consent_age_note, default_account
from server.protocol.dispatch import build_server
from server.runtime.config import PROJECT_ROOT, load_settings
from server.tests.support.accounts import WORK_OWNER, WORK_SUBJECTS, two_account_emulator
from server.tests.support.emulator import OWNER

pytestmark = pytest.mark.anyio
MODES = ["legacy", "auto"]
SEARCH = "gmail_search_messages"


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture(scope="module")
def emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    with two_account_emulator(tmp_path_factory.mktemp("accounts")) as running:
        yield running


@pytest.fixture
def home(emulator, tmp_path: Path) -> Path:
    """A set-up with `default` (.token.json, me@example.com) and `work` (tokens/work.json, WORK_OWNER)."""
    emulator.reset()
    emulator.write_token(tmp_path / ".token.json")
    emulator.write_token(tmp_path / "tokens" / "work.json", user=WORK_OWNER)
    yield tmp_path
    emulator.reset()


def settings_for(emulator, home: Path, **env: str):
    return load_settings(
        env={
            "GMAIL_MCP_HOME": str(home),
            "GMAIL_API_ENDPOINT": emulator.url,
            "GMAIL_TOKEN_URI": emulator.token_uri,
            "GMAIL_MCP_QUOTA_UNITS_PER_S": "0",
            **env,
        },
        dotenv=False,
    )


def test_token_files_make_the_accounts(tmp_path):
    settings = load_settings(env={"GMAIL_MCP_HOME": str(tmp_path)}, dotenv=False)
    assert configured_accounts(settings) == [("default", tmp_path / ".token.json")]  # nothing yet: `default`
    folder = tmp_path / "tokens"
    folder.mkdir()
    for name in ("work.json", "personal.json", "Bad Name.json", "notes.txt", "default.json"):
        (folder / name).write_text("{}")
    assert [name for name, _ in configured_accounts(settings)] == ["personal", "work"]
    (tmp_path / ".token.json").write_text("{}")
    found = [name for name, _ in configured_accounts(settings)]
    assert found == ["default", "personal", "work"] and default_account(settings, found) == "default"
    chosen = settings.with_overrides(default_account="work")
    assert default_account(chosen, found) == "work"
    with pytest.raises(ValueError, match="GMAIL_MCP_DEFAULT_ACCOUNT='wrok' has no token"):
        default_account(settings.with_overrides(default_account="wrok"), found)
    moved = load_settings(env={"GMAIL_MCP_HOME": str(tmp_path), "GMAIL_MCP_TOKEN_DIR": "elsewhere"}, dotenv=False)
    assert moved.accounts_dir == tmp_path / "elsewhere"


@pytest.mark.parametrize("mode", MODES)
async def test_each_account_answers_from_its_own_mailbox(emulator, home, mode):
    registry = AccountRegistry.from_settings(settings_for(emulator, home))
    assert registry.names == ["default", "work"]
    async with Client(build_server(registry), mode=mode) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        schema = tools[SEARCH].input_schema["properties"]["account"]
        assert schema["enum"] == ["default", "work"] and "default: default" in schema["description"]
        assert set(tools[SEARCH].output_schema["properties"]) >= {"mailbox", "account"}
        personal = await client.call_tool(SEARCH, {"query": "in:inbox", "max_results": 50})
        work = await client.call_tool(SEARCH, {"query": "in:inbox", "account": "Work"})  # names: any case
        unknown = await client.call_tool(SEARCH, {"query": "in:inbox", "account": "wrok"})
    assert (personal.structured_content["mailbox"], personal.structured_content["account"]) == (OWNER, "default")
    assert (work.structured_content["mailbox"], work.structured_content["account"]) == (WORK_OWNER, "work")
    assert {m["subject"] for m in work.structured_content["messages"]} == set(WORK_SUBJECTS)
    assert not {m.get("subject") for m in personal.structured_content["messages"]} & set(WORK_SUBJECTS)
    assert personal.content[0].text.startswith(f"Mailbox: {OWNER} (account 'default')\n")
    error = unknown.meta["gmail-mcp/error"]
    assert error["category"] == "invalid_input" and "No account named 'wrok'" in error["message"]
    assert "default, work" in error["hint"]
    summary = registry.metrics_summary()
    assert summary["tools"][SEARCH]["calls"] == 3  # the aggregate
    assert summary["accounts"]["work"]["tools"][SEARCH]["calls"] == 1
    assert summary["accounts"]["default"]["tools"][SEARCH]["calls"] == 2  # the failed call counts for the default


@pytest.mark.parametrize("mode", MODES)
async def test_a_revoked_token_on_one_account_leaves_the_other_working(emulator, home, mode):
    info = json.loads((home / "tokens" / "work.json").read_text())
    eight_days_ago = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 8 * 86400))
    (home / "tokens" / "work.json").write_text(json.dumps({**info, "authorized_at": eight_days_ago}))
    registry = AccountRegistry.from_settings(settings_for(emulator, home))
    emulator.revoke_refresh_tokens(WORK_OWNER)
    async with Client(build_server(registry), mode=mode) as client:
        work = await client.call_tool(SEARCH, {"query": "in:inbox", "account": "work"})
        personal = await client.call_tool(SEARCH, {"query": "in:inbox"})
        work_again = await client.call_tool(SEARCH, {"query": "in:inbox", "account": "work"})
    error = work.meta["gmail-mcp/error"]
    assert error["category"] == "auth_error" and error["message"].startswith("Account 'work': ")
    assert "auth_cli.py --account work" in error["hint"]
    # The early warning for apps in Testing mode: the token is older than Google's 7 days.
    assert "more than 7 days ago" in error["hint"] and "Testing" in error["hint"]
    assert personal.is_error is False and personal.structured_content["mailbox"] == OWNER
    assert work_again.meta["gmail-mcp/error"]["category"] == "auth_error"


@pytest.mark.parametrize("mode", MODES)
async def test_a_single_account_keeps_tools_list_and_text_as_they_were(emulator, tmp_path, mode):
    emulator.reset()
    emulator.write_token(tmp_path / ".token.json")
    registry = AccountRegistry.from_settings(settings_for(emulator, tmp_path))
    async with Client(build_server(registry), mode=mode) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        named = await client.call_tool(SEARCH, {"query": "in:inbox", "account": "default"})
        other = await client.call_tool(SEARCH, {"query": "in:inbox", "account": "work"})
    assert "account" not in tools[SEARCH].input_schema["properties"]
    assert "account" not in tools[SEARCH].output_schema["properties"]
    assert named.structured_content["mailbox"] == OWNER and "account" not in named.structured_content
    assert not named.content[0].text.startswith("Mailbox:")
    assert "Use one of the configured accounts: default" in other.meta["gmail-mcp/error"]["hint"]


async def test_an_address_not_in_the_token_file_is_asked_once_and_recorded(emulator, tmp_path):
    emulator.reset()
    token = emulator.write_token(tmp_path / ".token.json")
    token.write_text(json.dumps({k: v for k, v in json.loads(token.read_text()).items() if k != "account"}))
    registry = AccountRegistry.from_settings(settings_for(emulator, tmp_path))
    since = emulator.requests()[-1]["seq"] if emulator.requests() else 0
    async with Client(build_server(registry), mode="auto") as client:
        first = await client.call_tool(SEARCH, {"query": "in:inbox"})
        second = await client.call_tool(SEARCH, {"query": "in:inbox"})
    profiles = [entry for entry in emulator.requests(since) if entry["path"].endswith("/profile")]
    assert len(profiles) == 1
    assert first.structured_content["mailbox"] == second.structured_content["mailbox"] == OWNER
    assert json.loads(token.read_text())["account"] == OWNER  # the next start needs no lookup
    if os.name == "posix":
        assert token.stat().st_mode & 0o777 == 0o600


def test_the_consent_age_note_appears_only_near_the_end():
    now = time.time()
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now - 6 * 86400))
    note = consent_age_note(stamp, "auth_cli.py --account work", now=now)
    assert note and "6 days ago" in note and "auth_cli.py --account work" in note and "Publish" in note
    assert consent_age_note(time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now - 86400)), "x", now=now) is None
    assert consent_age_note(None, "x") is None and consent_age_note("yesterday", "x") is None


def test_check_covers_every_account_with_its_own_command(emulator, home):
    info = json.loads((home / "tokens" / "work.json").read_text())
    six_days_ago = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 6 * 86400))
    (home / "tokens" / "work.json").write_text(json.dumps({**info, "authorized_at": six_days_ago}))
    env = {
        **os.environ,
        "PYTHONPATH": str(PROJECT_ROOT),
        "GMAIL_MCP_HOME": str(home),
        "GMAIL_API_ENDPOINT": emulator.url,
        "GMAIL_TOKEN_URI": emulator.token_uri,
    }
    env.pop("GMAIL_TOKEN_PATH", None)
    command = [sys.executable, "-m", "server.main", "--check"]
    ok = subprocess.run(command, env=env, cwd="/", capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "account 'default':" in ok.stdout and "account 'work':" in ok.stdout
    assert f"Gmail answers for {WORK_OWNER}" in ok.stdout and f"Gmail answers for {OWNER}" in ok.stdout
    assert "[warn] This token was granted 6 days ago" in ok.stdout and "--account work" in ok.stdout
    emulator.revoke_refresh_tokens(WORK_OWNER)
    emulator.expire_access_tokens()  # the first check saved fresh access tokens: make the next one refresh
    failing = subprocess.run(command, env=env, cwd="/", capture_output=True, text=True, timeout=60)
    assert failing.returncode == 1
    work_part = failing.stdout.split("account 'work':")[1]
    assert "[fail]" in work_part and "auth_cli.py --account work" in work_part


def test_the_terminal_client_passes_the_account_before_or_after_the_command():
    from server.cli import build_parser, search_arguments

    for argv in (["--account", "work", "search", "x"], ["search", "x", "--account", "work"]):
        assert search_arguments(build_parser().parse_args(argv))["account"] == "work"
    assert "account" not in search_arguments(build_parser().parse_args(["search", "x"]))
