"""Gmail API faults end to end: emulator faults -> Google's client stack in a `python -m server.main` subprocess ->
the official MCP client over stdio. Each case ends in the right category with an actionable hint, within a
bounded time, and the same session then serves a normal call (with nothing leaked and stdout still pure).

Backoff waits are scaled by 0.001 (GMAIL_MCP_BACKOFF_SCALE); the real 1/2/4 s are asserted in
test_gmail_client.py. The request timeout is 0.75 s so a hang costs three timeouts, not three times 30 s.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from server.tests.support.reliability import GET, SEARCH, error_of, fault_stack

pytestmark = [pytest.mark.anyio, pytest.mark.slow]  # real timeouts: the slow tier (`pytest -m slow`)
INBOX = {"query": "in:inbox", "max_results": 3}
TIMEOUT_S = 0.75


@pytest.fixture(scope="module")
def anyio_backend():
    return "asyncio"


@pytest.fixture(scope="module")
async def stack(tmp_path_factory):
    async with fault_stack(tmp_path_factory.mktemp("api-faults"), timeout_s=TIMEOUT_S) as running:
        yield running


@pytest.fixture(autouse=True)
def clean_emulator(stack):
    stack.emulator.reset()  # no faults, an empty request log


def list_attempts(stack) -> int:
    return sum(1 for entry in stack.emulator.requests() if entry["path"].endswith("/messages"))


def slept_since(stack, before: int) -> float:
    """What the server's retries slept after its first `before` retry log lines: with the backoff scaled x0.001
    (1/2/4 s become 1/2/4 ms), anything near a second would be an unscaled or hidden wait. A count, not a clock."""
    return sum(stack.retry_waits()[before:])


@pytest.mark.parametrize(
    "status, reason",
    [(429, "rateLimitExceeded"), (403, "rateLimitExceeded"), (403, "userRateLimitExceeded")],
)
async def test_rate_limit_storm_exhausts_into_rate_limited(stack, status, reason):
    stack.emulator.add_fault(status=status, reason=reason, message="Rate Limit Exceeded", count=50)
    before = len(stack.retry_waits())
    result, _ = await stack.call(SEARCH, INBOX, budget_s=5)
    error = error_of(result)
    assert error["category"] == "rate_limited" and error["retryable"] is True
    assert error["retry_count"] == 3 and list_attempts(stack) == 4  # the first try and 3 retries
    assert "wait a minute" in error["hint"]
    assert len(stack.retry_waits()) - before == 3 and slept_since(stack, before) < 0.1
    await stack.serves_next_call(f"{status} {reason} storm", result)


@pytest.mark.parametrize("where", ["header", "message"])
async def test_429_retry_after_is_honoured(stack, where):
    before = len(stack.retry_waits())
    if where == "header":
        stack.emulator.add_fault(status=429, retry_after=3)
        low, high = 0.0029, 0.0041  # 3 s (not the 1 s first backoff) + up to 25% jitter, x 0.001, logged to 1 ms
    else:  # Gmail's usual form: "Retry after <RFC 3339 time>" in the message text
        when = (datetime.now(timezone.utc) + timedelta(seconds=10)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
        stack.emulator.add_fault(status=429, message=f"User-rate limit exceeded.  Retry after {when}")
        low, high = 0.005, 0.0131  # ~10 s from now, less the time it took, + up to 25% jitter, x 0.001, to 1 ms
    result, _ = await stack.call(SEARCH, INBOX, budget_s=5)
    assert not result.is_error and result.structured_content["result_count"] == 3
    [wait] = stack.retry_waits()[before:]
    assert low <= wait <= high
    await stack.serves_next_call(f"429 Retry-After ({where})", result)


@pytest.mark.parametrize("status, failures", [(500, 1), (503, 2)])
async def test_5xx_then_success(stack, status, failures):
    stack.emulator.add_fault(status=status, reason="backendError", message="Backend Error", count=failures)
    before = len(stack.retry_waits())
    result, _ = await stack.call(SEARCH, INBOX, budget_s=5)
    assert not result.is_error and result.structured_content["result_count"] == 3
    assert list_attempts(stack) == failures + 1 and slept_since(stack, before) < 0.1
    await stack.serves_next_call(f"{status} x{failures} then success", result)


@pytest.mark.parametrize("status", [500, 503])
async def test_5xx_exhausted_is_transient(stack, status):
    stack.emulator.add_fault(status=status, reason="backendError", message="Backend Error", count=50)
    before = len(stack.retry_waits())
    result, _ = await stack.call(GET, {"message_id": stack.emulator.store.messages[0].id}, budget_s=5)
    error = error_of(result)
    assert error["category"] == "transient" and error["retry_count"] == 2 and error["http_status"] == status
    assert "retry in a few seconds" in error["hint"] and slept_since(stack, before) < 0.1
    await stack.serves_next_call(f"{status} exhausted", result)


async def test_hanging_gmail_ends_within_the_timeouts(stack):
    stack.emulator.add_fault(hang=True, count=50)
    result, elapsed = await stack.call(SEARCH, INBOX, budget_s=10)
    error = error_of(result)
    assert error["category"] == "transient" and error["retry_count"] == 2
    assert f"did not answer within {TIMEOUT_S:g} s" in error["message"]
    assert list_attempts(stack) == 3 and elapsed >= 3 * TIMEOUT_S  # three attempts, each cut at the timeout
    await stack.serves_next_call("hang exhausted", result)


async def test_one_hang_then_success(stack):
    stack.emulator.add_fault(hang=True, count=1)
    result, elapsed = await stack.call(SEARCH, INBOX, budget_s=10)
    assert not result.is_error and list_attempts(stack) == 2 and elapsed >= TIMEOUT_S  # cut once, then answered
    await stack.serves_next_call("hang once", result)


@pytest.mark.parametrize("count", [1, 50])
async def test_connection_reset(stack, count):
    stack.emulator.add_fault(reset=True, count=count)
    before = len(stack.retry_waits())
    result, _ = await stack.call(SEARCH, INBOX, budget_s=5)
    if count == 1:  # httplib2 reconnects once by itself, or our retry does: either way the call succeeds
        assert not result.is_error
    else:
        error = error_of(result)
        assert error["category"] == "transient" and "ConnectionResetError" in error["message"]
        assert "internet connection" in error["hint"]
    assert slept_since(stack, before) < 0.1
    await stack.serves_next_call(f"connection reset x{count}", result)


async def test_403_insufficient_permissions_names_the_scope(stack):
    stack.emulator.add_fault(status=403, reason="insufficientPermissions", message="Insufficient Permission")
    result, _ = await stack.call(SEARCH, INBOX, budget_s=5)
    error = error_of(result)
    assert error["category"] == "permission_denied" and error["retry_count"] == 0
    assert "https://www.googleapis.com/auth/gmail.readonly" in error["message"]
    assert "auth_cli.py" in error["hint"]
    await stack.serves_next_call("403 insufficientPermissions", result)


async def test_403_daily_limit_is_quota_exceeded(stack):
    stack.emulator.add_fault(status=403, reason="dailyLimitExceeded", message="Daily Limit Exceeded")
    result, _ = await stack.call(SEARCH, INBOX, budget_s=5)
    error = error_of(result)
    assert error["category"] == "quota_exceeded" and "midnight Pacific" in error["hint"]
    assert list_attempts(stack) == 1  # retrying a spent daily quota is pointless
    await stack.serves_next_call("403 dailyLimitExceeded", result)


async def test_404_during_enrichment_degrades_only_that_item(stack):
    first, _ = await stack.call(SEARCH, INBOX, budget_s=5)
    victim = first.structured_content["messages"][1]["id"]
    stack.emulator.add_fault(status=404, reason="notFound", path_regex=f"/messages/{victim}$", count=5)
    result, _ = await stack.call(SEARCH, INBOX, budget_s=5)
    assert not result.is_error
    content = result.structured_content
    assert content["enrichment_failures"] == 1 and content["enriched_count"] == 2
    degraded = content["messages"][1]
    assert degraded == {"id": victim, "thread_id": degraded["thread_id"]}
    assert all("subject" in item for n, item in enumerate(content["messages"]) if n != 1)
    assert "gmail_get_message" in content["hint"]
    await stack.serves_next_call("404 during enrichment", first, result)


async def test_emulator_down_then_back(stack):
    stack.stop_emulator()
    before = len(stack.retry_waits())
    try:
        result, _ = await stack.call(SEARCH, INBOX, budget_s=5)
    finally:
        stack.start_emulator_again()
    error = error_of(result)
    assert error["category"] == "transient" and "ConnectionRefusedError" in error["message"]
    assert error["retry_count"] == 2 and slept_since(stack, before) < 0.1
    # The new emulator knows none of the old access tokens: 401 -> refresh -> retried, transparently.
    await stack.serves_next_call("emulator down", result)
