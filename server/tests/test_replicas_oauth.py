"""Three `--http --auth oauth` replicas as processes behind a real HAProxy on loopback (round robin, routing on
`Mcp-Session-Id` for handshake-era sessions), sharing one real redis-server (`GMAIL_MCP_STORE`), one token key,
one public URL (HAProxy's) and one Google Web client; the emulator plays Google and Gmail at 100 ms per round
trip; the official MCP client signs in with its `OAuthClientProvider` (Dynamic Client Registration, PKCE), the
test plays the browser. What is counted, never timed: which replica got which request (HAProxy's per-server
counters, the replicas' `tool end` log lines), the answers, and the emulator's request log.

- the browser's steps of one sign-in land on different replicas (the pending request, its state and the consent
  cookie are in the store), tools are then called through every replica, and the token is refreshed through
  the load balancer and accepted by each replica; in both protocol eras (handshake-era sessions stay on the
  replica that created them, by HAProxy's stick table on `Mcp-Session-Id`: docs/replicas.md, "Load balancer");
- a confirmation code issued on one replica is redeemed on another; two replicas asked to redeem one code at the
  same moment send once (the emulator's log: one `drafts/send` per confirmed draft);
- the store restarted mid-run: while it is down the token check answers 503 with Retry-After (through HAProxy,
  which tries the other replicas first) and readiness says so; after, every replica serves again, none restarted;
- concurrent refreshes of one refresh token on two replicas end with one valid pair.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import anyio
import httpx2
import pytest
import redis

from server.demo import DEMO_MAILBOX
from server.tests.support.http_server import mcp_client
from server.tests.support.oauth_replicas import Browser, oauth_client, oauth_replica_set, sign_in
from server.tests.support.redis_server import RedisServer, require_binary
from server.tests.support.replicas import ReplicaSet, haproxy_binary

pytestmark = [pytest.mark.anyio, pytest.mark.slow]  # replica processes, HAProxy and redis-server: the slow tier
SEARCH = "gmail_search_messages"
DRAFT = {"to": ["friend@example.org"], "subject": "Lunch", "body": "Thursday?"}
ENV = {"GMAIL_MCP_WRITE_TOOLS": "drafts,send", "GMAIL_MCP_SEND_LIMIT_PER_HOUR": "1000"}
READY_POLLS = 400  # /readyz polls 25 ms apart after the store comes back (a reconnect normally takes one)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def emulator() -> Iterator[Any]:
    if haproxy_binary() is None:
        pytest.skip("no haproxy on PATH (Debian's haproxy; .ci/run installs it)")
    from server.emulator import start_emulator

    with start_emulator(DEMO_MAILBOX, rebase_dates=True, latency_ms=100) as running:
        yield running


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """The module's own redis-server: one test stops and restarts it."""
    server = RedisServer(require_binary(), tmp_path_factory.mktemp("redis")).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def fleet(emulator: Any, store: RedisServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ReplicaSet]:
    owner = emulator.store.email_address
    with oauth_replica_set(emulator, tmp_path_factory.mktemp("fleet"), store.url, allowed=owner, extra_env=ENV) as on:
        yield on


def owner(emulator: Any) -> str:
    return str(emulator.store.email_address)


def requests_per_replica(fleet: ReplicaSet) -> list[int]:
    """Requests HAProxy has sent to each replica so far (`stot`; health checks aside)."""
    stats = fleet.proxy.stats()
    return [int(stats[replica.name]["stot"] or 0) for replica in fleet.replicas]


def since(now: list[int], then: list[int]) -> list[int]:
    return [after - before for after, before in zip(now, then, strict=True)]


class CountingBrowser(Browser):
    """The browser, noting which replicas its steps (authorize, consent page, consent, Google's callback) reached."""

    def __init__(self, fleet: ReplicaSet, user: str) -> None:
        super().__init__(fleet.url.removesuffix("/mcp"), user)
        self.fleet = fleet
        self.spread: list[int] = []

    async def redirect_handler(self, url: str) -> None:
        before = requests_per_replica(self.fleet)
        await super().redirect_handler(url)
        self.spread = since(requests_per_replica(self.fleet), before)


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def search(session: Any, number: int) -> None:
    result = await session.call_tool(SEARCH, {"query": f"newer_than:{3650 + number}d", "max_results": 2})
    assert result.is_error is False, result.content[0].text


async def at_once(sessions: list[Any], tool: str, arguments: dict[str, Any]) -> list[Any]:
    """The same call on each session at the same moment; answers their results."""
    answers: list[Any] = []

    async def call(session: Any) -> None:
        answers.append(await session.call_tool(tool, arguments))

    async with anyio.create_task_group() as group:
        for session in sessions:
            group.start_soon(call, session)
    return answers


def sends(emulator: Any) -> int:
    return sum(entry["method"] == "POST" and entry["path"].endswith("/drafts/send") for entry in emulator.requests())


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_sign_in_spans_replicas_and_tools_and_refreshes_go_through_every_one(
    emulator: Any, fleet: ReplicaSet, mode: str
) -> None:
    from server.tests.support.oauth_replicas import Memory, provider

    browser, storage = CountingBrowser(fleet, owner(emulator)), Memory()
    auth = provider(fleet.url, browser, storage)
    before = fleet.tool_ends()
    async with oauth_client(fleet.url, auth, mode) as session:
        await search(session, 0)
    assert len(browser.answers) == 1 and sum(browser.spread) == 4, browser.spread
    assert all(count >= 1 for count in browser.spread), browser.spread  # round robin: each replica had a step
    first = storage.tokens
    assert first is not None and first.refresh_token

    if mode == "auto":  # 2026-07-28: no session; every call may go to any replica
        async with oauth_client(fleet.url, auth, mode) as session:
            for number in range(1, 9):
                await search(session, number)
        spread = since(fleet.tool_ends(), before)
        assert sum(spread) == 9 and all(count >= 1 for count in spread), spread
    else:  # handshake era: a session stays on the replica that created it; new sessions go round
        homes = set()
        for session_number in range(3):
            before = fleet.tool_ends()
            async with oauth_client(fleet.url, auth, mode) as session:
                for number in range(3):
                    await search(session, 10 * session_number + number)
            spread = since(fleet.tool_ends(), before)
            assert sorted(spread) == [0, 0, 3], spread
            homes.add(spread.index(3))
        assert homes == {0, 1, 2}, homes

    # The access token runs out: the client refreshes it through the load balancer (a new pair, no browser).
    auth.context.token_expiry_time = time.time() - 1
    async with oauth_client(fleet.url, auth, mode) as session:
        await search(session, 99)
    second = storage.tokens
    assert second is not None and second.access_token != first.access_token and len(browser.answers) == 1
    for replica in fleet.replicas:  # each replica accepts the refreshed token, asked directly
        assert replica.server is not None
        async with mcp_client(replica.server.url, mode, bearer(second.access_token)) as direct:
            await search(direct, 100 + replica.index)


async def test_a_code_issued_on_one_replica_is_redeemed_on_another_and_racing_redemptions_send_once(
    emulator: Any, fleet: ReplicaSet
) -> None:
    storage, _, _ = await sign_in(fleet.url, owner(emulator))
    assert storage.tokens is not None
    headers = bearer(storage.tokens.access_token)
    urls = [replica.server.url for replica in fleet.replicas if replica.server is not None]
    async with (
        mcp_client(urls[0], "legacy", headers) as on_a,
        mcp_client(urls[1], "legacy", headers) as on_b,
        mcp_client(urls[2], "legacy", headers) as on_c,
    ):
        before = sends(emulator)
        draft_id = (await on_a.call_tool("gmail_create_draft", DRAFT)).structured_content["draft_id"]
        asked = await on_a.call_tool("gmail_send_draft", {"draft_id": draft_id})
        assert asked.structured_content["status"] == "confirmation_required", asked.content[0].text
        code = asked.structured_content["confirmation_code"]
        sent = await on_b.call_tool("gmail_send_draft", {"draft_id": draft_id, "confirmation_code": code})
        assert not sent.is_error and sent.structured_content["status"] == "sent", sent.content[0].text
        assert sends(emulator) == before + 1

        for _ in range(3):  # a code asked for on A, redeemed by B and C at the same moment
            draft_id = (await on_a.call_tool("gmail_create_draft", DRAFT)).structured_content["draft_id"]
            code = (await on_a.call_tool("gmail_send_draft", {"draft_id": draft_id})).structured_content[
                "confirmation_code"
            ]
            before = sends(emulator)
            answers = await at_once([on_b, on_c], "gmail_send_draft", {"draft_id": draft_id, "confirmation_code": code})
            texts = sorted(answer.content[0].text for answer in answers)  # "Error (...": before "Sent."
            assert [bool(answer.is_error) for answer in answers].count(True) == 1, texts
            assert texts[0].startswith("Error (confirmation_invalid)") and texts[1].startswith("Sent."), texts
            assert sends(emulator) == before + 1  # the emulator's log: this draft sent exactly once


async def test_a_store_restarted_mid_run_defers_calls_and_every_replica_recovers_without_a_restart(
    emulator: Any, fleet: ReplicaSet, store: RedisServer
) -> None:
    storage, _, _ = await sign_in(fleet.url, owner(emulator))
    assert storage.tokens is not None
    headers = bearer(storage.tokens.access_token)
    processes = [replica.server.process.pid for replica in fleet.replicas if replica.server is not None]
    with redis.Redis.from_url(store.url) as raw:
        raw.save()  # the restarted server loads this snapshot: sign-ins survive the outage
    store.stop()
    try:
        ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        accept = {"Accept": "application/json, text/event-stream"}
        for _ in range(3):  # through HAProxy: every replica answers the same
            down = httpx2.post(fleet.url, headers={**headers, **accept}, json=ping, timeout=30)
            assert down.status_code == 503 and int(down.headers["retry-after"]) > 0, down.text
            assert "GMAIL_MCP_STORE" in down.json()["error_description"]
        for replica in fleet.replicas:
            assert replica.server is not None
            ready = httpx2.get(replica.server.base + "/readyz", timeout=10)
            assert ready.status_code == 503 and ready.json() == {"status": "store_unreachable"}
        assert set(fleet.proxy.server_states().values()) == {"UP"}  # alive (/healthz): nobody restarts them
    finally:
        store.start()  # the same port
    for replica in fleet.replicas:
        assert replica.server is not None
        for _ in range(READY_POLLS):
            if httpx2.get(replica.server.base + "/readyz", timeout=10).status_code == 200:
                break
            await anyio.sleep(0.025)
        else:
            raise AssertionError(f"{replica.name} never became ready again")
    before = fleet.tool_ends()
    async with mcp_client(fleet.url, "auto", headers) as session:
        for number in range(6):
            await search(session, number)
    assert all(count >= 1 for count in since(fleet.tool_ends(), before))
    assert [replica.server.process.pid for replica in fleet.replicas if replica.server] == processes
    assert all(replica.server and replica.server.process.poll() is None for replica in fleet.replicas)


async def test_concurrent_refreshes_of_one_token_on_two_replicas_end_with_one_valid_pair(
    emulator: Any, fleet: ReplicaSet
) -> None:
    storage, _, _ = await sign_in(fleet.url, owner(emulator))
    assert storage.tokens is not None and storage.client is not None
    client_id = storage.client.client_id
    form = {"grant_type": "refresh_token", "refresh_token": storage.tokens.refresh_token or "", "client_id": client_id}
    bases = [replica.server.base for replica in fleet.replicas[:2] if replica.server is not None]
    answers: list[httpx2.Response] = []

    async def refresh(base: str) -> None:
        async with httpx2.AsyncClient(base_url=base, timeout=30) as http:
            answers.append(await http.post("/token", data=form))

    async with anyio.create_task_group() as group:
        for base in bases * 3:
            group.start_soon(refresh, base)
    assert [answer.status_code for answer in answers] == [200] * 6, [answer.text for answer in answers]
    pairs = {(answer.json()["access_token"], answer.json()["refresh_token"]) for answer in answers}
    assert len(pairs) == 1, pairs
    ((access, refresh_token),) = pairs
    async with mcp_client(fleet.url, "auto", bearer(access)) as session:  # the pair works on every replica
        for number in range(3):
            await search(session, number)
    onward = {"grant_type": "refresh_token", "refresh_token": refresh_token, "client_id": client_id}
    async with httpx2.AsyncClient(base_url=bases[1], timeout=30) as http:
        rotated = await http.post("/token", data=onward)
    assert rotated.status_code == 200 and rotated.json()["access_token"] != access
