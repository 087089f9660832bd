"""Which OAuth scopes each Gmail call needs, so a token limited to some scopes is refused the rest, as by Gmail.

Gmail answers a call outside the token's scopes with 403 `insufficientPermissions` ("Request had insufficient
authentication scopes."). The table follows Gmail's reference: reading needs readonly, modify or full access;
drafts need compose, modify or full; a plain send also accepts gmail.send; labels on messages need modify or
full; creating labels also gmail.labels; a permanent delete only full access; the profile any Gmail scope but
gmail.settings.basic; reading settings (`settings.sendAs.list/get`) readonly, modify, full or gmail.settings.basic.
"""

from __future__ import annotations

import re

PREFIX = "https://www.googleapis.com/auth/"
READONLY = PREFIX + "gmail.readonly"
COMPOSE = PREFIX + "gmail.compose"
SEND = PREFIX + "gmail.send"
MODIFY = PREFIX + "gmail.modify"
LABELS = PREFIX + "gmail.labels"
INSERT = PREFIX + "gmail.insert"
METADATA = PREFIX + "gmail.metadata"
FULL = "https://mail.google.com/"
SETTINGS_BASIC = PREFIX + "gmail.settings.basic"
CONTACTS_READONLY = PREFIX + "contacts.readonly"
OTHER_CONTACTS = PREFIX + "contacts.other.readonly"
DIRECTORY = PREFIX + "directory.readonly"
BY_NAME = {
    "readonly": READONLY,
    "compose": COMPOSE,
    "send": SEND,
    "modify": MODIFY,
    "labels": LABELS,
    "insert": INSERT,
    "metadata": METADATA,
    "full": FULL,
    "settings": SETTINGS_BASIC,
    "contacts": CONTACTS_READONLY,
    "othercontacts": OTHER_CONTACTS,
    "directory": DIRECTORY,
}
# `--scopes contacts` asks for both People API read scopes the contacts tool uses (as `auth_cli.py --scopes` does).
BUNDLES = {"contacts": (CONTACTS_READONLY, OTHER_CONTACTS)}
# The People API (served at /v1/...; scopes from people.v1.json's method entries): path -> scopes, any one.
PEOPLE: dict[str, frozenset[str]] = {
    "/v1/otherContacts:search": frozenset({OTHER_CONTACTS}),
    "/v1/people:searchContacts": frozenset({CONTACTS_READONLY, PREFIX + "contacts"}),
    "/v1/people:searchDirectoryPeople": frozenset({DIRECTORY}),
}

_READ = frozenset({READONLY, MODIFY, FULL})
_DRAFTS = frozenset({COMPOSE, MODIFY, FULL})
_ANY = frozenset(BY_NAME.values()) - {SETTINGS_BASIC}  # getProfile does not list gmail.settings.basic
# (method, pattern below users/{userId}/, scopes any one of which allows the call); first match wins.
_TABLE: list[tuple[str, re.Pattern[str], frozenset[str]]] = [
    (method, re.compile(pattern), needed)
    for method, pattern, needed in [
        ("GET", r"^profile$", _ANY),
        ("GET", r"^(labels|labels/[^/]+)$", _READ | {LABELS, METADATA}),
        ("GET", r"^(history|messages|messages/[^/]+|threads/[^/]+)$", _READ | {METADATA}),
        # settings.filters: list/get with read access or gmail.settings.basic; create/delete only the latter
        ("GET", r"^settings/filters", _READ | {SETTINGS_BASIC}),
        ("POST", r"^settings/filters$", frozenset({SETTINGS_BASIC})),
        ("DELETE", r"^settings/filters/[^/]+$", frozenset({SETTINGS_BASIC})),
        ("GET", r"^settings/", _READ | {SETTINGS_BASIC}),
        ("GET", r"^drafts", _DRAFTS | {READONLY}),
        ("GET", r".*", _READ),
        ("POST", r"^messages/send$", _DRAFTS | {SEND}),
        ("POST", r"^drafts/send$", _DRAFTS),
        ("POST", r"^drafts$", _DRAFTS),
        ("PUT", r"^drafts/[^/]+$", _DRAFTS),
        ("DELETE", r"^drafts/[^/]+$", _DRAFTS),
        ("POST", r"^messages(/import)?$", frozenset({INSERT, MODIFY, FULL})),
        ("POST", r"^labels$", frozenset({LABELS, MODIFY, FULL})),
        ("DELETE", r"^labels/[^/]+$", frozenset({LABELS, MODIFY, FULL})),
        ("DELETE", r"^messages/[^/]+$", frozenset({FULL})),
        ("POST", r"^messages/", frozenset({MODIFY, FULL})),
    ]
]


def parse_names(text: str, *, bundles: bool = True) -> frozenset[str]:
    """`readonly,compose` (short names or full scope URLs) -> scope URLs; ValueError for an unknown name.
    `bundles=False` reads `contacts` as contacts.readonly alone (a token's own record of its scopes)."""
    found = set()
    for name in (part.strip() for part in text.replace(" ", ",").split(",")):
        if not name:
            continue
        if name.startswith("https://"):
            found.add(name)
        elif bundles and name.lower() in BUNDLES:
            found.update(BUNDLES[name.lower()])
        elif name.lower() in BY_NAME:
            found.add(BY_NAME[name.lower()])
        else:
            raise ValueError(f"unknown scope {name!r}; known: {', '.join(BY_NAME)}")
    if not found:
        raise ValueError("no scopes given")
    return frozenset(found)


def required(method: str, rest: str) -> frozenset[str]:
    """The scopes (any one) a call needs; full access for anything not in the table."""
    for route_method, pattern, needed in _TABLE:
        if route_method == method.upper() and pattern.match(rest):
            return needed
    return frozenset({FULL})


def people_allowed(path: str, granted: frozenset[str]) -> bool:
    """Whether a People API call is inside the token's scopes (True for any path that is not one)."""
    needed = PEOPLE.get(path)
    return needed is None or not granted.isdisjoint(needed)
