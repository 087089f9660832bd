"""auth.py: load, check and refresh the token file; every failure is an actionable auth_error. No browser, ever."""

from __future__ import annotations

import json
import os
import stat
from datetime import datetime, timedelta

import pytest

from server.auth import TokenStore, read_token_info, token_file_too_open, write_token_file
from server.errors import AuthError, TransientError
from server.runtime.config import load_settings
from server.tests.support.fake_gmail import json_response, token_store

CLIENT = {"client_id": "cid.apps.googleusercontent.com", "client_secret": "shh", "refresh_token": "1//refresh-xyz"}


@pytest.fixture
def settings(tmp_path):
    return load_settings(env={"GMAIL_TOKEN_PATH": str(tmp_path / ".token.json")}, dotenv=False)


def write(settings, info) -> None:
    settings.token_path.write_text(info if isinstance(info, str) else json.dumps(info))


def expired_token(**extra):
    past = (datetime.utcnow() - timedelta(hours=2)).replace(microsecond=0)
    return {**CLIENT, "token": "old-access", "expiry": past.isoformat(), **extra}


def test_missing_file_says_to_run_auth_cli(settings):
    with pytest.raises(AuthError) as caught:
        TokenStore(settings).get()
    assert "No Gmail token file" in caught.value.message and "auth_cli.py" in caught.value.hint
    assert caught.value.code == "auth_error"


@pytest.mark.parametrize(
    "content, fragment",
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "JSON object"),
        ({"client_id": "a", "client_secret": "b"}, "no refresh_token"),
        ({**CLIENT, "scopes": ["https://www.googleapis.com/auth/gmail.metadata"]}, "too narrow a scope"),
    ],
)
def test_broken_token_files_are_explained(settings, content, fragment):
    write(settings, content)
    with pytest.raises(AuthError) as caught:
        TokenStore(settings).get()
    assert fragment in caught.value.message
    assert "auth_cli.py" in caught.value.hint


def test_expired_token_is_refreshed_and_saved(settings):
    write(settings, expired_token())
    store, mock = token_store(settings, [json_response({"access_token": "fresh-access", "expires_in": 3600})])
    credentials = store.get()
    assert credentials.token == "fresh-access" and credentials.valid
    uri, method, raw_body, _ = mock.request_sequence[0]
    body = raw_body.decode()
    assert uri == "https://oauth2.googleapis.com/token" and method == "POST"
    assert "grant_type=refresh_token" in body and "refresh_token=1%2F%2Frefresh-xyz" in body
    saved = json.loads(settings.token_path.read_text())
    assert saved["token"] == "fresh-access" and saved["refresh_token"] == CLIENT["refresh_token"]
    assert store.get() is credentials and len(mock.request_sequence) == 1  # no second refresh


def test_token_uri_override_is_honoured(settings):
    settings = settings.with_overrides(token_uri="http://127.0.0.1:9/token")
    write(settings, expired_token())
    store, mock = token_store(settings, [json_response({"access_token": "a", "expires_in": 60})])
    store.get()
    assert mock.request_sequence[0][0] == "http://127.0.0.1:9/token"


def test_invalid_grant_names_the_seven_day_testing_limit(settings):
    write(settings, expired_token())
    answer = json_response({"error": "invalid_grant", "error_description": "Token has been expired or revoked."}, 400)
    store, _ = token_store(settings, [answer])
    with pytest.raises(AuthError) as caught:
        store.get()
    assert "7 days" in caught.value.message and "Testing" in caught.value.message
    assert "auth_cli.py" in caught.value.hint


def test_token_endpoint_outage_is_transient(settings, monkeypatch):
    from google.auth import _exponential_backoff

    # google-auth would retry a 5xx token endpoint itself, sleeping 1 s and 2 s: a second retry loop hidden inside
    # ours. auth.py stops it at the first answer, so nothing may sleep here and the endpoint is asked exactly once.
    waits: list[float] = []
    monkeypatch.setattr(_exponential_backoff.time, "sleep", waits.append)
    write(settings, expired_token())
    store, mock = token_store(settings, [json_response({"error": "internal"}, 503)] * 4)
    with pytest.raises(TransientError):
        store.get()
    assert waits == []
    assert len(mock.request_sequence) == 1


def test_a_token_written_while_running_is_picked_up_without_restart(settings):
    store, _ = token_store(settings, [json_response({"access_token": "fresh", "expires_in": 3600})])
    with pytest.raises(AuthError):
        store.get()
    write(settings, expired_token())
    assert store.get().token == "fresh"


def test_deleting_the_token_file_is_noticed_at_once(settings):
    future = (datetime.utcnow() + timedelta(hours=1)).replace(microsecond=0).isoformat()
    write(settings, {**CLIENT, "token": "valid", "expiry": future})
    store = TokenStore(settings)
    assert store.get().token == "valid"
    settings.token_path.unlink()
    with pytest.raises(AuthError):
        store.get()


def test_token_files_are_written_owner_only_and_atomically(tmp_path):
    path = tmp_path / "nested" / "token.json"
    write_token_file(path, CLIENT)
    assert json.loads(path.read_text()) == CLIENT
    assert list(path.parent.iterdir()) == [path]  # no temp file left behind
    if os.name == "posix":
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert not token_file_too_open(path)
        path.chmod(0o644)
        assert token_file_too_open(path)


def test_read_token_info_accepts_broader_scopes(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(json.dumps({**CLIENT, "scopes": "https://mail.google.com/"}))
    assert read_token_info(path)["client_id"] == CLIENT["client_id"]


def test_concurrent_calls_share_one_failed_refresh_instead_of_queueing_their_own(settings):
    import threading
    import time

    import httplib2

    class SlowOutage:
        """A token endpoint that takes a while to fail (a 503 after 0.2 s)."""

        requests = 0

        def request(self, *args, **kwargs):
            SlowOutage.requests += 1
            time.sleep(0.2)
            return httplib2.Response({"status": "503"}), b'{"error": "backend"}'

    write(settings, expired_token())
    store = TokenStore(settings, http_factory=SlowOutage)
    errors: list[Exception] = []

    def call() -> None:
        try:
            store.get()
        except Exception as error:
            errors.append(error)

    threads = [threading.Thread(target=call) for _ in range(5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    assert len(errors) == 5 and all(isinstance(error, TransientError) for error in errors)
    assert SlowOutage.requests == 1
