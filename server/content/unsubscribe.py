"""How a message says it can be unsubscribed from, and whether RFC 8058 one-click may be used: pure parsing.

- `List-Unsubscribe` (RFC 2369): a comma-separated list of `<URI>`s, comments and whitespace between them
  (`<mailto:leave@list.example?subject=unsubscribe>, <https://list.example/u/abc>`).
- `List-Unsubscribe-Post` (RFC 8058, 3.1): exactly `List-Unsubscribe=One-Click` asks for a POST of that body.
- RFC 8058, 4: a one-click POST is allowed only when the message carries "at least one valid DKIM signature that
  covers at least the List-Unsubscribe and List-Unsubscribe-Post headers". The verdict is Gmail's own
  (`Authentication-Results: mx.google.com; dkim=pass header.i=@news.example header.s=s1 header.b=AbCdEfGh`, the
  topmost such header, as `security/authentication.py` trusts it); which headers a signature covers is its
  `DKIM-Signature` header's `h=` tag. A passed result is matched to its signature by domain (`d=` against
  `header.d`, or the domain of `header.i`), selector (`s=` against `header.s`, when given) and the first
  characters of the signature (`b=` against `header.b`, when given).

Nothing here fetches anything: the tool (`toolsets/unsubscribe/`) decides and posts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import parse_qs, unquote, urlsplit

from server.content.security.authentication import TRUSTED_AUTHSERV_ID, _authserv_id, _google_hop, _without_comments

ONE_CLICK_BODY = "List-Unsubscribe=One-Click"
COVERED = ("list-unsubscribe", "list-unsubscribe-post")
HEADERS = ("From", "Subject", "List-Unsubscribe", "List-Unsubscribe-Post", "Authentication-Results", "DKIM-Signature")
_MAX = 8_000
_URI = re.compile(r"<([^<>]{1,2000})>")
_BARE_URI = re.compile(r"^(?:https?|mailto):[^\s<>]{1,2000}$", re.I)
_PROPERTY = re.compile(r"\b(header\.[dibs])\s*=\s*([^\s;]+)")
_RESULT = re.compile(r"^\s*dkim\s*=\s*([a-z]+)")


@dataclass(frozen=True)
class DkimPass:
    """One `dkim=pass` result in Gmail's Authentication-Results: whose signature it was about."""

    domain: str  # header.d, else the domain of header.i
    selector: str | None = None  # header.s
    signature_start: str | None = None  # header.b: the first characters of the signature's b= value


@dataclass(frozen=True)
class Signature:
    """A DKIM-Signature header's tags that matter here."""

    domain: str  # d=
    selector: str  # s=
    covered: frozenset[str]  # h=, lower case
    signature: str  # b=, whitespace removed


@dataclass(frozen=True)
class UnsubscribeOptions:
    """What a message offers and whether one-click is allowed; `one_click_refusal` says why not, when not."""

    https: str | None = None  # the first https URI
    http: str | None = None  # the first plain http URI (one-click only with the tests' allowance)
    mailto: str | None = None  # the first mailto URI
    post_header: bool = False  # List-Unsubscribe-Post: List-Unsubscribe=One-Click
    dkim_covers: bool = False  # Gmail's dkim=pass for a signature whose h= covers both headers
    one_click_refusal: str | None = None


def header_values(headers: object, name: str) -> list[str]:
    """Every value of header `name` in a payload's ordered {"name", "value"} list, top first."""
    wanted = name.lower()
    return [
        str(item["value"])[:_MAX]
        for item in (headers if isinstance(headers, list) else ())
        if isinstance(item, dict) and str(item.get("name", "")).strip().lower() == wanted and "value" in item
    ]


def list_unsubscribe_uris(value: str) -> list[str]:
    """The URIs of a `List-Unsubscribe` value, in order (whitespace inside a URI, from folding, removed).

    Senders that leave out the angle brackets (`List-Unsubscribe: https://...`, seen from Intuit and Slack in
    Gmail's answers) are read too: then each comma-separated item that is an http(s) or mailto URI."""
    text = _without_comments(value[:_MAX])
    bracketed = ["".join(uri.split()) for uri in _URI.findall(text)]
    if bracketed:
        return bracketed
    return [item.strip() for item in text.split(",") if _BARE_URI.match(item.strip())]


def is_one_click_post(value: str | None) -> bool:
    return value is not None and value.strip() == ONE_CLICK_BODY


def parse_dkim_signature(value: str) -> Signature | None:
    """The d=, s=, h= and b= tags of a DKIM-Signature value (RFC 6376 3.5); None when d= or h= is missing."""
    tags: dict[str, str] = {}
    for part in value[:_MAX].split(";"):
        key, sep, tag_value = part.partition("=")
        if sep:
            tags[key.strip().lower()] = "".join(tag_value.split())
    domain, covered = tags.get("d", "").lower(), tags.get("h", "")
    if not domain or not covered:
        return None
    names = frozenset(name.strip().lower() for name in covered.split(":") if name.strip())
    return Signature(domain=domain, selector=tags.get("s", "").lower(), covered=names, signature=tags.get("b", ""))


def trusted_dkim_passes(headers: object) -> list[DkimPass]:
    """The `dkim=pass` results of the topmost Authentication-Results by mx.google.com (none when a non-Google
    relay sits above it: the same trust rule as `security/authentication.trusted_authentication`)."""
    relayed = False
    for item in headers if isinstance(headers, list) else ():
        if not isinstance(item, dict) or not isinstance(item.get("value"), str):
            continue
        name = str(item.get("name", "")).strip().lower()
        if name == "received" and not _google_hop(item["value"]):
            relayed = True
        elif name == "authentication-results" and _authserv_id(item["value"]) == TRUSTED_AUTHSERV_ID:
            return [] if relayed else _passes(item["value"])
    return []


def _passes(value: str) -> list[DkimPass]:
    text = _without_comments(value[:_MAX])
    found = []
    for resinfo in text.split(";")[1:]:
        match = _RESULT.match(resinfo.lower())
        if not match or match.group(1) != "pass":
            continue
        # Gmail quotes a value holding '/' or '+' (header.b="jMc/WWuW"): the quotes are not part of it.
        props = {key.lower(): prop.strip('"') for key, prop in _PROPERTY.findall(resinfo)}
        domain = (props.get("header.d") or props.get("header.i", "").rsplit("@", 1)[-1]).lower()
        if domain:
            selector = props.get("header.s")
            found.append(DkimPass(domain, selector.lower() if selector else None, props.get("header.b")))
    return found


def _matches(result: DkimPass, signature: Signature) -> bool:
    # header.i may name a subdomain of the signing domain (RFC 6376 3.5, i=): @mail.news.example for d=news.example
    if signature.domain != result.domain and not result.domain.endswith("." + signature.domain):
        return False
    if result.selector is not None and signature.selector != result.selector:
        return False
    return result.signature_start is None or signature.signature.startswith(result.signature_start)


def covering_signature_passed(headers: object) -> tuple[bool, str | None]:
    """Whether Gmail's DKIM verdict passed for a signature covering both unsubscribe headers; else why not."""
    passes = trusted_dkim_passes(headers)
    if not passes:
        return False, "Gmail's DKIM check did not pass for this message (no dkim=pass in its Authentication-Results)"
    signatures = [sig for value in header_values(headers, "DKIM-Signature") if (sig := parse_dkim_signature(value))]
    matched = [sig for sig in signatures if any(_matches(result, sig) for result in passes)]
    if not matched:
        return False, "no DKIM signature of the message matches the one Gmail found valid"
    if any(set(COVERED) <= sig.covered for sig in matched):
        return True, None
    return False, "the valid DKIM signature does not cover List-Unsubscribe and List-Unsubscribe-Post (RFC 8058, 4)"


def unsubscribe_options(headers: object) -> UnsubscribeOptions | None:
    """What a message's headers offer (None: no List-Unsubscribe at all)."""
    values = header_values(headers, "List-Unsubscribe")
    if not values:
        return None
    uris = list_unsubscribe_uris(values[0])
    by_scheme: dict[str, str] = {}
    for uri in uris:
        by_scheme.setdefault(urlsplit(uri).scheme.lower(), uri)
    posts = header_values(headers, "List-Unsubscribe-Post")
    post_header = bool(posts) and is_one_click_post(posts[0])
    covers, why = covering_signature_passed(headers)
    refusal = None
    if "https" not in by_scheme and "http" not in by_scheme:
        refusal = "the message names no web address to unsubscribe at"
    elif not post_header:
        refusal = "the message has no 'List-Unsubscribe-Post: List-Unsubscribe=One-Click' header (RFC 8058)"
    elif not covers:
        refusal = why
    return UnsubscribeOptions(
        https=by_scheme.get("https"),
        http=by_scheme.get("http"),
        mailto=by_scheme.get("mailto"),
        post_header=post_header,
        dkim_covers=covers,
        one_click_refusal=refusal,
    )


@dataclass(frozen=True)
class Mailto:
    to: str
    subject: str
    body: str


def parse_mailto(uri: str) -> Mailto | None:
    """A `mailto:` URI (RFC 6068) as recipient, subject and body; None when it names no single plain address."""
    parts = urlsplit(uri)
    if parts.scheme.lower() != "mailto":
        return None
    to = unquote(parts.path).strip()
    query = {key.lower(): values[0] for key, values in parse_qs(parts.query).items() if values}
    if not to:
        to = query.get("to", "").strip()
    if not to or "," in to or any(char in to for char in "<>\r\n \t") or to.count("@") != 1:
        return None
    return Mailto(
        to=to, subject=query.get("subject", "unsubscribe")[:200], body=query.get("body", "unsubscribe")[:2000]
    )
