"""Gmail's OAuth scopes: their short names (for `auth_cli.py --scopes`) and which granted scopes cover a need.

A tool declares the scopes it can work with (any one suffices); the server lists it only when the token holds
one of them. Broader scopes cover narrower ones: `gmail.modify` reads and searches, so a person who granted it
does not also need `gmail.readonly`. `gmail.metadata` is left out on purpose: it cannot search nor read bodies.
"""

from __future__ import annotations

from collections.abc import Iterable

PREFIX = "https://www.googleapis.com/auth/"
READONLY = PREFIX + "gmail.readonly"
COMPOSE = PREFIX + "gmail.compose"
SEND = PREFIX + "gmail.send"
MODIFY = PREFIX + "gmail.modify"
LABELS = PREFIX + "gmail.labels"
FULL = "https://mail.google.com/"

BY_NAME = {"readonly": READONLY, "compose": COMPOSE, "send": SEND, "modify": MODIFY, "labels": LABELS}
# Write groups `auth_cli.py --scopes` also takes by their own name: the scope each asks for.
GROUP_SCOPES = {"cleanup": MODIFY, "unsubscribe": MODIFY}

# What each need is satisfied by: any one of the scopes in the set.
READ = frozenset({READONLY, MODIFY, FULL})
DRAFTS = frozenset({COMPOSE, MODIFY, FULL})
SENDING = frozenset({SEND, COMPOSE, MODIFY, FULL})
LABELING = frozenset({MODIFY, FULL})

DEFAULT_GRANT = frozenset({READONLY})


def parse_granted(value: object) -> frozenset[str] | None:
    """The scopes a token file records (a list or a space-separated string); None when it records none."""
    if isinstance(value, str):
        value = value.split()
    if not isinstance(value, list) or not value:
        return None
    return frozenset(str(scope) for scope in value)


def covers(granted: Iterable[str], needed_any_of: frozenset[str]) -> bool:
    return not needed_any_of.isdisjoint(granted)
