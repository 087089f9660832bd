"""Gmail search-query composition from tool arguments: tiny pure functions joined by `compose_query`.

The user's query is passed through untouched (it is theirs; Gmail parses it). Only the structured filters are
turned into operators here, and label names are normalised the way Gmail's `label:` operator expects them.
"""

from __future__ import annotations

from collections.abc import Sequence


def newer_than(days: int) -> str:
    """`newer_than(7)` -> `newer_than:7d`."""
    return f"newer_than:{days}d"


def label(name: str) -> str:
    """`label("INBOX")` -> `label:INBOX`; Gmail writes spaces in label names as dashes: `label:Project-Phoenix`."""
    return "label:" + "-".join(name.split())


def compose_query(query: str, *, newer_than_days: int | None = None, label_ids: Sequence[str] | None = None) -> str:
    """Joins the user's query and the optional filters with spaces (Gmail's implicit AND).

    >>> compose_query("from:test", newer_than_days=7)
    'from:test newer_than:7d'
    >>> compose_query("subject:meeting", label_ids=["INBOX", "STARRED"])
    'subject:meeting label:INBOX label:STARRED'
    """
    terms = [query.strip()] if query.strip() else []
    if newer_than_days is not None:
        terms.append(newer_than(newer_than_days))
    terms.extend(label(name) for name in label_ids or ())
    return " ".join(terms)
