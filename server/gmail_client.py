"""The only module that talks to Gmail: google-api-python-client over HTTP, one retry loop, errors mapped once.

Connections come from a pool of sessions (`gmail/sessions.py`: one thread at a time per kept-alive connection,
the Google stack imported on first use). Every request, retried or not, is logged, spends client-side quota
(`gmail/quota.py`), and is added to the cost of the tool call it serves (`runtime/cost.py`), which the answer's
`_meta` reports.

Batches: `new_batch_http_request()` ignores `api_endpoint` (it always posts to Google's own batch URL), so batches
are built with an explicit `batch_uri` derived from the configured endpoint. Their size adapts to Gmail's
per-user concurrency limit (`gmail/batch_size.py`); parts that fail retryably are sent again, alone.
"""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from googleapiclient.http import BatchHttpRequest

from server.errors import AccountRefusedError, GmailError, RateLimitedError, TransientError
from server.gmail.account_endpoints import FilterEndpoints, PeopleEndpoints
from server.gmail.batch import GuardedBatch, is_compatible
from server.gmail.batch_parts import ALONGSIDE_ID, ListAlongside, MakePart, batch_name, list_params, patience
from server.gmail.batch_size import AdaptiveBatchSize
from server.gmail.errors import not_json, translate
from server.gmail.quota import (
    UNITS_ATTACHMENT,
    UNITS_GET,
    UNITS_HISTORY,
    UNITS_LABEL,
    UNITS_LIST,
    UNITS_PROFILE,
    UNITS_THREAD,
    QuotaLimiter,
)
from server.gmail.retry import RetryPolicy, run_with_retries
from server.gmail.sessions import CredentialSource, Session, SessionPool, default_http, prepare_stack
from server.gmail.write_endpoints import WriteEndpoints, empty_is_done
from server.runtime import cost
from server.runtime.config import Settings
from server.runtime.observability import Metrics, get_logger

log = get_logger("gmail")
T = TypeVar("T")
BATCH_LIMIT = 50  # Gmail accepts 100 calls per batch but advises at most 50
HISTORY_TYPES = ("messageAdded", "messageDeleted", "labelAdded", "labelRemoved")


class GmailClient(WriteEndpoints, PeopleEndpoints, FilterEndpoints):
    """Typed access to the Gmail endpoints the tools need, with retries and error mapping (writes: the mixin).

    Args:
        settings: endpoint, timeout and backoff scale.
        credentials: where valid credentials come from (`auth.TokenStore`).
        sleep: injected so tests assert backoff sequences without waiting.
        rand: the jitter source of retry waits, in [0, 1) (tests pass a constant).
        http_factory: builds a fresh `httplib2.Http`-compatible object per session (tests pass HttpMockSequence).
        clock: wall-clock seconds, used to turn "Retry after <time>" into a wait.
        batch_size: how many calls go in one batch request (per account: Gmail's concurrency limit is per user).
        single_attempt_factory: the Http of a never-repeated request (default: a fresh `SingleAttemptHttp`).
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
        batch_size: AdaptiveBatchSize | None = None,
        single_attempt_factory: Callable[[], Any] | None = None,
    ) -> None:
        self._settings = settings
        self._metrics = metrics or Metrics()
        self._sleep = sleep
        self._clock = clock
        self._rand = rand
        self._policy = RetryPolicy(scale=settings.backoff_scale)
        self._quota = quota or QuotaLimiter(settings.quota_units_per_s)
        self._sessions = SessionPool(
            credentials, http_factory or (lambda: default_http(settings.request_timeout_s)), settings.endpoint
        )
        self.batch_size = batch_size or AdaptiveBatchSize()
        self._single_attempt_factory = single_attempt_factory or http_factory  # None: a fresh SingleAttemptHttp

    # -- public API -------------------------------------------------------------------------------------------

    def list_messages(
        self,
        *,
        query: str,
        max_results: int,
        page_token: str | None = None,
        include_spam_trash: bool = False,
        label_ids: Sequence[str] = (),
    ) -> dict[str, Any]:
        """messages.list: `{"messages": [{"id", "threadId"}], "nextPageToken"?, "resultSizeEstimate"}`."""
        params = list_params(query, max_results, page_token, include_spam_trash, label_ids)
        params["fields"] = "messages(id,threadId),nextPageToken,resultSizeEstimate"
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
        self,
        message_ids: Sequence[str],
        *,
        headers: Sequence[str],
        fields: str | None = None,
        alongside: ListAlongside | None = None,
    ) -> dict[str, dict[str, Any] | GmailError]:
        """messages.get(format=metadata) for many ids, in batch requests of the adaptive size.

        Parts that fail with a retryable error are retried together in follow-up batches under the same
        policy; whatever still fails comes back as a GmailError in place of its resource, never raised.
        `alongside` rides in the first batch, once (it is never retried).
        """
        params: dict[str, Any] = {"userId": "me", "format": "metadata", "metadataHeaders": list(headers)}
        if fields:
            params["fields"] = fields
        return self._batch_get(
            "messages.get(metadata)",
            message_ids,
            MakePart(("messages.get", repr(params)), lambda session, key: session.messages.get(id=key, **params)),
            units=UNITS_GET,
            alongside=alongside,
        )

    def get_thread(
        self, thread_id: str, *, fmt: str = "full", metadata_headers: Sequence[str] | None = None
    ) -> dict[str, Any]:
        """threads.get: every message of a conversation (sent mail included) in one request, oldest first."""
        params: dict[str, Any] = {"userId": "me", "id": thread_id, "format": fmt}
        if metadata_headers and fmt == "metadata":
            params["metadataHeaders"] = list(metadata_headers)
        return self._call(f"threads.get({fmt})", lambda session: session.threads.get(**params), units=UNITS_THREAD)

    def get_attachment(self, message_id: str, attachment_id: str) -> dict[str, Any]:
        """messages.attachments.get: `{"size", "data"}` (base64url) of one part stored apart from the message."""
        return self._call(
            "attachments.get",
            lambda session: session.attachments.get(userId="me", messageId=message_id, id=attachment_id),
            units=UNITS_ATTACHMENT,
        )

    def list_labels(self) -> dict[str, Any]:
        """labels.list: `{"labels": [{"id", "name", "type", ...}]}` (no counts: those come from labels.get)."""
        return self._call("labels.list", lambda session: session.labels.list(userId="me"), units=UNITS_LABEL)

    def get_labels(self, label_ids: Sequence[str]) -> dict[str, dict[str, Any] | GmailError]:
        """labels.get (with message and thread counts) for many labels, batched like message metadata."""
        return self._batch_get(
            "labels.get",
            label_ids,
            MakePart("labels.get", lambda session, label_id: session.labels.get(userId="me", id=label_id)),
            units=UNITS_LABEL,
            adaptive=False,  # a label count is a cheap read: one batch of up to 50, as Gmail advises
        )

    def get_profile(self) -> dict[str, Any]:
        """users.getProfile: `{"emailAddress", "messagesTotal", "threadsTotal", "historyId"}`."""
        return self._call(
            "users.getProfile", lambda session: session.users.getProfile(userId="me"), units=UNITS_PROFILE
        )

    def list_history(
        self,
        *,
        start_history_id: int,
        label_id: str | None = None,
        history_types: Sequence[str] = HISTORY_TYPES,
        max_results: int = 500,
        page_token: str | None = None,
    ) -> dict[str, Any]:
        """history.list: `{"history": [records], "nextPageToken"?, "historyId"}`; NotFoundError when
        `start_history_id` is older than the history Gmail keeps (about a week)."""
        params: dict[str, Any] = {
            "userId": "me",
            "startHistoryId": str(start_history_id),
            "historyTypes": list(history_types),
            "maxResults": max_results,
        }
        if label_id:
            params["labelId"] = label_id
        if page_token:
            params["pageToken"] = page_token
        return self._call("history.list", lambda session: session.history.list(**params), units=UNITS_HISTORY)

    def warm_up(self) -> dict[str, Any]:
        """What a first call would otherwise wait for, done now: the Google stack imported and the discovery
        document parsed, the access token refreshed if it expired, a session built and its connection opened
        (by `users.getProfile`, 1 quota unit, whose `historyId` the caches use). Returns the profile."""
        prepare_stack()
        return self.get_profile()

    # -- one request, retried -----------------------------------------------------------------------------------

    def _call(self, endpoint: str, make_request: Callable[[Session], Any], units: int = UNITS_GET) -> dict[str, Any]:
        attempts = 0

        def attempt() -> dict[str, Any]:
            nonlocal attempts
            retry_count, attempts = attempts, attempts + 1
            self._quota.acquire(units)  # every attempt spends quota, retries included
            with self._sessions.checkout() as session:
                cost.record_request(units, retry=retry_count > 0)
                started = time.perf_counter()
                try:
                    response = empty_is_done(make_request(session).execute(num_retries=0))
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
        self,
        endpoint: str,
        ids: Sequence[str],
        make_part: MakePart,
        *,
        units: int,
        alongside: ListAlongside | None = None,
        adaptive: bool = True,
    ) -> dict[str, dict[str, Any] | GmailError]:
        """One GET per id (`make_part.build(session, id)`) in batch requests of the adaptive size, under the one retry
        loop: parts that failed retryably go again together; what still fails stays in the results as its error."""
        results: dict[str, dict[str, Any] | GmailError] = {}
        pending, attempts = list(dict.fromkeys(ids)), 0

        def attempt() -> None:
            nonlocal pending, attempts
            retry_count, attempts = attempts, attempts + 1
            remaining = list(pending)
            while remaining:  # sized batch by batch: a rate-limited answer shrinks the very next one
                size = self.batch_size.size if adaptive else BATCH_LIMIT
                first = retry_count == 0 and len(remaining) == len(pending)
                chunk, remaining = remaining[:size], remaining[size:]
                extra = alongside if first else None
                results.update(
                    self._batch_once(
                        endpoint, chunk, make_part, units, retry_count=retry_count, extra=extra, adaptive=adaptive
                    )
                )
            failed = [error for key in pending if isinstance(error := results[key], GmailError)]
            for error in failed:
                error.retry_count = retry_count
            # failedPrecondition is not retryable for the assistant, but worth one more try (see RetryPolicy)
            retryable = [error for error in failed if error.retryable or isinstance(error, AccountRefusedError)]
            if retryable:
                pending = [key for key in pending if results[key] in retryable]
                log.warning(
                    "retrying failed batch parts",
                    extra={"endpoint": batch_name(endpoint), "parts": len(pending), "retry_count": attempts},
                )
                raise max(retryable, key=patience)

        if pending:
            with contextlib.suppress(GmailError):  # each part that still failed holds its own error in `results`
                self._retrying(attempt, "batch")
        return results

    def _batch_once(
        self,
        endpoint: str,
        ids: list[str],
        make_part: MakePart,
        units_each: int,
        *,
        retry_count: int,
        extra: ListAlongside | None = None,
        adaptive: bool = True,
    ) -> dict[str, dict[str, Any] | GmailError]:
        """One batch request; a batch that fails as a whole gives its error to each of its parts."""
        units = units_each * len(ids) + (UNITS_LIST if extra else 0)  # each part costs its own units
        self._quota.acquire(units)
        try:
            with self._sessions.checkout() as session:
                cost.record_request(units, retry=retry_count > 0)
                outcome = self._batch_on(session, endpoint, ids, make_part, retry_count=retry_count, extra=extra)
        except GmailError as error:
            return dict.fromkeys(ids, error)
        listed = outcome.pop(ALONGSIDE_ID, None)
        if extra is not None and isinstance(listed, dict):
            extra.deliver(listed)
        limited = sum(isinstance(result, RateLimitedError) for result in outcome.values())
        if adaptive:
            self.batch_size.record(sent=len(ids), rate_limited=limited)
        return outcome

    def _batch_on(
        self,
        session: Session,
        endpoint: str,
        ids: list[str],
        make_part: MakePart,
        *,
        retry_count: int,
        extra: ListAlongside | None = None,
    ) -> dict[str, dict[str, Any] | GmailError]:

        outcome: dict[str, dict[str, Any] | GmailError] = {}
        name = batch_name(endpoint)

        def collect(request_id: str, response: Any, exception: Exception | None) -> None:
            if exception is None:
                outcome[request_id] = response if isinstance(response, dict) else not_json(name)
            else:
                outcome[request_id] = self._map_exception(exception, endpoint)

        batch_uri = f"{self._settings.endpoint}/batch/gmail/v1"
        if is_compatible():
            batch = GuardedBatch(callback=collect, batch_uri=batch_uri, refresh_request=session.refresh_request)
        else:  # a googleapiclient whose internals changed: the library's own batch, same wire format
            batch = BatchHttpRequest(callback=collect, batch_uri=batch_uri)
        # The discovery machinery runs once per session and part shape, not per part (batch.requests_per_id).
        requests = session.requests_for(make_part.shape, lambda key: make_part.build(session, key), ids)
        for key, request in zip(ids, requests, strict=True):
            batch.add(request, request_id=key)
        if extra is not None:
            batch.add(extra.request(session), request_id=ALONGSIDE_ID)
        parts = len(ids) + (extra is not None)
        started = time.perf_counter()
        try:
            batch.execute(http=session.http)
        except Exception as exc:
            error = self._map_exception(exc, "batch")
            self._log_request(name, started, error, parts=parts, retry_count=retry_count)
            raise error from exc
        failed = [result for result in outcome.values() if isinstance(result, GmailError)]
        for error in failed:
            if isinstance(error, RateLimitedError):
                self._metrics.record_rate_limited()
        self._log_request(name, started, parts=parts, failed_parts=len(failed), retry_count=retry_count)
        for key in ids:  # a part the server never answered counts as a transient failure
            outcome.setdefault(key, TransientError("Gmail's batch answer had no part for this request."))
        return outcome

    # -- error mapping: the one table is gmail/errors.py --------------------------------------------------------

    def _map_exception(self, exc: Exception, endpoint: str) -> GmailError:
        translated = translate(exc, endpoint=endpoint, now=self._clock(), timeout_s=self._settings.request_timeout_s)
        if translated.connection_broken:
            self._sessions.discard_current()
        return translated.error
