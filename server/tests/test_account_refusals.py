"""Gmail's refusals that are about the account, not the request, through a real MCP client against the emulator.

- 400 failedPrecondition ("Precondition check failed."): Gmail answers it intermittently (1-2% of messages.list calls
  for some accounts: googleapis/google-api-php-client #2558, google-api-go-client #645, google-api-python-client
  #2723: "retrying ... always works") and persistently when Gmail is off for the account (a Workspace user without
  Gmail, a domain policy: google-api-java-client #1648). It is retried once; what persists is reported as the
  account's refusal, never as a query problem.
- invalid_grant with error_subtype invalid_rapt: a Workspace organisation's session control wants a fresh sign-in,
  sometimes daily. google-auth turns it into "Reauthentication is needed. Please run `gcloud auth
  application-default login`" (google/oauth2/reauth.py), advice for a tool this product does not use. The person
  is told to sign in again with this product's own command, without the Testing-mode 7-day explanation.
"""

from __future__ import annotations

import json
import time

import pytest

from server.tests.support.mailbox_stack import LIST_PATH, SEARCH, changing_mailbox
from server.tests.support.reliability import error_of

pytestmark = pytest.mark.anyio
INBOX = {"query": "in:inbox", "max_results": 3}
FAST_RETRIES = {"GMAIL_MCP_BACKOFF_SCALE": "0.001"}
PRECONDITION = {"status": 400, "reason": "failedPrecondition", "path_regex": f"^{LIST_PATH}$"}


@pytest.fixture
def anyio_backend():
    return "asyncio"


def list_statuses(requests: list[dict]) -> list[int]:
    return [entry["status"] for entry in requests if entry["path"] == LIST_PATH]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_an_intermittent_failed_precondition_is_retried_once_and_the_search_succeeds(tmp_path, mode):
    async with changing_mailbox(tmp_path, mode=mode, **FAST_RETRIES) as stack:
        stack.emulator.add_fault(**PRECONDITION)
        result, requests = await stack.call(SEARCH, INBOX)
    assert result.structured_content["messages"]
    assert list_statuses(requests) == [400, 200]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_persistent_failed_precondition_is_the_accounts_refusal_not_the_query(tmp_path, mode):
    async with changing_mailbox(tmp_path, mode=mode, **FAST_RETRIES) as stack:
        stack.emulator.add_fault(count=10, **PRECONDITION)
        result, requests = await stack.call(SEARCH, INBOX, ok=False)
    error = error_of(result)
    assert list_statuses(requests) == [400, 400]  # one retry, no more
    assert error["category"] == "permission_denied" and error["retry_count"] == 1
    assert "for this account" in error["message"] and "Gmail is not enabled" in error["message"]
    text = (error["message"] + error["hint"]).lower()
    assert "query" not in text and "7190" not in text
    assert "admin" in error["hint"]


def test_the_emulators_failed_precondition_is_the_recorded_body(emulator):
    """The body as google-api-php-client #2558 recorded it: status FAILED_PRECONDITION, reason failedPrecondition,
    message "Precondition check failed." (a fault naming only the reason gets Google's message)."""
    import urllib.error
    import urllib.request

    emulator.add_fault(status=400, reason="failedPrecondition")  # faults come before the token check
    request = urllib.request.Request(f"{emulator.url}/gmail/v1/users/me/profile")
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(request, timeout=5)
    body = json.loads(caught.value.read())["error"]
    assert caught.value.code == 400 and body["status"] == "FAILED_PRECONDITION"
    assert body["message"] == "Precondition check failed."
    assert body["errors"] == [
        {"message": "Precondition check failed.", "domain": "global", "reason": "failedPrecondition"}
    ]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_workspace_reauthentication_names_this_products_sign_in_never_gcloud(tmp_path, mode):
    # No warm-up: it would refresh the token itself and meet the fault before the call does.
    async with changing_mailbox(tmp_path, mode=mode, GMAIL_MCP_WARM_UP="0", **FAST_RETRIES) as stack:
        token_path = stack.registry.get(None).token_path
        data = json.loads(token_path.read_text())
        # A token old enough for the Testing-mode note: it must not appear, the cause here is the organisation.
        data["authorized_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 30 * 86400))
        token_path.write_text(json.dumps(data))
        stack.emulator.expire_access_tokens()  # whatever access token the process holds, the next call must refresh
        stack.emulator.add_fault(invalid_rapt=True)
        result, requests = await stack.call(SEARCH, INBOX, ok=False)
    error = error_of(result)
    assert error["category"] == "auth_error"
    assert "sign in again" in error["message"] and "organisation" in error["message"]
    assert "auth_cli.py" in error["hint"] or "gmail-mcp-auth" in error["hint"]
    text = error["message"] + error["hint"]
    assert "gcloud" not in text and "7 days" not in text and "Testing" not in text
    assert [entry["status"] for entry in requests if entry["path"] == "/token"] == [400]


def test_the_emulators_invalid_rapt_is_what_google_auth_reads_as_reauthentication(emulator, tmp_path):
    """The token endpoint's answer carries error invalid_grant and error_subtype invalid_rapt, the two fields
    google-auth's reauth.refresh_grant branches on: the real library raises its reauthentication RefreshError."""
    import google_auth_httplib2
    import httplib2
    from google.auth.exceptions import RefreshError
    from google.oauth2.credentials import Credentials

    token = emulator.write_token(tmp_path / "token.json")
    credentials = Credentials.from_authorized_user_file(str(token)).with_token_uri(emulator.token_uri)
    emulator.add_fault(invalid_rapt=True)
    with pytest.raises(RefreshError, match="Reauthentication is needed"):
        credentials.refresh(google_auth_httplib2.Request(httplib2.Http(timeout=5)))
