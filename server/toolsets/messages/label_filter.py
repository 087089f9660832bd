"""The search tool's `label_ids` as messages.list's `labelIds`: system ids, user label ids, and user label names.

Gmail's `label:` operator cannot take every name (`label:Q&A-(2024)` is cut at its brackets and finds nothing),
so labels filter through `labelIds`, which takes ids and needs no escaping. System ids and user label ids go
as they are (Gmail answers an unknown id with 400 `Invalid label: X`, which becomes the closest names here); a
name is looked up in the account's cached label list, refreshed once when it does not know the name (the person
may have just created the label), and an unknown name gets the closest names before anything is searched.
"""

from __future__ import annotations

from collections.abc import Sequence

from server.errors import GmailError, InvalidInputError
from server.gmail.account_cache import AccountCache
from server.gmail.label_match import USER_LABEL_ID, Label, find_label, is_system_label, unknown_label_hint


class LabelFilter:
    """Label lookups for one tool call: at most one refresh of the cached list per call."""

    def __init__(self, cache: AccountCache) -> None:
        self._cache = cache
        self._refreshed = False

    def _labels(self) -> list[Label]:
        if self._cache.labels_age_s() is None:
            self._refreshed = True  # this call fetches it: asking again would fetch the same list
        return self._cache.labels()

    def find(self, wanted: str) -> Label | None:
        label = find_label(wanted, self._labels())
        if label is None and not self._refreshed:
            self._refreshed = True
            label = find_label(wanted, self._cache.labels(refresh=True))
        return label

    def label_ids(self, wanted: Sequence[str]) -> list[str]:
        """The ids for `labelIds`; raises InvalidInputError naming close matches for a name no label has."""
        ids: list[str] = []
        for item in wanted:
            if is_system_label(item):
                ids.append(item.strip().upper())
            elif USER_LABEL_ID.match(item):
                ids.append(item)
            elif (label := self.find(item)) is not None:
                ids.append(str(label["id"]))
            else:
                raise InvalidInputError(
                    f"No label named {item!r} exists in this mailbox.", hint=self.unknown_hint(item)
                )
        return list(dict.fromkeys(ids))

    def unknown_hint(self, wanted: str) -> str:
        """The closest label names to `wanted` (the kept list; a failure to read it leaves the names out)."""
        try:
            return unknown_label_hint(wanted, self._labels())
        except GmailError:
            return unknown_label_hint(wanted, [])

    def unknown_id(self, error: InvalidInputError, wanted: Sequence[str]) -> GmailError:
        """Gmail's 400 `Invalid label: X` for a `labelIds` entry, as the closest names; other errors unchanged."""
        unknown = next((item for item in wanted if f"Invalid label: {item}" in error.message), None)
        if unknown is None:
            return error
        try:
            labels = self._cache.labels(refresh=not self._refreshed)
        except GmailError:
            labels = []
        return InvalidInputError(
            f"No label with id {unknown!r} exists in this mailbox.", hint=unknown_label_hint(unknown, labels)
        )

    def names(self, label_ids: Sequence[str]) -> list[str]:
        """User label ids as their names, the rest as they are; reads the cached list only when there is a user
        label (one labels.list per cache period), and keeps the ids when the list cannot be read."""
        if not any(USER_LABEL_ID.match(label_id) for label_id in label_ids):
            return list(label_ids)
        try:
            found = [self.find(label_id) if USER_LABEL_ID.match(label_id) else None for label_id in label_ids]
        except GmailError:
            return list(label_ids)
        return [
            label["name"] if label is not None and isinstance(label.get("name"), str) else label_id
            for label_id, label in zip(label_ids, found, strict=True)
        ]

    def for_lint(self) -> list[Label] | None:
        """The label list to check a query's `label:` names against; None when it cannot be read."""
        try:
            return self._labels()
        except GmailError:
            return None
