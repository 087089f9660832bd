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
    (tmp_path / "credentials.json").write_text('{"installed": {}}')
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
    assert call["port"] == 0
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
