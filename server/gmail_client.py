"""The only module that talks to Gmail: google-api-python-client over HTTP, one retry loop, errors mapped once.

Connections: httplib2.Http is not thread-safe and tool calls run in worker threads, so each call checks out a
session (an `AuthorizedHttp` plus the service and resource objects built on it) that no other thread holds, and
hands it back afterwards. Sessions outlive threads on purpose: anyio ends a worker thread after 10 s idle, and a
session per thread would then reconnect (TCP + TLS to Google) on most calls of a conversation. The discovery
document ships inside the library and is parsed once per process; resource objects are built once per session
(building `users().messages()` costs more CPU than sending the request).

Start-up: google-api-python-client, google-auth and httplib2 are imported on first use, not at import time, so
the server answers `tools/list` without paying for them.

Batches: `new_batch_http_request()` ignores `api_endpoint` (it always posts to Google's own batch URL), so batches
are built with an explicit `batch_uri` derived from the configured endpoint.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from typing import Any, Protocol, TypeVar

from server.auth import single_attempt_request
from server.errors import (
    GmailError,
    RateLimitedError,
    TransientError,
)
from server.gmail.errors import not_json, translate
from server.gmail.quota import UNITS_GET, UNITS_LIST, UNITS_PROFILE, QuotaLimiter
from server.gmail.retry import RetryPolicy, run_with_retries
from server.runtime.config import Settings
from server.runtime.observability import Metrics, get_logger

log = get_logger("gmail")
T = TypeVar("T")

BATCH_LIMIT = 50  # Gmail accepts 100 calls per batch but advises at most 50.
# Kept for reuse, up to as many as calls can run at once (anyio runs 40 worker threads): a shared HTTP server
# answering bursts of concurrent calls would otherwise rebuild (and reconnect) most sessions on every burst.
IDLE_SESSIONS = 40


def _patience(error: GmailError) -> tuple[bool, float]:
    """Orders retryable errors by how long they ask to wait: rate limits first, then the longest Retry-After."""
    return isinstance(error, RateLimitedError), error.retry_after_s or 0.0


class CredentialSource(Protocol):
    def get(self) -> Any: ...


_BUILD_LOCK = threading.Lock()


@lru_cache(maxsize=1)
def _gmail_discovery() -> dict[str, Any]:
    from googleapiclient.discovery_cache import get_static_doc

    return json.loads(get_static_doc("gmail", "v1"))


def _default_http(timeout_s: float) -> Any:
    import httplib2

    return httplib2.Http(timeout=timeout_s)


class _Session:
    """A kept-alive connection and the resource objects on it, tied to the credentials object it was built for.

    One thread at a time uses it: a call checks it out of the client's idle list and hands it back.
    """

    def __init__(self, credentials: Any, http: Any, endpoint: str) -> None:
        from google_auth_httplib2 import AuthorizedHttp
        from googleapiclient.discovery import build_from_document

        self.credentials = credentials
        self.http = AuthorizedHttp(credentials, http=http)
        # Its refresh-after-401 must not run google-auth's own sleeping retry loop either (see auth.py).
        self.http._request = single_attempt_request(http)
        with _BUILD_LOCK:  # build_from_document adds keys to the shared, cached discovery document as it goes
            self.service = build_from_document(
                _gmail_discovery(), http=self.http, client_options={"api_endpoint": endpoint}
            )
        self.users = self.service.users()
        self.messages = self.users.messages()
        self.broken = False  # set after a network failure: the connection is not handed out again


class GmailClient:
    """Typed access to the few Gmail endpoints the tools need, with retries and error mapping.

    Args:
        settings: endpoint, timeout and backoff scale.
        credentials: where valid credentials come from (`auth.TokenStore`).
        sleep: injected so tests assert backoff sequences without waiting.
        rand: the jitter source of retry waits, in [0, 1) (tests pass a constant).
        http_factory: builds a fresh `httplib2.Http`-compatible object per session (tests pass HttpMockSequence).
        clock: wall-clock seconds, used to turn "Retry after <time>" into a wait.
    """

    def __init__(
        self,
        settings: Settings,
        credentials: CredentialSource,
        *,
        metrics: Metrics | None = None,
        sleep: Callable[[float], None] = time.sleep,
        http_factory: Callable[[], Any] | None = None,
        clock: Callable[[], float] = time.time,
        quota: QuotaLimiter | None = None,
        rand: Callable[[], float] = random.random,
    ) -> None:
        self._settings = settings
        self._credentials = credentials
        self._metrics = metrics or Metrics()
        self._sleep = sleep
        self._clock = clock
        self._rand = rand
        self._http_factory = http_factory or (lambda: _default_http(settings.request_timeout_s))
        self._policy = RetryPolicy(scale=settings.backoff_scale)
        self._quota = quota or QuotaLimiter(settings.quota_units_per_s)
        self._idle: list[_Session] = []
        self._idle_lock = threading.Lock()
        self._local = threading.local()  # the session this thread has checked out (see _discard_session)

    # -- public API -------------------------------------------------------------------------------------------

    def list_messages(
        self, *, query: str, max_results: int, page_token: str | None = None, include_spam_trash: bool = False
    ) -> dict[str, Any]:
        """messages.list: `{"messages": [{"id", "threadId"}], "nextPageToken"?, "resultSizeEstimate"}`."""
        params: dict[str, Any] = {
            "userId": "me",
            "q": query,
            "maxResults": max_results,
            "includeSpamTrash": include_spam_trash,
            "fields": "messages(id,threadId),nextPageToken,resultSizeEstimate",
        }
        if page_token:
            params["pageToken"] = page_token
        return self._call("messages.list", lambda session: session.messages.list(**params), units=UNITS_LIST)

    def get_message(
        self, message_id: str, *, fmt: str = "full", metadata_headers: Sequence[str] | None = None
    ) -> dict[str, Any]:
        """messages.get in `full`, `metadata`, `minimal` or `raw` format."""
        params: dict[str, Any] = {"userId": "me", "id": message_id, "format": fmt}
        if metadata_headers and fmt == "metadata":
            params["metadataHeaders"] = list(metadata_headers)
        return self._call(f"messages.get({fmt})", lambda session: session.messages.get(**params))

    def get_messages_metadata(
        self, message_ids: Sequence[str], *, headers: Sequence[str], fields: str | None = None
    ) -> dict[str, dict[str, Any] | GmailError]:
        """messages.get(format=metadata) for many ids in one batch request per 50 ids.

        Parts that fail with a retryable error are retried together in one follow-up batch under the same
        policy; whatever still fails comes back as a GmailError in place of its resource, never raised.
        """
        results: dict[str, dict[str, Any] | GmailError] = {}
        for start in range(0, len(message_ids), BATCH_LIMIT):
            chunk = list(dict.fromkeys(message_ids[start : start + BATCH_LIMIT]))
            results.update(self._metadata_batch_with_retries(chunk, headers, fields))
        return results

    def get_profile(self) -> dict[str, Any]:
        """users.getProfile: `{"emailAddress", "messagesTotal", "threadsTotal", "historyId"}`."""
        return self._call(
            "users.getProfile", lambda session: session.users.getProfile(userId="me"), units=UNITS_PROFILE
        )

    # -- one request, retried -----------------------------------------------------------------------------------

    def _call(self, endpoint: str, make_request: Callable[[_Session], Any], units: int = UNITS_GET) -> dict[str, Any]:
        attempts = 0

        def attempt() -> dict[str, Any]:
            nonlocal attempts
            retry_count, attempts = attempts, attempts + 1
            self._quota.acquire(units)  # every attempt spends quota, retries included
            with self._session() as session:
                started = time.perf_counter()
                try:
                    response = make_request(session).execute(num_retries=0)
                    if not isinstance(response, dict):  # an HTML page from a proxy or captive portal, say
                        raise not_json(endpoint)
                except Exception as exc:
                    error = self._map_exception(exc, endpoint)
                    self._log_request(endpoint, started, error, retry_count=retry_count)
                    raise error from exc
            self._log_request(endpoint, started, retry_count=retry_count)
            return response

        return self._retrying(attempt, endpoint)

    def _retrying(self, attempt: Callable[[], T], endpoint: str) -> T:
        return run_with_retries(
            attempt, policy=self._policy, sleep=self._sleep, rand=self._rand, on_retry=self._on_retry(endpoint)
        )

    def _on_retry(self, endpoint: str) -> Callable[[GmailError, int, float], None]:
        def note(error: GmailError, retry_number: int, delay_s: float) -> None:
            log.warning(
                "retrying Gmail request",
                extra={
                    "endpoint": endpoint,
                    "category": error.code,
                    "gmail_api_status": error.status,
                    "retry_count": retry_number,
                    "wait_s": round(delay_s, 3),
                },
            )

        return note

    def _log_request(self, endpoint: str, started: float, error: GmailError | None = None, **extra: Any) -> None:
        if isinstance(error, RateLimitedError):  # 429 and 403 rate-limit reasons alike
            self._metrics.record_rate_limited()
        log.info(
            "gmail request",
            extra={
                "endpoint": endpoint,
                "gmail_api_status": 200 if error is None else (error.status or error.code),
                "latency_ms": round((time.perf_counter() - started) * 1000, 1),
                **extra,
            },
        )

    # -- batches ------------------------------------------------------------------------------------------------

    def _metadata_batch_with_retries(
        self, message_ids: list[str], headers: Sequence[str], fields: str | None
    ) -> dict[str, dict[str, Any] | GmailError]:
        """One batch, then follow-up batches of only the parts that failed retryably, under the one retry loop.

        A failed part makes the attempt raise (the most patient error of the failed parts stands for them), so
        the same policy, waits and retry counts apply as to a single call. What still fails in the end stays in
        the results as its GmailError; a whole batch that keeps failing gives its error to every pending part.
        """
        results: dict[str, dict[str, Any] | GmailError] = {}
        pending, attempts = message_ids, 0

        def attempt() -> None:
            nonlocal pending, attempts
            retry_count, attempts = attempts, attempts + 1
            outcome = self._metadata_batch_once(pending, headers, fields, retry_count=retry_count)
            results.update(outcome)
            failed = [outcome[message_id] for message_id in pending if isinstance(outcome[message_id], GmailError)]
            for error in failed:
                error.retry_count = retry_count
            retryable = [error for error in failed if isinstance(error, GmailError) and error.retryable]
            if retryable:
                pending = [message_id for message_id in pending if outcome[message_id] in retryable]
                log.warning(
                    "retrying failed batch parts",
                    extra={"endpoint": "messages.get(batch)", "parts": len(pending), "retry_count": attempts},
                )
                raise max(retryable, key=_patience)

        try:
            self._retrying(attempt, "batch")
        except GmailError as error:
            if not any(results.get(message_id) is error for message_id in pending):
                results.update(dict.fromkeys(pending, error))  # the whole batch failed: these lose their details
        return results

    def _metadata_batch_once(
        self, message_ids: list[str], headers: Sequence[str], fields: str | None, *, retry_count: int
    ) -> dict[str, dict[str, Any] | GmailError]:
        self._quota.acquire(UNITS_GET * len(message_ids))  # each part of a batch costs its own units
        with self._session() as session:
            return self._metadata_batch_on(session, message_ids, headers, fields, retry_count=retry_count)

    def _metadata_batch_on(
        self, session: _Session, message_ids: list[str], headers: Sequence[str], fields: str | None, *, retry_count: int
    ) -> dict[str, dict[str, Any] | GmailError]:
        from server.gmail.batch import LeanBatchHttpRequest, is_compatible  # BatchHttpRequest minus email's CPU

        outcome: dict[str, dict[str, Any] | GmailError] = {}

        def collect(request_id: str, response: Any, exception: Exception | None) -> None:
            if exception is None:
                outcome[request_id] = response if isinstance(response, dict) else not_json("messages.get(batch)")
            else:
                outcome[request_id] = self._map_exception(exception, "messages.get(metadata)")

        batch_uri = f"{self._settings.endpoint}/batch/gmail/v1"
        if is_compatible():
            batch = LeanBatchHttpRequest(callback=collect, batch_uri=batch_uri, refresh_request=session.http._request)
        else:  # a googleapiclient whose internals changed: the library's own batch, same wire format
            from googleapiclient.http import BatchHttpRequest

            batch = BatchHttpRequest(callback=collect, batch_uri=batch_uri)
        messages = session.messages
        for message_id in message_ids:
            params: dict[str, Any] = {
                "userId": "me",
                "id": message_id,
                "format": "metadata",
                "metadataHeaders": list(headers),
            }
            if fields:
                params["fields"] = fields
            batch.add(messages.get(**params), request_id=message_id)
        started = time.perf_counter()
        try:
            batch.execute(http=session.http)
        except Exception as exc:
            error = self._map_exception(exc, "batch")
            self._log_request("messages.get(batch)", started, error, parts=len(message_ids), retry_count=retry_count)
            raise error from exc
        failed = [result for result in outcome.values() if isinstance(result, GmailError)]
        for error in failed:
            if isinstance(error, RateLimitedError):
                self._metrics.record_rate_limited()
        self._log_request(
            "messages.get(batch)", started, parts=len(message_ids), failed_parts=len(failed), retry_count=retry_count
        )
        for message_id in message_ids:  # a part the server never answered counts as a transient failure
            outcome.setdefault(message_id, TransientError("Gmail's batch answer had no part for this message."))
        return outcome

    # -- connections --------------------------------------------------------------------------------------------

    @contextmanager
    def _session(self) -> Iterator[_Session]:
        """Checks out an idle session (the most recently used: its connection is the likeliest still open)."""
        credentials = self._credentials.get()  # raises AuthError with guidance
        with self._idle_lock:
            # Sessions built for credentials the token store has since replaced are dropped, never reused.
            self._idle = [idle for idle in self._idle if idle.credentials is credentials]
            session = self._idle.pop() if self._idle else None
        if session is None:
            session = _Session(credentials, self._http_factory(), self._settings.endpoint)
        self._local.session = session
        try:
            yield session
        finally:
            self._local.session = None
            if not session.broken:
                with self._idle_lock:
                    if len(self._idle) < IDLE_SESSIONS:
                        self._idle.append(session)

    def _discard_session(self) -> None:
        """After a network failure, this thread's session is not reused, so the next attempt reconnects cleanly."""
        session: _Session | None = getattr(self._local, "session", None)
        if session is not None:
            session.broken = True

    # -- error mapping: the one table is gmail/errors.py --------------------------------------------------------

    def _map_exception(self, exc: Exception, endpoint: str) -> GmailError:
        translated = translate(exc, endpoint=endpoint, now=self._clock(), timeout_s=self._settings.request_timeout_s)
        if translated.connection_broken:
            self._discard_session()
        return translated.error
