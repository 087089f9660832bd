"""The authorization server end to end: the test is the browser (cookies kept, redirects followed by hand) and the
app; the emulator is Google over real HTTP; the authorization server runs in-process over the test's SQLite store
and clock. Sign-in by a metadata-document client and by a registered one, the token endpoint (PKCE, single-use
codes, rotation with a grace window), revocation by a public client, the discovery documents, and logs that never
carry a secret.

Evidence: OAuth 2.1 (draft-ietf-oauth-v2-1-13) 4.1 (code flow, PKCE S256, single-use codes whose reuse revokes),
4.3 and 4.3.1 (refresh rotation), 3.2.3 / RFC 6749 5.1-5.2 (no-store, error JSON, invalid_client 401); RFC 9207
(`iss` in every authorization response); RFC 8707 (the token's audience); RFC 7009 (200 for unknown tokens);
RFC 8414 / RFC 9728 (the documents and their paths); draft-ietf-oauth-client-id-metadata-document-02 (the client
id is the document's URL). The MCP authorization spec (2025-11-25, 2026-07-28) for CIMD preferred and `resource`.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from server.emulator import Emulator
from server.emulator.google_identity import subject_of
from server.remote.store import GOOGLE
from server.runtime.observability import JsonFormatter
from server.tests.support.accounts import two_account_emulator
from server.tests.support.emulator import OWNER
from server.tests.support.oauth_browser import (
    APP_REDIRECT,
    ISSUER,
    RESOURCE,
    authorize_params,
    build_server,
    cimd_client,
    exchange,
    http_client,
    sign_in,
)

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Emulator]:
    with two_account_emulator(tmp_path_factory.mktemp("as")) as running:
        yield running


async def test_a_metadata_document_client_signs_in_and_gets_tokens_for_this_resource(
    store, clock, emulator: Emulator, client_file: Path, docs
) -> None:
    server = build_server(store, clock, emulator, client_file)
    client_id = cimd_client(docs)
    async with http_client(server) as browser, http_client(server, "10.0.0.8") as app:
        flow = authorize_params(client_id, scope="gmail.read gmail.drafts")
        answer = await sign_in(browser, flow)
        assert answer.status_code == 302, answer.text
        assert flow.redirect.startswith(APP_REDIRECT + "?")
        assert flow.answer["state"] == flow.params["state"] and flow.answer["iss"] == ISSUER
        assert "Example Assistant" in flow.consent_page and "127.0.0.1" in flow.consent_page
        assert "send" not in flow.consent_page and "create, change and delete drafts" in flow.consent_page
        tokens = await exchange(app, flow, client_id)
    assert tokens.status_code == 200, tokens.text
    assert tokens.headers["cache-control"] == "no-store" and tokens.headers["pragma"] == "no-cache"
    body = tokens.json()
    assert body["token_type"] == "Bearer" and body["expires_in"] == 3600
    assert body["scope"] == "gmail.drafts gmail.read"
    access = server.ledger.verify_access(body["access_token"], RESOURCE)
    assert access is not None and access.subject == subject_of(OWNER) and access.email == OWNER
    assert access.client_id == client_id and access.scopes == {"gmail.read", "gmail.drafts"}
    assert server.ledger.verify_access(body["access_token"], "https://other.example/mcp") is None
    (account,) = server.records.google_accounts(subject_of(OWNER))
    assert account.email == OWNER and account.refresh_token
    assert "https://www.googleapis.com/auth/gmail.compose" in account.scopes
    assert account.refresh_token not in str(store.get(GOOGLE, subject_of(OWNER)))  # sealed
    assert server.records.consented(subject_of(OWNER), client_id) == {"gmail.read", "gmail.drafts"}


async def test_registered_clients_public_and_confidential_sign_in(
    store, clock, emulator: Emulator, client_file: Path
) -> None:
    server = build_server(store, clock, emulator, client_file)
    async with http_client(server) as browser, http_client(server, "10.0.0.8") as app:
        public = await app.post(
            "/register",
            json={"client_name": "Cursor", "redirect_uris": [APP_REDIRECT], "token_endpoint_auth_method": "none"},
        )
        assert public.status_code == 201, public.text
        assert "client_secret" not in public.json() and public.json()["redirect_uris"] == [APP_REDIRECT]
        flow = authorize_params(public.json()["client_id"])
        assert (await sign_in(browser, flow)).status_code == 302
        assert "registered itself" in flow.consent_page and "Cursor" in flow.consent_page
        assert (await exchange(app, flow, public.json()["client_id"])).status_code == 200

        confidential = await app.post("/register", json={"client_name": "Box", "redirect_uris": [APP_REDIRECT]})
        registered = confidential.json()
        assert registered["token_endpoint_auth_method"] == "client_secret_basic" and registered["client_secret"]
        flow = authorize_params(registered["client_id"])
        assert (await sign_in(browser, flow)).status_code == 302
        refused = await exchange(app, flow, registered["client_id"], client_secret="wrong")
        assert refused.status_code == 401 and refused.json()["error"] == "invalid_client"
        flow = authorize_params(registered["client_id"])
        assert (await sign_in(browser, flow)).status_code == 302
        basic = (registered["client_id"], registered["client_secret"])
        form = {
            "grant_type": "authorization_code",
            "code": flow.answer["code"],
            "redirect_uri": APP_REDIRECT,
            "code_verifier": flow.verifier,
        }
        tokens = await app.post("/token", data=form, auth=basic)
        assert tokens.status_code == 200, tokens.text
        unknown = await app.post("/token", data={**form, "client_id": "gmcp-nobody"})
        assert unknown.status_code == 401 and unknown.json()["error"] == "invalid_client"


async def test_a_code_is_single_use_and_its_reuse_revokes_what_it_issued(
    store, clock, emulator: Emulator, client_file: Path, docs
) -> None:
    server = build_server(store, clock, emulator, client_file)
    client_id = cimd_client(docs)
    async with http_client(server) as browser, http_client(server, "10.0.0.8") as app:
        flow = authorize_params(client_id)
        await sign_in(browser, flow)
        first = await exchange(app, flow, client_id)
        assert first.status_code == 200
        access = first.json()["access_token"]
        assert server.ledger.verify_access(access, RESOURCE) is not None
        again = await exchange(app, flow, client_id)
        assert again.status_code == 400 and again.json()["error"] == "invalid_grant"
        assert server.ledger.verify_access(access, RESOURCE) is None
        form = {"grant_type": "refresh_token", "refresh_token": first.json()["refresh_token"], "client_id": client_id}
        refresh = await app.post("/token", data=form)
        assert refresh.status_code == 400 and refresh.json()["error"] == "invalid_grant"

        # A wrong verifier or redirect URI spends the code too, and issues nothing.
        flow = authorize_params(client_id)
        await sign_in(browser, flow)
        wrong = await exchange(
            app, flow, client_id, code_verifier=flow.verifier[:-1] + ("B" if flow.verifier.endswith("A") else "A")
        )
        assert wrong.json() == {
            "error": "invalid_grant",
            "error_description": "The PKCE code_verifier does not match the code_challenge.",
        }
        for odd in ("é" * 43, "short", flow.verifier + " "):  # RFC 7636 4.1; non-ASCII once answered 500
            flow = authorize_params(client_id)
            await sign_in(browser, flow)
            refused = await exchange(app, flow, client_id, code_verifier=odd)
            assert refused.status_code == 400 and refused.json()["error"] == "invalid_grant", odd
            assert refused.headers["cache-control"] == "no-store"
        flow = authorize_params(client_id)
        await sign_in(browser, flow)
        moved = await exchange(app, flow, client_id, redirect_uri="http://127.0.0.1:9/elsewhere")
        assert moved.json()["error"] == "invalid_grant"
        flow = authorize_params(client_id)
        await sign_in(browser, flow)
        elsewhere = await exchange(app, flow, client_id, resource="https://other.example/mcp")
        assert elsewhere.status_code == 400 and elsewhere.json()["error"] == "invalid_target"
        expired = authorize_params(client_id)
        await sign_in(browser, expired)
        clock.now += 61  # codes live 60 s
        late = await exchange(app, expired, client_id)
        assert late.json()["error"] == "invalid_grant"


async def test_concurrent_refreshes_within_the_grace_window_get_the_same_pair(
    store, clock, emulator: Emulator, client_file: Path, docs
) -> None:
    server = build_server(store, clock, emulator, client_file)
    client_id = cimd_client(docs)
    async with http_client(server) as browser, http_client(server, "10.0.0.8") as app:
        flow = authorize_params(client_id)
        await sign_in(browser, flow)
        first = (await exchange(app, flow, client_id)).json()
        form = {"grant_type": "refresh_token", "refresh_token": first["refresh_token"], "client_id": client_id}
        answers: list = []

        async def refresh() -> None:
            answers.append(await app.post("/token", data=form))

        async with anyio.create_task_group() as group:
            for _ in range(4):
                group.start_soon(refresh)
        assert {answer.status_code for answer in answers} == {200}
        pairs = {(answer.json()["access_token"], answer.json()["refresh_token"]) for answer in answers}
        assert len(pairs) == 1
        ((access, refresh_token),) = pairs
        assert answers[0].headers["cache-control"] == "no-store"
        assert server.ledger.verify_access(access, RESOURCE) is not None
        assert server.ledger.verify_access(first["access_token"], RESOURCE) is not None  # same grant lives on
        broader = await app.post("/token", data={**form, "refresh_token": refresh_token, "scope": "gmail.drafts"})
        assert broader.status_code == 400 and broader.json()["error"] == "invalid_scope"
        clock.now += 31  # past the 30 s grace window the old refresh token is spent
        # ... but the refused broader refresh did not spend the new one (else this would be a replay, RFC 9700).
        onward = await app.post("/token", data={**form, "refresh_token": refresh_token})
        assert onward.status_code == 200 and onward.json()["refresh_token"] != refresh_token
        stranger = {**form, "refresh_token": onward.json()["refresh_token"], "client_id": "gmcp-other"}
        assert (await app.post("/token", data=stranger)).status_code == 401
        late = await app.post("/token", data=form)  # a replay after the window: the family ends (RFC 9700 4.14.2)
        assert late.status_code == 400 and late.json()["error"] == "invalid_grant"
        assert late.headers["cache-control"] == "no-store"
        assert server.ledger.verify_access(onward.json()["access_token"], RESOURCE) is None


async def test_a_public_client_revokes_with_its_client_id_and_the_token_is_refused(
    store, clock, emulator: Emulator, client_file: Path, docs
) -> None:
    server = build_server(store, clock, emulator, client_file)
    client_id = cimd_client(docs)
    async with http_client(server) as browser, http_client(server, "10.0.0.8") as app:
        flow = authorize_params(client_id)
        await sign_in(browser, flow)
        tokens = (await exchange(app, flow, client_id)).json()
        unknown = await app.post("/revoke", data={"token": "not-a-token", "client_id": client_id})
        assert unknown.status_code == 200
        stranger = await app.post("/revoke", data={"token": tokens["refresh_token"], "client_id": "gmcp-nobody"})
        assert stranger.status_code == 401 and stranger.json()["error"] == "invalid_client"
        assert server.ledger.verify_access(tokens["access_token"], RESOURCE) is not None
        hinted = {"token": tokens["refresh_token"], "token_type_hint": "refresh_token", "client_id": client_id}
        revoked = await app.post("/revoke", data=hinted)
        assert revoked.status_code == 200 and revoked.headers["cache-control"] == "no-store"
        assert server.ledger.verify_access(tokens["access_token"], RESOURCE) is None
        form = {"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"], "client_id": client_id}
        assert (await app.post("/token", data=form)).json()["error"] == "invalid_grant"


async def test_the_discovery_documents_are_served_at_every_path(store, clock, emulator: Emulator, client_file) -> None:
    server = build_server(store, clock, emulator, client_file)
    async with http_client(server) as app:
        for path in ("/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"):
            document = (await app.get(path)).json()
            assert document["issuer"] == ISSUER and document["token_endpoint"] == ISSUER + "/token"
            assert document["code_challenge_methods_supported"] == ["S256"]
            assert document["authorization_response_iss_parameter_supported"] is True
            assert document["registration_endpoint"] == ISSUER + "/register"
        # Browser-based clients call the token, revocation and registration endpoints with fetch (CORS).
        for path in ("/token", "/revoke", "/register"):
            preflight = await app.options(path, headers={"Origin": "https://inspector.example"})
            assert preflight.status_code == 204 and preflight.headers["access-control-allow-origin"] == "*"
            assert "Content-Type" in preflight.headers["access-control-allow-headers"]
        refused = await app.post("/token", data={"grant_type": "x", "client_id": "gmcp-nobody"})
        assert refused.status_code == 401 and refused.headers["access-control-allow-origin"] == "*"
        assert "access-control-allow-origin" not in (await app.get("/authorize")).headers
        for path in ("/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"):
            document = (await app.get(path)).json()
            assert document["resource"] == RESOURCE and document["authorization_servers"] == [ISSUER]
            assert document["scopes_supported"] == ["gmail.read", "gmail.drafts"]


async def test_logs_never_carry_tokens_codes_client_secrets_or_google_refresh_tokens(
    store, clock, emulator: Emulator, client_file: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.DEBUG, logger="gmail_mcp")
    server = build_server(store, clock, emulator, client_file)
    secrets_seen: list[str] = []
    async with http_client(server) as browser, http_client(server, "10.0.0.8") as app:
        registered = (await app.post("/register", json={"client_name": "Box", "redirect_uris": [APP_REDIRECT]})).json()
        client = registered["client_id"]
        secrets_seen.append(registered["client_secret"])
        flow = authorize_params(client)
        await sign_in(browser, flow)
        secrets_seen.append(flow.answer["code"])
        auth = {"client_secret": registered["client_secret"]}
        tokens = (await exchange(app, flow, client, **auth)).json()
        await exchange(app, flow, client, **auth)  # a replay: logged as refused
        flow = authorize_params(client)
        await sign_in(browser, flow)
        tokens = (await exchange(app, flow, client, **auth)).json()
        secrets_seen += [flow.answer["code"], tokens["access_token"], tokens["refresh_token"]]
        form = {"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"], "client_id": client, **auth}
        rotated = (await app.post("/token", data=form)).json()
        secrets_seen += [rotated["access_token"], rotated["refresh_token"]]
        await app.post("/revoke", data={"token": rotated["access_token"], "client_id": client, **auth})
    secrets_seen += [account.refresh_token for account in server.records.google_accounts(subject_of(OWNER))]
    # Everything the server side logged (the test's own HTTP clients and the emulator play browser and Google).
    server_side = [record for record in caplog.records if not record.name.startswith(("httpx", "server.emulator"))]
    assert any("signed in" in record.getMessage() for record in server_side)
    logged = "\n".join(JsonFormatter().format(record) for record in server_side)
    assert all(secret and secret not in logged for secret in secrets_seen)


async def test_an_issuer_with_a_path_serves_everything_below_it(
    store, clock, emulator: Emulator, client_file, docs
) -> None:
    issuer, resource = ISSUER + "/gmail", ISSUER + "/gmail/mcp"
    server = build_server(store, clock, emulator, client_file, issuer=issuer, resource_url=resource)
    client_id = cimd_client(docs)
    async with http_client(server, base=issuer) as browser, http_client(server, "10.0.0.8", base=issuer) as app:
        flow = authorize_params(client_id, resource=resource)
        assert (await sign_in(browser, flow)).status_code == 302
        assert flow.answer["iss"] == issuer
        tokens = await exchange(app, flow, client_id)
        assert tokens.status_code == 200, tokens.text
        assert server.ledger.verify_access(tokens.json()["access_token"], resource) is not None
        document = (await app.get(ISSUER + "/.well-known/oauth-authorization-server/gmail")).json()
        assert document["authorization_endpoint"] == issuer + "/authorize"
        assert (await app.get(ISSUER + "/.well-known/oauth-protected-resource/gmail/mcp")).json()[
            "resource"
        ] == resource
