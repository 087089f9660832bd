"""Gmail search-query composition from tool arguments: tiny pure functions joined by `compose_query`.

The user's query is passed through untouched (it is theirs; Gmail parses it). Only the structured filters are
turned into operators here, and label names are normalised the way Gmail's `label:` operator expects them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_NEEDS_GROUPING = re.compile(r"\bOR\b|[{}()]")


def newer_than(days: int) -> str:
    """`newer_than(7)` -> `newer_than:7d`."""
    return f"newer_than:{days}d"


def label(name: str) -> str:
    """`label("INBOX")` -> `label:INBOX`; Gmail writes spaces and `& ( ) " | { } /` in label names as dashes:
    `label:Project-Phoenix`, `label:Q-A-2024`. (The search tool filters by labelIds instead, which needs none.)"""
    return "label:" + "-".join(part for part in re.split(r'[\s/&()"|{}-]+', name) if part)


def compose_query(query: str, *, newer_than_days: int | None = None, label_ids: Sequence[str] | None = None) -> str:
    """Joins the user's query and the optional filters with spaces (Gmail's implicit AND).

    >>> compose_query("from:test", newer_than_days=7)
    'from:test newer_than:7d'
    >>> compose_query("subject:meeting", label_ids=["INBOX", "STARRED"])
    'subject:meeting label:INBOX label:STARRED'
    """
    query = query.strip()
    filters = newer_than_days is not None or bool(label_ids)
    if filters and _NEEDS_GROUPING.search(query):
        # Gmail binds OR tighter than the implicit AND, so `a OR b newer_than:7d` already narrows both sides;
        # grouping a query with boolean structure keeps that true when it is malformed: a trailing OR would
        # otherwise swallow the filter (`a OR newer_than:7d` widens the search instead of narrowing it).
        query = f"({query})"
    terms = [query] if query else []
    if newer_than_days is not None:
        terms.append(newer_than(newer_than_days))
    terms.extend(label(name) for name in label_ids or ())
    return " ".join(terms)
