"""Endpoints about the account rather than its mail, as methods of `gmail_client.GmailClient` (mixed in).

- The People API searches the contacts tool resolves a name with (`people v1`, its discovery document shipped
  with google-api-python-client like Gmail's, on the same connection pool; see `Session.people`):
  `otherContacts.search` (the addresses Gmail remembers from correspondence), `people.searchContacts` (saved
  contacts) and `people.searchDirectoryPeople` (the Workspace directory). Google's reference for the first two
  (the method descriptions in people.v1.json, revision 20251117): "IMPORTANT: Before searching, clients should send
  a warmup request with an empty query to update the cache." So the first search of a source in this process is
  preceded by one warm-up request; every later search of it is one request. A source the token was not granted
  (403) is remembered and not asked again by this process.
- Gmail's `settings.filters` (list, get, create, delete). A create repeated after a lost answer meets Gmail's
  400 "Filter already exists" (elie222/inbox-zero treats that message as success): when a retry meets it, the
  identical filter the first attempt made is looked up and returned.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Literal

from server.errors import GmailError, NotFoundError, PermissionDeniedError

Source = Literal["contacts", "other_contacts", "directory"]
SOURCES: tuple[Source, ...] = ("contacts", "other_contacts", "directory")
READ_MASK = "names,emailAddresses"
SEARCH_PAGE_MAX = 30  # "Values greater than 30 will be capped to 30" (people.v1.json, both searches)
DIRECTORY_SOURCES = ["DIRECTORY_SOURCE_TYPE_DOMAIN_PROFILE", "DIRECTORY_SOURCE_TYPE_DOMAIN_CONTACT"]
WARMED_UP: frozenset[Source] = frozenset({"contacts", "other_contacts"})  # the searches Google says to warm up
UNITS_PEOPLE = 0  # the People API has its own quota, not Gmail's units
UNITS_FILTER_READ = 1
UNITS_FILTER_WRITE = 5
ALREADY_EXISTS = "filter already exists"


class _PeopleState:
    """What this process learnt about the account's People API sources: warmed up, or refused (not granted)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.warmed: set[Source] = set()
        self.refused: set[Source] = set()


def _people(session: Any, source: Source, query: str, page_size: int) -> Any:
    if source == "other_contacts":
        return session.people.otherContacts().search(query=query, readMask=READ_MASK, pageSize=page_size)
    if source == "contacts":
        return session.people.people().searchContacts(query=query, readMask=READ_MASK, pageSize=page_size)
    return session.people.people().searchDirectoryPeople(
        query=query, readMask=READ_MASK, sources=DIRECTORY_SOURCES, pageSize=page_size
    )


class PeopleEndpoints:
    """Mixin: needs `_call(endpoint, make_request, units)` from GmailClient."""

    _call: Callable[..., dict[str, Any]]

    @property
    def _people_state(self) -> _PeopleState:
        state = self.__dict__.get("_people_state_")
        if not isinstance(state, _PeopleState):
            state = self.__dict__.setdefault("_people_state_", _PeopleState())  # first use (thread-safe: setdefault)
        assert isinstance(state, _PeopleState)
        return state

    def people_refused(self) -> frozenset[Source]:
        """The sources this process found the token not granted for (skipped without a request)."""
        with self._people_state.lock:
            return frozenset(self._people_state.refused)

    def search_people(self, source: Source, query: str, *, page_size: int = SEARCH_PAGE_MAX) -> list[dict[str, Any]]:
        """The people (`{"resourceName", "names", "emailAddresses"}`) of one source matching `query`.

        Raises PermissionDeniedError when the token lacks the source's scope (remembered: later calls raise it
        without a request).
        """
        state = self._people_state
        with state.lock:
            refused, warm = source in state.refused, source in state.warmed or source not in WARMED_UP
        if refused:
            raise PermissionDeniedError(f"The token was not granted access to {_NAMES[source]}.")
        size = max(1, min(page_size, SEARCH_PAGE_MAX if source != "directory" else 500))
        endpoint = _ENDPOINTS[source]
        try:
            if not warm:
                self._call(f"{endpoint}(warm-up)", lambda session: _people(session, source, "", size), UNITS_PEOPLE)
                with state.lock:
                    state.warmed.add(source)
            answer = self._call(endpoint, lambda session: _people(session, source, query, size), UNITS_PEOPLE)
        except PermissionDeniedError as error:
            with state.lock:
                state.refused.add(source)
            if error.reason == "accessNotConfigured" or "has not been used in project" in error.message:
                raise PermissionDeniedError(
                    "The People API is not enabled for this Google Cloud project, so contacts cannot be searched.",
                    hint="Enable the People API in the Google Cloud console (APIs & Services > Library > People "
                    "API) for the project of this server's OAuth client, wait a minute, then restart the server.",
                    status=error.status,
                    reason="accessNotConfigured",
                ) from error
            raise
        if source == "directory":
            return [person for person in answer.get("people") or [] if isinstance(person, dict)]
        results = answer.get("results") or []
        return [r["person"] for r in results if isinstance(r, dict) and isinstance(r.get("person"), dict)]


_ENDPOINTS: dict[Source, str] = {
    "contacts": "people.searchContacts",
    "other_contacts": "otherContacts.search",
    "directory": "people.searchDirectoryPeople",
}
_NAMES: dict[Source, str] = {
    "contacts": "saved contacts (contacts.readonly)",
    "other_contacts": "other contacts (contacts.other.readonly)",
    "directory": "the Workspace directory (directory.readonly)",
}


class FilterEndpoints:
    """Mixin: needs `_call(endpoint, make_request, units)` from GmailClient."""

    _call: Callable[..., dict[str, Any]]

    def list_filters(self) -> list[dict[str, Any]]:
        """settings.filters.list: every filter `{"id", "criteria", "action"}` (Gmail leaves `filter` out when none)."""
        answer = self._call(
            "settings.filters.list",
            lambda session: session.users.settings().filters().list(userId="me"),
            units=UNITS_FILTER_READ,
        )
        return [item for item in answer.get("filter") or [] if isinstance(item, dict)]

    def create_filter(self, criteria: dict[str, Any], action: dict[str, Any]) -> dict[str, Any]:
        """settings.filters.create: the new filter with its id. A retry that meets "Filter already exists"
        returns the identical filter (the first attempt made it); a first attempt that meets it raises."""
        body = {"criteria": criteria, "action": action}
        try:
            return self._call(
                "settings.filters.create",
                lambda session: session.users.settings().filters().create(userId="me", body=body),
                units=UNITS_FILTER_WRITE,
            )
        except GmailError as error:
            if ALREADY_EXISTS not in error.message.lower():
                raise
            same = [f for f in self.list_filters() if same_filter(f, criteria, action)]
            if error.retry_count and same:
                return same[0]
            error.hint = (
                f"An identical filter exists already (id {same[0]['id']}): nothing to create."
                if same
                else "An identical filter exists already: gmail_list_filters shows it."
            )
            raise

    def delete_filter(self, filter_id: str) -> None:
        """settings.filters.delete; a repeat that finds the filter gone (the first attempt worked) counts as done."""
        try:
            self._call(
                "settings.filters.delete",
                lambda session: session.users.settings().filters().delete(userId="me", id=filter_id),
                units=UNITS_FILTER_WRITE,
            )
        except NotFoundError as error:
            if not error.retry_count:
                raise


def same_filter(existing: dict[str, Any], criteria: dict[str, Any], action: dict[str, Any]) -> bool:
    """Whether a listed filter has exactly these criteria and action (label lists compared as sets)."""

    def canonical(value: Any) -> Any:
        if isinstance(value, dict):
            return {key: canonical(item) for key, item in value.items() if item not in (None, [], "", False)}
        if isinstance(value, list):
            return sorted(str(item) for item in value)
        return value

    same_criteria = canonical(existing.get("criteria") or {}) == canonical(criteria)
    return bool(same_criteria and canonical(existing.get("action") or {}) == canonical(action))
