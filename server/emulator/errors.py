"""Gmail-shaped error answers.

Clients branch on the JSON body Google sends (`error.errors[0].reason`, `error.status`), not only on the HTTP
status, so every failure the emulator produces, whether real (unknown id) or injected (a fault), goes through
`ApiError` and comes out in the same shape:

    {"error": {"code": 404, "message": "...", "status": "NOT_FOUND",
               "errors": [{"message": "...", "domain": "global", "reason": "notFound"}]}}
"""

from __future__ import annotations

import json

# Canonical google.rpc status names per HTTP status, as Google's front end writes them.
_STATUS_NAMES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    405: "METHOD_NOT_ALLOWED",
    409: "ABORTED",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    501: "NOT_IMPLEMENTED",
    502: "UNAVAILABLE",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}

# Reasons whose google.rpc status is not the one of their HTTP status (google-api-php-client #2558 records
# 400 failedPrecondition as FAILED_PRECONDITION).
_STATUS_BY_REASON = {"failedPrecondition": "FAILED_PRECONDITION"}
# Messages Google writes for a reason, when a fault names only the reason.
_REASON_MESSAGES = {"failedPrecondition": "Precondition check failed."}

# (reason, message) used when a fault names only a status.
_DEFAULTS = {
    400: ("badRequest", "Bad Request"),
    401: ("authError", "Invalid Credentials"),
    403: ("userRateLimitExceeded", "User Rate Limit Exceeded"),
    404: ("notFound", "Requested entity was not found."),
    429: ("rateLimitExceeded", "Resource has been exhausted (e.g. check quota)."),
    500: ("backendError", "Backend Error"),
    502: ("backendError", "Bad Gateway"),
    503: ("backendError", "The service is currently unavailable."),
    504: ("backendError", "Deadline exceeded"),
}

_USAGE_REASONS = {"userRateLimitExceeded", "rateLimitExceeded", "dailyLimitExceeded", "quotaExceeded"}

AUTH_MESSAGE = (
    "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other "
    "valid authentication credential."
)


class ApiError(Exception):
    """An answer other than 200, raised anywhere below the HTTP layer and rendered once by it."""

    def __init__(self, code: int, reason: str = "", message: str = "", headers: dict[str, str] | None = None) -> None:
        default_reason, default_message = _DEFAULTS.get(code, ("unknown", "Error"))
        self.code = code
        self.reason = reason or default_reason
        self.message = message or _REASON_MESSAGES.get(self.reason, default_message)
        self.headers = dict(headers or {})
        super().__init__(f"{code} {self.reason}: {self.message}")

    def body(self) -> dict[str, object]:
        domain = "usageLimits" if self.reason in _USAGE_REASONS else "global"
        detail: dict[str, str] = {"message": self.message, "domain": domain, "reason": self.reason}
        top_message = self.message
        if self.code == 401:
            detail.update(location="Authorization", locationType="header")
            top_message = AUTH_MESSAGE
        return {
            "error": {
                "code": self.code,
                "message": top_message,
                "errors": [detail],
                "status": _STATUS_BY_REASON.get(self.reason) or _STATUS_NAMES.get(self.code, "UNKNOWN"),
            }
        }

    def body_bytes(self) -> bytes:
        return json.dumps(self.body(), ensure_ascii=False).encode("utf-8")


def not_found() -> ApiError:
    return ApiError(404, "notFound", "Requested entity was not found.")


def invalid_argument(message: str) -> ApiError:
    return ApiError(400, "invalidArgument", message)


def unauthenticated() -> ApiError:
    return ApiError(
        401,
        "authError",
        "Invalid Credentials",
        headers={"WWW-Authenticate": 'Bearer realm="https://accounts.google.com/", error="invalid_token"'},
    )
