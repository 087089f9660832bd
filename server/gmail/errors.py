"""The one translation table from Google's exceptions to the project's error tree (`server/errors.py`).

`translate(exc, ...)` takes whatever the Google stack raised (an `HttpError` with Gmail's JSON body, a google-auth
`RefreshError`/`TransportError`, a socket timeout, an httplib2 or http.client failure) and returns the GmailError
the assistant sees, saying whether the connection is now suspect. The HTTP part is a pure function of a status,
a JSON body and headers. Used by `gmail_client.py` and `auth.py`, the two modules that see Google's exceptions;
every branch ends in a category the assistant can act on, with a hint from `server/hints.py`.
"""

from __future__ import annotations

import email.utils
import http.client
import json
import math
import re
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

import httplib2
from google.auth import exceptions as google_auth_exceptions
from google.auth import exceptions as google_exceptions
from googleapiclient.errors import BatchError, HttpError

from server.errors import (
    AccountRefusedError,
    AuthError,
    GmailError,
    InvalidInputError,
    NotFoundError,
    PermissionDeniedError,
    QuotaExceededError,
    RateLimitedError,
    ReauthRequiredError,
    TransientError,
)
from server.hints import NEW_CLIENT_FILE, quoted_auth_command, rerun_auth, run_auth

if TYPE_CHECKING:
    from googleapiclient.errors import HttpError

RATE_LIMIT_REASONS = frozenset({"rateLimitExceeded", "userRateLimitExceeded"})
QUOTA_REASONS = frozenset({"dailyLimitExceeded", "quotaExceeded"})
_RETRY_AFTER_IN_MESSAGE = re.compile(r"Retry after (\S+)", re.IGNORECASE)


def not_json(endpoint: str) -> TransientError:
    return TransientError(
        f"Gmail's answer to {endpoint} was not JSON: something between this computer and Gmail (a proxy, a "
        "captive portal, a VPN login page) answered instead.",
        hint="Open a web page in a browser to check the network (log in to the Wi-Fi or VPN if asked), then retry.",
    )


def _error_payload(exc: HttpError) -> tuple[str, str | None]:
    """(message, first reason) from Gmail's JSON error body, tolerating anything else."""
    message, reason = (exc.reason or "").strip(), None
    try:
        body = json.loads(exc.content.decode("utf-8", "replace"))
        error = body.get("error") if isinstance(body, dict) else None
        if isinstance(error, dict):
            message = str(error.get("message") or message)
            details = error.get("errors")
            if isinstance(details, list) and details and isinstance(details[0], dict):
                reason = details[0].get("reason")
        elif isinstance(error, str):  # OAuth-style {"error": "invalid_grant"}
            reason = error
    except (ValueError, AttributeError):
        pass
    return message[:300], reason


_FRACTION = re.compile(r"(T\d\d:\d\d:\d\d)\.(\d+)")


def _six_digits(match: re.Match[str]) -> str:
    return f"{match.group(1)}.{match.group(2)[:6].ljust(6, '0')}"


def parse_retry_after(header: str | None, message: str, *, now: float) -> float | None:
    """Seconds to wait from a Retry-After header (seconds or HTTP date) or Gmail's "Retry after <RFC 3339>" text."""
    candidates: Iterable[str | None] = (header, *_RETRY_AFTER_IN_MESSAGE.findall(message))
    for value in candidates:
        if not value:
            continue
        value = value.strip()
        try:
            seconds = float(value)
        except ValueError:
            pass
        else:
            if math.isfinite(seconds):
                return max(0.0, seconds)
            continue
        try:
            # Python 3.10 reads only 3 or 6 fraction digits: Gmail may send any number of them.
            when = datetime.fromisoformat(_FRACTION.sub(_six_digits, value.replace("Z", "+00:00")))
        except ValueError:
            try:
                when = email.utils.parsedate_to_datetime(value)
            except (TypeError, ValueError):
                continue
        if when.tzinfo is None:
            when = when.replace(tzinfo=timezone.utc)
        return max(0.0, when.timestamp() - now)
    return None


def _scope_for(endpoint: str) -> str:
    """The short scope name (`auth_cli.py --scopes`) a write endpoint needs beside read access."""
    if endpoint.startswith("drafts"):
        return "compose"
    if endpoint.startswith(
        ("messages.modify", "messages.batchModify", "messages.trash", "messages.untrash", "labels.create")
    ):
        return "modify"
    if endpoint.startswith(("settings.filters.create", "settings.filters.delete")):
        return "settings"
    return ""


# What a 404 means depends on what was asked for: the endpoint's first word picks the explanation.
_NOT_FOUND: dict[str, tuple[str, str]] = {
    "threads": (
        "No thread with that id exists in this mailbox.",
        "Check the thread_id (take it from gmail_search_messages or gmail_get_message).",
    ),
    "attachments": (
        "That attachment no longer exists in the message.",
        "Call gmail_get_message on the message again and use a part_id from its attachment list.",
    ),
    "labels": ("No label with that id exists in this mailbox.", "gmail_list_labels lists every label's id and name."),
    "drafts": (
        "No draft with that id: it was sent, deleted, or the id is wrong.",
        "Take the draft_id from gmail_list_drafts (or the answer of gmail_create_draft).",
    ),
}


def _not_found(endpoint: str, **common: Any) -> NotFoundError:
    message, hint = _NOT_FOUND.get(endpoint.split(".", 1)[0], ("No message with that id exists in this mailbox.", ""))
    return NotFoundError(message, hint=hint or None, **common)


def map_http_error(exc: HttpError, *, now: float, endpoint: str = "messages.get") -> GmailError:
    """Maps a Gmail HTTP error (status, reason, message) into the project's error tree."""
    status = exc.status_code
    message, reason = _error_payload(exc)
    headers = exc.resp if hasattr(exc.resp, "get") else {}
    common = {"status": status, "reason": reason}
    if status == 429 or (status == 403 and reason in RATE_LIMIT_REASONS):
        retry_after = parse_retry_after(headers.get("retry-after"), message, now=now)
        hint = None
        if retry_after is not None and retry_after > 60:
            hint = f"Gmail asks this account to wait about {round(retry_after / 60)} minute(s) before trying again."
        return RateLimitedError(
            f"Gmail rate limit: {message or 'too many requests'}.", hint=hint, retry_after_s=retry_after, **common
        )
    if status == 401:
        return AuthError(
            "Gmail rejected the access token (401) and refreshing it did not help.",
            hint=rerun_auth(),
            **common,
        )
    if status == 403:
        if reason in QUOTA_REASONS:
            return QuotaExceededError(f"Gmail quota exhausted: {message}.", **common)
        if reason == "accessNotConfigured" or "has not been used in project" in message:
            return PermissionDeniedError(
                "The Gmail API is not enabled for this Google Cloud project.",
                hint="Enable the Gmail API in the Google Cloud console (APIs & Services > Library), wait a minute, "
                "then retry.",
                **common,
            )
        needed = _scope_for(endpoint)
        if needed:
            return PermissionDeniedError(
                f"Gmail refused {endpoint}: {message or 'insufficient permissions'} (the token was not granted "
                f"gmail.{needed}).",
                hint=rerun_auth(f"allow what Google asks for ({needed})", "--scopes", f"readonly,{needed}"),
                **common,
            )
        return PermissionDeniedError(
            f"Gmail refused access: {message or 'insufficient permissions'} (the token needs the "
            "https://www.googleapis.com/auth/gmail.readonly scope).",
            **common,
        )
    if status == 404 or (status == 400 and "invalid id" in message.lower()):
        return _not_found(endpoint, **common)
    if status == 408 or status >= 500:
        return TransientError(f"Gmail had a temporary problem (HTTP {status}): {message or 'backend error'}.", **common)
    if reason == "failedPrecondition" or "precondition check failed" in message.lower():
        # Intermittent for some accounts (1-2% of calls, google-api-php-client #2558) and permanent where Gmail is
        # off for the account: the retry policy tries once more; what reaches the person is about the account.
        return AccountRefusedError(
            f"Gmail refused {endpoint} for this account (HTTP 400 failedPrecondition: "
            f"{message or 'Precondition check failed.'}). Gmail answers this when Gmail is not enabled for the "
            "account or a domain policy blocks API access, and now and then for a moment without a reason.",
            **common,
        )
    return InvalidInputError(
        f"Gmail rejected the request (HTTP {status}): {message or 'bad request'}.",
        hint=_bad_request_hint(endpoint, message),
        **common,
    )


# Gmail never rejects a query it cannot read (it searches for the words instead), so a list endpoint's 400 names the
# argument it is about: only an answer that speaks of the query gets the query advice.
_LIST_ENDPOINTS = ("messages.list", "drafts.list", "threads.list")


def _bad_request_hint(endpoint: str, message: str) -> str:
    lowered = message.lower()
    if "page" in lowered and "token" in lowered:
        return "page_token must be the next_page_token of a previous call with the same query; drop it to start over."
    if "label" in lowered:
        return "Use a label name or id that gmail_list_labels shows for this account."
    if endpoint in _LIST_ENDPOINTS and ("query" in lowered or "search" in lowered):
        return "Check the search query syntax (see https://support.google.com/mail/answer/7190) and the arguments."
    return "Check the arguments named in the message, then call the tool again."


SEVEN_DAY_NOTE = (
    "Google rejected the refresh token (invalid_grant): it was revoked, or it expired. OAuth apps whose "
    "publishing status is 'Testing' get refresh tokens that expire after 7 days."
)


def describe_refresh_failure(exc: Exception) -> GmailError:
    """Translates a google-auth refresh failure into the project's error tree."""

    text = str(exc)
    if isinstance(exc, google_exceptions.RefreshError):
        if _reauth_required(exc):
            return ReauthRequiredError(
                "Google asks this account to sign in again: its organisation (Google Workspace) requires a fresh "
                "sign-in every so often, sometimes daily (invalid_grant: invalid_rapt). Nothing is wrong with the "
                "app or its set-up.",
                hint=run_auth("to sign in again"),
            )
        if "invalid_grant" in text:
            return AuthError(
                SEVEN_DAY_NOTE,
                hint=rerun_auth()
                + " To stop weekly expiry, set the OAuth consent screen's publishing status to 'In production' in "
                "the Google Cloud console.",
            )
        if "invalid_client" in text or "unauthorized_client" in text:
            return AuthError(
                "Google rejected the OAuth client in the token file (invalid_client): the client was deleted or "
                "its secret was reset.",
                hint=f"{NEW_CLIENT_FILE}, then re-run {quoted_auth_command()}.",
            )
        if getattr(exc, "retryable", False):
            return TransientError("Google's token endpoint failed temporarily while refreshing the access token.")
        # Only the library's own first line: later arguments may hold the token endpoint's raw answer.
        reason = exc.args[0] if exc.args and isinstance(exc.args[0], str) else "unknown error"
        return AuthError(f"Refreshing the access token failed: {first_line(reason)}")
    return TransientError(
        "Could not reach Google's token endpoint to refresh the access token (network problem).",
        hint="Check the internet connection (or proxy), then retry.",
    )


# google-auth raises "Reauthentication is needed. Please run `gcloud auth ...`" for invalid_grant/invalid_rapt when
# reauth refresh is off (as here); other paths keep the token endpoint's own words. Either way: sign in again with
# this product's command, never gcloud.
_REAUTH_MARKERS = ("invalid_rapt", "rapt_required", "reauthentication is needed")


def _reauth_required(exc: Exception) -> bool:
    details = [str(arg) for arg in exc.args]
    return any(marker in " ".join(details).lower() for marker in _REAUTH_MARKERS)


def first_line(text: str) -> str:
    return text.splitlines()[0][:200] if text else "unknown error"


@dataclass(frozen=True)
class Translated:
    error: GmailError
    connection_broken: bool  # a network failure: the connection it happened on must not be reused


def translate(exc: Exception, *, endpoint: str, now: float, timeout_s: float) -> Translated:
    """Any exception of the Google stack as a GmailError; an unexpected exception (a bug) is raised again."""

    if isinstance(exc, GmailError):
        return Translated(exc, False)
    if isinstance(exc, BatchError):  # subclass of HttpError whose resp may be None: an unreadable batch answer
        return Translated(TransientError(f"Gmail's batch answer could not be read ({endpoint})."), False)
    if isinstance(exc, HttpError):
        return Translated(map_http_error(exc, now=now, endpoint=endpoint), False)
    if isinstance(exc, UnicodeDecodeError):  # a batch answer that is not text: a proxy's page, not Gmail's
        return Translated(not_json(endpoint), False)
    if isinstance(exc, (google_auth_exceptions.RefreshError, google_auth_exceptions.TransportError)):
        return Translated(describe_refresh_failure(exc), False)
    if isinstance(exc, (socket.timeout, TimeoutError)):
        error = TransientError(
            f"Gmail did not answer within {timeout_s:g} s ({endpoint}).",
            hint="Gmail or the network is slow right now: retry in a few seconds.",
        )
        return Translated(error, True)
    if isinstance(exc, (ConnectionError, OSError, httplib2.HttpLib2Error, http.client.HTTPException)):
        error = TransientError(
            f"Could not reach Gmail ({type(exc).__name__}) for {endpoint}.",
            hint="Check the internet connection (or proxy/VPN), then retry.",
        )
        return Translated(error, True)
    raise exc  # a bug, not a Gmail failure: the dispatcher reports it as internal_error
