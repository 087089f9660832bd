"""OAuth and token-file faults end to end (emulator -> server subprocess -> MCP client over stdio): the token
endpoint down, invalid_grant, a token revoked mid-session, and the token file deleted, corrupted or made
unreadable while the server runs. Each ends in the right category and hint, quickly, and the same session
serves the next call once the fault is gone (no restart).
"""

from __future__ import annotations

import json
import os

import pytest

from server.tests.support.reliability import SEARCH, error_of, fault_stack

pytestmark = pytest.mark.anyio
INBOX = {"query": "in:inbox", "max_results": 3}
KNOWN_CLIENT_SECRET = "reliability-client-secret-6f1d2c"  # a test value that must never be echoed


@pytest.fixture(scope="module")
def anyio_backend():
    return "asyncio"


@pytest.fixture(scope="module")
async def stack(tmp_path_factory):
    async with fault_stack(tmp_path_factory.mktemp("auth-faults")) as running:
        running.secrets.add(KNOWN_CLIENT_SECRET)
        yield running


@pytest.fixture(autouse=True)
async def clean_state(stack):
    stack.emulator.reset()
    yield
    stack.restore_token_file()  # whatever the case did to the file, the next one starts from a good one


def token_requests(stack) -> list[int]:
    return [entry["status"] for entry in stack.emulator.requests() if entry["path"] == "/token"]


@pytest.mark.parametrize("fault", [{"status": 503, "reason": "temporarily_unavailable"}, {"reset": True}])
async def test_token_endpoint_down_is_transient_and_quick(stack, fault):
    stack.emulator.expire_access_tokens()  # the next API call answers 401, so the server must refresh
    stack.emulator.add_fault(path_regex="^/token$", count=50, **fault)
    result, _ = await stack.call(SEARCH, INBOX, budget_s=10)
    error = error_of(result)
    assert error["category"] == "transient" and error["retry_count"] == 2
    # One token request per attempt: google-auth's own sleeping retry loop (3 tries, 1 s + 2 s) is bypassed.
    assert len(token_requests(stack)) == 3
    await stack.serves_next_call(f"token endpoint down ({next(iter(fault))})", result)


async def test_invalid_grant_at_refresh_names_the_seven_day_testing_limit(stack):
    stack.emulator.add_fault(invalid_grant=True)  # the fresh token file has no access token: refresh first
    result, _ = await stack.call(SEARCH, INBOX, budget_s=5)
    error = error_of(result)
    assert error["category"] == "auth_error" and error["retry_count"] == 0
    assert "invalid_grant" in error["message"] and "7 days" in error["message"] and "Testing" in error["message"]
    assert "auth_cli.py" in error["hint"] and "In production" in error["hint"]
    await stack.serves_next_call("invalid_grant on refresh", result)


async def test_token_revoked_mid_session(stack):
    warm, _ = await stack.call(SEARCH, INBOX, budget_s=5)
    assert not warm.is_error
    stack.emulator.revoke_refresh_tokens()
    stack.emulator.expire_access_tokens()
    result, _ = await stack.call(SEARCH, INBOX, budget_s=5)
    error = error_of(result)
    assert error["category"] == "auth_error" and "7 days" in error["message"]
    statuses = [(entry["path"], entry["status"]) for entry in stack.emulator.requests()]
    assert ("/gmail/v1/users/me/messages", 401) in statuses and ("/token", 400) in statuses  # 401, invalid_grant
    assert statuses.count(("/token", 400)) == 1  # invalid_grant is final: never asked again, nothing waited for
    stack.emulator.reset()  # the user re-authorizes: here, the refresh token works again
    await stack.serves_next_call("token revoked mid-session", warm, result)


async def test_token_file_deleted_while_running(stack):
    stack.token_path.unlink()
    result, _ = await stack.call(SEARCH, INBOX, budget_s=5)
    error = error_of(result)
    assert error["category"] == "auth_error" and "No Gmail token file" in error["message"]
    assert "auth_cli.py" in error["hint"] and "without a restart" in error["hint"]
    assert stack.emulator.requests() == []  # reported at once, not masked by the cached access token
    stack.restore_token_file()
    await stack.serves_next_call("token file deleted", result)


async def test_token_file_corrupted_while_running(stack):
    stack.token_path.write_text('{"refresh_token": "1//trunc', encoding="utf-8")
    result, _ = await stack.call(SEARCH, INBOX, budget_s=5)
    error = error_of(result)
    assert error["category"] == "auth_error" and "not valid JSON" in error["message"]
    assert "auth_cli.py" in error["hint"]
    stack.restore_token_file()
    await stack.serves_next_call("token file corrupted", result)


async def test_token_file_without_refresh_token(stack):
    info = json.loads(stack.token_path.read_text(encoding="utf-8"))
    del info["refresh_token"]
    stack.token_path.write_text(json.dumps(info), encoding="utf-8")
    result, _ = await stack.call(SEARCH, INBOX, budget_s=5)
    error = error_of(result)
    assert error["category"] == "auth_error" and "refresh_token" in error["message"]
    stack.restore_token_file()
    await stack.serves_next_call("token file without refresh_token", result)


@pytest.mark.parametrize("how", ["chmod 000", "replaced by a directory"])
async def test_token_file_made_unreadable_while_running(stack, how):
    if how == "chmod 000":
        if os.name != "posix" or os.geteuid() == 0:
            pytest.skip("root (or a non-POSIX system) reads a mode-000 file anyway")
        stack.token_path.chmod(0)
    else:
        stack.token_path.unlink()
        stack.token_path.mkdir()
    result, _ = await stack.call(SEARCH, INBOX, budget_s=5)
    error = error_of(result)
    assert error["category"] == "auth_error" and "Cannot read the token file" in error["message"]
    stack.restore_token_file()
    await stack.serves_next_call(f"token file unreadable ({how})", result)


async def test_rejected_client_secret_is_never_echoed(stack):
    info = json.loads(stack.token_path.read_text(encoding="utf-8"))
    info.update(client_secret=KNOWN_CLIENT_SECRET, token="ya29.stale-access-token-never-echoed")
    stack.secrets.add(info["token"])
    stack.token_path.write_text(json.dumps(info), encoding="utf-8")
    result, _ = await stack.call(SEARCH, INBOX, budget_s=5)
    error = error_of(result)
    assert error["category"] == "auth_error" and "invalid_client" in error["message"]
    assert "credentials.json" in error["hint"]
    stack.restore_token_file()
    await stack.serves_next_call("invalid_client (secret never echoed)", result)
