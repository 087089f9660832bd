"""The only module that talks to Gmail: google-api-python-client over HTTP, one retry loop, errors mapped once.

Connections: every call checks out a session of its own from a pool (`gmail/sessions.py`: httplib2 is not
thread-safe, and kept-alive connections outlive worker threads).

Start-up: google-api-python-client, google-auth and httplib2 are imported on first use, not at import time, so
the server answers `tools/list` without paying for them.

Batches: `new_batch_http_request()` ignores `api_endpoint` (it always posts to Google's own batch URL), so batches
are built with an explicit `batch_uri` derived from the configured endpoint.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Protocol, TypeVar

from server.errors import (
    GmailError,
    RateLimitedError,
    TransientError,
)
from server.gmail.errors import not_json, translate
from server.gmail.quota import (
    UNITS_ATTACHMENT,
    UNITS_GET,
    UNITS_LABEL,
    UNITS_LIST,
    UNITS_PROFILE,
    UNITS_THREAD,
    QuotaLimiter,
)
from server.gmail.retry import RetryPolicy, run_with_retries
from server.gmail.sessions import Session as _Session
from server.gmail.sessions import SessionPool, default_http
from server.runtime.config import Settings
from server.runtime.observability import Metrics, get_logger

__all__ = ["BATCH_LIMIT", "GmailClient", "_Session"]

log = get_logger("gmail")
T = TypeVar("T")
Resource = dict[str, Any]
MakePart = Callable[[_Session, str], Any]  # the request of one batch part, for one id

BATCH_LIMIT = 50  # Gmail accepts 100 calls per batch but advises at most 50.


def _patience(error: GmailError) -> tuple[bool, float]:
    """Orders retryable errors by how long they ask to wait: rate limits first, then the longest Retry-After."""
    return isinstance(error, RateLimitedError), error.retry_after_s or 0.0


class CredentialSource(Protocol):
    def get(self) -> Any: ...


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
        self._policy = RetryPolicy(scale=settings.backoff_scale)
        self._quota = quota or QuotaLimiter(settings.quota_units_per_s)
        self._http_factory = http_factory or (lambda: default_http(settings.request_timeout_s))
        self._pool = SessionPool(settings.endpoint, lambda: self._http_factory())  # tests swap the factory

    # -- public API -------------------------------------------------------------------------------------------

    def list_messages(
        self, *, query: str, max_results: int, page_token: str | None = None, include_spam_trash: bool = False
    ) -> Resource:
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
    ) -> Resource:
        """messages.get in `full`, `metadata`, `minimal` or `raw` format."""
        params: dict[str, Any] = {"userId": "me", "id": message_id, "format": fmt}
        if metadata_headers and fmt == "metadata":
            params["metadataHeaders"] = list(metadata_headers)
        return self._call(f"messages.get({fmt})", lambda session: session.messages.get(**params))

    def get_messages_metadata(
        self, message_ids: Sequence[str], *, headers: Sequence[str], fields: str | None = None
    ) -> dict[str, Resource | GmailError]:
        """messages.get(format=metadata) for many ids in one batch request per 50 ids.

        Parts that fail with a retryable error are retried together in one follow-up batch under the same
        policy; whatever still fails comes back as a GmailError in place of its resource, never raised.
        """
        params: dict[str, Any] = {"userId": "me", "format": "metadata", "metadataHeaders": list(headers)}
        if fields:
            params["fields"] = fields
        return self._batch_get(
            "messages.get(metadata)",
            message_ids,
            lambda session, message_id: session.messages.get(id=message_id, **params),
            units=UNITS_GET,
        )

    def get_thread(
        self, thread_id: str, *, fmt: str = "full", metadata_headers: Sequence[str] | None = None
    ) -> Resource:
        """threads.get: every message of a conversation (sent mail included) in one request, oldest first."""
        params: dict[str, Any] = {"userId": "me", "id": thread_id, "format": fmt}
        if metadata_headers and fmt == "metadata":
            params["metadataHeaders"] = list(metadata_headers)
        return self._call(f"threads.get({fmt})", lambda session: session.threads.get(**params), units=UNITS_THREAD)

    def get_attachment(self, message_id: str, attachment_id: str) -> Resource:
        """messages.attachments.get: `{"size", "data"}` (base64url) of one part stored apart from the message."""
        return self._call(
            "attachments.get",
            lambda session: session.attachments.get(userId="me", messageId=message_id, id=attachment_id),
            units=UNITS_ATTACHMENT,
        )

    def list_labels(self) -> Resource:
        """labels.list: `{"labels": [{"id", "name", "type", ...}]}` (no counts: those come from labels.get)."""
        return self._call("labels.list", lambda session: session.labels.list(userId="me"), units=UNITS_LABEL)

    def get_labels(self, label_ids: Sequence[str]) -> dict[str, Resource | GmailError]:
        """labels.get (with message and thread counts) for many labels in one batch request per 50 labels."""
        return self._batch_get(
            "labels.get",
            label_ids,
            lambda session, label_id: session.labels.get(userId="me", id=label_id),
            units=UNITS_LABEL,
        )

    def get_profile(self) -> Resource:
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
            with self._pool_session() as session:
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

    def _batch_get(
        self, endpoint: str, ids: Sequence[str], make_part: MakePart, *, units: int
    ) -> dict[str, Resource | GmailError]:
        """One GET per id, sent as batch requests of at most BATCH_LIMIT parts; results keyed by id."""
        results: dict[str, Resource | GmailError] = {}
        unique = list(dict.fromkeys(ids))
        for start in range(0, len(unique), BATCH_LIMIT):
            chunk = unique[start : start + BATCH_LIMIT]
            results.update(self._batch_with_retries(endpoint, chunk, make_part, units))
        return results

    def _batch_with_retries(
        self, endpoint: str, ids: list[str], make_part: MakePart, units: int
    ) -> dict[str, Resource | GmailError]:
        """One batch, then follow-up batches of only the parts that failed retryably, under the one retry loop.

        A failed part makes the attempt raise (the most patient error of the failed parts stands for them), so
        the same policy, waits and retry counts apply as to a single call. What still fails in the end stays in
        the results as its GmailError; a whole batch that keeps failing gives its error to every pending part.
        """
        results: dict[str, Resource | GmailError] = {}
        pending, attempts = ids, 0

        def attempt() -> None:
            nonlocal pending, attempts
            retry_count, attempts = attempts, attempts + 1
            self._quota.acquire(units * len(pending))  # each part of a batch costs its own units
            with self._pool_session() as session:
                outcome = self._batch_on(session, endpoint, pending, make_part, retry_count=retry_count)
            results.update(outcome)
            failed = [outcome[key] for key in pending if isinstance(outcome[key], GmailError)]
            for error in failed:
                error.retry_count = retry_count
            retryable = [error for error in failed if isinstance(error, GmailError) and error.retryable]
            if retryable:
                pending = [key for key in pending if outcome[key] in retryable]
                log.warning(
                    "retrying failed batch parts",
                    extra={"endpoint": f"{endpoint}(batch)", "parts": len(pending), "retry_count": attempts},
                )
                raise max(retryable, key=_patience)

        try:
            self._retrying(attempt, "batch")
        except GmailError as error:
            if not any(results.get(key) is error for key in pending):
                results.update(dict.fromkeys(pending, error))  # the whole batch failed: these lose their answers
        return results

    def _batch_on(
        self, session: _Session, endpoint: str, ids: list[str], make_part: MakePart, *, retry_count: int
    ) -> dict[str, Resource | GmailError]:
        from server.gmail.batch import LeanBatchHttpRequest, is_compatible  # BatchHttpRequest minus email's CPU

        outcome: dict[str, Resource | GmailError] = {}

        def collect(request_id: str, response: Any, exception: Exception | None) -> None:
            if exception is None:
                outcome[request_id] = response if isinstance(response, dict) else not_json(f"{endpoint}(batch)")
            else:
                outcome[request_id] = self._map_exception(exception, endpoint)

        batch_uri = f"{self._settings.endpoint}/batch/gmail/v1"
        if is_compatible():
            batch = LeanBatchHttpRequest(callback=collect, batch_uri=batch_uri, refresh_request=session.http._request)
        else:  # a googleapiclient whose internals changed: the library's own batch, same wire format
            from googleapiclient.http import BatchHttpRequest

            batch = BatchHttpRequest(callback=collect, batch_uri=batch_uri)
        for key in ids:
            batch.add(make_part(session, key), request_id=key)
        started = time.perf_counter()
        name = endpoint.split("(", 1)[0] + "(batch)"  # "messages.get(batch)", "labels.get(batch)"
        try:
            batch.execute(http=session.http)
        except Exception as exc:
            error = self._map_exception(exc, "batch")
            self._log_request(name, started, error, parts=len(ids), retry_count=retry_count)
            raise error from exc
        failed = [result for result in outcome.values() if isinstance(result, GmailError)]
        for error in failed:
            if isinstance(error, RateLimitedError):
                self._metrics.record_rate_limited()
        self._log_request(name, started, parts=len(ids), failed_parts=len(failed), retry_count=retry_count)
        for key in ids:  # a part the server never answered counts as a transient failure
            outcome.setdefault(key, TransientError("Gmail's batch answer had no part for this request."))
        return outcome

    # -- connections --------------------------------------------------------------------------------------------

    @contextmanager
    def _pool_session(self) -> Iterator[_Session]:
        credentials = self._credentials.get()  # raises AuthError with guidance
        with self._pool.checkout(credentials) as session:
            yield session

    # -- error mapping: the one table is gmail/errors.py --------------------------------------------------------

    def _map_exception(self, exc: Exception, endpoint: str) -> GmailError:
        translated = translate(exc, endpoint=endpoint, now=self._clock(), timeout_s=self._settings.request_timeout_s)
        if translated.connection_broken:
            self._pool.discard_current()
        return translated.error
