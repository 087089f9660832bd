"""Live auth suite of the design document (4 cases). It works on a copy of the token file: the user's real token
is never renamed, corrupted or deleted.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import pytest

from server.auth import TokenStore
from server.errors import AuthError

pytestmark = pytest.mark.live


def store_for(live_gmail, path):
    return TokenStore(live_gmail.settings.with_overrides(token_path=path))


def test_valid_token_loads(live_gmail, live_token_copy):
    assert store_for(live_gmail, live_token_copy).get().valid


def test_expired_access_token_is_refreshed(live_gmail, live_token_copy):
    info = json.loads(live_token_copy.read_text())
    info.update(token="stale", expiry=(datetime.utcnow() - timedelta(hours=1)).replace(microsecond=0).isoformat())
    live_token_copy.write_text(json.dumps(info))
    credentials = store_for(live_gmail, live_token_copy).get()
    assert credentials.valid and credentials.token != "stale"


def test_missing_token_file_says_to_run_auth_cli(live_gmail, tmp_path):
    with pytest.raises(AuthError) as caught:
        store_for(live_gmail, tmp_path / "absent.json").get()
    assert "auth_cli.py" in caught.value.hint


def test_corrupted_token_file_is_a_clear_error(live_gmail, live_token_copy):
    live_token_copy.write_text("{ this is not json")
    with pytest.raises(AuthError) as caught:
        store_for(live_gmail, live_token_copy).get()
    assert "not valid JSON" in caught.value.message
