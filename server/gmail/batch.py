"""`BatchHttpRequest` with two correctness fixes; the wire format, parsing and callbacks stay the library's.

- A refresh after a 401 part goes through `refresh_request`, the session's one-shot token request (one attempt,
  the client's timeout: `auth.single_attempt_request`), instead of the library's fresh timeout-less
  `httplib2.Http()` and google-auth's sleeping retries.
- A part missing from Gmail's answer becomes a 503 for that part (a transient error for that id) instead of the
  library's KeyError, which fails the whole batch.

Both override private methods of `BatchHttpRequest` (`_refresh_and_apply_credentials`, `_execute`: listed with
their reasons in `tests/test_dependency_patches.py`); `is_compatible()` checks they are still there, and where
they are not the library's own batch is used instead. Imported on first use only (it imports googleapiclient).
"""

from __future__ import annotations

import copy
import functools
import urllib.parse
from collections.abc import Callable, Sequence
from typing import Any

import httplib2
from googleapiclient.http import BatchHttpRequest

# The library internals the subclass relies on; `is_compatible()` checks them, so an upgrade that renames one
# falls back to the plain BatchHttpRequest instead of failing at run time.
_LIBRARY_HOOKS = ("_execute", "_refresh_and_apply_credentials")
_INSTANCE_STATE = ("_responses", "_refreshed_credentials")
MISSING_PART_BODY = b'{"error": {"code": 503, "message": "The batch answer had no part for this request."}}'


@functools.cache
def is_compatible() -> bool:
    """True when the installed googleapiclient still has the internals this module overrides."""
    if not all(callable(getattr(BatchHttpRequest, name, None)) for name in _LIBRARY_HOOKS):
        return False
    probe = BatchHttpRequest(batch_uri="http://127.0.0.1/batch")
    return all(hasattr(probe, name) for name in _INSTANCE_STATE)


def credentials_of(http: Any) -> Any:
    """The google-auth credentials an `AuthorizedHttp` carries (None for a plain `httplib2.Http`, whose
    `credentials` are httplib2's own password store)."""
    credentials = getattr(http, "credentials", None)
    return credentials if callable(getattr(credentials, "refresh", None)) else None


class GuardedBatch(BatchHttpRequest):  # type: ignore[misc]  # googleapiclient has no types: its base is Any
    """`BatchHttpRequest`, with the refresh of a 401 part through `refresh_request` and missing parts as 503s."""

    def __init__(self, *args: Any, refresh_request: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._refresh_request = refresh_request

    def _refresh_and_apply_credentials(self, request: Any, http: Any) -> None:
        # The library's logic, with our refresh transport: each credentials object refreshes once per batch.
        credentials = credentials_of(request.http) or credentials_of(http)
        if credentials is not None and id(credentials) not in self._refreshed_credentials:
            credentials.refresh(self._refresh_request)
            self._refreshed_credentials[id(credentials)] = 1
        if request.http is None and credentials is not None:  # else the part's own http applies them when sent
            credentials.apply(request.headers)

    def _execute(self, http: Any, order: list[str], requests: dict[str, Any]) -> None:
        super()._execute(http, order, requests)
        for request_id in order:  # the library would raise KeyError for the whole batch
            self._responses.setdefault(request_id, (httplib2.Response({"status": "503"}), MISSING_PART_BODY))


TEMPLATE_ID = "gmailmcpidplaceholder"


def requests_per_id(build: Callable[[str], Any], ids: Sequence[str], *, template: Any = None) -> list[Any]:
    """`build(id)` for every id, with the discovery machinery run once instead of once per id.

    googleapiclient's method call validates parameters, expands the URI template and encodes the query: ~0.15 ms
    per call, which ten batch parts per search turned into the largest CPU cost of a search. The parts differ
    only in the id in their path, so one request is built for a placeholder id (`template`: `build(TEMPLATE_ID)`,
    given when the caller kept one) and copied with the id put in; the template itself is never sent. Anything
    unexpected (the placeholder not exactly once in the URI) falls back to building each request.
    """
    template = template if template is not None else build(TEMPLATE_ID)
    if template.uri.count(TEMPLATE_ID) != 1 or TEMPLATE_ID in str(template.body or ""):
        return [build(message_id) for message_id in ids]
    requests = []
    for message_id in ids:
        request = copy.copy(template)
        request.uri = template.uri.replace(TEMPLATE_ID, urllib.parse.quote(message_id, safe=""))
        request.headers = dict(template.headers)
        request.response_callbacks = list(template.response_callbacks)
        requests.append(request)
    return requests
