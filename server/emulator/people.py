"""The People API searches the contacts tool uses, answered from the mailbox's correspondents.

    GET /v1/otherContacts:search?query&readMask&pageSize        {results: [{person}]}   (other contacts)
    GET /v1/people:searchContacts?query&readMask&pageSize       {results: [{person}]}   (saved contacts)
    GET /v1/people:searchDirectoryPeople?query&readMask&sources {people: [person]}      (Workspace directory)

Shapes and rules from Google's reference (people.v1.json, revision 20251117, shipped with google-api-python-client):
`query` and `readMask` are required (readMask for other contacts: emailAddresses, metadata, names,
phoneNumbers); the query "is used to match prefix phrases of the fields on a person" ("foo name" matches "f",
"foo n", "nam", not "oo n"); pageSize defaults to 10 and is capped at 30 (directory: 1..500, default 100); an
answer with no match has no `results` (an empty object). "Before searching, clients should send a warmup request
with an empty query to update the cache": modelled strictly, each source's cache is cold (finds nobody) until a
request with an empty query warmed it, so a client that skips the warm-up is caught by tests.

Other contacts are the addresses of the mailbox's correspondence (senders of mail to the owner, recipients of
the owner's mail), named by the display name last seen; saved contacts are those added with `add_contact`; the
directory is the correspondents of the owner's own domain (none for a consumer address such as gmail.com).
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Sequence
from email.utils import getaddresses
from typing import Any

from .errors import ApiError, invalid_argument
from .mailbox_store import MailStore

Params = dict[str, Sequence[str]]
OTHER_MASK = frozenset({"emailAddresses", "metadata", "names", "phoneNumbers"})
CONSUMER_DOMAINS = frozenset({"gmail.com", "googlemail.com"})
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_PATHS = {
    "/v1/otherContacts:search": "other_contacts",
    "/v1/people:searchContacts": "contacts",
    "/v1/people:searchDirectoryPeople": "directory",
}


def _words(text: str) -> list[str]:
    return [word.casefold() for word in _WORD.findall(text)]


def prefix_phrase_match(query: str, field: str) -> bool:
    """Google's rule: the query's words match consecutive words of the field, the last one as a prefix."""
    wanted, words = _words(query), _words(field)
    if not wanted:
        return False
    for start in range(len(words) - len(wanted) + 1):
        window = words[start : start + len(wanted)]
        if window[:-1] == wanted[:-1] and window[-1].startswith(wanted[-1]):
            return True
    return False


def _matches(query: str, name: str, address: str) -> bool:
    folded = query.strip().casefold()
    return address.casefold().startswith(folded) or any(prefix_phrase_match(query, field) for field in (name, address))


class PeopleRoutes:
    """The three searches over one mailbox; `saved` holds the saved contacts as (name, address)."""

    def __init__(self, store: MailStore) -> None:
        self.store = store
        self.saved: list[tuple[str, str]] = []
        self._warm: set[str] = set()
        self._lock = threading.Lock()

    def handles(self, path: str) -> bool:
        return path in _PATHS

    def handle(self, method: str, path: str, params: Params, _body: bytes = b"", _content_type: str = "") -> Any:
        source = _PATHS.get(path)
        if source is None:
            raise ApiError(404, "notFound", f"Not found: {path}")
        if method.upper() != "GET":
            raise ApiError(405, "methodNotAllowed", f"{method} is not supported on {path}")
        query, mask = _last(params, "query"), _last(params, "readMask")
        if "query" not in params:
            raise invalid_argument("query is required.")
        if not mask:
            raise invalid_argument("readMask is required")
        fields = {part.strip() for part in mask.split(",") if part.strip()}
        if source == "other_contacts" and not fields <= OTHER_MASK:
            raise invalid_argument(f"Invalid readMask path: {sorted(fields - OTHER_MASK)[0]}")
        size = _page_size(_last(params, "pageSize"), source)
        if not query.strip():  # the warm-up: fills this source's cache, finds nobody
            with self._lock:
                self._warm.add(source)
            return {}
        with self._lock:  # Google asks for the warm-up before the two contact searches, not the directory's
            warm = source in self._warm or source == "directory"
        people = self._candidates(source) if warm else []
        found = [(name, address) for name, address in people if _matches(query, name, address)][:size]
        rendered = [_person(source, name, address, fields) for name, address in found]
        if source == "directory":
            return {"people": rendered, "totalSize": len(rendered)} if rendered else {}
        return {"results": [{"person": person} for person in rendered]} if rendered else {}

    def _candidates(self, source: str) -> list[tuple[str, str]]:
        if source == "contacts":
            return list(self.saved)
        people = correspondents(self.store)
        if source == "directory":
            domain = self.store.email_address.rpartition("@")[2].lower()
            if domain in CONSUMER_DOMAINS:
                return []
            return [(name, address) for name, address in people if address.rpartition("@")[2].lower() == domain]
        return people


def correspondents(store: MailStore) -> list[tuple[str, str]]:
    """(display name last seen, address) of everyone the owner exchanged mail with, oldest first seen first."""
    owner = store.email_address.lower()
    names: dict[str, str] = {}
    shown: dict[str, str] = {}
    for stored in sorted(store.messages, key=lambda message: message.internal_date):
        message = stored.message
        sent = "SENT" in stored.label_ids
        headers = ("To", "Cc", "Bcc") if sent else ("From",)
        values = [str(value) for header in headers for value in message.get_all(header, [])]
        for name, address in getaddresses(values):
            key = address.strip().lower()
            if not key or "@" not in key or key == owner:
                continue
            shown.setdefault(key, address.strip())
            if name.strip() or key not in names:
                names[key] = name.strip()
    return [(names[key], shown[key]) for key in names]


def _person(source: str, name: str, address: str, fields: set[str]) -> dict[str, Any]:
    digest = hashlib.sha256(f"{source}:{address.lower()}".encode()).hexdigest()[:16]
    kind = {"other_contacts": ("otherContacts", "OTHER_CONTACT"), "contacts": ("people", "CONTACT")}.get(
        source, ("people", "DOMAIN_PROFILE")
    )
    person: dict[str, Any] = {"resourceName": f"{kind[0]}/c{int(digest, 16) % 10**19}", "etag": "%E" + digest}
    metadata = {"primary": True, "source": {"type": kind[1], "id": digest}}
    if "names" in fields and name:
        given, _, family = name.partition(" ")
        entry = {"metadata": metadata, "displayName": name, "givenName": given, "unstructuredName": name}
        if family:
            entry.update(familyName=family, displayNameLastFirst=f"{family}, {given}")
        person["names"] = [entry]
    if "emailAddresses" in fields:
        person["emailAddresses"] = [{"metadata": metadata, "value": address}]
    return person


def _page_size(raw: str, source: str) -> int:
    try:
        size = int(raw) if raw else 0
    except ValueError:
        raise invalid_argument(f"Invalid value at 'page_size' (TYPE_INT32), \"{raw}\"") from None
    if source == "directory":
        if size < 0 or size > 500:
            raise invalid_argument("pageSize must be between 1 and 500, inclusive.")
        return size or 100
    return min(size or 10, 30)


def _last(params: Params, name: str) -> str:
    values = params.get(name)
    return values[-1] if values else ""
