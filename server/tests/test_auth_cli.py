"""auth_cli.py: the one-time consent flow (Google's flow faked at its boundary), token file, and verification."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from typing import ClassVar

import pytest

from server import auth_cli
from server.runtime.config import GMAIL_READONLY_SCOPE, PROJECT_ROOT
from server.tests.support.emulator import emulator_env


def test_missing_credentials_file_prints_the_steps_not_a_traceback(tmp_path):
    result = subprocess.run(
        [sys.executable, str(PROJECT_ROOT / "server" / "auth_cli.py")],  # the script-path form, from another cwd
        env={**os.environ, "GMAIL_CREDENTIALS_PATH": str(tmp_path / "credentials.json")},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "Desktop app" in result.stderr and "Test users" in result.stderr and "Gmail API" in result.stderr


DESKTOP_CLIENT = {
    "installed": {
        "client_id": "1234-abc.apps.googleusercontent.com",
        "client_secret": "GOCSPX-test",
        "auth_uri": "https://accounts.google.com/o/oauth2/auth",
        "token_uri": "https://oauth2.googleapis.com/token",
        "redirect_uris": ["http://localhost"],
    }
}


class FakeFlow:
    """Stands in for InstalledAppFlow: records how it was asked to run, returns the emulator's credentials."""

    calls: ClassVar[list[dict]] = []

    def __init__(self, credentials) -> None:
        self.credentials = credentials

    def run_local_server(self, **kwargs):
        FakeFlow.calls.append(kwargs)
        return self.credentials


def test_authorize_writes_an_owner_only_token_and_proves_it(emulator, tmp_path, monkeypatch, capsys):
    from google.oauth2.credentials import Credentials

    issued = emulator.write_token(tmp_path / "issued.json")
    credentials = Credentials.from_authorized_user_info(json.loads(issued.read_text()))
    scopes_asked = []

    def from_client_secrets_file(path, scopes):
        scopes_asked.append(scopes)
        return FakeFlow(credentials)

    import google_auth_oauthlib.flow

    monkeypatch.setattr(
        google_auth_oauthlib.flow.InstalledAppFlow, "from_client_secrets_file", staticmethod(from_client_secrets_file)
    )
    (tmp_path / "credentials.json").write_text(json.dumps(DESKTOP_CLIENT))
    token_path = tmp_path / "out" / ".token.json"
    for name, value in emulator_env(emulator, token_path).items():
        monkeypatch.setenv(name, value)
    FakeFlow.calls.clear()

    code = auth_cli.main(
        ["--credentials", str(tmp_path / "credentials.json"), "--token", str(token_path), "--no-browser"]
    )

    assert code == 0
    assert scopes_asked == [[GMAIL_READONLY_SCOPE]]
    (call,) = FakeFlow.calls
    assert call["access_type"] == "offline" and call["prompt"] == "consent" and call["open_browser"] is False
    assert call["port"] > 0 and call["timeout_seconds"] == auth_cli.DEFAULT_WAIT_S
    prompt = call["authorization_prompt_message"]
    assert f"ssh -L {call['port']}:localhost:{call['port']}" in prompt and "PORT" not in prompt
    assert "Waiting up to 5 minutes" in prompt and "Ctrl-C cancels" in prompt
    saved = json.loads(token_path.read_text())
    assert saved["refresh_token"] == credentials.refresh_token
    if os.name == "posix":
        assert stat.S_IMODE(token_path.stat().st_mode) == 0o600
    out = capsys.readouterr().out
    assert f"can now read {emulator.store.email_address}" in out


@pytest.mark.parametrize("argv", [["--verify-only"]])
def test_verify_only_reports_a_missing_token_with_the_fix(tmp_path, monkeypatch, capsys, argv):
    monkeypatch.setenv("GMAIL_TOKEN_PATH", str(tmp_path / "absent.json"))
    assert auth_cli.main(argv) == 2
    assert "auth_cli.py" in capsys.readouterr().err


@pytest.mark.parametrize(
    "error, advice",
    [
        (Warning("Scope has changed from A to B."), "tick the box"),
        (Exception("(access_denied) Access blocked"), "Test users"),
        (RuntimeError("boom"), "RuntimeError"),
    ],
)
def test_consent_failures_get_guidance_instead_of_a_traceback(error, advice):
    assert advice in auth_cli.describe_consent_failure(error)


@pytest.mark.parametrize(
    "content, expected",
    [
        ('{"installed": {"client_id": "x",\n', "not valid JSON"),
        ("{}", "not an OAuth client file"),
        ('{"type": "service_account", "private_key": "..."}', "not an OAuth client file"),
        ('{"installed": {"client_id": ""}}', "lacks a client_id"),
        (None, "is a folder"),
    ],
)
def test_a_bad_client_file_names_the_file_and_what_to_do(tmp_path, capsys, content, expected):
    path = tmp_path / "credentials.json"
    if content is None:
        path.mkdir()
    else:
        path.write_text(content)
    assert auth_cli.main(["--credentials", str(path), "--token", str(tmp_path / "t.json")]) == 2
    err = capsys.readouterr().err
    assert expected in err and str(path) in err and "Desktop app" in err and "Traceback" not in err


def _fake_consent(monkeypatch, tmp_path, emulator):
    from google.oauth2.credentials import Credentials

    issued = emulator.write_token(tmp_path / "issued.json")
    credentials = Credentials.from_authorized_user_info(json.loads(issued.read_text()))
    import google_auth_oauthlib.flow

    monkeypatch.setattr(
        google_auth_oauthlib.flow.InstalledAppFlow,
        "from_client_secrets_file",
        staticmethod(lambda path, scopes: FakeFlow(credentials)),
    )
    monkeypatch.setenv("GMAIL_API_ENDPOINT", emulator.url)
    monkeypatch.setenv("GMAIL_TOKEN_URI", emulator.token_uri)
    FakeFlow.calls.clear()


def test_a_web_client_is_used_with_a_warning_that_a_desktop_client_is_needed(emulator, tmp_path, monkeypatch, capsys):
    _fake_consent(monkeypatch, tmp_path, emulator)
    path = tmp_path / "credentials.json"
    path.write_text(json.dumps({"web": DESKTOP_CLIENT["installed"]}))
    assert auth_cli.main(["--credentials", str(path), "--token", str(tmp_path / "t.json"), "--no-browser"]) == 0
    assert "'Web application' client" in capsys.readouterr().err


def test_no_runnable_browser_falls_back_to_printing_the_url(emulator, tmp_path, monkeypatch, capsys):
    import webbrowser

    def no_browser(*_args, **_kwargs):
        raise webbrowser.Error("could not locate runnable browser")

    _fake_consent(monkeypatch, tmp_path, emulator)
    monkeypatch.setattr(webbrowser, "get", no_browser)
    path = tmp_path / "credentials.json"
    path.write_text(json.dumps(DESKTOP_CLIENT))
    assert auth_cli.main(["--credentials", str(path), "--token", str(tmp_path / "t.json")]) == 0
    (call,) = FakeFlow.calls
    assert call["open_browser"] is False and "Open this URL" in call["authorization_prompt_message"]
    assert "No browser can be opened" in capsys.readouterr().err


def test_a_consent_that_times_out_says_so():
    from google_auth_oauthlib.flow import WSGITimeoutError

    advice = auth_cli.describe_consent_failure(WSGITimeoutError("Timed out"), wait_s=120)
    assert "within 120 s" in advice and "--wait" in advice


@pytest.mark.skipif(os.name != "posix", reason="SIGTERM is TerminateProcess on Windows: nothing to handle")
def test_sigterm_while_waiting_for_the_browser_exits_cleanly(tmp_path):
    path = tmp_path / "credentials.json"
    path.write_text(json.dumps(DESKTOP_CLIENT))
    process = subprocess.Popen(
        [sys.executable, str(PROJECT_ROOT / "server" / "auth_cli.py"), "--no-browser", "--credentials", str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "GMAIL_TOKEN_PATH": str(tmp_path / "t.json")},
        text=True,
    )
    try:
        # The consent URL and the waiting line go to stderr (stdout is for what auth_cli reports) before the wait.
        for line in process.stderr:
            if "Waiting up to" in line:
                break
        else:
            pytest.fail("auth_cli never said it was waiting for the browser")
        process.terminate()
        _out, err = process.communicate(timeout=30)
    finally:
        process.kill()
    assert process.returncode == 2 and "Authorization cancelled." in err and "Traceback" not in err


def test_a_linux_machine_without_a_display_has_no_usable_browser(monkeypatch):
    monkeypatch.setattr(sys, "platform", "linux")
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "BROWSER"):
        monkeypatch.delenv(name, raising=False)
    assert auth_cli.browser_available() is False  # w3m or lynx would take over the terminal
    monkeypatch.setenv("BROWSER", "wslview")
    import webbrowser

    monkeypatch.setattr(webbrowser, "get", lambda *_: object())
    assert auth_cli.browser_available() is True


def test_an_invalid_setting_is_named_not_a_traceback(monkeypatch, capsys):
    monkeypatch.setenv("GMAIL_MCP_LOG_LEVEL", "loud")
    assert auth_cli.main(["--verify-only"]) == 2
    err = capsys.readouterr().err
    assert "Invalid setting: GMAIL_MCP_LOG_LEVEL must be one of" in err and "Traceback" not in err


def test_the_home_folder_named_for_credentials_json_is_created(tmp_path):
    home = tmp_path / "config" / "gmail-mcp"  # as ~/.config/gmail-mcp is for an installed package
    result = subprocess.run(
        [sys.executable, "-m", "server.auth_cli"],
        env={**os.environ, "GMAIL_MCP_HOME": str(home), "PYTHONPATH": str(PROJECT_ROOT)},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2 and str(home / "credentials.json") in result.stderr
    assert home.is_dir() and (os.name != "posix" or stat.S_IMODE(home.stat().st_mode) == 0o700)
