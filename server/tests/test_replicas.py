"""Three replicas behind a real HAProxy on loopback (support/replicas.py), against one emulator at 100 ms per
round trip, static bearer token. What is counted, never timed: which replica served each call (its `tool end`
log lines), the callers' attempts and the errors they saw, and the emulator's request log and mailbox.

- round robin in both eras: 2026-07-28 calls spread over every replica; a handshake-era session stays on the
  replica that created it (routing on `Mcp-Session-Id`), and new sessions go round; in the server's stateless
  mode (no stick table) handshake-era calls spread like 2026-07-28 ones;
- SIGKILL of one replica in the middle of 50 concurrent callers: every call completes or fails retryably (a
  transport error, HTTP 502/503 from HAProxy, a retryable tool error), the caller's retry succeeds on another
  replica, and no send is doubled (one SENT message per caller in the emulator's mailbox, one answered
  drafts/send per message in its request log);
- a rolling restart (SIGTERM, then start again, one replica after the other) under load loses no call.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

from server.demo import DEMO_MAILBOX
from server.tests.support.http_server import mcp_client
from server.tests.support.replicas import ReplicaSet, haproxy_binary, replica_set

pytestmark = [pytest.mark.anyio, pytest.mark.slow]  # replica processes and HAProxy: the slow tier
TOKEN = "replicas-token-0123456789abcdef01"
BEARER = {"Authorization": f"Bearer {TOKEN}"}
SEARCH, GET = "gmail_search_messages", "gmail_get_message"
CALLERS, MAX_ATTEMPTS = 50, 6
# What a caller may see when a replica dies under it: its session gone (404: open a new one), the call cut
# (no answer: HAProxy closes the client's connection, or answers 502/503), or a retryable tool error.
# What a caller of a killed replica sees, each a reason to retry: its session gone, the connection cut (at the
# socket, or an event stream that ended before its answer: "SSE stream ended without a response", 1 run in 5),
# HAProxy's 502/503, or a retryable tool error.
RETRYABLE = re.compile(
    r"Session not found|RemoteProtocolError|ReadError|SSE stream ended without a response|"
    r"Server returned an error response|50[23]|^Retryable: ",
)
REPLICA_ENV = {
    "GMAIL_MCP_HTTP_TOKEN": TOKEN,
    "GMAIL_MCP_WRITE_TOOLS": "drafts,send",
    "GMAIL_MCP_SEND_LIMIT_PER_HOUR": "1000",
    "GMAIL_MCP_HTTP_MAX_CONCURRENT": "200",
}


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture(scope="module")
def emulator() -> Iterator[Any]:
    if haproxy_binary() is None:
        pytest.skip("no haproxy on PATH (Debian's haproxy; .ci/run installs it)")
    from server.emulator import start_emulator

    with start_emulator(DEMO_MAILBOX, rebase_dates=True, latency_ms=100) as running:
        yield running


@pytest.fixture(scope="module")
def sticky(emulator: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ReplicaSet]:
    scratch = tmp_path_factory.mktemp("sticky")
    with replica_set(emulator, scratch, scopes=["readonly", "compose"], extra_env=REPLICA_ENV) as replicas:
        yield replicas


def inbox_ids(emulator: Any) -> list[str]:
    return [message.id for message in emulator.store.messages if "INBOX" in message.label_ids][:20]


def served(replicas: ReplicaSet, before: list[int]) -> list[int]:
    return [now - then for now, then in zip(replicas.tool_ends(), before, strict=True)]


async def search(client: Any, number: int) -> Any:
    result = await client.call_tool(SEARCH, {"query": f"newer_than:{3650 + number}d", "max_results": 3})
    assert result.is_error is False, result.content[0].text
    assert result.structured_content["query"] == f"newer_than:{3650 + number}d"
    return result


async def test_2026_calls_go_round_robin_and_a_handshake_session_stays_on_its_replica(sticky):
    before = sticky.tool_ends()
    async with mcp_client(sticky.url, "auto", BEARER) as client:
        for number in range(9):
            await search(client, number)
    spread = served(sticky, before)
    assert sum(spread) == 9 and all(count >= 1 for count in spread), spread

    homes = []
    for session in range(3):
        before = sticky.tool_ends()
        async with mcp_client(sticky.url, "legacy", BEARER) as client:
            for number in range(4):
                await search(client, 10 * session + number)
        spread = served(sticky, before)
        assert sorted(spread) == [0, 0, 4], spread  # every call of the session on one replica
        homes.append(spread.index(4))
    assert sorted(homes) == [0, 1, 2]  # new sessions go round


async def test_stateless_mode_spreads_handshake_era_calls_over_every_replica(emulator, tmp_path):
    with replica_set(emulator, tmp_path / "stateless", sticky=False, extra_env=REPLICA_ENV) as replicas:
        for mode in ("legacy", "auto"):
            before = replicas.tool_ends()
            async with mcp_client(replicas.url, mode, BEARER) as client:
                for number in range(9):
                    await search(client, number)
            spread = served(replicas, before)
            assert sum(spread) == 9 and all(count >= 1 for count in spread), (mode, spread)


def sender(url: str) -> Client:
    async def person(_ctx: Any, _params: Any) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"confirm": True})

    http = httpx2.AsyncClient(headers=BEARER, timeout=httpx2.Timeout(120.0))
    return Client(streamable_http_client(url, http_client=http), mode="legacy", elicitation_callback=person)


def tool_error(result: Any) -> dict[str, Any]:
    return dict((result.meta or {}).get("gmail-mcp/error") or {"category": "?", "text": result.content[0].text})


class Retryable(Exception):
    """A failure the caller retries: transport errors, HTTP 502/503 from HAProxy, retryable tool errors."""


class Caller:
    """One of the 50: handshake-era callers (even numbers) create a draft and send it (the person accepts the
    question mid-call); 2026-07-28 callers (odd) search then read a message. A failed attempt is retried from the
    step it failed at with a new session, never with a new draft: a send whose answer was lost is retried on the
    same draft, which Gmail answers 404 if the first attempt went through (so nothing is sent twice)."""

    def __init__(self, number: int, message_id: str) -> None:
        self.number = number
        self.message_id = message_id
        self.draft_id: str | None = None
        self.send_failed = False  # an attempt at the send failed without an answer: its outcome is unknown
        self.outcome: str | None = None
        self.failures: list[str] = []

    @property
    def subject(self) -> str:
        return f"replica kill test {self.number}"

    async def attempt(self, url: str) -> None:
        if self.number % 2:
            async with mcp_client(url, "auto", BEARER) as client:
                self.check(await client.call_tool(SEARCH, {"query": "newer_than:3650d", "max_results": 3}))
                self.check(await client.call_tool(GET, {"message_id": self.message_id}))
                self.outcome = "read"
            return
        async with sender(url) as client:
            if self.draft_id is None:
                draft = await client.call_tool(
                    "gmail_create_draft", {"to": ["a@x.example"], "subject": self.subject, "body": "b"}
                )
                self.check(draft)
                self.draft_id = draft.structured_content["draft_id"]
            self.send_failed = True
            sent = await client.call_tool("gmail_send_draft", {"draft_id": self.draft_id})
            if sent.is_error and tool_error(sent).get("category") == "not_found" and self.failures:
                self.outcome = "sent by an earlier attempt"
                return
            self.check(sent)
            assert sent.structured_content["status"] == "sent", sent.structured_content
            self.outcome = "sent"

    def check(self, result: Any) -> None:
        if result.is_error:
            error = tool_error(result)
            if error.get("retryable") or error.get("category") in ("transient", "unknown_outcome"):
                raise Retryable(error.get("category"))
            raise AssertionError(f"caller {self.number}: {error} after {self.failures}")

    async def run(self, url: str) -> None:
        for _ in range(MAX_ATTEMPTS):
            try:
                await self.attempt(url)
                return
            except AssertionError:
                raise
            except Exception as exc:  # every transport failure is a retryable one here
                self.failures.append(describe(exc))


def describe(exc: BaseException) -> str:
    inner = getattr(exc, "exceptions", None)  # an exception group (anyio task groups raise them)
    if inner:
        return "; ".join(describe(one) for one in inner)
    return f"{type(exc).__name__}: {str(exc)[:80]}"


def in_flight(log_text: str) -> int:
    return log_text.count('"tool start"') - log_text.count('"tool end"')


async def test_sigkill_of_one_replica_amid_fifty_callers_loses_nothing_and_doubles_no_send(sticky, emulator):
    since = emulator.requests()[-1]["seq"] if emulator.requests() else 0
    ids = inbox_ids(emulator)
    callers = [Caller(number, ids[number % len(ids)]) for number in range(CALLERS)]
    victim = sticky.replicas[0]

    async def kill_when_busy() -> None:
        assert victim.server is not None
        while in_flight(victim.server.log_text()) < 3:  # calls in flight on the victim, then SIGKILL
            await anyio.sleep(0.005)
        victim.kill()

    with anyio.fail_after(600):  # a hang guard only
        async with anyio.create_task_group() as group:
            group.start_soon(kill_when_busy)
            for caller in callers:
                group.start_soon(caller.run, sticky.url)
    try:
        failed = [caller for caller in callers if caller.failures]
        assert failed, "the kill interrupted nothing"
        seen = Counter(failure for caller in failed for failure in caller.failures)
        assert all(RETRYABLE.search(part) for failure in seen for part in failure.split("; ")), seen
        assert all(caller.outcome for caller in callers), [(c.number, c.failures) for c in callers if not c.outcome]
        senders = [caller for caller in callers if caller.number % 2 == 0]
        subjects = Counter(message.subject for message in emulator.store.messages if "SENT" in message.label_ids)
        assert all(subjects[caller.subject] == 1 for caller in senders), subjects
        answered = [e for e in emulator.requests(since) if e["path"].endswith("/drafts/send") and e["status"] == 200]
        assert len(answered) == len(senders)
        assert sticky.proxy.server_states()[victim.name] == "DOWN"
    finally:
        sticky.restart(0)


async def test_rolling_restart_under_load_loses_no_call(sticky, emulator):
    """One replica after the other: taken out of rotation at HAProxy (as Kubernetes removes a terminating pod's
    endpoint, or a preStop hook waits for that), then SIGTERM once it has read every request HAProxy sent it and
    while calls are still in flight, then started again; 30 callers keep calling throughout. Every call answers
    on its first attempt: the calls in flight finish, new ones go to the other replicas."""
    results: list[Any] = []
    errors: list[str] = []
    opened: list[int] = []
    in_flight_at_sigterm: list[int] = []
    done = anyio.Event()

    async def keep_calling(number: int) -> None:
        http = httpx2.AsyncClient(headers=BEARER, timeout=httpx2.Timeout(120.0))
        async with Client(streamable_http_client(sticky.url, http_client=http), mode="auto") as client:
            opened.append(number)
            while not done.is_set():
                try:
                    results.append(await search(client, number))
                except Exception as exc:  # counted, then asserted empty
                    errors.append(describe(exc))

    async def roll() -> None:
        while len(opened) < 30:  # from here on every request is a tool call
            await anyio.sleep(0.005)
        for index, replica in enumerate(sticky.replicas):
            while replica.tool_starts() - replica.tool_ends() < 2:
                await anyio.sleep(0.005)
            sticky.drain(index)
            # HAProxy's open requests to it = unread + in a tool + answered but not yet closed; wait for the first
            # and last to be none (read HAProxy first: a read request can only raise the tool count).
            while sticky.proxy.open_requests(replica.name) > replica.tool_starts() - replica.tool_ends():
                await anyio.sleep(0.002)
            in_flight_at_sigterm.append(replica.tool_starts() - replica.tool_ends())
            status = await anyio.to_thread.run_sync(replica.terminate)
            assert status == 0
            await anyio.to_thread.run_sync(sticky.restart, index)
        done.set()

    with anyio.fail_after(600):  # a hang guard only
        async with anyio.create_task_group() as group:
            group.start_soon(roll)
            for number in range(30):
                group.start_soon(keep_calling, number)
    assert errors == []
    assert len(results) > 30
    assert any(in_flight_at_sigterm), in_flight_at_sigterm  # SIGTERM came while calls were running
    assert all(state == "UP" for state in sticky.proxy.server_states().values())


def test_the_generated_haproxy_configuration_sticks_only_when_asked(tmp_path: Path):
    """Routing on Mcp-Session-Id learnt from the response; none in stateless mode; one health check per server."""
    from server.tests.support.replicas import haproxy_config

    config = haproxy_config(8000, [8001, 8002], tmp_path / "admin.sock", sticky=True)
    assert "stick store-response res.hdr(mcp-session-id)" in config
    assert config.count("check inter") == 2
    assert "stick" not in haproxy_config(8000, [8001], tmp_path / "admin.sock", sticky=False)
