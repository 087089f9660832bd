"""Who a message claims to be from, against what its headers and text show: three checks on the sender.

- the display name names another address or domain (`"support@paypal.com" <x@evil.example>`);
- replies go to another domain (Reply-To), unless the message comes from a mailing list that routes replies
  to itself;
- the sender's domain imitates a domain the message itself names (its display name, link targets, text):
  digits for letters, look-alike letters from other scripts, punycode; or a domain spelled into a subdomain
  (`paypal.com.secure-login.example`); or a label that mixes scripts on its own.

Domains are compared by their registrable part, so `mail.paypal.com` and `paypal.com` are one sender. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from server.content.security.confusables import imitates, script_trick
from server.content.security.domains import (
    brand_label,
    email_domain,
    named_domains,
    registrable_domain,
    unicode_label,
)

_EMAIL_IN_TEXT = re.compile(r"[\w.+'-]{1,64}@[\w-]+(?:\.[\w-]+)+", re.I)
_WORD = re.compile(r"[^\W_][\w-]{3,40}")
_TOKEN = re.compile(r"[^\W_]+")
_LIST_ID = re.compile(r"<([^<>\s]+)>")


@dataclass(frozen=True)
class Finding:
    """One warning: a stable code for programs and a short sentence for people."""

    code: str
    detail: str


def display_name_mismatch(name: str | None, address: str, *, via_list: bool = False) -> Finding | None:
    """The display name names an address or domain whose owner is not the sender's."""
    own_domain = email_domain(address)
    if not name or own_domain is None:
        return None
    if via_list and " via " in name.lower():
        return None  # a list rewrote From: "'Ann' via py-demo <list@...>"
    hosts = named_domains(name, limit=10)
    if not hosts:  # most names: no domain at all
        return None
    own = registrable_domain(own_domain)
    for host in hosts:
        if registrable_domain(host) != own:
            shown = next((e for e in _EMAIL_IN_TEXT.findall(name) if e.lower().endswith(host)), host)
            return Finding("display_name_address_mismatch", f"name shows {shown[:100]}, address is {address[:100]}")
    return None


def reply_to_differs(
    address: str, reply_to: Sequence[str], *, list_id: str | None = None, list_post: str | None = None
) -> Finding | None:
    """Replies would go to a domain other than the sender's (a mailing list replying to itself excepted)."""
    own_domain = email_domain(address)
    if own_domain is None or not reply_to:  # no Reply-To: replies go to the sender
        return None
    own = registrable_domain(own_domain)
    list_domains = set()
    if list_id:
        match = _LIST_ID.search(list_id)
        if match:
            list_domains.add(registrable_domain(match.group(1)))
    post = (list_post or "").lower()
    for target in reply_to:
        domain = email_domain(target)
        if domain is None or registrable_domain(domain) == own:
            continue
        if registrable_domain(domain) in list_domains or (post and target.lower() in post):
            continue
        return Finding("reply_to_differs", f"replies go to {target[:100]}, not {own}")
    return None


def lookalike_domain(address: str, display_name: str | None, named_hosts: Iterable[str]) -> Finding | None:
    """The sender's domain imitates one the message names, or its letters are a script trick on their own."""
    host = email_domain(address)
    if host is None:
        return None
    own = registrable_domain(host)
    candidates: dict[str, None] = {}
    for named in named_hosts:
        registrable = registrable_domain(named)
        if registrable != own:
            candidates.setdefault(registrable, None)
    if candidates:
        finding = _imitated_domain(host, own, candidates)
        if finding is not None:
            return finding
    name = (display_name or "")[:200]
    return _kept_sender_trick(host, name) if len(host) <= 253 else _sender_trick(host, name)


def _imitated_domain(host: str, own: str, candidates: Iterable[str]) -> Finding | None:
    own_label = unicode_label(brand_label(own))
    for registrable in candidates:
        if imitates(own_label, unicode_label(brand_label(registrable))):
            shown = _shown(host)
            spelled = f" ({shown})" if shown != host else ""
            return Finding("lookalike_domain", f"{own}{spelled} looks like {registrable}")
    subdomain = host[: -len(own)].rstrip(".")
    for registrable in candidates:
        if subdomain and (subdomain == registrable or subdomain.endswith("." + registrable)):
            return Finding("lookalike_domain", f"{host} spells {registrable} before {own}")
    return None


def _sender_trick(host: str, name: str) -> Finding | None:
    """The sender's host letters are a script trick, or its brand label imitates a word of its own name."""
    for label in host.split("."):
        trick = script_trick(unicode_label(label))
        if trick:
            return Finding("lookalike_domain", f"{host} ({_shown(host)}) {trick}")
    own = registrable_domain(host)
    own_label = unicode_label(brand_label(own))
    words = [(word, word) for word in _WORD.findall(name)[:20]]
    tokens = _TOKEN.findall(name)
    if len(tokens) > 1:
        words.append(("".join(tokens), " ".join(name.split())))  # "Harbor Bank" reads as "harborbank"
    for word, shown_name in words:
        if imitates(own_label, word):
            return Finding("lookalike_domain", f"{own} looks like the name {shown_name!r}")
    return None


# A function of the sender alone (its host and display name), which recurs across a mailbox: its findings are
# kept (Finding is immutable), for hosts of a possible length only, so mail cannot fill the cache.
_kept_sender_trick = lru_cache(maxsize=2048)(_sender_trick)


def _shown(host: str) -> str:
    """The host as a person reads it: punycode labels decoded."""
    return ".".join(unicode_label(label) for label in host.split("."))
