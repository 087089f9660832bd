"""The shared store's round trips per tool call on a warm read in `--auth oauth` (issue 23: a replica pays the store
for every call, so the count is part of its latency). Counted by the store itself (`RedisStore.round_trips`, a
real redis-server), never timed.

A warm read costs two: the access token, then its grant (revocation is checked on every use) with the person's
Google accounts in one MGET (`Ledger.verify_access_with`, `StateStore.get_many`); the token check hands the
person's mailboxes to the SDK middleware in the request's scope, and the scopes a tool's check needs come from
that same read. Before: the accounts were read again by the middleware and by each scope check (eight round trips
per call, bench/replicas.py --auth oauth).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from server.emulator import Emulator
from server.remote.redis_store import RedisStore
from server.tests.support.accounts import two_account_emulator
from server.tests.support.emulator import OWNER
from server.tests.support.http_server import mcp_client
from server.tests.support.redis_server import RedisServer, fresh_namespace
from server.tests.support.remote_http import remote_server

pytestmark = pytest.mark.anyio
SEARCH = "gmail_search_messages"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def emulator(tmp_path: Path) -> Iterator[Emulator]:
    with two_account_emulator(tmp_path / "mail") as running:
        yield running


async def test_a_warm_read_costs_two_store_round_trips(
    emulator: Emulator, tmp_path: Path, redis_server: RedisServer
) -> None:
    store = RedisStore(redis_server.url, fresh_namespace())
    with remote_server(emulator, tmp_path / "server", store=store) as run:
        token = run.token_for(run.sign_in(OWNER)).access_token
        async with mcp_client(run.url, "auto", {"Authorization": f"Bearer {token}"}) as session:
            for number in range(2):  # warm: the person's clients built, the quota lease taken
                assert not (await session.call_tool(SEARCH, {"query": f"newer_than:{number + 1}d"})).is_error
            spent = []
            for number in range(3):
                before = store.round_trips
                found = await session.call_tool(SEARCH, {"query": "in:inbox", "max_results": 2 + number})
                assert not found.is_error, found.content[0].text
                spent.append(store.round_trips - before)
    assert spent == [2, 2, 2], spent
