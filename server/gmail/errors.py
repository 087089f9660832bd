"""Gmail's HTTP errors mapped into the project's error tree: pure functions of a status, a JSON body and headers.

Used by `gmail_client.py`, the one module that sees Google's exceptions; kept apart so the mapping table reads
in one sitting. Every branch ends in a category the assistant can act on (see `errors.py`).
"""

from __future__ import annotations

import email.utils
import json
import re
from collections.abc import Iterable
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from server.errors import (
    AuthError,
    GmailError,
    InvalidInputError,
    NotFoundError,
    PermissionDeniedError,
    QuotaExceededError,
    RateLimitedError,
    TransientError,
)

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


def parse_retry_after(header: str | None, message: str, *, now: float) -> float | None:
    """Seconds to wait from a Retry-After header (seconds or HTTP date) or Gmail's "Retry after <RFC 3339>" text."""
    candidates: Iterable[str | None] = (header, *_RETRY_AFTER_IN_MESSAGE.findall(message))
    for value in candidates:
        if not value:
            continue
        value = value.strip()
        try:
            return max(0.0, float(value))
        except ValueError:
            pass
        try:
            when = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            try:
                when = email.utils.parsedate_to_datetime(value)
            except (TypeError, ValueError):
                continue
        if when.tzinfo is None:
            when = when.replace(tzinfo=timezone.utc)
        return max(0.0, when.timestamp() - now)
    return None


def map_http_error(exc: HttpError, *, now: float) -> GmailError:
    """Maps a Gmail HTTP error (status, reason, message) into the project's error tree."""
    status = exc.status_code
    message, reason = _error_payload(exc)
    headers = exc.resp if hasattr(exc.resp, "get") else {}
    common = {"status": status, "reason": reason}
    if status == 429 or (status == 403 and reason in RATE_LIMIT_REASONS):
        retry_after = parse_retry_after(headers.get("retry-after"), message, now=now)
        return RateLimitedError(
            f"Gmail rate limit: {message or 'too many requests'}.", retry_after_s=retry_after, **common
        )
    if status == 401:
        return AuthError(
            "Gmail rejected the access token (401) and refreshing it did not help.",
            hint="Re-run `python server/auth_cli.py` to authorize again.",
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
        return PermissionDeniedError(
            f"Gmail refused access: {message or 'insufficient permissions'} (the token needs the "
            "https://www.googleapis.com/auth/gmail.readonly scope).",
            **common,
        )
    if status == 404 or (status == 400 and "invalid id" in message.lower()):
        return NotFoundError("No message with that id exists in this mailbox.", **common)
    if status == 408 or status >= 500:
        return TransientError(f"Gmail had a temporary problem (HTTP {status}): {message or 'backend error'}.", **common)
    if "page" in message.lower() and "token" in message.lower():
        hint = "page_token must be the next_page_token of a previous call with the same query; drop it to start over."
    else:
        hint = "Check the search query syntax (see https://support.google.com/mail/answer/7190) and the arguments."
    return InvalidInputError(
        f"Gmail rejected the request (HTTP {status}): {message or 'bad request'}.", hint=hint, **common
    )
