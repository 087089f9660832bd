"""Gmail's `users.settings.filters`: list, get, create, delete, with the validation Gmail is known to apply.

    GET    settings/filters        {filter: [...]}, or {} when there are none
    GET    settings/filters/{id}   the filter
    POST   settings/filters        {criteria, action} -> the filter with its new id
    DELETE settings/filters/{id}   204

Evidence: Nango integration-templates tests/create-filter.test.json, list-filters.test.json, get-filter.test.json,
delete-filter.test.json (2026, Workspace): list answers under the key `filter`; create answers the filter with
an opaque id (`ANe1Bm...`); delete answers an empty 204; two filters with the same criteria and different
actions both exist. An identical filter (same criteria, same action) is refused with 400 "Filter already exists"
(the message elie222/inbox-zero's utils/gmail/filter.ts checks for; its reason code is not recorded: this answers
invalidArgument). An action naming a label that does not exist is 400 "Invalid label: <id>" (GAM-team/GAM #365).
Google's reference (gmail.v1.json): at most 1,000 filters; forwarding needs a verified forwarding address, which
this emulator never has (400). A filter without criteria or without action is refused (Gmail's UI and API need
both; the message here is this emulator's).
"""

from __future__ import annotations

import json
import re
import secrets
import threading
from collections.abc import Sequence
from typing import Any

from .errors import ApiError, invalid_argument, not_found
from .labels import SYSTEM_LABELS
from .mailbox_store import MailStore

Params = dict[str, Sequence[str]]
MAX_FILTERS = 1000
CRITERIA = {"from", "to", "subject", "query", "negatedQuery", "hasAttachment", "excludeChats", "size", "sizeComparison"}
ACTIONS = {"addLabelIds", "removeLabelIds", "forward"}
_ONE = re.compile(r"^settings/filters/([^/]+)$")


class FilterRoutes:
    """The filters of one mailbox, kept in creation order."""

    def __init__(self, store: MailStore) -> None:
        self.store = store
        self.filters: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    @staticmethod
    def handles(rest: str) -> bool:
        return rest == "settings/filters" or _ONE.match(rest) is not None

    def handle(self, method: str, rest: str, body: bytes) -> dict[str, Any] | None:
        method = method.upper()
        one = _ONE.match(rest)
        with self._lock:
            if one is None and method == "GET":
                return {"filter": list(self.filters.values())} if self.filters else {}
            if one is None and method == "POST":
                return self._create(body)
            if one is not None and method == "GET":
                return self._get(one.group(1))
            if one is not None and method == "DELETE":
                self._get(one.group(1))
                del self.filters[one.group(1)]
                return None
        raise ApiError(405, "methodNotAllowed", f"{method} is not supported on {rest}")

    def _get(self, filter_id: str) -> dict[str, Any]:
        found = self.filters.get(filter_id)
        if found is None:
            raise not_found()
        return found

    def _create(self, body: bytes) -> dict[str, Any]:
        try:
            payload = json.loads(body or b"{}")
        except ValueError:
            raise invalid_argument("Invalid JSON payload received.") from None
        if not isinstance(payload, dict):
            raise invalid_argument("Invalid JSON payload received.")
        criteria = _clean(payload.get("criteria"), CRITERIA, "criteria")
        action = _clean(payload.get("action"), ACTIONS, "action")
        if not criteria:
            raise invalid_argument("Filter criteria must not be empty.")
        if not action:
            raise invalid_argument("Filter action must not be empty.")
        if action.get("forward"):
            raise invalid_argument(f"Forwarding address not verified: {action['forward']}")
        for label_id in [*action.get("addLabelIds", []), *action.get("removeLabelIds", [])]:
            if label_id not in self.store.labels and label_id.upper() not in SYSTEM_LABELS:
                raise invalid_argument(f"Invalid label: {label_id}")
        for existing in self.filters.values():
            if _canonical(existing["criteria"]) == _canonical(criteria) and _canonical(
                existing["action"]
            ) == _canonical(action):
                raise invalid_argument("Filter already exists")
        if len(self.filters) >= MAX_FILTERS:
            raise invalid_argument(f"Too many filters: at most {MAX_FILTERS}")
        filter_id = "ANe1Bm" + secrets.token_urlsafe(25)[:34]
        created = {"id": filter_id, "criteria": criteria, "action": action}
        self.filters[filter_id] = created
        return created


def _clean(value: Any, known: set[str], name: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise invalid_argument(f"Invalid value for {name}")
    unknown = sorted(set(value) - known)
    if unknown:
        raise invalid_argument(f"Invalid JSON payload received. Unknown name \"{unknown[0]}\" at 'filter.{name}'")
    kept = {key: item for key, item in value.items() if item not in (None, "", [], False)}
    for key in ("addLabelIds", "removeLabelIds"):
        if key in kept and not (isinstance(kept[key], list) and all(isinstance(i, str) for i in kept[key])):
            raise invalid_argument(f"Invalid value for {key}")
    return kept


def _canonical(value: dict[str, Any]) -> dict[str, Any]:
    return {key: sorted(item) if isinstance(item, list) else item for key, item in value.items()}
