"""The hint catalogue names commands a person can paste: this checkout's interpreter and script, or the installed
`gmail-mcp-auth` when the server runs as `gmail-mcp`; and the home folder where tokens and .env live."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from server import hints
from server.runtime.config import PROJECT_ROOT, home_dir, is_checkout, load_settings, user_config_dir


def test_auth_command_names_this_interpreter_and_script(monkeypatch):
    monkeypatch.setattr(sys, "argv", ["-m"])
    command = hints.auth_command("--no-browser")
    assert sys.executable in command and str(PROJECT_ROOT / "server" / "auth_cli.py") in command
    assert command.endswith(" --no-browser") and "python server/auth_cli.py" not in command


def test_auth_command_names_the_installed_command_next_to_gmail_mcp(monkeypatch, tmp_path):
    (tmp_path / "gmail-mcp").write_text("")
    (tmp_path / "gmail-mcp-auth").write_text("")
    monkeypatch.setattr(sys, "argv", [str(tmp_path / "gmail-mcp"), "--demo"])
    assert Path(hints.auth_command().strip("'\"")).name == "gmail-mcp-auth"


def test_paths_with_spaces_are_quoted(monkeypatch):
    monkeypatch.setattr(sys, "argv", ["-m"])
    monkeypatch.setattr(sys, "executable", "/Users/A Person/gmail mcp/.venv/bin/python")
    command = hints.auth_command()
    assert command.startswith(("'/Users/A Person/gmail mcp/.venv/bin/python'", '"/Users/A Person'))


def test_home_is_the_checkout_here_and_the_config_folder_when_installed(tmp_path):
    assert is_checkout() and home_dir({}) == PROJECT_ROOT
    assert not is_checkout(tmp_path)
    assert user_config_dir({"XDG_CONFIG_HOME": str(tmp_path)}).name == "gmail-mcp"
    assert home_dir({"GMAIL_MCP_HOME": str(tmp_path)}) == tmp_path.resolve()


def test_relative_paths_resolve_against_the_home_folder(tmp_path):
    settings = load_settings({"GMAIL_MCP_HOME": str(tmp_path)}, dotenv=False)
    assert settings.token_path == tmp_path.resolve() / ".token.json"
    assert settings.credentials_path == tmp_path.resolve() / "credentials.json"


def test_a_quoted_windows_command_also_comes_in_its_powershell_form(monkeypatch):
    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setattr(sys, "argv", ["-m"])
    monkeypatch.setattr(sys, "executable", r"C:\Users\A Person\gmail-mcp\.venv\Scripts\python.exe")
    hint = hints.run_auth()
    assert hint.startswith(r'Run `"C:\Users\A Person\gmail-mcp\.venv\Scripts\python.exe" ')
    assert r'(PowerShell: `& "C:\Users\A Person' in hint
    monkeypatch.setattr(sys, "executable", r"C:\gmail\.venv\Scripts\python.exe")
    assert "PowerShell" not in hints.run_auth()  # an unquoted command runs the same in both shells


@pytest.mark.parametrize("name", ["GMAIL_MCP_ENRICH_TOP_K", "GMAIL_MCP_TIMEOUT_S", "GMAIL_MCP_BACKOFF_SCALE"])
@pytest.mark.parametrize("value", ["inf", "nan", "-inf"])
def test_numeric_settings_must_be_finite(name, value):
    with pytest.raises(ValueError, match=f"{name} must be a finite number"):
        load_settings({name: value}, dotenv=False)


def test_an_answer_that_is_not_text_is_a_transient_network_problem():
    from server.gmail.errors import translate

    undecodable = UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte")
    translated = translate(undecodable, endpoint="batch", now=0.0, timeout_s=30)
    assert translated.error.code == "transient" and "not JSON" in translated.error.message
