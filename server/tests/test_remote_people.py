"""`--auth oauth`, the resource side, over real HTTP: the app on uvicorn on loopback, the official MCP client, the
emulator playing Google (two people, each with a mailbox of their own) and Gmail.

Tokens are issued with the Ledger as the authorization server issues them, Google grants are real ones from the
emulator's Web client flow (the test plays the browser), saved as the authorization server's callback saves them.

Evidence: MCP authorization spec 2025-11-25 (tokens for this resource only, RFC 8707; 401 with
`WWW-Authenticate: Bearer resource_metadata=...`, RFC 9728 5.1; 403 `insufficient_scope` naming the scope, RFC 6750
3.1); Google's "Using OAuth 2.0 for Web Server Applications" (a revoked grant's refresh answers `invalid_grant`).
"""

from __future__ import annotations

import json
import logging
import re
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError, UrlElicitationRequiredError

from server.emulator import Emulator
from server.remote.oauth_common import AllowedUsers
from server.tests.support.accounts import WORK_OWNER, two_account_emulator
from server.tests.support.emulator import OWNER
from server.tests.support.http_server import mcp_client
from server.tests.support.oauth_browser import at_google
from server.tests.support.remote_http import RemoteRun, follow_once

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Emulator]:
    with two_account_emulator(tmp_path_factory.mktemp("people")) as running:
        yield running


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def text_of(result: Any) -> str:
    return "\n".join(block.text for block in result.content if getattr(block, "text", None))


async def search(run: RemoteRun, token: str, query: str, **arguments: Any) -> Any:
    async with mcp_client(run.url, "legacy", bearer(token)) as client:
        return await client.call_tool("gmail_search_messages", {"query": query, **arguments})


async def test_two_people_each_reach_only_their_own_mail_caches_and_accounts(remote: RemoteRun) -> None:
    me, ada = remote.sign_in(OWNER), remote.sign_in(WORK_OWNER)
    mine, hers = remote.token_for(me).access_token, remote.token_for(ada).access_token
    async with mcp_client(remote.url, "legacy", bearer(mine)) as client:
        tools = (await client.list_tools()).tools
    # One account each: no `account` argument to name anyone else's.
    search_tool = next(tool for tool in tools if tool.name == "gmail_search_messages")
    assert "account" not in search_tool.input_schema.get("properties", {})
    # The same query, first for one person then the other: a shared cache would answer her with my (empty) page.
    assert "Roadmap review" not in text_of(await search(remote, mine, "Roadmap"))
    hers_first = await search(remote, hers, "Roadmap")
    assert "Roadmap review" in text_of(hers_first) and not hers_first.is_error
    assert hers_first.structured_content["mailbox"] == WORK_OWNER
    # Naming her address as the account from my token reaches nothing of hers.
    refused = await search(remote, mine, "Roadmap", account=WORK_OWNER)
    assert refused.is_error and "Roadmap review" not in text_of(refused)
    people = remote.remote.people
    assert people.person(me).default_name == OWNER and people.person(ada).default_name == WORK_OWNER
    mine_ctx, hers_ctx = people.person(me).context_for(None), people.person(ada).context_for(None)
    # Each person's client (connections, quota budget), caches, confirmation codes, send limit and audit trail.
    assert mine_ctx.gmail is not hers_ctx.gmail and mine_ctx.cache is not hers_ctx.cache
    assert mine_ctx.safety.confirmations is not hers_ctx.safety.confirmations
    assert mine_ctx.safety.send_guard is not hers_ctx.safety.send_guard
    assert mine_ctx.safety.audit is not hers_ctx.safety.audit
    # Kept in a bounded LRU of people: the least recently served person's clients go first.
    people.max_people = 1
    assert people.person(ada).context_for(None) is hers_ctx and people.person(me).context_for(None) is not mine_ctx


async def test_a_person_with_two_google_accounts_gets_both_in_the_enum_and_another_person_neither(
    remote: RemoteRun,
) -> None:
    me = remote.sign_in(OWNER)
    remote.sign_in(WORK_OWNER, to=me)  # connected another account
    stranger = remote.sign_in(WORK_OWNER)  # she signs in for herself too: her own, separate grant
    async with mcp_client(remote.url, "legacy", bearer(remote.token_for(me).access_token)) as client:
        tools = (await client.list_tools()).tools
        schema = next(tool for tool in tools if tool.name == "gmail_search_messages").input_schema
        assert schema["properties"]["account"]["enum"] == [OWNER, WORK_OWNER]
        work = await client.call_tool("gmail_search_messages", {"query": "Budget", "account": WORK_OWNER})
        assert "Budget 2025" in text_of(work)
    async with mcp_client(remote.url, "legacy", bearer(remote.token_for(stranger).access_token)) as client:
        tools = (await client.list_tools()).tools
        schema = next(tool for tool in tools if tool.name == "gmail_search_messages").input_schema
        assert "account" not in schema["properties"]
        mine = await client.call_tool("gmail_search_messages", {"query": "x", "account": OWNER})
        assert mine.is_error and "No account named" in text_of(mine)


async def test_no_token_or_a_token_for_another_resource_gets_401_with_the_metadata_url(remote: RemoteRun) -> None:
    me = remote.sign_in(OWNER)
    elsewhere = remote.token_for(me, resource="https://other.example/mcp").access_token
    good = remote.token_for(me).access_token
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    async with httpx2.AsyncClient(base_url=remote.base) as http:
        missing = await http.post("/mcp", json=ping)
        foreign = await http.post("/mcp", json=ping, headers=bearer(elsewhere))
        in_query = await http.post(f"/mcp?access_token={good}", json=ping)
        open_doc = await http.get("/.well-known/oauth-protected-resource/mcp")
    metadata_url = f'resource_metadata="{remote.base}/.well-known/oauth-protected-resource/mcp"'
    for answer in (missing, foreign, in_query):
        assert answer.status_code == 401
        assert (
            answer.headers["www-authenticate"].startswith("Bearer ")
            and metadata_url in answer.headers["www-authenticate"]
        )
    assert 'error="invalid_token"' in foreign.headers["www-authenticate"]
    assert open_doc.status_code != 401  # discovery needs no token (served by the authorization server's routes)


async def test_a_write_tool_without_its_grant_answers_403_insufficient_scope(remote: RemoteRun) -> None:
    me = remote.sign_in(OWNER)
    read_only = remote.token_for(me, scopes=["gmail.read"]).access_token
    call = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "gmail_create_draft", "arguments": {"to": ["a@example.com"], "subject": "s", "body": "b"}},
    }
    async with httpx2.AsyncClient(base_url=remote.base) as http:
        refused = await http.post("/mcp", json=call, headers=bearer(read_only))
    assert refused.status_code == 403
    challenge = refused.headers["www-authenticate"]
    assert 'error="insufficient_scope"' in challenge and 'scope="gmail.read gmail.drafts"' in challenge
    # With the grant, the same call goes through the gate and reaches the tool (the body was replayed whole).
    async with mcp_client(remote.url, "legacy", bearer(remote.token_for(me).access_token)) as client:
        done = await client.call_tool("gmail_create_draft", call["params"]["arguments"])
    assert not done.is_error, text_of(done)
    # A read tool needs only gmail.read.
    assert not (await search(remote, read_only, "Roadmap")).is_error


async def test_a_revoked_google_grant_makes_the_next_request_401_until_the_person_signs_in_again(
    remote: RemoteRun, emulator: Emulator
) -> None:
    me = remote.sign_in(OWNER)
    pair = remote.token_for(me)
    assert not (await search(remote, pair.access_token, "Roadmap")).is_error
    google_refresh = remote.remote.records.google_account(me, OWNER).refresh_token
    async with httpx2.AsyncClient() as http:  # the person removes the app at myaccount.google.com
        revoked = await http.post(emulator.url + "/revoke", data={"token": google_refresh})
    assert revoked.status_code == 200
    failed = await search(remote, pair.access_token, "Roadmap")
    assert failed.is_error and "sign in again" in text_of(failed)
    async with httpx2.AsyncClient(base_url=remote.base) as http:
        answer = await http.post(
            "/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers=bearer(pair.access_token)
        )
    assert answer.status_code == 401 and 'error="invalid_token"' in answer.headers["www-authenticate"]
    # The client's grant is gone with it: its refresh token cannot bring the dead session back.
    assert remote.remote.ledger.verify_access(pair.access_token) is None
    assert remote.remote.ledger.rotate(pair.refresh_token, "test") is None
    # A fresh sign-in saves a new Google grant: served again.
    remote.sign_in(OWNER)
    again = await search(remote, remote.token_for(me).access_token, "Roadmap")
    assert not again.is_error, text_of(again)


async def test_logs_never_hold_tokens_codes_or_google_secrets(
    remote: RemoteRun, emulator: Emulator, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    me = remote.sign_in(OWNER)
    pair = remote.token_for(me)
    await search(remote, pair.access_token, "Roadmap")
    async with httpx2.AsyncClient(base_url=remote.base) as http:
        await http.post("/mcp", json={}, headers=bearer(pair.access_token + "x"))
    google = remote.remote.records.google_account(me, OWNER)
    secrets = [pair.access_token, pair.refresh_token, google.refresh_token, remote.remote.client.client_secret]
    logged = "\n".join(record.getMessage() + json.dumps(record.__dict__, default=str) for record in caplog.records)
    assert [secret for secret in secrets if secret in logged] == []
    assert OWNER not in logged  # the person appears as a hash


def link_in(result: Any) -> str:
    found = re.search(r"(http://127\.0\.0\.1:\d+/oauth/accounts/connect\?\S+)", text_of(result))
    assert found, text_of(result)
    return found.group(1)


def page_of(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as refused:
        return refused.code, refused.read().decode()


async def test_connect_another_account_from_the_link_in_the_unknown_account_error(remote: RemoteRun) -> None:
    me = remote.sign_in(OWNER)
    token = remote.token_for(me).access_token
    unknown = await search(remote, token, "Budget", account=WORK_OWNER)
    assert unknown.is_error
    link = link_in(unknown)
    # The browser: the person's own Google sign-in first (this browser is theirs), then the new account's consent.
    to_google = follow_once(link)
    assert f"login_hint={OWNER.replace('@', '%40')}" in to_google
    second = follow_once(follow_once(to_google))  # Google -> our callback -> Google again, for the new account
    assert "login_hint=" + WORK_OWNER.replace("@", "%40") in second
    with urllib.request.urlopen(follow_once(second), timeout=10) as answer:
        status, page, headers = answer.status, answer.read().decode(), answer.headers
    assert status == 200 and "Connected" in page and WORK_OWNER in page
    assert headers["Cache-Control"] == "no-store" and "frame-ancestors 'none'" in headers["Content-Security-Policy"]
    found = await search(remote, token, "Budget", account=WORK_OWNER)
    assert not found.is_error and "Budget 2025" in text_of(found)
    assert page_of(link)[0] == 400  # single use


async def test_a_connect_link_opened_in_someone_elses_browser_attaches_nothing(remote: RemoteRun) -> None:
    me = remote.sign_in(OWNER)
    link = link_in(await search(remote, remote.token_for(me).access_token, "x", account="nobody@example.net"))
    # Someone else opens it: Google signs them in as themselves, not as the link's owner.
    back = at_google(follow_once(link), WORK_OWNER)
    status, page = page_of(back)
    assert status == 403 and "someone else" in page
    assert [account.email for account in remote.remote.records.google_accounts(me)] == [OWNER]


async def test_a_person_the_allow_list_no_longer_names_is_signed_out(remote: RemoteRun) -> None:
    """Grants roll for 30 days: an operator who removes someone from GMAIL_MCP_ALLOWED_USERS (and restarts) must not
    have to wait that long. Their next request answers 401 and their grant, refresh token included, is gone."""
    me = remote.sign_in(OWNER)
    pair = remote.remote.ledger.issue_tokens(
        subject=me, client_id="test", scopes=["gmail.read"], resource=remote.url, email=OWNER
    )
    assert not (await search(remote, pair.access_token, "Budget")).is_error
    remote.remote.gate.allowed_users = AllowedUsers.parse(WORK_OWNER)  # the list the server restarted with
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    async with httpx2.AsyncClient(base_url=remote.base) as http:
        answer = await http.post("/mcp", json=ping, headers=bearer(pair.access_token))
    assert answer.status_code == 401 and "no longer" in answer.headers["www-authenticate"]
    assert remote.remote.ledger.rotate(pair.refresh_token, "test") is None


async def test_failed_tokens_are_rate_limited_per_client_as_static_ones(remote: RemoteRun) -> None:
    me = remote.sign_in(OWNER)
    good = remote.token_for(me).access_token
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    async with httpx2.AsyncClient(base_url=remote.base) as http:
        wrong = [await http.post("/mcp", json=ping, headers=bearer(f"guess-{n}")) for n in range(10)]
        blocked = await http.post("/mcp", json=ping, headers=bearer(good))
    assert [answer.status_code for answer in wrong] == [401] * 10
    assert blocked.status_code == 429 and int(blocked.headers["retry-after"]) >= 1


async def test_a_client_that_opens_urls_is_offered_the_connect_page_as_a_url_elicitation(remote: RemoteRun) -> None:
    """MCP 2025-11-25 URL-mode elicitation: the -32042 error carries the link; the person connects; the retry works."""

    async def never(_ctx: Any, _params: Any) -> Any:
        raise AssertionError("the server asks nothing mid-call here")

    me = remote.sign_in(OWNER)
    http = httpx2.AsyncClient(headers=bearer(remote.token_for(me).access_token), timeout=httpx2.Timeout(60.0))
    client = Client(streamable_http_client(remote.url, http_client=http), mode="legacy", elicitation_callback=never)
    async with client as session:
        with pytest.raises(MCPError) as raised:
            await session.call_tool("gmail_search_messages", {"query": "Budget", "account": WORK_OWNER})
        (offer,) = UrlElicitationRequiredError.from_error(raised.value.error).elicitations
        assert offer.url.startswith(remote.base + "/oauth/accounts/connect?") and WORK_OWNER in offer.message
        second = follow_once(follow_once(follow_once(offer.url)))
        assert page_of(follow_once(second))[0] == 200
        found = await session.call_tool("gmail_search_messages", {"query": "Budget", "account": WORK_OWNER})
        assert not found.is_error and "Budget 2025" in text_of(found)


async def test_a_dead_grant_of_a_further_account_drops_that_account_only(remote: RemoteRun, emulator: Emulator) -> None:
    me = remote.sign_in(OWNER)
    remote.sign_in(WORK_OWNER, to=me)
    token = remote.token_for(me).access_token
    assert not (await search(remote, token, "Budget", account=WORK_OWNER)).is_error
    work_refresh = remote.remote.records.google_account(me, WORK_OWNER).refresh_token
    async with httpx2.AsyncClient() as http:
        assert (await http.post(emulator.url + "/revoke", data={"token": work_refresh})).status_code == 200
    assert (await search(remote, token, "Budget", account=WORK_OWNER)).is_error
    # The person stays signed in (their own grant is fine); the dead account is gone from their accounts.
    still = await search(remote, token, "Roadmap")
    assert not still.is_error
    assert [account.email for account in remote.remote.records.google_accounts(me)] == [OWNER]


async def test_a_session_opened_by_one_person_is_refused_to_another(remote: RemoteRun) -> None:
    me, ada = remote.sign_in(OWNER), remote.sign_in(WORK_OWNER)
    mine, hers = remote.token_for(me).access_token, remote.token_for(ada).access_token
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    accept = {"Accept": "application/json, text/event-stream"}
    async with httpx2.AsyncClient(base_url=remote.base) as http:
        opened = await http.post("/mcp", json=init, headers={**bearer(mine), **accept})
        session = opened.headers["mcp-session-id"]
        listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
        headers = {"mcp-session-id": session, "mcp-protocol-version": "2025-06-18", **accept}
        hijacked = await http.post("/mcp", json=listing, headers={**bearer(hers), **headers})
        own = await http.post("/mcp", json=listing, headers={**bearer(mine), **headers})
    assert opened.status_code == 200 and own.status_code == 200
    assert hijacked.status_code in (403, 404) and "gmail_search_messages" not in hijacked.text
