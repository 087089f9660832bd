"""Token encryption at rest: sealed files hold no readable secret, are read back and refreshed through the real
google-auth path against the emulator, stay sealed when refreshed, and fail with the fix when the key is gone.
The keyring path runs the real `keyring` package over an in-memory backend (no OS keyring in CI)."""

from __future__ import annotations

import json
import os
import stat

import pytest
from cryptography.fernet import Fernet

from server.auth import TokenStore, read_token_file, read_token_info, write_token_file
from server.errors import AuthError
from server.runtime import token_crypto
from server.runtime.config import load_settings

keyring = pytest.importorskip("keyring")
from keyring.backend import KeyringBackend  # noqa: E402


class MemoryKeyring(KeyringBackend):
    priority = 10

    def __init__(self) -> None:
        super().__init__()
        self.entries: dict[tuple[str, str], str] = {}

    def get_password(self, service, username):
        return self.entries.get((service, username))

    def set_password(self, service, username, password):
        self.entries[(service, username)] = password

    def delete_password(self, service, username):
        self.entries.pop((service, username), None)


@pytest.fixture
def memory_keyring():
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)


@pytest.fixture
def no_keyring():
    from keyring.backends import fail

    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    yield
    keyring.set_keyring(previous)


def settings_for(emulator, token, **overrides):
    base = load_settings(env={"GMAIL_MCP_QUOTA_UNITS_PER_S": "0"}, dotenv=False)
    return base.with_overrides(api_endpoint=emulator.url, token_uri=emulator.token_uri, token_path=token, **overrides)


def sealed_copy(emulator, tmp_path, scheme: str):
    plain = json.loads(emulator.write_token(tmp_path / "plain.json").read_text())
    path = tmp_path / "sealed.json"
    write_token_file(path, {**plain, "authorized_at": "2026-01-01T00:00:00Z"}, seal_with=scheme)
    return plain, path


def test_an_env_key_seals_the_file_and_the_refresh_keeps_it_sealed(emulator, tmp_path, monkeypatch):
    monkeypatch.setenv(token_crypto.ENV_KEY, Fernet.generate_key().decode())
    plain, path = sealed_copy(emulator, tmp_path, "env")
    raw = path.read_text()
    assert plain["refresh_token"] not in raw and plain["client_secret"] not in raw
    assert json.loads(raw)["key_source"] == "env"
    if os.name == "posix":
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert read_token_info(path)["refresh_token"] == plain["refresh_token"]

    store = TokenStore(settings_for(emulator, path))
    assert store.get().token  # refreshed through the emulator, then persisted
    info, sealed = read_token_file(path)
    assert sealed == "env" and info["token"] and info["authorized_at"] == "2026-01-01T00:00:00Z"
    assert info["token"] not in path.read_text()
    store.record_account("me@example.com")
    assert read_token_file(path) == ({**info, "account": "me@example.com"}, "env")


def test_without_the_key_the_error_says_which_key_is_missing(emulator, tmp_path, monkeypatch):
    monkeypatch.setenv(token_crypto.ENV_KEY, Fernet.generate_key().decode())
    _, path = sealed_copy(emulator, tmp_path, "env")
    monkeypatch.delenv(token_crypto.ENV_KEY)
    with pytest.raises(AuthError, match="GMAIL_MCP_TOKEN_KEY is not set"):
        read_token_info(path)
    monkeypatch.setenv(token_crypto.ENV_KEY, Fernet.generate_key().decode())
    with pytest.raises(AuthError, match="cannot be decrypted"):
        read_token_info(path)
    monkeypatch.setenv(token_crypto.ENV_KEY, "not-a-key")
    with pytest.raises(AuthError, match="not a Fernet key"):
        read_token_info(path)


def test_auto_uses_the_os_keyring_when_there_is_one(emulator, tmp_path, memory_keyring, monkeypatch):
    monkeypatch.delenv(token_crypto.ENV_KEY, raising=False)
    plain, path = sealed_copy(emulator, tmp_path, "auto")
    assert json.loads(path.read_text())["key_source"] == "keyring"
    key = memory_keyring.entries[(token_crypto.KEYRING_SERVICE, token_crypto.KEYRING_ENTRY)]
    assert key.encode() not in path.read_bytes()
    assert read_token_info(path)["refresh_token"] == plain["refresh_token"]
    memory_keyring.entries.clear()
    with pytest.raises(AuthError, match="OS keyring holds no 'gmail-mcp' key"):
        read_token_info(path)


def test_auto_falls_back_to_the_env_key_and_fails_plainly_without_either(tmp_path, no_keyring, monkeypatch):
    monkeypatch.delenv(token_crypto.ENV_KEY, raising=False)
    with pytest.raises(AuthError, match="neither an OS keyring"):
        write_token_file(tmp_path / "t.json", {"refresh_token": "r"}, seal_with="auto")
    assert not (tmp_path / "t.json").exists()
    monkeypatch.setenv(token_crypto.ENV_KEY, Fernet.generate_key().decode())
    write_token_file(tmp_path / "t.json", {"refresh_token": "r"}, seal_with="auto")
    assert json.loads((tmp_path / "t.json").read_text())["key_source"] == "env"


def test_configured_encryption_seals_a_plain_file_at_its_next_refresh(emulator, tmp_path, monkeypatch):
    monkeypatch.setenv(token_crypto.ENV_KEY, Fernet.generate_key().decode())
    path = emulator.write_token(tmp_path / "plain.json")
    TokenStore(settings_for(emulator, path, token_encryption="env")).get()
    assert read_token_file(path)[1] == "env"


def test_scheme_names():
    assert token_crypto.parse_scheme(None) == "off" and token_crypto.parse_scheme(" Keyring ") == "keyring"
    with pytest.raises(ValueError, match="must be one of off, auto, keyring, env"):
        token_crypto.parse_scheme("aes")
