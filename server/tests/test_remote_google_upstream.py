"""Signing a person in with Google, against the emulator's Google (the test is the browser): the authorization URL
Google's web-server flow expects, the code exchanged with PKCE, the ID token verified by google-auth, and the
refresh token reaching that person's mailbox only.

Evidence: Google's "Using OAuth 2.0 for Web Server Applications" (access_type=offline, prompt=consent,
include_granted_scopes, login_hint; refresh tokens) and OpenID Connect guide (validate iss, aud, exp; sub as the
account's identifier; email_verified); RFC 7636 (S256), RFC 9207 (iss in the authorization response).
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httplib2
import pytest
from google.oauth2.credentials import Credentials
from google_auth_httplib2 import AuthorizedHttp
from googleapiclient.discovery import build

from server.emulator import Emulator
from server.emulator.google_identity import subject_of
from server.remote.google_upstream import GoogleSignIn, GoogleSignInError, GoogleWebClient
from server.tests.support.accounts import WORK_OWNER, two_account_emulator
from server.tests.support.emulator import OWNER

CALLBACK = "http://127.0.0.1:8766/oauth/google/callback"
READONLY = "https://www.googleapis.com/auth/gmail.readonly"


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


@pytest.fixture(scope="module")
def emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Emulator]:
    with two_account_emulator(tmp_path_factory.mktemp("upstream")) as running:
        yield running


@pytest.fixture
def sign_in(emulator: Emulator, tmp_path: Path) -> GoogleSignIn:
    emulator.reset()
    client_file = emulator.web_client_file(tmp_path / "client.json", CALLBACK)
    client = GoogleWebClient.from_file(client_file, certs_url=emulator.url + "/oauth2/v3/certs")
    return GoogleSignIn(client, CALLBACK)


def browse(url: str) -> dict[str, str]:
    """Follows the authorization URL as a browser would, up to the redirect to our callback."""
    opener = urllib.request.build_opener(_NoRedirects)
    try:
        opener.open(url, timeout=5)
        raise AssertionError("expected a redirect")
    except urllib.error.HTTPError as answer:
        assert answer.code == 302, answer.read()
        location = urlsplit(answer.headers["Location"])
    assert f"{location.scheme}://{location.netloc}{location.path}" == CALLBACK
    return {name: values[-1] for name, values in parse_qs(location.query).items()}


def test_a_person_signs_in_and_their_grant_reads_their_mailbox(sign_in: GoogleSignIn, emulator: Emulator) -> None:
    url, verifier = sign_in.authorization_url("state-1", [READONLY], login_hint=WORK_OWNER)
    asked = parse_qs(urlsplit(url).query)
    assert asked["access_type"] == ["offline"] and asked["prompt"] == ["consent"]
    assert asked["scope"] == [f"openid email {READONLY}"] and asked["code_challenge_method"] == ["S256"]
    callback = browse(url)
    assert callback["state"] == "state-1"
    identity = sign_in.finish(callback, verifier)
    assert (identity.sub, identity.email) == (subject_of(WORK_OWNER), WORK_OWNER)
    assert READONLY in identity.scopes and identity.refresh_token
    credentials = Credentials(
        None,
        refresh_token=identity.refresh_token,
        client_id=sign_in.client.client_id,
        client_secret=sign_in.client.client_secret,
        token_uri=sign_in.client.token_uri,
    )
    http = AuthorizedHttp(credentials, http=httplib2.Http(timeout=10))
    gmail = build("gmail", "v1", http=http, client_options={"api_endpoint": emulator.url}, static_discovery=True)
    assert gmail.users().getProfile(userId="me").execute()["emailAddress"] == WORK_OWNER


def test_prompt_consent_brings_a_refresh_token_every_time(sign_in: GoogleSignIn) -> None:
    for _ in range(2):
        url, verifier = sign_in.authorization_url("s", [READONLY], login_hint=OWNER)
        assert sign_in.finish(browse(url), verifier).refresh_token


def test_a_wrong_verifier_a_replayed_code_and_a_refusal_are_errors(sign_in: GoogleSignIn, emulator: Emulator) -> None:
    url, verifier = sign_in.authorization_url("s", [READONLY], login_hint=OWNER)
    callback = browse(url)
    with pytest.raises(GoogleSignInError) as caught:
        sign_in.finish(callback, verifier + "x")
    assert caught.value.error == "invalid_grant"
    with pytest.raises(GoogleSignInError, match="invalid_grant"):
        sign_in.finish(callback, verifier)  # the code was spent by the failed attempt
    emulator.app.google.decline(OWNER)
    url, verifier = sign_in.authorization_url("s", [READONLY], login_hint=OWNER)
    with pytest.raises(GoogleSignInError) as caught:
        sign_in.finish(browse(url), verifier)
    assert caught.value.error == "access_denied"
    with pytest.raises(GoogleSignInError, match="not Google"):
        sign_in.finish({"code": "x", "iss": "https://evil.example"}, verifier)


def test_an_id_token_for_another_client_or_from_another_key_is_refused(
    sign_in: GoogleSignIn, emulator: Emulator
) -> None:
    from server.emulator.google_identity import IdentityKeys

    genuine = emulator.app.google.keys.id_token(client_id=sign_in.client.client_id, email=OWNER)
    assert sign_in.verify_id_token(genuine)["sub"] == subject_of(OWNER)
    client = sign_in.client
    other = GoogleWebClient(
        "someone.apps.googleusercontent.com", "s", client.auth_uri, client.token_uri, client.certs_url
    )
    with pytest.raises(GoogleSignInError, match="did not verify"):
        GoogleSignIn(other, CALLBACK).verify_id_token(genuine)  # issued for another audience
    forged = IdentityKeys().id_token(client_id=client.client_id, email=OWNER)  # a key Google never published
    with pytest.raises(GoogleSignInError, match="did not verify"):
        sign_in.verify_id_token(forged)
    with pytest.raises(GoogleSignInError, match="no ID token"):
        sign_in.verify_id_token("")


def test_client_files_must_be_web_application_clients(tmp_path: Path) -> None:
    desktop = tmp_path / "desktop.json"
    desktop.write_text(json.dumps({"installed": {"client_id": "x", "client_secret": "y"}}))
    with pytest.raises(ValueError, match="Web application"):
        GoogleWebClient.from_file(desktop)
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    with pytest.raises(ValueError, match="Cannot read"):
        GoogleWebClient.from_file(broken)
    web = tmp_path / "web.json"
    web.write_text(json.dumps({"web": {"client_id": "id.apps.googleusercontent.com", "client_secret": "s"}}))
    client = GoogleWebClient.from_file(web)
    assert client.token_uri == "https://oauth2.googleapis.com/token"
    assert client.auth_uri == "https://accounts.google.com/o/oauth2/v2/auth"


def certs_fetches(emulator: Emulator) -> int:
    return sum(entry["path"] == "/oauth2/v3/certs" for entry in emulator.requests())


def test_google_signing_keys_are_kept_per_max_age_and_fetched_again_for_an_unknown_key(
    emulator: Emulator, tmp_path: Path
) -> None:
    """Google's OpenID Connect guide ("Validating an ID token"): cache the keys per the response's cache directives,
    and expect them to rotate. The emulator's certs answer `max-age=21600` (CERTS_CACHE_CONTROL)."""
    from server.emulator.google_identity import IdentityKeys
    from server.emulator.google_oauth import CERTS_CACHE_CONTROL

    emulator.reset()
    now = [0.0]
    client_file = emulator.web_client_file(tmp_path / "client.json", CALLBACK)
    client = GoogleWebClient.from_file(client_file, certs_url=emulator.url + "/oauth2/v3/certs")
    sign_in = GoogleSignIn(client, CALLBACK, clock=lambda: now[0])
    assert "max-age=21600" in CERTS_CACHE_CONTROL
    for person in (OWNER, WORK_OWNER):  # two sign-ins, one fetch of the keys
        url, verifier = sign_in.authorization_url("s", [READONLY], login_hint=person)
        assert sign_in.finish(browse(url), verifier).email == person
    assert certs_fetches(emulator) == 1
    now[0] += 21600  # the keys' lifetime is over: the next sign-in fetches them again
    url, verifier = sign_in.authorization_url("s", [READONLY], login_hint=OWNER)
    sign_in.finish(browse(url), verifier)
    assert certs_fetches(emulator) == 2
    emulator.app.google.keys = IdentityKeys()  # Google rotates its keys within the lifetime: an unknown kid
    url, verifier = sign_in.authorization_url("s", [READONLY], login_hint=OWNER)
    assert sign_in.finish(browse(url), verifier).email == OWNER
    assert certs_fetches(emulator) == 3
    forged = IdentityKeys().id_token(client_id=client.client_id, email=OWNER)  # a kid Google never published
    with pytest.raises(GoogleSignInError, match="did not verify"):
        sign_in.verify_id_token(forged)
    assert certs_fetches(emulator) == 4  # fetched once more for it, then refused
