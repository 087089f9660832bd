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
# Beyond mail: Gmail's basic settings (filters) and the People API's read scopes (contacts, "other contacts", the
# Workspace directory), each its own opt-in.
SETTINGS_BASIC = PREFIX + "gmail.settings.basic"
CONTACTS_READONLY = PREFIX + "contacts.readonly"
OTHER_CONTACTS_READONLY = PREFIX + "contacts.other.readonly"
DIRECTORY_READONLY = PREFIX + "directory.readonly"

BY_NAME = {
    "readonly": READONLY,
    "compose": COMPOSE,
    "send": SEND,
    "modify": MODIFY,
    "labels": LABELS,
    "settings": SETTINGS_BASIC,
    "contacts": CONTACTS_READONLY,
    "othercontacts": OTHER_CONTACTS_READONLY,
    "directory": DIRECTORY_READONLY,
}
# A `--scopes` name that asks for more than one scope: `contacts` is both People API read scopes the contacts tool
# searches with (saved contacts and "other contacts").
BUNDLES = {"contacts": (CONTACTS_READONLY, OTHER_CONTACTS_READONLY)}
# Write groups `auth_cli.py --scopes` also takes by their own name: the scope each asks for.
GROUP_SCOPES = {"cleanup": MODIFY, "unsubscribe": MODIFY}

# What each need is satisfied by: any one of the scopes in the set.
READ = frozenset({READONLY, MODIFY, FULL})
DRAFTS = frozenset({COMPOSE, MODIFY, FULL})
SENDING = frozenset({SEND, COMPOSE, MODIFY, FULL})
LABELING = frozenset({MODIFY, FULL})
FILTER_READ = frozenset({SETTINGS_BASIC, READONLY, MODIFY, FULL})  # settings.filters.list/get
FILTER_WRITE = frozenset({SETTINGS_BASIC})  # settings.filters.create/delete: only this scope allows them
CONTACTS = frozenset({CONTACTS_READONLY, OTHER_CONTACTS_READONLY, DIRECTORY_READONLY})

DEFAULT_GRANT = frozenset({READONLY})


def parse_granted(value: object) -> frozenset[str] | None:
    """The scopes a token file records (a list or a space-separated string); None when it records none."""
    if isinstance(value, str):
        value = value.split()
    if not isinstance(value, list) or not value:
        return None
    return frozenset(str(scope) for scope in value)


def expand(name: str) -> tuple[str, ...]:
    """The scope URLs a `--scopes` short name asks for (KeyError for an unknown name)."""
    if name in BUNDLES:
        return BUNDLES[name]
    return (GROUP_SCOPES[name],) if name in GROUP_SCOPES else (BY_NAME[name],)


def covers(granted: Iterable[str], needed_any_of: frozenset[str]) -> bool:
    return not needed_any_of.isdisjoint(granted)
