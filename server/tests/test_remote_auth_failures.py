"""`--auth oauth`: which 401s count towards the failed-authentication limit of a client address.

claude.ai and ChatGPT connect from a few shared egress addresses, so the 401 that starts every sign-in (no token
yet: the client learns where to sign in from it) and the 401 of a token this server issued that has since expired
(the client refreshes) must not count, or the tenth person signing in from one address within a minute gets 429.
Tokens this server never issued (guessing, log flooding) still count.

Evidence: MCP authorization spec 2025-11-25 ("Authorization Server Discovery": the client's first request carries
no token and the 401's `WWW-Authenticate` starts discovery); RFC 6750 3.1 (`invalid_token` for an expired token).
The limiter's clock is frozen (injected), the store's clock moved by the test: no wall-clock bounds.
"""

from __future__ import annotations

import json
import secrets
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from server.emulator import Emulator
from server.protocol.http_guard import FailedAuthLimiter
from server.remote.sqlite_store import SQLiteStore
from server.tests.support.accounts import two_account_emulator
from server.tests.support.emulator import OWNER
from server.tests.support.remote_http import RemoteRun, remote_server
from server.tests.support.remote_state import Clock

LIMIT = 10
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}


@pytest.fixture(scope="module")
def emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Emulator]:
    with two_account_emulator(tmp_path_factory.mktemp("failures")) as running:
        yield running


@pytest.fixture
def remote(emulator: Emulator, tmp_path: Path, clock: Clock) -> Iterator[RemoteRun]:
    emulator.reset()
    with remote_server(emulator, tmp_path, store=SQLiteStore(tmp_path / "state.sqlite3", clock=clock)) as run:
        run.remote.guard.limiter = FailedAuthLimiter(LIMIT, clock=lambda: 0.0)  # one frozen minute
        yield run


def post(run: RemoteRun, token: str | None) -> int:
    """POSTs an initialize to /mcp from 127.0.0.1 (every request of the test: one shared address)."""
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(run.url, json.dumps(INITIALIZE).encode(), headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as refused:
        return int(refused.code)


def test_thirty_sign_ins_and_refreshes_from_one_address_are_never_limited(remote: RemoteRun, clock: Clock) -> None:
    person = remote.sign_in(OWNER)
    statuses = []
    for _ in range(30):
        statuses.append(post(remote, None))  # the request that starts a sign-in: no token yet
        token = remote.token_for(person).access_token
        statuses.append(post(remote, token))  # signed in
        clock.now += 3601  # an hour later the access token has expired: the client presents it, then refreshes
        statuses.append(post(remote, token))
    assert statuses == [401, 200, 401] * 30


def test_eleven_made_up_tokens_from_one_address_get_429(remote: RemoteRun) -> None:
    statuses = [post(remote, secrets.token_urlsafe(32)) for _ in range(LIMIT + 1)]
    assert statuses == [401] * LIMIT + [429]
    assert post(remote, None) == 429  # the address stays blocked for the rest of the window
