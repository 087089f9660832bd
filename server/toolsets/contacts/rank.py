"""Candidates for a name, merged across People API sources and ranked by the person's own sent mail. Pure.

A person found in several sources (a saved contact who is also an "other contact") is one candidate, keyed by
address. Ranking is frecency over the sent messages looked at: each message to a candidate counts
`0.5 ** (age / HALF_LIFE_DAYS)`, its age measured from the newest message looked at, so the order never depends
on today's date (shifting every date shifts every score by the same factor). Ties keep the sources' order
(saved contacts, then the directory, then other contacts) and then the name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from email.utils import getaddresses
from typing import Any

from server.content.compose.build import clean_header_text

HALF_LIFE_DAYS = 30.0
DAY_MS = 86_400_000
MAX_NAME_CHARS = 200
SOURCE_ORDER = ("contacts", "directory", "other_contacts")
# An address that can stand in a Gmail query as it is (no spaces, quotes or grouping characters).
_QUERYABLE = re.compile(r"^[^\s\"(){}<>,;:\\]+@[^\s\"(){}<>,;:\\]+$")


@dataclass
class Candidate:
    email: str
    name: str = ""
    sources: list[str] = field(default_factory=list)
    sent_count: int | None = None  # None: not ranked
    last_sent_ms: int | None = None
    score: float = 0.0


def merge(found: Mapping[str, Sequence[dict[str, Any]]]) -> list[Candidate]:
    """One candidate per address from each source's people (`{"names", "emailAddresses"}`), in source order."""
    by_address: dict[str, Candidate] = {}
    for source in SOURCE_ORDER:
        for person in found.get(source, ()):
            name = _display_name(person)
            for entry in person.get("emailAddresses") or []:
                address = clean_header_text(str((entry or {}).get("value") or ""))[:MAX_NAME_CHARS]
                if "@" not in address:
                    continue
                candidate = by_address.setdefault(address.lower(), Candidate(email=address))
                if source not in candidate.sources:
                    candidate.sources.append(source)
                if name and not candidate.name:
                    candidate.name = name
    return list(by_address.values())


def _display_name(person: dict[str, Any]) -> str:
    for entry in person.get("names") or []:
        name = clean_header_text(str((entry or {}).get("displayName") or ""))
        if name:
            return name[:MAX_NAME_CHARS]
    return ""


def sent_query(candidates: Iterable[Candidate]) -> str | None:
    """One Gmail search for the sent mail to any of the candidates; None when none can be searched for."""
    terms = [f"{op}:{c.email}" for c in candidates if _QUERYABLE.match(c.email) for op in ("to", "cc", "bcc")]
    return f"in:sent {{{' '.join(terms)}}}" if terms else None


def tally(candidates: Sequence[Candidate], sent: Iterable[dict[str, Any]]) -> None:
    """Counts, per candidate, the messages among `sent` (metadata with To/Cc/Bcc and internalDate) addressed to
    them, with the newest date, and scores them (see the module docstring)."""
    index = {candidate.email.lower(): candidate for candidate in candidates}
    dated: list[tuple[Candidate, int]] = []
    for candidate in candidates:
        candidate.sent_count = 0
    for message in sent:
        try:
            when = int(message.get("internalDate") or 0)
        except (TypeError, ValueError):
            when = 0
        headers = (message.get("payload") or {}).get("headers") or []
        values = [str(h.get("value") or "") for h in headers if str(h.get("name") or "").lower() in ("to", "cc", "bcc")]
        for address in {address.strip().lower() for _name, address in getaddresses(values)}:
            person = index.get(address)
            if person is None:
                continue
            person.sent_count = (person.sent_count or 0) + 1
            person.last_sent_ms = max(person.last_sent_ms or 0, when) or None
            dated.append((person, when))
    newest = max((when for _candidate, when in dated), default=0)
    for candidate, when in dated:
        candidate.score += 0.5 ** (max(0, newest - when) / DAY_MS / HALF_LIFE_DAYS)


def ranked(candidates: Sequence[Candidate]) -> list[Candidate]:
    def key(candidate: Candidate) -> tuple[float, int, str, str]:
        first = min((SOURCE_ORDER.index(s) for s in candidate.sources if s in SOURCE_ORDER), default=len(SOURCE_ORDER))
        return (-candidate.score, first, candidate.name.casefold() or "~", candidate.email.lower())

    return sorted(candidates, key=key)
