"""`auth_cli.py --scopes`: names mapped to Google's scopes, read access always included, and the token file records
what Google actually granted (a person may untick a box), so refreshing never asks for more than was granted."""

from __future__ import annotations

import json
import os

import pytest

from server import auth_cli, scopes

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
    """Google's flow at its boundary: returns credentials whose `granted_scopes` are what the consent screen gave."""

    def __init__(self, credentials) -> None:
        self.credentials = credentials

    def run_local_server(self, **kwargs):
        self.prompt = kwargs["authorization_prompt_message"]
        return self.credentials


def consent(monkeypatch, tmp_path, emulator, granted: list[str]) -> dict[str, list]:
    """Fakes the consent screen granting `granted`; returns what the flow was asked for, as it is asked."""
    from google.oauth2.credentials import Credentials

    info = json.loads(emulator.write_token(tmp_path / "issued.json", scopes=granted).read_text())
    seen: dict[str, list] = {"asked": [], "relaxed": []}

    def from_client_secrets_file(path, scopes):
        seen["asked"].append(scopes)
        seen["relaxed"].append(os.environ.get("OAUTHLIB_RELAX_TOKEN_SCOPE"))  # partial grants must not fail
        credentials = Credentials.from_authorized_user_info(info)
        credentials._granted_scopes = " ".join(info["scopes"])  # as google-auth-oauthlib sets it from the answer
        return FakeFlow(credentials)

    import google_auth_oauthlib.flow

    monkeypatch.setattr(
        google_auth_oauthlib.flow.InstalledAppFlow, "from_client_secrets_file", staticmethod(from_client_secrets_file)
    )
    monkeypatch.setenv("GMAIL_API_ENDPOINT", emulator.url)
    monkeypatch.setenv("GMAIL_TOKEN_URI", emulator.token_uri)
    monkeypatch.delenv("OAUTHLIB_RELAX_TOKEN_SCOPE", raising=False)
    (tmp_path / "credentials.json").write_text(json.dumps(DESKTOP_CLIENT))
    return seen


def run(tmp_path, *extra: str) -> int:
    token = tmp_path / "out" / "token.json"
    return auth_cli.main(
        ["--credentials", str(tmp_path / "credentials.json"), "--token", str(token), "--no-browser", *extra]
    )


def test_scopes_by_name_are_asked_for_and_recorded(emulator, tmp_path, monkeypatch, capsys):
    asked = consent(monkeypatch, tmp_path, emulator, ["readonly", "compose", "modify"])
    assert run(tmp_path, "--scopes", "readonly,compose,modify") == 0
    assert asked["asked"] == [[scopes.READONLY, scopes.COMPOSE, scopes.MODIFY]] and asked["relaxed"] == ["1"]
    saved = json.loads((tmp_path / "out" / "token.json").read_text())
    assert saved["scopes"] == sorted([scopes.READONLY, scopes.COMPOSE, scopes.MODIFY])
    out = capsys.readouterr().out
    assert "Granted: compose, modify, readonly" in out and "also granted: compose, modify" in out


def test_a_partial_grant_is_recorded_as_granted_and_named(emulator, tmp_path, monkeypatch, capsys):
    asked = consent(monkeypatch, tmp_path, emulator, ["readonly"])
    assert run(tmp_path, "--scopes", "compose") == 0
    assert asked["asked"] == [[scopes.READONLY, scopes.COMPOSE]]  # read access is always asked for
    assert json.loads((tmp_path / "out" / "token.json").read_text())["scopes"] == [scopes.READONLY]
    out = capsys.readouterr().out
    assert "Not granted" in out and "compose" in out and "(read-only)" in out


def test_modify_alone_is_enough_for_reading(emulator, tmp_path, monkeypatch):
    asked = consent(monkeypatch, tmp_path, emulator, ["modify"])
    assert run(tmp_path, "--scopes", "modify") == 0
    assert asked["asked"] == [[scopes.MODIFY]]


def test_the_default_stays_read_only(emulator, tmp_path, monkeypatch, capsys):
    asked = consent(monkeypatch, tmp_path, emulator, ["readonly"])
    assert run(tmp_path) == 0
    assert asked["asked"] == [[scopes.READONLY]]
    assert "(read-only)" in capsys.readouterr().out


@pytest.mark.parametrize("names", ["readonly,everything", "root", ","])
def test_unknown_names_are_refused_with_the_valid_ones(tmp_path, capsys, names):
    code = auth_cli.main(["--scopes", names, "--token", str(tmp_path / "t.json")])
    if names == ",":  # nothing named: the default
        assert auth_cli.requested_scopes(names) == [scopes.READONLY]
        return
    assert code == 2
    err = capsys.readouterr().err
    assert "unknown scope name" in err and "readonly, compose, send, modify, labels" in err


def test_the_missing_scope_hint_names_this_flag():
    from server.app.toolset_choice import missing_scope_messages
    from server.toolsets import ALL_TOOLSETS

    [drafts] = missing_scope_messages(frozenset({"drafts"}), ALL_TOOLSETS, frozenset({scopes.READONLY}))
    assert "auth_cli.py --scopes readonly,compose" in drafts or "gmail-mcp-auth --scopes readonly,compose" in drafts
