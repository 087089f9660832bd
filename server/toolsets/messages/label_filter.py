"""The search tool's `label_ids`: system ids, user label names, and user label ids, checked only when it pays.

Gmail's `label:` operator takes names, so a user label id (`Label_12`) is turned into its name through the
account's cached label list. Names are passed through unchecked: an unknown name simply matches nothing, so the
list is consulted only when a search with label names comes back empty, to answer with the closest names
instead of an empty result. The cached list is refreshed once when it does not know a name (the person may have
just created the label).
"""

from __future__ import annotations

from collections.abc import Sequence

from server.errors import GmailError, InvalidInputError
from server.gmail.account_cache import AccountCache
from server.gmail.label_match import USER_LABEL_ID, Label, find_label, is_system_label, unknown_label_hint


class LabelFilter:
    """Label lookups for one search call: at most one refresh of the cached list per call."""

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

    def search_terms(self, wanted: Sequence[str]) -> list[str]:
        """The names to put in `label:` terms: user label ids replaced by their names."""
        names = []
        for item in wanted:
            if USER_LABEL_ID.match(item) and not is_system_label(item):
                label = self.find(item)
                if label is None or not isinstance(label.get("name"), str):
                    raise InvalidInputError(
                        f"No label with id {item!r} exists in this mailbox.", hint=unknown_label_hint(item, [])
                    )
                names.append(label["name"])
            else:
                names.append(item)
        return names

    def check_names(self, wanted: Sequence[str]) -> None:
        """After an empty search: raises InvalidInputError naming close matches for a label that does not exist.

        A failure to read the label list is not the search's failure: the empty result then stands.
        """
        names = [item for item in wanted if not is_system_label(item) and not USER_LABEL_ID.match(item)]
        if not names:
            return
        try:
            unknown = [name for name in names if self.find(name) is None]
            labels = self._cache.labels() if unknown else []
        except GmailError:
            return
        if unknown:
            listed = ", ".join(repr(name) for name in unknown)
            raise InvalidInputError(
                f"No label named {listed} exists in this mailbox, so the search matched nothing.",
                hint=unknown_label_hint(unknown[0], labels),
            )
