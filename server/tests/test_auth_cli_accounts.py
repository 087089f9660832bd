"""auth_cli.py for several accounts: `--account NAME` writes tokens/NAME.json (0600 in a 0700 folder) and records
the address and the consent time, `--list` shows the accounts, `--remove` deletes one; `.token.json` stays the
`default` account. Google's consent flow is faked at its boundary; the token is proven against the emulator."""

from __future__ import annotations

import json
import os
import stat

import pytest
from cryptography.fernet import Fernet

from server import auth_cli
from server.auth import read_token_file
from server.tests.test_auth_cli import DESKTOP_CLIENT


class FakeFlow:
    def __init__(self, credentials) -> None:
        self.credentials = credentials

    def run_local_server(self, **kwargs):
        return self.credentials


@pytest.fixture
def consent(emulator, tmp_path, monkeypatch):
    """Fakes the browser step with the emulator's credentials; the set-up's home folder is tmp_path."""
    import google_auth_oauthlib.flow
    from google.oauth2.credentials import Credentials

    issued = json.loads(emulator.write_token(tmp_path / "issued.json").read_text())
    issued.pop("account")
    credentials = Credentials.from_authorized_user_info(issued)
    monkeypatch.setattr(
        google_auth_oauthlib.flow.InstalledAppFlow,
        "from_client_secrets_file",
        staticmethod(lambda path, scopes: FakeFlow(credentials)),
    )
    (tmp_path / "credentials.json").write_text(json.dumps(DESKTOP_CLIENT))
    for name, value in {
        "GMAIL_MCP_HOME": str(tmp_path),
        "GMAIL_API_ENDPOINT": emulator.url,
        "GMAIL_TOKEN_URI": emulator.token_uri,
    }.items():
        monkeypatch.setenv(name, value)
    for name in ("GMAIL_TOKEN_PATH", "GMAIL_MCP_TOKEN_DIR", "GMAIL_CREDENTIALS_PATH", "GMAIL_MCP_TOKEN_ENCRYPTION"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def test_account_tokens_go_to_the_token_folder_with_the_address(consent, emulator, capsys):
    assert auth_cli.main(["--account", "work", "--no-browser"]) == 0
    path = consent / "tokens" / "work.json"
    info, sealed = read_token_file(path)
    assert sealed is None and info["account"] == emulator.store.email_address
    assert info["authorized_at"].endswith("Z") and info["refresh_token"]
    if os.name == "posix":
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert f"Authorized account 'work': the server can now read {emulator.store.email_address}" in (
        capsys.readouterr().out
    )
    assert not (consent / ".token.json").exists()  # the default account is untouched

    assert auth_cli.main(["--no-browser"]) == 0  # no --account: the single-account .token.json, as before
    assert read_token_file(consent / ".token.json")[0]["account"] == emulator.store.email_address


def test_list_and_remove(consent, emulator, capsys):
    assert auth_cli.main(["--account", "work", "--no-browser"]) == 0
    assert auth_cli.main(["--no-browser"]) == 0
    capsys.readouterr()
    assert auth_cli.main(["--list"]) == 0
    listing = capsys.readouterr().out
    assert "default" in listing and "work" in listing and emulator.store.email_address in listing
    assert str(consent / "tokens" / "work.json") in listing and "authorized 20" in listing

    assert auth_cli.main(["--remove", "work"]) == 0
    assert not (consent / "tokens" / "work.json").exists() and "Removed account 'work'" in capsys.readouterr().out
    assert auth_cli.main(["--remove", "work"]) == 2
    assert "No account named 'work'" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["Work Mail", "../etc", "-x", "a" * 40, ""])
def test_account_names_are_checked(consent, capsys, name):
    assert auth_cli.main([f"--account={name}", "--no-browser"]) == 2
    assert "invalid account name" in capsys.readouterr().err
    assert not (consent / "tokens").exists()


def test_encrypt_seals_the_new_token(consent, monkeypatch, emulator):
    monkeypatch.setenv("GMAIL_MCP_TOKEN_KEY", Fernet.generate_key().decode())
    assert auth_cli.main(["--account", "work", "--encrypt", "env", "--no-browser"]) == 0
    path = consent / "tokens" / "work.json"
    info, sealed = read_token_file(path)
    assert sealed == "env" and info["account"] == emulator.store.email_address
    assert info["refresh_token"] not in path.read_text()
