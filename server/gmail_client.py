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

from server.errors import GmailError, InternalError, RateLimitedError, TransientError, UnknownOutcomeError
from server.gmail.batch_size import AdaptiveBatchSize
from server.gmail.errors import not_json, translate
from server.gmail.quota import UNITS_GET, UNITS_HISTORY, UNITS_LIST, UNITS_PROFILE, QuotaLimiter
from server.gmail.retry import RetryPolicy, run_with_retries
from server.gmail.sessions import CredentialSource, Session, SessionPool, default_http, prepare_stack
from server.gmail.single_attempt import SingleAttemptUnavailable, single_attempt_error, single_attempt_http
from server.gmail.write_endpoints import WriteEndpoints, WriteListener
from server.runtime import cost
from server.runtime.config import Settings
from server.runtime.observability import Metrics, get_logger

log = get_logger("gmail")
T = TypeVar("T")
HISTORY_TYPES = ("messageAdded", "messageDeleted", "labelAdded", "labelRemoved")


def _patience(error: GmailError) -> tuple[bool, float]:
    """Orders retryable errors by how long they ask to wait: rate limits first, then the longest Retry-After."""
    return isinstance(error, RateLimitedError), error.retry_after_s or 0.0


def _empty_is_done(response: Any) -> Any:
    """Calls Gmail answers with an empty body (204: batchModify, drafts.delete) come back as b"" from the library
    (no response schema, raw model): that is success with nothing to say."""
    return {} if response in (b"", "", None) else response


class GmailClient(WriteEndpoints):
    """Typed access to the few Gmail endpoints the tools need, with retries and error mapping.

    Args:
        settings: endpoint, timeout and backoff scale.
        credentials: where valid credentials come from (`auth.TokenStore`).
        sleep: injected so tests assert backoff sequences without waiting.
        rand: the jitter source of retry waits, in [0, 1) (tests pass a constant).
        http_factory: builds a fresh `httplib2.Http`-compatible object per session (tests pass HttpMockSequence).
        single_attempt_factory: the Http of one never-repeated request (a send); default: a fresh
            `SingleAttemptHttp`, or `http_factory` when tests pass one.
        clock: wall-clock seconds, used to turn "Retry after <time>" into a wait.
        batch_size: how many calls go in one batch request (per account: Gmail's concurrency limit is per user).
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
        self._single_attempt_factory = (
            single_attempt_factory or http_factory or (lambda: single_attempt_http(settings.request_timeout_s))
        )
        self._write_listeners: list[WriteListener] = []

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
        """messages.get(format=metadata) for many ids, in batch requests of the adaptive size.

        Parts that fail with a retryable error are retried together in follow-up batches under the same
        policy; whatever still fails comes back as a GmailError in place of its resource, never raised.
        """
        results: dict[str, dict[str, Any] | GmailError] = {}
        pending, attempts = list(dict.fromkeys(message_ids)), 0

        def attempt() -> None:
            nonlocal pending, attempts
            retry_count, attempts = attempts, attempts + 1
            for chunk in self.batch_size.chunks(pending):
                results.update(self._metadata_batch_once(chunk, headers, fields, retry_count=retry_count))
            failed = [results[message_id] for message_id in pending if isinstance(results[message_id], GmailError)]
            for error in failed:
                error.retry_count = retry_count
            retryable = [error for error in failed if isinstance(error, GmailError) and error.retryable]
            if retryable:
                pending = [message_id for message_id in pending if results[message_id] in retryable]
                log.warning(
                    "retrying failed batch parts",
                    extra={"endpoint": "messages.get(batch)", "parts": len(pending), "retry_count": attempts},
                )
                raise max(retryable, key=_patience)

        if pending:
            with contextlib.suppress(GmailError):  # each part that still failed holds its own error in `results`
                self._retrying(attempt, "batch")
        return results

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
                    response = _empty_is_done(make_request(session).execute(num_retries=0))
                    if not isinstance(response, dict):  # an HTML page from a proxy or captive portal, say
                        raise not_json(endpoint)
                except Exception as exc:
                    error = self._map_exception(exc, endpoint)
                    self._log_request(endpoint, started, error, retry_count=retry_count)
                    raise error from exc
            self._log_request(endpoint, started, retry_count=retry_count)
            return response

        return self._retrying(attempt, endpoint)

    def _call_once(self, endpoint: str, make_request: Callable[[Session], Any], units: int) -> dict[str, Any]:
        """Exactly one attempt on a fresh connection, never repeated (see `gmail/single_attempt.py`).

        Before the request is written (token refresh, connecting) a failure means nothing happened: the usual
        error. After it, a reset, a timeout, a connection closed without an answer or a 5xx answer mean Gmail
        may have acted: UnknownOutcomeError. A 4xx answer is Gmail refusing: mapped as usual.
        """
        from google_auth_httplib2 import AuthorizedHttp

        from server.auth import single_attempt_request

        self._quota.acquire(units)
        try:
            http = self._single_attempt_factory()
        except SingleAttemptUnavailable as exc:
            raise InternalError(
                f"{endpoint} was not attempted: this httplib2 version cannot be made to try a request only once "
                f"({exc}), and a repeated send could mail twice.",
                hint="Install the httplib2 version in requirements.txt (pip install -r requirements.txt).",
            ) from None
        with self._sessions.checkout() as session:  # a valid access token, and the resource objects
            cost.record_request(units)
            authorized = AuthorizedHttp(session.credentials, http=http)
            authorized._request = single_attempt_request(http)
            started = time.perf_counter()
            try:
                response = _empty_is_done(make_request(session).execute(http=authorized, num_retries=0))
                if not isinstance(response, dict):
                    raise UnknownOutcomeError(f"Gmail's answer to {endpoint} was not JSON; it may have been done.")
            except Exception as exc:
                error = single_attempt_error(exc, endpoint, self._map_exception)
                self._log_request(endpoint, started, error, single_attempt=True)
                log.error(
                    "single-attempt request failed",
                    extra={"endpoint": endpoint, "category": error.code, "gmail_api_status": error.status},
                )
                raise error from exc
            finally:
                close = getattr(http, "close", None)
                if callable(close):
                    close()
        self._log_request(endpoint, started, single_attempt=True)
        return response

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

    def _metadata_batch_once(
        self, message_ids: list[str], headers: Sequence[str], fields: str | None, *, retry_count: int
    ) -> dict[str, dict[str, Any] | GmailError]:
        """One batch request; a batch that fails as a whole gives its error to each of its parts."""
        self._quota.acquire(UNITS_GET * len(message_ids))  # each part of a batch costs its own units
        try:
            with self._sessions.checkout() as session:
                cost.record_request(UNITS_GET * len(message_ids), retry=retry_count > 0)
                outcome = self._metadata_batch_on(session, message_ids, headers, fields, retry_count=retry_count)
        except GmailError as error:
            return dict.fromkeys(message_ids, error)
        limited = sum(isinstance(result, RateLimitedError) for result in outcome.values())
        self.batch_size.record(sent=len(message_ids), rate_limited=limited)
        return outcome

    def _metadata_batch_on(
        self, session: Session, message_ids: list[str], headers: Sequence[str], fields: str | None, *, retry_count: int
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

    # -- error mapping: the one table is gmail/errors.py --------------------------------------------------------

    def _map_exception(self, exc: Exception, endpoint: str) -> GmailError:
        translated = translate(exc, endpoint=endpoint, now=self._clock(), timeout_s=self._settings.request_timeout_s)
        if translated.connection_broken:
            self._sessions.discard_current()
        return translated.error
