"""The project's error tree: every failure a tool can report, each with a category, a message and a hint.

    GmailError                 (code: the category the assistant sees)
    ├── AuthError              auth_error         token missing, unreadable, revoked, expired; 401
    │   └── ReauthRequiredError                   invalid_rapt: the organisation wants a fresh sign-in
    ├── PermissionDeniedError  permission_denied  403 insufficientPermissions, domain policy
    │   └── AccountRefusedError                   400 failedPrecondition that outlasts its one retry
    ├── NotFoundError          not_found          404, or 400 "Invalid id value"
    ├── RateLimitedError       rate_limited       429, 403 rate-limit reasons (after retries)
    ├── QuotaExceededError     quota_exceeded     403 dailyLimitExceeded: retrying today is pointless
    ├── TransientError         transient          5xx, timeouts, connection errors (after retries)
    ├── InvalidInputError      invalid_input      bad tool arguments, or a query Gmail rejects
    ├── UnknownOutcomeError    unknown_outcome    a send or draft creation that may or may not have happened
    ├── ConfirmationError      confirmation_invalid  a confirmation code that is wrong, used, expired or stale
    ├── SendLimitError         send_limit_reached the configured hourly send limit is used up
    └── InternalError          internal_error     a bug in this server: logged with a traceback

Google's exceptions are translated into this tree in exactly one place (`gmail/errors.py`); nothing
above the client imports googleapiclient. The MCP dispatcher turns any GmailError into an `isError` tool result.
"""

from __future__ import annotations

from typing import Any, ClassVar

from server.hints import rerun_auth, run_auth


class GmailError(Exception):
    """Base of all errors a tool call can end with."""

    code: ClassVar[str] = "error"
    default_hint: ClassVar[str] = "Try again; if it keeps failing, check the server's stderr log."
    retryable: ClassVar[bool] = False

    def __init__(
        self,
        message: str,
        *,
        hint: str | None = None,
        status: int | None = None,
        reason: str | None = None,
        retry_after_s: float | None = None,
        retry_count: int = 0,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint or self.default_hint
        self.status = status
        self.reason = reason
        self.retry_after_s = retry_after_s
        self.retry_count = retry_count

    def to_dict(self) -> dict[str, Any]:
        """The structured form sent to the assistant (never contains secrets: messages are ours)."""
        data: dict[str, Any] = {
            "category": self.code,
            "message": self.message,
            "hint": self.hint,
            "retryable": self.retryable,
            "retry_count": self.retry_count,
        }
        if self.status is not None:
            data["http_status"] = self.status
        return data


class AuthError(GmailError):
    code = "auth_error"
    default_hint = run_auth()


class ReauthRequiredError(AuthError):
    """Google wants the person to sign in again (`invalid_grant` with `invalid_rapt`/`rapt_required`): a Workspace
    organisation's session-length policy, often daily. The grant itself is fine, so the Testing-mode note does not
    apply."""


class PermissionDeniedError(GmailError):
    code = "permission_denied"
    default_hint = "The token lacks the scope this needs, or the account's policy forbids API access. " + rerun_auth(
        "grant the access Google asks for"
    )


class AccountRefusedError(PermissionDeniedError):
    """Gmail's 400 failedPrecondition: now and then for a moment (so it is retried once), and for good when Gmail
    is off for the account or a domain policy blocks API access."""

    default_hint = (
        "Open Gmail in a browser as this account: if it works there, retry in a minute (Gmail sometimes refuses for a "
        "moment); if it does not, the account's Google Workspace admin must turn Gmail (and API access) on for it."
    )


class NotFoundError(GmailError):
    code = "not_found"
    default_hint = "Check the message_id (take it from gmail_search_messages)."


class RateLimitedError(GmailError):
    code = "rate_limited"
    default_hint = "Gmail is rate limiting this account: wait a minute, then retry with fewer results."
    retryable = True


class QuotaExceededError(GmailError):
    code = "quota_exceeded"
    default_hint = "The Google Cloud project's daily Gmail quota is used up; it resets at midnight Pacific time."


class TransientError(GmailError):
    code = "transient"
    default_hint = "Gmail or the network failed temporarily: retry in a few seconds."
    retryable = True


class InvalidInputError(GmailError):
    code = "invalid_input"
    default_hint = "Fix the arguments as described and call the tool again."


class UnknownOutcomeError(GmailError):
    """A request that is never repeated (a send, a draft creation) failed after it may have reached Gmail."""

    code = "unknown_outcome"
    default_hint = (
        "Gmail may or may not have done it. Do not repeat it blindly: look in Gmail's Sent folder (for a send) or "
        "Drafts (for a draft), e.g. with gmail_search_messages query 'in:sent newer_than:1d' or gmail_list_drafts, "
        "then decide with the person."
    )


class ConfirmationError(GmailError):
    code = "confirmation_invalid"
    default_hint = (
        "Nothing was sent. Call gmail_send_draft again without confirmation_code to get a fresh summary and code, "
        "show the summary to the person and ask them."
    )


class SendLimitError(GmailError):
    code = "send_limit_reached"
    default_hint = (
        "Nothing was sent. The hourly send limit (GMAIL_MCP_SEND_LIMIT_PER_HOUR) protects the mailbox: wait, or ask "
        "the person to raise it."
    )


class InternalError(GmailError):
    code = "internal_error"
    default_hint = "This is a bug in the Gmail MCP server; the details are in its stderr log. Retrying may help."
