"""The authorization request and the consent page in the browser: what is refused before any redirect (an unknown
client, a redirect URI not in its document or registration), what goes back to the client with `iss` (PKCE plain,
a foreign `resource`, unknown scopes, Deny, a person not allowed), and the consent bound to the browser that
started the request (no confused deputy). The emulator is Google; the test is the browser.

Evidence: RFC 6749 4.1.2.1 (never redirect to an unverified redirect URI; errors to a verified one carry `state`);
RFC 9207 2 (`iss` in error responses too); OAuth 2.1 4.1.1 and 7.5.3 (S256; plain refused), 7.2 (consent
bound to the user agent: CSRF), RFC 8252 7.3 (loopback redirects on any port); RFC 8707 2 (`invalid_target`);
RFC 6265bis (SameSite=Lax, `__Host-` prefix); the MCP authorization spec's security considerations on confused
deputies; Google's granular consent (a person may grant fewer scopes than asked: "How to handle granular
permissions", developers.google.com/identity/protocols/oauth2/resources/granular-permissions).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.applications import Starlette

from server.emulator import Emulator
from server.emulator.google_identity import subject_of
from server.tests.support.accounts import WORK_OWNER, two_account_emulator
from server.tests.support.emulator import OWNER
from server.tests.support.oauth_browser import (
    APP_REDIRECT,
    ISSUER,
    RESOURCE,
    at_google,
    authorize_params,
    base_of,
    build_server,
    cimd_client,
    decide,
    exchange,
    form_fields,
    http_client,
    path_of,
    query_of,
    sign_in,
    start,
)

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Emulator]:
    with two_account_emulator(tmp_path_factory.mktemp("consent")) as running:
        yield running


def assert_to_client(location: str, state: str, **expected: str) -> dict[str, str]:
    """A redirect to the app's redirect URI carrying `state`, `iss` and the expected parameters."""
    params = query_of(location)
    assert base_of(location) == APP_REDIRECT
    assert params["iss"] == ISSUER and params["state"] == state
    assert {name: params.get(name) for name in expected} == expected, params
    return params


async def test_a_redirect_uri_not_in_the_document_or_registration_gets_a_page_not_a_redirect(
    store, clock, emulator: Emulator, client_file: Path, docs
) -> None:
    server = build_server(store, clock, emulator, client_file)
    client_id = cimd_client(docs, uris=[APP_REDIRECT, "https://app.example/cb"])
    async with http_client(server) as browser:
        for wrong in ("https://evil.example/cb", "https://app.example/cb/x", "https://app.example:8443/cb", ""):
            refused = await browser.get("/authorize", params=authorize_params(client_id, wrong).params)
            assert refused.status_code == 400 and "location" not in refused.headers, wrong
            assert "not among the redirect URIs" in refused.text
        # A loopback redirect may come back on another port (RFC 8252 7.3); its path may not change.
        moved = authorize_params(client_id, "http://127.0.0.1:50123/callback")
        assert (await start(browser, moved)).status_code == 302 and moved.consent_page
        assert (
            await browser.get("/authorize", params=authorize_params(client_id, APP_REDIRECT + "x").params)
        ).status_code == 400
        registered = (await browser.post("/register", json={"redirect_uris": [APP_REDIRECT]})).json()
        foreign = await browser.get(
            "/authorize", params=authorize_params(registered["client_id"], "https://evil.example/cb").params
        )
        assert foreign.status_code == 400 and "location" not in foreign.headers
        unknown = await browser.get("/authorize", params=authorize_params("gmcp-never-registered").params)
        assert unknown.status_code == 400 and "register again" in unknown.text


async def test_pkce_plain_a_foreign_resource_and_unknown_scopes_go_back_to_the_client_with_iss(
    store, clock, emulator: Emulator, client_file: Path, docs
) -> None:
    server = build_server(store, clock, emulator, client_file)
    client_id = cimd_client(docs)
    async with http_client(server) as browser:
        cases = [
            ({"code_challenge_method": "plain"}, "invalid_request"),
            ({"code_challenge_method": ""}, "invalid_request"),  # absent means plain (RFC 7636 4.3)
            ({"code_challenge": ""}, "invalid_request"),
            ({"resource": "https://other.example/mcp"}, "invalid_target"),
            ({"scope": "gmail.read gmail.everything"}, "invalid_scope"),
            ({"response_type": "token"}, "unsupported_response_type"),
        ]
        for change, error in cases:
            flow = authorize_params(client_id)
            flow.params = {name: value for name, value in {**flow.params, **change}.items() if value}
            answer = await browser.get("/authorize", params=flow.params)
            assert answer.status_code == 302, change
            assert_to_client(answer.headers["location"], flow.params["state"], error=error)
        flow = authorize_params(client_id, code_challenge_method="plain")
        refused = await browser.get("/authorize", params=flow.params)
        assert "plain is refused" in query_of(refused.headers["location"])["error_description"]


async def test_deny_sends_access_denied_with_state_and_iss(store, clock, emulator: Emulator, client_file, docs) -> None:
    server = build_server(store, clock, emulator, client_file)
    client_id = cimd_client(docs)
    async with http_client(server) as browser:
        flow = authorize_params(client_id)
        await start(browser, flow)
        denied = await decide(browser, flow, "deny")
        assert denied.status_code == 302
        assert_to_client(denied.headers["location"], flow.params["state"], error="access_denied")
        again = await decide(browser, flow, "allow")  # the request is finished
        assert again.status_code == 400 and "expired" in again.text


async def test_a_consent_from_another_browser_is_refused(store, clock, emulator: Emulator, client_file, docs) -> None:
    server = build_server(store, clock, emulator, client_file)
    client_id = cimd_client(docs)
    async with http_client(server, "10.0.0.66") as attacker, http_client(server) as victim:
        flow = authorize_params(client_id)
        started = await start(attacker, flow)
        consent_url = path_of(started.headers["location"])
        fields = form_fields(flow.consent_page)
        # The victim opens the attacker's consent link, or is made to post the attacker's form.
        assert (await victim.get(consent_url)).status_code == 403
        posted = await victim.post("/oauth/consent", data={**fields, "decision": "allow"})
        assert posted.status_code == 403 and "location" not in posted.headers and "another browser" in posted.text
        # The victim's own request cannot be approved with another request's CSRF value either.
        own = authorize_params(client_id)
        await start(victim, own)
        mixed = await victim.post(
            "/oauth/consent", data={**form_fields(own.consent_page), "csrf": fields["csrf"], "decision": "allow"}
        )
        assert mixed.status_code == 403
        # The attacker's own browser still can (the request was not spent by the refusals).
        assert (await decide(attacker, flow)).status_code == 302
        # Google's callback only completes in the browser that started the request.
        to_google = await decide(victim, own)
        back = at_google(to_google.headers["location"], OWNER)
        stolen = await attacker.get(path_of(back))
        assert stolen.status_code == 403 and "location" not in stolen.headers


async def test_the_browser_cookie_is_httponly_lax_and_secure_host_prefixed_on_https(
    store, clock, emulator: Emulator, client_file, docs
) -> None:
    server = build_server(
        store,
        clock,
        emulator,
        client_file,
        issuer="https://mail.example.net",
        resource_url="https://mail.example.net/mcp",
    )
    client_id = cimd_client(docs)
    async with http_client(server, base="https://mail.example.net") as browser:
        flow = authorize_params(client_id, resource="https://mail.example.net/mcp")
        answer = await browser.get("/authorize", params=flow.params)
    cookie = answer.headers["set-cookie"]
    assert cookie.startswith("__Host-gmail-mcp-browser=")
    lowered = cookie.lower()
    assert "httponly" in lowered and "samesite=lax" in lowered and "secure" in lowered and "path=/" in lowered
    assert answer.headers["location"].startswith("https://mail.example.net/oauth/consent?request=")


async def test_client_names_are_escaped_on_the_consent_page(
    store, clock, emulator: Emulator, client_file, docs
) -> None:
    server = build_server(store, clock, emulator, client_file)
    client_id = cimd_client(docs, name='<script>alert("x")</script> Mail')
    async with http_client(server) as browser:
        flow = authorize_params(client_id)
        await start(browser, flow)
    assert "<script>" not in flow.consent_page and "&lt;script&gt;" in flow.consent_page
    async with http_client(server) as browser:
        expired = await browser.get("/oauth/consent?request=x")
    assert "frame-ancestors 'none'" in expired.headers["content-security-policy"]


async def test_a_person_not_allowed_cannot_sign_in(store, clock, emulator: Emulator, client_file, docs) -> None:
    server = build_server(store, clock, emulator, client_file, allowed=f"{OWNER}, @example.org")
    client_id = cimd_client(docs)
    async with http_client(server) as browser:
        flow = authorize_params(client_id)
        page = await sign_in(browser, flow, user=WORK_OWNER)
    assert page.status_code == 403 and "location" not in page.headers
    assert WORK_OWNER in page.text and "me@example.com, any account of the example.org organisation" in page.text
    back = page.text.split('<a href="', 1)[1].split('"', 1)[0].replace("&amp;", "&")
    assert_to_client(back, flow.params["state"], error="access_denied")
    assert "code=" not in back
    assert server.records.google_accounts(subject_of(WORK_OWNER)) == []


async def test_a_domain_entry_admits_an_account_its_workspace_manages(
    store, clock, emulator: Emulator, client_file, docs
) -> None:
    """The emulator's ID token names the Workspace domain in `hd` (Google's OpenID Connect reference): an
    `@domain` entry admits the account only with it, so the callback must hand it on."""
    domain = WORK_OWNER.rsplit("@", 1)[1]
    server = build_server(store, clock, emulator, client_file, allowed=f"{OWNER}, @{domain.upper()}")
    client_id = cimd_client(docs)
    async with http_client(server) as browser:
        flow = authorize_params(client_id)
        page = await sign_in(browser, flow, user=WORK_OWNER)
    assert page.status_code == 302 and "code=" in page.headers["location"]
    assert [account.email for account in server.records.google_accounts(subject_of(WORK_OWNER))] == [WORK_OWNER]


async def test_fewer_google_scopes_granted_shrink_the_mcp_scopes_issued(
    store, clock, emulator: Emulator, client_file, docs
) -> None:
    server = build_server(store, clock, emulator, client_file)
    client_id = cimd_client(docs)

    def untick_compose(params: dict[str, str]) -> None:
        params["scope"] = params["scope"].replace(" https://www.googleapis.com/auth/gmail.compose", "")

    async with http_client(server) as browser, http_client(server, "10.0.0.8") as app:
        flow = authorize_params(client_id, scope="gmail.read gmail.drafts")
        assert (await sign_in(browser, flow, edit=untick_compose)).status_code == 302
        tokens = (await exchange(app, flow, client_id)).json()
    assert tokens["scope"] == "gmail.read"
    access = server.ledger.verify_access(tokens["access_token"], RESOURCE)
    assert access is not None and access.scopes == {"gmail.read"}


async def test_a_google_refusal_reaches_the_client_as_access_denied(
    store, clock, emulator: Emulator, client_file, docs
) -> None:
    server = build_server(store, clock, emulator, client_file)
    client_id = cimd_client(docs)
    emulator.app.google.decline(OWNER)
    async with http_client(server) as browser:
        flow = authorize_params(client_id)
        answer = await sign_in(browser, flow)
        assert answer.status_code == 302
        assert_to_client(flow.redirect, flow.params["state"], error="access_denied")
        replay = await browser.get("/oauth/google/callback", params={"state": "unknown", "code": "x"})
        assert replay.status_code == 400 and "location" not in replay.headers


async def test_the_demo_chooser_names_the_demo_person_for_the_emulators_google(
    store, clock, emulator: Emulator, client_file, docs
) -> None:
    """The emulator's Google has no account chooser (without `login_hint` it declines); `--demo --http --auth
    oauth` puts this server's chooser route (`demo_chooser`, the web client's `auth_uri`) in front of it, which
    names the demo person and keeps every other parameter of the sign-in (state, PKCE, scopes)."""
    from starlette.testclient import TestClient

    from server.app.demo_mode import DEMO_CHOOSER_PATH
    from server.protocol.oauth_app import demo_chooser

    chooser = TestClient(Starlette(routes=[demo_chooser(emulator.url, OWNER)]))

    def through_the_chooser(params: dict[str, str]) -> None:
        answer = chooser.get(DEMO_CHOOSER_PATH, params={**params, "login_hint": WORK_OWNER}, follow_redirects=False)
        assert answer.status_code == 302
        onward = answer.headers["location"]
        assert onward.startswith(emulator.url + "/o/oauth2/v2/auth?")
        chosen = query_of(onward)
        assert chosen == {**params, "login_hint": OWNER}
        params.clear()
        params.update(chosen)

    server = build_server(store, clock, emulator, client_file)
    client_id = cimd_client(docs)
    async with http_client(server) as browser:
        flow = authorize_params(client_id)
        assert (await sign_in(browser, flow, user=None, edit=through_the_chooser)).status_code == 302
        assert "code" in flow.answer
        flow = authorize_params(client_id)
        await sign_in(browser, flow, user=None)
        assert flow.answer["error"] == "access_denied"
