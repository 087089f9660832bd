"""Streamable HTTP mode end to end: `python -m server.main --http` as a subprocess, the official MCP client in
both protocol eras, two accounts served by the emulator (one mailbox each), bearer / API-key authentication.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator

import httpx2
import pytest

from server.runtime.config import PROJECT_ROOT
from server.tests.support.accounts import WORK_OWNER, WORK_SUBJECTS, two_account_emulator
from server.tests.support.emulator import OWNER, emulator_env, wait_until_in_flight
from server.tests.support.http_server import TEST_SERVER_ENV, HttpServer, http_server, mcp_client, wait_for_exit

pytestmark = [pytest.mark.anyio, pytest.mark.slow]  # HTTP server subprocesses: the slow tier (`pytest -m slow`)
MODES = ["legacy", "auto"]
TOKEN_ALL = "all-accounts-token-0123456789abcdef"
TOKEN_WORK = "work-only-token-0123456789abcdef"
SEARCH = "gmail_search_messages"


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[object, dict[str, str]]]:
    """The two-account emulator and the server environment: `default` (me@example.com) and `work`."""
    scratch = tmp_path_factory.mktemp("http")
    with two_account_emulator(scratch) as emulator:
        personal = emulator.write_token(scratch / "home" / ".token.json")
        (scratch / "home" / "tokens").mkdir(mode=0o700)
        emulator.write_token(scratch / "home" / "tokens" / "work.json", user=WORK_OWNER)
        tokens = scratch / "http-tokens"
        tokens.write_text(f"# who may call\n{TOKEN_ALL}\n{TOKEN_WORK} work  # the work laptop\n")
        # Every test here connects from 127.0.0.1: the failed-auth limit (test_http_guard.py) is raised.
        env = emulator_env(
            emulator,
            personal,
            **TEST_SERVER_ENV,
            GMAIL_MCP_HTTP_TOKEN_FILE=str(tokens),
            GMAIL_MCP_HTTP_AUTH_FAILURES="1000",
        )
        yield emulator, env


@pytest.fixture(scope="module")
def server(setup) -> Iterator[HttpServer]:
    with http_server(setup[1]) as running:
        yield running


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("headers", [{}, bearer("wrong-token-0123456789abcdef"), {"X-API-Key": "nope"}])
async def test_without_the_right_token_the_client_gets_401_and_no_tool_runs(server, mode, headers):
    statuses = []

    async def record(response):
        statuses.append(response.status_code)

    before = server.log_text().count('"tool start"')
    with pytest.raises(Exception):  # noqa: B017 - the client surfaces the 401 as its own error type
        async with mcp_client(server.url, mode, headers, hooks=[record]) as client:
            await client.list_tools()
    assert statuses and set(statuses) == {401}
    assert server.log_text().count('"tool start"') == before
    answer = httpx2.post(server.url, json={}, headers=headers)
    assert answer.status_code == 401 and answer.headers["www-authenticate"].startswith('Bearer realm="gmail-mcp"')
    if headers:
        assert 'error="invalid_token"' in answer.headers["www-authenticate"]
        secret = next(iter(headers.values())).removeprefix("Bearer ")
        assert secret not in server.log_text()  # never logged, not even a wrong one
    assert '"authentication failed"' in server.log_text()


@pytest.mark.parametrize("mode", MODES)
async def test_the_right_token_lists_tools_and_answers_a_search_from_each_account(server, mode):
    async with mcp_client(server.url, mode, bearer(TOKEN_ALL)) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert {SEARCH, "gmail_get_message"} <= set(tools)
        assert tools[SEARCH].input_schema["properties"]["account"]["enum"] == ["default", "work"]
        personal = await client.call_tool(SEARCH, {"query": "subject:Quarterly"})
        work = await client.call_tool(SEARCH, {"query": "in:inbox", "max_results": 10, "account": "work"})
    assert personal.is_error is False and work.is_error is False, (personal.content, work.content)
    assert personal.structured_content["mailbox"] == OWNER and personal.structured_content["account"] == "default"
    assert work.structured_content["mailbox"] == WORK_OWNER and work.structured_content["account"] == "work"
    assert {item["subject"] for item in work.structured_content["messages"]} == set(WORK_SUBJECTS)
    assert not {item.get("subject") for item in personal.structured_content["messages"]} & set(WORK_SUBJECTS)
    assert work.content[0].text.startswith(f"Mailbox: {WORK_OWNER} (account 'work')")


@pytest.mark.parametrize("mode", MODES)
async def test_an_api_key_that_reaches_only_work_sees_only_work(server, mode):
    async with mcp_client(server.url, mode, {"X-API-Key": TOKEN_WORK}) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert "account" not in tools[SEARCH].input_schema["properties"]  # one reachable account: no choice
        default = await client.call_tool(SEARCH, {"query": "in:inbox"})
        other = await client.call_tool(SEARCH, {"query": "in:inbox", "account": "default"})
    assert default.structured_content["mailbox"] == WORK_OWNER
    assert other.is_error and other.meta["gmail-mcp/error"]["category"] == "invalid_input"
    assert "Use one of the configured accounts: work" in other.meta["gmail-mcp/error"]["hint"]


async def test_an_unknown_account_is_invalid_input_listing_the_configured_ones(server):
    async with mcp_client(server.url, "auto", bearer(TOKEN_ALL)) as client:
        result = await client.call_tool(SEARCH, {"query": "in:inbox", "account": "wrok"})
    error = result.meta["gmail-mcp/error"]
    assert error["category"] == "invalid_input" and "default, work" in error["hint"]


@pytest.mark.parametrize("mode", MODES)
async def test_a_revoked_token_on_one_account_leaves_the_other_working(setup, server, mode):
    emulator = setup[0]
    emulator.revoke_refresh_tokens(WORK_OWNER)
    emulator.expire_access_tokens()
    try:
        async with mcp_client(server.url, mode, bearer(TOKEN_ALL)) as client:
            work = await client.call_tool(SEARCH, {"query": "in:inbox", "account": "work"})
            personal = await client.call_tool(SEARCH, {"query": "in:inbox"})
    finally:
        emulator.reset()
    error = work.meta["gmail-mcp/error"]
    assert error["category"] == "auth_error" and error["message"].startswith("Account 'work':")
    assert "--account work" in error["hint"]
    assert personal.is_error is False and personal.structured_content["mailbox"] == OWNER


async def test_a_foreign_origin_gets_403_and_a_loopback_one_is_served(server):
    statuses = []

    async def record(response):
        statuses.append(response.status_code)

    headers = {**bearer(TOKEN_ALL), "Origin": "http://evil.example"}
    with pytest.raises(Exception):  # noqa: B017
        async with mcp_client(server.url, "auto", headers, hooks=[record]) as client:
            await client.list_tools()
    assert statuses and set(statuses) == {403}
    port = server.url.split(":")[2].split("/")[0]
    async with mcp_client(server.url, "auto", {**bearer(TOKEN_ALL), "Origin": f"http://localhost:{port}"}) as client:
        assert (await client.list_tools()).tools


def test_a_foreign_host_header_is_refused_on_a_loopback_bind(server):
    answer = httpx2.post(server.url, json={}, headers={**bearer(TOKEN_ALL), "Host": "attacker.example:80"})
    assert answer.status_code == 421


def test_health_needs_no_token_and_metrics_do(server):
    health = httpx2.get(server.base + "/healthz")
    assert health.status_code == 200 and health.json() == {"status": "ok"}
    assert httpx2.get(server.base + "/metrics").status_code == 401
    metrics = httpx2.get(server.base + "/metrics", headers=bearer(TOKEN_ALL))
    assert metrics.status_code == 200 and metrics.headers["content-type"].startswith("text/plain")
    for series in ("gmail_mcp_tool_calls_total", "gmail_mcp_tool_latency_seconds_bucket", "gmail_mcp_search_pages"):
        assert series in metrics.text
    assert 'account="work"' in metrics.text and "gmail_mcp_http_auth_failures_total" in metrics.text


def test_an_oversized_body_is_refused(server):
    body = b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"pad": "' + b"x" * (2 * 1024 * 1024) + b'"}}'
    answer = httpx2.post(
        server.url,
        content=body,
        headers={
            **bearer(TOKEN_ALL),
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        },
    )
    assert answer.status_code == 413


def test_a_non_loopback_bind_without_a_token_refuses_to_start(setup):
    env = {key: value for key, value in setup[1].items() if key != "GMAIL_MCP_HTTP_TOKEN_FILE"}
    result = subprocess.run(
        [sys.executable, "-m", "server.main", "--http", "0.0.0.0:0"],
        env={**os.environ, "PYTHONPATH": str(PROJECT_ROOT), **env},
        cwd="/",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2 and "refusing to serve on 0.0.0.0" in result.stderr
    assert "GMAIL_MCP_HTTP_TOKEN" in result.stderr and result.stdout == ""


@pytest.mark.skipif(os.name != "posix", reason="SIGTERM is POSIX")
@pytest.mark.parametrize("stateless", ["0", "1"])
async def test_sigterm_finishes_the_call_in_flight_then_exits_cleanly(setup, stateless):
    import anyio

    emulator, env = setup
    with http_server({**env, "GMAIL_MCP_HTTP_STATELESS": stateless}) as running:
        async with mcp_client(running.url, "legacy", bearer(TOKEN_ALL)) as client:
            await client.list_tools()
            emulator.add_fault(latency_ms=1500, path_regex=r"/messages$", count=1)
            try:
                async with anyio.create_task_group() as group:
                    results = []

                    async def slow_call() -> None:
                        results.append(await client.call_tool(SEARCH, {"query": "in:inbox", "max_results": 2}))

                    group.start_soon(slow_call)
                    await anyio.to_thread.run_sync(wait_until_in_flight, emulator, r"/messages$")  # waiting on Gmail
                    running.process.send_signal(signal.SIGTERM)
            finally:
                emulator.reset()
        assert results and results[0].is_error is False  # answered although shutdown had begun
        assert wait_for_exit(running.process, 30) == 0
        events = [event.get("event") for event in running.events()]
        assert "shutdown requested: finishing calls in flight" in events and events[-1] == "metrics summary"


async def test_plain_json_answers_for_handshake_era_calls_when_configured(setup):
    kinds = []

    async def record(response):
        if response.request.method == "POST":
            kinds.append(response.headers.get("content-type", "").split(";")[0])

    with http_server({**setup[1], "GMAIL_MCP_HTTP_JSON_RESPONSES": "1"}) as running:
        async with mcp_client(running.url, "legacy", bearer(TOKEN_ALL), hooks=[record]) as client:
            result = await client.call_tool(SEARCH, {"query": "in:inbox", "max_results": 2})
    assert result.is_error is False and result.structured_content["result_count"] == 2
    assert "application/json" in kinds and "text/event-stream" not in kinds
