"""OAuth against the emulator: google-auth's real refresh path, 401s, expiry, invalid_grant, invalid_client."""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from google.auth.exceptions import RefreshError
from googleapiclient.errors import HttpError

from server.emulator import CLIENT_ID, CLIENT_SECRET, READONLY_SCOPE, REFRESH_TOKEN, Emulator
from server.tests.support.emulator import gmail_service


@pytest.fixture
def token_file(emulator: Emulator, tmp_path: Path) -> Path:
    return emulator.write_token(tmp_path / "token.json")


def _post_token(emulator: Emulator, **form: str) -> tuple[int, dict[str, Any]]:
    data = urllib.parse.urlencode(form).encode()
    try:
        with urllib.request.urlopen(emulator.token_uri, data=data, timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def _get(url: str, token: str | None = None) -> tuple[int, dict[str, Any], dict[str, str]]:
    request = urllib.request.Request(url)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.loads(response.read()), dict(response.headers)
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read()), dict(error.headers)


def test_token_file_shape_and_mode(emulator: Emulator, token_file: Path) -> None:
    info = json.loads(token_file.read_text())
    assert info == {
        "type": "authorized_user",
        "client_id": CLIENT_ID,
        "client_secret": CLIENT_SECRET,
        "refresh_token": REFRESH_TOKEN,
        "token_uri": emulator.token_uri,
        "scopes": [READONLY_SCOPE],
        "account": emulator.store.email_address,  # google-auth's field for whose credential it is
    }
    assert os.stat(token_file).st_mode & 0o777 == 0o600


def test_first_call_refreshes_then_uses_the_access_token(emulator: Emulator, token_file: Path) -> None:
    gmail = gmail_service(emulator, token_file)
    gmail.users().getProfile(userId="me").execute()
    gmail.users().labels().list(userId="me").execute()
    assert [(e["path"], e["status"]) for e in emulator.requests()] == [
        ("/token", 200),
        ("/gmail/v1/users/me/profile", 200),
        ("/gmail/v1/users/me/labels", 200),
    ]


def test_expired_access_token_gets_401_then_refresh_then_success(emulator: Emulator, token_file: Path) -> None:
    gmail = gmail_service(emulator, token_file)
    gmail.users().getProfile(userId="me").execute()
    emulator.expire_access_tokens()
    assert gmail.users().getProfile(userId="me").execute()["emailAddress"]
    assert [(e["path"], e["status"]) for e in emulator.requests()][1:] == [
        ("/gmail/v1/users/me/profile", 200),
        ("/gmail/v1/users/me/profile", 401),
        ("/token", 200),
        ("/gmail/v1/users/me/profile", 200),
    ]


def test_missing_or_unknown_bearer_is_gmail_shaped_401(emulator: Emulator, token_file: Path) -> None:
    for token in (None, "ya29.not-issued-here"):
        status, body, headers = _get(emulator.url + "/gmail/v1/users/me/profile", token)
        assert status == 401 and headers["WWW-Authenticate"].startswith("Bearer")
        assert body["error"]["status"] == "UNAUTHENTICATED" and body["error"]["code"] == 401
        assert body["error"]["errors"][0]["reason"] == "authError"


def test_access_tokens_expire_after_ttl(make_emulator: Callable[..., Emulator]) -> None:
    short = make_emulator(token_ttl_s=0.2)
    status, grant = _post_token(
        short,
        grant_type="refresh_token",
        client_id=CLIENT_ID,
        client_secret=CLIENT_SECRET,
        refresh_token=REFRESH_TOKEN,
    )
    assert status == 200 and grant["token_type"] == "Bearer" and grant["scope"] == READONLY_SCOPE
    assert _get(short.url + "/gmail/v1/users/me/profile", grant["access_token"])[0] == 200
    time.sleep(0.25)
    assert _get(short.url + "/gmail/v1/users/me/profile", grant["access_token"])[0] == 401


def test_revoked_refresh_token_is_invalid_grant(emulator: Emulator, token_file: Path) -> None:
    emulator.revoke_refresh_tokens()
    gmail = gmail_service(emulator, token_file)
    with pytest.raises(RefreshError) as caught:
        gmail.users().getProfile(userId="me").execute()
    assert "invalid_grant" in str(caught.value) and not caught.value.retryable
    emulator.reset()  # restores the refresh token
    assert gmail.users().getProfile(userId="me").execute()["emailAddress"]


def test_token_endpoint_errors(emulator: Emulator, token_file: Path) -> None:
    good = {"grant_type": "refresh_token", "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET}
    assert _post_token(emulator, **good, refresh_token="1//someone-else") == (
        400,
        {"error": "invalid_grant", "error_description": "Token has been expired or revoked."},
    )
    status, body = _post_token(emulator, **{**good, "client_secret": "wrong"}, refresh_token=REFRESH_TOKEN)
    assert (status, body["error"]) == (401, "invalid_client")
    status, body = _post_token(emulator, **{**good, "grant_type": "password"}, refresh_token=REFRESH_TOKEN)
    assert (status, body["error"]) == (400, "unsupported_grant_type")


def test_invalid_grant_fault_on_token_endpoint(emulator: Emulator, token_file: Path) -> None:
    emulator.add_fault(invalid_grant=True)
    gmail = gmail_service(emulator, token_file)
    with pytest.raises(RefreshError, match="invalid_grant"):
        gmail.users().getProfile(userId="me").execute()
    assert gmail.users().getProfile(userId="me").execute()["emailAddress"]  # one-shot


def test_http_error_for_other_user_is_not_auth(emulator: Emulator, token_file: Path) -> None:
    gmail = gmail_service(emulator, token_file)
    with pytest.raises(HttpError) as caught:
        gmail.users().messages().list(userId="other@example.com").execute()
    assert caught.value.resp.status == 403
