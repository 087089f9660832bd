"""The emulator plays Google's OAuth for a Web client: sign-in by redirect, code grant with PKCE, ID tokens, revoke.

Evidence: Google's "Using OAuth 2.0 for Web Server Applications" (developers.google.com/identity/protocols/oauth2/
web-server: the authorization parameters, the single-use code, refresh tokens only on first consent or with
`prompt=consent` under `access_type=offline`, `error=access_denied` redirects, revocation answering 200 / 400) and
Google's OpenID Connect reference (developers.google.com/identity/openid-connect/reference: ID token claims `iss`
`https://accounts.google.com`, `aud`/`azp`, `sub`, `email`, `email_verified`, `at_hash`, `nonce`; the JWKS at
`jwks_uri`; userinfo with `sub` and `email`). RFC 7636 for PKCE S256, RFC 6749 4.1.2.1 for never redirecting to an
unverified redirect URI. Everything goes over real HTTP on loopback; ID tokens are verified by google-auth.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import google.auth.transport.requests
import httplib2
import pytest
from google.oauth2 import id_token as google_id_token
from google.oauth2.credentials import Credentials
from google_auth_httplib2 import AuthorizedHttp
from googleapiclient.discovery import build
from googleapiclient.errors import HttpError

from server.emulator import Emulator
from server.emulator.google_identity import subject_of
from server.emulator.google_oauth import WEB_CLIENT_ID, WEB_CLIENT_SECRET
from server.tests.support.accounts import WORK_OWNER, WORK_SUBJECTS, two_account_emulator
from server.tests.support.emulator import OWNER, control

CALLBACK = "http://127.0.0.1:8765/oauth/google/callback"
READONLY = "https://www.googleapis.com/auth/gmail.readonly"
SCOPES = f"openid email {READONLY}"


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # the test is the browser: it reads the Location itself


OPENER = urllib.request.build_opener(_NoRedirects)


@pytest.fixture(scope="module")
def emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Emulator]:
    with two_account_emulator(tmp_path_factory.mktemp("google-oauth")) as running:
        running.web_client_file(tmp_path_factory.mktemp("client") / "client.json", CALLBACK)
        yield running


@pytest.fixture(autouse=True)
def clean(emulator: Emulator) -> Iterator[None]:
    emulator.reset()
    yield
    emulator.reset()


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def authorize(emulator: Emulator, **params: str) -> tuple[int, dict[str, str], str]:
    """GET the authorization endpoint; (status, the redirect's query parameters, the page text)."""
    query = {"client_id": WEB_CLIENT_ID, "redirect_uri": CALLBACK, "response_type": "code", "scope": SCOPES}
    query.update(params)
    try:
        response = OPENER.open(emulator.url + "/o/oauth2/v2/auth?" + urlencode(query), timeout=5)
        status, location, page = response.status, response.headers.get("Location"), response.read()
    except urllib.error.HTTPError as error:
        status, location, page = error.code, error.headers.get("Location"), error.read()
    redirect: dict[str, str] = {}
    if location:
        target = urlsplit(location)
        assert f"{target.scheme}://{target.netloc}{target.path}" == CALLBACK
        redirect = {name: values[-1] for name, values in parse_qs(target.query).items()}
    return status, redirect, page.decode("utf-8", "replace")


def post(emulator: Emulator, path: str, form: dict[str, str], headers: dict[str, str] | None = None) -> tuple:
    request = urllib.request.Request(emulator.url + path, data=urlencode(form).encode(), method="POST")
    request.add_header("Content-Type", "application/x-www-form-urlencoded")
    for name, value in (headers or {}).items():
        request.add_header(name, value)
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.loads(response.read()), dict(response.headers)
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read()), dict(error.headers)


def exchange(emulator: Emulator, code: str, verifier: str, **extra: str) -> tuple:
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "client_id": WEB_CLIENT_ID,
        "client_secret": WEB_CLIENT_SECRET,
        "redirect_uri": CALLBACK,
        "code_verifier": verifier,
        **extra,
    }
    return post(emulator, "/token", {name: value for name, value in form.items() if value is not None})


def sign_in(emulator: Emulator, user: str = OWNER, **params: str) -> dict[str, Any]:
    verifier, challenge = pkce()
    status, redirect, _ = authorize(
        emulator, login_hint=user, state="st-1", code_challenge=challenge, code_challenge_method="S256", **params
    )
    assert status == 302 and redirect["state"] == "st-1", redirect
    assert redirect["iss"] == "https://accounts.google.com" and redirect["authuser"] == "0"
    status, body, headers = exchange(emulator, redirect["code"], verifier)
    assert status == 200, body
    assert "no-store" in headers["Cache-Control"]
    return body


def gmail(emulator: Emulator, refresh_token: str) -> Any:
    """The real client stack on a Web client's refresh token (google-auth refreshes on the first call)."""
    credentials = Credentials(
        None,
        refresh_token=refresh_token,
        client_id=WEB_CLIENT_ID,
        client_secret=WEB_CLIENT_SECRET,
        token_uri=emulator.token_uri,
    )
    http = AuthorizedHttp(credentials, http=httplib2.Http(timeout=10))
    return build("gmail", "v1", http=http, client_options={"api_endpoint": emulator.url}, static_discovery=True)


def get_json(emulator: Emulator, path: str, token: str | None = None) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(emulator.url + path)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_sign_in_gives_tokens_and_an_id_token_google_auth_verifies(emulator: Emulator) -> None:
    tokens = sign_in(emulator, access_type="offline", nonce="n-42")
    assert tokens["token_type"] == "Bearer" and tokens["expires_in"] > 0
    assert tokens["refresh_token"].startswith("1//")
    assert set(tokens["scope"].split()) == {"openid", "https://www.googleapis.com/auth/userinfo.email", READONLY}
    request = google.auth.transport.requests.Request()
    claims = google_id_token.verify_token(
        tokens["id_token"], request, audience=WEB_CLIENT_ID, certs_url=emulator.url + "/oauth2/v3/certs"
    )
    assert claims["iss"] == "https://accounts.google.com"
    assert claims["azp"] == WEB_CLIENT_ID and claims["email"] == OWNER and claims["email_verified"] is True
    assert claims["sub"] == subject_of(OWNER) and claims["nonce"] == "n-42" and claims["at_hash"]


def test_each_person_reaches_their_own_mailbox_and_keeps_their_sub(emulator: Emulator) -> None:
    work = sign_in(emulator, WORK_OWNER, access_type="offline")
    mine = sign_in(emulator, OWNER, access_type="offline")
    service = gmail(emulator, work["refresh_token"])
    assert service.users().getProfile(userId="me").execute()["emailAddress"] == WORK_OWNER
    with pytest.raises(HttpError) as caught:
        service.users().messages().list(userId=OWNER).execute()
    assert caught.value.resp.status == 403
    assert gmail(emulator, mine["refresh_token"]).users().getProfile(userId="me").execute()["emailAddress"] == OWNER
    assert get_json(emulator, "/oauth2/v3/userinfo", work["access_token"]) == (
        200,
        {"sub": subject_of(WORK_OWNER), "email": WORK_OWNER, "email_verified": True},
    )
    assert subject_of(WORK_OWNER) != subject_of(OWNER) and len(subject_of(OWNER)) == 21
    listed = service.users().messages().list(userId="me").execute()["messages"]
    first = service.users().messages().get(userId="me", id=listed[0]["id"], format="metadata").execute()
    assert {h["value"] for h in first["payload"]["headers"] if h["name"] == "Subject"} & set(WORK_SUBJECTS)


def test_a_refresh_token_only_on_first_consent_or_when_consent_is_prompted(emulator: Emulator) -> None:
    first = sign_in(emulator, WORK_OWNER, access_type="offline")
    assert "refresh_token" in first
    assert "refresh_token" not in sign_in(emulator, WORK_OWNER, access_type="offline")
    assert "refresh_token" not in sign_in(emulator, WORK_OWNER)  # online access: never one
    again = sign_in(emulator, WORK_OWNER, access_type="offline", prompt="consent")
    assert again["refresh_token"] != first["refresh_token"]
    # Both refresh tokens stay good, as Google's do until revoked.
    for token in (first["refresh_token"], again["refresh_token"]):
        assert gmail(emulator, token).users().getProfile(userId="me").execute()["emailAddress"] == WORK_OWNER
    # Revoking ends the grant and its consent: the next sign-in is a first consent again.
    assert post(emulator, "/revoke", {"token": again["refresh_token"]})[0] == 200
    assert "refresh_token" in sign_in(emulator, WORK_OWNER, access_type="offline")


def test_the_refresh_grant_serves_web_client_tokens_with_a_fresh_id_token(emulator: Emulator) -> None:
    tokens = sign_in(emulator, access_type="offline")
    form = {
        "grant_type": "refresh_token",
        "refresh_token": tokens["refresh_token"],
        "client_id": WEB_CLIENT_ID,
        "client_secret": WEB_CLIENT_SECRET,
    }
    status, body, _ = post(emulator, "/token", form)
    assert status == 200 and body["access_token"] != tokens["access_token"] and "refresh_token" not in body
    assert body["id_token"] and body["scope"] == tokens["scope"]
    from server.emulator import CLIENT_ID, CLIENT_SECRET

    status, body, _ = post(emulator, "/token", {**form, "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET})
    assert (status, body["error"]) == (401, "invalid_client")  # the Desktop client cannot use a Web client's token


def test_a_code_is_single_use_and_bound_to_its_redirect_uri_and_client(emulator: Emulator) -> None:
    verifier, challenge = pkce()
    _, redirect, _ = authorize(emulator, login_hint=OWNER, code_challenge=challenge, code_challenge_method="S256")
    status, body, _ = exchange(emulator, redirect["code"], verifier, redirect_uri="http://127.0.0.1:1/other")
    assert (status, body["error"]) == (400, "redirect_uri_mismatch")
    # The failed attempt spent it: a code is redeemed once, whatever the outcome.
    status, body, _ = exchange(emulator, redirect["code"], verifier)
    assert (status, body["error"]) == (400, "invalid_grant")
    _, redirect, _ = authorize(emulator, login_hint=OWNER, code_challenge=challenge, code_challenge_method="S256")
    assert exchange(emulator, redirect["code"], verifier, client_secret="wrong")[:2] == (
        401,
        {"error": "invalid_client", "error_description": "Unauthorized"},
    )
    _, redirect, _ = authorize(emulator, login_hint=OWNER, code_challenge=challenge, code_challenge_method="S256")
    basic = base64.b64encode(f"{WEB_CLIENT_ID}:{WEB_CLIENT_SECRET}".encode()).decode()
    form = {"grant_type": "authorization_code", "code": redirect["code"], "redirect_uri": CALLBACK}
    status, body, _ = post(emulator, "/token", {**form, "code_verifier": verifier}, {"Authorization": "Basic " + basic})
    assert status == 200 and body["access_token"]  # client_secret_basic works as well as the form
    status, body, _ = post(emulator, "/token", {**form, "code_verifier": verifier}, {"Authorization": "Basic " + basic})
    assert (status, body["error"]) == (400, "invalid_grant")


def test_pkce_s256_is_required_and_verified(emulator: Emulator) -> None:
    verifier, challenge = pkce()
    for params in ({}, {"code_challenge": verifier, "code_challenge_method": "plain"}, {"code_challenge": challenge}):
        status, redirect, _ = authorize(emulator, login_hint=OWNER, state="s", **params)
        assert status == 302 and redirect == {"error": "invalid_request", "state": "s"}, params
    _, redirect, _ = authorize(emulator, login_hint=OWNER, code_challenge=challenge, code_challenge_method="S256")
    status, body, _ = exchange(emulator, redirect["code"], pkce()[0])
    assert (status, body["error_description"]) == (400, "Invalid code verifier.")
    _, redirect, _ = authorize(emulator, login_hint=OWNER, code_challenge=challenge, code_challenge_method="S256")
    status, body, _ = exchange(emulator, redirect["code"], "")
    assert (status, body["error_description"]) == (400, "Missing code verifier.")


def test_unknown_clients_and_unregistered_redirect_uris_get_a_page_never_a_redirect(emulator: Emulator) -> None:
    _, challenge = pkce()
    pkce_params = {"code_challenge": challenge, "code_challenge_method": "S256", "login_hint": OWNER}
    status, redirect, page = authorize(emulator, client_id="stranger.apps.googleusercontent.com", **pkce_params)
    assert (status, redirect) == (401, {}) and "invalid_client" in page
    # An address that is not registered, even on the same host and port, is not redirected to.
    try:
        OPENER.open(
            emulator.url
            + "/o/oauth2/v2/auth?"
            + urlencode(
                {"client_id": WEB_CLIENT_ID, "redirect_uri": CALLBACK + "x", "response_type": "code", **pkce_params}
            ),
            timeout=5,
        )
        raise AssertionError("expected an error page")
    except urllib.error.HTTPError as error:
        assert error.code == 400 and error.headers.get("Location") is None
        assert "redirect_uri_mismatch" in error.read().decode()


def test_refusals_go_back_to_the_client_with_the_state(emulator: Emulator) -> None:
    _, challenge = pkce()
    base = {"code_challenge": challenge, "code_challenge_method": "S256", "state": "xyz"}
    assert authorize(emulator, login_hint="nobody@example.com", **base)[1] == {"error": "access_denied", "state": "xyz"}
    assert authorize(emulator, **base)[1] == {"error": "access_denied", "state": "xyz"}  # no one to sign in
    control(emulator, "POST", "oauth/decline", {"user": WORK_OWNER.upper()})
    assert authorize(emulator, login_hint=WORK_OWNER, **base)[1]["error"] == "access_denied"
    assert "code" in authorize(emulator, login_hint=WORK_OWNER, **base)[1]  # declining was for one sign-in
    assert authorize(emulator, login_hint=OWNER, scope="openid gmail.everything", **base)[1]["error"] == "invalid_scope"
    assert authorize(emulator, login_hint=OWNER, response_type="token", **base)[1] == {
        "error": "unsupported_response_type",
        "state": "xyz",
    }


def test_prompt_none_needs_an_earlier_consent_for_the_scopes(emulator: Emulator) -> None:
    _, challenge = pkce()
    base = {"code_challenge": challenge, "code_challenge_method": "S256", "prompt": "none"}
    tokens = sign_in(emulator, OWNER, access_type="offline")
    assert "code" in authorize(emulator, login_hint=OWNER, **base)[1]
    compose = "https://www.googleapis.com/auth/gmail.compose"
    assert authorize(emulator, login_hint=OWNER, scope=f"{SCOPES} {compose}", **base)[1]["error"] == (
        "consent_required"
    )
    post(emulator, "/revoke", {"token": tokens["access_token"]})
    assert authorize(emulator, login_hint=OWNER, **base)[1]["error"] == "consent_required"


def test_access_tokens_hold_to_the_granted_scopes(emulator: Emulator) -> None:
    tokens = sign_in(emulator, access_type="offline")
    service = gmail(emulator, tokens["refresh_token"])
    assert service.users().labels().list(userId="me").execute()["labels"]
    with pytest.raises(HttpError) as caught:
        service.users().drafts().create(userId="me", body={"message": {"raw": "U3ViamVjdDogaGkNCg0KaGk="}}).execute()
    assert caught.value.resp.status == 403
    # Gmail alone, without openid or email: userinfo refuses the token.
    gmail_only = sign_in(emulator, WORK_OWNER, scope=READONLY)
    assert "id_token" not in gmail_only
    assert get_json(emulator, "/oauth2/v3/userinfo", gmail_only["access_token"])[0] == 401
    assert get_json(emulator, "/oauth2/v3/userinfo")[0] == 401


def test_revoking_an_access_token_ends_the_whole_grant(emulator: Emulator) -> None:
    tokens = sign_in(emulator, WORK_OWNER, access_type="offline")
    assert get_json(emulator, "/v1/userinfo", tokens["access_token"])[0] == 200
    assert post(emulator, "/revoke", {"token": tokens["access_token"]})[:2] == (200, {})
    assert get_json(emulator, "/v1/userinfo", tokens["access_token"])[0] == 401
    form = {
        "grant_type": "refresh_token",
        "refresh_token": tokens["refresh_token"],
        "client_id": WEB_CLIENT_ID,
        "client_secret": WEB_CLIENT_SECRET,
    }
    status, body, _ = post(emulator, "/token", form)
    assert (status, body["error"]) == (400, "invalid_grant")
    status, body, _ = post(emulator, "/revoke", {"token": tokens["refresh_token"]})
    assert (status, body["error"]) == (400, "invalid_token")


def test_the_control_planes_revocation_reaches_web_client_grants(emulator: Emulator) -> None:
    tokens = sign_in(emulator, WORK_OWNER, access_type="offline")
    form = {
        "grant_type": "refresh_token",
        "refresh_token": tokens["refresh_token"],
        "client_id": WEB_CLIENT_ID,
        "client_secret": WEB_CLIENT_SECRET,
    }
    emulator.revoke_refresh_tokens(WORK_OWNER)
    assert post(emulator, "/token", form)[1]["error"] == "invalid_grant"
    emulator.reset()
    assert post(emulator, "/token", form)[0] == 200


def test_discovery_names_the_emulators_endpoints_with_googles_issuer(emulator: Emulator, tmp_path: Path) -> None:
    status, document = get_json(emulator, "/.well-known/openid-configuration")
    assert status == 200 and document["issuer"] == "https://accounts.google.com"
    assert document["authorization_endpoint"] == emulator.url + "/o/oauth2/v2/auth"
    assert document["token_endpoint"] == emulator.token_uri
    keys = get_json(emulator, urlsplit(document["jwks_uri"]).path)[1]["keys"]
    assert keys[0]["kty"] == "RSA" and keys[0]["alg"] == "RS256" and keys[0]["kid"]
    client = json.loads(emulator.web_client_file(tmp_path / "c.json").read_text())["web"]
    assert client["client_id"] == WEB_CLIENT_ID and CALLBACK in client["redirect_uris"]
    assert client["token_uri"] == emulator.token_uri and (tmp_path / "c.json").stat().st_mode & 0o777 == 0o600


def test_a_code_lives_ten_minutes_on_the_emulators_clock() -> None:
    """RFC 6749 4.1.2: a short-lived code (10 minutes at most is recommended); the clock is injected."""
    from server.emulator.google_oauth import CODE_TTL_S, GoogleOAuth
    from server.emulator.tokens import TokenAuthority

    now = [1000.0]
    google = GoogleOAuth(TokenAuthority(clock=lambda: now[0]), lambda email: ("", email), clock=lambda: now[0])
    google.register_redirect_uri(CALLBACK)
    verifier, challenge = pkce()
    query = urlencode(
        {
            "client_id": WEB_CLIENT_ID,
            "redirect_uri": CALLBACK,
            "response_type": "code",
            "scope": SCOPES,
            "login_hint": OWNER,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
        }
    )
    form = {"grant_type": "authorization_code", "client_id": WEB_CLIENT_ID, "client_secret": WEB_CLIENT_SECRET}
    form |= {"redirect_uri": CALLBACK, "code_verifier": verifier}

    def code() -> str:
        location = google.authorize(query)[2]["Location"]
        return parse_qs(urlsplit(location).query)["code"][0]

    fresh = code()
    now[0] += CODE_TTL_S - 1
    assert google.grant({**form, "code": fresh})[0] == 200
    stale = code()
    now[0] += CODE_TTL_S
    assert google.grant({**form, "code": stale}) == (
        400,
        {"error": "invalid_grant", "error_description": "Bad Request"},
    )
