"""The google-auth transport for token refreshes: one attempt per token-endpoint request, whoever refreshes.

Used by `auth.py` (the refresh before a call), `gmail/sessions.py` (a session's authorized HTTP) and
`gmail/write_endpoints.py` (the one-attempt writes), so it lives here, below all three.
"""

from __future__ import annotations

from typing import Any

from server.runtime import cost

# Statuses google-auth would retry on its own (google.auth.transport.DEFAULT_RETRYABLE_STATUS_CODES).
_TOKEN_ENDPOINT_RETRYABLE = frozenset({408, 429, 500, 503, 504})


def single_attempt_request(http: Any) -> Any:
    """A google-auth transport over `http` that makes exactly one attempt per token-endpoint request.

    google-auth retries a 5xx/429 token endpoint three times with real 1 s and 2 s sleeps of its own, inside
    whichever of our attempts asked for a refresh: a second, hidden retry loop that ignores the backoff scale
    and tripled an outage into ~9 s per tool call. Raising a retryable RefreshError on the first such answer
    leaves the decision to the client's one retry loop (`describe_refresh_failure` makes it `transient`).
    """
    from google.auth import exceptions as google_exceptions
    from google_auth_httplib2 import Request

    request = Request(http)

    def once(url: str, method: str = "GET", body: Any = None, headers: Any = None, **kwargs: Any) -> Any:
        cost.record(token_requests=1)  # the tool call waiting for it pays for it (the warm-up's counts for none)
        response = request(url, method=method, body=body, headers=headers, **kwargs)
        if response.status in _TOKEN_ENDPOINT_RETRYABLE:
            failure = f"token endpoint answered HTTP {response.status}"
            raise google_exceptions.RefreshError(failure, retryable=True)  # type: ignore[no-untyped-call]  # google-auth leaves its exceptions unannotated
        return response

    return once
