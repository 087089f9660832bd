"""No cold-start penalty: the session's warm-up does the first call's extra work before the call, and an expired
access token costs exactly one token request, nothing else. Pinned by the emulator's request log."""

from __future__ import annotations

import datetime as dt
import logging

import pytest

from server.tests.support.mailbox_stack import (
    BATCH_PATH,
    LIST_PATH,
    PROFILE_PATH,
    SEARCH,
    changing_mailbox,
    cost_of,
    shape,
)

pytestmark = pytest.mark.anyio
TOKEN_PATH = "/token"
QUERY = {"query": "in:inbox", "max_results": 10}
NO_CACHES = {"GMAIL_MCP_SEARCH_CACHE_SIZE": "0", "GMAIL_MCP_SUMMARY_CACHE_ENTRIES": "0"}  # token costs alone


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_warm_up_refreshes_connects_and_learns_the_history_id_before_the_first_call(tmp_path, mode):
    async with changing_mailbox(tmp_path, mode=mode, warm=False) as stack:
        await stack.client.list_tools()  # legacy: the initialized notification already started it
        import anyio

        assert await anyio.to_thread.run_sync(stack.registry.warmed_up.wait, 30)
        warm_up = stack.emulator.requests()
        connections = stack.emulator.info()["connections_accepted"]
        first, requests = await stack.call(SEARCH, QUERY)
    # The token file has no access token: the warm-up refreshed it, then opened the API connection.
    assert shape(warm_up) == [(TOKEN_PATH, None), (PROFILE_PATH, None)]
    assert shape(requests) == [(LIST_PATH, None), (BATCH_PATH, 11)]
    assert cost_of(first)["token_requests"] == 0 and cost_of(first)["requests"] == 2
    assert stack.emulator.info()["connections_accepted"] == connections  # the warm connection was reused
    assert stack.gmail.known_history_id == stack.emulator.info()["history_id"]


async def test_without_warm_up_an_expired_token_costs_exactly_one_token_request(tmp_path):
    async with changing_mailbox(tmp_path, warm=False, GMAIL_MCP_WARM_UP="0", **NO_CACHES) as stack:
        first, requests = await stack.call(SEARCH, QUERY)
        warm, warm_requests = await stack.call(SEARCH, {**QUERY, "max_results": 9})
    assert shape(requests) == [(TOKEN_PATH, None), (LIST_PATH, None), (BATCH_PATH, 10)]
    assert shape(warm_requests) == [(LIST_PATH, None), (BATCH_PATH, 9)]
    assert cost_of(first)["token_requests"] == 1 and cost_of(first)["requests"] == cost_of(warm)["requests"] == 2


async def test_a_token_expiring_mid_session_costs_one_token_request_and_no_reconnect(tmp_path):
    async with changing_mailbox(tmp_path, **NO_CACHES) as stack:
        await stack.call(SEARCH, QUERY)
        credentials = stack.registry.get(None).tokens.get()
        credentials.expiry = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None) - dt.timedelta(minutes=1)
        connections = stack.emulator.info()["connections_accepted"]
        result, requests = await stack.call(SEARCH, {**QUERY, "max_results": 8})
    assert shape(requests) == [(TOKEN_PATH, None), (LIST_PATH, None), (BATCH_PATH, 8)]
    assert cost_of(result)["token_requests"] == 1
    # one new connection, the token endpoint's (another host at Google); the API connection is kept
    assert stack.emulator.info()["connections_accepted"] == connections + 1


async def test_a_failed_warm_up_is_quiet_and_the_first_call_explains(tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="gmail_mcp")
    async with changing_mailbox(tmp_path, warm=False, GMAIL_TOKEN_PATH=str(tmp_path / "absent.json")) as stack:
        await stack.client.list_tools()
        import anyio

        assert await anyio.to_thread.run_sync(stack.registry.warmed_up.wait, 30)
        result, requests = await stack.call(SEARCH, QUERY, ok=False)
    assert requests == [] and result.is_error
    assert result.meta["gmail-mcp/error"]["category"] == "auth_error"
    assert result.meta["gmail-mcp/cost"]["requests"] == 0
    stopped = [record for record in caplog.records if record.getMessage() == "warm-up stopped"]
    assert len(stopped) == 1 and stopped[0].levelno == logging.INFO
