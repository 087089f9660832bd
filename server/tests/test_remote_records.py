"""Clients, consents, pending authorization requests and Google grants in the state store; Google refresh tokens
sealed with Fernet under the key from GMAIL_MCP_TOKEN_KEY (runtime/token_crypto.py's key handling)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cryptography.fernet import Fernet, InvalidToken

from server.remote.records import GoogleAccount, RecordLifetimes, Records, vault_cipher
from server.remote.sqlite_store import SQLiteStore
from server.runtime.token_crypto import KeyUnavailable
from server.tests.support.remote_state import Clock

GOOGLE_REFRESH = "1//0e-google-refresh-token-of-ada"


@pytest.fixture
def records(store: SQLiteStore) -> Records:
    return Records(store, Fernet(Fernet.generate_key()), RecordLifetimes(client_s=100, pending_s=600, google_s=1000))


def account(email: str = "ada@work.example", token: str = GOOGLE_REFRESH) -> GoogleAccount:
    return GoogleAccount(email=email, google_sub="1" + "2" * 20, refresh_token=token, scopes=frozenset({"openid"}))


def test_registered_clients_are_forgotten_after_their_lifetime(records: Records, clock: Clock) -> None:
    records.save_client("dcr-1", {"redirect_uris": ["https://claude.ai/api/mcp/auth_callback"]})
    records.save_client("https://vscode.dev/oauth/client-metadata.json", {"client_name": "VS Code"}, ttl_s=300)
    clock.now += 100
    assert records.client("dcr-1") is None
    assert records.client("https://vscode.dev/oauth/client-metadata.json") == {"client_name": "VS Code"}
    assert records.forget_client("https://vscode.dev/oauth/client-metadata.json") is True
    assert records.client("https://vscode.dev/oauth/client-metadata.json") is None


def test_consent_is_per_person_and_client_and_grows(records: Records) -> None:
    assert records.consented("p1", "c1") == frozenset()
    records.consent("p1", "c1", ["read"])
    assert records.consent("p1", "c1", ["write"]) == {"read", "write"}
    assert records.consented("p2", "c1") == frozenset() and records.consented("p1", "c2") == frozenset()
    assert records.withdraw_consent("p1", "c1") is True and records.consented("p1", "c1") == frozenset()


def test_a_pending_request_is_finished_once_within_its_lifetime(records: Records, clock: Clock) -> None:
    state = records.begin_request({"client_id": "c1", "code_challenge": "abc"})
    assert len(state) >= 43 and records.begin_request({}) != state
    assert records.finish_request(state) == {"client_id": "c1", "code_challenge": "abc"}
    assert records.finish_request(state) is None
    late = records.begin_request({"client_id": "c1"})
    clock.now += 600
    assert records.finish_request(late) is None and records.finish_request("") is None


def test_google_refresh_tokens_are_sealed_at_rest(records: Records, store: SQLiteStore) -> None:
    records.save_google_account("person-1", account())
    raw = b"".join(p.read_bytes() for p in (store.path, Path(str(store.path) + "-wal")) if p.exists())
    assert b"ada@work.example" in raw and GOOGLE_REFRESH.encode() not in raw
    assert records.google_account("person-1", "ADA@work.example") == account()
    other_key = Records(store, Fernet(Fernet.generate_key()))
    with pytest.raises(InvalidToken):
        other_key.google_accounts("person-1")


def test_the_access_token_of_the_sign_in_is_kept_sealed_with_its_expiry(records: Records, store: SQLiteStore) -> None:
    access = "ya29.a0-access-of-the-code-exchange"
    kept = GoogleAccount(
        "ada@work.example", "1" + "2" * 20, GOOGLE_REFRESH, frozenset({"openid"}), access, 1_800_003_599.0
    )
    records.save_google_account("person-1", kept)
    raw = b"".join(p.read_bytes() for p in (store.path, Path(str(store.path) + "-wal")) if p.exists())
    assert access.encode() not in raw
    assert records.google_account("person-1", "ada@work.example") == kept


def test_a_person_keeps_several_google_accounts_each_their_own(records: Records, clock: Clock) -> None:
    records.save_google_account("person-1", account())
    records.save_google_account("person-1", account("ada@gmail.example", "1//0e-second"))
    records.save_google_account("person-1", account(token="1//0e-replaced"))
    records.save_google_account("person-2", account("bo@work.example", "1//0e-bo"))
    assert [(a.email, a.refresh_token) for a in records.google_accounts("person-1")] == [
        ("ada@work.example", "1//0e-replaced"),
        ("ada@gmail.example", "1//0e-second"),
    ]
    assert [a.email for a in records.google_accounts("person-2")] == ["bo@work.example"]
    assert records.forget_google_account("person-1", "ada@work.example") is True
    assert records.forget_google_account("person-1", "ada@work.example") is False
    assert [a.email for a in records.google_accounts("person-1")] == ["ada@gmail.example"]
    assert records.forget_google_account("person-1", "ada@gmail.example") is True
    assert records.google_accounts("person-1") == []
    clock.now += 1000
    assert records.google_accounts("person-2") == []  # unused grants end


def test_the_vault_key_comes_from_gmail_mcp_token_key(monkeypatch: pytest.MonkeyPatch) -> None:
    key = Fernet.generate_key()
    monkeypatch.setenv("GMAIL_MCP_TOKEN_KEY", key.decode())
    cipher = vault_cipher("env")
    assert Fernet(key).decrypt(cipher.encrypt(b"grant")) == b"grant"
    monkeypatch.setenv("GMAIL_MCP_TOKEN_KEY", "not-a-key")
    with pytest.raises(KeyUnavailable, match="not a Fernet key"):
        vault_cipher("env")
    monkeypatch.delenv("GMAIL_MCP_TOKEN_KEY")
    with pytest.raises(KeyUnavailable, match="GMAIL_MCP_TOKEN_KEY"):
        vault_cipher("env")
