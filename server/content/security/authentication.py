"""SPF, DKIM and DMARC verdicts, read from the one `Authentication-Results` header a message cannot forge.

When Gmail accepts a message it computes the verdicts and prepends `Authentication-Results: mx.google.com; ...`
above everything the message arrived with. Any other `Authentication-Results` (from other hosts, or lower down
the message, or claiming to be Gmail's below Gmail's own) was written by someone on the way and is not trusted.
So only the topmost one whose authserv-id is `mx.google.com` counts (another host's header above it, such as a
gateway's or a forwarding provider's, is skipped, never a reason to hide Gmail's `fail`), and, when the `Received`
headers are known, only when no non-Google relay sits above it (mail fetched from another provider carries that
provider's headers, and whatever a sender put in, under Gmail's own `Received`). No trusted header means the
verdicts are unknown, never a pass: mail this account sent, drafts, imported mail.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

TRUSTED_AUTHSERV_ID = "mx.google.com"
UNKNOWN = "unknown"
_RESULT = re.compile(r"([a-z][a-z0-9_-]*)(?:/\d+)?\s*=\s*([a-z]+)")
_PROPERTY = re.compile(r"\b(smtp\.mailfrom|header\.from|header\.d|header\.i)\s*=\s*([^\s;]+)")
_BY = re.compile(r"\bby\s+([^\s;()]+)", re.I)
_IP_LITERAL = re.compile(r"^\[?(?:[0-9a-f]{0,4}:){2,}[0-9a-f:.]*\]?$|^\[?\d{1,3}(?:\.\d{1,3}){3}\]?$", re.I)
_MAX_HEADER_CHARS = 8_000
_COMMENT = re.compile(r"\([^()]*\)")


@dataclass(frozen=True)
class Authentication:
    """The verdicts Gmail recorded (`pass`, `fail`, `softfail`, `neutral`, `none`, ...), or `unknown` for each
    when no trusted header exists; `verified_by` names the host whose header was read."""

    spf: str = UNKNOWN
    dkim: str = UNKNOWN
    dmarc: str = UNKNOWN
    verified_by: str | None = None
    spf_domain: str | None = None  # smtp.mailfrom's domain
    dkim_domains: tuple[str, ...] = ()  # header.d / header.i of the signatures that passed (or of the first)
    dmarc_domain: str | None = None  # header.from

    @property
    def failed(self) -> bool:
        """DMARC failed, or neither SPF nor DKIM passed (only when Gmail's verdicts are known)."""
        if self.verified_by is None:
            return False
        return self.dmarc == "fail" or (self.spf != "pass" and self.dkim != "pass")


def trusted_authentication(headers: object, *, domains: bool = True) -> Authentication:
    """The verdicts from Gmail's own `Authentication-Results` header, read from a payload's ordered header list.

    Args:
        headers: Gmail's `payload.headers` ({"name", "value"} dicts, top of the message first). A metadata
            resource holds only the headers asked for: ask for `Authentication-Results` and `Received`.
        domains: False when only the verdicts (and `failed`) are needed: see `parse_authentication_results`.

    Returns:
        The verdicts of the topmost `Authentication-Results` written by `mx.google.com`, or all `unknown` when
        there is none or a non-Google relay sits above it.
    """
    relayed = False
    for item in headers if isinstance(headers, list) else ():
        if not isinstance(item, dict) or not isinstance(item.get("value"), str):
            continue
        name = str(item.get("name", "")).strip().lower()
        if name == "received" and not _google_hop(item["value"]):
            relayed = True
        elif name == "authentication-results" and _authserv_id(item["value"]) == TRUSTED_AUTHSERV_ID:
            return Authentication() if relayed else parse_authentication_results(item["value"], domains=domains)
    return Authentication()


def _authserv_id(value: str) -> str:
    """The authserv-id an `Authentication-Results` value starts with (lower case, comments dropped)."""
    head = _without_comments(value[:400].lower()).partition(";")[0].split()
    return head[0] if head else ""


def parse_authentication_results(value: str, *, domains: bool = True) -> Authentication:
    """Parse one `Authentication-Results` value (RFC 8601); all `unknown` unless its authserv-id is Gmail's.

    `domains=False` skips reading each method's properties (half the work, which a search result's warning
    does not need): the verdicts, `verified_by` and `failed` are the same, the three domain fields stay empty.
    """
    # Folded lines and runs of whitespace are not collapsed first: every step below reads any run of whitespace
    # as one separator (split(), strip(), `\s*`), so the result is the collapsed text's (a test checks it).
    text = _without_comments(value[:_MAX_HEADER_CHARS].lower())
    authserv, _, rest = text.partition(";")
    if authserv.split()[:1] != [TRUSTED_AUTHSERV_ID]:
        return Authentication()
    verdicts: dict[str, list[tuple[str, str]]] = {}
    for resinfo in rest.split(";"):
        match = _RESULT.match(resinfo.strip())
        if match:
            domain = _property_domain(resinfo) if domains else ""
            verdicts.setdefault(match.group(1), []).append((match.group(2)[:20], domain))
    spf = verdicts.get("spf", [("none", "")])[0]
    dmarc = verdicts.get("dmarc", [("none", "")])[0]
    dkim = verdicts.get("dkim", [("none", "")])
    passed = [domain for result, domain in dkim if result == "pass"]
    if not domains:
        return _verdicts_only(_normal(spf[0]), "pass" if passed else _normal(dkim[0][0]), _normal(dmarc[0]))
    return Authentication(
        spf=_normal(spf[0]),
        dkim="pass" if passed else _normal(dkim[0][0]),
        dmarc=_normal(dmarc[0]),
        verified_by=TRUSTED_AUTHSERV_ID,
        spf_domain=spf[1] or None,
        dkim_domains=tuple(d for d in (passed or [dkim[0][1]]) if d)[:4],
        dmarc_domain=dmarc[1] or None,
    )


@lru_cache(maxsize=64)  # a handful of verdict triples recur on nearly every message; Authentication is immutable
def _verdicts_only(spf: str, dkim: str, dmarc: str) -> Authentication:
    return Authentication(spf=spf, dkim=dkim, dmarc=dmarc, verified_by=TRUSTED_AUTHSERV_ID)


def _property_domain(resinfo: str) -> str:
    """The domain one method's result is about: its smtp.mailfrom, header.from, header.d or header.i."""
    props = dict(_PROPERTY.findall(resinfo))
    domain = props.get("smtp.mailfrom") or props.get("header.from") or props.get("header.d")
    return (domain or props.get("header.i", "")).rsplit("@", 1)[-1]


def _normal(result: str) -> str:
    return "fail" if result == "hardfail" else result


def _google_hop(received: str) -> bool:
    """A `Received` line Gmail wrote: `by mx.google.com`, `by <host>.google.com` or by an internal address."""
    match = _BY.search(received[:2_000])
    if not match:
        return False
    host = match.group(1).rstrip(".").lower()
    return host == "mx.google.com" or host.endswith(".google.com") or bool(_IP_LITERAL.match(host))


def _without_comments(text: str) -> str:
    """Drop (comments), nested ones too: innermost first, a few passes; deeper nesting falls back to a scan."""
    for _ in range(4):
        if "(" not in text:
            return text
        text = _COMMENT.sub("", text)
    out, depth = [], 0
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")" and depth:
            depth -= 1
        elif not depth:
            out.append(ch)
    return "".join(out)
