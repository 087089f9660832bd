"""Two replicas of one deployment as two remote apps (uvicorn on loopback each), sharing one state store: the real
redis-server of the fixture, or one embedded SQLite file. The emulator plays Google and Gmail; the official MCP
client calls each replica. A person signed in through one is served by the other; a confirmation code issued by
one is redeemed by the other, once; a store that goes away mid-run makes the token check answer 503 (never 401)
and readiness false, and everything comes back by itself when the store is back; concurrent refreshes of one
refresh token on two authorization servers end with one valid pair.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import anyio
import httpx2
import mcp_types as types
import pytest
import redis
from cryptography.fernet import Fernet
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

from server.emulator import Emulator
from server.remote.redis_store import RedisStore
from server.remote.shared_limits import SharedSendGuard
from server.remote.sqlite_store import SQLiteStore
from server.remote.store import StateStore, StoreUnavailable
from server.tests.support.accounts import two_account_emulator
from server.tests.support.emulator import OWNER
from server.tests.support.oauth_browser import (
    APP_REDIRECT,
    CALLBACK,
    RESOURCE,
    authorize_params,
    build_server,
    document_server,
    exchange,
    http_client,
    sign_in,
)
from server.tests.support.redis_server import RedisServer, fresh_namespace, require_binary
from server.tests.support.remote_http import DRAFT, RemoteRun, remote_server, sends

pytestmark = [pytest.mark.anyio, pytest.mark.slow]  # two replicas, a real redis-server: ~30 s
PUBLIC = "https://mail.example.test/mcp"  # the one URL every replica serves behind the load balancer


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Emulator]:
    with two_account_emulator(tmp_path_factory.mktemp("replicas")) as running:
        yield running


@pytest.fixture(params=["sqlite", "redis"])
def open_replica_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[object]:
    """Opens one store object per replica on the same data."""
    opened: list[StateStore] = []
    namespace = fresh_namespace()
    server = request.getfixturevalue("redis_server") if request.param == "redis" else None

    def open_one() -> StateStore:
        store: StateStore = (
            RedisStore(server.url, namespace) if server is not None else SQLiteStore(tmp_path / "shared.sqlite3")
        )
        opened.append(store)
        return store

    yield open_one
    for store in opened:
        store.close()


@contextmanager
def replicas(
    emulator: Emulator,
    tmp_path: Path,
    stores: list[StateStore],
    write_tools: frozenset[str] = frozenset({"drafts", "send"}),
) -> Iterator[list[RemoteRun]]:
    vault_key = Fernet.generate_key()
    with ExitStack() as stack:
        yield [
            stack.enter_context(
                remote_server(
                    emulator,
                    tmp_path / f"replica-{index}",
                    write_tools=write_tools,
                    env={"GMAIL_MCP_PUBLIC_URL": PUBLIC},
                    authorization_server=True,
                    store=store,
                    vault_key=vault_key,
                )
            )
            for index, store in enumerate(stores)
        ]


def client(run: RemoteRun, token: str) -> Client:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=httpx2.Timeout(60.0))
    return Client(streamable_http_client(run.url, http_client=http), mode="legacy")


async def test_a_code_issued_on_one_replica_is_redeemed_on_another_and_sends_once(
    emulator: Emulator, tmp_path: Path, open_replica_store
) -> None:
    emulator.reset()
    with replicas(emulator, tmp_path, [open_replica_store(), open_replica_store()]) as (a, b):
        me = a.sign_in(OWNER)  # the Google grant, sealed in the shared store by replica A
        token = a.token_for(me, resource=PUBLIC).access_token
        before = sends(emulator)
        async with client(a, token) as on_a, client(b, token) as on_b:
            draft = await on_b.call_tool("gmail_create_draft", DRAFT)  # B serves the person A signed in
            draft_id = draft.structured_content["draft_id"]
            first = await on_a.call_tool("gmail_send_draft", {"draft_id": draft_id})
            assert first.structured_content["status"] == "confirmation_required"
            code = first.structured_content["confirmation_code"]
            sent = await on_b.call_tool("gmail_send_draft", {"draft_id": draft_id, "confirmation_code": code})
            assert not sent.is_error and sent.structured_content["status"] == "sent"
            assert sent.structured_content["sends_left_this_hour"] == 9  # counted once for the deployment
            again = await on_a.call_tool("gmail_send_draft", {"draft_id": draft_id, "confirmation_code": code})
            assert again.is_error  # the draft is gone and the code spent: nothing is sent twice
        assert sends(emulator) == before + 1
        for run in (a, b):
            ready = httpx2.get(run.base + "/readyz", timeout=10)
            assert ready.status_code == 200 and ready.json() == {"status": "ready"}


async def test_a_cleanup_previewed_on_one_replica_is_run_on_another_and_undone_on_the_first(
    emulator: Emulator, tmp_path: Path, open_replica_store
) -> None:
    """Issue 23: the preview's ids and progress are in the shared store, so B runs what A previewed (exactly those
    messages, once) and A undoes what B changed."""
    emulator.reset()
    stores = [open_replica_store(), open_replica_store()]
    with replicas(emulator, tmp_path, stores, frozenset({"cleanup"})) as (a, b):
        me = a.sign_in(OWNER)
        token = a.token_for(me, scopes=["gmail.read", "gmail.cleanup"], resource=PUBLIC).access_token
        async with client(a, token) as on_a, client(b, token) as on_b:
            unread = {"query": "is:unread", "action": "mark_read"}
            preview = (await on_a.call_tool("gmail_cleanup_preview", unread)).structured_content
            count, preview_id = preview["message_count"], preview["preview_id"]
            assert count > 0
            asked = await on_b.call_tool("gmail_cleanup_run", {"preview_id": preview_id})
            assert asked.structured_content["status"] == "confirmation_required", asked.content[0].text
            code = asked.structured_content["confirmation_code"]
            ran = await on_b.call_tool("gmail_cleanup_run", {"preview_id": preview_id, "confirmation_code": code})
            assert not ran.is_error, ran.content[0].text
            assert (ran.structured_content["status"], ran.structured_content["done_count"]) == ("done", count)
            after = (await on_a.call_tool("gmail_cleanup_preview", unread)).structured_content
            assert after["message_count"] == 0  # Gmail (the emulator) has them read now
            again = await on_a.call_tool("gmail_cleanup_run", {"preview_id": preview_id})
            assert again.structured_content["status"] == "done"  # A knows B finished it: nothing sent twice
            assert again.structured_content.get("changed_this_call") in (None, 0)
            undone = await on_a.call_tool("gmail_cleanup_undo", {"preview_id": preview_id})
            assert not undone.is_error, undone.content[0].text
            assert (undone.structured_content["status"], undone.structured_content["restored_count"]) == (
                "undone",
                count,
            )
            restored = (await on_b.call_tool("gmail_cleanup_preview", unread)).structured_content
            assert restored["message_count"] == count


class RoundRobin(httpx2.AsyncBaseTransport):
    """The load balancer, in the client: each request goes to the next replica (the port rewritten); `log` keeps
    which replica got which JSON-RPC method and whether it carried a request state."""

    def __init__(self, runs: list[RemoteRun]) -> None:
        self.ports = [int(urlsplit(run.url).port or 0) for run in runs]
        self.inner = httpx2.AsyncHTTPTransport()
        self.turn = 0
        self.log: list[tuple[int, str, bool]] = []

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        replica = self.turn % len(self.ports)
        self.turn += 1
        body = json.loads(request.content or b"{}") if request.method == "POST" else {}
        params = body.get("params") or {} if isinstance(body, dict) else {}
        self.log.append((replica, str(body.get("method", request.method)), "requestState" in params))
        request.url = request.url.copy_with(port=self.ports[replica])
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


def balanced(runs: list[RemoteRun]) -> tuple[str, RoundRobin, httpx2.AsyncClient]:
    """OWNER signed in on the first replica: the access token for the public URL, the round-robin balancer, and an
    HTTP client sending the token through it."""
    me = runs[0].sign_in(OWNER)
    token = runs[0].token_for(me, resource=PUBLIC).access_token
    balancer = RoundRobin(runs)
    http = httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {token}"}, transport=balancer, timeout=httpx2.Timeout(60.0)
    )
    return token, balancer, http


async def test_a_2026_client_answers_on_another_replica_than_the_one_that_asked(
    emulator: Emulator, tmp_path: Path, open_replica_store
) -> None:
    emulator.reset()
    with replicas(emulator, tmp_path, [open_replica_store(), open_replica_store()]) as runs:
        _, balancer, http = balanced(runs)
        asked: list[str] = []

        async def person(_ctx: object, _params: object) -> types.ElicitResult:
            asked.append("asked")
            return types.ElicitResult(action="accept", content={"confirm": True})

        before = sends(emulator)
        connection = streamable_http_client(runs[0].url, http_client=http)
        async with Client(connection, mode="auto", elicitation_callback=person) as session:
            draft = await session.call_tool("gmail_create_draft", DRAFT)
            sent = await session.call_tool("gmail_send_draft", {"draft_id": draft.structured_content["draft_id"]})
        assert sent.structured_content["status"] == "sent" and asked == ["asked"]
        assert sends(emulator) == before + 1
        calls = [(replica, state) for replica, method, state in balancer.log if method == "tools/call"]
        question, answer = calls[-2:]
        assert not question[1] and answer[1] and question[0] != answer[0]  # asked on one, answered on the other


async def test_a_draft_changed_before_the_answer_is_not_sent_by_the_other_replica(
    emulator: Emulator, tmp_path: Path, open_replica_store
) -> None:
    emulator.reset()
    with replicas(emulator, tmp_path, [open_replica_store(), open_replica_store()]) as runs:
        token, balancer, http = balanced(runs)
        draft_id = ""

        async def person_while_the_draft_changes(_ctx: object, _params: object) -> types.ElicitResult:
            async with client(runs[0], token) as elsewhere:  # the draft edited while the person is asked
                changed = {"draft_id": draft_id, "subject": "Dinner instead"}
                assert not (await elsewhere.call_tool("gmail_update_draft", changed)).is_error
            return types.ElicitResult(action="accept", content={"confirm": True})

        before = sends(emulator)
        connection = streamable_http_client(runs[0].url, http_client=http)
        async with Client(connection, mode="auto", elicitation_callback=person_while_the_draft_changes) as session:
            draft = await session.call_tool("gmail_create_draft", DRAFT)
            draft_id = draft.structured_content["draft_id"]
            refused = await session.call_tool("gmail_send_draft", {"draft_id": draft_id})
        assert refused.is_error and "asked about changed" in refused.content[0].text  # the rerun's check
        assert sends(emulator) == before
        calls = [(replica, state) for replica, method, state in balancer.log if method == "tools/call"]
        assert calls[-1][1] and calls[-2][0] != calls[-1][0]  # answered on the replica that did not ask


async def test_a_store_that_goes_away_mid_run_defers_and_recovers_by_itself(emulator: Emulator, tmp_path: Path) -> None:
    emulator.reset()
    server = RedisServer(require_binary(), tmp_path / "redis").start()
    try:
        store = RedisStore(server.url, fresh_namespace())
        with replicas(emulator, tmp_path, [store]) as (replica,):
            me = replica.sign_in(OWNER)
            token = replica.token_for(me, resource=PUBLIC).access_token
            async with client(replica, token) as session:
                assert not (await session.call_tool("gmail_list_drafts", {})).is_error
            with redis.Redis.from_url(server.url) as raw:
                raw.save()  # the restarted server loads this snapshot: the sign-in survives the outage
            server.stop()

            down = httpx2.get(replica.base + "/readyz", timeout=10)
            assert down.status_code == 503 and down.json() == {"status": "store_unreachable"}
            assert httpx2.get(replica.base + "/healthz", timeout=10).status_code == 200  # alive: not restarted
            call = httpx2.post(
                replica.url,
                headers={"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"},
                json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                timeout=10,
            )
            assert call.status_code == 503 and int(call.headers["retry-after"]) > 0  # not 401: nobody signed out
            assert "GMAIL_MCP_STORE" in call.json()["error_description"]
            refresh = {"grant_type": "refresh_token", "refresh_token": "any", "client_id": "any"}
            token_endpoint = httpx2.post(replica.base + "/token", data=refresh, timeout=10)
            assert token_endpoint.status_code == 503 and token_endpoint.headers["retry-after"] == "5"
            with pytest.raises(StoreUnavailable) as caught:  # what a tool meets past the gate
                SharedSendGuard(store, "someone", 10).check()
            assert caught.value.code == "transient" and caught.value.retryable
            assert "GMAIL_MCP_STORE" in caught.value.hint and "/readyz" in caught.value.hint

            server.start()  # the same port, no replica restart
            assert httpx2.get(replica.base + "/readyz", timeout=10).status_code == 200
            async with client(replica, token) as session:
                assert not (await session.call_tool("gmail_list_drafts", {})).is_error
    finally:
        server.stop()


async def test_concurrent_refreshes_on_two_authorization_servers_end_with_one_pair(
    emulator: Emulator, tmp_path: Path, clock, open_replica_store
) -> None:
    emulator.reset()
    client_file = emulator.web_client_file(tmp_path / "client.json", CALLBACK)
    cipher = Fernet(Fernet.generate_key())
    first_server = build_server(open_replica_store(), clock, emulator, client_file, cipher=cipher)
    second_server = build_server(open_replica_store(), clock, emulator, client_file, cipher=cipher)
    with document_server() as (base, table):
        client_id = base + "/oauth/client.json"
        table["/oauth/client.json"] = {"client_id": client_id, "client_name": "App", "redirect_uris": [APP_REDIRECT]}
        flow = authorize_params(client_id)
        async with (
            http_client(first_server) as browser,
            http_client(first_server, "10.0.0.8") as on_first,
            http_client(second_server, "10.0.0.8") as on_second,
        ):
            await sign_in(browser, flow)
            tokens = (await exchange(on_first, flow, client_id)).json()
            form = {"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"], "client_id": client_id}
            answers: list = []

            async def refresh(app: httpx2.AsyncClient) -> None:
                answers.append(await app.post("/token", data=form))

            async with anyio.create_task_group() as group:
                for app in (on_first, on_second, on_first, on_second):
                    group.start_soon(refresh, app)
    assert {answer.status_code for answer in answers} == {200}
    pairs = {(answer.json()["access_token"], answer.json()["refresh_token"]) for answer in answers}
    assert len(pairs) == 1
    ((access, refresh_token),) = pairs
    for server in (first_server, second_server):
        assert server.ledger.verify_access(access, RESOURCE) is not None
    onward = second_server.ledger.rotate(refresh_token, client_id)  # the new refresh token works on either
    assert onward is not None and first_server.ledger.rotate(refresh_token, client_id) == onward


def test_a_replica_whose_store_is_unreachable_at_start_up_exits_non_zero(tmp_path: Path) -> None:
    from cryptography.fernet import Fernet as FernetKey

    from server.tests.support.redis_server import free_port
    from server.tests.test_remote_oauth_config import client_file, run_main

    local = "http://127.0.0.1:8080/oauth/google/callback"
    refused = run_main(
        "--http",
        "127.0.0.1:0",
        "--auth",
        "oauth",
        env={
            "HOME_DIR": str(tmp_path),
            "GMAIL_MCP_PUBLIC_URL": "http://127.0.0.1:8080/mcp",
            "GMAIL_MCP_GOOGLE_CLIENT_FILE": str(client_file(tmp_path, local)),
            "GMAIL_MCP_TOKEN_ENCRYPTION": "env",
            "GMAIL_MCP_TOKEN_KEY": FernetKey.generate_key().decode(),
            "GMAIL_MCP_STORE": f"redis://:s3cret-pw@127.0.0.1:{free_port()}/0",  # nobody listens there
        },
    )
    assert refused.returncode != 0 and refused.stdout == ""
    assert "cannot be reached at start-up" in refused.stderr and "GMAIL_MCP_STORE" in refused.stderr
    assert "s3cret-pw" not in refused.stderr
