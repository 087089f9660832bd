"""The client's single retry loop and its one-place error mapping, over the real google-api-python-client."""

from __future__ import annotations

import logging

import pytest

from server.errors import (
    AccountRefusedError,
    AuthError,
    InvalidInputError,
    NotFoundError,
    PermissionDeniedError,
    QuotaExceededError,
    RateLimitedError,
    ReauthRequiredError,
    TransientError,
)
from server.gmail.errors import describe_refresh_failure, map_http_error, parse_retry_after
from server.gmail.retry import RetryPolicy, run_with_retries
from server.tests.support.fake_gmail import FakeGmail, gmail_error, json_response, list_page

PROFILE = json_response({"emailAddress": "alex@example.com", "messagesTotal": 3})


def test_policy_is_the_design_documents():
    policy = RetryPolicy()
    rate_limited, transient = RateLimitedError("x"), TransientError("x")
    assert [policy.delay_for(rate_limited, n) for n in range(4)] == [1.0, 2.0, 4.0, None]
    assert [policy.delay_for(transient, n) for n in range(3)] == [1.0, 2.0, None]
    assert policy.delay_for(AuthError("x"), 0) is None and policy.delay_for(NotFoundError("x"), 0) is None


def test_failed_precondition_is_retried_once_then_reported_as_the_accounts_refusal():
    """googleapis/google-api-php-client #2558: 400 failedPrecondition on 1-2% of messages.list calls, gone on retry;
    permanent where Gmail is off for the account (google-api-java-client #1648)."""
    policy = RetryPolicy()
    assert [policy.delay_for(AccountRefusedError("x"), n) for n in range(2)] == [1.0, None]
    fake = FakeGmail([gmail_error(400, "failedPrecondition", "Precondition check failed."), list_page(["a"])])
    assert fake.client.list_messages(query="x", max_results=1)["messages"][0]["id"] == "a"
    assert fake.sleeps == [1.0]
    refused = gmail_error(400, "failedPrecondition", "Precondition check failed.")
    fake = FakeGmail([refused, refused])
    with pytest.raises(AccountRefusedError) as caught:
        fake.client.list_messages(query="x", max_results=1)
    assert caught.value.code == "permission_denied" and caught.value.retry_count == 1
    assert "query" not in (caught.value.message + caught.value.hint).lower()


@pytest.mark.parametrize(
    "endpoint, message, advice",
    [
        ("messages.list", "Invalid query", "search query syntax"),
        ("drafts.list", "Invalid search query", "search query syntax"),
        ("messages.list", "Invalid label: Label_9", "gmail_list_labels"),
        ("messages.list", "Invalid pageToken", "next_page_token"),
        ("messages.get", "Invalid query", "Check the arguments"),
        ("messages.list", "Invalid maxResults", "Check the arguments"),
    ],
)
def test_only_a_list_endpoints_400_about_the_query_gets_the_query_hint(endpoint, message, advice):
    import httplib2
    from googleapiclient.errors import HttpError

    headers, body = gmail_error(400, "invalidArgument", message)
    exc = HttpError(httplib2.Response(headers), body.encode())
    error = map_http_error(exc, now=0.0, endpoint=endpoint)
    assert isinstance(error, InvalidInputError) and advice in error.hint


def test_reauthentication_never_names_gcloud():
    """google-auth's reauth.refresh_grant raises this text for invalid_grant/invalid_rapt (reauth refresh off)."""
    from google.auth.exceptions import RefreshError

    for exc in (
        RefreshError(
            "Reauthentication is needed. Please run `gcloud auth application-default login` to reauthenticate."
        ),
        RefreshError("invalid_grant: reauth related error (invalid_rapt)", {"error_subtype": "invalid_rapt"}),
    ):
        error = describe_refresh_failure(exc)
        assert isinstance(error, ReauthRequiredError) and error.code == "auth_error"
        assert "gcloud" not in error.message + error.hint and "7 days" not in error.message
        assert "auth_cli.py" in error.hint or "gmail-mcp-auth" in error.hint


def test_retry_after_raises_the_wait_but_is_capped():
    policy = RetryPolicy()
    assert policy.delay_for(RateLimitedError("x", retry_after_s=7.5), 0) == 7.5
    assert policy.delay_for(RateLimitedError("x", retry_after_s=0.2), 1) == 2.0
    # Longer than one call should stall: answered at once (the hint says how long), never slept through.
    assert policy.delay_for(RateLimitedError("x", retry_after_s=3600), 0) is None
    assert policy.delay_for(RateLimitedError("x", retry_after_s=29), 2, lambda: 1.0) == 30.0  # capped after jitter


def test_backoff_scale_shrinks_every_wait():
    assert RetryPolicy(scale=0.001).delay_for(RateLimitedError("x"), 2) == pytest.approx(0.004)


def test_run_with_retries_reports_each_retry_and_the_final_count():
    attempts, notes, sleeps = [], [], []

    def attempt():
        attempts.append(1)
        raise TransientError("down")

    with pytest.raises(TransientError) as caught:
        run_with_retries(
            attempt, policy=RetryPolicy(), sleep=sleeps.append, on_retry=lambda err, n, d: notes.append((n, d))
        )
    assert len(attempts) == 3 and sleeps == [1.0, 2.0] and notes == [(1, 1.0), (2, 2.0)]
    assert caught.value.retry_count == 2


@pytest.mark.parametrize(
    "header, message, expected",
    [
        ("12", "", 12.0),
        (None, "User-rate limit exceeded.  Retry after 2027-01-15T08:00:05.000Z", 5.0),
        ("Fri, 15 Jan 2027 08:00:09 GMT", "", 9.0),
        (None, "Rate Limit Exceeded", None),
        ("soon", "", None),
    ],
)
def test_retry_after_parsing(header, message, expected):
    now = 1_800_000_000.0  # 2027-01-15T08:00:00Z
    assert parse_retry_after(header, message, now=now) == expected


def test_429_with_retry_after_header_waits_that_long():
    fake = FakeGmail([gmail_error(429, "rateLimitExceeded", "Too many", {"retry-after": "3"}), PROFILE])
    assert fake.client.get_profile()["emailAddress"] == "alex@example.com"
    assert fake.sleeps == [3.0]


@pytest.mark.parametrize("reason", ["rateLimitExceeded", "userRateLimitExceeded"])
def test_403_rate_limit_reasons_are_retried_like_429(reason):
    fake = FakeGmail([gmail_error(403, reason, "User Rate Limit Exceeded"), PROFILE])
    fake.client.get_profile()
    assert fake.sleeps == [1.0]
    assert fake.metrics.summary()["rate_limited_responses"] == 1


def test_500_then_success():
    fake = FakeGmail([gmail_error(500, "backendError", "Backend Error"), list_page(["a"])])
    assert fake.client.list_messages(query="x", max_results=1)["messages"][0]["id"] == "a"
    assert fake.sleeps == [1.0]


@pytest.mark.parametrize(
    "answer, error_type, fragment",
    [
        (gmail_error(401, "authError", "Invalid Credentials"), AuthError, "auth_cli.py"),
        (
            gmail_error(403, "insufficientPermissions", "Insufficient Permission"),
            PermissionDeniedError,
            "gmail.readonly",
        ),
        (gmail_error(403, "dailyLimitExceeded", "Daily Limit Exceeded"), QuotaExceededError, "midnight"),
        (
            gmail_error(403, "accessNotConfigured", "Gmail API has not been used in project 1"),
            PermissionDeniedError,
            "Enable the Gmail API",
        ),
        # Not a list endpoint: no query advice (Gmail never answers "Invalid query" for a search anyway)
        (gmail_error(400, "invalidArgument", "Invalid value"), InvalidInputError, "Check the arguments"),
        (gmail_error(404, "notFound", "Requested entity was not found."), NotFoundError, "message_id"),
    ],
)
def test_final_errors_are_mapped_once_and_not_retried(answer, error_type, fragment):
    fake = FakeGmail([answer])
    with pytest.raises(error_type) as caught:
        fake.client.get_profile()
    assert fragment in caught.value.message + caught.value.hint
    assert fake.sleeps == [] and caught.value.retry_count == 0


class ExplodingHttp:
    """An httplib2.Http stand-in whose first N requests fail at the socket level."""

    def __init__(self, error: Exception, failures: int, then: tuple) -> None:
        self.error, self.failures, self.then = error, failures, then

    def request(self, *args, **kwargs):
        import httplib2

        if self.failures:
            self.failures -= 1
            raise self.error
        headers, body = self.then
        return httplib2.Response(headers), body.encode()


@pytest.mark.parametrize(
    "error", [TimeoutError("timed out"), ConnectionResetError(104, "reset"), ConnectionRefusedError(111, "refused")]
)
def test_network_failures_are_transient_and_retried(error):
    fake = FakeGmail([])
    flaky = ExplodingHttp(error, failures=1, then=PROFILE)
    fake.client._sessions._http_factory = lambda: flaky
    assert fake.client.get_profile()["emailAddress"] == "alex@example.com"
    assert fake.sleeps == [1.0]


def test_timeouts_exhaust_into_a_transient_error_naming_the_timeout():
    fake = FakeGmail([])
    fake.client._sessions._http_factory = lambda: ExplodingHttp(TimeoutError("timed out"), failures=9, then=PROFILE)
    with pytest.raises(TransientError) as caught:
        fake.client.get_profile()
    assert "did not answer within 30 s" in caught.value.message and fake.sleeps == [1.0, 2.0]


def test_list_asks_only_for_the_fields_it_uses():
    fake = FakeGmail([list_page(["a"])])
    fake.client.list_messages(query="is:unread", max_results=7, include_spam_trash=False)
    params = fake.query_params(0)
    assert params["fields"] == ["messages(id,threadId),nextPageToken,resultSizeEstimate"]
    assert params["q"] == ["is:unread"] and params["maxResults"] == ["7"]
    assert params["includeSpamTrash"] == ["false"]


def test_configured_endpoint_moves_requests_and_batches():
    from server.runtime.config import load_settings

    settings = load_settings(env={"GMAIL_API_ENDPOINT": "http://127.0.0.1:9"}, dotenv=False)
    from server.tests.support.fake_gmail import metadata_batch

    fake = FakeGmail([metadata_batch(["a"])], settings=settings)
    fake.client.get_messages_metadata(["a"], headers=["From"])
    assert fake.uris == ["http://127.0.0.1:9/batch/gmail/v1"]


def test_each_gmail_request_is_logged_with_status_and_retry_count(caplog):
    caplog.set_level(logging.INFO, logger="gmail_mcp")
    fake = FakeGmail([gmail_error(503, "backendError", "Backend Error"), PROFILE])
    fake.client.get_profile()
    lines = [(r.endpoint, r.gmail_api_status, r.retry_count) for r in caplog.records if r.msg == "gmail request"]
    assert lines == [("users.getProfile", 503, 0), ("users.getProfile", 200, 1)]


def test_batch_part_retries_are_logged_with_their_retry_count(caplog):
    from server.tests.support.fake_gmail import metadata_batch

    caplog.set_level(logging.INFO, logger="gmail_mcp")
    flaky = {"b": (503, "backendError", "Backend Error")}
    fake = FakeGmail([metadata_batch(["a", "b"], flaky), metadata_batch(["b"])])
    results = fake.client.get_messages_metadata(["a", "b"], headers=["From"])
    assert all(isinstance(value, dict) for value in results.values()) and fake.sleeps == [1.0]
    batches = [(r.parts, r.failed_parts, r.retry_count) for r in caplog.records if r.msg == "gmail request"]
    assert batches == [(2, 1, 0), (1, 0, 1)]


def test_a_failed_enrichment_batch_degrades_results_instead_of_failing_the_search():
    from server.toolsets.messages.search import SearchMessagesInput, search_messages

    outage = gmail_error(503, "backendError", "Backend Error")
    fake = FakeGmail([list_page(["a", "b", "c"]), outage, outage, outage])
    result = search_messages(fake.context(), SearchMessagesInput(query="in:inbox"))
    assert [m.id for m in result.messages] == ["a", "b", "c"] and not any(m.subject for m in result.messages)
    assert result.enrichment_failures == 3 and fake.sleeps == [1.0, 2.0]


def test_a_part_missing_from_the_batch_answer_is_retried_as_transient():
    from server.tests.support.fake_gmail import batch_response, metadata_batch, metadata_resource

    fake = FakeGmail([batch_response({"a": (200, metadata_resource("a"))}), metadata_batch(["b"])])
    results = fake.client.get_messages_metadata(["a", "b"], headers=["From"])
    assert results["a"]["id"] == "a" and results["b"]["id"] == "b" and fake.sleeps == [1.0]


@pytest.mark.parametrize("call", ["profile", "batch"])
def test_an_html_page_instead_of_json_is_transient_not_a_crash(call):
    portal = ({"status": "200", "content-type": "text/html"}, "<html><body>Log in to the hotel Wi-Fi</body></html>")
    fake = FakeGmail([portal] * 3)
    if call == "profile":
        with pytest.raises(TransientError) as caught:
            fake.client.get_profile()
        assert "not JSON" in caught.value.message and fake.sleeps == [1.0, 2.0]
    else:
        results = fake.client.get_messages_metadata(["a"], headers=["From"])
        assert isinstance(results["a"], TransientError)


def test_a_401_batch_part_refreshes_once_through_our_transport_and_is_resent():
    from google.oauth2.credentials import Credentials

    from server.tests.support.fake_gmail import batch_response, metadata_batch

    credentials = Credentials(
        token="stale",
        refresh_token="r",
        client_id="c",
        client_secret="s",
        token_uri="https://oauth2.googleapis.com/token",
    )

    class Source:
        def get(self):
            return credentials

    unauthorized = {"error": {"code": 401, "message": "Invalid Credentials", "errors": [{"reason": "authError"}]}}
    fresh = json_response({"access_token": "fresh", "expires_in": 3600})
    fake = FakeGmail([batch_response({"a": (401, unauthorized)}), fresh, metadata_batch(["a"])], credentials=Source())
    results = fake.client.get_messages_metadata(["a"], headers=["From"])
    assert results["a"]["id"] == "a" and credentials.token == "fresh"
    assert [uri.rsplit("/", 1)[-1] for uri in fake.uris] == ["v1", "token", "v1"] and fake.sleeps == []


def test_a_stale_page_token_is_invalid_input_with_a_page_token_hint():
    fake = FakeGmail([gmail_error(400, "invalidArgument", "Invalid pageToken: it belongs to a different query")])
    with pytest.raises(InvalidInputError) as caught:
        fake.client.list_messages(query="x", max_results=5, page_token="stale")
    assert "next_page_token of a previous call with the same query" in caught.value.hint


def test_waits_are_jittered_by_up_to_a_quarter_from_the_injected_random_source():
    policy = RetryPolicy()
    assert policy.delay_for(RateLimitedError("x"), 0, lambda: 0.0) == 1.0
    assert policy.delay_for(RateLimitedError("x"), 2, lambda: 1.0) == 5.0
    sleeps: list[float] = []

    def attempt():
        raise TransientError("down")

    with pytest.raises(TransientError):
        run_with_retries(attempt, policy=policy, sleep=sleeps.append, rand=lambda: 0.5)
    assert sleeps == [1.125, 2.25]


def test_client_retry_waits_use_its_random_source():
    import random

    expected = [1.0 * (1 + 0.25 * random.Random(7).random())]
    fake = FakeGmail([gmail_error(503, "backendError", "down"), PROFILE], rand=random.Random(7).random)
    fake.client.get_profile()
    assert fake.sleeps == pytest.approx(expected) and 1.0 <= fake.sleeps[0] < 1.25


def test_a_retry_after_beyond_the_cap_is_answered_at_once_with_the_wait_in_the_hint():
    fake = FakeGmail([gmail_error(429, "rateLimitExceeded", "Too many", {"retry-after": "1800"})])
    with pytest.raises(RateLimitedError) as caught:
        fake.client.get_profile()
    assert fake.sleeps == [] and "about 30 minute(s)" in caught.value.hint


@pytest.mark.parametrize("fraction", [".25", ".123456789", ""])
def test_retry_after_times_with_any_fraction_digits(fraction):
    now = 1_800_000_000.0  # 2027-01-15T08:00:00Z
    message = f"Retry after 2027-01-15T08:00:05{fraction}Z"
    assert parse_retry_after(None, message, now=now) == pytest.approx(5.0, abs=0.5)
    assert parse_retry_after("inf", "", now=now) is None and parse_retry_after("nan", "", now=now) is None
