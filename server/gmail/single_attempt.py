"""Requests that must reach Gmail at most once (a send, a draft creation): one attempt, on a fresh connection.

httplib2 repeats requests on its own, below every retry policy of ours: `Http._conn_request` re-sends a request
(POST included) when a kept-alive connection closes without an answer (`BadStatusLine`/`RemoteDisconnected`, "the
connection just went stale, so retry regardless of the number of RETRIES set"), and again after some socket
errors while connecting (module constant `RETRIES`). For a read that is harmless; for a send it is a second
email. `SingleAttemptHttp` replaces that method with one that connects, sends, and reads the answer exactly
once, and says which side of the line a failure fell on:

- `RequestNotSent`: the connection could not be made; nothing reached Gmail (safe to try again later);
- `RequestMayHaveBeenSent`: the request was (being) written when the failure came (reset, closed without an
  answer, timeout): Gmail may have acted on it, so the outcome is unknown and nothing may repeat it.

Each such request uses a new `SingleAttemptHttp` (a fresh connection: a stale kept-alive one would turn a
harmless reconnect into an unknown outcome), closed afterwards. If httplib2's internals ever change so the
override would no longer be used, `check_compatible` refuses to send rather than risk a silent re-send.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import httplib2

from server.errors import GmailError, TransientError, UnknownOutcomeError


class RequestNotSent(Exception):
    """The connection failed before any byte of the request was written."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(f"not sent: {type(cause).__name__}")
        self.cause = cause


class RequestMayHaveBeenSent(Exception):
    """The request was written (or being written) when the connection failed: its outcome is unknown."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(f"outcome unknown: {type(cause).__name__}")
        self.cause = cause


class SingleAttemptUnavailable(RuntimeError):
    pass


_EXPECTED_PARAMETERS = ["self", "conn", "request_uri", "method", "body", "headers"]


@functools.cache
def check_compatible() -> None:
    """Raises SingleAttemptUnavailable when httplib2 no longer routes requests through `_conn_request`."""

    method = getattr(httplib2.Http, "_conn_request", None)
    request = getattr(httplib2.Http, "_request", None)
    if method is None or request is None:
        raise SingleAttemptUnavailable("httplib2.Http has no _conn_request/_request")
    if list(inspect.signature(method).parameters) != _EXPECTED_PARAMETERS:
        raise SingleAttemptUnavailable("httplib2.Http._conn_request changed its signature")
    try:
        source = inspect.getsource(request)
    except (OSError, TypeError):
        return  # no source (a frozen install): the signature check above is what we can do
    if "self._conn_request(" not in source:
        raise SingleAttemptUnavailable("httplib2.Http._request no longer calls _conn_request")


@functools.cache
def _single_attempt_class() -> type:

    class SingleAttemptHttp(httplib2.Http):  # type: ignore[misc]  # httplib2 has no types: its base is Any
        """An httplib2.Http that makes exactly one attempt per request and never follows redirects."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.follow_redirects = False
            self.attempts = 0  # requests written on this object (tests assert it stays at one)

        def _conn_request(self, conn: Any, request_uri: str, method: str, body: Any, headers: Any) -> Any:
            try:
                if conn.sock is None:
                    conn.connect()
            except Exception as exc:
                conn.close()
                raise RequestNotSent(exc) from exc
            self.attempts += 1
            try:
                conn.request(method, request_uri, body, headers)
                raw_response = conn.getresponse()
                content = raw_response.read()
            except Exception as exc:
                conn.close()
                raise RequestMayHaveBeenSent(exc) from exc
            response = httplib2.Response(raw_response)
            if method != "HEAD":
                content = _decompress(response, content, getattr(self, "limit_kwargs", {}))
            return response, content

    return SingleAttemptHttp


def _decompress(response: Any, content: bytes, limit_kwargs: Any) -> bytes:

    decompress: Callable[..., bytes] = httplib2._decompressContent
    if len(inspect.signature(decompress).parameters) >= 3:  # httplib2 >= 0.31 bounds decompressed sizes
        return decompress(response, content, limit_kwargs)
    return decompress(response, content)


def single_attempt_http(timeout_s: float) -> Any:
    """A fresh single-attempt Http (raises SingleAttemptUnavailable on an incompatible httplib2)."""
    check_compatible()
    return _single_attempt_class()(timeout=timeout_s)


def single_attempt_error(exc: Exception, endpoint: str, map_exception: Callable[[Exception, str], Any]) -> Any:
    """The GmailError of a failed single-attempt request, on the right side of "it may have happened".

    Before the request was written (no connection): the usual transient error, nothing happened. After it (cut
    off, timed out, a 5xx or 408 answer, any other network failure): UnknownOutcomeError, never repeated. A 4xx
    answer is Gmail refusing: mapped as usual (`map_exception` is the client's one translation table).
    """

    if isinstance(exc, GmailError):
        return exc
    if isinstance(exc, RequestNotSent):
        return TransientError(
            f"Could not connect to Gmail for {endpoint}; nothing was sent ({type(exc.cause).__name__}).",
            hint="Check the internet connection, then try again.",
        )
    if isinstance(exc, RequestMayHaveBeenSent):
        what = "timed out" if isinstance(exc.cause, TimeoutError) else "was cut off"
        return UnknownOutcomeError(
            f"The connection to Gmail {what} after {endpoint} was sent ({type(exc.cause).__name__}): it may or "
            "may not have been done, so it is not repeated."
        )
    error = map_exception(exc, endpoint)
    if error.status is not None and (error.status >= 500 or error.status == 408):
        return UnknownOutcomeError(
            f"Gmail answered {endpoint} with HTTP {error.status}: it may or may not have been done, so it is not "
            "repeated.",
            status=error.status,
        )
    if error.status is None and isinstance(error, TransientError):  # a network failure we could not place
        return UnknownOutcomeError(f"{endpoint} failed on the network after it may have been sent.")
    return error
