"""Secrets and hygiene: known token values (the emulator's client secret and refresh token, every access token it
issues, and the access token the server saves back into its token file) never appear in the server's stderr log
(at DEBUG level), in error messages or in tool results, across a normal session and its faults; email addresses
are masked in logs; the token file is written owner-only.
"""

from __future__ import annotations

import json
import logging
import os
import re
import stat

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from server.auth import write_token_file
from server.runtime import observability
from server.runtime.observability import JsonFormatter, scrub
from server.tests.support.platforms import posix_permissions
from server.tests.support.reliability import (
    GET,
    SEARCH,
    SecretWatch,
    StdoutWatch,
    mcp_over_stdio,
    result_text,
    server_env,
    tally,
)

pytestmark = pytest.mark.anyio
_ADDRESS = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture
def secrets(emulator):
    watch = SecretWatch(emulator)
    yield watch
    watch.close()


async def test_a_session_with_refreshes_and_faults_leaks_no_secret_and_masks_addresses(emulator, secrets, tmp_path):
    token_path = emulator.write_token(tmp_path / "token.json")
    env = server_env(emulator, token_path, GMAIL_MCP_TIMEOUT_S="1")
    stderr_path = tmp_path / "stderr.log"
    results = []
    watch = StdoutWatch()
    with open(stderr_path, "w") as errlog, watch.watching():
        async with mcp_over_stdio(env, errlog, mode="auto") as client:

            async def call(tool: str, arguments: dict) -> None:
                results.append(await client.call_tool(tool, arguments))

            await call(SEARCH, {"query": "from:alice@example.com", "max_results": 5})
            first_id = results[-1].structured_content["messages"][0]["id"]
            await call(GET, {"message_id": first_id})
            await call(GET, {"message_id": first_id, "format": "metadata"})
            await call(GET, {"message_id": "ffffffffffffffff"})  # not_found
            await call(SEARCH, {"query": "in:inbox", "max_results": "ten"})  # invalid_input
            emulator.expire_access_tokens()  # 401 -> refresh: a second access token is issued and used
            await call(SEARCH, {"query": "in:inbox", "max_results": 10})
            emulator.add_fault(status=503, path_regex="^/token$", count=10)
            emulator.expire_access_tokens()
            await call(SEARCH, {"query": "in:inbox"})  # transient: the token endpoint is down
            emulator.reset()
            emulator.add_fault(invalid_grant=True)
            emulator.expire_access_tokens()
            await call(SEARCH, {"query": "in:inbox"})  # auth_error: invalid_grant
            emulator.reset()
            await call(GET, {"message_id": first_id})
    assert [r.is_error for r in results] == [False, False, False, True, True, False, True, True, False]
    saved = json.loads(token_path.read_text(encoding="utf-8"))
    secrets.add(saved["token"])  # the refreshed access token the server saved for its next start
    assert len(secrets.secrets) >= 4  # client secret, refresh token, and at least two access tokens

    stderr = stderr_path.read_text(encoding="utf-8")
    texts = {"stderr": stderr, **{f"result {n}": result_text(r) for n, r in enumerate(results)}}
    assert secrets.leaks(texts) == []
    # Email addresses in logs are masked (al***@example.com); results may show them: that is the user's mail.
    assert _ADDRESS.findall(stderr) == []  # a masked one (al***@example.com) does not match
    assert "alice@example.com" in result_text(results[0])  # (the search really returned addresses)
    assert watch.bad_lines == []
    for line in stderr.splitlines():
        json.loads(line)  # stderr is JSON lines only
    tally("secret_session", len(texts))


def test_scrub_redacts_bearer_tokens_and_masks_addresses():
    line = "Authorization: Bearer ya29.a0AfH6SMBx-secret-token refresh_token=1//0gSecretRefresh for alice@example.com"
    scrubbed = scrub(line)
    assert "ya29.a0AfH6SMBx-secret-token" not in scrubbed and "1//0gSecretRefresh" not in scrubbed
    assert "alice@example.com" not in scrubbed and "al***@example.com" in scrubbed
    record = logging.LogRecord("gmail_mcp.x", logging.WARNING, __file__, 1, "mail from bob@example.org", None, None)
    record.detail = "Bearer ya29.another-secret-value for carol@example.net"
    entry = json.loads(JsonFormatter().format(record))  # every log line goes through this formatter
    assert entry["event"] == "mail from b***@example.org" and "ya29.another" not in entry["detail"]
    assert "ca***@example.net" in entry["detail"]


# Letters that case-insensitive patterns match beyond ASCII (Kelvin sign, long s, dotless/dotted i) sit among the
# token words' own characters, so the quick checks in front of the patterns are tried where they could slip.
_NEAR_SECRETS = st.text(st.sampled_from("bearBEAR acces_tokenTOKENrfhsSH=:\"'./+-@xy.z\u212a\u017f\u0130\u0131é9"))


@given(st.one_of(_NEAR_SECRETS, st.text()))
@example("acce\u017f\u017f_to\u212aen=abcdefgh12345")
@example("BEARER   abcdefgh.ijk")
def test_scrub_masks_exactly_what_its_patterns_would_without_the_quick_checks(text):
    unconditional = observability.mask_email(
        observability._BEARER.sub(lambda m: m.group(1) + "[redacted]", text)  # type: ignore[attr-defined]
    )
    assert scrub(text) == unconditional


@posix_permissions
def test_token_file_is_written_owner_only_whatever_the_umask(tmp_path):
    path = tmp_path / "token.json"
    path.write_text("{}")
    path.chmod(0o666)
    old_umask = os.umask(0)
    try:
        write_token_file(path, {"refresh_token": "r", "client_id": "c", "client_secret": "s"})
    finally:
        os.umask(old_umask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["token.json"]  # no temporary file left behind
